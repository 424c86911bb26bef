//! `web_fetch`: GET a web page and return it as readable text.
//!
//! Redirects are followed here, not by reqwest, so every hop gets the same checks as a fresh
//! call: a hop to the same host is followed at once; a hop to another host becomes a
//! [`ToolReply::NeedsFirst`] call of `web_fetch` that the orchestrator validates and approves
//! like any call (allow for `allow_hosts`, else ask; denied in headless runs), carrying the
//! redirects left. Every connection goes through the address policy (`policy`), and HTML is
//! converted within bounds (`html`).

mod body;
mod flatten;
mod html;
mod policy;
mod tokens;

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use reqwest::header::LOCATION;
use reqwest::{Client, StatusCode, Url, redirect};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::cancelled;
use crate::tools::{
    NeededCall, Policy, Tool, ToolContext, ToolError, ToolReply, ToolSettings, parse_params,
    schema_of,
};
use body::{chain, header, read, shorten_text};
pub use html::{HTML_HELPER_ARG, html_helper_main};
pub use policy::AllowPrivate;
use policy::{GuardedResolver, Refused};

/// The tool's name.
const NAME: &str = "web_fetch";
/// Whole-request timeout (connect, headers and body), per hop.
const TIMEOUT: Duration = Duration::from_secs(30);
/// Clients kept (one per port and `allow_private` list).
const MAX_CLIENTS: usize = 8;

/// Fetches a URL over HTTP(S) with GET; HTML becomes text, binary bodies are described.
#[derive(Debug, Default)]
pub struct WebFetch {
    /// Built on first use of a port: building a TLS client loads the root store, which costs
    /// time that runs which never fetch should not pay.
    clients: Mutex<Vec<CachedClient>>,
}

#[derive(Debug)]
struct CachedClient {
    port: u16,
    allow: Arc<AllowPrivate>,
    client: Client,
}

/// Arguments of `web_fetch`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct WebFetchParams {
    /// The http:// or https:// URL to GET.
    pub url: String,
    /// Redirects this call may still follow; set on the calls made for cross-host redirects.
    /// It can only lower the configured `max_redirects`, never raise it.
    #[serde(default)]
    #[schemars(skip)]
    pub max_redirects: Option<usize>,
}

impl WebFetch {
    /// A fetcher with its own (lazily built) HTTP clients.
    pub fn new() -> Self {
        Self::default()
    }

    /// The client for connections to `port` under `allow`.
    fn client(&self, port: u16, allow: &Arc<AllowPrivate>) -> Result<Client, ToolError> {
        let cached = |clients: &[CachedClient]| {
            clients
                .iter()
                .find(|c| c.port == port && c.allow == *allow)
                .map(|c| c.client.clone())
        };
        if let Some(client) = cached(&self.lock()) {
            return Ok(client);
        }
        let client = Client::builder()
            .timeout(TIMEOUT)
            .connect_timeout(Duration::from_secs(10))
            .user_agent(concat!("taco/", env!("CARGO_PKG_VERSION")))
            .redirect(redirect::Policy::none())
            // A proxy would resolve names itself, past the address policy.
            .no_proxy()
            .dns_resolver(Arc::new(GuardedResolver {
                allow: Arc::clone(allow),
                port,
            }))
            .build()
            .map_err(|e| ToolError::failed(format!("cannot build the HTTP client: {e}")))?;
        let mut clients = self.lock();
        // Another call may have built one meanwhile; either is fine.
        if let Some(client) = cached(&clients) {
            return Ok(client);
        }
        if clients.len() >= MAX_CLIENTS {
            clients.remove(0);
        }
        clients.push(CachedClient {
            port,
            allow: Arc::clone(allow),
            client: client.clone(),
        });
        Ok(client)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<CachedClient>> {
        self.clients.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Fetches `url`, following redirects on the same host; a redirect to another host is
    /// handed back as a call to make first.
    async fn fetch(
        &self,
        params: WebFetchParams,
        ctx: &ToolContext,
    ) -> Result<ToolReply, ToolError> {
        let settings = &ctx.settings;
        let mut url = parse_url(&params.url)?;
        let allow = Arc::new(
            AllowPrivate::parse(&settings.allow_private)
                .map_err(|e| ToolError::failed(format!("[tools.web_fetch] allow_private: {e}")))?,
        );
        let budget = params
            .max_redirects
            .map_or(settings.max_redirects, |m| m.min(settings.max_redirects));
        let mut redirects: Vec<String> = Vec::new();
        loop {
            policy::check_literal(&url, &allow).map_err(refused)?;
            let port = url.port_or_known_default().unwrap_or(0);
            let client = self.client(port, &allow)?;
            let response = client
                .get(url.clone())
                .send()
                .await
                .map_err(|e| ToolError::failed(send_error(&url, &e)))?;
            let Some(next) = redirect_target(&response, &url)? else {
                let result = read(response, settings, &redirects).await?;
                return Ok(ToolReply::Done(result));
            };
            if redirects.len() >= budget {
                return Err(ToolError::failed(format!(
                    "too many redirects: {url} redirects to {next} after {} redirects; the limit is {} ([tools.web_fetch] max_redirects)",
                    redirects.len(),
                    settings.max_redirects
                )));
            }
            redirects.push(url.to_string());
            if same_host(&url, &next) {
                url = next;
                continue;
            }
            // Another host: approved (or not) like a call of its own.
            return Ok(ToolReply::NeedsFirst {
                calls: vec![NeededCall {
                    name: NAME.to_string(),
                    arguments: json!({
                        "url": next.as_str(),
                        "max_redirects": budget - redirects.len(),
                    }),
                }],
                then: json!({ "redirects": redirects }),
            });
        }
    }
}

impl Tool for WebFetch {
    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> &str {
        "Fetch a web page or file over http(s) with GET. HTML is converted to readable text; \
         JSON and text are returned as is; other content is only described. Large bodies are \
         cut at a size cap."
    }

    fn parameters(&self) -> Value {
        schema_of::<WebFetchParams>()
    }

    fn validate(&self, arguments: &Value) -> Result<(), String> {
        parse_params::<WebFetchParams>(arguments).map(drop)
    }

    fn default_policy(&self, arguments: &Value, settings: &ToolSettings) -> Policy {
        let Ok(params) = parse_params::<WebFetchParams>(arguments) else {
            // Invalid arguments never run; validation reports them.
            return Policy::Allow;
        };
        match Url::parse(&params.url) {
            Ok(url) if host_allowed(&url, &settings.allow_hosts) => Policy::Allow,
            _ => Policy::Ask,
        }
    }

    fn policy_note(&self) -> &str {
        "allow for allow_hosts, else ask"
    }

    fn usage_instructions(&self) -> Option<&str> {
        Some(
            "GET only; HTML comes back as readable text and long pages are cut at a size limit. Fetching a host outside the allowed list asks the user first, and so does a redirect to another host. Local and private network addresses are refused unless the user allowed them.",
        )
    }

    fn call<'a>(
        &'a self,
        arguments: Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolReply, ToolError>> {
        async move {
            let params =
                parse_params::<WebFetchParams>(&arguments).map_err(ToolError::InvalidArguments)?;
            tokio::select! {
                result = self.fetch(params, ctx) => result,
                () = ctx.cancel.cancelled() => Err(cancelled()),
            }
        }
        .boxed()
    }

    fn resume<'a>(
        &'a self,
        then: Value,
        results: Vec<Result<Value, String>>,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolReply, ToolError>> {
        let cap = ctx.settings.max_output_bytes;
        async move { followed(then, results, cap).map(ToolReply::Done) }.boxed()
    }
}

/// The result of the call made for a cross-host redirect, with the redirects before it.
fn followed(
    then: Value,
    results: Vec<Result<Value, String>>,
    cap: usize,
) -> Result<Value, ToolError> {
    let mut redirects: Vec<Value> = then["redirects"].as_array().cloned().unwrap_or_default();
    let from = redirects
        .last()
        .and_then(Value::as_str)
        .unwrap_or("?")
        .to_string();
    let mut result = match results.into_iter().next() {
        Some(Ok(result)) => result,
        Some(Err(error)) => {
            return Err(ToolError::failed(format!(
                "the redirect from {from} was not followed: {error}"
            )));
        }
        None => return Err(ToolError::failed("the redirect was not followed")),
    };
    if let Some(later) = result["redirects"].as_array() {
        redirects.extend(later.iter().cloned());
    }
    let note = format!("followed a redirect from {from} to another host");
    let note = match result["note"].as_str() {
        Some(earlier) => format!("{note}; {earlier}"),
        None => note,
    };
    if result.is_object() {
        result["redirects"] = Value::Array(redirects);
        result["note"] = json!(note);
        // The page was cut to fit on its own; what was added here must fit too.
        shorten_text(&mut result, cap);
    }
    Ok(result)
}

fn parse_url(raw: &str) -> Result<Url, ToolError> {
    let url = Url::parse(raw)
        .map_err(|e| ToolError::InvalidArguments(format!("invalid URL '{raw}': {e}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(ToolError::InvalidArguments(format!(
            "only http and https URLs can be fetched, not '{}'",
            url.scheme()
        )));
    }
    Ok(url)
}

/// Where a redirect response points, resolved against `url`; `None` for other responses.
fn redirect_target(response: &reqwest::Response, url: &Url) -> Result<Option<Url>, ToolError> {
    let redirect = matches!(
        response.status(),
        StatusCode::MOVED_PERMANENTLY
            | StatusCode::FOUND
            | StatusCode::SEE_OTHER
            | StatusCode::TEMPORARY_REDIRECT
            | StatusCode::PERMANENT_REDIRECT
    );
    let location = header(response, LOCATION);
    if !redirect || location.is_empty() {
        return Ok(None);
    }
    let next = url.join(&location).map_err(|e| {
        ToolError::failed(format!(
            "{url} redirects to an invalid URL '{location}': {e}"
        ))
    })?;
    if !matches!(next.scheme(), "http" | "https") {
        return Err(ToolError::failed(format!(
            "refused: {url} redirects to '{next}'; only http and https redirects are followed"
        )));
    }
    Ok(Some(next))
}

fn same_host(a: &Url, b: &Url) -> bool {
    a.host_str()
        .zip(b.host_str())
        .is_some_and(|(a, b)| a.eq_ignore_ascii_case(b))
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

fn refused(error: Refused) -> ToolError {
    ToolError::failed(error.to_string())
}

/// Why a request failed: the address policy's refusal as is, else reqwest's error with its
/// causes.
fn send_error(url: &Url, error: &reqwest::Error) -> String {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(cause) = source {
        if let Some(refused) = cause.downcast_ref::<Refused>() {
            return refused.to_string();
        }
        source = cause.source();
    }
    format!("fetching {url} failed: {}", chain(error))
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
    fn resuming_adds_the_earlier_redirects() {
        let then = json!({"redirects": ["http://a/1", "http://a/2"]});
        let child = json!({"url": "http://b/3", "text": "t", "redirects": ["http://b/x"]});
        let result = followed(then.clone(), vec![Ok(child)], 65536).unwrap();
        assert_eq!(
            result["redirects"],
            json!(["http://a/1", "http://a/2", "http://b/x"])
        );
        assert!(result["note"].as_str().unwrap().contains("from http://a/2"));
        let err = followed(then.clone(), vec![Err("denied".into())], 65536).unwrap_err();
        assert!(err.to_string().contains("denied"), "{err}");
        // Near the cap already, the page text makes room for the redirects and note.
        let full = json!({"url": "http://b/3", "text": "\"".repeat(600), "truncated": false});
        let cap = full.to_string().len();
        let result = followed(then, vec![Ok(full)], cap).unwrap();
        assert!(result.to_string().len() <= cap, "{result}");
        assert_eq!(result["truncated"], true);
        assert!(
            result["note"].as_str().unwrap().contains("shortened"),
            "{result}"
        );
        assert!(result["text"].as_str().unwrap().len() > 400, "{result}");
    }
}
