//! The Anthropic Messages provider against recorded wire fixtures, served byte for byte from a
//! loopback server and re-chunked at random boundaries; plus stream edge cases, HTTP error
//! bodies and the request body (checked against two real recorded requests).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use crate::support;

use std::sync::OnceLock;
use std::time::Duration;

use bytes::Bytes;
use proptest::prelude::*;
use serde_json::{Map, Value, json};
use support::wire::*;
use support::{Reply, TestServer, unreachable_url};
use taco::conversation::{Message, ToolCall, ToolSpec};
use taco::provider::anthropic::{AnthropicConfig, AnthropicProvider, decode_stream};
use taco::provider::{ProviderError, Secret};

#[path = "support/anthropic_expect.rs"]
mod anthropic_expect;

use anthropic_expect::check_outcome;

const KEY: &str = "sk-ant-FAKE-taco-test-key-0123456789";
const KEY_ENV: &str = "TEST_ANTHROPIC_API_KEY";
const TRUNCATED: ProviderError = ProviderError::Truncated {
    terminator: "message_stop",
};

fn config(server_url: &str) -> AnthropicConfig {
    AnthropicConfig {
        name: "testclaude".into(),
        base_url: server_url.to_string(),
        model: "claude-test".into(),
        api_key: Some(Secret::new(KEY)),
        api_key_env: Some(KEY_ENV.into()),
        max_tokens: 4096,
        thinking_budget: None,
        extra_body: Map::new(),
        connect_timeout: Duration::from_secs(5),
        idle_timeout: Duration::from_secs(10),
    }
}

fn call_of(id: &str, name: &str, arguments: Value) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments,
    }
}

/// A tool loop with thinking, two parallel calls (one failed) and the max-turns notice.
fn conversation() -> Vec<Message> {
    let mut assistant = Message::assistant(
        Some("Let me look.".into()),
        Some("I should call both tools.".into()),
        vec![
            call_of("toolu_1", "get_weather", json!({"city": "Paris"})),
            call_of("toolu_2", "read_file", Value::String("{\"path\": ".into())),
        ],
    );
    assistant.reasoning_signature = Some("sig-1".into());
    vec![
        Message::system("You are taco."),
        Message::system("Tool context: none."),
        Message::user("Weather in Paris?"),
        assistant,
        Message::tool("toolu_1", "get_weather", r#"{"temp_c":21}"#.into()),
        Message::tool(
            "toolu_2",
            "read_file",
            r#"{"error":"invalid arguments"}"#.into(),
        ),
        Message::system("You have reached the maximum number of turns."),
    ]
}

fn tools() -> Vec<ToolSpec> {
    weather_tool()
}

/// Calls the provider once with `messages` and `tools`; the future's error, or the stream.
async fn call_with(
    config: AnthropicConfig,
    messages: &[Message],
    tools: &[ToolSpec],
) -> Result<Outcome, ProviderError> {
    call_provider(&AnthropicProvider::new(config)?, messages, tools).await
}

async fn call(config: AnthropicConfig) -> Result<Outcome, ProviderError> {
    call_with(config, &conversation(), &tools()).await
}

/// Serves `reply` once and calls the provider; returns the outcome and the request.
async fn exchange(
    reply: Reply,
    tweak: impl FnOnce(&mut AnthropicConfig),
) -> (Result<Outcome, ProviderError>, support::RecordedRequest) {
    let server = TestServer::start(vec![reply]).await;
    let mut config = config(&server.url());
    tweak(&mut config);
    let outcome = call(config).await;
    let mut requests = server.requests();
    assert_eq!(requests.len(), 1, "exactly one request");
    (outcome, requests.remove(0))
}

fn is_anthropic_stream(name: &str) -> bool {
    name.starts_with("anthropic_")
        && name.ends_with(".sse")
        && name != "anthropic_openai_compat_tool_index_starts_at_1.sse"
}

fn text_reply() -> Reply {
    Reply::sse(split_events(&fixture("anthropic_docs_basic_stream.sse")))
}

// ---- Every fixture through the loopback server, one event per write.

async fn check_fixture(name: &str) {
    let (outcome, request) = exchange(Reply::sse(split_events(&fixture(name))), |_| {}).await;
    let outcome = outcome.unwrap_or_else(|e| panic!("{name}: the call failed: {e}"));
    check_outcome(name, &outcome);
    assert_eq!(request.path, "/v1/messages");
    assert_eq!(request.json()["model"], "claude-test");
}

macro_rules! fixture_tests {
    ($($test:ident => $file:literal,)*) => {
        $(
            #[tokio::test]
            async fn $test() {
                check_fixture($file).await;
            }
        )*

        #[test]
        fn every_anthropic_stream_fixture_has_a_test() {
            let covered = [$($file),*];
            for name in fixture_names(is_anthropic_stream) {
                assert!(covered.contains(&name.as_str()), "no loopback test for {name}");
            }
        }
    };
}

fixture_tests! {
    docs_basic => "anthropic_docs_basic_stream.sse",
    docs_error_event => "anthropic_docs_error_event_snippet.sse",
    docs_thinking_without_usage => "anthropic_docs_thinking_stream.sse",
    docs_tool_use => "anthropic_docs_tool_use_stream.sse",
    duplicate_message_start_is_ignored => "anthropic_duplicate_message_start_SYNTHETIC.sse",
    first_event_overloaded => "anthropic_first_event_overloaded_error.sse",
    message_delta_input_tokens => "anthropic_message_delta_input_tokens.sse",
    midstream_overloaded_without_event_lines => "anthropic_midstream_overloaded_error.sse",
    refusal => "anthropic_refusal.sse",
    sdkpy_basic_without_final_blank_line => "anthropic_sdkpy_basic_response.sse",
    sdkpy_compaction_block_ignored => "anthropic_sdkpy_compaction_response.sse",
    sdkpy_fallback_block_ignored => "anthropic_sdkpy_fallback_response.sse",
    sdkpy_incomplete_partial_json => "anthropic_sdkpy_incomplete_partial_json_response.sse",
    sdkpy_refusal => "anthropic_sdkpy_refusal_response.sse",
    sdkpy_tool_use_without_final_blank_line => "anthropic_sdkpy_tool_use_response.sse",
    spliced_message_start_is_truncated => "anthropic_spliced_message_start_SYNTHETIC.sse",
    real_after_tool_result => "anthropic_stream_after_tool_result_real.sse",
    real_padded_data_lines => "anthropic_stream_text_after_429_real_padding.sse",
    real_tool_use_only => "anthropic_stream_tool_use_only_real.sse",
    real_tool_use_only_2 => "anthropic_stream_tool_use_only_real_2.sse",
    text_with_ping => "anthropic_text_ping.sse",
    text_then_tool_use => "anthropic_text_then_tool_use.sse",
    tool_use_without_arguments => "anthropic_text_then_tool_use_no_args.sse",
    thinking_signature_text => "anthropic_thinking_signature_text.sse",
}

// ---- Re-chunking: the turn never depends on where the bytes were split.

/// Every Anthropic stream fixture with its outcome decoded from one unsplit chunk.
fn baselines() -> &'static [Baseline] {
    static BASELINES: OnceLock<Vec<Baseline>> = OnceLock::new();
    BASELINES.get_or_init(|| baselines_of(is_anthropic_stream, decode_chunks))
}

fn decode_chunks(chunks: Vec<Bytes>) -> Outcome {
    collect_now(decode_stream(futures_util::stream::iter(
        chunks.into_iter().map(Ok),
    )))
}

fn decode_bytes(bytes: &[u8]) -> Outcome {
    decode_chunks(vec![Bytes::copy_from_slice(bytes)])
}

#[test]
fn unsplit_fixtures_decode_to_the_expected_turns() {
    assert!(
        baselines().len() >= 24,
        "fixtures missing: {}",
        baselines().len()
    );
    for (name, _, outcome) in baselines() {
        check_outcome(name, outcome);
    }
}

#[test]
fn one_byte_chunks_give_the_same_turn() {
    assert_one_byte_reads_match(baselines(), decode_chunks);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn random_chunking_gives_the_same_turn(
        which in any::<prop::sample::Index>(),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..48),
    ) {
        let (name, bytes, baseline) = which.get(baselines());
        let cuts: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
        prop_assert_eq!(&decode_chunks(split_at(bytes, &cuts)), baseline, "{}", name);
    }
}

/// The `.payloads.jsonl` twins carry the same events without `event:` lines: the type comes
/// from the JSON alone, and the turn is the same.
#[test]
fn payload_twins_decode_to_the_same_turn() {
    let twins = fixture_names(|n| n.starts_with("anthropic_") && n.ends_with(".payloads.jsonl"));
    assert!(twins.len() >= 8, "{twins:?}");
    for twin in twins {
        let sse_name = twin.replace(".payloads.jsonl", ".sse");
        let text = String::from_utf8(fixture(&twin)).expect("UTF-8");
        let framed: String = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| format!("data: {l}\n\n"))
            .collect();
        let outcome = decode_bytes(framed.as_bytes());
        check_outcome(&sse_name, &outcome);
    }
}

// ---- Stream edge cases.

#[test]
fn a_final_event_without_its_blank_line_counts_only_when_whole() {
    let full = fixture("anthropic_docs_basic_stream.sse");
    let text = String::from_utf8(full).expect("UTF-8");
    let stop = "event: message_stop\ndata: {\"type\": \"message_stop\"}\n\n";
    assert!(text.ends_with(stop));
    // One newline or none after the final data line: still complete.
    for cut in [1, 2] {
        let outcome = decode_bytes(&text.as_bytes()[..text.len() - cut]);
        assert_eq!(outcome.error, None, "cut {cut}");
        assert_eq!(outcome.turn.content, "Hello!");
    }
    // The final JSON cut short: truncated.
    let outcome = decode_bytes(&text.as_bytes()[..text.len() - 4]);
    assert_eq!(outcome.error, Some(TRUNCATED));
    assert_eq!(outcome.turn.content, "Hello!");
    // A whole final delta without its blank line is decoded, but without message_stop the
    // stream is still truncated.
    let body = text.strip_suffix(stop).expect("suffix");
    let extra = r#"data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" More"}}"#;
    let outcome = decode_bytes(format!("{body}{extra}").as_bytes());
    assert_eq!(outcome.turn.content, "Hello! More");
    assert_eq!(outcome.error, Some(TRUNCATED));
}

#[test]
fn a_stream_cut_anywhere_before_message_stop_is_truncated() {
    let full = fixture("anthropic_text_then_tool_use.sse");
    let stop = full.len() - "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n".len();
    for cut in [0, 10, full.len() / 3, full.len() / 2, stop - 1, stop] {
        let outcome = decode_bytes(&full[..cut]);
        assert_eq!(outcome.error, Some(TRUNCATED), "cut at {cut}");
    }
    let outcome = decode_bytes(&full[..stop]);
    assert_eq!(outcome.turn.tool_calls.len(), 1, "chunks before the cut");
    assert_eq!(outcome.turn.content, "I'll invoke the JSON response tool.");
}

#[test]
fn spliced_stream_never_mixes_the_two_messages() {
    let outcome = decode_bytes(&fixture("anthropic_spliced_message_start_SYNTHETIC.sse"));
    assert_eq!(outcome.error, Some(TRUNCATED));
    assert!(
        outcome
            .error
            .as_ref()
            .is_some_and(ProviderError::is_retryable)
    );
    let turn = &outcome.turn;
    assert!(!turn.reasoning.contains("Let me call"), "{turn:?}");
    assert_ne!(turn.reasoning_signature.as_deref(), Some("sig-second"));
    assert!(turn.tool_calls.iter().all(|c| c.id != "toolu_second"));
}

#[test]
fn in_stream_error_variants_are_retryable_api_errors() {
    let variants = String::from_utf8(fixture(
        "anthropic_real_midstream_error_payload_variants.jsonl",
    ))
    .expect("UTF-8");
    for line in variants.lines().filter(|l| !l.trim().is_empty()) {
        let stream = format!("event: error\ndata: {line}\n\n");
        let outcome = decode_bytes(stream.as_bytes());
        assert_eq!(
            outcome.error,
            Some(ProviderError::Api {
                message: "Overloaded (overloaded_error)".into(),
                retryable: true
            }),
            "{line}"
        );
    }
    for (kind, retryable) in [
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
        let event = json!({"type": "error", "error": {"type": kind, "message": "Something"}});
        let outcome = decode_bytes(format!("data: {event}\n\n").as_bytes());
        match outcome.error {
            Some(ProviderError::Api {
                message,
                retryable: got,
            }) => {
                assert_eq!(got, retryable, "{kind}");
                assert!(message.contains(kind), "{message}");
            }
            other => panic!("{kind}: expected an Api error, got {other:?}"),
        }
    }
}

#[test]
fn unknown_events_and_blocks_are_ignored() {
    let stream = [
        r#"{"type":"message_start","message":{"usage":{"input_tokens":3,"cache_creation_input_tokens":4,"cache_read_input_tokens":5,"output_tokens":1}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"opaque"}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"content_block_start","index":1,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"query\":\"x\"}"}}"#,
        r#"{"type":"content_block_stop","index":1}"#,
        r#"{"type":"content_block_start","index":2,"content_block":{"type":"text","text":"Hi"}}"#,
        r#"{"type":"content_block_delta","index":2,"delta":{"type":"citations_delta","citation":{"type":"x"}}}"#,
        r#"{"type":"some_future_event","delta":"a string where objects usually are"}"#,
        r#"{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":" there"}}"#,
        r#"{"type":"content_block_stop","index":2}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":9}}"#,
        r#"{"type":"message_stop"}"#,
    ];
    let body: String = stream.iter().map(|e| format!("data: {e}\n\n")).collect();
    let outcome = decode_bytes(format!(": comment\nevent: ping\n\n{body}").as_bytes());
    assert_eq!(outcome.error, None);
    assert_eq!(outcome.turn.content, "Hi there");
    assert!(
        outcome.turn.tool_calls.is_empty(),
        "server tools are not ours"
    );
    assert_eq!(
        outcome.turn.usage.input_tokens, 12,
        "cached tokens count as input"
    );
    assert_eq!(outcome.turn.usage.output_tokens, 9);
}

#[test]
fn a_whole_input_in_the_start_event_is_used_when_no_deltas_follow() {
    let stream = [
        r#"{"type":"message_start","message":{}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_a","name":"read_file","input":{"path":"a.txt"}}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_b","name":"read_file","input":{"path":"ignored"}}}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\":\"b.txt\"}"}}"#,
        r#"{"type":"content_block_stop","index":1}"#,
        r#"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_c","name":"list","input":{"dir":"."}}}"#,
        r#"{"type":"message_stop"}"#,
    ];
    let body: String = stream.iter().map(|e| format!("data: {e}\n\n")).collect();
    let outcome = decode_bytes(body.as_bytes());
    assert_eq!(outcome.error, None);
    let args: Vec<(&str, &Value)> = outcome
        .turn
        .tool_calls
        .iter()
        .map(|c| (c.id.as_str(), &c.arguments))
        .collect();
    assert_eq!(
        args,
        [
            ("toolu_a", &json!({"path": "a.txt"})),
            ("toolu_b", &json!({"path": "b.txt"})),
            ("toolu_c", &json!({"dir": "."}))
        ]
    );
}

#[test]
fn data_that_is_not_json_is_malformed() {
    let outcome = decode_bytes(b"event: content_block_delta\ndata: {oops\n\n");
    match outcome.error {
        Some(ProviderError::Malformed(message)) => assert!(message.contains("{oops"), "{message}"),
        other => panic!("expected Malformed, got {other:?}"),
    }
    // A known event whose fields have the wrong shape is malformed too.
    let outcome = decode_bytes(b"data: {\"type\":\"content_block_delta\",\"index\":\"x\"}\n\n");
    assert!(matches!(outcome.error, Some(ProviderError::Malformed(_))));
}

#[tokio::test]
async fn in_stream_overloaded_error_comes_after_the_text_before_it() {
    let chunks = split_events(&fixture("anthropic_midstream_overloaded_error.sse"));
    let (outcome, _) = exchange(Reply::sse(chunks), |_| {}).await;
    let outcome = outcome.expect("headers arrived");
    assert_eq!(outcome.turn.content, "Hello");
    assert_eq!(
        outcome.error,
        Some(ProviderError::Api {
            message: "Overloaded (overloaded_error)".into(),
            retryable: true
        })
    );
}

#[tokio::test]
async fn an_idle_stream_times_out() {
    let first = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\n";
    let reply = Reply::sse([first]).hold(Duration::from_secs(5));
    let (outcome, _) = exchange(reply, |c| c.idle_timeout = Duration::from_millis(300)).await;
    match outcome.expect("headers arrived").error {
        Some(ProviderError::Timeout(message)) => {
            assert!(message.contains("/v1/messages"), "{message}");
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
}

// ---- HTTP errors and transport failures.

/// A recorded error response: `{"status", "headers", "body"}` or a bare body.
fn recorded_error(name: &str, default_status: u16) -> Reply {
    let value: Value = serde_json::from_slice(&fixture(name)).expect("JSON fixture");
    let (status, body) = match value.get("body") {
        Some(body) => (
            value["status"]
                .as_u64()
                .map_or(default_status, |s| s as u16),
            body.clone(),
        ),
        None => (default_status, value.clone()),
    };
    let mut reply = Reply::status(status);
    let headers = value.get("headers").and_then(Value::as_object);
    for (name, header) in headers.into_iter().flatten() {
        if name != "content-length" && name != "connection" {
            reply = reply.header(name, header.as_str().unwrap_or(""));
        }
    }
    reply
        .header("Content-Type", "application/json")
        .body(body.to_string())
}

async fn failing(reply: Reply) -> ProviderError {
    match exchange(reply, |_| {}).await.0 {
        Err(e) => e,
        Ok(outcome) => panic!("expected the call to fail, got {outcome:?}"),
    }
}

/// (status, message, retryable, retry_after) of an `Http` error.
fn http(e: &ProviderError) -> (u16, &str, bool, Option<Duration>) {
    match e {
        ProviderError::Http {
            status,
            message,
            retryable,
            retry_after,
        } => (*status, message.as_str(), *retryable, *retry_after),
        other => panic!("expected an HTTP error, got {other:?}"),
    }
}

#[tokio::test]
async fn http_400_invalid_request_is_final() {
    let e = failing(recorded_error(
        "anthropic_http400_invalid_request_error.json",
        400,
    ))
    .await;
    let (status, message, retryable, _) = http(&e);
    assert_eq!((status, retryable), (400, false));
    assert!(
        message.contains("unexpected `tool_use_id` found in `tool_result` blocks"),
        "{message}"
    );
    assert!(
        message.contains("'testclaude' rejected the request"),
        "{message}"
    );
}

#[tokio::test]
async fn http_400_prompt_too_long_is_a_typed_context_exceeded_error() {
    let body = json!({"type": "error", "error": {"type": "invalid_request_error",
        "message": "prompt is too long: 208310 tokens > 200000 maximum"}});
    let e = failing(Reply::status(400).json(&body)).await;
    // Typed, so the orchestrator compacts and retries instead of failing.
    let ProviderError::ContextExceeded(message) = &e else {
        panic!("{e:?}")
    };
    assert!(!e.is_retryable());
    assert!(
        message.contains("208310 tokens > 200000 maximum"),
        "{message}"
    );
    assert!(message.contains("too long for model"), "{message}");
    let body = json!({"type": "error", "error": {"type": "request_too_large",
        "message": "Request exceeds the maximum allowed number of bytes."}});
    let e = failing(Reply::status(413).json(&body)).await;
    assert!(matches!(e, ProviderError::ContextExceeded(_)), "{e:?}");
    assert_eq!(e.kind(), "context_exceeded");
}

#[tokio::test]
async fn http_429_rate_limit_is_retryable() {
    for name in [
        "anthropic_http429_rate_limit_error.1.json",
        "anthropic_http429_rate_limit_error.2.json",
    ] {
        let reply = recorded_error(name, 429).header("retry-after", "7");
        let e = failing(reply).await;
        let (status, message, retryable, retry_after) = http(&e);
        assert_eq!((status, retryable), (429, true), "{name}");
        assert_eq!(retry_after, Some(Duration::from_secs(7)));
        assert!(
            message.contains("would exceed your organization's rate limit"),
            "{message}"
        );
        assert!(message.contains("rate limiting"), "{message}");
    }
}

#[tokio::test]
async fn http_529_overloaded_is_retryable() {
    let e = failing(recorded_error(
        "anthropic_http529_overloaded_error.json",
        529,
    ))
    .await;
    let (status, message, retryable, _) = http(&e);
    assert_eq!((status, retryable), (529, true));
    assert!(message.contains("Overloaded"), "{message}");
}

#[tokio::test]
async fn x_should_retry_false_wins_over_a_5xx() {
    let body = json!({"type": "error", "error": {"type": "api_error", "message": "Internal"}});
    let reply = Reply::status(500)
        .header("x-should-retry", "false")
        .json(&body);
    assert!(!http(&failing(reply).await).2);
    assert!(http(&failing(Reply::status(500).json(&body)).await).2);
}

#[tokio::test]
async fn http_404_names_the_model_the_provider_and_the_base_url_rule() {
    let e = failing(recorded_error("anthropic_error_shape_docs.json", 404)).await;
    let (status, message, retryable, _) = http(&e);
    assert_eq!((status, retryable), (404, false));
    for part in [
        "'claude-test'",
        "'testclaude'",
        "/v1/messages",
        "without /v1, like ANTHROPIC_BASE_URL",
        "The requested resource could not be found",
    ] {
        assert!(message.contains(part), "{part} missing in {message}");
    }
}

#[tokio::test]
async fn http_403_and_402_are_final() {
    let body = json!({"type": "error", "error": {"type": "permission_error",
        "message": "Your API key does not have permission to use the specified resource."}});
    let e = failing(Reply::status(403).json(&body)).await;
    let (_, message, retryable, _) = http(&e);
    assert!(!retryable);
    assert!(message.contains(KEY_ENV), "{message}");
    let body = json!({"type": "error", "error": {"type": "billing_error",
        "message": "Your credit balance is too low."}});
    let e = failing(Reply::status(402).json(&body)).await;
    let (_, message, retryable, _) = http(&e);
    assert!(!retryable);
    assert!(message.contains("billing"), "{message}");
}

#[tokio::test]
async fn http_401_names_the_variable_and_never_the_key() {
    let body = json!({"type": "error", "error": {"type": "authentication_error",
        "message": format!("invalid x-api-key {KEY}")}});
    let (outcome, request) = exchange(Reply::status(401).json(&body), |_| {}).await;
    let e = outcome.expect_err("401");
    let (status, message, retryable, _) = http(&e);
    assert_eq!((status, retryable), (401, false));
    assert!(message.contains(KEY_ENV), "{message}");
    assert!(message.contains("invalid x-api-key"), "{message}");
    for shown in [e.to_string(), format!("{e:?}")] {
        assert!(!shown.contains(KEY), "the key leaked: {shown}");
    }
    assert_eq!(request.header("x-api-key"), Some(KEY));
    assert_eq!(request.header("authorization"), None);
}

#[tokio::test]
async fn http_401_without_a_key_says_to_set_one() {
    let body = json!({"type": "error", "error": {"type": "authentication_error",
        "message": "x-api-key header is required"}});
    let (outcome, request) = exchange(Reply::status(401).json(&body), |c| c.api_key = None).await;
    let e = outcome.expect_err("401");
    assert!(http(&e).1.contains(&format!("Set {KEY_ENV}")), "{e}");
    assert_eq!(request.header("x-api-key"), None);
}

#[tokio::test]
async fn an_error_object_instead_of_a_stream_is_reported() {
    let body =
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
    let e = failing(Reply::status(200).json(&body)).await;
    assert_eq!(
        e,
        ProviderError::Api {
            message: "Overloaded (overloaded_error)".into(),
            retryable: true
        }
    );
    let message = recorded_error("anthropic_nonstream_tool_use_response.json", 200);
    let e = failing(message).await;
    assert!(
        matches!(e, ProviderError::Config(ref m) if m.contains("support streaming")),
        "{e:?}"
    );
}

#[tokio::test]
async fn no_error_ever_shows_the_key() {
    let key_body = json!({"type": "error", "error": {"type": "invalid_request_error",
        "message": format!("bad key {KEY} in request")}});
    let replies = [
        Reply::status(400).json(&key_body),
        Reply::status(403).json(&key_body),
        Reply::status(404).json(&key_body),
        Reply::status(429).json(&key_body),
        Reply::status(500).body(format!("upstream said {KEY}")),
    ];
    for reply in replies {
        let e = failing(reply).await;
        for shown in [e.to_string(), format!("{e:?}")] {
            assert!(!shown.contains(KEY), "the key leaked: {shown}");
        }
    }
    let base = unreachable_url().await;
    let e = call(config(&base)).await.expect_err("nothing listens");
    assert!(!format!("{e} {e:?}").contains(KEY));
}

#[tokio::test]
async fn an_unreachable_server_is_a_connect_error_with_the_url() {
    let base = unreachable_url().await;
    let e = call(config(&base)).await.expect_err("nothing listens");
    match &e {
        ProviderError::Connect { url, .. } => assert_eq!(url, &format!("{base}/v1/messages")),
        other => panic!("expected Connect, got {other:?}"),
    }
    assert!(e.is_retryable());
}

#[test]
fn a_base_url_without_scheme_is_a_config_error() {
    let mut config = config("x");
    config.base_url = "api.anthropic.com".into();
    assert!(matches!(
        AnthropicProvider::new(config),
        Err(ProviderError::Config(_))
    ));
}

#[tokio::test]
async fn a_key_that_cannot_be_a_header_is_a_config_error_without_the_key() {
    let server = TestServer::start(vec![text_reply()]).await;
    let mut config = config(&server.url());
    config.api_key = Some(Secret::new("sk-ant-bad\nkey-0123456789"));
    let e = call(config).await.expect_err("bad header");
    assert!(
        matches!(e, ProviderError::Config(ref m) if m.contains(KEY_ENV)),
        "{e:?}"
    );
    assert!(!format!("{e} {e:?}").contains("key-0123456789"));
    assert!(server.requests().is_empty());
}

// ---- The request.

#[tokio::test]
async fn the_request_body_and_headers() {
    let (outcome, request) = exchange(text_reply(), |c| {
        c.thinking_budget = Some(2048);
        c.base_url.push('/');
    })
    .await;
    assert_eq!(outcome.expect("ok").turn.content, "Hello!");
    assert_eq!(
        (request.method.as_str(), request.path.as_str()),
        ("POST", "/v1/messages")
    );
    assert_eq!(request.header("x-api-key"), Some(KEY));
    assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert_eq!(request.header("accept"), Some("text/event-stream"));
    assert_eq!(request.header("authorization"), None);
    let expected = json!({
        "model": "claude-test",
        "max_tokens": 4096,
        "stream": true,
        "system": "You are taco.\n\nTool context: none.",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "I should call both tools.", "signature": "sig-1"},
                {"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": "toolu_1", "name": "get_weather",
                 "input": {"city": "Paris"}},
                {"type": "tool_use", "id": "toolu_2", "name": "read_file", "input": {}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "{\"temp_c\":21}"},
                {"type": "tool_result", "tool_use_id": "toolu_2",
                 "content": "{\"error\":\"invalid arguments\"}", "is_error": true},
                {"type": "text",
                 "text": "[system] You have reached the maximum number of turns."},
            ]},
        ],
        "tools": [{"name": "get_weather", "description": "Current weather for a city.",
                   "input_schema": {"type": "object",
                                    "properties": {"city": {"type": "string"}}}}],
        "thinking": {"type": "enabled", "budget_tokens": 2048},
    });
    assert_eq!(request.json(), expected);
}

/// Makes a recorded SDK request comparable with ours: string content becomes one text block,
/// and the SDK's `caller` field of tool_use blocks (a beta feature) is dropped.
fn normalize_sdk_messages(messages: &Value) -> Value {
    let mut messages = messages.clone();
    for message in messages.as_array_mut().into_iter().flatten() {
        if let Some(text) = message["content"].as_str() {
            message["content"] = json!([{"type": "text", "text": text}]);
        }
        for block in message["content"].as_array_mut().into_iter().flatten() {
            if let Some(block) = block.as_object_mut() {
                block.remove("caller");
            }
        }
    }
    messages
}

fn sdk_request(name: &str) -> Value {
    serde_json::from_slice::<Value>(&fixture(name)).expect("JSON")["body"].clone()
}

fn sdk_tools(body: &Value) -> Vec<ToolSpec> {
    body["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| ToolSpec {
            name: t["name"].as_str().unwrap_or_default().into(),
            description: t["description"].as_str().unwrap_or_default().into(),
            parameters: t["input_schema"].clone(),
        })
        .collect()
}

/// Sends `messages` the way the recorded SDK request was made and compares the bodies.
async fn matches_recorded_request(name: &str, messages: Vec<Message>) {
    let recorded = sdk_request(name);
    let server = TestServer::start(vec![text_reply()]).await;
    let mut config = config(&server.url());
    config.model = recorded["model"].as_str().expect("model").into();
    config.max_tokens = recorded["max_tokens"].as_u64().expect("max_tokens");
    call_with(config, &messages, &sdk_tools(&recorded))
        .await
        .expect("call");
    let ours = server.requests()[0].json();
    let mut theirs = recorded.clone();
    theirs["messages"] = normalize_sdk_messages(&recorded["messages"]);
    assert_eq!(ours, theirs, "{name}");
}

#[tokio::test]
async fn the_first_real_request_is_reproduced() {
    let messages = vec![Message::user("What is the weather in SF?")];
    matches_recorded_request("anthropic_stream_tool_use_only_real.request.json", messages).await;
}

#[tokio::test]
async fn the_request_after_a_tool_result_is_reproduced() {
    let call = call_of(
        "toolu_018acGYLtfR52q9yDbWaEdQZ",
        "get_weather",
        json!({"location": "San Francisco, CA", "units": "f"}),
    );
    // Python's json.dumps wrote it: the degree sign is a literal `\u00b0` escape in the text.
    let result =
        r#"{"location": "San Francisco, CA", "temperature": "68\u00b0F", "condition": "Sunny"}"#;
    let messages = vec![
        Message::user("What is the weather in SF?"),
        Message::assistant(None, None, vec![call]),
        Message::tool(
            "toolu_018acGYLtfR52q9yDbWaEdQZ",
            "get_weather",
            result.into(),
        ),
    ];
    matches_recorded_request(
        "anthropic_stream_after_tool_result_real.request.json",
        messages,
    )
    .await;
}

#[tokio::test]
async fn without_tools_past_calls_and_results_are_sent_as_text() {
    let server = TestServer::start(vec![text_reply()]).await;
    call_with(config(&server.url()), &conversation(), &[])
        .await
        .expect("call");
    let body = server.requests()[0].json();
    assert!(body.get("tools").is_none(), "{body}");
    let text = body["messages"].to_string();
    assert!(
        !text.contains("tool_use") && !text.contains("tool_result"),
        "{text}"
    );
    assert_eq!(
        body["messages"][1]["content"][2],
        json!({"type": "text", "text": "[called tool `get_weather` with {\"city\":\"Paris\"}]"})
    );
    assert_eq!(
        body["messages"][2]["content"][0],
        json!({"type": "text", "text": "[tool `get_weather` returned: {\"temp_c\":21}]"})
    );
}

#[tokio::test]
async fn roles_alternate_and_empty_messages_are_left_out() {
    let server = TestServer::start(vec![text_reply()]).await;
    let unsigned = Message::assistant(Some("Hi.".into()), Some("thoughts".into()), Vec::new());
    let messages = [
        Message::user("one"),
        Message::user("two"),
        Message::assistant(Some("  ".into()), None, Vec::new()),
        Message::user("three"),
        unsigned,
        Message::user("four"),
    ];
    call_with(config(&server.url()), &messages, &[])
        .await
        .expect("call");
    let body = server.requests()[0].json();
    assert!(body.get("system").is_none(), "{body}");
    let text = |t: &str| json!({"type": "text", "text": t});
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": [text("one"), text("two"), text("three")]},
            {"role": "assistant", "content": [text("Hi.")]},
            {"role": "user", "content": [text("four")]},
        ]),
        "unsigned reasoning is not sent"
    );
}

#[tokio::test]
async fn extra_body_adds_replaces_and_removes_fields() {
    let (outcome, request) = exchange(text_reply(), |c| {
        c.thinking_budget = Some(1024);
        c.extra_body.insert("temperature".into(), json!(0.2));
        c.extra_body.insert("max_tokens".into(), json!(100));
        c.extra_body.insert("thinking".into(), Value::Null);
        c.extra_body.insert("stream".into(), json!(false));
        c.extra_body.insert("messages".into(), json!([]));
    })
    .await;
    assert!(outcome.is_ok());
    let body = request.json();
    assert_eq!(body["temperature"], 0.2);
    assert_eq!(body["max_tokens"], 100);
    assert!(body.get("thinking").is_none(), "null removes it: {body}");
    assert_eq!(body["stream"], true, "stream stays ours");
    assert_eq!(body["messages"].as_array().map(Vec::len), Some(3));
}

#[tokio::test]
async fn a_base_url_ending_in_v1_is_accepted() {
    let (outcome, request) = exchange(text_reply(), |c| c.base_url.push_str("/v1/")).await;
    assert!(outcome.is_ok());
    assert_eq!(request.path, "/v1/messages");
}

#[test]
fn cache_reads_are_prompt_tokens_and_counted_apart() {
    let body = concat!(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":10,\"cache_creation_input_tokens\":100,\"cache_read_input_tokens\":2000,\"output_tokens\":1}}}\n\n",
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":7}}\n\n",
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
    );
    let outcome = decode_bytes(body.as_bytes());
    assert_eq!(outcome.turn.usage.input_tokens, 2110);
    assert_eq!(outcome.turn.usage.cached_tokens, 2000);
    assert_eq!(outcome.turn.usage.output_tokens, 7);
}
