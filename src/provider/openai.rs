//! OpenAI-compatible Chat Completions provider (OpenAI, DeepSeek, Azure, xAI, Groq, OpenRouter,
//! vLLM, llama.cpp, LM Studio…): configuration and the request body. The event stream is
//! decoded in [`decode`]; the HTTP call is the shared [`HttpProvider`]'s.

use std::time::Duration;

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::{Map, Value};

use super::http::{Account, Auth, Dialect, HttpProvider, Wire, account_of};
use super::models::Api;
use super::wire::{AsStr, Seq, ToolFunction, extra_fields};
use super::{ChatRequest, Secret};
use crate::conversation::{Message, Role};

mod decode;

pub use decode::decode_stream;

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
pub type OpenAiProvider = HttpProvider<OpenAiConfig>;

impl Dialect for OpenAiConfig {
    /// Chat Completions over HTTP: an SSE stream ended by `[DONE]`.
    const WIRE: &'static Wire = &Wire {
        accept: "text/event-stream",
        headers: &[],
        auth: Auth::Bearer,
        base_url_hint: "it usually ends in /v1",
        url_example: "",
        refused: None,
    };
    type Decoder = decode::ChatEvents;
    const MODELS: Api = Api::OpenAi;

    fn account(&self) -> Account<'_> {
        account_of!(self)
    }

    fn path(&self) -> &'static str {
        "/chat/completions"
    }

    fn body<'a>(&'a self, request: ChatRequest<'a>) -> impl Serialize + 'a {
        WireRequest {
            config: self,
            request,
        }
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
        if m.role == Role::User && !m.images.is_empty() {
            // Chat Completions content parts: the text, then each image as a data URL.
            let parts = Seq(|| {
                let text = (!text.is_empty()).then_some(Part::Text(text));
                text.into_iter().chain(m.images.iter().map(Part::Image))
            });
            map.serialize_entry("content", &parts)?;
            return map.end();
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

/// One content part of a user message with images.
enum Part<'a> {
    Text(&'a str),
    Image(&'a crate::images::Image),
}

impl Serialize for Part<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2))?;
        match self {
            Part::Text(text) => {
                map.serialize_entry("type", "text")?;
                map.serialize_entry("text", text)?;
            }
            Part::Image(image) => match &image.data {
                Some(data) => {
                    map.serialize_entry("type", "image_url")?;
                    map.serialize_entry("image_url", &ImageUrl(image.media_type, data))?;
                }
                // Its bytes are gone (a resume without them): the model is told so.
                None => {
                    map.serialize_entry("type", "text")?;
                    map.serialize_entry("text", &image.missing_note())?;
                }
            },
        }
        map.end()
    }
}

/// `{"url": "data:image/png;base64,…"}`, the base64 written straight into the body.
struct ImageUrl<'a>(crate::images::MediaType, &'a [u8]);

impl Serialize for ImageUrl<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry("url", &AsStr(crate::images::DataUrl(self.0, self.1)))?;
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
