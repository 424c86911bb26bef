//! The token-aware context end to end (issue 13.6): `taco exec` against a loopback server
//! speaking the OpenAI wire format compacts when the configured window fills, compacts and
//! retries once when the server says the request is too long, keeps the whole history in the
//! session file, and resumes compacted.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

mod support;

use serde_json::{Value, json};
use support::cli::*;
use support::{Reply, TestServer};

fn too_long() -> Reply {
    Reply::status(400).json(&json!({"error": {
        "message": "This model's maximum context length is 4096 tokens. However, your messages resulted in 9000 tokens.",
        "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}))
}

/// Whether a request is a summary call (taco's compaction prompt, no tools).
fn is_summary_call(request: &Value) -> bool {
    request["messages"][0]["content"]
        .as_str()
        .is_some_and(|c| c.starts_with("You summarise the earlier part of a conversation"))
        && request.get("tools").is_none()
}

fn summary_note(request: &Value) -> Option<&str> {
    let note = &request["messages"][1];
    (note["role"] == "system")
        .then(|| note["content"].as_str())
        .flatten()
        .filter(|c| c.contains("compacted"))
}

#[tokio::test]
async fn too_long_compacts_once_retries_and_the_resumed_session_starts_compacted() {
    let (home, work) = setup();
    let server = TestServer::start(vec![
        tool_turn("s1", "shell", &json!({ "command": "echo one" }).to_string()),
        too_long(),
        text_turn(&["SUMMARY: the user ran echo one."]),
        text_turn(&["done after compacting"]),
        text_turn(&["resumed fine"]),
    ])
    .await;
    let mut cmd = taco(home.path(), work.path());
    openai_args(&mut cmd, &server);
    cmd.args(["--approve", "all", "run echo one"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("done after compacting"));
    assert!(run.stderr.contains("context compacted"), "{}", run.stderr);
    let requests: Vec<Value> = server.requests().iter().map(|r| r.json()).collect();
    assert_eq!(requests.len(), 4);
    assert!(is_summary_call(&requests[2]), "{}", requests[2]);
    let transcript = requests[2]["messages"][1]["content"].as_str().unwrap();
    assert!(transcript.contains("run echo one"), "{transcript}");
    let note = summary_note(&requests[3]).expect("the retry starts with the summary");
    assert!(note.contains("SUMMARY: the user ran echo one."));
    // The retry still carries the call and its result, in order.
    let roles: Vec<&str> = requests[3]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert!(
        roles.windows(2).any(|w| w == ["assistant", "tool"]),
        "{roles:?}"
    );

    // The session file keeps every message and records the compaction.
    let path = only_session(home.path());
    let loaded = taco::session::load(&path).unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let messages = loaded.messages();
    assert_eq!(
        messages.len(),
        6,
        "system, user, call, result, shell usage note, answer"
    );
    assert!(loaded.entries.iter().any(|e| matches!(e,
        taco::session::Entry::Event(ev) if ev.kind() == "compacted")));

    // Resuming needs no new summary call: the next request starts from the saved summary.
    let mut cmd = taco(home.path(), work.path());
    openai_args(&mut cmd, &server);
    cmd.args(["and now?", "--resume"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let requests = server.requests();
    assert_eq!(requests.len(), 5);
    let resumed = requests[4].json();
    assert!(summary_note(&resumed).is_some(), "{resumed}");
    let last = resumed["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["content"], "and now?");
}

#[tokio::test]
async fn a_configured_window_compacts_before_the_request_that_would_pass_it() {
    let (home, work) = setup();
    // A big file read three times fills a small window (the built-in tools' definitions
    // count too: the window is set so that two reads stay under the threshold).
    std::fs::write(work.path().join("big.txt"), "word ".repeat(3_000)).unwrap();
    let read = json!({ "path": "big.txt" }).to_string();
    let server = TestServer::start(vec![
        tool_turn("r1", "read_file", &read),
        tool_turn("r2", "read_file", &read),
        tool_turn("r3", "read_file", &read),
        text_turn(&["SUMMARY: big.txt holds words."]),
        text_turn(&["read it all"]),
    ])
    .await;
    let config = home.path().join("taco.toml");
    std::fs::write(
        &config,
        "[providers.openai.options]\nmax_attempts = 1\ncontext_window = 17000\n\
         [context]\ncompact_at_percent = 60\n",
    )
    .unwrap();
    let mut cmd = taco(home.path(), work.path());
    openai_args(&mut cmd, &server);
    cmd.arg("-c")
        .arg(&config)
        .args(["--json", "read big.txt three times"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let events = json_lines(&run.stdout);
    let compacted: Vec<&Value> = events.iter().filter(|e| e["type"] == "compacted").collect();
    assert_eq!(compacted.len(), 1, "{:?}", server.requests().len());
    let data = &compacted[0]["data"];
    assert_eq!(data["trigger"], "auto");
    assert_eq!(data["window"], 17000);
    assert!(data["before_tokens"].as_u64().unwrap() > 10_200, "{data}");
    assert!(
        data["after_tokens"].as_u64().unwrap() < data["before_tokens"].as_u64().unwrap(),
        "{data}"
    );
    let requests: Vec<Value> = server.requests().iter().map(|r| r.json()).collect();
    assert!(is_summary_call(&requests[3]));
    assert!(summary_note(&requests[4]).is_some());
    // Every llm_call tells the window, for the status line's gauge.
    assert!(
        events
            .iter()
            .filter(|e| e["type"] == "llm_call")
            .all(|e| e["data"]["context_window"] == 17000)
    );
}

#[tokio::test]
async fn a_window_below_a_system_prompt_is_refused_naming_the_line() {
    let (home, work) = setup();
    let config = home.path().join("taco.toml");
    std::fs::write(
        &config,
        "provider = \"openai\"\n[providers.openai.options]\ncontext_window = 10\n",
    )
    .unwrap();
    let mut cmd = taco(home.path(), work.path());
    cmd.arg("exec").arg("-c").arg(&config).arg("hi");
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("taco.toml:3"), "{}", run.stderr);
    assert!(run.stderr.contains("at least 1024"), "{}", run.stderr);
    std::fs::write(&config, "[context]\ncompact_at_percent = 100\n").unwrap();
    let run = finish(
        taco(home.path(), work.path())
            .arg("exec")
            .arg("-c")
            .arg(&config)
            .arg("hi"),
    )
    .await;
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("between 10 and 99"), "{}", run.stderr);
}

#[tokio::test]
async fn an_ollama_window_in_the_config_is_sent_as_num_ctx_and_not_asked() {
    let (home, work) = setup();
    let server = TestServer::start(vec![Reply::ndjson([format!(
        "{}\n",
        json!({"model": "qwen3", "message": {"role": "assistant", "content": "hi"}, "done": true, "done_reason": "stop", "prompt_eval_count": 40, "eval_count": 4})
    )])])
    .await;
    let config = home.path().join("taco.toml");
    std::fs::write(
        &config,
        "[providers.ollama.options]\ncontext_window = 4096\nmax_tokens = 100\n",
    )
    .unwrap();
    let mut cmd = taco(home.path(), work.path());
    cmd.env("OLLAMA_HOST", server.url())
        .args(["exec", "-p", "ollama", "-m", "qwen3", "-c"])
        .arg(&config)
        .args(["--json", "hi"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let requests = server.requests();
    assert_eq!(
        requests.len(),
        1,
        "no /api/show when the window is configured"
    );
    let body = requests[0].json();
    assert_eq!(
        body["options"],
        json!({"num_ctx": 4096, "num_predict": 100})
    );
    let events = json_lines(&run.stdout);
    let call = events.iter().find(|e| e["type"] == "llm_call").unwrap();
    assert_eq!(call["data"]["context_window"], 4096);
}
