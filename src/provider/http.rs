//! HTTP plumbing shared by the providers: error bodies (OpenAI, OpenRouter, vLLM, Anthropic,
//! Ollama, plain text), HTTP statuses, retry headers and transport failures become actionable
//! [`ProviderError`]s that never carry the API key; response bodies become byte streams with
//! an idle timeout.

use std::error::Error as _;
use std::time::Duration;

use reqwest::header::HeaderMap;
use serde_json::Value;

use crate::provider::{ProviderError, Secret};

/// Error bodies are read up to this size; the message is all we need from them.
const ERROR_BODY_CAP: usize = 64 * 1024;

/// What an error message may mention about the call.
pub(crate) struct ErrorContext<'a> {
    pub provider: &'a str,
    pub model: &'a str,
    pub url: &'a str,
    pub key_env: Option<&'a str>,
    pub key: Option<&'a Secret>,
    /// What `base_url` should look like, for the 404 message.
    pub base_url_hint: &'a str,
}

/// Provider-specific advice the shared messages cannot give. Kept apart from [`ErrorContext`]
/// so providers that need none construct nothing new.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Advice<'a> {
    /// Replaces the generic "is the server running" when the connection is refused.
    pub refused: Option<&'a str>,
    /// Said after a 404 whose message says the model was not found (e.g. how to download it).
    pub missing_model: Option<&'a str>,
}

/// The useful parts of an error body.
#[derive(Debug, Default)]
struct Detail {
    message: String,
    kind: Option<String>,
    code: Option<String>,
    param: Option<String>,
}

/// Passes a streaming response through; anything else (an error status, or JSON where a
/// stream was expected) becomes the error it describes, with provider-specific advice.
pub(crate) async fn check_response(
    response: reqwest::Response,
    idle: Duration,
    ctx: &ErrorContext<'_>,
    advice: Advice<'_>,
) -> Result<reqwest::Response, ProviderError> {
    let status = response.status().as_u16();
    let content_type = header(response.headers(), "content-type").unwrap_or("");
    let json = content_type.starts_with("application/json");
    if (200..300).contains(&status) && !json {
        return Ok(response);
    }
    let headers = response.headers().clone();
    let body = read_capped(response, idle).await;
    Err(if (200..300).contains(&status) {
        json_instead_of_stream(&body, ctx.provider)
    } else {
        http_error(status, &headers, &body, ctx, advice)
    })
}

/// Reads at most [`ERROR_BODY_CAP`] bytes of a body; a failing or stalled read ends it.
async fn read_capped(mut response: reqwest::Response, idle: Duration) -> Vec<u8> {
    let mut body = Vec::new();
    while body.len() < ERROR_BODY_CAP {
        match tokio::time::timeout(idle, response.chunk()).await {
            Ok(Ok(Some(bytes))) => {
                let take = bytes.len().min(ERROR_BODY_CAP - body.len());
                body.extend_from_slice(&bytes[..take]);
            }
            _ => break,
        }
    }
    body
}

/// Maps an HTTP error status and its (capped) body.
fn http_error(
    status: u16,
    headers: &HeaderMap,
    body: &[u8],
    ctx: &ErrorContext<'_>,
    advice: Advice<'_>,
) -> ProviderError {
    // The key leaves the body before anything is cut from it: cut first, a key that
    // straddled the cut would leave its head behind, out of reach of a whole-key match.
    let body = redact(String::from_utf8_lossy(body).into_owned(), ctx.key);
    let detail = parse_body(body.as_bytes(), status);
    let quota = [&detail.kind, &detail.code]
        .iter()
        .any(|v| v.as_deref() == Some("insufficient_quota"));
    let mut retryable = !quota && status_retryable(status);
    match header(headers, "x-should-retry") {
        Some("true") => retryable = true,
        Some("false") => retryable = false,
        _ => {}
    }
    let provider = ctx.provider;
    // Sentences are appended after the message, so its own final period is dropped.
    let said = detail.message.trim_end().trim_end_matches('.');
    let missing_model = advice
        .missing_model
        .filter(|_| model_missing(&detail.message));
    let exceeded = matches!(status, 400 | 413 | 422) && (too_long(&detail) || status == 413);
    let message = match status {
        401 => match (ctx.key.is_some(), ctx.key_env) {
            (true, Some(env)) => format!(
                "provider '{provider}' did not accept the API key: {said}. Check the key in {env}."
            ),
            (true, None) => {
                format!("provider '{provider}' did not accept the configured API key: {said}.")
            }
            (false, Some(env)) => {
                format!("provider '{provider}' needs an API key: {said}. Set {env}.")
            }
            (false, None) => format!(
                "provider '{provider}' needs an API key but none is configured: {said}. \
                 Set api_key_env in the config and export that variable."
            ),
        },
        403 => {
            let key = ctx.key_env.map_or_else(
                || "the configured key".to_string(),
                |e| format!("the key in {e}"),
            );
            format!(
                "provider '{provider}' denied access: {said}. Check that {key} may use model '{}'.",
                ctx.model
            )
        }
        404 if missing_model.is_some() => format!(
            "model '{}' was not found at provider '{provider}': {said}. {}.",
            ctx.model,
            missing_model.unwrap_or_default()
        ),
        404 => format!(
            "model '{}' or URL {} was not found at provider '{provider}': {said}. \
             Check 'model' and 'base_url' ({}).",
            ctx.model, ctx.url, ctx.base_url_hint
        ),
        429 if quota => format!(
            "the account's quota at provider '{provider}' is exhausted: {said}. \
             Check the plan and billing."
        ),
        429 => format!("provider '{provider}' is rate limiting requests: {said}"),
        _ if exceeded => {
            // The orchestrator compacts and retries once on this; the advice is for when
            // even that did not help.
            return ProviderError::ContextExceeded(redact(
                format!(
                    "provider '{provider}' rejected the request as too long for model '{}': {said}",
                    ctx.model
                ),
                ctx.key,
            ));
        }
        400 | 422 => {
            let param = detail
                .param
                .as_ref()
                .map(|p| format!(" (parameter '{p}')"))
                .unwrap_or_default();
            format!("provider '{provider}' rejected the request{param}: {said}")
        }
        402 => format!(
            "provider '{provider}' refused the request for billing reasons: {said}. \
             Check the plan and billing."
        ),
        300..=399 => format!(
            "provider '{provider}' redirected the request to {}; set base_url to that address",
            header(headers, "location").unwrap_or("another address")
        ),
        s if s >= 500 => format!("provider '{provider}' had a server error: {said}"),
        _ => format!("provider '{provider}': {said}"),
    };
    ProviderError::Http {
        status,
        message: redact(message, ctx.key),
        retryable,
        retry_after: retry_after(headers),
    }
}

/// Whether an error message says a model is missing (Ollama: `model "x" not found, try
/// pulling it first`), as opposed to a wrong URL (`404 page not found`).
fn model_missing(message: &str) -> bool {
    let message = message.to_ascii_lowercase();
    message.contains("model") && message.contains("not found")
}

/// Whether an error says the prompt does not fit the model's context (OpenAI
/// `context_length_exceeded`, Anthropic "prompt is too long", vLLM "maximum context length").
fn too_long(detail: &Detail) -> bool {
    let by_kind = [&detail.kind, &detail.code]
        .into_iter()
        .flatten()
        .any(|k| k.contains("context_length"));
    let message = detail.message.to_ascii_lowercase();
    by_kind
        || ["prompt is too long", "context length", "context window"]
            .iter()
            .any(|m| message.contains(m))
}

/// Maps an in-band `{"error": …}` object of a stream.
pub(crate) fn stream_error(error: &Value) -> ProviderError {
    let detail = error_detail(error).unwrap_or_else(|| Detail {
        message: excerpt(&error.to_string(), 300),
        ..Detail::default()
    });
    // Unknown kinds are retryable: a server that fails mid-stream usually recovers.
    let retryable = kind_retryable(&detail).unwrap_or(true);
    let exceeded = too_long(&detail);
    let message = match detail.kind.as_deref().or(detail.code.as_deref()) {
        Some(kind) if !detail.message.contains(kind) => format!("{} ({kind})", detail.message),
        _ => detail.message,
    };
    if exceeded {
        return ProviderError::ContextExceeded(message);
    }
    ProviderError::Api { message, retryable }
}

/// A 200 answer carrying JSON instead of an event stream (the server ignored `stream: true`,
/// or a gateway answered with an error object).
fn json_instead_of_stream(body: &[u8], provider: &str) -> ProviderError {
    let value = serde_json::from_slice::<Value>(body).ok();
    match value.as_ref().and_then(|v| v.get("error")) {
        Some(error) if !error.is_null() => stream_error(error),
        _ => not_a_stream(provider),
    }
}

/// A whole JSON reply where a stream was asked for: the server (or its configuration) does
/// not stream, so trying again would only get the same.
fn not_a_stream(provider: &str) -> ProviderError {
    ProviderError::Config(format!(
        "provider '{provider}' answered with JSON instead of an event stream; \
         does the server support streaming?"
    ))
}

/// A request that could not be sent: a bad request (config) or an unreachable server, with
/// provider-specific advice (how to start a local server).
pub(crate) fn send_error(
    error: &reqwest::Error,
    url: &str,
    connect_timeout: Duration,
    advice: Advice<'_>,
) -> ProviderError {
    let reason = connect_reason(error, connect_timeout, advice);
    if error.is_builder() {
        return ProviderError::Config(format!("cannot build the request to {url}: {reason}"));
    }
    ProviderError::Connect {
        url: url.to_string(),
        reason,
    }
}

/// Why a request could not be sent, in one short line.
fn connect_reason(error: &reqwest::Error, connect_timeout: Duration, advice: Advice<'_>) -> String {
    if error.is_timeout() {
        return format!(
            "connection timed out after {} — is the host reachable?",
            seconds(connect_timeout)
        );
    }
    if error.is_dns() {
        return "could not resolve the host name — check base_url".to_string();
    }
    let mut innermost: &dyn std::error::Error = error;
    let mut source = error.source();
    while let Some(err) = source {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind::*;
            match io.kind() {
                ConnectionRefused => {
                    let hint = advice
                        .refused
                        .unwrap_or("is the server running and is base_url right?");
                    return format!("connection refused — {hint}");
                }
                ConnectionReset | ConnectionAborted | BrokenPipe => {
                    return "the connection was closed by the server".to_string();
                }
                TimedOut => return "the connection timed out".to_string(),
                _ => {}
            }
        }
        innermost = err;
        source = err.source();
    }
    excerpt(&innermost.to_string(), 200)
}

/// A timeout: nothing came from `url` for `idle`.
pub(crate) fn silence(what: &str, url: &str, idle: Duration) -> ProviderError {
    ProviderError::Timeout(format!("{what} {url} for {}", seconds(idle)))
}

/// A duration as `N s`, with one decimal below whole seconds.
fn seconds(duration: Duration) -> String {
    if duration.subsec_millis() == 0 {
        format!("{} s", duration.as_secs())
    } else {
        format!("{:.1} s", duration.as_secs_f64())
    }
}

/// The first `max` characters of `text`, marked when cut.
pub(crate) fn excerpt(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

fn parse_body(body: &[u8], status: u16) -> Detail {
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    let parsed = serde_json::from_str::<Value>(text).ok();
    let mut detail = parsed.as_ref().and_then(detail_of).unwrap_or_default();
    if detail.message.is_empty() {
        detail.message = if text.is_empty() {
            reqwest::StatusCode::from_u16(status)
                .ok()
                .and_then(|s| s.canonical_reason())
                .unwrap_or("no details given")
                .to_string()
        } else {
            excerpt(text, 500)
        };
    }
    detail
}

/// `{"error": {…}}`, `{"error": "text"}`, or a top-level `{message, type, code}` (vLLM).
fn detail_of(value: &Value) -> Option<Detail> {
    match value.get("error") {
        Some(err @ (Value::String(_) | Value::Object(_))) => error_detail(err),
        _ => error_detail(value),
    }
}

/// The fields of one error object (or an error string).
fn error_detail(error: &Value) -> Option<Detail> {
    let obj = match error {
        Value::String(s) => {
            return Some(Detail {
                message: s.clone(),
                ..Detail::default()
            });
        }
        Value::Object(obj) => obj,
        _ => return None,
    };
    let text = |key: &str| match obj.get(key) {
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    let mut detail = Detail {
        message: text("message")
            .or_else(|| text("detail"))
            .unwrap_or_default(),
        kind: text("type").or_else(|| text("status")),
        code: text("code"),
        param: text("param"),
    };
    // OpenRouter relays the upstream error body as a JSON string inside `message`.
    if detail.message.trim_start().starts_with('{') {
        let nested = serde_json::from_str::<Value>(&detail.message).ok();
        if let Some(inner) = nested
            .as_ref()
            .and_then(detail_of)
            .filter(|d| !d.message.is_empty())
        {
            detail.message = inner.message;
            detail.kind = detail.kind.or(inner.kind);
            detail.code = detail.code.or(inner.code);
        }
    }
    let useful = !detail.message.is_empty() || detail.kind.is_some() || detail.code.is_some();
    useful.then_some(detail)
}

/// Removes the key from a message, in case a server echoes it back.
fn redact(message: String, key: Option<&Secret>) -> String {
    match key.map(|k| k.expose().trim()) {
        Some(key) if key.len() >= 6 && message.contains(key) => message.replace(key, "***"),
        _ => message,
    }
}

/// The [`Account`] of a provider config: every config names its endpoint with the same
/// fields (`name`, `model`, `base_url`, `api_key`, `api_key_env`, the two timeouts), kept
/// in each config so tests and callers build them as plain struct literals.
macro_rules! account_of {
    ($config:expr) => {
        $crate::provider::http::Account {
            name: &$config.name,
            model: &$config.model,
            base_url: &$config.base_url,
            api_key: $config.api_key.as_ref(),
            api_key_env: $config.api_key_env.as_deref(),
            connect_timeout: $config.connect_timeout,
            idle_timeout: $config.idle_timeout,
        }
    };
}
pub(crate) use account_of;

// The provider types are `HttpProvider<…Config>`, public, so `Dialect` and the types it
// names (`Wire`, `Account`, `Endpoint`, the decoders) are declared `pub`; they stay unnameable
// outside the crate because this module is not public.
mod endpoint;
mod provider;
mod retryable;
mod stream;

pub(crate) use endpoint::{Account, Auth, Endpoint, Wire};
pub use provider::{Dialect, HttpProvider};
use retryable::{header, kind_retryable, retry_after, status_retryable};
pub(crate) use stream::{Timeouts, client, open_stream};

#[cfg(test)]
mod tests;
