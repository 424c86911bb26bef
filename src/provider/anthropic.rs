//! Anthropic Messages provider (`POST {base_url}/v1/messages`, streamed): configuration and the
//! HTTP call. The request body is built in [`encode`], the event stream decoded in [`decode`].

use std::time::Duration;

use futures_util::future::BoxFuture;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderValue};
use serde_json::{Map, Value};

use super::http::{self as error, ErrorContext};
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
    url: String,
    client: reqwest::Client,
}

impl AnthropicProvider {
    /// Checks the base URL and builds the HTTP client (one per provider, connections reused).
    pub fn new(config: AnthropicConfig) -> Result<Self, ProviderError> {
        let base = config.base_url.trim_end_matches('/');
        // `ANTHROPIC_BASE_URL` has no `/v1`, but users often paste one; both work.
        let url = if base.ends_with("/v1") {
            format!("{base}/messages")
        } else {
            format!("{base}/v1/messages")
        };
        let parsed = reqwest::Url::parse(&url).ok();
        if !parsed.is_some_and(|u| matches!(u.scheme(), "http" | "https")) {
            let (base, name) = (&config.base_url, &config.name);
            let problem = format!("base_url `{base}` of provider `{name}` is not an http(s) URL");
            return Err(ProviderError::Config(problem));
        }
        let client = super::http::client(&config.base_url, config.connect_timeout)?;
        Ok(Self {
            config,
            url,
            client,
        })
    }

    async fn start(&self, request: ChatRequest<'_>) -> Result<ChunkStream, ProviderError> {
        let body = serde_json::to_vec(&encode::WireRequest {
            config: &self.config,
            request,
        })
        .map_err(|e| ProviderError::Config(format!("cannot encode the request: {e}")))?;
        let mut builder = self
            .client
            .post(self.url.as_str())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "text/event-stream")
            .header("anthropic-version", API_VERSION)
            .body(body);
        if let Some(key) = &self.config.api_key {
            builder = builder.header("x-api-key", self.key_header(key)?);
        }
        let timeouts = error::Timeouts {
            connect: self.config.connect_timeout,
            idle: self.config.idle_timeout,
        };
        let context = self.error_context();
        let bytes = error::open_stream(
            builder,
            &context,
            timeouts,
            Default::default(),
            decode::TERMINATOR,
        )
        .await?;
        Ok(decode_stream(bytes))
    }

    /// The key as a header value marked sensitive, so no `Debug` of the request shows it.
    fn key_header(&self, key: &Secret) -> Result<HeaderValue, ProviderError> {
        let mut value = HeaderValue::from_str(key.expose().trim()).map_err(|_| {
            let source = self.config.api_key_env.as_deref().unwrap_or("the config");
            ProviderError::Config(format!(
                "the API key of provider `{}` (from {source}) contains characters that cannot \
                 be sent in an HTTP header",
                self.config.name
            ))
        })?;
        value.set_sensitive(true);
        Ok(value)
    }

    fn error_context(&self) -> ErrorContext<'_> {
        ErrorContext {
            provider: &self.config.name,
            model: &self.config.model,
            url: &self.url,
            key_env: self.config.api_key_env.as_deref(),
            key: self.config.api_key.as_ref(),
            base_url_hint: "without /v1, like ANTHROPIC_BASE_URL",
        }
    }
}

impl Provider for AnthropicProvider {
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
