//! Reading a final response: the body up to the size cap, turned into text by content type
//! (HTML within the bounds of `html`), or an error quoting the page.

use reqwest::header::{CONTENT_LENGTH, CONTENT_TYPE};
use serde_json::{Value, json};

use super::{flatten, html};
use crate::tools::builtin::{looks_binary, truncate_str};
use crate::tools::{ToolError, ToolSettings, budget};

/// Bytes of an error page quoted in the error.
const SNIPPET: usize = 500;

/// An error with its causes: reqwest's own message rarely says what went wrong.
pub(super) fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// A header's value, or empty.
pub(super) fn header(response: &reqwest::Response, name: reqwest::header::HeaderName) -> String {
    response
        .headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string()
}

/// Reads a final (non-redirect) response into the tool's result.
/// `redirects` are the ones followed on the way (listed in the result, within the cap).
pub(super) async fn read(
    mut response: reqwest::Response,
    settings: &ToolSettings,
    redirects: &[String],
) -> Result<Value, ToolError> {
    let status = response.status();
    let final_url = response.url().to_string();
    let content_type = header(&response, CONTENT_TYPE);
    let kind = Kind::of(&content_type);
    if status.is_success() && kind == Kind::Binary {
        // Not worth downloading: the model only gets a description.
        let size = header(&response, CONTENT_LENGTH);
        let size = if size.is_empty() {
            "unknown size".to_string()
        } else {
            format!("{size} bytes")
        };
        return Ok(json!({
            "url": final_url,
            "status": status.as_u16(),
            "content_type": content_type,
            "text": format!("[{content_type} content, {size}; not shown]"),
            "truncated": false,
        }));
    }

    let cap = settings.fetch_max_bytes;
    let mut body = Vec::new();
    let mut truncated = false;
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| ToolError::failed(format!("reading {final_url} failed: {}", chain(&e))))?
    {
        // Stop at the cap; a body of exactly the cap is not cut (the next chunk decides).
        let room = cap.saturating_sub(body.len());
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            truncated = true;
            break;
        }
        body.extend_from_slice(&chunk);
    }
    drop(response);

    let kind = kind.sniffed(&body);
    if !status.is_success() {
        // An error page only needs a snippet: no layout.
        let text = match kind {
            Kind::Html => flatten::strip(&body),
            _ => String::from_utf8_lossy(&body).into_owned(),
        };
        return Err(ToolError::failed(format!(
            "HTTP {status} from {final_url}: {}",
            truncate_str(text.trim(), SNIPPET)
        )));
    }
    let (text, converted_note) = match kind {
        Kind::Html => {
            let converted = html::to_text(body, settings).await;
            (converted.text, converted.note)
        }
        Kind::Binary => (
            format!("[binary content, {} bytes; not shown]", body.len()),
            None,
        ),
        Kind::Text | Kind::Sniff => (String::from_utf8_lossy(&body).into_owned(), None),
    };
    let max = settings.max_output_bytes;
    Ok(budget::fit(max, |room| {
        let (shown, used) = budget::prefix_within(&text, room);
        let mut notes = Vec::new();
        if truncated {
            notes.push(format!("the body was cut at {cap} bytes"));
        }
        if shown.len() < text.len() {
            notes.push(format!(
                "the text was {} bytes; only the first {} are shown (output capped at {max} bytes)",
                text.len(),
                shown.len()
            ));
        }
        notes.extend(converted_note.iter().cloned());
        let mut result = json!({
            "url": final_url,
            "status": status.as_u16(),
            "content_type": content_type,
            "truncated": truncated || shown.len() < text.len(),
        });
        if !notes.is_empty() {
            result["note"] = json!(notes.join("; "));
        }
        if !redirects.is_empty() {
            result["redirects"] = json!(redirects);
        }
        result["text"] = json!(shown);
        (result, used)
    }))
}

/// Shortens the `text` of a finished result (an object) until it fits in `cap` bytes again.
pub(super) fn shorten_text(result: &mut Value, cap: usize) {
    if budget::json_len(result) <= cap {
        return;
    }
    let note = match result["note"].as_str() {
        Some(earlier) => format!("{earlier}; the text was shortened to fit the output cap"),
        None => "the text was shortened to fit the output cap".to_string(),
    };
    result["note"] = json!(note);
    result["truncated"] = json!(true);
    let excess = budget::json_len(result).saturating_sub(cap);
    if let Some(text) = result["text"].as_str() {
        let keep = budget::str_cost(text).saturating_sub(excess);
        let kept = budget::prefix_within(text, keep).0.to_string();
        result["text"] = json!(kept);
    }
}

/// How a body is turned into text, decided from its content type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Html,
    Text,
    /// Unknown or generic types: sniffed from the bytes.
    Sniff,
    Binary,
}

impl Kind {
    fn of(content_type: &str) -> Self {
        let mime = content_type
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        let textual = [
            "json",
            "xml",
            "javascript",
            "ecmascript",
            "yaml",
            "toml",
            "csv",
            "x-www-form-urlencoded",
        ];
        if mime.contains("html") {
            Kind::Html
        } else if mime.starts_with("text/") || textual.iter().any(|t| mime.contains(t)) {
            Kind::Text
        } else if mime.is_empty() || mime == "application/octet-stream" {
            Kind::Sniff
        } else {
            Kind::Binary
        }
    }

    /// Decides a [`Kind::Sniff`] from the bytes.
    fn sniffed(self, body: &[u8]) -> Self {
        match self {
            Kind::Sniff if looks_binary(body) => Kind::Binary,
            Kind::Sniff if looks_like_html(body) => Kind::Html,
            Kind::Sniff => Kind::Text,
            other => other,
        }
    }
}

fn looks_like_html(body: &[u8]) -> bool {
    let start = String::from_utf8_lossy(&body[..body.len().min(512)])
        .trim_start()
        .to_ascii_lowercase();
    start.starts_with("<!doctype html") || start.starts_with("<html") || start.starts_with("<head")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_kinds() {
        assert_eq!(Kind::of("text/html; charset=utf-8"), Kind::Html);
        assert_eq!(Kind::of("application/json"), Kind::Text);
        assert_eq!(Kind::of("application/problem+json"), Kind::Text);
        assert_eq!(Kind::of("image/png"), Kind::Binary);
        assert_eq!(Kind::of(""), Kind::Sniff);
        assert_eq!(
            Kind::Sniff.sniffed(b"  <!DOCTYPE html><p>Hi</p>"),
            Kind::Html
        );
        assert_eq!(Kind::Sniff.sniffed(b"\0\x01"), Kind::Binary);
        assert_eq!(Kind::Sniff.sniffed(b"plain"), Kind::Text);
    }
}
