//! Server-sent events decoding (WHATWG EventSource framing), incremental and allocation-free in
//! the steady state.
// Hand-written rather than eventsource-stream: it reuses its buffers (DESIGN §10), reports an
// event cut off by the end of the stream, and that crate has not been released since 2022.

use std::borrow::Cow;

use super::ProviderError;
use super::chunks::Framing;

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The longest SSE line read (without its terminator). A whole tool call can arrive in one
/// line (a `write_file` of a large file, Groq and xAI send calls whole), and a model's longest
/// reply (~128k tokens, ≈ 0.5 MiB, up to ~4× that once escaped twice as JSON arguments inside
/// JSON) fits with room to spare, while a few buffers this size stay far below the 100 MB a
/// provider call may use. A longer line is a stream that is not SSE, or a hostile one.
pub const MAX_LINE: usize = 8 << 20;

/// The most `data` one event may accumulate (its `data:` lines joined), for the same reasons
/// as [`MAX_LINE`]: one event carries at most one chunk of the reply.
pub const MAX_EVENT_DATA: usize = 8 << 20;

/// A bound of [`SseDecoder`] was broken; the decoder stops there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SseError {
    /// A line longer than [`MAX_LINE`] (or one that never ends).
    #[error(
        "the provider sent over {} MiB without a line break, more than any SSE line needs; \
         stopped reading (is base_url right?)",
        MAX_LINE >> 20
    )]
    LineTooLong,
    /// An event whose `data` lines add up to more than [`MAX_EVENT_DATA`].
    #[error(
        "the provider sent one SSE event with over {} MiB of data; stopped reading",
        MAX_EVENT_DATA >> 20
    )]
    EventTooLarge,
}

impl From<SseError> for ProviderError {
    fn from(error: SseError) -> Self {
        ProviderError::Limit(error.to_string())
    }
}

/// One dispatched event. It borrows the decoder, so handle it before asking for the next one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SseEvent<'a> {
    /// The `event` field; `None` for the default type (`message`).
    pub event: Option<&'a str>,
    /// The `data` lines of the event joined with `\n` (empty when the event had none).
    pub data: &'a str,
    /// The last event id seen so far (ids persist across events, as in EventSource).
    pub id: Option<&'a str>,
    /// The `retry` field of this event, in milliseconds.
    pub retry: Option<u64>,
}

/// What was left when the stream ended (see [`SseDecoder::finish`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SseTail<'a> {
    /// The event being built when the bytes ended: fields were seen but no blank line followed.
    /// It was not dispatched; the caller decides whether it counts (e.g. a final `[DONE]`).
    pub pending: Option<SseEvent<'a>>,
    /// Whether the bytes ended in the middle of a line (it was parsed into `pending`).
    pub partial_line: bool,
}

impl SseTail<'_> {
    /// Whether the stream ended exactly at an event boundary.
    pub fn is_clean(&self) -> bool {
        self.pending.is_none() && !self.partial_line
    }
}

/// Makes room for `extra` more bytes, doubling as `Vec` does but not past `bound` unless the
/// bytes themselves need it: a buffer near its bound keeps no spare half reserved.
fn reserve_within(buf: &mut Vec<u8>, extra: usize, bound: usize) {
    let needed = buf.len() + extra;
    if needed > buf.capacity() {
        let target = needed.max(buf.capacity().saturating_mul(2).min(bound));
        buf.reserve_exact(target - buf.len());
    }
}

/// Fields of the event being built. Kept apart from the byte buffer so a line can be borrowed
/// from the buffer while the event is updated.
#[derive(Debug, Default)]
struct EventBuilder {
    data: Vec<u8>,
    event: String,
    id: String,
    has_data: bool,
    has_event: bool,
    has_id: bool,
    retry: Option<u64>,
}

impl EventBuilder {
    /// Parses one line (without its terminator); returns true when it dispatches an event.
    fn line(&mut self, line: &[u8]) -> Result<bool, SseError> {
        if line.is_empty() {
            // WHATWG drops data-less events; the openai-python vectors dispatch `event: ping`
            // alone, so an event type is enough (keep-alive comments and blank lines are not).
            if self.has_data || self.has_event {
                return Ok(true);
            }
            self.retry = None;
            return Ok(false);
        }
        if line[0] == b':' {
            return Ok(false);
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                let joined = self.data.len() + usize::from(self.has_data) + value.len();
                if joined > MAX_EVENT_DATA {
                    return Err(SseError::EventTooLarge);
                }
                let extra = joined - self.data.len();
                reserve_within(&mut self.data, extra, MAX_EVENT_DATA);
                if self.has_data {
                    self.data.push(b'\n');
                }
                self.data.extend_from_slice(value);
                self.has_data = true;
            }
            b"event" => {
                self.event.clear();
                self.event.push_str(&String::from_utf8_lossy(value));
                self.has_event = true;
            }
            b"id" if !value.contains(&0) => {
                self.id.clear();
                self.id.push_str(&String::from_utf8_lossy(value));
                self.has_id = !value.is_empty();
            }
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                // Digits only, so it is ASCII; an overflowing value is ignored.
                self.retry = std::str::from_utf8(value).ok().and_then(|s| s.parse().ok());
            }
            _ => {}
        }
        Ok(false)
    }

    fn reset(&mut self) {
        self.data.clear();
        self.event.clear();
        self.has_data = false;
        self.has_event = false;
        self.retry = None;
    }

    fn pending(&self) -> bool {
        self.has_data || self.has_event
    }

    /// The current event; invalid UTF-8 in the data is replaced (as EventSource decodes).
    fn event(&mut self) -> SseEvent<'_> {
        if std::str::from_utf8(&self.data).is_err()
            && let Cow::Owned(fixed) = String::from_utf8_lossy(&self.data)
        {
            self.data = fixed.into_bytes();
        }
        SseEvent {
            event: (self.has_event && !self.event.is_empty()).then_some(self.event.as_str()),
            data: std::str::from_utf8(&self.data).unwrap_or_default(),
            id: self.has_id.then_some(self.id.as_str()),
            retry: self.retry,
        }
    }
}

/// An incremental SSE decoder: [`push`](Self::push) bytes as they arrive, pull events with
/// [`next_event`](Self::next_event), and call [`finish`](Self::finish) at the end of the stream.
#[derive(Debug, Default)]
pub struct SseDecoder {
    buf: Vec<u8>,
    /// Start of the bytes not yet parsed.
    pos: usize,
    /// `buf[pos..scanned]` is known to hold no line terminator (avoids rescanning long lines).
    scanned: usize,
    /// The previous line ended in a CR at the end of the buffer; a leading LF belongs to it.
    skip_lf: bool,
    bom_checked: bool,
    /// The last event was handed out; its fields are cleared before the next line.
    dispatched: bool,
    builder: EventBuilder,
    /// A bound was broken: nothing more is read or dispatched.
    failed: Option<SseError>,
}

impl SseDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds bytes received from the network. Drain [`next_event`](Self::next_event) after each
    /// push: that is where an overlong line is noticed, so the buffer stays within
    /// [`MAX_LINE`] plus one push.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.failed.is_some() {
            return;
        }
        if self.pos > 0 {
            // Keep only the unparsed tail (usually a partial line), so the buffer stays small.
            self.buf.drain(..self.pos);
            self.scanned = self.scanned.saturating_sub(self.pos);
            self.pos = 0;
        }
        reserve_within(&mut self.buf, bytes.len(), MAX_LINE + 2);
        self.buf.extend_from_slice(bytes);
    }

    /// The next complete event, `Ok(None)` when more bytes are needed, or the bound the
    /// stream broke (then and ever after).
    pub fn next_event(&mut self) -> Result<Option<SseEvent<'_>>, SseError> {
        if self.dispatched {
            self.builder.reset();
            self.dispatched = false;
        }
        loop {
            // After a failure the buffer is empty, so this ends the loop with the error.
            let Some((start, end)) = self.next_line(false) else {
                return self.failed.map_or(Ok(None), Err);
            };
            match self.builder.line(&self.buf[start..end]) {
                Ok(false) => {}
                Ok(true) => {
                    self.dispatched = true;
                    return Ok(Some(self.builder.event()));
                }
                Err(error) => return Err(self.fail(error)),
            }
        }
    }

    /// Ends the stream; call it once [`next_event`](Self::next_event) has returned `Ok(None)`.
    /// Nothing more is dispatched: an unterminated last line is parsed into the pending event,
    /// which is returned undispatched so the caller can tell a cut-off stream from a clean end.
    pub fn finish(&mut self) -> Result<SseTail<'_>, SseError> {
        if self.dispatched {
            self.builder.reset();
            self.dispatched = false;
        }
        // After a failure the buffer is empty: straight to the error below.
        while let Some((start, end)) = self.next_line(true) {
            // A blank line here would mean the caller did not drain `next_event`.
            match self.builder.line(&self.buf[start..end]) {
                Ok(false) => {}
                Ok(true) => self.builder.reset(),
                Err(error) => return Err(self.fail(error)),
            }
        }
        if let Some(error) = self.failed {
            return Err(error);
        }
        let partial_line = self.pos < self.buf.len();
        if partial_line {
            let (start, end) = (self.pos, self.buf.len());
            self.pos = end;
            self.scanned = end;
            if let Err(error) = self.builder.line(&self.buf[start..end]) {
                return Err(self.fail(error));
            }
        }
        let pending = self.builder.pending();
        self.dispatched = true;
        Ok(SseTail {
            pending: pending.then(|| self.builder.event()),
            partial_line,
        })
    }

    /// Bytes held for an unfinished line and the event being built (capacity, not length):
    /// what the bounds keep small.
    pub fn buffered(&self) -> usize {
        self.buf.capacity() + self.builder.data.capacity()
    }

    /// Remembers a broken bound (nothing more is read) and returns it.
    #[cold]
    #[inline(never)]
    fn fail(&mut self, error: SseError) -> SseError {
        self.failed = Some(error);
        // The bytes are of no use any more; give their memory back.
        self.buf = Vec::new();
        self.pos = 0;
        self.scanned = 0;
        self.skip_lf = false;
        self.builder = EventBuilder::default();
        error
    }

    /// Finds the next complete line; returns its bounds in `buf` (terminator excluded). A line
    /// over [`MAX_LINE`] fails the decoder (checked through `failed`, which keeps this cheap).
    fn next_line(&mut self, at_eof: bool) -> Option<(usize, usize)> {
        let len = self.buf.len();
        if !self.bom_checked {
            let rest = &self.buf[self.pos..];
            if rest.len() < BOM.len() && BOM.starts_with(rest) && !at_eof {
                return None;
            }
            if rest.starts_with(BOM) {
                self.pos += BOM.len();
                self.scanned = self.scanned.max(self.pos);
            }
            self.bom_checked = true;
        }
        if self.skip_lf && self.pos < len {
            if self.buf[self.pos] == b'\n' {
                self.pos += 1;
                self.scanned = self.scanned.max(self.pos);
            }
            self.skip_lf = false;
        }
        let from = self.scanned.max(self.pos);
        let Some(offset) = self.buf[from..]
            .iter()
            .position(|&b| b == b'\n' || b == b'\r')
        else {
            if len - self.pos > MAX_LINE {
                self.fail(SseError::LineTooLong);
                return None;
            }
            self.scanned = len;
            return None;
        };
        let end = from + offset;
        if end - self.pos > MAX_LINE {
            self.fail(SseError::LineTooLong);
            return None;
        }
        let mut next = end + 1;
        if self.buf[end] == b'\r' {
            if next < len {
                if self.buf[next] == b'\n' {
                    next += 1;
                }
            } else {
                self.skip_lf = true;
            }
        }
        let start = self.pos;
        self.pos = next;
        self.scanned = next;
        Some((start, end))
    }
}

/// Server-sent events as the frames of a reply: each dispatched event is one frame; an event
/// left without its blank line at the end is the pending one.
impl Framing for SseDecoder {
    type Frame<'a>
        = SseEvent<'a>
    where
        Self: 'a;

    fn push(
        &mut self,
        bytes: &[u8],
        mut frame: impl FnMut(SseEvent<'_>) -> bool,
    ) -> Result<bool, ProviderError> {
        SseDecoder::push(self, bytes);
        while let Some(event) = self.next_event()? {
            if frame(event) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    fn finish(&mut self) -> Result<Option<SseEvent<'_>>, ProviderError> {
        Ok(SseDecoder::finish(self)?.pending)
    }
}

#[cfg(test)]
mod tests;
