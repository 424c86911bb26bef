//! The sessions directory: listing (`taco sessions`) and picking one to resume (`--resume`).

use std::borrow::Cow;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use super::kind::{Outcome, SessionKind, resumable};
use super::reader::read_header;
use super::{SessionError, SessionHeader};
use crate::conversation::Usage;
use crate::text::safe::escape;
use crate::text::{ago, columns, human, shorten_end, shorten_start};

/// How many ids an "unknown id" error suggests.
const KNOWN_IDS: usize = 5;
/// How many candidates an "ambiguous id" error lists.
const CANDIDATES: usize = 10;
/// Display widths of the shortened columns of [`format_list`].
const PROMPT_WIDTH: usize = 50;
const WORKDIR_WIDTH: usize = 40;

/// One row of `taco sessions` (and of the TUI's `/resume` picker).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Summary {
    /// Session id.
    pub id: String,
    /// The session file.
    pub path: PathBuf,
    /// Start time, unix milliseconds.
    pub started: u64,
    /// The directory the session worked in.
    pub workdir: PathBuf,
    /// Provider name: the last one used (a run's or a switch's), else the header's.
    pub provider: String,
    /// Model id: the last one used, else the header's.
    pub model: String,
    /// The session's first request: the first run's prompt or user message, whichever
    /// comes first in the file.
    pub first_prompt: Option<String>,
    /// Top-level provider calls (sub-agent calls are not counted).
    pub turns: u32,
    /// Tokens of every provider call, sub-agents' included.
    pub tokens: Usage,
    /// The file's size in bytes.
    pub size: u64,
    /// When it last had a line (its newest line's time), unix milliseconds; lists are sorted
    /// by it, newest first.
    pub last_activity: u64,
    /// Where it was started (the TUI or `taco exec`); `None` for a file from before that was
    /// recorded.
    pub kind: Option<SessionKind>,
    /// How it stands: how its last run ended, or empty.
    pub outcome: Outcome,
}

impl Summary {
    /// Whether the model never answered in it (no turn): lists grey it out.
    pub fn is_empty(&self) -> bool {
        self.turns == 0
    }

    /// Whether `--resume` without an id may take it (see [`resumable`]).
    pub fn resumable(&self) -> bool {
        resumable(self.kind, self.outcome)
    }
}

/// Sessions in `dir`, newest activity first (files that are not sessions are left out).
pub fn list(dir: &Path) -> Vec<Summary> {
    list_with_problems(dir).0
}

/// Sessions in `dir`, newest activity first, and a line for each `.jsonl` file there that
/// could not be listed (empty, a damaged header, unreadable): it is reported, never silently
/// hidden. The session index (`catalog`) answers, kept up to date with the files.
pub fn list_with_problems(dir: &Path) -> (Vec<Summary>, Vec<String>) {
    super::listing::list(dir)
}

/// The session to resume: by id (exact, or a unique prefix), or with `None` "my last
/// conversation here": the session of `workdir` with the newest activity that a person had
/// in the TUI or that ended with an answer (never a headless run that failed, was stopped or
/// holds nothing; see [`resumable`]). An empty id counts as `None`. Ids are matched against
/// file names, which are the ids.
pub fn find(dir: &Path, id: Option<&str>, workdir: &Path) -> Result<PathBuf, SessionError> {
    match id.map(str::trim).filter(|id| !id.is_empty()) {
        Some(id) => find_by_id(dir, id),
        None => find_by_workdir(dir, workdir),
    }
}

/// The session of `workdir` with the newest activity, whatever its outcome (`taco rewind`:
/// a headless run that failed is worth rewinding too).
pub fn latest(dir: &Path, workdir: &Path) -> Result<PathBuf, SessionError> {
    let canonical = workdir.canonicalize().ok();
    list(dir)
        .into_iter()
        .find(|s| {
            s.workdir == workdir
                || canonical
                    .as_deref()
                    .is_some_and(|c| s.workdir.canonicalize().is_ok_and(|o| o == c))
        })
        .map(|s| s.path)
        .ok_or_else(|| SessionError::NoSessionForWorkdir {
            workdir: workdir.to_path_buf(),
            dir: dir.to_path_buf(),
        })
}

fn find_by_id(dir: &Path, id: &str) -> Result<PathBuf, SessionError> {
    let mut files = session_files(dir);
    // Ids sort by start time, so this is newest first.
    files.sort_by(|a, b| b.0.cmp(&a.0));
    if let Some((_, path)) = files.iter().find(|(stem, _)| stem == id) {
        return Ok(path.clone());
    }
    let mut matches: Vec<_> = files
        .iter()
        .filter(|(stem, _)| stem.starts_with(id))
        .collect();
    match matches.len() {
        0 => Err(SessionError::UnknownId {
            id: id.to_string(),
            dir: dir.to_path_buf(),
            known: files
                .into_iter()
                .take(KNOWN_IDS)
                .map(|(stem, _)| stem)
                .collect(),
        }),
        1 => Ok(matches.remove(0).1.clone()),
        _ => Err(SessionError::AmbiguousId {
            id: id.to_string(),
            candidates: matches
                .into_iter()
                .take(CANDIDATES)
                .map(|(stem, _)| stem.clone())
                .collect(),
        }),
    }
}

fn find_by_workdir(dir: &Path, workdir: &Path) -> Result<PathBuf, SessionError> {
    // Headers may hold the path as given or resolved; compare both ways.
    let canonical = workdir.canonicalize().ok();
    let same = |other: &Path| {
        other == workdir
            || canonical
                .as_deref()
                .is_some_and(|c| other.canonicalize().is_ok_and(|o| o == c))
    };
    // The index knows every session's workdir and how it stands; the list is newest first
    // by last activity.
    let mut passed = 0;
    for session in list(dir).into_iter().filter(|s| same(&s.workdir)) {
        if session.resumable() {
            return Ok(session.path);
        }
        passed += 1;
    }
    Err(if passed == 0 {
        SessionError::NoSessionForWorkdir {
            workdir: workdir.to_path_buf(),
            dir: dir.to_path_buf(),
        }
    } else {
        SessionError::NoConversationForWorkdir {
            workdir: workdir.to_path_buf(),
            runs: passed,
        }
    })
}

/// `*.jsonl` files in `dir` as (file stem, path); none when the directory is missing.
fn session_files(dir: &Path) -> Vec<(String, PathBuf)> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    read.filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| {
            let path = e.path();
            if path.extension()? != "jsonl" {
                return None;
            }
            let stem = path.file_stem()?.to_str()?.to_string();
            Some((stem, path))
        })
        .collect()
}

/// A session file's header, reading only its first line (resuming by workdir should not read
/// whole sessions); `None` when the file has none.
pub fn header_of(path: &Path) -> Option<SessionHeader> {
    let file = File::open(path).ok()?;
    read_header(BufReader::new(file), path).ok().flatten()
}

/// How `taco sessions` draws its table: plain text, or with empty sessions greyed out (SGR
/// dim) for a terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Look {
    /// Text only (a pipe, a file, `NO_COLOR`).
    Plain,
    /// Empty sessions dim.
    Terminal,
}

/// The table's columns, in order.
const TITLES: [&str; 8] = [
    "ID",
    "KIND",
    "LAST ACTIVE",
    "TURNS",
    "OUTCOME",
    "TOKENS IN/OUT",
    "WORKDIR",
    "FIRST PROMPT",
];
/// Where the turns are (right-aligned: counts read better so).
const TURNS_COLUMN: usize = 3;

/// The `taco sessions` table as text: id, kind (`tui`, `exec`, `-` for a file from before
/// it was recorded), last activity as of `now` ("4 min ago"), turns, outcome, tokens in/out,
/// workdir and first prompt (both shortened), one row per session in the order given, with
/// a header row; "no sessions yet" when empty. Every line ends with a newline.
pub fn format_list(sessions: &[Summary], now: u64, look: Look) -> String {
    if sessions.is_empty() {
        return "no sessions yet\n".to_string();
    }
    // Each cell is made and measured once: at 10,000 sessions this table is a fair part of
    // what `taco sessions` costs.
    let rows: Vec<[(Cow<'_, str>, usize); 8]> = sessions
        .iter()
        .map(|s| {
            // Ids (file names), workdirs and prompts come from files anyone may have
            // written: what could act on the terminal is shown inert, before it is measured.
            let cells = [
                escape(s.id.as_str()),
                Cow::Borrowed(s.kind.map_or("-", SessionKind::name)),
                Cow::Owned(ago(s.last_activity, now)),
                Cow::Owned(s.turns.to_string()),
                Cow::Borrowed(s.outcome.name()),
                Cow::Owned(format!(
                    "{}/{}",
                    human(s.tokens.input_tokens),
                    human(s.tokens.output_tokens)
                )),
                Cow::Owned(shorten_start(
                    &escape(&s.workdir.to_string_lossy()),
                    WORKDIR_WIDTH,
                )),
                s.first_prompt.as_deref().map_or(Cow::Borrowed("-"), |p| {
                    Cow::Owned(shorten_end(&escape(p), PROMPT_WIDTH))
                }),
            ];
            cells.map(|cell| {
                let width = columns(&cell);
                (cell, width)
            })
        })
        .collect();
    let titles = TITLES.map(|t| (Cow::Borrowed(t), t.len()));
    let mut widths = titles.clone().map(|(_, w)| w);
    for row in &rows {
        for (width, (_, w)) in widths.iter_mut().zip(row) {
            *width = (*width).max(*w);
        }
    }
    let last = TITLES.len() - 1;
    let line_len: usize = widths.iter().sum::<usize>() + 2 * last + 1;
    let mut out = String::with_capacity(line_len * (rows.len() + 1));
    let dims = std::iter::once(false).chain(sessions.iter().map(Summary::is_empty));
    for (row, dim) in std::iter::once(&titles).chain(&rows).zip(dims) {
        let dim = dim && look == Look::Terminal;
        if dim {
            out.push_str(DIM);
        }
        let start = out.len();
        for (i, (cell, width)) in row.iter().enumerate() {
            if i > 0 {
                out.push_str("  ");
            }
            let pad = widths[i].saturating_sub(*width);
            match i {
                TURNS_COLUMN => {
                    push_spaces(&mut out, pad);
                    out.push_str(cell);
                }
                // The last column needs no padding.
                _ if i == last => out.push_str(cell),
                _ => {
                    out.push_str(cell);
                    push_spaces(&mut out, pad);
                }
            }
        }
        let end = start + out[start..].trim_end().len();
        out.truncate(end);
        if dim {
            out.push_str(UNDIM);
        }
        out.push('\n');
    }
    out
}

/// SGR dim on and off: a greyed-out row.
const DIM: &str = "\x1b[2m";
const UNDIM: &str = "\x1b[22m";

fn push_spaces(out: &mut String, n: usize) {
    out.extend(std::iter::repeat_n(' ', n));
}

#[cfg(test)]
mod tests {
    use super::*;
    use unicode_width::UnicodeWidthStr;

    #[test]
    fn token_counts_are_compact() {
        assert_eq!(human(999), "999");
        assert_eq!(human(1_234), "1.2k");
        assert_eq!(human(2_500_000), "2.5M");
        assert!(human(u64::MAX).ends_with('M'));
    }

    #[test]
    fn long_cells_are_shortened_to_one_line() {
        assert_eq!(shorten_end("fix\nthe   bug", 20), "fix the bug");
        let cut = shorten_end(&"é".repeat(80), 10);
        assert_eq!(cut.width(), 10);
        assert!(cut.ends_with('…'));
        assert_eq!(shorten_end("日本語のテキスト", 7), "日本語…");
        let path = shorten_start("/home/me/very/long/path/to/project", 12);
        assert_eq!(path, "…/to/project");
    }
}
