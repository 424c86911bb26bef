//! Decoding of the Chat Completions event stream (one JSON chunk per `data:`, ended by
//! `[DONE]`) into provider-neutral chunks.

use bytes::Bytes;
use futures_util::Stream;
use serde::Deserialize;
use serde::de::{Deserializer, SeqAccess, Visitor};
use serde_json::Value;

use crate::conversation::Usage;
use crate::provider::chunks::{Decoder, Out, chunk_stream};
use crate::provider::http::{self as error, excerpt};
use crate::provider::sse::{SseDecoder, SseEvent};
use crate::provider::{Chunk, ChunkStream, ProviderError, ToolCallDelta};

/// Decodes a Chat Completions SSE byte stream into chunks (no HTTP involved).
pub fn decode_stream<S>(bytes: S) -> ChunkStream
where
    S: Stream<Item = Result<Bytes, ProviderError>> + Send + 'static,
{
    chunk_stream(bytes, ChatEvents)
}

/// Chat Completions events: one JSON chunk per `data:`, ended by `[DONE]`.
#[derive(Debug, Default)]
pub struct ChatEvents;

impl Decoder for ChatEvents {
    type Framing = SseDecoder;
    const TERMINATOR: &'static str = "[DONE]";

    fn frame(&mut self, event: SseEvent<'_>, out: &mut Out) -> bool {
        decode_data(event.data, out)
    }

    fn end(&mut self, pending: Option<SseEvent<'_>>, _out: &mut Out) -> bool {
        // A last `data: [DONE]` without its blank line still counts (some servers send that).
        pending.is_some_and(|e| e.data.trim() == "[DONE]")
    }
}

/// Decodes one `data:` payload into `out`; returns true when the stream is over.
fn decode_data(data: &str, out: &mut Out) -> bool {
    let data = data.trim();
    if data.is_empty() {
        return false;
    }
    if data == "[DONE]" {
        return true;
    }
    let chunk: WireChunk = match serde_json::from_str(data) {
        Ok(chunk) => chunk,
        Err(e) => {
            let message = format!(
                "expected a JSON chunk or [DONE], got '{}' ({e})",
                excerpt(data, 80)
            );
            out.push_back(Err(ProviderError::Malformed(message)));
            return true;
        }
    };
    if let Some(err) = chunk.error.as_ref().filter(|e| !e.is_null()) {
        out.push_back(Err(error::stream_error(err)));
        return true;
    }
    if let Some(choice) = chunk.choices.and_then(|c| c.0) {
        if let Some(delta) = choice.delta {
            let reasoning = non_empty(delta.reasoning_content).or(non_empty(delta.reasoning));
            if let Some(text) = reasoning {
                out.push_back(Ok(Chunk::Reasoning(text)));
            }
            // A refusal is shown as text so the user sees why nothing else came.
            for text in [delta.content, delta.refusal].into_iter().flatten() {
                if !text.is_empty() {
                    out.push_back(Ok(Chunk::Text(text)));
                }
            }
            for (position, call) in delta.tool_calls.into_iter().flatten().enumerate() {
                let index = call
                    .index
                    .and_then(|i| usize::try_from(i).ok())
                    .unwrap_or(position);
                let function = call.function.unwrap_or_default();
                let (id, name) = (non_empty(call.id), non_empty(function.name));
                let arguments = function.arguments.unwrap_or_default();
                if id.is_some() || name.is_some() || !arguments.is_empty() {
                    let delta = ToolCallDelta {
                        index,
                        id,
                        name,
                        arguments,
                    };
                    out.push_back(Ok(Chunk::ToolCall(delta)));
                }
            }
        }
        if let Some(reason) = non_empty(choice.finish_reason) {
            out.push_back(Ok(Chunk::Finish(reason)));
        }
    }
    if let Some(usage) = chunk.usage.or(chunk.x_groq.and_then(|x| x.usage)) {
        out.push_back(Ok(Chunk::Usage(Usage {
            input_tokens: usage.prompt_tokens.unwrap_or(0),
            output_tokens: usage.completion_tokens.unwrap_or(0),
            cached_tokens: usage
                .prompt_tokens_details
                .and_then(|d| d.cached_tokens)
                .unwrap_or(0),
        })));
    }
    false
}

fn non_empty(text: Option<String>) -> Option<String> {
    text.filter(|t| !t.is_empty())
}

// ---- Wire types: decoding. Unknown fields are ignored; every field may be missing or null.

#[derive(Deserialize)]
struct WireChunk {
    choices: Option<FirstChoice>,
    usage: Option<WireUsage>,
    /// Groq reports usage here.
    x_groq: Option<XGroq>,
    error: Option<Value>,
}

#[derive(Deserialize)]
struct XGroq {
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct WireUsage {
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
    /// `cached_tokens`: the part of the prompt read from the cache.
    prompt_tokens_details: Option<WirePromptDetails>,
}

#[derive(Deserialize)]
struct WirePromptDetails {
    cached_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct WireChoice {
    index: Option<u64>,
    delta: Option<WireDelta>,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct WireDelta {
    content: Option<String>,
    refusal: Option<String>,
    reasoning_content: Option<String>,
    /// OpenRouter and newer vLLM name the reasoning text `reasoning`.
    reasoning: Option<String>,
    tool_calls: Option<Vec<WireCallDelta>>,
}

#[derive(Deserialize)]
struct WireCallDelta {
    index: Option<u64>,
    id: Option<String>,
    function: Option<WireFunctionDelta>,
}

#[derive(Deserialize, Default)]
struct WireFunctionDelta {
    name: Option<String>,
    arguments: Option<String>,
}

/// The choice with index 0 (a missing index counts as 0). n>1 streams interleave choices; the
/// others are skipped without collecting them into a `Vec`.
struct FirstChoice(Option<WireChoice>);

impl<'de> Deserialize<'de> for FirstChoice {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Choices;
        impl<'de> Visitor<'de> for Choices {
            type Value = FirstChoice;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a list of choices")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<FirstChoice, A::Error> {
                let mut first = None;
                while let Some(choice) = seq.next_element::<WireChoice>()? {
                    if first.is_none() && choice.index.unwrap_or(0) == 0 {
                        first = Some(choice);
                    }
                }
                Ok(FirstChoice(first))
            }
        }
        deserializer.deserialize_seq(Choices)
    }
}
