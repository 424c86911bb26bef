//! One provider's HTTP endpoint: the URL it posts to (checked once), the client, the key and
//! how it is sent, and what its errors say. The POST, the status check and the start of the
//! stream are the same for every provider; each provider keeps only its wire format.

use std::time::Duration;

use bytes::Bytes;
use futures_util::Stream;
use reqwest::RequestBuilder;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderValue};

use super::{Advice, ErrorContext, Timeouts, client, open_stream};
use crate::provider::{ProviderError, Secret};

/// How a provider sends its API key.
#[derive(Debug, Clone, Copy)]
pub enum Auth {
    /// `Authorization: Bearer …`.
    Bearer,
    /// The key alone in this header, marked sensitive (Anthropic's `x-api-key`).
    Header(&'static str),
}

/// What a wire format says about its endpoint: the same for every provider of that kind.
#[derive(Debug)]
pub struct Wire {
    /// The `Accept` header: the kind of stream asked for.
    pub accept: &'static str,
    /// Headers every request carries (e.g. an API version).
    pub headers: &'static [(&'static str, &'static str)],
    /// How the key is sent.
    pub auth: Auth,
    /// What `base_url` should look like, for the 404 message.
    pub base_url_hint: &'static str,
    /// An example URL for the message about a base URL that is not http(s), e.g.
    /// ` (like http://127.0.0.1:11434)`.
    pub url_example: &'static str,
    /// Replaces the generic "is the server running" when the connection is refused.
    pub refused: Option<&'static str>,
}

/// Who is called: the parts of a provider's config every endpoint has.
pub struct Account<'a> {
    /// Configured provider name.
    pub name: &'a str,
    /// Model id.
    pub model: &'a str,
    /// The configured base URL.
    pub base_url: &'a str,
    /// The API key, if any.
    pub api_key: Option<&'a Secret>,
    /// The env var the key comes from, named in error messages.
    pub api_key_env: Option<&'a str>,
    /// Time allowed to establish the connection.
    pub connect_timeout: Duration,
    /// No bytes for this long is an error.
    pub idle_timeout: Duration,
}

/// A checked URL with its client, ready to POST streaming requests.
#[derive(Debug)]
pub struct Endpoint {
    name: String,
    model: String,
    url: String,
    /// The base URL, for [`Endpoint::ask_json`]'s sibling paths.
    base: String,
    key: Option<Secret>,
    key_env: Option<String>,
    timeouts: Timeouts,
    client: reqwest::Client,
    wire: &'static Wire,
    /// Said after a 404 that names a missing model (e.g. how to download it).
    missing_model: Option<String>,
}

impl Endpoint {
    /// `{base_url}{path}` (one slash between them), checked to be http(s), with the provider's
    /// client (one per provider, connections reused).
    pub(crate) fn new(
        account: Account<'_>,
        path: &str,
        wire: &'static Wire,
    ) -> Result<Self, ProviderError> {
        let url = format!("{}{path}", account.base_url.trim_end_matches('/'));
        let parsed = reqwest::Url::parse(&url).ok();
        if !parsed.is_some_and(|u| matches!(u.scheme(), "http" | "https")) {
            let (base, name, example) = (account.base_url, account.name, wire.url_example);
            let problem =
                format!("base_url '{base}' of provider '{name}' is not an http(s) URL{example}");
            return Err(ProviderError::Config(problem));
        }
        let client = client(account.base_url, account.connect_timeout)?;
        Ok(Self {
            name: account.name.to_string(),
            model: account.model.to_string(),
            url,
            base: account.base_url.trim_end_matches('/').to_string(),
            key: account.api_key.cloned(),
            key_env: account.api_key_env.map(String::from),
            timeouts: Timeouts {
                connect: account.connect_timeout,
                idle: account.idle_timeout,
            },
            client,
            wire,
            missing_model: None,
        })
    }

    /// Adds what to say when the server does not have the model.
    pub(crate) fn with_missing_model(mut self, advice: String) -> Self {
        self.missing_model = Some(advice);
        self
    }

    /// Sends `body` (JSON): an unreachable server, silence, an error status or a web page
    /// become actionable errors; the reply comes back as a byte stream (see `open_stream`)
    /// that names `terminator` when it breaks off.
    pub(crate) async fn post(
        &self,
        body: Vec<u8>,
        terminator: &'static str,
    ) -> Result<
        impl Stream<Item = Result<Bytes, ProviderError>> + Send + 'static + use<>,
        ProviderError,
    > {
        let builder = self
            .client
            .post(self.url.as_str())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, self.wire.accept);
        let builder = self.authorize(self.with_headers(builder))?.body(body);
        let context = ErrorContext {
            provider: &self.name,
            model: &self.model,
            url: &self.url,
            key_env: self.key_env.as_deref(),
            key: self.key.as_ref(),
            base_url_hint: self.wire.base_url_hint,
        };
        let advice = Advice {
            refused: self.wire.refused,
            missing_model: self.missing_model.as_deref(),
        };
        open_stream(builder, &context, self.timeouts, advice, terminator).await
    }

    /// Adds the wire's fixed headers (e.g. an API version).
    fn with_headers(&self, mut builder: RequestBuilder) -> RequestBuilder {
        for (name, value) in self.wire.headers {
            builder = builder.header(*name, *value);
        }
        builder
    }

    /// Adds the key, sent the wire's way, if there is one.
    fn authorize(&self, builder: RequestBuilder) -> Result<RequestBuilder, ProviderError> {
        Ok(match (&self.key, self.wire.auth) {
            (None, _) => builder,
            (Some(key), Auth::Bearer) => builder.bearer_auth(key.expose().trim()),
            (Some(key), Auth::Header(name)) => builder.header(name, self.key_header(key)?),
        })
    }

    /// The key as a header value marked sensitive, so no `Debug` of the request shows it.
    fn key_header(&self, key: &Secret) -> Result<HeaderValue, ProviderError> {
        let mut value = HeaderValue::from_str(key.expose().trim()).map_err(|_| {
            let source = self.key_env.as_deref().unwrap_or("the config");
            ProviderError::Config(format!(
                "the API key of provider '{}' (from {source}) contains characters that cannot \
                 be sent in an HTTP header",
                self.name
            ))
        })?;
        value.set_sensitive(true);
        Ok(value)
    }

    /// A GET of a sibling path of the same server (a model list), with the wire's headers and
    /// the key sent as a request is; the caller bounds its time and size.
    pub(crate) fn get(&self, path: &str) -> Result<(String, RequestBuilder), ProviderError> {
        let url = format!("{}{path}", self.base);
        let builder = self
            .client
            .get(url.as_str())
            .header(ACCEPT, "application/json");
        let builder = self.authorize(self.with_headers(builder))?;
        Ok((url, builder))
    }

    /// How long connecting may take (named when a server cannot be reached).
    pub(crate) fn connect_timeout(&self) -> Duration {
        self.timeouts.connect
    }

    /// The configured base URL, without a trailing slash.
    pub(crate) fn base(&self) -> &str {
        &self.base
    }

    /// A small JSON question to a sibling path of the same server (Ollama's `/api/show`),
    /// with the same client and key: `None` on any failure, a reply over `max` bytes, or no
    /// answer within `within`. It is advice, never needed to go on.
    pub(crate) async fn ask_json(
        &self,
        path: &str,
        body: &serde_json::Value,
        max: usize,
        within: Duration,
    ) -> Option<serde_json::Value> {
        let url = format!("{}{path}", self.base);
        let builder = self.client.post(url).json(body).timeout(within);
        let mut response = self.authorize(builder).ok()?.send().await.ok()?;
        if !response.status().is_success() {
            return None;
        }
        let mut bytes = Vec::new();
        while let Some(chunk) = response.chunk().await.ok()? {
            if bytes.len() + chunk.len() > max {
                return None;
            }
            bytes.extend_from_slice(&chunk);
        }
        serde_json::from_slice(&bytes).ok()
    }
}
