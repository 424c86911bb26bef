//! `web_fetch`: GET a web page and return it as readable text.

use std::sync::OnceLock;
use std::time::Duration;

use reqwest::header::{CONTENT_LENGTH, CONTENT_TYPE};
use reqwest::{Client, Url};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{blocking, cancelled, looks_binary, truncate_str};
use crate::tools::{Policy, ToolContext, ToolError, ToolSettings, TypedTool};

/// Whole-request timeout (connect, headers and body).
const TIMEOUT: Duration = Duration::from_secs(30);
/// Column width HTML is rendered at.
const HTML_WIDTH: usize = 100;
/// Bytes of an error page quoted in the error.
const SNIPPET: usize = 500;

/// Fetches a URL over HTTP(S) with GET; HTML becomes text, binary bodies are described.
#[derive(Debug, Default)]
pub struct WebFetch {
    /// Built on first use: building a TLS client loads the root store, which costs time
    /// that runs which never fetch should not pay.
    client: OnceLock<Client>,
}

/// Arguments of `web_fetch`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct WebFetchParams {
    /// The http:// or https:// URL to GET.
    pub url: String,
}

impl WebFetch {
    /// A fetcher with its own (lazily built) HTTP client.
    pub fn new() -> Self {
        Self::default()
    }

    fn client(&self) -> Result<&Client, ToolError> {
        if let Some(client) = self.client.get() {
            return Ok(client);
        }
        let client = Client::builder()
            .timeout(TIMEOUT)
            .connect_timeout(Duration::from_secs(10))
            .user_agent(concat!("taco/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ToolError::failed(format!("cannot build the HTTP client: {e}")))?;
        // Another call may have won the race; either client is fine.
        Ok(self.client.get_or_init(|| client))
    }
}

impl TypedTool for WebFetch {
    type Params = WebFetchParams;
    const NAME: &'static str = "web_fetch";
    const POLICY_NOTE: &'static str = "allow for allow_hosts, else ask";
    const USAGE: Option<&'static str> = Some(
        "GET only; HTML comes back as readable text and long pages are cut at a size limit. Fetching a host outside the allowed list asks the user first.",
    );
    const DESCRIPTION: &'static str = "Fetch a web page or file over http(s) with GET. HTML is \
        converted to readable text; JSON and text are returned as is; other content is only \
        described. Large bodies are cut at a size cap.";

    fn default_policy(&self, params: &WebFetchParams, settings: &ToolSettings) -> Policy {
        match Url::parse(&params.url) {
            Ok(url) if host_allowed(&url, &settings.allow_hosts) => Policy::Allow,
            _ => Policy::Ask,
        }
    }

    async fn run(&self, params: WebFetchParams, ctx: &ToolContext) -> Result<Value, ToolError> {
        let url = Url::parse(&params.url).map_err(|e| {
            ToolError::InvalidArguments(format!("invalid URL '{}': {e}", params.url))
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(ToolError::InvalidArguments(format!(
                "only http and https URLs can be fetched, not '{}'",
                url.scheme()
            )));
        }
        let client = self.client()?;
        tokio::select! {
            result = fetch(client, url, &ctx.settings) => result,
            () = ctx.cancel.cancelled() => Err(cancelled()),
        }
    }
}

/// Whether the URL's host is an allowed host or a subdomain of one.
fn host_allowed(url: &Url, allow_hosts: &[String]) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let host = host.to_ascii_lowercase();
    allow_hosts.iter().any(|entry| {
        let entry = entry
            .trim()
            .trim_start_matches("*.")
            .trim_matches('.')
            .to_ascii_lowercase();
        !entry.is_empty()
            && (host == entry
                || host
                    .strip_suffix(&entry)
                    .is_some_and(|prefix| prefix.ends_with('.')))
    })
}

async fn fetch(client: &Client, url: Url, settings: &ToolSettings) -> Result<Value, ToolError> {
    let shown_url = url.to_string();
    let mut response =
        client.get(url).send().await.map_err(|e| {
            ToolError::failed(format!("fetching {shown_url} failed: {}", chain(&e)))
        })?;
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

    let text = blocking(move || Ok(to_text(kind, &body))).await?;
    if !status.is_success() {
        return Err(ToolError::failed(format!(
            "HTTP {status} from {final_url}: {}",
            truncate_str(text.trim(), SNIPPET)
        )));
    }
    let max = settings.max_output_bytes;
    let mut result = json!({
        "url": final_url,
        "status": status.as_u16(),
        "content_type": content_type,
        "truncated": truncated || text.len() > max,
    });
    if truncated {
        result["note"] = json!(format!("the body was cut at {cap} bytes"));
    } else if text.len() > max {
        result["note"] = json!(format!("the text was cut at {max} bytes"));
    }
    result["text"] = json!(truncate_str(&text, max));
    Ok(result)
}

/// An error with its causes: reqwest's own message rarely says what went wrong.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

fn header(response: &reqwest::Response, name: reqwest::header::HeaderName) -> String {
    response
        .headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string()
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
}

fn to_text(kind: Kind, body: &[u8]) -> String {
    let kind = match kind {
        Kind::Sniff if looks_binary(body) => Kind::Binary,
        Kind::Sniff if looks_like_html(body) => Kind::Html,
        Kind::Sniff => Kind::Text,
        other => other,
    };
    match kind {
        Kind::Html => html2text::from_read(body, HTML_WIDTH)
            .unwrap_or_else(|_| String::from_utf8_lossy(body).into_owned()),
        Kind::Binary => format!("[binary content, {} bytes; not shown]", body.len()),
        Kind::Text | Kind::Sniff => String::from_utf8_lossy(body).into_owned(),
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
    fn allow_hosts_match_exact_and_subdomains() {
        let allow = vec!["docs.rs".to_string(), "*.example.org".to_string()];
        let ok = |u: &str| host_allowed(&Url::parse(u).unwrap(), &allow);
        assert!(ok("https://docs.rs/x"));
        assert!(ok("https://sub.docs.rs/x"));
        assert!(ok("http://EXAMPLE.org"));
        assert!(ok("http://a.b.example.org/"));
        assert!(!ok("https://evildocs.rs/"));
        assert!(!ok("https://docs.rs.evil.com/"));
        assert!(!ok("file:///etc/passwd"));
    }

    #[test]
    fn content_kinds() {
        assert_eq!(Kind::of("text/html; charset=utf-8"), Kind::Html);
        assert_eq!(Kind::of("application/json"), Kind::Text);
        assert_eq!(Kind::of("application/problem+json"), Kind::Text);
        assert_eq!(Kind::of("image/png"), Kind::Binary);
        assert_eq!(Kind::of(""), Kind::Sniff);
        assert!(to_text(Kind::Sniff, b"  <!DOCTYPE html><p>Hi</p>").contains("Hi"));
        assert!(to_text(Kind::Sniff, b"\0\x01").starts_with("[binary"));
    }
}
