//! OpenAI-compatible Chat Completions provider (OpenAI, DeepSeek, Azure, xAI, Groq, OpenRouter,
//! vLLM, llama.cpp, LM Studio…): request encoding, stream decoding and the HTTP call.

use std::collections::VecDeque;
use std::time::Duration;

use bytes::Bytes;
use futures_util::Stream;
use futures_util::future::BoxFuture;
use serde::de::{Deserializer, SeqAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::sse::{EventDecoder, SseEvent, chunk_stream};
use super::{ChatRequest, Chunk, ChunkStream, Provider, ProviderError, Secret, ToolCallDelta};
use crate::conversation::{Message, Role, Usage};

use super::http::{self as error, Account, Auth, Endpoint, Wire, excerpt};
use super::wire::{Seq, ToolFunction, extra_fields};

/// Settings of one OpenAI-compatible provider.
#[derive(Debug, Clone)]
pub struct OpenAiConfig {
    /// Configured provider name, e.g. `openai`, `deepseek`.
    pub name: String,
    /// Base URL including `/v1`; requests go to `{base_url}/chat/completions`.
    pub base_url: String,
    /// Model id.
    pub model: String,
    /// Sent as `Authorization: Bearer …` when present.
    pub api_key: Option<Secret>,
    /// The env var the key comes from, named in error messages.
    pub api_key_env: Option<String>,
    /// Send assistant `reasoning_content` back (DeepSeek thinking mode with tools needs it).
    pub send_reasoning_content: bool,
    /// Extra request fields (`temperature`, `max_tokens`…); they replace ours of the same name
    /// (except `messages` and `stream`), and a `null` value removes one of ours.
    pub extra_body: Map<String, Value>,
    /// Time allowed to establish the connection.
    pub connect_timeout: Duration,
    /// No bytes for this long is an error.
    pub idle_timeout: Duration,
}

/// A provider speaking the Chat Completions streaming API.
#[derive(Debug)]
pub struct OpenAiProvider {
    config: OpenAiConfig,
    endpoint: Endpoint,
}

/// Chat Completions over HTTP: an SSE stream ended by `[DONE]`.
static WIRE: Wire = Wire {
    accept: "text/event-stream",
    headers: &[],
    auth: Auth::Bearer,
    terminator: "[DONE]",
    base_url_hint: "it usually ends in /v1",
    url_example: "",
    refused: None,
};

impl OpenAiProvider {
    /// Checks the base URL and builds the HTTP client (one per provider, connections reused).
    pub fn new(config: OpenAiConfig) -> Result<Self, ProviderError> {
        let account = Account {
            name: &config.name,
            model: &config.model,
            base_url: &config.base_url,
            api_key: config.api_key.as_ref(),
            api_key_env: config.api_key_env.as_deref(),
            connect_timeout: config.connect_timeout,
            idle_timeout: config.idle_timeout,
        };
        let endpoint = Endpoint::new(account, "/chat/completions", &WIRE)?;
        Ok(Self { config, endpoint })
    }

    async fn start(&self, request: ChatRequest<'_>) -> Result<ChunkStream, ProviderError> {
        let body = WireRequest {
            config: &self.config,
            request,
        };
        Ok(decode_stream(self.endpoint.post(&body).await?))
    }
}

impl Provider for OpenAiProvider {
    fn models(&self) -> BoxFuture<'_, Result<Vec<String>, super::models::ModelsError>> {
        use super::models::{Api, LIST_MAX_BYTES, LIST_WITHIN, list};
        Box::pin(list(
            &self.endpoint,
            Api::OpenAi,
            LIST_WITHIN,
            LIST_MAX_BYTES,
        ))
    }

    fn name(&self) -> &str {
        &self.config.name
    }

    fn model(&self) -> &str {
        &self.config.model
    }

    fn stream<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChunkStream, ProviderError>> {
        Box::pin(self.start(request))
    }
}

/// Decodes a Chat Completions SSE byte stream into chunks (no HTTP involved).
pub fn decode_stream<S>(bytes: S) -> ChunkStream
where
    S: Stream<Item = Result<Bytes, ProviderError>> + Send + 'static,
{
    chunk_stream(bytes, ChatEvents)
}

/// Chat Completions events: one JSON chunk per `data:`, ended by `[DONE]`.
struct ChatEvents;

impl EventDecoder for ChatEvents {
    const TERMINATOR: &'static str = "[DONE]";

    fn event(
        &mut self,
        event: SseEvent<'_>,
        out: &mut VecDeque<Result<Chunk, ProviderError>>,
    ) -> bool {
        decode_data(event.data, out)
    }

    fn end(
        &mut self,
        pending: Option<SseEvent<'_>>,
        _out: &mut VecDeque<Result<Chunk, ProviderError>>,
    ) -> bool {
        // A last `data: [DONE]` without its blank line still counts (some servers send that).
        pending.is_some_and(|e| e.data.trim() == "[DONE]")
    }
}

/// Decodes one `data:` payload into `out`; returns true when the stream is over.
fn decode_data(data: &str, out: &mut VecDeque<Result<Chunk, ProviderError>>) -> bool {
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

// ---- Wire types: encoding. Borrowing serializers, no intermediate `Value` tree.

struct WireRequest<'a> {
    config: &'a OpenAiConfig,
    request: ChatRequest<'a>,
}

impl Serialize for WireRequest<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (config, extra) = (self.config, &self.config.extra_body);
        // Reasoning goes back only within the current tool loop (after the last user message):
        // DeepSeek's thinking mode needs it there, and older turns' reasoning is dead weight
        // that some servers reject.
        let reasoning = config.send_reasoning_content;
        let loop_start = self
            .request
            .messages
            .iter()
            .rposition(|m| m.role == Role::User)
            .unwrap_or(0);
        let messages = Seq(|| {
            self.request
                .messages
                .iter()
                .enumerate()
                .map(move |(i, m)| WireMessage(m, reasoning && i > loop_start))
        });
        let tools = Seq(|| {
            self.request.tools.iter().map(|t| Typed {
                id: None,
                kind: "function",
                function: ToolFunction {
                    name: &t.name,
                    description: &t.description,
                    parameters: &t.parameters,
                },
            })
        });
        let mut map = serializer.serialize_map(None)?;
        if !extra.contains_key("model") {
            map.serialize_entry("model", &config.model)?;
        }
        map.serialize_entry("messages", &messages)?;
        map.serialize_entry("stream", &true)?;
        if !extra.contains_key("stream_options") {
            map.serialize_entry(
                "stream_options",
                &StreamOptions {
                    include_usage: true,
                },
            )?;
        }
        if !self.request.tools.is_empty() && !extra.contains_key("tools") {
            map.serialize_entry("tools", &tools)?;
        }
        // A call's own bound (the summary's), unless the config names the field itself.
        if let Some(n) = self.request.max_tokens
            && !extra.contains_key("max_tokens")
            && !extra.contains_key("max_completion_tokens")
        {
            map.serialize_entry("max_tokens", &n)?;
        }
        extra_fields(&mut map, extra)?;
        map.end()
    }
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

/// One message; the flag says whether assistant reasoning is sent back.
struct WireMessage<'a>(&'a Message, bool);

impl Serialize for WireMessage<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let WireMessage(m, send_reasoning) = *self;
        let text = m.content.as_deref().unwrap_or("");
        let mut map = serializer.serialize_map(None)?;
        match m.role {
            Role::System => map.serialize_entry("role", "system")?,
            Role::User => map.serialize_entry("role", "user")?,
            Role::Assistant => map.serialize_entry("role", "assistant")?,
            Role::Tool => {
                map.serialize_entry("role", "tool")?;
                map.serialize_entry("tool_call_id", m.tool_call_id.as_deref().unwrap_or(""))?;
            }
        }
        if m.role != Role::Assistant {
            map.serialize_entry("content", text)?;
            return map.end();
        }
        map.serialize_entry("content", &m.content)?;
        if !m.tool_calls.is_empty() {
            let calls = Seq(|| {
                m.tool_calls.iter().map(|call| Typed {
                    id: Some(&call.id),
                    kind: "function",
                    function: CallFunction {
                        name: &call.name,
                        arguments: call.arguments_text(),
                    },
                })
            });
            map.serialize_entry("tool_calls", &calls)?;
        }
        if let Some(reasoning) = m.reasoning_content.as_ref().filter(|_| send_reasoning) {
            map.serialize_entry("reasoning_content", reasoning)?;
        }
        map.end()
    }
}

/// `{"id"?, "type": "function", "function": …}`: a tool call (with id) or a tool (without).
#[derive(Serialize)]
struct Typed<'a, T> {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
    #[serde(rename = "type")]
    kind: &'static str,
    function: T,
}

#[derive(Serialize)]
struct CallFunction<'a> {
    name: &'a str,
    arguments: String,
}
