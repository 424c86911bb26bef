//! Which models a provider's server offers, for the `/model` picker: OpenAI-compatible and
//! Anthropic `GET …/models` (`{"data":[{"id":…}]}`), Ollama `GET /api/tags`
//! (`{"models":[{"name":…}]}`). Asked with the provider's own client and key, bounded in time
//! and size; a failure is a short message for the picker, never the key.

use std::time::Duration;

use serde_json::Value;

use super::ProviderError;
use super::http::{Advice, Endpoint, send_error};

/// How long a listing may take in all (connect, headers and body).
pub const LIST_WITHIN: Duration = Duration::from_secs(3);
/// The largest listing read (OpenRouter's, the longest known, is a few hundred KiB).
pub const LIST_MAX_BYTES: usize = 1 << 20;
/// Most models kept from one listing (a picker row each).
pub const LIST_MAX_MODELS: usize = 2000;

/// How a server lists its models.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// `{base_url}/models` answering `{"data":[{"id":…}]}` (the base URL includes `/v1`).
    OpenAi,
    /// `{base_url}/v1/models` answering `{"data":[{"id":…}]}`.
    Anthropic,
    /// `{base_url}/api/tags` answering `{"models":[{"name":…}]}`.
    Ollama,
}

/// Why a server's models could not be listed: one line for the picker, never the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelsError {
    /// Nothing answered (refused, unresolvable, reset).
    #[error("{0}")]
    Unreachable(String),
    /// No complete answer in time.
    #[error("no answer from {url} within {secs} s")]
    TimedOut {
        /// What was asked.
        url: String,
        /// The bound, in seconds.
        secs: u64,
    },
    /// An error status.
    #[error("{url} answered HTTP {status}{hint}")]
    Status {
        /// What was asked.
        url: String,
        /// The status.
        status: u16,
        /// What it likely means.
        hint: &'static str,
    },
    /// A reply over the size bound.
    #[error("the model list from {url} is over {} KiB; not read", .max / 1024)]
    TooLarge {
        /// What was asked.
        url: String,
        /// The bound in bytes.
        max: usize,
    },
    /// A reply that is not the expected JSON.
    #[error("the model list from {url} is not what {expected} looks like: {why}")]
    Malformed {
        /// What was asked.
        url: String,
        /// The shape expected.
        expected: &'static str,
        /// What is wrong.
        why: String,
    },
    /// The request could not be made (a key that cannot be sent, a bad URL).
    #[error("{0}")]
    Config(String),
}

/// The path of the model list for `api`, under an endpoint's base URL.
fn path(api: Api, base: &str) -> &'static str {
    match api {
        Api::OpenAi => "/models",
        // `ANTHROPIC_BASE_URL` has no `/v1`, but one pasted with it works for requests too.
        Api::Anthropic if base.ends_with("/v1") => "/models?limit=1000",
        Api::Anthropic => "/v1/models?limit=1000",
        Api::Ollama => "/api/tags",
    }
}

/// Asks `endpoint`'s server for its models, within `within` and `max` bytes.
pub(crate) async fn list(
    endpoint: &Endpoint,
    api: Api,
    within: Duration,
    max: usize,
) -> Result<Vec<String>, ModelsError> {
    let (url, request) = endpoint
        .get(path(api, endpoint.base()))
        .map_err(|e| ModelsError::Config(e.to_string()))?;
    let asked =
        async {
            let mut response = request.send().await.map_err(|e| {
                let error = send_error(&e, &url, endpoint.connect_timeout(), Advice::default());
                match error {
                    ProviderError::Connect { .. } => ModelsError::Unreachable(error.to_string()),
                    other => ModelsError::Config(other.to_string()),
                }
            })?;
            let status = response.status().as_u16();
            if !(200..300).contains(&status) {
                return Err(ModelsError::Status {
                    url: url.clone(),
                    status,
                    hint: status_hint(status),
                });
            }
            let mut body = Vec::new();
            while let Some(chunk) = response.chunk().await.map_err(|e| {
                ModelsError::Unreachable(format!("the reply from {url} broke off: {e}"))
            })? {
                if body.len() + chunk.len() > max {
                    return Err(ModelsError::TooLarge {
                        url: url.clone(),
                        max,
                    });
                }
                body.extend_from_slice(&chunk);
            }
            parse(api, &body).map_err(|(expected, why)| ModelsError::Malformed {
                url: url.clone(),
                expected,
                why,
            })
        };
    match tokio::time::timeout(within, asked).await {
        Ok(listed) => listed,
        Err(_) => Err(ModelsError::TimedOut {
            url: url.clone(),
            secs: within.as_secs().max(1),
        }),
    }
}

/// What an error status most likely means here.
fn status_hint(status: u16) -> &'static str {
    match status {
        401 | 403 => " (the API key was not accepted)",
        404 => " (this server does not list its models there; check base_url)",
        _ => "",
    }
}

/// The model ids of a listing, sorted and without duplicates; `Err((expected shape, why))`.
pub fn parse(api: Api, body: &[u8]) -> Result<Vec<String>, (&'static str, String)> {
    let (field, id, expected) = match api {
        Api::OpenAi | Api::Anthropic => ("data", "id", "{\"data\":[{\"id\":…}]}"),
        Api::Ollama => ("models", "name", "{\"models\":[{\"name\":…}]}"),
    };
    let value: Value = serde_json::from_slice(body).map_err(|e| (expected, e.to_string()))?;
    let items = (value.get(field).and_then(Value::as_array))
        .ok_or_else(|| (expected, format!("no \"{field}\" list")))?;
    let mut models: Vec<String> = items
        .iter()
        .filter_map(|item| item.get(id)?.as_str())
        .map(str::trim)
        // A name is an id, not prose: an absurdly long one is junk, not a model.
        .filter(|name| !name.is_empty() && name.len() <= 256)
        .map(String::from)
        .collect();
    models.sort();
    models.dedup();
    models.truncate(LIST_MAX_MODELS);
    Ok(models)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_api_lists_its_own_shape_sorted_and_deduplicated() {
        let openai = br#"{"object":"list","data":[{"id":"b"},{"id":"a"},{"id":"a"},{"x":1}]}"#;
        assert_eq!(parse(Api::OpenAi, openai).unwrap(), ["a", "b"]);
        assert_eq!(parse(Api::Anthropic, openai).unwrap(), ["a", "b"]);
        let ollama = br#"{"models":[{"name":"qwen3:8b","size":1},{"name":"llama3.2:latest"}]}"#;
        assert_eq!(
            parse(Api::Ollama, ollama).unwrap(),
            ["llama3.2:latest", "qwen3:8b"]
        );
    }

    #[test]
    fn a_wrong_shape_says_what_was_expected() {
        let (expected, why) = parse(Api::Ollama, br#"{"data":[]}"#).unwrap_err();
        assert!(expected.contains("models"), "{expected}");
        assert!(why.contains("no \"models\" list"), "{why}");
        let (_, why) = parse(Api::OpenAi, b"<html>").unwrap_err();
        assert!(!why.is_empty());
    }

    #[test]
    fn paths_follow_each_api() {
        assert_eq!(path(Api::OpenAi, "http://h/v1"), "/models");
        assert_eq!(
            path(Api::Anthropic, "https://api.anthropic.com"),
            "/v1/models?limit=1000"
        );
        assert_eq!(path(Api::Anthropic, "http://h/v1"), "/models?limit=1000");
        assert_eq!(path(Api::Ollama, "http://h"), "/api/tags");
    }
}
