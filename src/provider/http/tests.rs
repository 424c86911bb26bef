//! Unit tests of error bodies, retry rules and headers.

use super::*;
use proptest::strategy::Strategy;
use serde_json::json;

#[test]
fn nested_openrouter_message_is_unwrapped() {
    let body = br#"{"error":{"message":"{\n \"error\": {\"code\": 429, \"message\": \"Resource exhausted.\", \"status\": \"RESOURCE_EXHAUSTED\"}}","code":429}}"#;
    let detail = parse_body(body, 429);
    assert_eq!(detail.message, "Resource exhausted.");
    assert_eq!(detail.code.as_deref(), Some("429"));
}

#[test]
fn string_errors_and_plain_text() {
    assert_eq!(
        parse_body(br#"{"error":"model not found"}"#, 404).message,
        "model not found"
    );
    assert_eq!(parse_body(b"Bad Gateway\n", 502).message, "Bad Gateway");
    assert_eq!(parse_body(b"", 503).message, "Service Unavailable");
    let vllm = br#"{"object":"error","message":"bad","type":"BadRequestError","code":400}"#;
    assert_eq!(parse_body(vllm, 400).message, "bad");
}

#[test]
fn in_band_errors_are_classified() {
    let err = stream_error(&json!({"message": "boom", "type": "server_error"}));
    assert_eq!(
        err,
        ProviderError::Api {
            message: "boom (server_error)".into(),
            retryable: true
        }
    );
    let err = stream_error(&json!({"message": "too long", "code": "context_length_exceeded"}));
    assert!(!err.is_retryable());
    assert!(stream_error(&json!({"message": "?"})).is_retryable());
    for (kind, again) in [
        ("overloaded_error", true),
        ("rate_limit_error", true),
        ("api_error", true),
        ("timeout_error", true),
        ("invalid_request_error", false),
        ("authentication_error", false),
        ("permission_error", false),
        ("not_found_error", false),
        ("billing_error", false),
        ("request_too_large", false),
    ] {
        let err = stream_error(&json!({"type": kind, "message": "m"}));
        assert_eq!(err.is_retryable(), again, "{kind}");
        assert!(err.to_string().contains(kind), "{err}");
    }
    assert!(!stream_error(&json!({"message": "no", "code": 400})).is_retryable());
}

#[test]
fn retry_headers() {
    let mut headers = HeaderMap::new();
    headers.insert("retry-after", "2".parse().unwrap());
    assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
    headers.insert("retry-after-ms", "1500.5".parse().unwrap());
    assert_eq!(retry_after(&headers), Some(Duration::from_secs_f64(1.5005)));
    headers.insert("retry-after-ms", "1e300".parse().unwrap());
    headers.insert(
        "retry-after",
        "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap(),
    );
    assert_eq!(
        retry_after(&headers),
        Some(Duration::ZERO),
        "a past date: now"
    );
    let soon = httpdate::fmt_http_date(std::time::SystemTime::now() + Duration::from_secs(30));
    headers.insert("retry-after", soon.parse().unwrap());
    let wait = retry_after(&headers).unwrap();
    assert!(
        wait > Duration::from_secs(25) && wait <= Duration::from_secs(30),
        "{wait:?}"
    );
}

#[test]
fn clients_build_for_plain_and_tls_servers() {
    let timeout = Duration::from_secs(1);
    assert!(client("http://127.0.0.1:11434", timeout).is_ok());
    assert!(client("https://api.example.com/v1", timeout).is_ok());
}

#[test]
fn excerpt_respects_char_boundaries() {
    assert_eq!(excerpt("ééé", 2), "éé…");
    assert_eq!(excerpt("ab", 2), "ab");
}

proptest::proptest! {
    /// Any error body (noise, or JSON shapes with the key in them) gives a short message
    /// without the key, and never a panic.
    #[test]
    fn any_error_body_gives_a_short_keyless_message(
        status in 100u16..600,
        parts in proptest::collection::vec(proptest::prop_oneof![
            proptest::collection::vec(proptest::arbitrary::any::<u8>(), 0..64),
            proptest::sample::select(vec![
                &b"{\"error\":{\"message\":\""[..], b"\",\"type\":\"", b"\"}}", b"{",
                b"\"code\":429,", b"\"error\":", b"\"message\":\"{\\\"error\\\":", b"sk-test-123456",
            ]).prop_map(<[u8]>::to_vec),
        ], 0..24),
    ) {
        let body = parts.concat();
        let key = Secret::new("sk-test-123456");
        let ctx = ErrorContext {
            provider: "p",
            model: "m",
            url: "http://h/v1",
            key_env: Some("KEY"),
            key: Some(&key),
            base_url_hint: "",
        };
        let message = http_error(status, &HeaderMap::new(), &body, &ctx, Advice::default())
            .to_string();
        proptest::prop_assert!(!message.contains(key.expose()), "{}", message);
        proptest::prop_assert!(message.chars().count() < 1_000, "{}", message);
        let _ = json_instead_of_stream(&body, "p");
    }
}

#[test]
fn a_key_across_the_excerpt_cut_is_removed_whole() {
    let key = Secret::new("sk-test-0123456789abcdefghij");
    let body = format!("{}{}", "x".repeat(490), key.expose());
    let ctx = ErrorContext {
        provider: "openai",
        model: "m",
        url: "http://127.0.0.1:1/v1",
        key_env: Some("OPENAI_API_KEY"),
        key: Some(&key),
        base_url_hint: "",
    };
    let advice = Advice {
        refused: None,
        missing_model: None,
    };
    let error = http_error(500, &HeaderMap::new(), body.as_bytes(), &ctx, advice);
    let text = error.to_string();
    assert!(!text.contains("sk-test-01"), "{text}");
}
