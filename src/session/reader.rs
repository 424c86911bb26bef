//! Reading session and trace files line by line, tolerating a torn last line.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::compact::Expander;
use super::{Entry, FORMAT_VERSION, SessionError, SessionHeader};
use crate::conversation::Message;
use crate::event::Event;

/// Lines longer than this are refused rather than read into memory (a binary file, a device).
pub(super) const MAX_LINE: u64 = 256 << 20;
/// Warnings beyond this many are counted, not listed: a damaged file should not bury the user.
const MAX_WARNINGS: usize = 20;

/// What a session or trace file holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    /// The header; `None` for an `exec --trace` file.
    pub header: Option<SessionHeader>,
    /// Messages and events, in file order.
    pub entries: Vec<Entry>,
    /// Lines that were skipped, and why, ready to show.
    pub warnings: Vec<String>,
}

impl Loaded {
    /// The conversation's messages, in order (a trace file has none).
    pub fn messages(&self) -> Vec<Message> {
        self.entries
            .iter()
            .filter_map(|e| match e {
                Entry::Message(m) => Some(m.clone()),
                Entry::Event(_) => None,
            })
            .collect()
    }
}

/// Reads a session file or an `exec --trace` file (event lines only, no header, no messages).
pub fn load(path: &Path) -> Result<Loaded, SessionError> {
    let mut header = None;
    let mut entries = Vec::new();
    let warnings = scan_from(path, Part::default(), |item| match item {
        Item::Header(h) => header = Some(h),
        Item::Entry(e) => entries.push(e),
    })?;
    Ok(Loaded {
        header,
        entries,
        warnings,
    })
}

/// Hands each event of a session or trace file to `on`, in order, keeping nothing else in
/// memory (messages are skipped); returns the warnings.
pub fn each_event(path: &Path, mut on: impl FnMut(Event)) -> Result<Vec<String>, SessionError> {
    scan_from(path, Part::default(), |item| {
        if let Item::Entry(Entry::Event(event)) = item {
            on(event);
        }
    })
}

/// One understood line, handed to [`scan`]'s callback.
pub(super) enum Item {
    /// The session header (only ever the first item).
    Header(SessionHeader),
    /// A message or event.
    Entry(Entry),
}

/// What one line turned out to be.
pub(super) enum Line {
    Header(SessionHeader),
    Entry(Entry),
    NotJson,
    NotEntry,
    Unknown(String),
    Malformed { kind: String, error: String },
}

/// A part of a file to read: from byte `from` (0, or the start of a line) to `until` (a line
/// end; `None`: the end of the file), handing on the lines from byte `emit` on. The lines
/// before `emit` are read only to restore what the writer wrote once (see `compact`): a
/// tail starts one run early for that.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Part {
    pub from: u64,
    pub emit: u64,
    pub until: Option<u64>,
}

/// Reads a part of `path` line by line, handing each understood line to `on`, and returns
/// the warnings. A whole file with nothing understood is an error.
pub(super) fn scan_from(
    path: &Path,
    part: Part,
    mut on: impl FnMut(Item),
) -> Result<Vec<String>, SessionError> {
    let Part { from, emit, until } = part;
    let mut expander = Some(Expander::default());
    let not_session = |reason: String| SessionError::NotSession {
        path: path.to_path_buf(),
        reason,
    };
    let file = File::open(path).map_err(|e| SessionError::io(path, e))?;
    if file.metadata().is_ok_and(|m| m.is_dir()) {
        return Err(not_session("it is a directory".into()));
    }
    let mut file = file;
    if from > 0 {
        file.seek(SeekFrom::Start(from))
            .map_err(|e| SessionError::io(path, e))?;
    }
    let mut reader = BufReader::new(file.take(until.map_or(u64::MAX, |u| u.saturating_sub(from))));
    let mut warnings = Warnings {
        from: emit,
        ..Warnings::default()
    };
    let mut at = from;
    let mut buf = Vec::new();
    let mut number = 0usize;
    let mut understood = 0usize;
    let mut saw_header = false;
    // A line that is not JSON is a torn write if it is the last one, damage otherwise; which
    // one is only known once the next line is read.
    let mut unparsed: Option<usize> = None;
    loop {
        buf.clear();
        let read = (&mut reader)
            .take(MAX_LINE)
            .read_until(b'\n', &mut buf)
            .map_err(|e| SessionError::io(path, e))?;
        if read == 0 {
            break;
        }
        at += read as u64;
        if at <= emit && emit > from {
            // Priming: only what the expander remembers is wanted from these lines.
            if let Some(expander) = expander.as_mut() {
                let _ = parse_line(buf.trim_ascii(), Some(expander));
            }
            continue;
        }
        number += 1;
        if read as u64 == MAX_LINE && buf.last() != Some(&b'\n') {
            return Err(not_session(format!(
                "{} is longer than {} MiB",
                warnings.line(number),
                MAX_LINE >> 20
            )));
        }
        let line = buf.trim_ascii();
        if line.is_empty() {
            continue;
        }
        if let Some(n) = unparsed.take() {
            warnings.skip(n, "is not valid JSON", " (perhaps cut short by a crash)");
        }
        match parse_line(line, expander.as_mut()) {
            Line::Header(header) if !saw_header && understood == 0 => {
                saw_header = true;
                understood += 1;
                if header.version > FORMAT_VERSION {
                    warnings.push(format!(
                        "the file was written by a newer taco (format version {}, this one reads {FORMAT_VERSION}); lines it does not understand are skipped",
                        header.version
                    ));
                }
                on(Item::Header(header));
            }
            Line::Header(_) => warnings.skip(number, "is a misplaced session header", ""),
            Line::Entry(entry) => {
                understood += 1;
                on(Item::Entry(entry));
            }
            Line::NotJson => unparsed = Some(number),
            Line::NotEntry => warnings.skip(number, "is JSON without a 'type'", ""),
            Line::Unknown(kind) => warnings.skip(
                number,
                &format!("has an unknown type '{kind}'"),
                " (written by a newer taco?)",
            ),
            Line::Malformed { kind, error } => warnings.skip(
                number,
                &format!("('{kind}') could not be read: {error}"),
                "",
            ),
        }
    }
    // A part read from the middle may hold nothing yet (a resumed session's first run).
    if understood == 0 && emit == 0 {
        // Nothing was understood, so a bad last line is no torn write: say what it is.
        if let Some(n) = unparsed {
            warnings.skip(n, "is not valid JSON", "");
        }
        let reason = match &warnings.first {
            None => "it is empty".to_string(),
            Some(first) => format!("no line of it is a taco entry ({first})"),
        };
        return Err(not_session(reason));
    }
    if let Some(n) = unparsed {
        warnings.skip(
            n,
            "is incomplete",
            " (the session was probably interrupted)",
        );
    }
    if let Some(lost) = expander.map(|e| e.lost).filter(|&n| n > 0) {
        warnings.push(format!(
            "the arguments of {lost} tool calls were lost with a damaged line; they show as null"
        ));
    }
    Ok(warnings.finish())
}

/// The header of a session file, reading only its first line; `None` when that line is not one.
pub(super) fn read_header(
    reader: impl BufRead,
    path: &Path,
) -> Result<Option<SessionHeader>, SessionError> {
    let mut buf = Vec::new();
    reader
        .take(MAX_LINE)
        .read_until(b'\n', &mut buf)
        .map_err(|e| SessionError::io(path, e))?;
    Ok(match parse_line(buf.trim_ascii(), None) {
        Line::Header(header) => Some(header),
        _ => None,
    })
}

pub(super) fn parse_line(bytes: &[u8], expander: Option<&mut Expander>) -> Line {
    let Ok(mut value) = serde_json::from_slice::<Value>(bytes) else {
        return Line::NotJson;
    };
    if let Some(expander) = expander {
        expander.expand(&mut value);
    }
    let Some(kind) = value.get("type").and_then(Value::as_str) else {
        return Line::NotEntry;
    };
    let malformed = |error: serde_json::Error| Line::Malformed {
        kind: kind.to_string(),
        error: error.to_string(),
    };
    match kind {
        "session" => SessionHeader::deserialize(&value).map_or_else(malformed, Line::Header),
        "message" => match value.get("data") {
            Some(data) => Message::deserialize(data)
                .map_or_else(malformed, |m| Line::Entry(Entry::Message(m))),
            None => Line::Malformed {
                kind: kind.to_string(),
                error: "no 'data'".into(),
            },
        },
        _ => match Event::deserialize(&value) {
            Ok(event) => Line::Entry(Entry::Event(event)),
            // serde names an unknown enum tag this way; a known tag with bad data is damage.
            Err(e) if e.to_string().starts_with("unknown variant") => {
                Line::Unknown(kind.to_string())
            }
            Err(e) => malformed(e),
        },
    }
}

#[derive(Default)]
struct Warnings {
    /// Where reading started: line numbers count from there.
    from: u64,
    list: Vec<String>,
    more: usize,
    /// The first skipped line, without the advice: the reason when nothing was understood.
    first: Option<String>,
}

impl Warnings {
    /// Warns that line `number` `what`, with a hint `note` about why, and was skipped.
    fn skip(&mut self, number: usize, what: &str, note: &str) {
        let problem = format!("{} {what}", self.line(number));
        self.push(format!("{problem}{note}; it was skipped"));
        self.first.get_or_insert(problem);
    }

    /// How line `number` is named: counted from the file's start, or from where reading began.
    fn line(&self, number: usize) -> String {
        if self.from == 0 {
            format!("line {number}")
        } else {
            format!("line {number} after byte {}", self.from)
        }
    }

    fn push(&mut self, warning: String) {
        if self.list.len() < MAX_WARNINGS {
            self.list.push(warning);
        } else {
            self.more += 1;
        }
    }

    fn finish(mut self) -> Vec<String> {
        if self.more > 0 {
            self.list
                .push(format!("… and {} more lines were skipped", self.more));
        }
        self.list
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_event_types_are_told_apart_from_damaged_ones() {
        let unknown = br#"{"type":"telepathy","timestamp":1,"request_id":"r","data":{}}"#;
        assert!(matches!(parse_line(unknown, None), Line::Unknown(k) if k == "telepathy"));
        let damaged = br#"{"type":"retry","timestamp":1,"request_id":"r","data":{"attempt":"x"}}"#;
        assert!(
            matches!(parse_line(damaged, None), Line::Malformed { kind, .. } if kind == "retry")
        );
        let event =
            br#"{"type":"max_turns_reached","timestamp":1,"request_id":"r","data":{"turns":3}}"#;
        assert!(matches!(
            parse_line(event, None),
            Line::Entry(Entry::Event(_))
        ));
        assert!(matches!(parse_line(b"[1,2]", None), Line::NotEntry));
        assert!(matches!(parse_line(b"{\"type\":", None), Line::NotJson));
        assert!(matches!(parse_line(&[0xff, 0xfe, 0], None), Line::NotJson));
        let message = br#"{"type":"message","timestamp":1}"#;
        assert!(matches!(parse_line(message, None), Line::Malformed { .. }));
    }

    #[test]
    fn warnings_are_capped_with_a_count() {
        let mut w = Warnings::default();
        for i in 0..MAX_WARNINGS + 3 {
            w.push(format!("w{i}"));
        }
        let list = w.finish();
        assert_eq!(list.len(), MAX_WARNINGS + 1);
        assert_eq!(list[MAX_WARNINGS], "… and 3 more lines were skipped");
    }
}
