//! Reading a session file backwards, a line at a time, and telling a line's type by its
//! first bytes: how a resume finds where to start (`tail`) and how the index learns how an
//! old row's session ended without reading the whole file (`catalog`).

use std::borrow::Cow;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};

use super::reader::MAX_LINE;

/// Bytes read per step backwards.
const CHUNK: u64 = 1 << 20;

/// The lines of a file region from the last, each with its offset, read in chunks.
pub(super) struct Backwards {
    /// Where the region starts.
    start: u64,
    /// The file offset of `data[0]`.
    pos: u64,
    /// Bytes read and not yet handed out (a line may continue before them).
    data: Vec<u8>,
}

impl Backwards {
    pub(super) fn new(start: u64, end: u64) -> Self {
        Self {
            start,
            pos: end.max(start),
            data: Vec::new(),
        }
    }

    /// The previous non-empty line and its offset; `None` at the region's start.
    pub(super) fn next(&mut self, file: &mut File) -> std::io::Result<Option<(u64, Vec<u8>)>> {
        loop {
            while self.data.last() == Some(&b'\n') {
                self.data.pop();
            }
            match self.data.iter().rposition(|&b| b == b'\n') {
                Some(i) => {
                    let line = self.data.split_off(i + 1);
                    if !line.trim_ascii().is_empty() {
                        return Ok(Some((self.pos + i as u64 + 1, line)));
                    }
                }
                None if self.pos > self.start => {
                    // Read the chunk before, in front of what is left.
                    let from = self.pos.saturating_sub(CHUNK).max(self.start);
                    let mut chunk = vec![0u8; (self.pos - from) as usize];
                    file.seek(SeekFrom::Start(from))?;
                    file.read_exact(&mut chunk)?;
                    if (chunk.len() + self.data.len()) as u64 > MAX_LINE + CHUNK {
                        // A line this long is no session line: stop here.
                        return Ok(None);
                    }
                    chunk.append(&mut self.data);
                    self.data = chunk;
                    self.pos = from;
                }
                None => {
                    let line = std::mem::take(&mut self.data);
                    return Ok((!line.trim_ascii().is_empty()).then_some((self.pos, line)));
                }
            }
        }
    }
}

/// A line's type, from its envelope. taco writes it first in a message line and after the
/// timestamp and request id in an event line, so most lines are told by their first bytes;
/// a line written otherwise (another tool, keys in another order) is parsed whole, since a
/// `"type"` further in may be a key of its data.
pub(super) fn kind(line: &[u8]) -> Option<Cow<'_, str>> {
    fast_kind(line)
        .map(|k| Cow::Borrowed(std::str::from_utf8(k).unwrap_or_default()))
        .or_else(|| {
            let value: serde_json::Value = serde_json::from_slice(line).ok()?;
            Some(Cow::Owned(value.get("type")?.as_str()?.to_string()))
        })
}

/// The type of a line in taco's own key order; `None` for any other shape.
fn fast_kind(line: &[u8]) -> Option<&[u8]> {
    let rest = match line.strip_prefix(b"{\"type\":\"") {
        Some(rest) => rest,
        None => {
            let rest = line.strip_prefix(b"{\"timestamp\":")?;
            let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
            let rest = rest[digits..].strip_prefix(b",\"request_id\":\"")?;
            let id = rest.iter().position(|&b| b == b'"' || b == b'\\')?;
            if rest[id] != b'"' {
                return None;
            }
            rest[id + 1..].strip_prefix(b",\"type\":\"")?
        }
    };
    let len = rest.iter().position(|&b| b == b'"' || b == b'\\')?;
    (rest[len] == b'"').then(|| &rest[..len])
}
