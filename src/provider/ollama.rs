//! Native Ollama provider: `POST {base_url}/api/chat` with a newline-delimited JSON stream.
//! Request encoding and the HTTP call; the stream is decoded in [`decode`].

use std::borrow::Cow;
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::{Map, Value};

use super::http::{Account, Auth, Dialect, Endpoint, HttpProvider, Wire, account_of};
use super::models::Api;
use super::wire::{AsStr, Seq, ToolFunction, extra_fields};
use super::{ChatRequest, Secret};
use crate::conversation::{Message, Role, ToolCall};

mod decode;

pub use decode::{MAX_LINE, decode_stream};

/// The field that ends a complete stream.
const TERMINATOR: &str = "done: true";
const REFUSED: &str = "is Ollama running? start it with 'ollama serve', or check base_url \
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
    /// The context window the server runs the model with, when configured (the config also
    /// sends it as `options.num_ctx`); otherwise `/api/show` is asked.
    pub num_ctx: Option<u64>,
    /// Extra request fields (`options`, `keep_alive`…); they replace ours of the same name
    /// (except `messages` and `stream`), and a `null` value removes one of ours.
    pub extra_body: Map<String, Value>,
    /// Time allowed to establish the connection.
    pub connect_timeout: Duration,
    /// No bytes for this long is an error.
    pub idle_timeout: Duration,
}

/// A provider speaking Ollama's native chat API.
pub type OllamaProvider = HttpProvider<OllamaConfig>;

impl Dialect for OllamaConfig {
    /// Ollama's chat API: newline-delimited JSON ended by `done: true`.
    const WIRE: &'static Wire = &Wire {
        accept: "application/x-ndjson",
        headers: &[],
        auth: Auth::Bearer,
        base_url_hint: "the Ollama server root, like OLLAMA_HOST, without /api",
        url_example: " (like http://127.0.0.1:11434)",
        refused: Some(REFUSED),
    };
    type Decoder = decode::ChatLines;
    const MODELS: Api = Api::Ollama;

    fn account(&self) -> Account<'_> {
        account_of!(self)
    }

    fn path(&self) -> &'static str {
        "/api/chat"
    }

    /// What to do about a model the server does not have (names the model).
    fn missing_model(&self) -> Option<String> {
        Some(format!(
            "Download it with 'ollama pull {}' ('ollama list' shows the models you have)",
            self.model
        ))
    }

    fn body<'a>(&'a self, request: ChatRequest<'a>) -> impl Serialize + 'a {
        WireRequest {
            config: self,
            request,
        }
    }

    fn context_window<'a>(&'a self, endpoint: &'a Endpoint) -> BoxFuture<'a, Option<u64>> {
        Box::pin(async move {
            if let Some(n) = self.num_ctx {
                return Some(n);
            }
            let body = serde_json::json!({ "model": self.model });
            let show = endpoint
                .ask_json("/api/show", &body, SHOW_MAX_BYTES, SHOW_WITHIN)
                .await?;
            window_of(&show)
        })
    }
}

/// `/api/show` answers with the model's template, license and parameters: a few hundred KB at
/// most; more is not an answer worth reading.
const SHOW_MAX_BYTES: usize = 4 << 20;
/// How long `/api/show` may take (it reads the model's metadata from disk).
const SHOW_WITHIN: Duration = Duration::from_secs(5);

/// The context window an `/api/show` answer gives: the Modelfile's `num_ctx` (what the server
/// runs the model with) over the model's trained `<arch>.context_length`.
pub fn window_of(show: &Value) -> Option<u64> {
    let from_params = show
        .get("parameters")
        .and_then(Value::as_str)
        .and_then(|params| {
            params.lines().find_map(|line| {
                let mut words = line.split_whitespace();
                (words.next() == Some("num_ctx"))
                    .then(|| words.next()?.parse::<u64>().ok())
                    .flatten()
            })
        });
    let info = show.get("model_info");
    let trained = || {
        let arch = info?.get("general.architecture")?.as_str()?;
        info?.get(format!("{arch}.context_length"))?.as_u64()
    };
    from_params.or_else(trained).filter(|n| *n > 0)
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
        match self.request.max_tokens {
            // A call's own bound (the summary's) lowers `options.num_predict`.
            Some(n) => {
                let mut options = match extra.get("options") {
                    Some(Value::Object(options)) => options.clone(),
                    _ => Map::new(),
                };
                let configured = options.get("num_predict").and_then(Value::as_u64);
                let num_predict = configured.filter(|&c| c > 0).map_or(n, |c| c.min(n));
                options.insert("num_predict".into(), num_predict.into());
                map.serialize_entry("options", &options)?;
                let rest: Map<String, Value> = extra
                    .iter()
                    .filter(|(key, _)| *key != "options")
                    .map(|(key, value)| (key.clone(), value.clone()))
                    .collect();
                extra_fields(&mut map, &rest)?;
            }
            None => extra_fields(&mut map, extra)?,
        }
        map.end()
    }
}

/// `{"type": "function", "function": …}`: one offered tool.
#[derive(Serialize)]
struct OutTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: ToolFunction<'a>,
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
        let content = m.content.as_deref().unwrap_or("");
        let missing: Vec<String> = (m.images.iter())
            .filter(|i| i.data.is_none())
            .map(crate::images::Image::missing_note)
            .collect();
        if missing.is_empty() {
            map.serialize_entry("content", content)?;
        } else {
            // Images whose bytes are gone (a resume without them): the model is told so.
            map.serialize_entry("content", &format!("{content}\n\n{}", missing.join("\n")))?;
        }
        if m.images.iter().any(|i| i.data.is_some()) {
            // `images`: the message's images as bare base64 (no data URL prefix).
            let images = Seq(|| {
                (m.images.iter())
                    .filter_map(|i| i.data.as_deref())
                    .map(|data| AsStr(crate::images::Base64(data)))
            });
            map.serialize_entry("images", &images)?;
        }
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
