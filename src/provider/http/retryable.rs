//! Whether a failed call may pass when tried again, and when: the error's type or code, the
//! status, the server's `retry-after-ms` / `Retry-After`.

use std::time::Duration;

use reqwest::header::HeaderMap;

use super::Detail;

/// Whether an error's type or code says a retry may help; `None` when it does not say.
pub(super) fn kind_retryable(detail: &Detail) -> Option<bool> {
    let mut verdict = None;
    for value in [&detail.kind, &detail.code].into_iter().flatten() {
        if let Ok(status) = value.parse::<u16>() {
            return Some(status_retryable(status));
        }
        let value = value.to_ascii_lowercase();
        // Anthropic's types are covered too: `request_too_large` never, `api_error` again.
        const NEVER: [&str; 9] = [
            "insufficient_quota",
            "invalid",
            "authentication",
            "permission",
            "not_found",
            "context_length",
            "unsupported",
            "billing",
            "too_large",
        ];
        const AGAIN: [&str; 7] = [
            "server_error",
            "api_error",
            "overloaded",
            "rate_limit",
            "timeout",
            "unavailable",
            "exhausted",
        ];
        if NEVER.iter().any(|k| value.contains(k)) {
            return Some(false);
        }
        if AGAIN.iter().any(|k| value.contains(k)) {
            verdict = Some(true);
        }
    }
    verdict
}

/// Whether a status may pass when tried again (timeouts, conflicts, limits, server errors).
pub(super) fn status_retryable(status: u16) -> bool {
    matches!(status, 408 | 409 | 429) || status >= 500
}

/// A header's value as trimmed text.
pub(super) fn header<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
}

/// `retry-after-ms` (OpenAI, Anthropic) first, then `Retry-After` in seconds or as an HTTP
/// date (a date in the past means now).
pub(super) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let number = |name| {
        header(headers, name)?
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
    };
    let from_ms =
        number("retry-after-ms").and_then(|ms| Duration::try_from_secs_f64(ms / 1e3).ok());
    from_ms
        .or_else(|| number("retry-after").and_then(|s| Duration::try_from_secs_f64(s).ok()))
        .or_else(|| {
            let date = httpdate::parse_http_date(header(headers, "retry-after")?).ok()?;
            Some(
                date.duration_since(std::time::SystemTime::now())
                    .unwrap_or(Duration::ZERO),
            )
        })
}
