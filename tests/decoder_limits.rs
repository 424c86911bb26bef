//! Bounded memory in the stream decoders (issue 9): an endless line, an endless event and an
//! endless run of keep-alives, through the real decode paths of every provider. Memory is
//! measured with a counting allocator, so the bounds hold for everything the decoders hold.

use crate::meter;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use taco::provider::sse::{MAX_EVENT_DATA, MAX_LINE};
use taco::provider::{Chunk, ChunkStream, ProviderError, anthropic, ollama, openai};

/// What one network read carries in these tests.
const READ: usize = 64 << 10;

type Decode = fn(futures_util::stream::Iter<Reads>) -> ChunkStream;

/// The reads of a stream: `head`, then `body` over and over up to `total` bytes, then `tail`;
/// made as they are pulled (nothing is held up front) and counted in `pulled`.
struct Reads {
    parts: std::vec::IntoIter<Bytes>,
    body: Bytes,
    left: usize,
    tail: Option<Bytes>,
    pulled: Arc<AtomicUsize>,
}

impl Iterator for Reads {
    type Item = Result<Bytes, ProviderError>;

    fn next(&mut self) -> Option<Self::Item> {
        let next = self.parts.next().or_else(|| {
            if self.left > 0 {
                self.left = self.left.saturating_sub(self.body.len());
                Some(self.body.clone())
            } else {
                self.tail.take()
            }
        })?;
        self.pulled.fetch_add(next.len(), Ordering::Relaxed);
        Some(Ok(next))
    }
}

/// How a decoded stream went.
#[derive(Debug)]
struct Run {
    /// Chunks before the end.
    chunks: usize,
    /// Bytes of text, reasoning and arguments in them.
    text: usize,
    /// The error that ended the stream, if any.
    error: Option<ProviderError>,
    /// Input bytes the decoder pulled.
    pulled: usize,
    /// The most memory held while decoding (the reads themselves are shared, not copied).
    peak: usize,
}

/// Decodes `head`, `body` repeated to `total` bytes and `tail` with `decode`.
fn run(decode: Decode, head: &[u8], body: &[u8], total: usize, tail: &[u8]) -> Run {
    let pulled = Arc::new(AtomicUsize::new(0));
    let reads = Reads {
        parts: vec![Bytes::copy_from_slice(head)].into_iter(),
        body: Bytes::copy_from_slice(body),
        left: total,
        tail: Some(Bytes::copy_from_slice(tail)),
        pulled: pulled.clone(),
    };
    let ((chunks, text, error), peak) = meter::peak(|| {
        let mut stream = decode(futures_util::stream::iter(reads));
        let mut cx = Context::from_waker(Waker::noop());
        let (mut chunks, mut text, mut error) = (0, 0, None);
        loop {
            match stream.as_mut().poll_next(&mut cx) {
                Poll::Ready(Some(Ok(chunk))) => {
                    assert!(error.is_none(), "a chunk after {error:?}");
                    chunks += 1;
                    text += match chunk {
                        Chunk::Text(t) | Chunk::Reasoning(t) => t.len(),
                        Chunk::ToolCall(call) => call.arguments.len(),
                        _ => 0,
                    };
                }
                Poll::Ready(Some(Err(e))) => {
                    assert!(error.is_none(), "a second error {e:?} after {error:?}");
                    error = Some(e);
                }
                Poll::Ready(None) => break,
                Poll::Pending => panic!("in-memory reads are never pending"),
            }
        }
        (chunks, text, error)
    });
    Run {
        chunks,
        text,
        error,
        pulled: pulled.load(Ordering::Relaxed),
        peak,
    }
}

fn openai(reads: futures_util::stream::Iter<Reads>) -> ChunkStream {
    openai::decode_stream(reads)
}

fn anthropic(reads: futures_util::stream::Iter<Reads>) -> ChunkStream {
    anthropic::decode_stream(reads)
}

fn ollama(reads: futures_util::stream::Iter<Reads>) -> ChunkStream {
    ollama::decode_stream(reads)
}

/// The error is a `Limit` naming the bound, and the decoder stopped reading soon after it.
fn assert_limit(run: &Run, says: &str, bound: usize) {
    match &run.error {
        Some(ProviderError::Limit(message)) => {
            assert!(message.contains(says), "{message}");
            assert!(message.contains("8 MiB"), "{message}");
        }
        other => panic!("expected a Limit error, got {other:?} ({run:?})"),
    }
    // Each input had 64 times the bound to offer; field names make input and data differ.
    assert!(run.pulled <= 2 * bound, "read on after the bound: {run:?}");
    // The bytes of the line or event and a read or two, nothing more (and the meter works:
    // it saw them).
    assert!(run.peak <= bound + 4 * READ, "{run:?}");
    assert!(run.peak >= bound, "{run:?}");
}

#[test]
fn an_endless_sse_line_ends_the_stream_with_a_limit_error() {
    let x = [b'x'; READ];
    let head = br#"data: {"choices":[{"delta":{"content":""#;
    for decode in [openai as Decode, anthropic] {
        let run = run(decode, head, &x, 64 * MAX_LINE, b"\n\n");
        assert_limit(&run, "without a line break", MAX_LINE);
        assert_eq!(run.chunks, 0);
    }
}

#[test]
fn an_endless_sse_event_of_short_lines_ends_the_stream_with_a_limit_error() {
    let lines = b"data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n".repeat(1024);
    let event = b"event: content_block_delta\n";
    for decode in [openai as Decode, anthropic] {
        let run = run(decode, event, &lines, 64 * MAX_EVENT_DATA, b"\n");
        assert_limit(&run, "one SSE event", MAX_EVENT_DATA);
        assert_eq!(run.chunks, 0);
    }
}

#[test]
fn an_endless_ndjson_line_ends_the_stream_with_a_limit_error() {
    let x = [b' '; READ];
    let first = b"{\"message\":{\"content\":\"hi\"}}\n{\"message\":{\"content\":\"";
    let run = run(ollama, first, &x, 64 * ollama::MAX_LINE, b"\"}}\n");
    assert_limit(&run, "without a line break", ollama::MAX_LINE);
    assert_eq!((run.chunks, run.text), (1, 2), "what came before is kept");
}

#[test]
fn a_whole_ndjson_line_over_the_bound_in_one_read_is_refused_too() {
    let mut line = b"{\"message\":{\"content\":\"".to_vec();
    line.resize(ollama::MAX_LINE + 1, b'x');
    let run = run(ollama, &line, b"", 0, b"\"}}\n");
    assert!(
        matches!(run.error, Some(ProviderError::Limit(_))),
        "{run:?}"
    );
}

#[test]
fn megabytes_of_keep_alives_hold_no_memory() {
    let openai_alive = b": keep-alive\n\n\r\nevent: ping\n\n\n".repeat(1024);
    let anthropic_alive = b"event: ping\ndata: {\"type\": \"ping\"}\n\n: x\n\n".repeat(1024);
    // 50 MB through the SSE framing both SSE decoders share; the JSON-parsed pings and the
    // NDJSON lines would show growth long before 16 MB (debug builds are slow).
    let cases: [(Decode, &[u8], usize, &[u8]); 3] = [
        (openai, &openai_alive, 50 << 20, b"data: [DONE]\n\n"),
        (
            anthropic,
            &anthropic_alive,
            16 << 20,
            b"data: {\"type\":\"message_stop\"}\n\n",
        ),
        (
            ollama,
            &b" \n\n \r\n".repeat(4096),
            16 << 20,
            b"{\"done\":true}\n",
        ),
    ];
    for (decode, alive, total, end) in cases {
        let run = run(decode, b"", alive, total, end);
        assert_eq!(run.error, None, "{run:?}");
        assert!(run.pulled >= total);
        assert!(run.peak <= 4 * alive.len() + (64 << 10), "{run:?}");
    }
}

#[test]
fn a_large_tool_call_under_the_bound_passes() {
    let arguments = format!("{{\"content\":\"{}\"}}", "y".repeat(6 << 20));
    let openai_event = serde_json::json!({"choices": [{"delta": {"tool_calls": [
        {"index": 0, "id": "c", "function": {"name": "write_file", "arguments": arguments}}]}}]});
    let ollama_line = serde_json::json!({"message": {"tool_calls": [
        {"function": {"name": "write_file", "arguments": {"content": "y".repeat(6 << 20)}}}]}});
    let cases: [(Decode, String, &[u8]); 2] = [
        (
            openai,
            format!("data: {openai_event}\n\n"),
            b"data: [DONE]\n\n",
        ),
        (ollama, format!("{ollama_line}\n"), b"{\"done\":true}\n"),
    ];
    for (decode, head, end) in cases {
        let run = run(decode, b"", head.as_bytes(), head.len(), end);
        assert_eq!(run.error, None);
        assert_eq!(run.text, arguments.len());
    }
}
