//! The streaming side of a provider call: the HTTP client, sending the request, and the body
//! as a byte stream with an idle timeout.

use std::time::Duration;

use super::{Advice, ErrorContext, check_response, send_error, silence};
use crate::provider::ProviderError;

/// The response body as a byte stream where a silence longer than `idle` is an error and a
/// connection that breaks mid-body means the reply was cut short (no `terminator`).
pub(crate) fn body_stream(
    response: reqwest::Response,
    idle: Duration,
    url: String,
    terminator: &'static str,
) -> impl futures_util::Stream<Item = Result<bytes::Bytes, ProviderError>> + Send + 'static {
    futures_util::stream::unfold(Some((response, url)), move |state| async move {
        let (mut response, url) = state?;
        match tokio::time::timeout(idle, response.chunk()).await {
            Ok(Ok(Some(bytes))) => Some((Ok(bytes), Some((response, url)))),
            Ok(Ok(None)) => None,
            Ok(Err(e)) => {
                tracing::debug!(url = %url, error = %e, "stream body failed");
                Some((Err(ProviderError::Truncated { terminator }), None))
            }
            Err(_) => Some((Err(silence("no data from", &url, idle)), None)),
        }
    })
}

/// Timeouts of one provider call.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timeouts {
    /// Giving up on connecting.
    pub connect: Duration,
    /// Longest silence, before the headers and inside the body.
    pub idle: Duration,
}

/// Sends a streaming request: an unreachable server, silence before the headers and an error
/// status become actionable errors; the body comes back as bytes that time out when silent and
/// end as `Truncated { terminator }` when the connection breaks.
pub(crate) async fn open_stream(
    request: reqwest::RequestBuilder,
    ctx: &ErrorContext<'_>,
    timeouts: Timeouts,
    advice: Advice<'_>,
    terminator: &'static str,
) -> Result<
    impl futures_util::Stream<Item = Result<bytes::Bytes, ProviderError>> + Send + 'static + use<>,
    ProviderError,
> {
    tracing::debug!(provider = %ctx.provider, url = %ctx.url, "streaming request");
    let response = match tokio::time::timeout(timeouts.idle, request.send()).await {
        Ok(Ok(response)) => response,
        Ok(Err(e)) => return Err(send_error(&e, ctx.url, timeouts.connect, advice)),
        Err(_) => return Err(silence("no response from", ctx.url, timeouts.idle)),
    };
    let response = check_response(response, timeouts.idle, ctx, advice).await?;
    if sends_html(&response) {
        return Err(ProviderError::Config(format!(
            "{} answered with an HTML page, not a stream: is the base URL right? \
             (OpenAI-compatible APIs usually end in /v1; Anthropic's and Ollama's do not)",
            ctx.url
        )));
    }
    Ok(body_stream(
        response,
        timeouts.idle,
        ctx.url.to_string(),
        terminator,
    ))
}

/// Whether a successful response is a web page (a wrong base URL hitting a website or a
/// proxy's login page) rather than the stream that was asked for.
fn sends_html(response: &reqwest::Response) -> bool {
    response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().to_ascii_lowercase().starts_with("text/html"))
}

/// The HTTP client of a provider (one per provider, connections reused). Redirects are not
/// followed: a redirected POST would silently become a GET, so it is reported instead. For a
/// plain-http server (a local model) the system's root certificates are not loaded: reading
/// and parsing them costs more time and memory than the whole rest of a short `exec`, and
/// no TLS happens on that client anyway.
pub(crate) fn client(
    base_url: &str,
    connect_timeout: Duration,
) -> Result<reqwest::Client, ProviderError> {
    // A proxy variable withheld from the environment (its URL has a password) still applies.
    let mut builder = crate::vault::with_proxies(reqwest::Client::builder())
        .connect_timeout(connect_timeout)
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("taco/", env!("CARGO_PKG_VERSION")));
    if base_url.starts_with("http://") {
        builder = builder.tls_certs_only(Vec::new());
    }
    builder
        .build()
        .map_err(|e| ProviderError::Config(format!("cannot set up the HTTP client: {e}")))
}
