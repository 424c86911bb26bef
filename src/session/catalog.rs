//! The session index (issue 15): one small journal beside the session files, so listing
//! sessions (`taco sessions`, the resume picker, `--resume` by workdir) reads a directory and
//! one file instead of every session whole.
//!
//! The session files stay the truth. Each journal line is a [`Row`]: what one file held up to
//! `size` bytes (a line end). A row whose file has grown since is brought up to date by
//! reading only the bytes after `size`; a row that does not match its file any more (shrunk,
//! rewritten) is rebuilt from the whole file; a file with no row gets one. So a crash between
//! a session write and its index line loses nothing, and a deleted or damaged journal is
//! only slower once. Writers append rows (`O_APPEND`, one write each); the last row of a file
//! wins; a lister rewrites the journal whole (temp file + rename) when it has changed or has
//! grown well past one row per session. A row lost to that race is rebuilt the same way.

use std::collections::{BTreeMap, HashMap};
use std::fs::{File, Metadata};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use serde::{Deserialize, Serialize};

use super::backwards::{Backwards, kind};
use super::kind::{RunEnd, Runs};
use super::lite::{self, Lite};
use super::reader::{Line, MAX_LINE, parse_line};
use super::{Entry, SessionKind};
use crate::conversation::{Role, Usage};
use crate::private::PrivateDir;

/// The journal's name in the sessions directory (not `.jsonl`: it is no session).
pub const INDEX_FILE: &str = "index.journal";
/// A journal bigger than this is not read (it is rebuilt from the files instead).
const MAX_JOURNAL: u64 = 64 << 20;
/// First prompts are kept this long (in chars): enough for any list's column.
const PROMPT_CHARS: usize = 300;

/// What one session file held up to `size` bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// The file's name in the sessions directory.
    pub(super) file: String,
    /// Bytes summarized: the file's length when the row was made, less a torn last line.
    pub(super) size: u64,
    /// The file's modification time then (unix ms): a rewrite of the same size shows here.
    pub(super) mtime_ms: u64,
    /// What the bytes hold; `None` with `problem` when the file is no session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) tally: Option<Tally>,
    /// Why the file is not listed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) problem: Option<String>,
}

/// A session's row data, extended as the file grows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct Tally {
    pub(super) id: String,
    pub(super) started: u64,
    pub(super) workdir: PathBuf,
    /// The provider and model last used (a run's or a `/model` switch's), else the header's.
    pub(super) provider: String,
    pub(super) model: String,
    /// The session's first request: the first run's prompt or user message, whichever
    /// comes first in the file.
    pub(super) first_prompt: Option<String>,
    pub(super) turns: u32,
    pub(super) tokens: Usage,
    /// Message lines: a resume that reads only the end counts the rest from this.
    pub(super) messages: usize,
    /// The newest compaction of the user's conversation: requests go on from its cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) compacted: Option<Compaction>,
    /// Tokens by model (a compaction's go to the model called last), for the cost of the
    /// part of a session a resume does not read.
    #[serde(default)]
    pub(super) by_model: BTreeMap<String, Usage>,
    /// The model called last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) last_model: Option<String>,
    /// Where the session was started (its header's `kind`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) kind: Option<SessionKind>,
    /// How its runs stand and when it last had a line; `None` in a row written before this
    /// was kept, which is brought up to date from the file's end (see [`upgrade`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) runs: Option<Runs>,
}

/// Where a compaction is, and what it kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Compaction {
    /// The byte offset of its `compacted` line.
    pub at: u64,
    /// The first message it kept verbatim (a message index in the file).
    pub kept_from: usize,
}

/// What a resume needs to know of a whole file to read only its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counted {
    /// Bytes summarized: complete lines only.
    pub size: u64,
    /// Message lines in them.
    pub messages: usize,
    /// The newest compaction of the user's conversation.
    pub compacted: Option<Compaction>,
    /// Tokens by model.
    pub by_model: BTreeMap<String, Usage>,
}

/// A file's size and modification time (unix ms).
fn stat(path: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(path).ok().map(|meta| stamp(&meta))
}

/// Size and modification time (unix ms) from a file's metadata.
pub(super) fn stamp(meta: &Metadata) -> (u64, u64) {
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_millis() as u64);
    (meta.len(), mtime)
}

/// A fresh row for `path` (`size` bytes, modified at `mtime`): `old` extended by the bytes
/// after it when the file only grew, else the whole file read again.
pub(super) fn refresh(path: &Path, name: String, old: Option<Row>, size: u64, mtime: u64) -> Row {
    let grown = old.and_then(|row| match row.tally {
        Some(tally) if row.size > 0 && row.size <= size => {
            upgrade(path, tally, row.size).map(|tally| (tally, row.size))
        }
        _ => None,
    });
    let (from, tally) = match grown {
        Some((tally, from)) => (from, Some(tally)),
        None => (0, None),
    };
    let folded = fold(path, from, size, tally);
    match folded {
        Ok((tally, covered)) => Row {
            file: name,
            size: covered,
            // A torn last line is read again next time: the row does not claim the file.
            mtime_ms: if covered == size { mtime } else { 0 },
            tally: Some(tally),
            problem: None,
        },
        Err(problem) => Row {
            file: name,
            size,
            mtime_ms: mtime,
            tally: None,
            problem: Some(problem),
        },
    }
}

/// Reads the complete lines of `path` between `from` and `end` into `tally` (a new one from
/// the header when `from` is 0); returns it and where the last complete line ended. Lines
/// stream through a parse of the few fields counted (see `lite`): a huge line costs no
/// memory. Turns and tokens are counted as the run model counts them (`RunModel`: a turn is
/// a model call of the user's conversation; tokens are every model call's and compaction's).
fn fold(path: &Path, from: u64, end: u64, tally: Option<Tally>) -> Result<(Tally, u64), String> {
    let mut file = File::open(path).map_err(|e| e.to_string())?;
    file.seek(SeekFrom::Start(from))
        .map_err(|e| e.to_string())?;
    let mut reader = BufReader::new(file.take(end.saturating_sub(from)));
    let mut tally = tally;
    let mut at = from;
    while let Some(read) = lite::next(&mut reader).map_err(|e| e.to_string())? {
        let line_at = at;
        at += read.len;
        let Some(line) = read.lite else {
            if tally.is_none() {
                return Err(NO_HEADER.into());
            }
            continue;
        };
        let Some(t) = &mut tally else {
            tally = Some(header(line)?);
            continue;
        };
        if let Some(runs) = &mut t.runs {
            runs.note(&line.kind, line.timestamp);
        }
        let data = line.data;
        // The provider and model in use from here on (`--resume` continues with the last).
        if matches!(line.kind.as_str(), "run_started" | "model_switched")
            && let (Some(provider), Some(model)) = (&data.provider, &data.model)
        {
            (t.provider, t.model) = (provider.clone(), model.clone());
        }
        match line.kind.as_str() {
            "message" => {
                t.messages += 1;
                if t.first_prompt.is_none() && data.role == Some(Role::User) {
                    // Read again whole: only this line's text is wanted, once per file.
                    t.first_prompt = user_text(path, line_at).map(|text| cap(&text));
                }
            }
            "run_started" if t.first_prompt.is_none() => {
                t.first_prompt = data.prompt.map(|p| cap(&p));
            }
            "llm_call" => {
                if data.parent.is_none() {
                    t.turns = t.turns.saturating_add(1);
                }
                let usage = data.usage.unwrap_or_default();
                t.tokens.add(usage);
                if let Some(model) = data.model {
                    t.by_model.entry(model.clone()).or_default().add(usage);
                    t.last_model = Some(model);
                }
            }
            "compacted" => {
                let usage = data.usage.unwrap_or_default();
                t.tokens.add(usage);
                if let Some(model) = &t.last_model {
                    t.by_model.entry(model.clone()).or_default().add(usage);
                }
                if data.parent.is_none()
                    && data.error.is_none()
                    && let Some(kept_from) = data.kept_from
                {
                    t.compacted = Some(Compaction {
                        at: line_at,
                        kept_from,
                    });
                }
            }
            _ => {}
        }
    }
    let tally = tally.ok_or_else(|| "it is empty".to_string())?;
    Ok((tally, at))
}

/// `tally` (what `path` held up to `size`) with how its runs stand, when it is a row from
/// before that was kept: the kind from the header, the rest from the lines walked back from
/// `size` to the last run's start or end. A session's end costs what its last run takes, not
/// what the whole file does. `None` when the file cannot be read (it is read whole instead).
fn upgrade(path: &Path, mut tally: Tally, size: u64) -> Option<Tally> {
    if tally.runs.is_some() {
        return Some(tally);
    }
    let mut file = File::open(path).ok()?;
    let mut first = Vec::new();
    BufReader::new((&mut file).take(MAX_LINE))
        .read_until(b'\n', &mut first)
        .ok()?;
    let header_end = first.len() as u64;
    tally.kind = match parse_line(first.trim_ascii(), None) {
        Line::Header(header) => header.kind,
        _ => return None,
    };
    let mut runs = Runs {
        last_at: tally.started,
        ..Runs::default()
    };
    let mut lines = Backwards::new(header_end, size);
    let mut newest: Option<Option<u64>> = None;
    while let Some((_, line)) = lines.next(&mut file).ok()? {
        newest.get_or_insert_with(|| timestamp(&line));
        let kind = kind(&line);
        if kind.as_deref() == Some("run_started") {
            runs.open = true;
            break;
        }
        if let Some(end) = kind.as_deref().and_then(RunEnd::of) {
            runs.ended = Some(end);
            break;
        }
    }
    runs.last_at = runs.last_at.max(newest.flatten().unwrap_or(0));
    tally.runs = Some(runs);
    Some(tally)
}

/// A line's `timestamp` (message and event lines have one).
fn timestamp(line: &[u8]) -> Option<u64> {
    #[derive(Deserialize)]
    struct Stamp {
        timestamp: Option<u64>,
    }
    serde_json::from_slice::<Stamp>(line).ok()?.timestamp
}

const NO_HEADER: &str = "its first line is not a session header (damaged, or a trace file)";

/// A new tally from a header line.
fn header(line: Lite) -> Result<Tally, String> {
    match line {
        Lite {
            kind,
            id: Some(id),
            started: Some(started),
            workdir: Some(workdir),
            provider: Some(provider),
            model: Some(model),
            made_in,
            ..
        } if kind == "session" => Ok(Tally {
            id,
            started,
            workdir,
            provider,
            model,
            first_prompt: None,
            turns: 0,
            tokens: Usage::default(),
            messages: 0,
            compacted: None,
            by_model: BTreeMap::new(),
            last_model: None,
            kind: made_in,
            runs: Some(Runs {
                last_at: started,
                ..Runs::default()
            }),
        }),
        _ => Err(NO_HEADER.into()),
    }
}

/// The text of the user message whose line starts at `at`.
fn user_text(path: &Path, at: u64) -> Option<String> {
    let mut file = File::open(path).ok()?;
    file.seek(SeekFrom::Start(at)).ok()?;
    let mut line = Vec::new();
    BufReader::new(file.take(MAX_LINE))
        .read_until(b'\n', &mut line)
        .ok()?;
    match parse_line(line.trim_ascii(), None) {
        Line::Entry(Entry::Message(m)) => m.content.filter(|c| !c.trim().is_empty()),
        _ => None,
    }
}

fn cap(text: &str) -> String {
    text.chars().take(PROMPT_CHARS).collect()
}

/// The journal's bytes, read whole (none when it is missing or over [`MAX_JOURNAL`]).
pub(super) fn journal_bytes(dir: &Path) -> Vec<u8> {
    let mut text = Vec::new();
    if let Ok(file) = File::open(dir.join(INDEX_FILE)) {
        let len = file.metadata().map_or(0, |m| m.len());
        if len <= MAX_JOURNAL {
            text.reserve(len as usize + 1);
            // A read error leaves what was read: whole lines of it still count.
            let _ = file.take(MAX_JOURNAL).read_to_end(&mut text);
        }
    }
    text
}

/// The journal's rows, the last of each file winning.
fn read_journal(dir: &Path) -> HashMap<String, Row> {
    let mut rows = HashMap::new();
    for line in journal_bytes(dir).split(|b| *b == b'\n') {
        // A torn or foreign line is skipped: its file is read again instead.
        if let Ok(row) = serde_json::from_slice::<Row>(line) {
            rows.insert(row.file.clone(), row);
        }
    }
    rows
}

/// Replaces the journal with `text` (whole lines), atomically.
pub(super) fn rewrite(dir: &Path, text: &[u8]) -> io::Result<()> {
    // Never through a symlink, and renamed within the directory opened (`private`).
    let dir = PrivateDir::open(dir)?;
    let temp = format!("{INDEX_FILE}.{}.tmp", std::process::id());
    // A temp file left by a crash of a process with the same id goes first.
    let _ = dir.remove(&temp);
    let written = dir
        .create_new(&temp, false)
        .and_then(|mut f| f.write_all(text));
    match written.and_then(|()| dir.rename(&temp, INDEX_FILE)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = dir.remove(&temp);
            Err(e)
        }
    }
}

/// How far `path` is summarized, how many message lines that part holds and where its
/// newest compaction is, its row brought up to date first (reading only what was added
/// since); `None` when it is no session.
pub fn count(path: &Path) -> Option<Counted> {
    let (size, tally) = current(path)?;
    Some(Counted {
        size,
        messages: tally.messages,
        compacted: tally.compacted,
        by_model: tally.by_model,
    })
}

/// The provider and model `path` ended with (`--resume` continues with them), its row
/// brought up to date first; `None` when it is no session.
pub fn last_model(path: &Path) -> Option<(String, String)> {
    current(path).map(|(_, tally)| (tally.provider, tally.model))
}

/// `path`'s row, brought up to date (and appended to the journal when it changed): how far
/// it is summarized, and what that part holds.
fn current(path: &Path) -> Option<(u64, Tally)> {
    let dir = path.parent()?;
    let name = path.file_name()?.to_str()?.to_string();
    let (size, mtime) = stat(path)?;
    let row = match read_journal(dir).remove(&name) {
        Some(row) if row.size == size && row.mtime_ms == mtime => row,
        old => {
            let row = refresh(path, name, old, size, mtime);
            append(dir, &row);
            row
        }
    };
    Some((row.size, row.tally?))
}

/// Appends one row to the journal; best effort (a lost row is rebuilt from its file).
fn append(dir: &Path, row: &Row) {
    let Ok(mut line) = serde_json::to_vec(row) else {
        return;
    };
    line.push(b'\n');
    let appended = PrivateDir::open(dir)
        .and_then(|dir| dir.append(INDEX_FILE))
        .and_then(|mut f| f.write_all(&line));
    if let Err(e) = appended {
        tracing::debug!(error = %e, "session index not updated");
    }
}

/// Keeps one session's row up to date as its writer appends (see [`SessionWriter`]).
///
/// [`SessionWriter`]: super::SessionWriter
#[derive(Debug, Default)]
pub struct Indexer {
    row: Option<Row>,
}

impl Indexer {
    /// Brings the row of `path` up to the file's end and appends it to the journal. Best
    /// effort: the files are the truth, and a lister rebuilds what is missing.
    pub fn note(&mut self, path: &Path) {
        let (Some(dir), Some(name)) = (
            path.parent(),
            path.file_name().and_then(|n| n.to_str()).map(String::from),
        ) else {
            return;
        };
        let Some((size, mtime)) = stat(path) else {
            return;
        };
        // The first time, the journal says how far this file was summarized (a resume).
        let old = self.row.take().or_else(|| read_journal(dir).remove(&name));
        let row = refresh(path, name, old, size, mtime);
        append(dir, &row);
        self.row = Some(row);
    }
}

#[cfg(test)]
#[path = "catalog_tests.rs"]
mod tests;
