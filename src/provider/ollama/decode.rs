//! Decoding of Ollama's newline-delimited JSON stream (`/api/chat`, also `/api/generate`)
//! into provider-neutral chunks.

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_util::Stream;
use serde::Deserialize;
use serde_json::Value;

use super::TERMINATOR;
use crate::conversation::{Timings, Usage};
use crate::provider::http::{self as error, excerpt};
use crate::provider::{Chunk, ChunkStream, ProviderError, ToolCallDelta};

const TRUNCATED: ProviderError = ProviderError::Truncated {
    terminator: TERMINATOR,
};

/// The longest NDJSON line read. Ollama sends each tool call whole in one line (a `write_file`
/// of a large file), so this matches the SSE bound, [`crate::provider::sse::MAX_LINE`], for
/// the same reasons; a longer line is not Ollama, or a hostile server.
pub const MAX_LINE: usize = 8 << 20;

/// Decodes an Ollama NDJSON byte stream (`/api/chat`, also `/api/generate`) into chunks.
pub fn decode_stream<S>(bytes: S) -> ChunkStream
where
    S: Stream<Item = Result<Bytes, ProviderError>> + Send + 'static,
{
    Box::pin(LineDecoder {
        bytes: Box::pin(bytes),
        partial: Vec::new(),
        calls: 0,
        out: VecDeque::new(),
        ended: false,
    })
}

struct LineDecoder<S> {
    bytes: Pin<Box<S>>,
    /// The start of a line whose newline has not arrived yet.
    partial: Vec<u8>,
    /// Tool calls seen so far: Ollama sends whole calls without an index, so they are numbered
    /// across the whole stream.
    calls: usize,
    /// Chunks decoded but not yet handed out (one line can carry several).
    out: VecDeque<Result<Chunk, ProviderError>>,
    /// `done: true`, an error or the end of the bytes was reached.
    ended: bool,
}

impl<S> LineDecoder<S> {
    /// Decodes every complete line; complete lines are read straight from `bytes`, only a
    /// line split across reads is copied.
    fn push(&mut self, bytes: &[u8]) {
        let mut rest = bytes;
        if !self.partial.is_empty() {
            let newline = rest.iter().position(|&b| b == b'\n');
            if self.partial.len() + newline.unwrap_or(rest.len()) > MAX_LINE {
                return self.too_long();
            }
            let Some(newline) = newline else {
                self.partial.extend_from_slice(rest);
                return;
            };
            let mut line = std::mem::take(&mut self.partial);
            line.extend_from_slice(&rest[..newline]);
            self.line(&line);
            line.clear();
            self.partial = line;
            rest = &rest[newline + 1..];
        }
        while !self.ended {
            let newline = rest.iter().position(|&b| b == b'\n');
            if newline.unwrap_or(rest.len()) > MAX_LINE {
                return self.too_long();
            }
            let Some(newline) = newline else {
                self.partial.extend_from_slice(rest);
                break;
            };
            self.line(&rest[..newline]);
            rest = &rest[newline + 1..];
        }
    }

    /// The bytes ended: a last line without its newline still counts when it is whole JSON;
    /// one that does not parse was cut off, like the rest of the reply.
    fn end(&mut self) {
        let last = std::mem::take(&mut self.partial);
        if !self.ended && serde_json::from_slice::<serde::de::IgnoredAny>(&last).is_ok() {
            self.line(&last);
        }
        if !self.ended {
            self.fail(TRUNCATED);
        }
    }

    /// Decodes one line (without its newline).
    fn line(&mut self, line: &[u8]) {
        let line = line.trim_ascii();
        if line.is_empty() {
            return;
        }
        let mut wire: WireLine = match serde_json::from_slice(line) {
            Ok(wire) => wire,
            Err(e) => {
                let text = String::from_utf8_lossy(line);
                let text = excerpt(&text, 80);
                let message = format!("expected a JSON line from Ollama, got '{text}' ({e})");
                return self.fail(ProviderError::Malformed(message));
            }
        };
        match wire.error.take() {
            Some(Value::Null) | None => {}
            Some(Value::String(message))
                if message.to_ascii_lowercase().contains("context length") =>
            {
                return self.fail(ProviderError::ContextExceeded(message));
            }
            Some(Value::String(message)) => {
                let retryable = retryable(&message);
                return self.fail(ProviderError::Api { message, retryable });
            }
            Some(other) => return self.fail(error::stream_error(&other)),
        }
        let message = wire.message.take().unwrap_or_default();
        self.text(message.thinking, Chunk::Reasoning);
        self.text(message.content, Chunk::Text);
        // `/api/generate` lines carry reasoning at the top level and the text in `response`.
        self.text(wire.thinking.take(), Chunk::Reasoning);
        self.text(wire.response.take(), Chunk::Text);
        for call in message.tool_calls.into_iter().flatten() {
            self.tool_call(call);
        }
        if wire.done == Some(true) {
            self.done(wire);
        }
    }

    fn fail(&mut self, error: ProviderError) {
        self.out.push_back(Err(error));
        self.ended = true;
    }

    /// A line passed [`MAX_LINE`]: the stream ends, and the bytes held for it are given back.
    fn too_long(&mut self) {
        self.partial = Vec::new();
        self.fail(ProviderError::Limit(format!(
            "Ollama sent over {} MiB without a line break, more than any NDJSON line needs; \
             stopped reading (is base_url right?)",
            MAX_LINE >> 20
        )));
    }

    fn text(&mut self, text: Option<String>, chunk: fn(String) -> Chunk) {
        if let Some(text) = text.filter(|t| !t.is_empty()) {
            self.out.push_back(Ok(chunk(text)));
        }
    }

    fn tool_call(&mut self, call: WireCall) {
        let function = call.function.unwrap_or_default();
        let id = call.id.filter(|id| !id.is_empty());
        let name = function.name.filter(|name| !name.is_empty());
        let arguments = match function.arguments {
            None | Some(Value::Null) => String::new(),
            // Some proxies send the arguments as JSON text, OpenAI style.
            Some(Value::String(text)) => text,
            Some(value) => value.to_string(),
        };
        if id.is_none() && name.is_none() && arguments.is_empty() {
            return;
        }
        let index = self.calls;
        self.calls += 1;
        self.out.push_back(Ok(Chunk::ToolCall(ToolCallDelta {
            index,
            id,
            name,
            arguments,
        })));
    }

    /// The final line: why it stopped, token counts and server timings; the stream is over.
    fn done(&mut self, m: WireLine) {
        let reason = m.done_reason.filter(|r| !r.is_empty());
        self.out.push_back(Ok(Chunk::Finish(
            reason.unwrap_or_else(|| "stop".to_string()),
        )));
        if m.prompt_eval_count.is_some() || m.eval_count.is_some() {
            self.out.push_back(Ok(Chunk::Usage(Usage {
                input_tokens: m.prompt_eval_count.unwrap_or(0),
                output_tokens: m.eval_count.unwrap_or(0),
                cached_tokens: 0,
            })));
        }
        let timings = Timings {
            total_ms: millis(m.total_duration),
            load_ms: millis(m.load_duration),
            prompt_ms: millis(m.prompt_eval_duration),
            generation_ms: millis(m.eval_duration),
        };
        if timings != Timings::default() {
            self.out.push_back(Ok(Chunk::Timings(timings)));
        }
        self.ended = true;
    }
}

impl<S> Stream for LineDecoder<S>
where
    S: Stream<Item = Result<Bytes, ProviderError>>,
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
                Poll::Ready(Some(Ok(bytes))) => this.push(&bytes),
                Poll::Ready(Some(Err(e))) => this.fail(e),
                Poll::Ready(None) => this.end(),
            }
        }
    }
}

/// Whether an in-band error may go away on a retry. Ollama sends bare strings, so the words
/// decide: a missing model, an invalid request or an unsupported feature will fail again;
/// anything else (the runner crashed, ran out of memory mid-way) may not.
fn retryable(message: &str) -> bool {
    const FINAL: [&str; 5] = [
        "not found",
        "invalid",
        "does not support",
        "unsupported",
        "unauthorized",
    ];
    let message = message.to_ascii_lowercase();
    !FINAL.iter().any(|word| message.contains(word))
}

/// Nanoseconds (Ollama's durations) to whole milliseconds, rounded.
fn millis(nanos: Option<u64>) -> Option<u64> {
    nanos.map(|ns| ns.saturating_add(500_000) / 1_000_000)
}

// ---- Wire types: decoding. Unknown fields are ignored; every field may be missing or null.

#[derive(Deserialize)]
struct WireLine {
    message: Option<WireMessage>,
    /// `/api/generate` text.
    response: Option<String>,
    /// `/api/generate` reasoning.
    thinking: Option<String>,
    done: Option<bool>,
    done_reason: Option<String>,
    error: Option<Value>,
    total_duration: Option<u64>,
    load_duration: Option<u64>,
    prompt_eval_count: Option<u64>,
    prompt_eval_duration: Option<u64>,
    eval_count: Option<u64>,
    eval_duration: Option<u64>,
}

#[derive(Deserialize, Default)]
struct WireMessage {
    content: Option<String>,
    thinking: Option<String>,
    tool_calls: Option<Vec<WireCall>>,
}

#[derive(Deserialize)]
struct WireCall {
    id: Option<String>,
    function: Option<WireFunction>,
}

#[derive(Deserialize, Default)]
struct WireFunction {
    name: Option<String>,
    arguments: Option<Value>,
}
