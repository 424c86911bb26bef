//! Anthropic Messages provider (`POST {base_url}/v1/messages`, streamed): configuration and the
//! HTTP call. The request body is built in [`encode`], the event stream decoded in [`decode`].

use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::{Map, Value};

use super::http::{Account, Auth, Endpoint, Wire};
use super::{ChatRequest, ChunkStream, Provider, ProviderError, Secret};

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
#[derive(Debug)]
pub struct AnthropicProvider {
    config: AnthropicConfig,
    endpoint: Endpoint,
}

/// Messages over HTTP: an SSE stream ended by `message_stop`, the key in `x-api-key`.
static WIRE: Wire = Wire {
    accept: "text/event-stream",
    headers: &[("anthropic-version", API_VERSION)],
    auth: Auth::Header("x-api-key"),
    terminator: decode::TERMINATOR,
    base_url_hint: "without /v1, like ANTHROPIC_BASE_URL",
    url_example: "",
    refused: None,
};

impl AnthropicProvider {
    /// Checks the base URL and builds the HTTP client (one per provider, connections reused).
    pub fn new(config: AnthropicConfig) -> Result<Self, ProviderError> {
        // `ANTHROPIC_BASE_URL` has no `/v1`, but users often paste one; both work.
        let path = if config.base_url.trim_end_matches('/').ends_with("/v1") {
            "/messages"
        } else {
            "/v1/messages"
        };
        let account = Account {
            name: &config.name,
            model: &config.model,
            base_url: &config.base_url,
            api_key: config.api_key.as_ref(),
            api_key_env: config.api_key_env.as_deref(),
            connect_timeout: config.connect_timeout,
            idle_timeout: config.idle_timeout,
        };
        let endpoint = Endpoint::new(account, path, &WIRE)?;
        Ok(Self { config, endpoint })
    }

    async fn start(&self, request: ChatRequest<'_>) -> Result<ChunkStream, ProviderError> {
        let body = encode::WireRequest {
            config: &self.config,
            request,
        };
        Ok(decode_stream(self.endpoint.post(&body).await?))
    }
}

impl Provider for AnthropicProvider {
    fn models(&self) -> BoxFuture<'_, Result<Vec<String>, super::models::ModelsError>> {
        use super::models::{Api, LIST_MAX_BYTES, LIST_WITHIN, list};
        Box::pin(list(
            &self.endpoint,
            Api::Anthropic,
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
