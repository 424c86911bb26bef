//! Server-sent events decoding (WHATWG EventSource framing), incremental and allocation-free in
//! the steady state.
// Hand-written rather than eventsource-stream: it reuses its buffers (DESIGN §10), reports an
// event cut off by the end of the stream, and that crate has not been released since 2022.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_util::Stream;

use super::{Chunk, ChunkStream, ProviderError};

const BOM: &[u8] = b"\xEF\xBB\xBF";

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
    fn line(&mut self, line: &[u8]) -> bool {
        if line.is_empty() {
            // WHATWG drops data-less events; the openai-python vectors dispatch `event: ping`
            // alone, so an event type is enough (keep-alive comments and blank lines are not).
            if self.has_data || self.has_event {
                return true;
            }
            self.retry = None;
            return false;
        }
        if line[0] == b':' {
            return false;
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
        false
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
}

impl SseDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds bytes received from the network.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.pos > 0 {
            // Keep only the unparsed tail (usually a partial line), so the buffer stays small.
            self.buf.drain(..self.pos);
            self.scanned = self.scanned.saturating_sub(self.pos);
            self.pos = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// The next complete event, or `None` when more bytes are needed.
    pub fn next_event(&mut self) -> Option<SseEvent<'_>> {
        if self.dispatched {
            self.builder.reset();
            self.dispatched = false;
        }
        loop {
            let (start, end) = self.next_line(false)?;
            if self.builder.line(&self.buf[start..end]) {
                self.dispatched = true;
                return Some(self.builder.event());
            }
        }
    }

    /// Ends the stream; call it once [`next_event`](Self::next_event) has returned `None`.
    /// Nothing more is dispatched: an unterminated last line is parsed into the pending event,
    /// which is returned undispatched so the caller can tell a cut-off stream from a clean end.
    pub fn finish(&mut self) -> SseTail<'_> {
        if self.dispatched {
            self.builder.reset();
            self.dispatched = false;
        }
        while let Some((start, end)) = self.next_line(true) {
            // A blank line here would mean the caller did not drain `next_event`.
            if self.builder.line(&self.buf[start..end]) {
                self.builder.reset();
            }
        }
        let partial_line = self.pos < self.buf.len();
        if partial_line {
            let (start, end) = (self.pos, self.buf.len());
            self.pos = end;
            self.scanned = end;
            self.builder.line(&self.buf[start..end]);
        }
        let pending = self.builder.pending();
        self.dispatched = true;
        SseTail {
            pending: pending.then(|| self.builder.event()),
            partial_line,
        }
    }

    /// Finds the next complete line; returns its bounds in `buf` (terminator excluded).
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
            self.scanned = len;
            return None;
        };
        let end = from + offset;
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

/// What one wire format does with server-sent events (Chat Completions, Messages).
pub(crate) trait EventDecoder {
    /// The terminator a complete stream ends with (for `Truncated`).
    const TERMINATOR: &'static str;
    /// Decodes one event into `out`; `true` when the stream is over.
    fn event(
        &mut self,
        event: SseEvent<'_>,
        out: &mut VecDeque<Result<Chunk, ProviderError>>,
    ) -> bool;
    /// The bytes ended with `pending` left undispatched (no blank line after it); decodes it
    /// if it counts and returns whether the stream was complete.
    fn end(
        &mut self,
        pending: Option<SseEvent<'_>>,
        out: &mut VecDeque<Result<Chunk, ProviderError>>,
    ) -> bool;
}

/// Turns a byte stream into chunks with an [`EventDecoder`]; a stream that stops before its
/// terminator ends with `Truncated`, a transport error ends it at once.
pub(crate) fn chunk_stream<S, D>(bytes: S, decoder: D) -> ChunkStream
where
    S: Stream<Item = Result<Bytes, ProviderError>> + Send + 'static,
    D: EventDecoder + Send + Unpin + 'static,
{
    Box::pin(SseChunks {
        bytes: Box::pin(bytes),
        sse: SseDecoder::new(),
        decoder,
        out: VecDeque::new(),
        ended: false,
    })
}

struct SseChunks<S, D> {
    bytes: Pin<Box<S>>,
    sse: SseDecoder,
    decoder: D,
    /// Chunks decoded but not yet handed out (one event can carry several).
    out: VecDeque<Result<Chunk, ProviderError>>,
    /// The terminator, an error or the end of the bytes was reached.
    ended: bool,
}

impl<S, D: EventDecoder> SseChunks<S, D> {
    fn decode_events(&mut self) {
        while !self.ended {
            let Some(event) = self.sse.next_event() else {
                break;
            };
            self.ended = self.decoder.event(event, &mut self.out);
        }
    }

    fn decode_end(&mut self) {
        self.ended = true;
        let pending = self.sse.finish().pending;
        if !self.decoder.end(pending, &mut self.out) {
            self.out.push_back(Err(ProviderError::Truncated {
                terminator: D::TERMINATOR,
            }));
        }
    }
}

impl<S, D> Stream for SseChunks<S, D>
where
    S: Stream<Item = Result<Bytes, ProviderError>>,
    D: EventDecoder + Unpin,
{
    type Item = Result<Chunk, ProviderError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if let Some(item) = this.out.pop_front() {
                return Poll::Ready(Some(item));
            }
            if this.ended {
                return Poll::Ready(None);
            }
            match this.bytes.as_mut().poll_next(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Some(Ok(bytes))) => {
                    this.sse.push(&bytes);
                    this.decode_events();
                }
                Poll::Ready(Some(Err(e))) => {
                    this.out.push_back(Err(e));
                    this.ended = true;
                }
                Poll::Ready(None) => {
                    this.decode_events();
                    if !this.ended {
                        this.decode_end();
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(chunks: &[&[u8]]) -> (Vec<String>, Option<String>) {
        let mut decoder = SseDecoder::new();
        let mut out = Vec::new();
        for chunk in chunks {
            decoder.push(chunk);
            while let Some(event) = decoder.next_event() {
                out.push(format!("{:?}|{}|{:?}", event.event, event.data, event.id));
            }
        }
        let tail = decoder.finish();
        (out, tail.pending.map(|e| e.data.to_string()))
    }

    #[test]
    fn bom_split_across_pushes_is_dropped() {
        let (events, _) = decode(&[b"\xEF", b"\xBB", b"\xBFdata: a\n\n"]);
        assert_eq!(events, ["None|a|None"]);
    }

    #[test]
    fn a_bom_only_counts_at_the_start() {
        let (events, _) = decode(&[b"data: a\n\n\xEF\xBB\xBFdata: b\n\n"]);
        assert_eq!(events, ["None|a|None"]);
    }

    #[test]
    fn cr_at_a_chunk_boundary_then_lf_is_one_line_end() {
        let (events, _) = decode(&[b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"]);
        assert_eq!(events, ["None|a\nb|None"]);
    }

    #[test]
    fn comments_and_blank_lines_do_not_dispatch() {
        let (events, tail) = decode(&[b": keep-alive\n\n\n: x\n\ndata: a\n\n"]);
        assert_eq!(events, ["None|a|None"]);
        assert_eq!(tail, None);
    }

    #[test]
    fn fields_without_colon_and_unknown_fields() {
        let (events, _) = decode(&[b"data\nfoo: bar\ndata: x\n\n"]);
        assert_eq!(events, ["None|\nx|None"]);
    }

    #[test]
    fn retry_and_id_rules() {
        let mut decoder = SseDecoder::new();
        decoder.push(b"retry: 1500\nid: 7\ndata: a\n\nretry: x\nid: a\0b\ndata: b\n\n");
        let first = decoder
            .next_event()
            .map(|e| (e.retry, e.id.map(String::from)));
        assert_eq!(first, Some((Some(1500), Some("7".to_string()))));
        let second = decoder
            .next_event()
            .map(|e| (e.retry, e.id.map(String::from)));
        assert_eq!(second, Some((None, Some("7".to_string()))));
    }

    #[test]
    fn invalid_utf8_is_replaced_not_fatal() {
        let (events, _) = decode(&[b"data: \xFF\xFEok\n\n"]);
        assert_eq!(events, ["None|\u{FFFD}\u{FFFD}ok|None"]);
    }

    #[test]
    fn the_tail_reports_an_unterminated_event() {
        let (events, pending) = decode(&[b"data: a\n\ndata: [DONE]\n"]);
        assert_eq!(events, ["None|a|None"]);
        assert_eq!(pending.as_deref(), Some("[DONE]"));
        let (_, pending) = decode(&[b"data: a\n\ndata: [DO"]);
        assert_eq!(pending.as_deref(), Some("[DO"));
        let mut decoder = SseDecoder::new();
        decoder.push(b"data: a\n\n");
        while decoder.next_event().is_some() {}
        assert!(decoder.finish().is_clean());
    }

    #[test]
    fn a_long_line_in_one_byte_pushes() {
        let line = format!("data: {}\n\n", "x".repeat(10_000));
        let mut decoder = SseDecoder::new();
        let mut seen = 0;
        for byte in line.as_bytes() {
            decoder.push(std::slice::from_ref(byte));
            while let Some(event) = decoder.next_event() {
                seen = event.data.len();
            }
        }
        assert_eq!(seen, 10_000);
    }
}
