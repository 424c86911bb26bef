//! OpenTelemetry (issue 31): taco's events as GenAI spans (`fold`), exported over OTLP/HTTP
//! while taco runs (`export`) or written as OTLP JSON from a recorded file (`json`), and the
//! W3C trace context taco is started in and hands to its tool processes (`ids`).
//!
//! Off unless configured: `[otel] endpoint`, or `OTEL_EXPORTER_OTLP_ENDPOINT` /
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`; `OTEL_SDK_DISABLED=true` turns it off whatever says so.

use std::collections::BTreeMap;

use serde::Deserialize;

pub mod attrs;
pub mod export;
pub mod fold;
mod fold_calls;
pub mod ids;
pub mod json;
pub mod live;
pub mod open;

pub use fold::SpanFold;
pub use ids::{TraceParent, TraceSetup};

/// `[otel]` as written.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OtelConfig {
    /// The collector's base URL (`http://localhost:4318`): spans go to `<endpoint>/v1/traces`.
    pub endpoint: Option<String>,
    /// Headers sent with every export (`Authorization = "${OTEL_TOKEN}"`: a `${NAME}` value
    /// comes from the environment). Their values are secrets: never logged or shown.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// `service.name` (default `taco`, or `OTEL_SERVICE_NAME`).
    pub service_name: Option<String>,
    /// Prompts, answers, tool arguments and results in spans (masked); default false.
    #[serde(default)]
    pub capture_content: bool,
    /// Turns export off (`false`) even when an endpoint is set.
    pub enabled: Option<bool>,
}

/// Where and how spans are exported, resolved from `[otel]` and the standard variables.
#[derive(Clone, PartialEq, Eq)]
pub struct Exporting {
    /// The traces URL (`…/v1/traces`).
    pub url: String,
    /// Header names and values (secret values).
    pub headers: Vec<(String, String)>,
    /// `service.name`.
    pub service_name: String,
    /// `OTEL_RESOURCE_ATTRIBUTES`, as `key=value` pairs.
    pub resource: Vec<(String, String)>,
    /// Content in spans.
    pub capture_content: bool,
}

impl std::fmt::Debug for Exporting {
    // Header values are secrets: only their names are shown.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("Exporting")
            .field("url", &shown_url(&self.url))
            .field("headers", &names)
            .field("service_name", &self.service_name)
            .field("capture_content", &self.capture_content)
            .finish()
    }
}

/// The variables the exporter's headers come from: secret, whatever their names say.
pub const HEADER_VARS: [&str; 2] = [
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
];

/// Resolves whether and where to export; `Ok(None)`: off. `env` reads taco's environment
/// (secret variables through the vault).
pub fn resolve(
    config: &OtelConfig,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<Exporting>, String> {
    let set = |name: &str| env(name).filter(|v| !v.trim().is_empty());
    if set("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
        || config.enabled == Some(false)
    {
        return Ok(None);
    }
    let url = if let Some(url) = set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
        url
    } else if let Some(base) = set("OTEL_EXPORTER_OTLP_ENDPOINT").or(config.endpoint.clone()) {
        format!("{}/v1/traces", base.trim().trim_end_matches('/'))
    } else {
        return Ok(None);
    };
    let url = url.trim().to_string();
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(format!(
            "[otel] endpoint must be an http:// or https:// URL, got {}",
            shown_url(&url)
        ));
    }
    let mut headers = Vec::new();
    for (name, value) in &config.headers {
        let value = crate::mcp::config::expand(value, env)
            .map_err(|e| format!("[otel] header {name}: {e}"))?;
        headers.push((name.clone(), value));
    }
    // The variables' headers over the file's (the signal's own first), as the spec has it.
    for var in HEADER_VARS.iter().rev() {
        if let Some(list) = set(var) {
            for (name, value) in parse_pairs(&list) {
                headers.retain(|(n, _)| !n.eq_ignore_ascii_case(&name));
                headers.push((name, value));
            }
        }
    }
    let service_name = set("OTEL_SERVICE_NAME")
        .or(config.service_name.clone())
        .unwrap_or_else(|| "taco".to_string());
    let resource = set("OTEL_RESOURCE_ATTRIBUTES")
        .map(|list| parse_pairs(&list))
        .unwrap_or_default();
    Ok(Some(Exporting {
        url,
        headers,
        service_name,
        resource,
        capture_content: config.capture_content,
    }))
}

/// `k1=v1,k2=v2` (values percent-decoded, as the OTel variables are written); bounded.
fn parse_pairs(list: &str) -> Vec<(String, String)> {
    list.split(',')
        .take(64)
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), percent_decode(v.trim())))
        .filter(|(k, _)| !k.is_empty())
        .collect()
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(byte) = text
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(byte);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A URL as it may be shown: without a user or password in it.
pub fn shown_url(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
            let host = rest[..end].rsplit('@').next().unwrap_or("");
            format!("{scheme}://{host}{}", &rest[end..])
        }
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        }
    }

    #[test]
    fn off_unless_an_endpoint_is_set_and_off_when_disabled() {
        let none = OtelConfig::default();
        assert_eq!(resolve(&none, &env_of(&[])).unwrap(), None);
        let on = resolve(
            &none,
            &env_of(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318/")]),
        );
        assert_eq!(on.unwrap().unwrap().url, "http://c:4318/v1/traces");
        let traces = env_of(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://t:1/custom"),
        ]);
        assert_eq!(
            resolve(&none, &traces).unwrap().unwrap().url,
            "http://t:1/custom"
        );
        let file = OtelConfig {
            endpoint: Some("https://otel.example".into()),
            ..Default::default()
        };
        let got = resolve(&file, &env_of(&[])).unwrap().unwrap();
        assert_eq!(got.url, "https://otel.example/v1/traces");
        assert_eq!(got.service_name, "taco");
        let off = env_of(&[("OTEL_SDK_DISABLED", "TRUE")]);
        assert_eq!(resolve(&file, &off).unwrap(), None);
        let disabled = OtelConfig {
            enabled: Some(false),
            ..file.clone()
        };
        assert_eq!(resolve(&disabled, &env_of(&[])).unwrap(), None);
        let bad = OtelConfig {
            endpoint: Some("ftp://user:pw@x".into()),
            ..Default::default()
        };
        let err = resolve(&bad, &env_of(&[])).unwrap_err();
        assert!(err.contains("ftp://x") && !err.contains("pw"), "{err}");
    }

    #[test]
    fn headers_from_the_file_and_the_variables_and_never_shown() {
        let mut file = OtelConfig {
            endpoint: Some("http://c".into()),
            ..Default::default()
        };
        file.headers
            .insert("authorization".into(), "${MY_OTEL}".into());
        file.headers.insert("x-team".into(), "core".into());
        let env = env_of(&[
            ("MY_OTEL", "Bearer s3cret"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "x-team=infra,x-a=b%20c"),
            ("OTEL_RESOURCE_ATTRIBUTES", "ci.job=42"),
            ("OTEL_SERVICE_NAME", "ci-taco"),
        ]);
        let got = resolve(&file, &env).unwrap().unwrap();
        let find = |n: &str| {
            got.headers
                .iter()
                .find(|(k, _)| k == n)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(find("authorization"), Some("Bearer s3cret"));
        assert_eq!(find("x-team"), Some("infra"));
        assert_eq!(find("x-a"), Some("b c"));
        assert_eq!(got.service_name, "ci-taco");
        assert_eq!(got.resource, [("ci.job".to_string(), "42".to_string())]);
        let shown = format!("{got:?}");
        assert!(
            !shown.contains("s3cret") && shown.contains("authorization"),
            "{shown}"
        );
        file.headers.insert("k".into(), "${MISSING}".into());
        assert!(resolve(&file, &env).unwrap_err().contains("MISSING"));
    }

    #[test]
    fn a_url_is_shown_without_its_credentials() {
        assert_eq!(
            shown_url("https://u:p@h:1/v1/traces"),
            "https://h:1/v1/traces"
        );
        assert_eq!(shown_url("http://h/x?a=b@c"), "http://h/x?a=b@c");
    }
}
