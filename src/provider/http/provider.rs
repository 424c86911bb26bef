//! The one HTTP provider. What every wire format shares is written here once: the checked
//! endpoint and its client, encoding the body, the call with its timeouts, status check and
//! error mapping, the model list and the [`Provider`] impl. A wire format is a [`Dialect`],
//! implemented by its config: path and headers, request body, stream decoder (which maps its
//! own usage and finish reasons). Retries and the call's limits are the orchestrator's.

use std::fmt::Debug;

use futures_util::future::BoxFuture;
use serde::Serialize;

use super::{Account, Endpoint, Wire};
use crate::provider::chunks::{Decoder, chunk_stream};
use crate::provider::models::{Api, LIST_MAX_BYTES, LIST_WITHIN, ModelsError, list};
use crate::provider::{ChatRequest, ChunkStream, Provider, ProviderError};

/// What one wire format adds to the shared HTTP call; implemented by the format's config.
pub trait Dialect: Debug + Send + Sync + 'static {
    /// Its endpoint: accept type, fixed headers, how the key goes, advice.
    const WIRE: &'static Wire;
    /// Its stream decoder, which names the terminator a complete reply ends with.
    type Decoder: Decoder + Default;
    /// How its server lists models.
    const MODELS: Api;
    /// Who is called: name, model, base URL, key, timeouts.
    fn account(&self) -> Account<'_>;
    /// The chat path under the base URL.
    fn path(&self) -> &'static str;
    /// What to say after a 404 naming a missing model (e.g. how to download it).
    fn missing_model(&self) -> Option<String> {
        None
    }
    /// The request body of one call.
    fn body<'a>(&'a self, request: ChatRequest<'a>) -> impl Serialize + 'a;
    /// The model's context window, when its server can say (asked through `endpoint`).
    fn context_window<'a>(&'a self, _endpoint: &'a Endpoint) -> BoxFuture<'a, Option<u64>> {
        Box::pin(async { None })
    }
}

/// A provider speaking one HTTP wire format, configured by `C`.
#[derive(Debug)]
pub struct HttpProvider<C> {
    config: C,
    endpoint: Endpoint,
    /// The config's `vision` option: whether the model takes images (`None`: known by name).
    vision: Option<bool>,
}

impl<C: Dialect> HttpProvider<C> {
    /// Checks the base URL and builds the HTTP client (one per provider, connections reused).
    pub fn new(config: C) -> Result<Self, ProviderError> {
        let mut endpoint = Endpoint::new(config.account(), config.path(), C::WIRE)?;
        if let Some(advice) = config.missing_model() {
            endpoint = endpoint.with_missing_model(advice);
        }
        Ok(Self {
            config,
            endpoint,
            vision: None,
        })
    }

    /// Says whether the model takes images (the config's `vision`); `None` leaves it to
    /// what is known of the model's name.
    pub fn with_vision(mut self, vision: Option<bool>) -> Self {
        self.vision = vision;
        self
    }

    async fn start(&self, request: ChatRequest<'_>) -> Result<ChunkStream, ProviderError> {
        let body = serde_json::to_vec(&self.config.body(request))
            .map_err(|e| ProviderError::Config(format!("cannot encode the request: {e}")))?;
        let bytes = self.endpoint.post(body, C::Decoder::TERMINATOR).await?;
        Ok(chunk_stream(bytes, C::Decoder::default()))
    }
}

impl<C: Dialect> Provider for HttpProvider<C> {
    fn name(&self) -> &str {
        self.config.account().name
    }

    fn model(&self) -> &str {
        self.config.account().model
    }

    fn stream<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChunkStream, ProviderError>> {
        Box::pin(self.start(request))
    }

    fn context_window(&self) -> BoxFuture<'_, Option<u64>> {
        self.config.context_window(&self.endpoint)
    }

    fn models(&self) -> BoxFuture<'_, Result<Vec<String>, ModelsError>> {
        Box::pin(list(&self.endpoint, C::MODELS, LIST_WITHIN, LIST_MAX_BYTES))
    }

    fn accepts_images(&self) -> bool {
        crate::images::vision::accepts(C::MODELS, self.model(), self.vision)
    }
}
