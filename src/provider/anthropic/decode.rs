//! Decoding of the Messages event stream into provider-neutral chunks.
//!
//! The event type is read from the JSON `type` field (some streams carry no `event:` lines;
//! the `event:` name is only a fallback). Block indexes of the message are used as tool-call
//! indexes, so the assembler merges `input_json_delta`s by content block (DESIGN §4.2).
//!
//! Two decisions worth knowing:
//! - **No blank line after the last event.** Some recorded streams end right after the final
//!   `data:` line. An event left undispatched at the end of the bytes is still decoded when its
//!   data is complete JSON (so a final `message_stop` counts); data cut mid-JSON is dropped and
//!   the stream is [`Truncated`](ProviderError::Truncated).
//! - **A second `message_start`.** Before any content it is a harmless duplicate (seen from
//!   proxies): it is ignored apart from its usage. After content it means the stream was
//!   restarted mid-reply (a spliced stream): the first message never reached `message_stop`, and
//!   merging the second into it would duplicate reasoning and corrupt a half-streamed tool call
//!   (block indexes restart at 0), so the stream ends there as `Truncated`, which is retryable.

use std::collections::BTreeMap;

use bytes::Bytes;
use futures_util::Stream;
use serde::Deserialize;
use serde_json::Value;

use crate::conversation::Usage;
use crate::provider::chunks::{Decoder, Out, chunk_stream};
use crate::provider::http::{self as error, excerpt};
use crate::provider::sse::{SseDecoder, SseEvent};
use crate::provider::{Chunk, ChunkStream, ProviderError, ToolCallDelta};

/// The event that ends a complete stream.
pub(super) const TERMINATOR: &str = "message_stop";

const TRUNCATED: ProviderError = ProviderError::Truncated {
    terminator: TERMINATOR,
};

/// Decodes a Messages SSE byte stream into chunks (no HTTP involved).
pub fn decode_stream<S>(bytes: S) -> ChunkStream
where
    S: Stream<Item = Result<Bytes, ProviderError>> + Send + 'static,
{
    chunk_stream(bytes, MessageState::default())
}

impl Decoder for MessageState {
    type Framing = SseDecoder;
    const TERMINATOR: &'static str = TERMINATOR;

    fn frame(&mut self, event: SseEvent<'_>, out: &mut Out) -> bool {
        match parse(event.data) {
            Ok(Some(wire)) => self.apply(event.event, wire, out),
            Ok(None) => self.apply_bare(event.event),
            Err(problem) => {
                out.push_back(Err(ProviderError::Malformed(problem)));
                true
            }
        }
    }

    fn end(&mut self, pending: Option<SseEvent<'_>>, out: &mut Out) -> bool {
        // The last event may lack its blank line (see the module notes): decode it if whole.
        match pending {
            Some(event) => match parse(event.data) {
                Ok(Some(wire)) => self.apply(event.event, wire, out),
                Ok(None) => self.apply_bare(event.event),
                Err(_) => false,
            },
            None => false,
        }
    }
}

/// An event's data as JSON; `None` when there is no data (a bare `event:` line) or when an
/// event type this client does not know has a shape it does not expect.
fn parse(data: &str) -> Result<Option<WireEvent>, String> {
    if data.trim().is_empty() {
        return Ok(None);
    }
    serde_json::from_str(data).map(Some).or_else(|e| {
        #[derive(Deserialize)]
        struct Kind {
            #[serde(rename = "type")]
            kind: Option<String>,
        }
        const KNOWN: [&str; 8] = [
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            TERMINATOR,
            "ping",
            "error",
        ];
        match serde_json::from_str::<Kind>(data) {
            Ok(Kind { kind: Some(kind) }) if !KNOWN.contains(&kind.as_str()) => Ok(None),
            _ => Err(format!(
                "expected a JSON event, got '{}' ({e})",
                excerpt(data.trim(), 80)
            )),
        }
    })
}

/// What is known about one content block of the message.
#[derive(Debug)]
enum Block {
    /// A `tool_use` block; `input` is the start event's non-empty `input`, used only if no
    /// `input_json_delta` carries the arguments.
    Tool { input: Option<String>, deltas: bool },
    /// Text, thinking, or a kind this client does not act on (server tools, compaction…).
    Other,
}

/// Bookkeeping of the message being streamed.
#[derive(Debug, Default)]
pub struct MessageState {
    blocks: BTreeMap<usize, Block>,
    /// Content (a block or the message delta) has been streamed.
    content: bool,
}

impl MessageState {
    /// Applies one event; returns true when the stream is over.
    fn apply(&mut self, name: Option<&str>, event: WireEvent, out: &mut Out) -> bool {
        let kind = event.kind.as_deref().or(name).unwrap_or("");
        self.content |= kind.starts_with("content_block") || kind == "message_delta";
        match kind {
            "message_start" => {
                if self.content {
                    tracing::warn!("a second message_start after content; the stream restarted");
                    out.push_back(Err(TRUNCATED));
                    return true;
                }
                let usage = event.message.and_then(|m| m.usage);
                if let Some(usage) = usage {
                    out.push_back(Ok(Chunk::Usage(usage.into_usage())));
                }
            }
            "content_block_start" => {
                let index = block_index(event.index);
                if let Some(block) = event.content_block {
                    self.start_block(index, block, out);
                }
            }
            "content_block_delta" => {
                let index = block_index(event.index);
                if let Some(delta) = event.delta {
                    self.delta(index, delta, out);
                }
            }
            "content_block_stop" => self.stop_block(block_index(event.index), out),
            "message_delta" => {
                let reason = event.delta.and_then(|d| non_empty(d.stop_reason));
                if let Some(reason) = reason {
                    out.push_back(Ok(Chunk::Finish(reason)));
                }
                if let Some(usage) = event.usage {
                    out.push_back(Ok(Chunk::Usage(usage.into_usage())));
                }
            }
            TERMINATOR => {
                let open: Vec<usize> = self.blocks.keys().copied().collect();
                for index in open {
                    self.stop_block(index, out);
                }
                return true;
            }
            "error" => {
                let err = match event.error {
                    Some(err) if !err.is_null() => error::stream_error(&err),
                    _ => ProviderError::Api {
                        message: "an error event without details".into(),
                        retryable: true,
                    },
                };
                out.push_back(Err(err));
                return true;
            }
            // `ping` and event types newer than this client.
            _ => {}
        }
        false
    }

    /// An event without data: only a bare terminator means anything.
    fn apply_bare(&mut self, name: Option<&str>) -> bool {
        name == Some(TERMINATOR)
    }

    fn start_block(&mut self, index: usize, block: WireBlock, out: &mut Out) {
        let state = match block.kind.as_deref() {
            Some("text") => {
                if let Some(text) = non_empty(block.text) {
                    out.push_back(Ok(Chunk::Text(text)));
                }
                Block::Other
            }
            Some("thinking") => {
                if let Some(text) = non_empty(block.thinking) {
                    out.push_back(Ok(Chunk::Reasoning(text)));
                }
                if let Some(signature) = non_empty(block.signature) {
                    out.push_back(Ok(Chunk::ReasoningSignature(signature)));
                }
                Block::Other
            }
            Some("tool_use") => {
                let delta = ToolCallDelta {
                    index,
                    id: non_empty(block.id),
                    name: non_empty(block.name),
                    arguments: String::new(),
                };
                out.push_back(Ok(Chunk::ToolCall(delta)));
                let input = block
                    .input
                    .filter(|v| !v.is_null() && v.as_object().is_none_or(|o| !o.is_empty()));
                Block::Tool {
                    input: input.map(|v| v.to_string()),
                    deltas: false,
                }
            }
            // `redacted_thinking` cannot be shown, and server-side tools, compaction and
            // fallback notices are not ours to act on.
            _ => Block::Other,
        };
        self.blocks.insert(index, state);
    }

    fn delta(&mut self, index: usize, delta: WireDelta, out: &mut Out) {
        match delta.kind.as_deref() {
            Some("text_delta") => {
                if let Some(text) = non_empty(delta.text) {
                    out.push_back(Ok(Chunk::Text(text)));
                }
            }
            Some("thinking_delta") => {
                if let Some(text) = non_empty(delta.thinking) {
                    out.push_back(Ok(Chunk::Reasoning(text)));
                }
            }
            Some("signature_delta") => {
                if let Some(signature) = non_empty(delta.signature) {
                    out.push_back(Ok(Chunk::ReasoningSignature(signature)));
                }
            }
            Some("input_json_delta") => {
                // Arguments of blocks we know are not `tool_use` (server tools) are not ours;
                // a block whose start never came is still treated as a call.
                let block = self.blocks.get_mut(&index);
                if matches!(block, Some(Block::Other)) {
                    return;
                }
                let Some(arguments) = non_empty(delta.partial_json) else {
                    return;
                };
                if let Some(Block::Tool { deltas, .. }) = block {
                    *deltas = true;
                }
                let delta = ToolCallDelta {
                    index,
                    arguments,
                    ..ToolCallDelta::default()
                };
                out.push_back(Ok(Chunk::ToolCall(delta)));
            }
            // citations, compaction deltas and newer kinds.
            _ => {}
        }
    }

    /// Ends a block: a call whose input came whole in its start event gets it now.
    fn stop_block(&mut self, index: usize, out: &mut Out) {
        if let Some(Block::Tool {
            input: Some(input),
            deltas: false,
        }) = self.blocks.remove(&index)
        {
            let delta = ToolCallDelta {
                index,
                arguments: input,
                ..ToolCallDelta::default()
            };
            out.push_back(Ok(Chunk::ToolCall(delta)));
        }
    }
}

/// A block index as a call index; a missing one counts as 0, an absurd one saturates.
fn block_index(index: Option<u64>) -> usize {
    index.map_or(0, |i| usize::try_from(i).unwrap_or(usize::MAX))
}

fn non_empty(text: Option<String>) -> Option<String> {
    text.filter(|t| !t.is_empty())
}

// ---- Wire types. Unknown fields are ignored; every field may be missing or null.

/// Any event: the fields of all event types, each optional.
#[derive(Deserialize)]
struct WireEvent {
    #[serde(rename = "type")]
    kind: Option<String>,
    /// `message_start`.
    message: Option<WireMessage>,
    /// `content_block_*`.
    index: Option<u64>,
    /// `content_block_start`.
    content_block: Option<WireBlock>,
    /// `content_block_delta` (a block delta) or `message_delta` (the stop reason).
    delta: Option<WireDelta>,
    /// `message_delta`.
    usage: Option<WireUsage>,
    /// `error`.
    error: Option<Value>,
}

#[derive(Deserialize)]
struct WireMessage {
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct WireUsage {
    input_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
    output_tokens: Option<u64>,
}

impl WireUsage {
    /// Cached prompt tokens are prompt tokens too; a missing count is 0 (the assembler keeps
    /// the earlier value then).
    fn into_usage(self) -> Usage {
        let input = self.input_tokens.map(|input| {
            [
                self.cache_creation_input_tokens,
                self.cache_read_input_tokens,
            ]
            .into_iter()
            .flatten()
            .fold(input, u64::saturating_add)
        });
        Usage {
            input_tokens: input.unwrap_or(0),
            output_tokens: self.output_tokens.unwrap_or(0),
            cached_tokens: self.cache_read_input_tokens.unwrap_or(0),
        }
    }
}

#[derive(Deserialize)]
struct WireBlock {
    #[serde(rename = "type")]
    kind: Option<String>,
    text: Option<String>,
    thinking: Option<String>,
    signature: Option<String>,
    id: Option<String>,
    name: Option<String>,
    input: Option<Value>,
}

#[derive(Deserialize)]
struct WireDelta {
    #[serde(rename = "type")]
    kind: Option<String>,
    text: Option<String>,
    partial_json: Option<String>,
    thinking: Option<String>,
    signature: Option<String>,
    stop_reason: Option<String>,
}
