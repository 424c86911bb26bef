//! Native Ollama provider: `POST {base_url}/api/chat` with a newline-delimited JSON stream.
//! Request encoding, stream decoding and the HTTP call.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_util::Stream;
use futures_util::future::BoxFuture;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::http::{self as error, Advice, ErrorContext, excerpt};
use super::{ChatRequest, Chunk, ChunkStream, Provider, ProviderError, Secret, ToolCallDelta};
use crate::conversation::{Message, Role, Timings, ToolCall, Usage};

const TERMINATOR: &str = "done: true";
const TRUNCATED: ProviderError = ProviderError::Truncated {
    terminator: TERMINATOR,
};
const REFUSED: &str = "is Ollama running? start it with `ollama serve`, or check base_url \
                       (the server root, like OLLAMA_HOST)";

/// The longest NDJSON line read. Ollama sends each tool call whole in one line (a `write_file`
/// of a large file), so this matches the SSE bound, [`super::sse::MAX_LINE`], for the same
/// reasons; a longer line is not Ollama, or a hostile server.
pub const MAX_LINE: usize = 8 << 20;

/// Settings of one Ollama provider.
#[derive(Debug, Clone)]
pub struct OllamaConfig {
    /// Configured provider name, e.g. `ollama`.
    pub name: String,
    /// The server root (like `OLLAMA_HOST`, without `/api`); requests go to `{base_url}/api/chat`.
    pub base_url: String,
    /// Model name, e.g. `llama3.2`.
    pub model: String,
    /// Sent as `Authorization: Bearer …` when present (a proxy, or ollama.com).
    pub api_key: Option<Secret>,
    /// The env var the key comes from, named in error messages.
    pub api_key_env: Option<String>,
    /// Sent as `think` when set (reasoning models).
    pub think: Option<bool>,
    /// Extra request fields (`options`, `keep_alive`…); they replace ours of the same name
    /// (except `messages` and `stream`), and a `null` value removes one of ours.
    pub extra_body: Map<String, Value>,
    /// Time allowed to establish the connection.
    pub connect_timeout: Duration,
    /// No bytes for this long is an error.
    pub idle_timeout: Duration,
}

/// A provider speaking Ollama's native chat API.
#[derive(Debug)]
pub struct OllamaProvider {
    config: OllamaConfig,
    url: String,
    /// What to do about a model the server does not have (names the model).
    pull_hint: String,
    client: reqwest::Client,
}

impl OllamaProvider {
    /// Checks the base URL and builds the HTTP client (one per provider, connections reused).
    pub fn new(config: OllamaConfig) -> Result<Self, ProviderError> {
        let url = format!("{}/api/chat", config.base_url.trim_end_matches('/'));
        let parsed = reqwest::Url::parse(&url).ok();
        if !parsed.is_some_and(|u| matches!(u.scheme(), "http" | "https")) {
            let (base, name) = (&config.base_url, &config.name);
            let problem = format!(
                "base_url `{base}` of provider `{name}` is not an http(s) URL \
                 (like http://127.0.0.1:11434)"
            );
            return Err(ProviderError::Config(problem));
        }
        let client = super::http::client(&config.base_url, config.connect_timeout)?;
        let pull_hint = format!(
            "Download it with `ollama pull {}` (`ollama list` shows the models you have)",
            config.model
        );
        Ok(Self {
            config,
            url,
            pull_hint,
            client,
        })
    }

    async fn start(&self, request: ChatRequest<'_>) -> Result<ChunkStream, ProviderError> {
        let body = serde_json::to_vec(&WireRequest {
            config: &self.config,
            request,
        })
        .map_err(|e| ProviderError::Config(format!("cannot encode the request: {e}")))?;
        let mut builder = self
            .client
            .post(self.url.as_str())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/x-ndjson")
            .body(body);
        if let Some(key) = &self.config.api_key {
            builder = builder.bearer_auth(key.expose().trim());
        }
        let advice = Advice {
            refused: Some(REFUSED),
            missing_model: Some(&self.pull_hint),
        };
        let timeouts = error::Timeouts {
            connect: self.config.connect_timeout,
            idle: self.config.idle_timeout,
        };
        let context = self.error_context();
        let bytes = error::open_stream(builder, &context, timeouts, advice, TERMINATOR).await?;
        Ok(decode_stream(bytes))
    }

    fn error_context(&self) -> ErrorContext<'_> {
        ErrorContext {
            provider: &self.config.name,
            model: &self.config.model,
            url: &self.url,
            key_env: self.config.api_key_env.as_deref(),
            key: self.config.api_key.as_ref(),
            base_url_hint: "the Ollama server root, like OLLAMA_HOST, without /api",
        }
    }
}

impl Provider for OllamaProvider {
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
                let message = format!("expected a JSON line from Ollama, got `{text}` ({e})");
                return self.fail(ProviderError::Malformed(message));
            }
        };
        match wire.error.take() {
            Some(Value::Null) | None => {}
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

// ---- Wire types: encoding. Borrowing serializers, no intermediate `Value` tree.

struct WireRequest<'a> {
    config: &'a OllamaConfig,
    request: ChatRequest<'a>,
}

impl Serialize for WireRequest<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (config, extra) = (self.config, &self.config.extra_body);
        let messages = Seq(|| self.request.messages.iter().map(OutMessage));
        let tools = Seq(|| {
            self.request.tools.iter().map(|t| OutTool {
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
        if !self.request.tools.is_empty() && !extra.contains_key("tools") {
            map.serialize_entry("tools", &tools)?;
        }
        if let Some(think) = config.think.filter(|_| !extra.contains_key("think")) {
            map.serialize_entry("think", &think)?;
        }
        for (key, value) in extra {
            if !value.is_null() && key != "messages" && key != "stream" {
                map.serialize_entry(key, value)?;
            }
        }
        map.end()
    }
}

/// A sequence serialized from an iterator made on demand (`serialize` only gets `&self`).
struct Seq<F>(F);

impl<F, I> serde::Serialize for Seq<F>
where
    F: Fn() -> I,
    I: IntoIterator,
    I::Item: Serialize,
{
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq((self.0)())
    }
}

/// `{"type": "function", "function": …}`: one offered tool.
#[derive(Serialize)]
struct OutTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: ToolFunction<'a>,
}

#[derive(Serialize)]
struct ToolFunction<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
}

/// One message: `role`, `content`, plus `thinking`/`tool_calls` (assistant) or `tool_name`.
struct OutMessage<'a>(&'a Message);

impl Serialize for OutMessage<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let m = self.0;
        let role = match m.role {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        };
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("role", role)?;
        // Ollama's `content` is a plain string; a message with only tool calls sends "".
        map.serialize_entry("content", m.content.as_deref().unwrap_or(""))?;
        match m.role {
            Role::Assistant => {
                if let Some(thinking) = m.reasoning_content.as_deref().filter(|t| !t.is_empty()) {
                    map.serialize_entry("thinking", thinking)?;
                }
                if !m.tool_calls.is_empty() {
                    map.serialize_entry(
                        "tool_calls",
                        &Seq(|| m.tool_calls.iter().map(OutCall::new)),
                    )?;
                }
            }
            Role::Tool => {
                if let Some(name) = &m.name {
                    map.serialize_entry("tool_name", name)?;
                }
                // Ollama matches results by `tool_name`; newer servers also read the id.
                if let Some(id) = &m.tool_call_id {
                    map.serialize_entry("tool_call_id", id)?;
                }
            }
            Role::System | Role::User => {}
        }
        map.end()
    }
}

/// `{"id", "function": {"name", "arguments": {…}}}`: arguments as an object, not as text.
#[derive(Serialize)]
struct OutCall<'a> {
    id: &'a str,
    function: CallFunction<'a>,
}

#[derive(Serialize)]
struct CallFunction<'a> {
    name: &'a str,
    /// Arguments that are not an object (the model's invalid JSON) go back as `{}`.
    arguments: Cow<'a, Value>,
}

impl<'a> OutCall<'a> {
    fn new(call: &'a ToolCall) -> Self {
        let arguments = match &call.arguments {
            value @ Value::Object(_) => Cow::Borrowed(value),
            _ => Cow::Owned(Value::Object(Map::new())),
        };
        Self {
            id: &call.id,
            function: CallFunction {
                name: &call.name,
                arguments,
            },
        }
    }
}
