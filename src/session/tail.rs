//! Reading the end of a session (issue 15): what a resume needs — the messages the next
//! request can send and the newest entries for the screen — without reading the rest, so
//! resuming costs what is shown, not how long the session has grown.
//!
//! The file is read backwards in chunks, line by line, without parsing most lines: the type
//! of a line is in its first bytes (`{"type":"message"` for a message, the envelope's
//! `"type":"…"` before its data for an event). It stops at a run's start once it holds
//! enough: the wanted entries, and either everything since the newest compaction (its line
//! and its cut: the session index says where they are) or, with none, the wanted share of
//! the newest messages. Then that part is read forwards as [`load`] reads a file, whole runs
//! only, primed with the run before so every elided argument and message is put back.
//!
//! [`load`]: super::load

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use super::backwards::{Backwards, kind};
use super::catalog::{self, Counted};
use super::reader::{Item, MAX_LINE, Part, read_header, scan_from};
use super::{Loaded, SessionError};
use crate::conversation::Usage;
use crate::run_model::RunModel;

/// Message bytes per token, for the estimate (the context module's rule of thumb).
const BYTES_PER_TOKEN: u64 = 4;

/// How much of a session's end a resume wants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Want {
    /// Tokens of the newest messages: what a request can send (the context window).
    pub tokens: u64,
    /// At least this many of the newest messages (a history limit).
    pub messages: usize,
    /// At least this many of the newest entries (what the screen shows first).
    pub entries: usize,
}

/// The end of a session file.
#[derive(Debug, Clone, PartialEq)]
pub struct Tail {
    /// The header, the entries from `from` on, and what was skipped of them.
    pub loaded: Loaded,
    /// Where the loaded part starts in the file; older entries are before it (none when it
    /// is the end of the header).
    pub from: u64,
    /// Where the header ends: `from` equals it when the whole file was read.
    pub header_end: u64,
    /// Message lines before `from`: the file index of the first message loaded.
    pub skipped_messages: usize,
    /// Tokens by model of what is before `from` (the session's cost counts them).
    pub skipped_usage: BTreeMap<String, Usage>,
}

impl Tail {
    /// Whether older entries were left in the file.
    pub fn has_earlier(&self) -> bool {
        self.from > self.header_end
    }
}

/// Reads the end of `path` that `want` asks for (the whole file when it is small, or when
/// the session index cannot say how many messages it holds).
pub fn tail(path: &Path, want: &Want) -> Result<Tail, SessionError> {
    let mut file = File::open(path).map_err(|e| SessionError::io(path, e))?;
    let header_end = header_end(&mut file, path)?;
    // The index says how many messages the file holds, up to a line end: the skipped part
    // is counted from it, not read.
    let counted = catalog::count(path).filter(|_| header_end > 0);
    let cut = match &counted {
        Some(counted) => {
            find_cut(&mut file, header_end, counted, want).map_err(|e| SessionError::io(path, e))?
        }
        None => Cut::all(header_end),
    };
    let mut tail = read_part(path, header_end, cut, None)?;
    if let Some(counted) = counted.filter(|_| tail.has_earlier()) {
        tail.skipped_usage = skipped_usage(counted.by_model, &tail.loaded.entries);
    }
    Ok(tail)
}

/// The whole file's tokens by model less those of the entries read.
fn skipped_usage(
    mut total: BTreeMap<String, Usage>,
    read: &[super::Entry],
) -> BTreeMap<String, Usage> {
    let model = RunModel::replay(read.iter().filter_map(|e| match e {
        super::Entry::Event(e) => Some(e),
        super::Entry::Message(_) => None,
    }));
    for (name, used) in model.usage_by_model() {
        if let Some(sum) = total.get_mut(name) {
            sum.input_tokens = sum.input_tokens.saturating_sub(used.input_tokens);
            sum.output_tokens = sum.output_tokens.saturating_sub(used.output_tokens);
            sum.cached_tokens = sum.cached_tokens.saturating_sub(used.cached_tokens);
        }
    }
    total.retain(|_, u| *u != Usage::default());
    total
}

/// The runs just before byte `before` of `path` (where an earlier [`Tail`] started): at
/// least `entries` of them, whole runs, for a screen scrolled back.
pub fn earlier(path: &Path, before: u64, entries: usize) -> Result<Tail, SessionError> {
    let mut file = File::open(path).map_err(|e| SessionError::io(path, e))?;
    let header_end = header_end(&mut file, path)?;
    let before = before.max(header_end);
    let counted = Counted {
        size: before,
        messages: 0,
        compacted: None,
        by_model: BTreeMap::new(),
    };
    let want = Want {
        tokens: 0,
        messages: 0,
        entries,
    };
    let cut =
        find_cut(&mut file, header_end, &counted, &want).map_err(|e| SessionError::io(path, e))?;
    read_part(path, header_end, cut, Some(before))
}

/// Reads the part of `path` a cut chose, up to `until`.
fn read_part(
    path: &Path,
    header_end: u64,
    cut: Cut,
    until: Option<u64>,
) -> Result<Tail, SessionError> {
    let mut loaded = Loaded {
        header: None,
        entries: Vec::new(),
        warnings: Vec::new(),
    };
    let part = if cut.at > header_end {
        Part {
            from: cut.prime,
            emit: cut.at,
            until,
        }
    } else {
        Part {
            until,
            ..Part::default()
        }
    };
    loaded.warnings = scan_from(path, part, |item| match item {
        Item::Header(h) => loaded.header = Some(h),
        Item::Entry(e) => loaded.entries.push(e),
    })?;
    if loaded.header.is_none() {
        loaded.header = super::header_of(path);
    }
    Ok(Tail {
        loaded,
        from: cut.at,
        header_end,
        skipped_messages: cut.skipped,
        skipped_usage: BTreeMap::new(),
    })
}

/// Where a tail starts, where reading starts to prime it, and how many message lines are
/// before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Cut {
    at: u64,
    prime: u64,
    skipped: usize,
}

impl Cut {
    /// The whole file.
    fn all(header_end: u64) -> Self {
        Self {
            at: header_end,
            prime: header_end,
            skipped: 0,
        }
    }
}

/// The offset just past the first line (the header), or 0 for a file without one.
fn header_end(file: &mut File, path: &Path) -> Result<u64, SessionError> {
    let mut reader = BufReader::new(&mut *file);
    let header = read_header(&mut reader, path)?;
    if header.is_none() {
        return Ok(0);
    }
    let mut first = Vec::new();
    file.seek(SeekFrom::Start(0))
        .map_err(|e| SessionError::io(path, e))?;
    let mut reader = BufReader::new(&mut *file).take(MAX_LINE);
    std::io::BufRead::read_until(&mut reader, b'\n', &mut first)
        .map_err(|e| SessionError::io(path, e))?;
    Ok(first.len() as u64)
}

/// What the backward walk has seen so far.
#[derive(Debug, Default)]
struct Seen {
    entries: usize,
    messages: usize,
    tokens: u64,
}

impl Seen {
    fn count(&mut self, line: &[u8]) {
        self.entries += 1;
        if kind(line).as_deref() == Some("message") {
            self.messages += 1;
            self.tokens += line.len() as u64 / BYTES_PER_TOKEN;
        }
    }

    /// Whether a tail starting at byte `at` is enough.
    fn enough(&self, at: u64, counted: &Counted, want: &Want) -> bool {
        if self.entries < want.entries {
            return false;
        }
        let first = counted.messages.saturating_sub(self.messages);
        match counted.compacted {
            // Requests go on from the compaction: hold it and everything from its cut.
            Some(c) => at <= c.at && first <= c.kept_from,
            None => self.messages >= want.messages && self.tokens >= want.tokens,
        }
    }
}

/// Walks back from the end of what the index counted (a line end) to the start of the
/// newest run that makes the tail enough, and on to the run before it (to prime the read);
/// the whole file when no run does.
fn find_cut(
    file: &mut File,
    header_end: u64,
    counted: &Counted,
    want: &Want,
) -> std::io::Result<Cut> {
    let mut seen = Seen::default();
    let mut found: Option<Cut> = None;
    let mut lines = Backwards::new(header_end, counted.size);
    while let Some((at, line)) = lines.next(file)? {
        if kind(&line).as_deref() != Some("run_started") {
            if found.is_none() {
                seen.count(&line);
            }
            continue;
        }
        match &mut found {
            // The run before the tail: reading starts here.
            Some(cut) => {
                cut.prime = at;
                return Ok(*cut);
            }
            None => {
                seen.count(&line);
                if seen.enough(at, counted, want) {
                    found = Some(Cut {
                        at,
                        prime: header_end,
                        skipped: counted.messages.saturating_sub(seen.messages),
                    });
                }
            }
        }
    }
    Ok(found.unwrap_or(Cut::all(header_end)))
}

#[cfg(test)]
#[path = "tail_tests.rs"]
mod tests;
