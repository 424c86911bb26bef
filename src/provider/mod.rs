//! The provider port: one streamed chat call, as provider-neutral chunks.
//!
//! A provider turns the conversation into its wire format, sends it over HTTP and decodes the
//! reply into [`Chunk`]s. Assembling chunks into a turn is the orchestrator's job
//! (`orchestrator::turn`), so every provider shares one merge logic.

use std::pin::Pin;
use std::time::Duration;

use futures_util::Stream;
use futures_util::future::BoxFuture;

use crate::conversation::{Message, Timings, ToolSpec, Usage};

pub mod anthropic;
mod chunks;
pub mod demo;
pub(crate) mod http;
pub mod models;
pub mod ollama;
pub mod openai;
pub mod sse;
mod wire;

/// A decoded piece of a streamed reply.
#[derive(Debug, Clone, PartialEq)]
pub enum Chunk {
    /// Answer text.
    Text(String),
    /// Reasoning ("thinking") text.
    Reasoning(String),
    /// A piece of a tool call; pieces with the same `index` belong to one call.
    ToolCall(ToolCallDelta),
    /// Token usage (may arrive more than once; later values replace earlier ones per field).
    Usage(Usage),
    /// Why the model stopped (`stop`, `tool_calls`, `length`, …).
    Finish(String),
    /// The signature of the reasoning so far (Anthropic `signature_delta`); the last one wins.
    ReasoningSignature(String),
    /// Server-side timings of the call.
    Timings(Timings),
}

/// A fragment of one streamed tool call.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolCallDelta {
    /// Position of the call in the turn (providers may start at 0 or 1).
    pub index: usize,
    /// Call id, usually only in the first fragment.
    pub id: Option<String>,
    /// Tool name, usually only in the first fragment; an empty later name never overwrites.
    pub name: Option<String>,
    /// A fragment of the JSON arguments text (whole calls carry all of it at once).
    pub arguments: String,
}

/// What the orchestrator asks of a provider for one call.
#[derive(Debug, Clone, Copy)]
pub struct ChatRequest<'a> {
    /// The conversation, system prompt first.
    pub messages: &'a [Message],
    /// Tools offered to the model (empty: none offered).
    pub tools: &'a [ToolSpec],
    /// The most output tokens this call asks for, below the configured bound (the summary
    /// call's); sent where the wire has a field for it, unless `extra_body` sets one.
    pub max_tokens: Option<u64>,
}

/// The decoded stream of one call. It ends after the provider's terminator; a stream that stops
/// without it yields [`ProviderError::Truncated`] as its last item.
pub type ChunkStream = Pin<Box<dyn Stream<Item = Result<Chunk, ProviderError>> + Send>>;

/// A model provider (OpenAI-compatible, Anthropic, Ollama, demo).
pub trait Provider: Send + Sync {
    /// The configured provider name (`openai`, `deepseek`, `demo`, …).
    fn name(&self) -> &str;
    /// The model id sent to the provider.
    fn model(&self) -> &str;
    /// Starts one streamed call. Errors before the first byte (connect, HTTP status) come from
    /// the future; errors after it come from the stream.
    fn stream<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChunkStream, ProviderError>>;
    /// The model's context window in tokens, when the server can say (Ollama's
    /// `/api/show`); asked once, when the config and the presets do not know it.
    fn context_window(&self) -> BoxFuture<'_, Option<u64>> {
        Box::pin(async { None })
    }
    /// The models its server offers (the `/model` picker), bounded by
    /// [`models::LIST_WITHIN`] and [`models::LIST_MAX_BYTES`]; a provider with no such list
    /// (the demo) answers none.
    fn models(&self) -> BoxFuture<'_, Result<Vec<String>, models::ModelsError>> {
        Box::pin(async { Ok(Vec::new()) })
    }
    /// Whether its model takes images (`crate::images::vision`); a prompt naming an image is
    /// refused before sending when it does not.
    fn accepts_images(&self) -> bool {
        false
    }
}

/// A failed provider call. Messages are actionable and never contain a secret.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProviderError {
    /// The server could not be reached.
    #[error("cannot reach {url}: {reason}")]
    Connect {
        /// The URL that was tried.
        url: String,
        /// Why, and what to do about it.
        reason: String,
    },
    /// The server answered with an HTTP error status.
    #[error("HTTP {status}: {message}")]
    Http {
        /// HTTP status code.
        status: u16,
        /// The provider's message, with what to do about it.
        message: String,
        /// Whether trying again may help (429, 5xx, overloaded), per DESIGN §4.8.
        retryable: bool,
        /// How long the server asked us to wait, if it said.
        retry_after: Option<Duration>,
    },
    /// The provider reported an error inside a successful stream.
    #[error("the provider reported an error: {message}")]
    Api {
        /// The provider's message.
        message: String,
        /// Whether trying again may help.
        retryable: bool,
    },
    /// The stream ended without its terminator (`[DONE]`, `message_stop`, `done: true`).
    #[error("the stream ended before it was complete (no {terminator}); the reply is cut short")]
    Truncated {
        /// The terminator that never came.
        terminator: &'static str,
    },
    /// The stream carried something that is not the provider's format.
    #[error("malformed stream: {0}")]
    Malformed(String),
    /// Nothing arrived for too long.
    #[error("timed out: {0}")]
    Timeout(String),
    /// The provider is not usable as configured (e.g. its API key variable is not set).
    #[error("{0}")]
    Config(String),
    /// The request does not fit the model's context window (HTTP 400/413 "context length
    /// exceeded", "prompt is too long"): the orchestrator compacts and tries once more.
    #[error("{0}")]
    ContextExceeded(String),
    /// The reply broke one of taco's bounds (event size, reply size, call deadline); retrying
    /// would most likely break it again.
    #[error("{0}")]
    Limit(String),
}

impl ProviderError {
    /// A short machine-readable kind for `error` events.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Connect { .. } => "connect",
            Self::Http { .. } => "http",
            Self::Api { .. } => "api",
            Self::Truncated { .. } => "truncated",
            Self::Malformed(_) => "malformed",
            Self::Timeout(_) => "timeout",
            Self::Config(_) => "config",
            Self::Limit(_) => "limit",
            Self::ContextExceeded(_) => "context_exceeded",
        }
    }

    /// Whether a retry may succeed (used by the retry layer).
    pub fn is_retryable(&self) -> bool {
        match self {
            // A garbled chunk mid-stream is a transport accident like a cut stream: nothing
            // ran yet, so the call is tried again (its text is dropped, as for any retry).
            Self::Connect { .. }
            | Self::Truncated { .. }
            | Self::Timeout(_)
            | Self::Malformed(_) => true,
            Self::Http { retryable, .. } | Self::Api { retryable, .. } => *retryable,
            Self::Config(_) | Self::Limit(_) | Self::ContextExceeded(_) => false,
        }
    }
}

/// An API key. Its `Debug` never shows the value, so it cannot leak through logs or errors.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a key.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The key itself, for the one place that puts it in a request header.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(***)")
    }
}
