//! The OpenAI-compatible provider against recorded wire fixtures, served byte for byte from a
//! loopback server and re-chunked at random boundaries; plus SSE framing vectors, HTTP error
//! bodies, transport failures and the request body.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use crate::support;

use std::sync::OnceLock;
use std::time::Duration;

use base64::prelude::{BASE64_STANDARD, Engine as _};
use bytes::Bytes;
use proptest::prelude::*;
use serde_json::{Map, Value, json};
use support::wire::*;
use support::{Reply, TestServer, unreachable_url};
use taco::conversation::{Message, ToolCall, ToolSpec};
use taco::provider::openai::{OpenAiConfig, OpenAiProvider, decode_stream};
use taco::provider::sse::SseDecoder;
use taco::provider::{ChatRequest, Provider, ProviderError, Secret};

const KEY: &str = "sk-FAKE-taco-test-key-0123456789";
const KEY_ENV: &str = "TESTPROV_API_KEY";

fn config(server_url: &str) -> OpenAiConfig {
    OpenAiConfig {
        name: "testprov".into(),
        base_url: format!("{server_url}/v1"),
        model: "test-model".into(),
        api_key: Some(Secret::new(KEY)),
        api_key_env: Some(KEY_ENV.into()),
        send_reasoning_content: false,
        extra_body: Map::new(),
        connect_timeout: Duration::from_secs(5),
        idle_timeout: Duration::from_secs(10),
    }
}

fn conversation() -> Vec<Message> {
    let call = ToolCall {
        id: "call_1".into(),
        name: "get_weather".into(),
        arguments: json!({"city": "Paris"}),
    };
    vec![
        Message::system("You are taco."),
        Message::user("Weather in Paris?"),
        Message::assistant(None, Some("I should call the tool.".into()), vec![call]),
        Message::tool("call_1", "get_weather", r#"{"temp_c":21}"#.into()),
    ]
}

fn tools() -> Vec<ToolSpec> {
    weather_tool()
}

/// Calls the provider once; the future's error, or the collected stream.
async fn call(config: OpenAiConfig) -> Result<Outcome, ProviderError> {
    call_provider(&OpenAiProvider::new(config)?, &conversation(), &tools()).await
}

/// Serves `reply` once and calls the provider; returns the outcome and the request body.
async fn exchange(
    reply: Reply,
    tweak: impl FnOnce(&mut OpenAiConfig),
) -> (Result<Outcome, ProviderError>, Value) {
    let server = TestServer::start(vec![reply]).await;
    let mut config = config(&server.url());
    tweak(&mut config);
    let outcome = call(config).await;
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "exactly one request");
    (outcome, requests[0].json())
}

fn is_openai_family(name: &str) -> bool {
    let prefixes = [
        "openai_",
        "deepseek_",
        "azure_",
        "xai_",
        "groq_",
        "openai_compat_",
    ];
    name.ends_with(".sse")
        && (prefixes.iter().any(|p| name.starts_with(p))
            || name == "anthropic_openai_compat_tool_index_starts_at_1.sse")
}

#[path = "support/openai_expect.rs"]
mod openai_expect;

use openai_expect::check_outcome;

/// Serves a fixture one event per write and checks the turn and the request.
async fn check_fixture(name: &str) {
    let chunks = split_events(&fixture(name));
    let (outcome, body) = exchange(Reply::sse(chunks), |_| {}).await;
    let outcome = outcome.unwrap_or_else(|e| panic!("{name}: the call failed: {e}"));
    check_outcome(name, &outcome);
    assert_eq!(body["model"], "test-model");
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert_eq!(body["messages"].as_array().map(Vec::len), Some(4));
    assert_eq!(body["tools"][0]["function"]["name"], "get_weather");
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
        fn every_openai_family_fixture_has_a_test() {
            let covered = [$($file),*];
            for name in fixture_names(is_openai_family) {
                assert!(covered.contains(&name.as_str()), "no loopback test for {name}");
            }
        }
    };
}

fixture_tests! {
    anthropic_compat_tool_index_starts_at_1 => "anthropic_openai_compat_tool_index_starts_at_1.sse",
    azure_prompt_filter_first_chunk => "azure_openai_chat_prompt_filter_first_chunk.sse",
    deepseek_chat_text => "deepseek_chat_text.sse",
    deepseek_chat_text_with_keepalives => "deepseek_chat_text_with_keepalive_comments_DERIVED.sse",
    deepseek_reasoning_then_text => "deepseek_reasoner_reasoning_then_text.sse",
    deepseek_reasoning_then_tool_call => "deepseek_reasoner_reasoning_then_tool_call.sse",
    deepseek_v4_via_azure_explicit_nulls => "deepseek_v4_via_azure_reasoning.sse",
    groq_whole_tool_call_x_groq_usage => "groq_tool_call_whole_x_groq_usage.sse",
    openai_finish_length => "openai_chat_finish_length.sse",
    openai_first_chunk_error => "openai_chat_first_chunk_error.sse",
    openai_logprobs => "openai_chat_logprobs.sse",
    openai_midstream_error_after_output => "openai_chat_midstream_error_after_output.sse",
    openai_parallel_tool_calls => "openai_chat_parallel_tool_calls.sse",
    openai_refusal => "openai_chat_refusal.sse",
    openai_single_tool_call => "openai_chat_single_tool_call.sse",
    openai_single_tool_call_strict => "openai_chat_single_tool_call_strict.sse",
    openai_text_obfuscation => "openai_chat_text_gpt41nano_obfuscation.sse",
    openai_text_n3_takes_choice_0 => "openai_chat_text_n3_multiple_choices.sse",
    openai_text_with_usage => "openai_chat_text_with_usage.sse",
    compat_second_delta_empty_name => "openai_compat_toolcall_second_delta_has_empty_name.sse",
    xai_reasoning_whole_tool_call => "xai_grok_reasoning_tool_call_whole.sse",
}

// ---- Re-chunking: the turn never depends on where the bytes were split.

/// Every OpenAI-family fixture with its outcome decoded from one unsplit chunk.
fn baselines() -> &'static [Baseline] {
    static BASELINES: OnceLock<Vec<Baseline>> = OnceLock::new();
    BASELINES.get_or_init(|| baselines_of(is_openai_family, decode_chunks))
}

fn decode_chunks(chunks: Vec<Bytes>) -> Outcome {
    collect_now(decode_stream(futures_util::stream::iter(
        chunks.into_iter().map(Ok),
    )))
}

#[test]
fn unsplit_fixtures_decode_to_the_expected_turns() {
    assert!(
        baselines().len() >= 21,
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

// ---- SSE framing.

fn sse_events(chunks: &[&[u8]]) -> Vec<(Option<String>, String, Option<String>)> {
    let mut decoder = SseDecoder::new();
    let mut events = Vec::new();
    for chunk in chunks {
        decoder.push(chunk);
        while let Some(e) = decoder.next_event().unwrap() {
            events.push((
                e.event.map(String::from),
                e.data.to_string(),
                e.id.map(String::from),
            ));
        }
    }
    decoder.finish().unwrap();
    events
}

#[test]
fn sse_framing_vectors() {
    let vectors: Value =
        serde_json::from_slice(&fixture("sse_framing_vectors.json")).expect("JSON");
    let vectors = vectors["vectors"].as_array().expect("vectors");
    assert!(vectors.len() >= 16);
    for vector in vectors {
        let name = vector["name"].as_str().unwrap_or("?");
        let chunks: Vec<Vec<u8>> = vector["chunks_b64"]
            .as_array()
            .expect("chunks")
            .iter()
            .map(|c| {
                BASE64_STANDARD
                    .decode(c.as_str().expect("base64 text"))
                    .expect("base64")
            })
            .collect();
        let expected = vector["expected_events"].as_array().expect("events");
        let check = |how: &str, events: Vec<(Option<String>, String, Option<String>)>| {
            assert_eq!(events.len(), expected.len(), "{name} ({how}): {events:?}");
            for (got, want) in events.iter().zip(expected) {
                assert_eq!(
                    got.0.as_deref(),
                    want["event"].as_str(),
                    "{name} ({how}) event"
                );
                assert_eq!(
                    got.1,
                    want["data"].as_str().expect("data"),
                    "{name} ({how}) data"
                );
                if let Some(id) = want.get("id") {
                    assert_eq!(got.2.as_deref(), id.as_str(), "{name} ({how}) id");
                }
            }
        };
        let refs: Vec<&[u8]> = chunks.iter().map(Vec::as_slice).collect();
        check("as given", sse_events(&refs));
        let all = chunks.concat();
        check(
            "one byte at a time",
            sse_events(&all.chunks(1).collect::<Vec<_>>()),
        );
        for cut in 0..=all.len() {
            let (a, b) = all.split_at(cut);
            check(&format!("split at {cut}"), sse_events(&[a, b"", b]));
        }
    }
}

#[test]
fn keepalive_comments_change_nothing() {
    let plain = sse_events(&[&fixture("deepseek_chat_text.sse")]);
    let with_comments = sse_events(&[&fixture(
        "deepseek_chat_text_with_keepalive_comments_DERIVED.sse",
    )]);
    assert_eq!(plain.len(), 403);
    assert_eq!(plain, with_comments);
}

// ---- HTTP errors and transport failures.

/// An error body fixture; some wrap it as `{"status": …, "body": {…}}`.
fn error_body(name: &str) -> Vec<u8> {
    let value: Value = serde_json::from_slice(&fixture(name)).expect("JSON fixture");
    match value.get("body") {
        Some(body) => body.to_string().into_bytes(),
        None => fixture(name),
    }
}

async fn failing(reply: Reply, tweak: impl FnOnce(&mut OpenAiConfig)) -> ProviderError {
    match exchange(reply, tweak).await.0 {
        Err(e) => e,
        Ok(outcome) => panic!("expected the call to fail, got {outcome:?}"),
    }
}

fn json_error(status: u16, body: Vec<u8>) -> Reply {
    Reply::status(status)
        .header("Content-Type", "application/json")
        .body(body)
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
async fn http_400_unsupported_parameter_is_final() {
    let body = error_body("openai_http400_unsupported_parameter.json");
    let e = failing(json_error(400, body), |_| {}).await;
    let (status, message, retryable, _) = http(&e);
    assert_eq!((status, retryable), (400, false));
    assert!(
        message.contains("Unsupported parameter: 'max_tokens' is not supported with this model."),
        "{message}"
    );
    assert!(message.contains("(parameter 'max_tokens')"), "{message}");
}

#[tokio::test]
async fn http_429_insufficient_quota_is_final_and_says_billing() {
    let e = failing(
        json_error(429, error_body("openai_http429_insufficient_quota.json")),
        |_| {},
    )
    .await;
    let (status, message, retryable, _) = http(&e);
    assert_eq!((status, retryable), (429, false));
    assert!(
        message.contains("You exceeded your current quota, please check your plan"),
        "{message}"
    );
    assert!(
        message.contains("quota") && message.contains("billing"),
        "{message}"
    );
}

#[tokio::test]
async fn http_429_rate_limit_is_retried_after_the_given_delay() {
    let body = error_body("openai_http429_rate_limit_exceeded.json");
    let e = failing(
        json_error(429, body.clone()).header("Retry-After", "2"),
        |_| {},
    )
    .await;
    let (_, message, retryable, retry_after) = http(&e);
    assert!(retryable);
    assert_eq!(retry_after, Some(Duration::from_secs(2)));
    assert!(
        message.contains("Rate limit reached for 10KTPM-200RPM in organization"),
        "{message}"
    );
    let reply = json_error(429, body)
        .header("retry-after-ms", "250")
        .header("Retry-After", "2");
    let e = failing(reply, |_| {}).await;
    assert_eq!(http(&e).3, Some(Duration::from_millis(250)));
}

#[tokio::test]
async fn http_429_openrouter_nested_error_is_unwrapped() {
    let e = failing(
        json_error(
            429,
            error_body("openrouter_style_http429_nested_error.json"),
        ),
        |_| {},
    )
    .await;
    let (_, message, retryable, _) = http(&e);
    assert!(retryable);
    assert!(
        message.contains("Resource has been exhausted (e.g. check quota)"),
        "{message}"
    );
    assert!(
        !message.contains('{'),
        "the nested JSON is unwrapped: {message}"
    );
}

#[tokio::test]
async fn x_should_retry_overrides_the_status() {
    let reply = Reply::status(500)
        .header("x-should-retry", "false")
        .body("upstream exploded");
    let e = failing(reply, |_| {}).await;
    let (status, message, retryable, _) = http(&e);
    assert_eq!((status, retryable), (500, false));
    assert!(message.contains("upstream exploded"), "{message}");
    let reply = json_error(400, b"{}".to_vec()).header("x-should-retry", "true");
    assert!(http(&failing(reply, |_| {}).await).2);
    let e = failing(Reply::status(503).body("busy"), |_| {}).await;
    assert!(http(&e).2, "5xx is retried");
}

#[tokio::test]
async fn http_401_names_the_variable_and_never_the_key() {
    let body = json!({"error": {
        "message": format!("Incorrect API key provided: {KEY}. You can find your API key at https://platform.openai.com/account/api-keys."),
        "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}});
    let server = TestServer::start(vec![Reply::status(401).json(&body)]).await;
    let e = call(config(&server.url())).await.expect_err("401");
    let (status, message, retryable, _) = http(&e);
    assert_eq!((status, retryable), (401, false));
    assert!(message.contains(KEY_ENV), "{message}");
    assert!(message.contains("Incorrect API key provided"), "{message}");
    for shown in [e.to_string(), format!("{e:?}")] {
        assert!(!shown.contains(KEY), "the key leaked: {shown}");
    }
    let sent = server.requests();
    assert_eq!(
        sent[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
}

#[tokio::test]
async fn http_401_without_a_key_says_to_set_one() {
    let body = json!({"error": {"message": "You didn't provide an API key.", "type": "invalid_request_error"}});
    let server = TestServer::start(vec![Reply::status(401).json(&body)]).await;
    let mut config = config(&server.url());
    config.api_key = None;
    let e = call(config).await.expect_err("401");
    let message = http(&e).1;
    assert!(message.contains(&format!("Set {KEY_ENV}")), "{message}");
    assert_eq!(server.requests()[0].header("authorization"), None);
}

#[tokio::test]
async fn http_404_names_the_model_and_the_url() {
    let body = json!({"error": {"message": "The model `test-model` does not exist", "code": "model_not_found"}});
    let server = TestServer::start(vec![Reply::status(404).json(&body)]).await;
    let e = call(config(&server.url())).await.expect_err("404");
    let (_, message, retryable, _) = http(&e);
    assert!(!retryable);
    let url = format!("{}/v1/chat/completions", server.url());
    for part in ["'test-model'", url.as_str(), "'testprov'", "does not exist"] {
        assert!(message.contains(part), "{part} missing in {message}");
    }
}

#[tokio::test]
async fn an_unreachable_server_is_a_connect_error_with_the_url() {
    let base = unreachable_url().await;
    let e = call(config(&base)).await.expect_err("nothing listens");
    match &e {
        ProviderError::Connect { url, reason } => {
            assert_eq!(url, &format!("{base}/v1/chat/completions"));
            assert!(reason.contains("connection refused"), "{reason}");
        }
        other => panic!("expected Connect, got {other:?}"),
    }
    assert!(e.is_retryable());
}

#[tokio::test]
async fn a_stream_cut_before_done_is_truncated() {
    let full = fixture("deepseek_chat_text.sse");
    for cut in [full.len() / 2, full.len() - "data: [DONE]\n\n".len()] {
        let (outcome, _) = exchange(Reply::sse(split_events(&full[..cut])), |_| {}).await;
        let outcome = outcome.expect("headers arrived");
        assert_eq!(
            outcome.error,
            Some(ProviderError::Truncated {
                terminator: "[DONE]"
            }),
            "cut at {cut}"
        );
        assert!(
            outcome
                .turn
                .content
                .starts_with("## **Holiday Name:** Starlight"),
            "chunks before the cut"
        );
    }
}

#[tokio::test]
async fn an_idle_stream_times_out() {
    let event = r#"data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}"#;
    let reply = Reply::sse([format!("{event}\n\n")]).hold(Duration::from_secs(5));
    let (outcome, _) = exchange(reply, |c| c.idle_timeout = Duration::from_millis(300)).await;
    let outcome = outcome.expect("headers arrived");
    assert_eq!(outcome.turn.content, "Hi");
    match outcome.error {
        Some(ProviderError::Timeout(message)) => {
            assert!(
                message.contains("no data from http://127.0.0.1:"),
                "{message}"
            );
            assert!(message.contains("0.3 s"), "{message}");
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
}

#[tokio::test]
async fn data_that_is_not_json_is_malformed() {
    let (outcome, _) = exchange(Reply::sse(["data: {oops\n\n"]), |_| {}).await;
    match outcome.expect("headers arrived").error {
        Some(ProviderError::Malformed(message)) => assert!(message.contains("{oops"), "{message}"),
        other => panic!("expected Malformed, got {other:?}"),
    }
}

#[tokio::test]
async fn json_instead_of_a_stream_is_reported() {
    let body = json!({"error": {"message": "quota gone", "type": "insufficient_quota"}});
    let e = failing(Reply::status(200).json(&body), |_| {}).await;
    assert_eq!(
        e,
        ProviderError::Api {
            message: "quota gone (insufficient_quota)".into(),
            retryable: false
        }
    );
    let e = failing(Reply::status(200).json(&json!({"choices": []})), |_| {}).await;
    // Not retried: the server would answer the same way again.
    assert!(
        matches!(e, ProviderError::Config(ref m) if m.contains("support streaming")),
        "{e:?}"
    );
    assert!(!e.is_retryable());
}

#[test]
fn a_base_url_without_scheme_is_a_config_error() {
    let mut config = config("localhost:8080");
    config.base_url = "localhost:8080/v1".into();
    assert!(matches!(
        OpenAiProvider::new(config),
        Err(ProviderError::Config(_))
    ));
}

// ---- The request.

#[tokio::test]
async fn the_request_body_and_headers() {
    let server = TestServer::start(vec![Reply::sse(split_events(&fixture(
        "openai_chat_logprobs.sse",
    )))])
    .await;
    let provider = OpenAiProvider::new(config(&server.url())).expect("provider");
    assert_eq!(
        (provider.name(), provider.model()),
        ("testprov", "test-model")
    );
    let (messages, tools) = (conversation(), tools());
    let stream = provider
        .stream(ChatRequest {
            messages: &messages,
            tools: &tools,
            max_tokens: None,
        })
        .await
        .expect("stream");
    assert_eq!(collect(stream).await.turn.content, "Foo!");
    let request = &server.requests()[0];
    assert_eq!(
        (request.method.as_str(), request.path.as_str()),
        ("POST", "/v1/chat/completions")
    );
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert_eq!(request.header("accept"), Some("text/event-stream"));
    let expected = json!({
        "model": "test-model",
        "messages": [
            {"role": "system", "content": "You are taco."},
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "{\"temp_c\":21}"},
        ],
        "stream": true,
        "stream_options": {"include_usage": true},
        "tools": [{"type": "function", "function": {
            "name": "get_weather",
            "description": "Current weather for a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}],
    });
    assert_eq!(request.json(), expected);
}

#[tokio::test]
async fn reasoning_content_is_sent_back_only_when_configured() {
    let reply = || Reply::sse(split_events(&fixture("openai_chat_logprobs.sse")));
    let (_, body) = exchange(reply(), |_| {}).await;
    assert!(
        body["messages"][2].get("reasoning_content").is_none(),
        "{body}"
    );
    let (_, body) = exchange(reply(), |c| c.send_reasoning_content = true).await;
    assert_eq!(
        body["messages"][2]["reasoning_content"],
        "I should call the tool."
    );
}

#[tokio::test]
async fn extra_body_adds_replaces_and_removes_fields() {
    let reply = Reply::sse(split_events(&fixture("openai_chat_logprobs.sse")));
    let (outcome, body) = exchange(reply, |c| {
        c.extra_body.insert("temperature".into(), json!(0.2));
        c.extra_body.insert("stream_options".into(), Value::Null);
        c.extra_body.insert("stream".into(), json!(false));
    })
    .await;
    assert!(outcome.is_ok());
    assert_eq!(body["temperature"], 0.2);
    assert!(
        body.get("stream_options").is_none(),
        "null removes it: {body}"
    );
    assert_eq!(body["stream"], true, "stream stays ours");
}

#[tokio::test]
async fn no_tools_means_no_tools_field() {
    let server = TestServer::start(vec![Reply::sse(split_events(&fixture(
        "openai_chat_logprobs.sse",
    )))])
    .await;
    let provider = OpenAiProvider::new(config(&server.url())).expect("provider");
    let messages = [Message::user("hi")];
    let stream = provider
        .stream(ChatRequest {
            messages: &messages,
            tools: &[],
            max_tokens: None,
        })
        .await
        .expect("stream");
    collect(stream).await;
    let body = server.requests()[0].json();
    assert!(body.get("tools").is_none(), "{body}");
    assert_eq!(body["messages"], json!([{"role": "user", "content": "hi"}]));
}

#[tokio::test]
async fn reasoning_of_earlier_requests_is_not_sent_back() {
    let server = TestServer::start(vec![Reply::sse(split_events(&fixture(
        "openai_chat_logprobs.sse",
    )))])
    .await;
    let mut cfg = config(&server.url());
    cfg.send_reasoning_content = true;
    let provider = OpenAiProvider::new(cfg).expect("provider");
    let call = ToolCall {
        id: "c1".into(),
        name: "t".into(),
        arguments: json!({}),
    };
    let messages = [
        Message::user("first"),
        Message::assistant(Some("a".into()), Some("old thoughts".into()), Vec::new()),
        Message::user("second"),
        Message::assistant(None, Some("new thoughts".into()), vec![call]),
        Message::tool("c1", "t", "{}".into()),
    ];
    let stream = provider
        .stream(ChatRequest {
            messages: &messages,
            tools: &[],
            max_tokens: None,
        })
        .await
        .expect("stream");
    collect(stream).await;
    let body = server.requests()[0].json();
    assert!(
        body["messages"][1].get("reasoning_content").is_none(),
        "{body}"
    );
    assert_eq!(body["messages"][3]["reasoning_content"], "new thoughts");
}

#[test]
fn cached_prompt_tokens_are_counted_apart() {
    let body = concat!(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\n",
        "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1200,\"completion_tokens\":5,",
        "\"prompt_tokens_details\":{\"cached_tokens\":1024}}}\n\n",
        "data: [DONE]\n\n"
    );
    let outcome = decode_chunks(vec![Bytes::from_static(body.as_bytes())]);
    assert_eq!(outcome.turn.usage.input_tokens, 1200);
    assert_eq!(outcome.turn.usage.cached_tokens, 1024);
}

/// Error messages are plain text (issue 14.6): the chat shows them as they are and stderr
/// prints them, so none carries a Markdown code span of its own making.
#[tokio::test]
async fn every_http_error_message_is_plain_text() {
    let plain =
        |message: &str| json!({"error": {"message": message, "type": "invalid_request_error"}});
    let too_long = json!({"error": {"message": "This model's maximum context length is 8192 tokens", "code": "context_length_exceeded"}});
    let cases: Vec<(u16, Value, bool)> = vec![
        (400, plain("Unsupported parameter: 'max_tokens'"), true),
        (400, too_long, true),
        (401, plain("Incorrect API key provided"), true),
        (401, plain("You didn't provide an API key."), false),
        (402, plain("Payment required"), true),
        (403, plain("Project does not have access"), true),
        (404, plain("The model does not exist"), true),
        (413, plain("Request too large"), true),
        (429, plain("Rate limit reached"), true),
        (500, plain("The server had an error"), true),
        (418, plain("I'm a teapot"), true),
    ];
    for (status, body, key) in cases {
        let reply = json_error(status, body.to_string().into_bytes());
        let e = failing(reply, |c| {
            if !key {
                c.api_key = None;
            }
        })
        .await;
        let text = e.to_string();
        assert!(!text.contains('`'), "{status}: {text}");
        assert!(
            text.contains("'testprov'"),
            "{status} names the provider: {text}"
        );
    }
    // A JSON answer where a stream was asked for, and a base URL that is not one.
    let reply = Reply::status(200).json(&json!({"id": "x", "choices": []}));
    let e = failing(reply, |_| {}).await;
    assert!(!e.to_string().contains('`'), "{e}");
    let mut bad = config("ftp://example.com");
    bad.base_url = "ftp://example.com/v1".into();
    let e = OpenAiProvider::new(bad).map(drop).expect_err("not http");
    assert!(!e.to_string().contains('`'), "{e}");
}
