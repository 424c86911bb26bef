//! Decoding of Ollama's newline-delimited JSON stream (`/api/chat`, also `/api/generate`)
//! into provider-neutral chunks.

use bytes::Bytes;
use futures_util::Stream;
use serde::Deserialize;
use serde_json::Value;

use super::TERMINATOR;
use crate::conversation::{Timings, Usage};
use crate::provider::chunks::{Decoder, Framing, Out, chunk_stream};
use crate::provider::http::{self as error, excerpt};
use crate::provider::{Chunk, ChunkStream, ProviderError, ToolCallDelta};

/// The longest NDJSON line read. Ollama sends each tool call whole in one line (a `write_file`
/// of a large file), so this matches the SSE bound, [`crate::provider::sse::MAX_LINE`], for
/// the same reasons; a longer line is not Ollama, or a hostile server.
pub const MAX_LINE: usize = 8 << 20;

/// Decodes an Ollama NDJSON byte stream (`/api/chat`, also `/api/generate`) into chunks.
pub fn decode_stream<S>(bytes: S) -> ChunkStream
where
    S: Stream<Item = Result<Bytes, ProviderError>> + Send + 'static,
{
    chunk_stream(bytes, ChatLines::default())
}

/// Newline-delimited frames: complete lines are read straight from the bytes pushed, only a
/// line split across reads is copied.
#[derive(Debug, Default)]
pub struct Lines {
    /// The start of a line whose newline has not arrived yet.
    partial: Vec<u8>,
}

impl Lines {
    /// A line passed [`MAX_LINE`]: the bytes held for it are given back.
    fn too_long(&mut self) -> ProviderError {
        self.partial = Vec::new();
        ProviderError::Limit(format!(
            "Ollama sent over {} MiB without a line break, more than any NDJSON line needs; \
             stopped reading (is base_url right?)",
            MAX_LINE >> 20
        ))
    }
}

impl Framing for Lines {
    type Frame<'a>
        = &'a [u8]
    where
        Self: 'a;

    fn push(
        &mut self,
        bytes: &[u8],
        mut frame: impl FnMut(&[u8]) -> bool,
    ) -> Result<bool, ProviderError> {
        let mut rest = bytes;
        if !self.partial.is_empty() {
            let newline = rest.iter().position(|&b| b == b'\n');
            if self.partial.len() + newline.unwrap_or(rest.len()) > MAX_LINE {
                return Err(self.too_long());
            }
            let Some(newline) = newline else {
                self.partial.extend_from_slice(rest);
                return Ok(false);
            };
            let mut line = std::mem::take(&mut self.partial);
            line.extend_from_slice(&rest[..newline]);
            let over = frame(&line);
            line.clear();
            self.partial = line;
            if over {
                return Ok(true);
            }
            rest = &rest[newline + 1..];
        }
        loop {
            let newline = rest.iter().position(|&b| b == b'\n');
            if newline.unwrap_or(rest.len()) > MAX_LINE {
                return Err(self.too_long());
            }
            let Some(newline) = newline else {
                self.partial.extend_from_slice(rest);
                return Ok(false);
            };
            if frame(&rest[..newline]) {
                return Ok(true);
            }
            rest = &rest[newline + 1..];
        }
    }

    fn finish(&mut self) -> Result<Option<&[u8]>, ProviderError> {
        Ok(Some(&self.partial))
    }
}

/// The lines of one `/api/chat` (or `/api/generate`) reply.
#[derive(Debug, Default)]
pub struct ChatLines {
    /// Tool calls seen so far: Ollama sends whole calls without an index, so they are numbered
    /// across the whole stream.
    calls: usize,
}

impl Decoder for ChatLines {
    type Framing = Lines;
    const TERMINATOR: &'static str = TERMINATOR;

    fn frame(&mut self, line: &[u8], out: &mut Out) -> bool {
        self.line(line, out)
    }

    /// A last line without its newline still counts when it is whole JSON; one that does not
    /// parse was cut off, like the rest of the reply.
    fn end(&mut self, last: Option<&[u8]>, out: &mut Out) -> bool {
        match last {
            Some(last) if serde_json::from_slice::<serde::de::IgnoredAny>(last).is_ok() => {
                self.line(last, out)
            }
            _ => false,
        }
    }
}

impl ChatLines {
    /// Decodes one line (without its newline); returns true when the stream is over.
    fn line(&mut self, line: &[u8], out: &mut Out) -> bool {
        let line = line.trim_ascii();
        if line.is_empty() {
            return false;
        }
        let mut wire: WireLine = match serde_json::from_slice(line) {
            Ok(wire) => wire,
            Err(e) => {
                let text = String::from_utf8_lossy(line);
                let text = excerpt(&text, 80);
                let message = format!("expected a JSON line from Ollama, got '{text}' ({e})");
                return fail(out, ProviderError::Malformed(message));
            }
        };
        match wire.error.take() {
            Some(Value::Null) | None => {}
            Some(Value::String(message))
                if message.to_ascii_lowercase().contains("context length") =>
            {
                return fail(out, ProviderError::ContextExceeded(message));
            }
            Some(Value::String(message)) => {
                let retryable = retryable(&message);
                return fail(out, ProviderError::Api { message, retryable });
            }
            Some(other) => return fail(out, error::stream_error(&other)),
        }
        let message = wire.message.take().unwrap_or_default();
        text(out, message.thinking, Chunk::Reasoning);
        text(out, message.content, Chunk::Text);
        // `/api/generate` lines carry reasoning at the top level and the text in `response`.
        text(out, wire.thinking.take(), Chunk::Reasoning);
        text(out, wire.response.take(), Chunk::Text);
        for call in message.tool_calls.into_iter().flatten() {
            self.tool_call(call, out);
        }
        if wire.done == Some(true) {
            done(wire, out);
            return true;
        }
        false
    }

    fn tool_call(&mut self, call: WireCall, out: &mut Out) {
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
        out.push_back(Ok(Chunk::ToolCall(ToolCallDelta {
            index,
            id,
            name,
            arguments,
        })));
    }
}

/// Ends the stream with `error`.
fn fail(out: &mut Out, error: ProviderError) -> bool {
    out.push_back(Err(error));
    true
}

fn text(out: &mut Out, text: Option<String>, chunk: fn(String) -> Chunk) {
    if let Some(text) = text.filter(|t| !t.is_empty()) {
        out.push_back(Ok(chunk(text)));
    }
}

/// The final line: why it stopped, token counts and server timings.
fn done(m: WireLine, out: &mut Out) {
    let reason = m.done_reason.filter(|r| !r.is_empty());
    out.push_back(Ok(Chunk::Finish(
        reason.unwrap_or_else(|| "stop".to_string()),
    )));
    if m.prompt_eval_count.is_some() || m.eval_count.is_some() {
        out.push_back(Ok(Chunk::Usage(Usage {
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
        out.push_back(Ok(Chunk::Timings(timings)));
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
