//! Anthropic Messages provider (`POST {base_url}/v1/messages`, streamed): configuration and the
//! HTTP call. The request body is built in [`encode`], the event stream decoded in [`decode`].

use std::time::Duration;

use serde::Serialize;
use serde_json::{Map, Value};

use super::http::{Account, Auth, Dialect, HttpProvider, Wire, account_of};
use super::models::Api;
use super::{ChatRequest, Secret};

mod decode;
mod encode;

pub use decode::decode_stream;

/// The API version every request names; the stream format described in `decode` is this one's.
const API_VERSION: &str = "2023-06-01";

/// Settings of one Anthropic Messages provider.
#[derive(Debug, Clone)]
pub struct AnthropicConfig {
    /// Configured provider name, e.g. `anthropic`.
    pub name: String,
    /// Base URL without `/v1`, like `ANTHROPIC_BASE_URL`; requests go to
    /// `{base_url}/v1/messages` (a base URL that already ends in `/v1` is accepted too).
    pub base_url: String,
    /// Model id.
    pub model: String,
    /// Sent as `x-api-key` when present.
    pub api_key: Option<Secret>,
    /// The env var the key comes from, named in error messages.
    pub api_key_env: Option<String>,
    /// Cap on output tokens; the API requires one.
    pub max_tokens: u64,
    /// Extended thinking budget; `Some` turns thinking on.
    pub thinking_budget: Option<u64>,
    /// Extra request fields (`temperature`, `top_k`…); they replace ours of the same name
    /// (except `messages` and `stream`), and a `null` value removes one of ours.
    pub extra_body: Map<String, Value>,
    /// Time allowed to establish the connection.
    pub connect_timeout: Duration,
    /// No bytes for this long is an error.
    pub idle_timeout: Duration,
}

/// A provider speaking the Anthropic Messages streaming API.
pub type AnthropicProvider = HttpProvider<AnthropicConfig>;

impl Dialect for AnthropicConfig {
    /// Messages over HTTP: an SSE stream ended by `message_stop`, the key in `x-api-key`.
    const WIRE: &'static Wire = &Wire {
        accept: "text/event-stream",
        headers: &[("anthropic-version", API_VERSION)],
        auth: Auth::Header("x-api-key"),
        base_url_hint: "without /v1, like ANTHROPIC_BASE_URL",
        url_example: "",
        refused: None,
    };
    type Decoder = decode::MessageState;
    const MODELS: Api = Api::Anthropic;

    fn account(&self) -> Account<'_> {
        account_of!(self)
    }

    fn path(&self) -> &'static str {
        // `ANTHROPIC_BASE_URL` has no `/v1`, but users often paste one; both work.
        if self.base_url.trim_end_matches('/').ends_with("/v1") {
            "/messages"
        } else {
            "/v1/messages"
        }
    }

    fn body<'a>(&'a self, request: ChatRequest<'a>) -> impl Serialize + 'a {
        encode::WireRequest {
            config: self,
            request,
        }
    }
}
