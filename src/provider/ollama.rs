//! Native Ollama provider: `POST {base_url}/api/chat` with a newline-delimited JSON stream.
//! Request encoding and the HTTP call; the stream is decoded in [`decode`].

use std::borrow::Cow;
use std::time::Duration;

use futures_util::future::BoxFuture;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::{Map, Value};

use super::http::{self as error, Advice, ErrorContext};
use super::{ChatRequest, ChunkStream, Provider, ProviderError, Secret};
use crate::conversation::{Message, Role, ToolCall};

mod decode;

pub use decode::{MAX_LINE, decode_stream};

/// The field that ends a complete stream.
const TERMINATOR: &str = "done: true";
const REFUSED: &str = "is Ollama running? start it with `ollama serve`, or check base_url \
                       (the server root, like OLLAMA_HOST)";

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
