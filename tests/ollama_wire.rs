//! The native Ollama provider against the recorded NDJSON fixtures, served byte for byte from a
//! loopback server and re-chunked at random boundaries; plus line-framing edge cases, HTTP
//! error bodies, transport failures and the request body.

use crate::support;

use std::sync::OnceLock;
use std::time::Duration;

use bytes::Bytes;
use proptest::prelude::*;
use serde_json::{Map, Value, json};
use support::wire::*;
use support::{Reply, TestServer, unreachable_url};
use taco::conversation::{Message, Timings, ToolCall, ToolSpec, Usage};
use taco::provider::ollama::{OllamaConfig, OllamaProvider, decode_stream};
use taco::provider::{ChatRequest, Provider, ProviderError, Secret};

const TRUNCATED: ProviderError = ProviderError::Truncated {
    terminator: "done: true",
};

fn config(server_url: &str) -> OllamaConfig {
    OllamaConfig {
        name: "ollama".into(),
        base_url: server_url.to_string(),
        model: "test-model".into(),
        api_key: None,
        api_key_env: None,
        think: None,
        num_ctx: None,
        extra_body: Map::new(),
        connect_timeout: Duration::from_secs(5),
        idle_timeout: Duration::from_secs(10),
    }
}

fn conversation() -> Vec<Message> {
    let calls = vec![
        ToolCall {
            id: "call_1".into(),
            name: "get_weather".into(),
            arguments: json!({"city": "Paris"}),
        },
        ToolCall {
            id: "call_2".into(),
            name: "get_weather".into(),
            arguments: Value::String("{\"city\": ".into()),
        },
    ];
    vec![
        Message::system("You are taco."),
        Message::user("Weather in Paris?"),
        Message::assistant(None, Some("I should call the tool.".into()), calls),
        Message::tool("call_1", "get_weather", r#"{"temp_c":21}"#.into()),
        Message::tool(
            "call_2",
            "get_weather",
            r#"{"error":"bad arguments"}"#.into(),
        ),
    ]
}

fn tools() -> Vec<ToolSpec> {
    weather_tool()
}

/// Calls the provider once; the future's error, or the collected stream.
async fn call(config: OllamaConfig) -> Result<Outcome, ProviderError> {
    call_provider(&OllamaProvider::new(config)?, &conversation(), &tools()).await
}

/// Serves `reply` once and calls the provider; returns the outcome and the request.
async fn exchange(
    reply: Reply,
    tweak: impl FnOnce(&mut OllamaConfig),
) -> (Result<Outcome, ProviderError>, support::RecordedRequest) {
    let server = TestServer::start(vec![reply]).await;
    let mut config = config(&server.url());
    tweak(&mut config);
    let outcome = call(config).await;
    let mut requests = server.requests();
    assert_eq!(requests.len(), 1, "exactly one request");
    (outcome, requests.remove(0))
}

/// Cuts after every newline, as Ollama flushes one JSON line per write.
fn split_lines(bytes: &[u8]) -> Vec<Vec<u8>> {
    bytes
        .split_inclusive(|&b| b == b'\n')
        .map(<[u8]>::to_vec)
        .collect()
}

fn is_ollama_stream(name: &str) -> bool {
    name.starts_with("ollama_") && name.ends_with(".ndjson")
}

/// Ollama fixtures that are not streams, with the test that uses them.
const OTHER_OLLAMA_FIXTURES: [&str; 1] = ["ollama_http_error_docs.json"];

// ---- Expected turns, derived by reading each fixture.

struct Expect {
    content: &'static str,
    /// (id, or None when the assembler must generate one; name; arguments).
    calls: Vec<(Option<&'static str>, &'static str, Value)>,
    finish: Option<&'static str>,
    usage: (u64, u64),
    timings: Option<Timings>,
    error: Option<ProviderError>,
}

fn expect(name: &str) -> Expect {
    let ms = |total, load, prompt, generation| {
        Some(Timings {
            total_ms: Some(total),
            load_ms: Some(load),
            prompt_ms: Some(prompt),
            generation_ms: Some(generation),
        })
    };
    let base = Expect {
        content: "",
        calls: Vec::new(),
        finish: Some("stop"),
        usage: (0, 0),
        timings: None,
        error: None,
    };
    match name {
        // The final line has no done_reason (older docs): "stop" is assumed. Nanoseconds are
        // rounded: 4_883_583_458 ns → 4884 ms, 1_334_875 ns → 1 ms.
        "ollama_chat_stream_text_docs.ndjson" => Expect {
            content: "The",
            usage: (26, 282),
            timings: ms(4884, 1, 343, 4536),
            ..base
        },
        "ollama_chat_stream_tool_call_docs.ndjson" => Expect {
            calls: vec![(None, "get_weather", json!({"city": "Tokyo"}))],
            usage: (169, 15),
            timings: ms(182, 41, 25, 116),
            ..base
        },
        "ollama_chat_stream_tool_call_with_id_upstream_test.ndjson" => Expect {
            calls: vec![(
                Some("call_1"),
                "web_search",
                json!({"query": "latest Ollama release"}),
            )],
            usage: (12, 4),
            ..base
        },
        // `/api/generate` lines: the text is in `response`; the error line ends the stream.
        "ollama_generate_midstream_error_docs.ndjson" => Expect {
            content: " Yes.Ican",
            finish: None,
            error: Some(ProviderError::Api {
                message: "an error was encountered while running the model".into(),
                retryable: true,
            }),
            ..base
        },
        // The done line itself carries the last piece of text.
        "ollama_generate_stream_docs.ndjson" => Expect {
            content: "That's a fantastic question!",
            ..base
        },
        other => panic!("no expectation for {other}"),
    }
}

fn check_outcome(name: &str, outcome: &Outcome) {
    let want = expect(name);
    let turn = &outcome.turn;
    assert_eq!(turn.content, want.content, "{name}: content");
    assert_eq!(turn.reasoning, "", "{name}: reasoning");
    assert_eq!(turn.tool_calls.len(), want.calls.len(), "{name}: calls");
    for (call, (id, tool, arguments)) in turn.tool_calls.iter().zip(&want.calls) {
        match id {
            Some(id) => assert_eq!(&call.id, id, "{name}: id"),
            None => assert!(
                generated(&call.id) || call.id == BLANKED,
                "{name}: generated id {}",
                call.id
            ),
        }
        assert_eq!(&call.name, tool, "{name}: tool name");
        assert_eq!(&call.arguments, arguments, "{name}: arguments");
    }
    assert_eq!(turn.finish_reason.as_deref(), want.finish, "{name}: finish");
    let (input_tokens, output_tokens) = want.usage;
    let usage = Usage {
        input_tokens,
        output_tokens,
        cached_tokens: 0,
    };
    assert_eq!(turn.usage, usage, "{name}: usage");
    assert_eq!(turn.timings, want.timings, "{name}: timings");
    assert_eq!(outcome.error, want.error, "{name}: error");
}

/// Ids made by the assembler for calls without one: `call_` and 32 hex digits.
fn generated(id: &str) -> bool {
    id.strip_prefix("call_")
        .is_some_and(|hex| hex.len() == 32 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

const BLANKED: &str = "generated";

/// The outcome with generated ids blanked, so two decodings of one stream compare equal.
fn comparable(mut outcome: Outcome) -> Outcome {
    for call in &mut outcome.turn.tool_calls {
        if generated(&call.id) {
            call.id = BLANKED.into();
        }
    }
    outcome
}

/// Serves a fixture one line per write and checks the turn and the request.
async fn check_fixture(name: &str) {
    let (outcome, request) = exchange(Reply::ndjson(split_lines(&fixture(name))), |_| {}).await;
    let outcome = outcome.unwrap_or_else(|e| panic!("{name}: the call failed: {e}"));
    check_outcome(name, &outcome);
    assert_eq!(request.path, "/api/chat");
    let body = request.json();
    assert_eq!(body["model"], "test-model");
    assert_eq!(body["stream"], true);
    assert_eq!(body["messages"].as_array().map(Vec::len), Some(5));
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
        fn every_ollama_fixture_has_a_test() {
            let covered = [$($file),*];
            for name in fixture_names(|n| n.starts_with("ollama_")) {
                let known = covered.contains(&name.as_str())
                    || OTHER_OLLAMA_FIXTURES.contains(&name.as_str());
                assert!(known, "no expectation for {name}");
            }
            assert_eq!(fixture_names(is_ollama_stream).len(), covered.len());
        }
    };
}

fixture_tests! {
    chat_text => "ollama_chat_stream_text_docs.ndjson",
    chat_tool_call => "ollama_chat_stream_tool_call_docs.ndjson",
    chat_tool_call_with_id => "ollama_chat_stream_tool_call_with_id_upstream_test.ndjson",
    generate_midstream_error => "ollama_generate_midstream_error_docs.ndjson",
    generate_text => "ollama_generate_stream_docs.ndjson",
}

// ---- Re-chunking: the turn never depends on where the bytes were split.

fn decode_chunks(chunks: Vec<Bytes>) -> Outcome {
    comparable(collect_now(decode_stream(futures_util::stream::iter(
        chunks.into_iter().map(Ok),
    ))))
}

fn decode_text(text: &str) -> Outcome {
    decode_chunks(vec![Bytes::from(text.to_string())])
}

/// Every Ollama stream fixture with its outcome decoded from one unsplit chunk.
fn baselines() -> &'static [Baseline] {
    static BASELINES: OnceLock<Vec<Baseline>> = OnceLock::new();
    BASELINES.get_or_init(|| baselines_of(is_ollama_stream, decode_chunks))
}

#[test]
fn unsplit_fixtures_decode_to_the_expected_turns() {
    assert!(baselines().len() >= 5, "fixtures missing");
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
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..32),
    ) {
        let (name, bytes, baseline) = which.get(baselines());
        let cuts: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
        prop_assert_eq!(&decode_chunks(split_at(bytes, &cuts)), baseline, "{}", name);
    }

    #[test]
    fn arbitrary_bytes_never_panic_and_end_the_stream(
        which in any::<prop::sample::Index>(),
        noise in prop::collection::vec(any::<u8>(), 0..64),
        at in any::<prop::sample::Index>(),
    ) {
        let (_, bytes, _) = which.get(baselines());
        let at = at.index(bytes.len() + 1);
        let mixed = [&bytes[..at], &noise, &bytes[at..]].concat();
        // `collect_now` also checks that nothing follows an error.
        let outcome = decode_chunks(vec![Bytes::from(mixed)]);
        prop_assert!(outcome.error.is_some() || outcome.turn.finish_reason.is_some());
    }
}

// ---- Line framing and tolerance.

#[test]
fn crlf_blank_lines_spaces_nulls_and_unknown_fields_are_tolerated() {
    let stream = "\r\n  \n{\"message\":{\"role\":\"assistant\",\"content\":\"Hi\",\"images\":null,\
                  \"tool_calls\":null,\"thinking\":null},\"done\":false,\"extra\":[1]}  \r\n\
                  \r\n{\"message\":null,\"done\":false}\n\
                  {\"message\":{\"content\":null},\"done\":true,\"done_reason\":null,\
                  \"eval_count\":null,\"total_duration\":2000000}\r\n";
    let outcome = decode_text(stream);
    assert_eq!(outcome.error, None);
    assert_eq!(outcome.turn.content, "Hi");
    assert_eq!(outcome.turn.finish_reason.as_deref(), Some("stop"));
    assert_eq!(outcome.turn.usage, Usage::default());
    let timings = Timings {
        total_ms: Some(2),
        ..Timings::default()
    };
    assert_eq!(
        outcome.turn.timings,
        Some(timings),
        "absent fields stay None"
    );
}

#[test]
fn thinking_becomes_reasoning() {
    let outcome = decode_text(concat!(
        r#"{"message":{"role":"assistant","content":"","thinking":"Let me think"},"done":false}"#,
        "\n",
        r#"{"message":{"content":"Answer","thinking":"."},"done":false}"#,
        "\n",
        r#"{"message":{"content":""},"done":true,"done_reason":"length"}"#,
        "\n",
    ));
    assert_eq!(outcome.turn.reasoning, "Let me think.");
    assert_eq!(outcome.turn.content, "Answer");
    assert_eq!(outcome.turn.finish_reason.as_deref(), Some("length"));
}

#[test]
fn tool_calls_on_several_lines_get_fresh_indexes() {
    let outcome = decode_text(concat!(
        r#"{"message":{"tool_calls":[{"function":{"name":"a","arguments":{"x":1}}},"#,
        r#"{"id":"c2","function":{"index":0,"name":"b","arguments":{}}}]},"done":false}"#,
        "\n",
        r#"{"message":{"tool_calls":[{"function":{"name":"c","arguments":"{\"y\":2}"}},"#,
        r#"{"function":{"name":"d","arguments":null}}]},"done":false}"#,
        "\n",
        r#"{"done":true,"done_reason":"stop"}"#,
    ));
    assert_eq!(outcome.error, None, "a last line without newline counts");
    let calls: Vec<(&str, &str, &Value)> = outcome
        .turn
        .tool_calls
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str(), &c.arguments))
        .collect();
    assert_eq!(
        calls,
        [
            ("generated", "a", &json!({"x": 1})),
            ("c2", "b", &json!({})),
            ("generated", "c", &json!({"y": 2})),
            ("generated", "d", &json!({})),
        ]
    );
}

#[test]
fn lines_after_done_are_ignored() {
    let outcome = decode_text(concat!(
        r#"{"message":{"content":"A"},"done":true}"#,
        "\n",
        r#"{"message":{"content":"B"},"done":false}"#,
        "\nnot json\n",
    ));
    assert_eq!((outcome.turn.content.as_str(), outcome.error), ("A", None));
}

#[test]
fn a_line_that_is_not_json_is_malformed() {
    let outcome = decode_text("{\"message\":{\"content\":\"A\"}}\n<html>oops</html>\n");
    assert_eq!(outcome.turn.content, "A");
    match outcome.error {
        Some(ProviderError::Malformed(message)) => {
            assert!(message.contains("<html>oops</html>"), "{message}")
        }
        other => panic!("expected Malformed, got {other:?}"),
    }
}

#[test]
fn a_stream_without_done_is_truncated() {
    let full = fixture("ollama_chat_stream_text_docs.ndjson");
    let first_line = full.iter().position(|&b| b == b'\n').expect("two lines") + 1;
    // Cut after a whole line, in the middle of the done line, and just before its newline.
    for cut in [first_line, first_line + 40, full.len() - 2, 0] {
        let outcome = decode_chunks(vec![Bytes::copy_from_slice(&full[..cut])]);
        assert_eq!(outcome.error, Some(TRUNCATED), "cut at {cut}");
        let expected = if cut == 0 { "" } else { "The" };
        assert_eq!(outcome.turn.content, expected, "cut at {cut}");
    }
}

#[test]
fn in_band_errors_say_whether_a_retry_helps() {
    let cases = [
        (
            r#""model \"llama9\" not found, try pulling it first""#,
            false,
        ),
        (r#""invalid format: expected \"json\"""#, false),
        (
            r#""registry.ollama.ai/library/gemma:2b does not support tools""#,
            false,
        ),
        (
            r#""llama runner process has terminated: signal: killed""#,
            true,
        ),
        (r#"{"message":"overloaded","type":"server_error"}"#, true),
        (
            r#"{"message":"nope","code":"invalid_request_error"}"#,
            false,
        ),
    ];
    for (error, retryable) in cases {
        let outcome = decode_text(&format!("{{\"error\":{error}}}\n"));
        match outcome.error {
            Some(ProviderError::Api { retryable: r, .. }) => assert_eq!(r, retryable, "{error}"),
            other => panic!("expected an Api error for {error}, got {other:?}"),
        }
    }
    let outcome = decode_text("{\"error\":null,\"message\":{\"content\":\"ok\"},\"done\":true}\n");
    assert_eq!((outcome.turn.content.as_str(), outcome.error), ("ok", None));
}

// ---- HTTP errors and transport failures.

async fn failing(reply: Reply) -> ProviderError {
    match exchange(reply, |_| {}).await.0 {
        Err(e) => e,
        Ok(outcome) => panic!("expected the call to fail, got {outcome:?}"),
    }
}

/// (status, message, retryable) of an `Http` error.
fn http(e: &ProviderError) -> (u16, &str, bool) {
    match e {
        ProviderError::Http {
            status,
            message,
            retryable,
            ..
        } => (*status, message.as_str(), *retryable),
        other => panic!("expected an HTTP error, got {other:?}"),
    }
}

fn json_error(status: u16, body: &Value) -> Reply {
    Reply::status(status).json(body)
}

#[tokio::test]
async fn documented_http_errors_map_to_statuses_and_retry_flags() {
    let doc: Value =
        serde_json::from_slice(&fixture("ollama_http_error_docs.json")).expect("JSON fixture");
    let statuses = doc["status"].as_array().expect("statuses");
    assert_eq!(statuses.len(), 5);
    for status in statuses {
        let status = status
            .as_u64()
            .and_then(|s| u16::try_from(s).ok())
            .expect("u16");
        let e = failing(json_error(status, &doc["body"])).await;
        let (got, message, retryable) = http(&e);
        assert_eq!(got, status);
        assert_eq!(retryable, matches!(status, 429 | 500 | 502), "{status}");
        assert!(
            message.contains("the model failed to generate a response"),
            "{status}: {message}"
        );
        assert!(message.contains("'ollama'"), "{status}: {message}");
    }
}

#[tokio::test]
async fn http_404_model_not_found_says_ollama_pull() {
    let body = json!({"error": "model \"test-model\" not found, try pulling it first"});
    let e = failing(json_error(404, &body)).await;
    let (_, message, retryable) = http(&e);
    assert!(!retryable);
    for part in [
        "'test-model'",
        "'ollama pull test-model'",
        "try pulling it first",
    ] {
        assert!(message.contains(part), "{part} missing in {message}");
    }
}

#[tokio::test]
async fn http_404_of_a_wrong_url_points_at_base_url() {
    let e = failing(Reply::status(404).body("404 page not found")).await;
    let (_, message, retryable) = http(&e);
    assert!(!retryable);
    assert!(!message.contains("ollama pull"), "{message}");
    assert!(message.contains("/api/chat"), "{message}");
    assert!(message.contains("OLLAMA_HOST, without /api"), "{message}");
}

#[tokio::test]
async fn an_unreachable_server_says_ollama_serve_and_the_url() {
    let base = unreachable_url().await;
    let e = call(config(&base)).await.expect_err("nothing listens");
    match &e {
        ProviderError::Connect { url, reason } => {
            assert_eq!(url, &format!("{base}/api/chat"));
            assert!(reason.contains("connection refused"), "{reason}");
            assert!(reason.contains("'ollama serve'"), "{reason}");
        }
        other => panic!("expected Connect, got {other:?}"),
    }
    assert!(e.to_string().contains(&base), "{e}");
    assert!(e.is_retryable());
}

#[tokio::test]
async fn a_stream_cut_before_done_is_truncated() {
    let full = fixture("ollama_chat_stream_tool_call_docs.ndjson");
    let first_line = full.iter().position(|&b| b == b'\n').expect("two lines") + 1;
    for cut in [first_line, full.len() - 20] {
        let reply = Reply::ndjson(split_lines(&full[..cut]));
        let outcome = exchange(reply, |_| {}).await.0.expect("headers arrived");
        assert_eq!(outcome.error, Some(TRUNCATED), "cut at {cut}");
        assert_eq!(outcome.turn.tool_calls.len(), 1, "the call before the cut");
    }
}

#[tokio::test]
async fn an_idle_stream_times_out() {
    let line = "{\"message\":{\"content\":\"Hi\"},\"done\":false}\n";
    let reply = Reply::ndjson([line]).hold(Duration::from_secs(5));
    let (outcome, _) = exchange(reply, |c| c.idle_timeout = Duration::from_millis(300)).await;
    let outcome = outcome.expect("headers arrived");
    assert_eq!(outcome.turn.content, "Hi");
    match outcome.error {
        Some(ProviderError::Timeout(message)) => {
            assert!(
                message.contains("no data from http://127.0.0.1:"),
                "{message}"
            );
            assert!(message.contains("/api/chat"), "{message}");
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
}

#[test]
fn a_base_url_without_scheme_is_a_config_error() {
    let config = config("localhost:11434");
    assert!(matches!(
        OllamaProvider::new(config),
        Err(ProviderError::Config(_))
    ));
}

// ---- The request.

fn text_reply() -> Reply {
    Reply::ndjson(split_lines(&fixture("ollama_chat_stream_text_docs.ndjson")))
}

#[tokio::test]
async fn the_request_body_and_headers() {
    let (outcome, request) = exchange(text_reply(), |_| {}).await;
    assert_eq!(outcome.expect("stream").turn.content, "The");
    assert_eq!(
        (request.method.as_str(), request.path.as_str()),
        ("POST", "/api/chat")
    );
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert_eq!(request.header("accept"), Some("application/x-ndjson"));
    assert_eq!(request.header("authorization"), None, "no key, no header");
    let expected = json!({
        "model": "test-model",
        "messages": [
            {"role": "system", "content": "You are taco."},
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": "", "thinking": "I should call the tool.",
             "tool_calls": [
                {"id": "call_1", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
                {"id": "call_2", "function": {"name": "get_weather", "arguments": {}}}]},
            {"role": "tool", "content": "{\"temp_c\":21}", "tool_name": "get_weather",
             "tool_call_id": "call_1"},
            {"role": "tool", "content": "{\"error\":\"bad arguments\"}", "tool_name": "get_weather",
             "tool_call_id": "call_2"},
        ],
        "stream": true,
        "tools": [{"type": "function", "function": {
            "name": "get_weather",
            "description": "Current weather for a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}],
    });
    assert_eq!(request.json(), expected);
}

#[tokio::test]
async fn think_extra_body_and_the_key() {
    let (outcome, request) = exchange(text_reply(), |c| {
        c.think = Some(true);
        c.api_key = Some(Secret::new(" ollama-FAKE-key "));
        c.extra_body
            .insert("options".into(), json!({"num_ctx": 8192}));
        c.extra_body.insert("keep_alive".into(), json!("5m"));
        c.extra_body.insert("stream".into(), json!(false));
        c.extra_body.insert("tools".into(), Value::Null);
    })
    .await;
    assert!(outcome.is_ok());
    assert_eq!(
        request.header("authorization"),
        Some("Bearer ollama-FAKE-key")
    );
    let body = request.json();
    assert_eq!(body["think"], true);
    assert_eq!(body["options"], json!({"num_ctx": 8192}));
    assert_eq!(body["keep_alive"], "5m");
    assert_eq!(body["stream"], true, "stream stays ours");
    assert!(body.get("tools").is_none(), "null removes it: {body}");
    let (_, request) = exchange(text_reply(), |c| {
        c.think = Some(true);
        c.extra_body.insert("think".into(), json!("high"));
    })
    .await;
    assert_eq!(request.json()["think"], "high", "extra_body wins");
}

#[tokio::test]
async fn no_tools_and_no_think_means_no_such_fields() {
    let server = TestServer::start(vec![text_reply()]).await;
    let provider = OllamaProvider::new(config(&server.url())).expect("provider");
    assert_eq!(
        (provider.name(), provider.model()),
        ("ollama", "test-model")
    );
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
    assert_eq!(
        body,
        json!({"model": "test-model", "messages": [{"role": "user", "content": "hi"}],
               "stream": true})
    );
}

#[tokio::test]
async fn the_context_window_comes_from_api_show_num_ctx_over_the_trained_length() {
    let server = TestServer::start(vec![
        Reply::status(200).json(&json!({"parameters": "temperature 0.7\nnum_ctx 8192",
            "model_info": {"general.architecture": "llama", "llama.context_length": 131072}})),
        Reply::status(200).json(&json!({"parameters": "temperature 0.7",
            "model_info": {"general.architecture": "llama", "llama.context_length": 131072}})),
        Reply::status(404).json(&json!({"error": "model 'test-model' not found"})),
        Reply::status(200).body("not json at all"),
    ])
    .await;
    let provider = OllamaProvider::new(config(&server.url())).unwrap();
    assert_eq!(provider.context_window().await, Some(8192));
    assert_eq!(provider.context_window().await, Some(131072));
    // A server that does not know: no window, never an error.
    assert_eq!(provider.context_window().await, None);
    assert_eq!(provider.context_window().await, None);
    let requests = server.requests();
    assert!(requests.iter().all(|r| r.path == "/api/show"));
    assert_eq!(requests[0].json(), json!({"model": "test-model"}));
    // A configured window is not asked for.
    let provider = OllamaProvider::new(OllamaConfig {
        num_ctx: Some(4096),
        ..config(&server.url())
    })
    .unwrap();
    assert_eq!(provider.context_window().await, Some(4096));
    assert_eq!(server.requests().len(), 4);
}

#[tokio::test]
async fn a_huge_or_silent_api_show_gives_no_window_in_bounded_time() {
    let huge = format!("{{\"parameters\": \"{}\"}}", "x".repeat(5 << 20));
    let server = TestServer::start(vec![
        Reply::status(200)
            .header("Content-Type", "application/json")
            .body(huge),
    ])
    .await;
    let provider = OllamaProvider::new(config(&server.url())).unwrap();
    assert_eq!(provider.context_window().await, None, "over the 4 MiB cap");
    let silent = TestServer::start(vec![
        Reply::status(200)
            .json(&json!({}))
            .hold(Duration::from_secs(30))
            .chunk_delay(Duration::from_secs(30)),
    ])
    .await;
    let provider = OllamaProvider::new(config(&silent.url())).unwrap();
    let started = std::time::Instant::now();
    assert_eq!(provider.context_window().await, None);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_context_length_error_line_is_typed_so_taco_compacts() {
    let outcome = decode_text("{\"error\":\"the input length exceeds the context length\"}\n");
    assert!(
        matches!(outcome.error, Some(ProviderError::ContextExceeded(_))),
        "{:?}",
        outcome.error
    );
    let outcome = decode_text("{\"error\":\"model is overloaded\"}\n");
    assert!(
        matches!(outcome.error, Some(ProviderError::Api { .. })),
        "{:?}",
        outcome.error
    );
}
