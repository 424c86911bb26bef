//! The HTTP client of every OAuth request (discovery, registration, token exchange and
//! refresh): bounded in time and size, through taco's proxies, redirects only within one
//! origin (and none where the SDK asks for none). A hostile authorization server that hangs,
//! or answers with an endless body, costs one bounded wait and a clear error.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures_util::StreamExt;
use rmcp::transport::auth::{
    OAuthHttpClient, OAuthHttpClientError, OAuthHttpClientFuture, OAuthHttpRedirectPolicy,
    OAuthHttpRequest,
};

/// The largest OAuth response read (a metadata document or a token response is a few KiB).
pub const MAX_BODY: usize = 256 * 1024;

/// Why an OAuth request failed, in words for the user (never a token: no body is quoted).
#[derive(Debug, thiserror::Error)]
pub enum OAuthHttpError {
    /// No answer in time.
    #[error("{url} did not answer within {secs} s")]
    TimedOut {
        /// Where it went (no query: a code could be in it).
        url: String,
        /// The bound.
        secs: u64,
    },
    /// The body passed [`MAX_BODY`].
    #[error("{url} answered with more than {MAX_BODY} bytes; taco stopped reading")]
    TooLarge {
        /// Where it went.
        url: String,
    },
    /// The request could not be made or read.
    #[error("{url}: {why}")]
    Failed {
        /// Where it went.
        url: String,
        /// reqwest's words.
        why: String,
    },
}

/// The last failure of a [`BoundedClient`], in words: the SDK keeps only "Request failed"
/// of a failed token request, so the login asks here what happened.
pub type LastFailure = Arc<Mutex<Option<String>>>;

/// The bounded client.
pub struct BoundedClient {
    follow: reqwest::Client,
    stop: reqwest::Client,
    timeout: Duration,
    last: LastFailure,
}

impl BoundedClient {
    /// A client whose every request ends within `timeout`.
    pub fn new(timeout: Duration) -> Result<Self, String> {
        let build = |policy| {
            crate::vault::with_proxies(reqwest::Client::builder())
                .connect_timeout(timeout)
                .timeout(timeout)
                .redirect(policy)
                .build()
                .map_err(|e| format!("no HTTP client: {e}"))
        };
        Ok(Self {
            follow: build(super::super::server::same_origin_redirects())?,
            stop: build(reqwest::redirect::Policy::none())?,
            timeout,
            last: LastFailure::default(),
        })
    }

    /// Where its last failure is kept.
    pub fn last_failure(&self) -> LastFailure {
        Arc::clone(&self.last)
    }
}

/// Takes the last failure kept in `last`.
pub fn take_failure(last: &LastFailure) -> Option<String> {
    last.lock().unwrap_or_else(PoisonError::into_inner).take()
}

/// `url` without its query and fragment, for messages.
fn shown(url: &reqwest::Url) -> String {
    let mut url = url.clone();
    url.set_query(None);
    url.set_fragment(None);
    url.to_string()
}

impl OAuthHttpClient for BoundedClient {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        Box::pin(async move {
            let redirect = request.redirect_policy;
            let bound = request
                .timeout
                .map_or(self.timeout, |t| t.min(self.timeout));
            let request = reqwest::Request::try_from(request.request)
                .map_err(|e| Box::new(e) as OAuthHttpClientError)?;
            let url = shown(request.url());
            let client = match redirect {
                OAuthHttpRedirectPolicy::Stop => &self.stop,
                _ => &self.follow,
            };
            let failed = |e: reqwest::Error| {
                if e.is_timeout() {
                    OAuthHttpError::TimedOut {
                        url: url.clone(),
                        secs: bound.as_secs().max(1),
                    }
                } else {
                    OAuthHttpError::Failed {
                        url: url.clone(),
                        why: super::super::server::plain(&e),
                    }
                }
            };
            let read = async {
                let response = client.execute(request).await.map_err(failed)?;
                let mut builder = http::Response::builder()
                    .status(response.status())
                    .version(response.version());
                for (name, value) in response.headers() {
                    builder = builder.header(name, value);
                }
                let mut body = Vec::new();
                let mut stream = response.bytes_stream();
                while let Some(chunk) = stream.next().await {
                    let chunk = chunk.map_err(failed)?;
                    if chunk.len() > MAX_BODY - body.len() {
                        return Err(OAuthHttpError::TooLarge { url: url.clone() });
                    }
                    body.extend_from_slice(&chunk);
                }
                builder.body(body).map_err(|e| OAuthHttpError::Failed {
                    url: url.clone(),
                    why: e.to_string(),
                })
            };
            let error = match tokio::time::timeout(bound, read).await {
                Ok(Ok(response)) => return Ok(response),
                Ok(Err(e)) => e,
                Err(_) => OAuthHttpError::TimedOut {
                    url: url.clone(),
                    secs: bound.as_secs().max(1),
                },
            };
            *self.last.lock().unwrap_or_else(PoisonError::into_inner) = Some(error.to_string());
            Err(Box::new(error) as OAuthHttpClientError)
        })
    }
}
