//! Reading a session file's lines for the index without holding them: each line is parsed
//! as it streams from the file into the few fields the index counts, every other value
//! (a tool's output, a model's answer) skipped unstored. A 16 MiB answer line costs the
//! index a buffer, not 16 MiB.

use std::io::{self, BufRead, Read};
use std::path::PathBuf;

use serde::Deserialize;
use serde::de::IgnoredAny;

use super::SessionKind;
use super::reader::MAX_LINE;
use crate::conversation::{Role, Usage};

/// Lines up to this long are read whole before they are parsed.
const HEAD: u64 = 1 << 20;

/// What the index reads of one line (any other field is skipped as it streams by).
#[derive(Debug, Default, Deserialize)]
pub struct Lite {
    /// The line's type: `session` (the header), `message`, or an event's.
    #[serde(rename = "type", default)]
    pub kind: String,
    /// When it was written (message and event lines).
    pub timestamp: Option<u64>,
    /// The header's fields.
    pub id: Option<String>,
    pub started: Option<u64>,
    pub workdir: Option<PathBuf>,
    pub provider: Option<String>,
    pub model: Option<String>,
    /// Where the session was started (the header's `kind`).
    #[serde(
        rename = "kind",
        default,
        deserialize_with = "super::kind::lenient_kind"
    )]
    pub made_in: Option<SessionKind>,
    /// A message's or an event's data.
    #[serde(default)]
    pub data: LiteData,
}

/// The fields of a line's data the index reads.
#[derive(Debug, Default, Deserialize)]
pub struct LiteData {
    /// A message's author.
    pub role: Option<Role>,
    /// A run's prompt (`run_started`).
    pub prompt: Option<String>,
    /// The provider a run started with, or a `/model` switch chose.
    pub provider: Option<String>,
    /// The model of a run, a switch or a model call.
    pub model: Option<String>,
    /// A model call's or a compaction's tokens.
    pub usage: Option<Usage>,
    /// The frame of a sub-agent's call or compaction.
    pub parent: Option<String>,
    /// A compaction's cut.
    pub kept_from: Option<usize>,
    /// A failed compaction's reason (only whether there is one matters).
    pub error: Option<IgnoredAny>,
}

/// One line read: what it holds (`None`: not JSON the index understands), and its length.
pub struct Read1 {
    /// The parsed fields.
    pub lite: Option<Lite>,
    /// Bytes the line took, its newline included.
    pub len: u64,
}

/// Reads the next complete line of `reader`; `None` at the end or at a last line with no
/// newline yet (still being written, or torn), which is left for later.
pub fn next(reader: &mut impl BufRead) -> io::Result<Option<Read1>> {
    let mut line = OneLine {
        inner: reader,
        taken: 0,
        ended: false,
    };
    // Most lines are short: read whole and parsed at once (fast); a longer one streams
    // through the parser after its head (a byte at a time, but never held).
    let mut head = Vec::new();
    (&mut line).take(HEAD).read_to_end(&mut head)?;
    let lite = if line.ended {
        serde_json::from_slice::<Lite>(&head).ok()
    } else {
        serde_json::from_reader::<_, Lite>(io::Cursor::new(head).chain(&mut line)).ok()
    };
    // Whatever the parse left of the line (after an error, or trailing blanks).
    io::copy(&mut line, &mut io::sink())?;
    if !line.ended {
        if line.taken > MAX_LINE {
            return Err(io::Error::other(format!(
                "a line is longer than {} MiB",
                MAX_LINE >> 20
            )));
        }
        return Ok(None);
    }
    Ok(Some(Read1 {
        lite,
        len: line.taken,
    }))
}

/// One line of a buffered reader as a `Read`: its bytes up to the newline, which it
/// consumes; ends early past `MAX_LINE`.
struct OneLine<'a, R> {
    inner: &'a mut R,
    /// Bytes consumed, the newline included.
    taken: u64,
    /// Whether the newline was reached.
    ended: bool,
}

impl<R: BufRead> Read for OneLine<'_, R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.ended || self.taken > MAX_LINE || out.is_empty() {
            return Ok(0);
        }
        let buf = self.inner.fill_buf()?;
        // Only as far as `out` reaches: the parser asks a byte at a time.
        let window = &buf[..buf.len().min(out.len())];
        let (n, newline) = match window.iter().position(|&b| b == b'\n') {
            Some(i) => (i, true),
            None => (window.len(), false),
        };
        out[..n].copy_from_slice(&window[..n]);
        let consumed = n + usize::from(newline);
        self.inner.consume(consumed);
        self.taken += consumed as u64;
        self.ended = newline;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn lines_are_read_one_at_a_time_and_a_torn_last_one_is_left() {
        let text = concat!(
            r#"{"type":"message","timestamp":1,"data":{"role":"user","content":"hi"}}"#,
            "\n",
            "not json\n",
            "\n",
            r#"{"timestamp":2,"request_id":"r","type":"llm_call","data":{"content":"x","usage":{"input_tokens":3,"output_tokens":4}}}"#,
            "\n",
            r#"{"type":"message","data":{"ro"#
        );
        let mut reader = io::BufReader::with_capacity(8, text.as_bytes());
        let first = next(&mut reader).unwrap().unwrap();
        let lite = first.lite.unwrap();
        assert_eq!(
            (lite.kind.as_str(), lite.data.role),
            ("message", Some(Role::User))
        );
        assert_eq!(first.len as usize, text.find('\n').unwrap() + 1);
        assert!(next(&mut reader).unwrap().unwrap().lite.is_none());
        assert!(next(&mut reader).unwrap().unwrap().lite.is_none());
        let call = next(&mut reader).unwrap().unwrap().lite.unwrap();
        assert_eq!(call.data.usage.unwrap().output_tokens, 4);
        assert!(next(&mut reader).unwrap().is_none(), "the torn line waits");
    }

    #[test]
    fn a_huge_value_streams_by_without_being_kept() {
        let big = "y".repeat(3 << 20);
        let text = format!(
            r#"{{"type":"message","data":{{"content":"{big}","role":"assistant"}}}}{}"#,
            "\n"
        );
        let mut reader = io::BufReader::new(text.as_bytes());
        let read = next(&mut reader).unwrap().unwrap();
        assert_eq!(read.lite.unwrap().data.role, Some(Role::Assistant));
        assert_eq!(read.len as usize, text.len());
    }
}
