//! Listing the sessions directory from the journal (`catalog`), the path `taco sessions` and
//! the resume picker take. It is the one place that meets every session at once, so it
//! reads the journal whole and parses each line with its strings borrowed, and only the few
//! fields a list shows; a row that still matches its file is written back as the bytes it
//! was read as. Only a file that changed costs a whole row (see [`catalog::refresh`]).

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::catalog::{self, Row};
use super::index::Summary;
use super::kind::{Outcome, Runs, SessionKind};
use crate::conversation::Usage;

/// A journal row as a list reads it. The fields it does not show (counts for a resume, the
/// compaction, tokens by model) are skipped, not built.
#[derive(Deserialize)]
struct Listed<'a> {
    #[serde(borrow)]
    file: Cow<'a, str>,
    size: u64,
    mtime_ms: u64,
    #[serde(borrow, default)]
    tally: Option<Shown<'a>>,
    #[serde(borrow, default)]
    problem: Option<Cow<'a, str>>,
}

/// What a list shows of a row's tally.
#[derive(Deserialize)]
struct Shown<'a> {
    #[serde(borrow)]
    id: Cow<'a, str>,
    started: u64,
    #[serde(borrow)]
    workdir: Cow<'a, str>,
    #[serde(borrow)]
    provider: Cow<'a, str>,
    #[serde(borrow)]
    model: Cow<'a, str>,
    #[serde(borrow, default)]
    first_prompt: Option<Cow<'a, str>>,
    turns: u32,
    tokens: Usage,
    // Required by a whole row too: a line without it is rebuilt, not kept.
    #[allow(dead_code)]
    messages: usize,
    #[serde(default)]
    kind: Option<SessionKind>,
    #[serde(default)]
    runs: Option<Runs>,
}

/// Sessions in `dir` from the journal, brought up to date with the files, newest activity
/// first, and a line for each `.jsonl` file that is no session.
pub fn list(dir: &Path) -> (Vec<Summary>, Vec<String>) {
    let text = catalog::journal_bytes(dir);
    let mut known: HashMap<Cow<'_, str>, (Listed<'_>, &[u8])> = HashMap::new();
    let mut lines = 0;
    for line in text.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        lines += 1;
        // A torn or foreign line is skipped: its file is read again instead.
        if let Ok(row) = serde_json::from_slice::<Listed>(line) {
            known.insert(row.file.clone(), (row, line));
        }
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return (Vec::new(), Vec::new());
    };
    let mut kept = Vec::with_capacity(known.len());
    let mut sessions = Vec::with_capacity(known.len());
    let mut problems = Vec::new();
    let mut changed = false;
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if Path::new(name).extension().is_none_or(|e| e != "jsonl") {
            continue;
        }
        // Stat relative to the directory: no walk of the whole path per file.
        let Ok(meta) = entry.metadata() else { continue };
        if !meta.is_file() {
            continue;
        }
        let (size, mtime) = catalog::stamp(&meta);
        let path = dir.join(name);
        match known.remove(name) {
            // A row from before runs were kept is brought up to date (from the file's end).
            Some((row, line))
                if row.size == size
                    && row.mtime_ms == mtime
                    && row.tally.as_ref().is_none_or(|t| t.runs.is_some()) =>
            {
                show_listed(row, path, &mut sessions, &mut problems);
                kept.push(Cow::Borrowed(line));
            }
            old => {
                changed = true;
                let old = old.and_then(|(_, line)| serde_json::from_slice::<Row>(line).ok());
                let row = catalog::refresh(&path, name.to_string(), old, size, mtime);
                show_listed(listed(&row), path, &mut sessions, &mut problems);
                // A row that cannot be written is left out: its file is read again.
                if let Ok(line) = serde_json::to_vec(&row) {
                    kept.push(Cow::Owned(line));
                }
            }
        }
    }
    // Rows of deleted files, and superseded lines, are dropped by a rewrite.
    if changed || !known.is_empty() || lines > kept.len() * 2 + 64 {
        let _ = catalog::rewrite(dir, &journal_text(&kept));
    }
    sessions.sort_by(|a, b| (b.last_activity, &b.id).cmp(&(a.last_activity, &a.id)));
    problems.sort();
    (sessions, problems)
}

/// The journal's new text: one line per file, each kept as it was read or made again.
fn journal_text(kept: &[Cow<'_, [u8]>]) -> Vec<u8> {
    let mut text = Vec::with_capacity(kept.iter().map(|l| l.len() + 1).sum());
    for line in kept {
        text.extend_from_slice(line);
        text.push(b'\n');
    }
    text
}

/// A row as a summary, or as a problem when its file is no session.
fn show_listed(
    row: Listed<'_>,
    path: PathBuf,
    sessions: &mut Vec<Summary>,
    problems: &mut Vec<String>,
) {
    match row.tally {
        Some(t) => sessions.push(Summary {
            kind: t.kind,
            outcome: t
                .runs
                .map_or(Outcome::Empty, |runs| Outcome::of(t.turns, &runs)),
            // The newest line's time; a row without it (it could not be brought up to
            // date) has its file's.
            last_activity: t.runs.map_or(row.mtime_ms, |runs| runs.last_at),
            id: t.id.into_owned(),
            path,
            started: t.started,
            workdir: PathBuf::from(t.workdir.into_owned()),
            provider: t.provider.into_owned(),
            model: t.model.into_owned(),
            first_prompt: t.first_prompt.map(Cow::into_owned),
            turns: t.turns,
            tokens: t.tokens,
            size: row.size,
        }),
        None => problems.push(problem(&path, row.problem.as_deref())),
    }
}

/// A row made from its file, as the list reads one.
fn listed(row: &Row) -> Listed<'_> {
    Listed {
        file: Cow::Borrowed(&row.file),
        size: row.size,
        mtime_ms: row.mtime_ms,
        tally: row.tally.as_ref().map(|t| Shown {
            id: Cow::Borrowed(&t.id),
            started: t.started,
            workdir: t.workdir.to_string_lossy(),
            provider: Cow::Borrowed(&t.provider),
            model: Cow::Borrowed(&t.model),
            first_prompt: t.first_prompt.as_deref().map(Cow::Borrowed),
            turns: t.turns,
            tokens: t.tokens,
            messages: t.messages,
            kind: t.kind,
            runs: t.runs,
        }),
        problem: row.problem.as_deref().map(Cow::Borrowed),
    }
}

fn problem(path: &Path, problem: Option<&str>) -> String {
    format!(
        "{}: not listed: {}",
        path.display(),
        problem.unwrap_or("unreadable")
    )
}
