//! `taco exec` as a process against a loopback OpenAI-compatible server (DESIGN §6).

use crate::support;

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use support::cli::*;
use support::{Reply, TestServer};
use tokio::io::AsyncWriteExt;

#[tokio::test]
async fn completes_a_tool_using_run_and_prints_the_answer() {
    let (home, work) = setup();
    let server = TestServer::start(vec![
        tool_turn("call_1", "list_dir", "{\"path\": \".\"}"),
        text_turn(&["There is ", "hello.txt."]),
    ])
    .await;
    let mut cmd = taco(home.path(), work.path());
    openai_args(&mut cmd, &server);
    cmd.arg("what is here?");
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stdout, "There is hello.txt.\n");

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].path, "/v1/chat/completions");
    assert_eq!(
        requests[0].header("authorization"),
        None,
        "no key configured, none sent"
    );
    let first = requests[0].json();
    assert_eq!(first["model"], "m1");
    assert_eq!(first["stream"], true);
    let tool_names: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        tool_names,
        [
            "list_dir",
            "read_file",
            "write_file",
            "edit_file",
            "search_files",
            "shell",
            "web_fetch",
            "delegate",
            "create_code",
            "todo_write"
        ]
    );
    let second = requests[1].json();
    let messages = second["messages"].as_array().unwrap();
    assert_eq!(messages[0]["role"], "system");
    assert_eq!(
        messages[1],
        json!({"role": "user", "content": "what is here?"})
    );
    assert_eq!(messages[2]["tool_calls"][0]["id"], "call_1");
    assert_eq!(messages[3]["role"], "tool");
    assert_eq!(messages[3]["tool_call_id"], "call_1");
    let listing: Value = serde_json::from_str(messages[3]["content"].as_str().unwrap()).unwrap();
    assert!(listing.to_string().contains("hello.txt"), "{listing}");
}

#[tokio::test]
async fn project_instructions_reach_the_system_message_of_the_agent_and_its_sub_agents() {
    let (home, work) = setup();
    // A repository whose workspace is a subdirectory: both levels count, the root's first.
    std::fs::create_dir(work.path().join(".git")).unwrap();
    std::fs::write(
        work.path().join("AGENTS.md"),
        "Always answer in French. Token: sk-test-SECRET-4242\n",
    )
    .unwrap();
    let pkg = work.path().join("pkg");
    std::fs::create_dir(&pkg).unwrap();
    std::fs::write(pkg.join("AGENTS.md"), b"\xff\xfe not UTF-8").unwrap();
    std::fs::write(pkg.join("CLAUDE.md"), "Tests live in pkg/tests.\n").unwrap();
    let server = TestServer::start(vec![
        tool_turn("call_1", "delegate", r#"{"task": "count the tests"}"#),
        text_turn(&["deux"]),
        text_turn(&["Il y a deux tests."]),
    ])
    .await;
    let mut cmd = taco(home.path(), work.path());
    openai_args(&mut cmd, &server);
    cmd.env("OPENAI_API_KEY", "sk-test-SECRET-4242")
        .args(["-C", "pkg", "how many tests?"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stdout, "Il y a deux tests.\n");
    // The file that could not be used is said on stderr; the launch goes on.
    assert!(
        run.stderr
            .contains("taco: 'AGENTS.md' was not read: it is not UTF-8 text"),
        "{}",
        run.stderr
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let system = |i: usize| {
        let body = requests[i].json();
        assert_eq!(body["messages"][0]["role"], "system");
        body["messages"][0]["content"].as_str().unwrap().to_string()
    };
    let main = system(0);
    let root = main
        .find("<instructions file=\"../AGENTS.md\" applies_to=\"..\">\nAlways answer in French.")
        .unwrap_or_else(|| panic!("{main}"));
    let near = main
        .find("<instructions file=\"CLAUDE.md\" applies_to=\".\">\nTests live in pkg/tests.")
        .unwrap_or_else(|| panic!("{main}"));
    assert!(main.starts_with("You are taco") && root < near, "{main}");
    assert!(!main.contains("not UTF-8"));
    // A key that sits in a file is masked before it reaches the provider.
    assert!(!main.contains("SECRET"), "{main}");
    let sub = system(1);
    assert!(sub.starts_with("You are a sub-agent"), "{sub}");
    assert!(
        sub.contains("Always answer in French.") && sub.contains("Tests live in pkg/tests."),
        "{sub}"
    );
    assert_eq!(system(2), main);
}

#[tokio::test]
async fn json_mode_prints_every_event_in_order_and_trace_skips_deltas() {
    let (home, work) = setup();
    let server = TestServer::start(vec![
        tool_turn("call_1", "read_file", "{\"path\": \"hello.txt\"}"),
        text_turn(&["It says ", "hi."]),
    ])
    .await;
    let trace = work.path().join("run.trace.jsonl");
    let mut cmd = taco(home.path(), work.path());
    openai_args(&mut cmd, &server);
    cmd.args([
        "--json",
        "--trace",
        trace.to_str().unwrap(),
        "read hello.txt",
    ]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let events: Vec<Value> = json_lines(&run.stdout);
    let request_id = events[0]["request_id"].as_str().unwrap();
    assert!(uuid::Uuid::parse_str(request_id).is_ok());
    for e in &events {
        assert_eq!(e["request_id"], request_id);
        assert!(e["timestamp"].as_u64().unwrap() > 1_600_000_000_000);
        assert!(e["data"].is_object());
    }
    let all: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    // How often a call says how far it streamed depends on the time it takes: at its first
    // byte, then every 250 ms.
    let kinds: Vec<&str> = all
        .iter()
        .copied()
        .filter(|k| *k != "llm_progress")
        .collect();
    assert_eq!(
        kinds,
        [
            "run_started",
            "llm_started",
            "llm_call",
            "tool_call",
            "stack_push",
            "tool_result",
            "stack_pop",
            "llm_started",
            "delta",
            "delta",
            "llm_call",
            "final"
        ]
    );
    let progress = |from: &str, to: &str| {
        let (a, b) = (
            all.iter().position(|k| *k == from).unwrap(),
            all.iter().rposition(|k| *k == to).unwrap(),
        );
        all[a..b].contains(&"llm_progress")
    };
    assert!(progress("run_started", "tool_call"), "{all:?}");
    assert!(progress("stack_pop", "final"), "{all:?}");
    let of = |kind: &str, nth: usize| {
        (events.iter())
            .filter(|e| e["type"] == kind)
            .nth(nth)
            .unwrap()
    };
    let first = of("llm_call", 0);
    assert_eq!(
        first["data"]["tool_calls"][0]["arguments"],
        json!({"path": "hello.txt"})
    );
    assert_eq!(
        first["data"]["usage"],
        json!({"input_tokens": 20, "output_tokens": 5})
    );
    assert_eq!(first["data"]["call"], of("llm_started", 0)["data"]["call"]);
    assert_eq!(first["data"]["purpose"], "conversation");
    let result = of("tool_result", 0);
    assert_eq!(result["data"]["ok"], true);
    assert!(result["data"]["result"].to_string().contains("hi there"));
    let last = of("final", 0);
    assert_eq!(last["data"]["content"], "It says hi.");
    assert_eq!(
        last["data"]["usage"],
        json!({"input_tokens": 50, "output_tokens": 8})
    );

    let traced: Vec<Value> = std::fs::read_to_string(&trace)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let trace_kinds: Vec<&str> = traced.iter().map(|e| e["type"].as_str().unwrap()).collect();
    let without_deltas: Vec<&str> = kinds.iter().copied().filter(|k| *k != "delta").collect();
    assert_eq!(trace_kinds, without_deltas);
}

#[tokio::test]
async fn json_mode_gives_every_tool_result_a_status() {
    let (home, work) = setup();
    let server = TestServer::start(vec![
        tool_turns(&[
            ("ok", "read_file", r#"{"path": "hello.txt"}"#),
            ("missing", "read_file", r#"{"path": "nope.txt"}"#),
            ("invalid", "read_file", r#"{"path": 5}"#),
            ("unknown", "rm_rf", "{}"),
            ("denied", "shell", r#"{"command": "true"}"#),
        ]),
        text_turn(&["done"]),
    ])
    .await;
    let mut cmd = taco(home.path(), work.path());
    openai_args(&mut cmd, &server);
    cmd.args(["--json", "look around"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let results: Vec<(String, Value, Value)> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["type"] == "tool_result")
        .map(|e| {
            let data = &e["data"];
            (
                data["id"].as_str().unwrap().to_string(),
                data["status"].clone(),
                data["denied_by"].clone(),
            )
        })
        .collect();
    let mut results = results;
    results.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        results,
        [
            ("denied".into(), json!("denied"), json!("headless")),
            ("invalid".into(), json!("invalid"), Value::Null),
            ("missing".into(), json!("failed"), Value::Null),
            ("ok".into(), json!("ok"), Value::Null),
            ("unknown".into(), json!("unknown"), Value::Null),
        ]
    );
}

/// A command that exits non-zero is a failed call in `--json` (issue 27.2): `ok` false,
/// `status` `exit_nonzero`, the exit code in its result; the model still gets the whole
/// result, output included.
#[tokio::test]
async fn json_mode_says_a_command_that_exits_3_failed_and_the_model_gets_its_output() {
    let (home, work) = setup();
    let server = TestServer::start(vec![
        tool_turns(&[(
            "make",
            "shell",
            r#"{"command": "echo built half; echo broken >&2; exit 3"}"#,
        )]),
        text_turn(&["it failed"]),
    ])
    .await;
    let mut cmd = taco(home.path(), work.path());
    openai_args(&mut cmd, &server);
    cmd.args(["--approve", "all", "--json", "build"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let result = (run.stdout.lines())
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|e| e["type"] == "tool_result")
        .expect("a tool_result line");
    let data = &result["data"];
    assert_eq!(data["ok"], json!(false), "{data}");
    assert_eq!(data["status"], json!("exit_nonzero"), "{data}");
    assert_eq!(data["result"]["exit_code"], json!(3), "{data}");
    let requests = server.requests();
    let tool_message = (requests[1].json()["messages"].as_array().unwrap().iter())
        .find(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .unwrap();
    assert!(
        tool_message.contains("built half") && tool_message.contains("broken"),
        "{tool_message}"
    );
    assert!(tool_message.contains(r#""exit_code":3"#), "{tool_message}");
}

/// Text mode says what each tool call did on stderr (issue 27.5), stdout keeps the answer.
#[tokio::test]
async fn text_mode_says_each_tool_call_on_stderr() {
    let (home, work) = setup();
    let server = TestServer::start(vec![
        tool_turns(&[
            ("make", "shell", r#"{"command": "exit 3"}"#),
            ("look", "read_file", r#"{"path": "hello.txt"}"#),
            (
                "leak",
                "read_file",
                r#"{"path": "sk-test-SECRET-4242.txt"}"#,
            ),
        ]),
        text_turn(&["done"]),
    ])
    .await;
    let mut cmd = taco(home.path(), work.path());
    openai_args(&mut cmd, &server);
    cmd.env("OPENAI_API_KEY", "sk-test-SECRET-4242")
        .args(["--approve", "all", "build"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(
        run.stderr.contains("→ shell command=exit 3 · exit 3 · "),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("→ read_file path=hello.txt · ok · "),
        "{}",
        run.stderr
    );
    assert!(!run.stdout.contains('→'), "{}", run.stdout);
    // A key the model put in an argument is masked in the line that quotes it.
    assert!(
        run.stderr.contains("→ read_file path=sk-"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("SECRET"), "{}", run.stderr);
}

#[tokio::test]
async fn approve_none_denies_and_tells_the_model_approve_all_runs() {
    let (home, work) = setup();
    let server = TestServer::start(vec![
        tool_turn("s1", "shell", "{\"command\": \"echo made > made.txt\"}"),
        text_turn(&["ok"]),
    ])
    .await;
    let mut cmd = taco(home.path(), work.path());
    openai_args(&mut cmd, &server);
    cmd.arg("make a file");
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(
        run.stderr.contains("shell needs approval"),
        "{}",
        run.stderr
    );
    assert!(!work.path().join("made.txt").exists());
    let told = server.requests()[1].json()["messages"][3]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        told.contains("denied") && told.contains("--approve all"),
        "{told}"
    );

    let server = TestServer::start(vec![
        tool_turn("s1", "shell", "{\"command\": \"echo made > made.txt\"}"),
        text_turn(&["ok"]),
    ])
    .await;
    let mut cmd = taco(home.path(), work.path());
    openai_args(&mut cmd, &server);
    cmd.args(["--approve", "all", "make a file"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(
        std::fs::read_to_string(work.path().join("made.txt")).unwrap(),
        "made\n"
    );
}

#[tokio::test]
async fn prompt_dash_reads_stdin() {
    let (home, work) = setup();
    let server = TestServer::start(vec![text_turn(&["read it"])]).await;
    let mut cmd = taco(home.path(), work.path());
    openai_args(&mut cmd, &server);
    cmd.arg("-").stdin(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"a prompt\nover two lines\n")
        .await
        .unwrap();
    drop(stdin);
    let output = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&output.stdout), "read it\n");
    assert_eq!(
        server.requests()[0].json()["messages"][1]["content"],
        "a prompt\nover two lines\n"
    );
}

#[tokio::test]
async fn bad_config_exits_2_naming_file_and_line() {
    let (home, work) = setup();
    let config = work.path().join("taco.toml");
    std::fs::write(
        &config,
        "max_turns = 3\n[providers.x]\nkind = \"openai\"\nbase = \"http://x\"\n",
    )
    .unwrap();
    let mut cmd = taco(home.path(), work.path());
    cmd.args(["exec", "-c", config.to_str().unwrap(), "hi"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains(&format!("{}:4:", config.display())),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("unknown field 'base'"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.is_empty());

    // Usage errors are 2 as well.
    let mut cmd = taco(home.path(), work.path());
    cmd.args(["exec", "--approve", "maybe", "hi"]);
    assert_eq!(finish(&mut cmd).await.code, 2);
}

#[tokio::test]
async fn unreachable_server_exits_1_with_the_url() {
    let (home, work) = setup();
    let url = support::unreachable_url().await;
    let mut cmd = taco(home.path(), work.path());
    cmd.env("TACO_CONFIG", no_retries(work.path()));
    cmd.args([
        "exec",
        "-p",
        "openai",
        "--base-url",
        &format!("{url}/v1"),
        "-m",
        "m1",
        "hi",
    ]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains(&format!("{url}/v1/chat/completions")),
        "{}",
        run.stderr
    );
    assert!(run.stdout.is_empty());
}

#[tokio::test]
async fn the_key_is_sent_but_never_printed() {
    let (home, work) = setup();
    let server = TestServer::start(vec![Reply::status(401).json(&json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key"}}))]).await;
    let mut cmd = taco(home.path(), work.path());
    openai_args(&mut cmd, &server);
    cmd.env("OPENAI_API_KEY", "sk-test-SECRET-4242")
        .args(["--json", "hi"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 1);
    assert_eq!(
        server.requests()[0].header("authorization"),
        Some("Bearer sk-test-SECRET-4242")
    );
    assert!(run.stderr.contains("OPENAI_API_KEY"), "{}", run.stderr);
    assert!(!run.stderr.contains("SECRET") && !run.stdout.contains("SECRET"));
}

#[tokio::test]
async fn interrupt_exits_130() {
    let (home, work) = setup();
    let server = TestServer::start(vec![
        Reply::sse([
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"thinking\"}}]}\n\n",
        ])
        .hold(Duration::from_secs(30)),
    ])
    .await;
    let mut cmd = taco(home.path(), work.path());
    openai_args(&mut cmd, &server);
    cmd.args(["--json", "hi"]);
    let child = cmd.spawn().unwrap();
    // Wait until the request arrived, then interrupt like Ctrl-C would.
    for _ in 0..200 {
        if !server.requests().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let pid = child.id().unwrap() as i32;
    unsafe { libc::kill(pid, libc::SIGINT) };
    let output = tokio::time::timeout(Duration::from_secs(20), child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(output.status.code(), Some(130));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.lines().last().unwrap().contains("\"cancelled\""),
        "{stdout}"
    );
}

#[tokio::test]
async fn demo_provider_round_trip_offline() {
    let (home, work) = setup();
    let mut cmd = taco(home.path(), work.path());
    cmd.args(["exec", "-p", "demo", "--approve", "all", "hi"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("hello.txt"), "{}", run.stdout);
    assert!(
        run.stdout.contains("I wrote a short note"),
        "{}",
        run.stdout
    );
    assert!(work.path().join("taco-demo-note.md").exists());

    // A second visit finds its note and edits it: a change shown as a diff.
    let mut cmd = taco(home.path(), work.path());
    cmd.args(["exec", "-p", "demo", "--approve", "all", "--json", "again"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let note = std::fs::read_to_string(work.path().join("taco-demo-note.md")).unwrap();
    assert!(
        note.starts_with("# Note from the taco demo\n\nVisited again: again\n\nYou asked: hi"),
        "{note}"
    );
    let events = json_lines(&run.stdout);
    let diff = events
        .iter()
        .find(|e| e["type"] == "approval_requested")
        .and_then(|e| e["data"]["diff"].as_str())
        .unwrap_or_default()
        .to_string();
    assert!(diff.contains("+Visited again: again"), "{diff}");
    let answer = events.iter().find(|e| e["type"] == "final").unwrap();
    assert!(
        answer["data"]["content"]
            .as_str()
            .unwrap()
            .contains("I added this visit to my note"),
        "{answer}"
    );

    let (home, work) = setup();
    let mut cmd = taco(home.path(), work.path());
    cmd.args(["exec", "hi"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("using provider demo"),
        "auto-selected on a bare machine: {}",
        run.stderr
    );
    assert!(run.stdout.contains("denied"), "{}", run.stdout);
    assert!(!work.path().join("taco-demo-note.md").exists());
}

fn anthropic_sse(events: &[(&str, Value)]) -> Vec<String> {
    events
        .iter()
        .map(|(kind, data)| format!("event: {kind}\ndata: {data}\n\n"))
        .collect()
}

fn anthropic_tool_turn() -> Reply {
    Reply::sse(anthropic_sse(&[
        (
            "message_start",
            json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x", "content": [], "stop_reason": null, "usage": {"input_tokens": 30, "output_tokens": 1}}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "list_dir", "input": {}}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": ""}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"path\": \".\"}"}}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 12}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ]))
}

fn anthropic_text_turn(text: &str) -> Reply {
    Reply::sse(anthropic_sse(&[
        (
            "message_start",
            json!({"type": "message_start", "message": {"id": "msg_2", "type": "message", "role": "assistant", "model": "claude-x", "content": [], "usage": {"input_tokens": 50, "output_tokens": 1}}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ),
        ("ping", json!({"type": "ping"})),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 4}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ]))
}

#[tokio::test]
async fn anthropic_end_to_end() {
    let (home, work) = setup();
    let server = TestServer::start(vec![
        anthropic_tool_turn(),
        anthropic_text_turn("Only hello.txt."),
    ])
    .await;
    let mut cmd = taco(home.path(), work.path());
    cmd.env("ANTHROPIC_API_KEY", "sk-ant-test-0000")
        .env("ANTHROPIC_BASE_URL", server.url())
        .args([
            "exec",
            "--provider",
            "anthropic",
            "-m",
            "claude-x",
            "--json",
            "what is here?",
        ]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let events: Vec<Value> = json_lines(&run.stdout);
    let last = events.last().unwrap();
    assert_eq!(last["type"], "final");
    assert_eq!(last["data"]["content"], "Only hello.txt.");
    assert_eq!(
        last["data"]["usage"],
        json!({"input_tokens": 80, "output_tokens": 16})
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].path, "/v1/messages");
    assert_eq!(requests[0].header("x-api-key"), Some("sk-ant-test-0000"));
    assert!(requests[0].header("anthropic-version").is_some());
    let second = requests[1].json();
    assert_eq!(second["model"], "claude-x");
    assert!(second["system"].as_str().unwrap().contains("taco"));
    let messages = second["messages"].as_array().unwrap();
    assert_eq!(messages[1]["content"][0]["type"], "tool_use");
    assert_eq!(messages[1]["content"][0]["input"], json!({"path": "."}));
    assert_eq!(messages[2]["role"], "user");
    assert_eq!(messages[2]["content"][0]["type"], "tool_result");
    assert_eq!(messages[2]["content"][0]["tool_use_id"], "toolu_1");
    assert!(
        messages[2]["content"][0]["content"]
            .to_string()
            .contains("hello.txt")
    );
    assert!(!run.stdout.contains("sk-ant-test") && !run.stderr.contains("sk-ant-test"));
}

fn ndjson(lines: &[Value]) -> Reply {
    let chunks: Vec<String> = lines.iter().map(|l| format!("{l}\n")).collect();
    Reply::ndjson(chunks)
}

#[tokio::test]
async fn ollama_end_to_end() {
    let (home, work) = setup();
    let server = TestServer::start(vec![
        // The model's context window, asked once before the first call.
        Reply::status(200).json(&json!({"parameters": "stop \"<|im_end|>\"\nnum_ctx 8192",
            "model_info": {"general.architecture": "qwen3", "qwen3.context_length": 40960}})),
        ndjson(&[
            json!({"model": "qwen3", "created_at": "2026-01-01T00:00:00Z", "message": {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "read_file", "arguments": {"path": "hello.txt"}}}]}, "done": false}),
            json!({"model": "qwen3", "created_at": "2026-01-01T00:00:01Z", "message": {"role": "assistant", "content": ""}, "done": true, "done_reason": "stop", "total_duration": 5_000_000u64, "prompt_eval_count": 20, "eval_count": 6, "eval_duration": 3_000_000u64}),
        ]),
        ndjson(&[
            json!({"model": "qwen3", "message": {"role": "assistant", "content": "It says "}, "done": false}),
            json!({"model": "qwen3", "message": {"role": "assistant", "content": "hi there."}, "done": false}),
            json!({"model": "qwen3", "message": {"role": "assistant", "content": ""}, "done": true, "done_reason": "stop", "prompt_eval_count": 40, "eval_count": 4}),
        ]),
    ])
    .await;
    let mut cmd = taco(home.path(), work.path());
    cmd.env("OLLAMA_HOST", server.url()).args([
        "exec",
        "-p",
        "ollama",
        "-m",
        "qwen3",
        "read hello.txt",
    ]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stdout, "It says hi there.\n");
    let requests = server.requests();
    assert_eq!(requests[0].path, "/api/show");
    assert_eq!(requests[0].json(), json!({"model": "qwen3"}));
    assert_eq!(requests[1].path, "/api/chat");
    assert_eq!(requests.len(), 3, "the window is asked once");
    let second = requests[2].json();
    assert_eq!(second["model"], "qwen3");
    let messages = second["messages"].as_array().unwrap();
    assert_eq!(
        messages[2]["tool_calls"][0]["function"]["arguments"],
        json!({"path": "hello.txt"})
    );
    assert_eq!(messages[3]["role"], "tool");
    assert!(
        messages[3]["content"]
            .as_str()
            .unwrap()
            .contains("hi there")
    );
}

#[tokio::test]
async fn ollama_not_running_says_how_to_start_it() {
    let (home, work) = setup();
    let url = support::unreachable_url().await;
    let mut cmd = taco(home.path(), work.path());
    cmd.env("OLLAMA_HOST", &url)
        .env("TACO_CONFIG", no_retries(work.path()))
        .args(["exec", "-p", "ollama", "hi"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("ollama serve") && run.stderr.contains(&url),
        "{}",
        run.stderr
    );
}

#[tokio::test]
async fn a_429_with_retry_after_is_waited_out_then_succeeds() {
    let (home, work) = setup();
    let server = TestServer::start(vec![
        Reply::status(429)
            .header("Retry-After", "1")
            .json(&json!({"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}})),
        text_turn(&["made it"]),
    ])
    .await;
    let mut cmd = taco(home.path(), work.path());
    openai_args(&mut cmd, &server);
    cmd.args(["--json", "hi"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let gap = requests[1].received.duration_since(requests[0].received);
    assert!(
        gap >= Duration::from_millis(950),
        "the server asked for 1 s and saw {gap:?}"
    );
    let retry: Value = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|e| e["type"] == "retry")
        .unwrap();
    assert_eq!(retry["data"]["attempt"], 2);
    assert_eq!(retry["data"]["delay_ms"], 1000);
    assert!(
        run.stderr.contains("retrying 2/4 in 1.0 s"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.contains("made it"));
}

#[tokio::test]
async fn a_400_is_not_retried() {
    let (home, work) = setup();
    let server = TestServer::start(vec![
        Reply::status(400).json(&json!({"error": {"message": "Unsupported parameter: 'max_tokens'", "type": "invalid_request_error", "param": "max_tokens", "code": "unsupported_parameter"}})),
        text_turn(&["never"]),
    ])
    .await;
    let mut cmd = taco(home.path(), work.path());
    openai_args(&mut cmd, &server);
    cmd.arg("hi");
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 1);
    assert_eq!(server.requests().len(), 1);
    assert!(run.stderr.contains("max_tokens"), "{}", run.stderr);
    // stderr is plain text: the message's code spans are quoted, not raw Markdown.
    assert!(run.stderr.contains("provider 'openai'"), "{}", run.stderr);
    assert!(!run.stderr.contains('`'), "{}", run.stderr);
}

#[tokio::test]
async fn a_stream_cut_midway_is_retried_without_duplicated_text() {
    let (home, work) = setup();
    let cut = Reply::sse(vec![format!(
        "data: {}\n\n",
        chunk(json!({"content": "Partial ans"}), None)
    )]);
    let server = TestServer::start(vec![cut, text_turn(&["Full answer."])]).await;
    let mut cmd = taco(home.path(), work.path());
    openai_args(&mut cmd, &server);
    cmd.arg("hi");
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stdout, "Full answer.\n");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn a_malformed_chunk_midway_is_retried_without_duplicated_text() {
    let (home, work) = setup();
    let garbled = Reply::sse(vec![
        format!(
            "data: {}\n\n",
            chunk(json!({"content": "Partial ans"}), None)
        ),
        "data: {\"choices\": [{\"delta\": {\"content\": \"x\"\n\n".to_string(),
    ]);
    let server = TestServer::start(vec![garbled, text_turn(&["Full answer."])]).await;
    let mut cmd = taco(home.path(), work.path());
    openai_args(&mut cmd, &server);
    cmd.args(["--json", "hi"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(server.requests().len(), 2);
    assert!(run.stderr.contains("retrying 2/4"), "{}", run.stderr);
    let events: Vec<Value> = json_lines(&run.stdout);
    let retry = events.iter().position(|e| e["type"] == "retry").unwrap();
    assert!(
        events[retry]["data"]["reason"]
            .as_str()
            .unwrap()
            .contains("malformed")
    );
    let last = events.last().unwrap();
    assert_eq!(last["type"], "final");
    assert_eq!(last["data"]["content"], "Full answer.");
}

#[tokio::test]
async fn an_idle_stream_times_out() {
    let (home, work) = setup();
    let config = work.path().join("idle.toml");
    std::fs::write(
        &config,
        "[providers.openai.options]\nidle_timeout_secs = 1\nmax_attempts = 1\n",
    )
    .unwrap();
    let server = TestServer::start(vec![
        Reply::sse(vec![format!(
            "data: {}\n\n",
            chunk(json!({"content": "thinking"}), None)
        )])
        .hold(Duration::from_secs(20)),
    ])
    .await;
    let mut cmd = taco(home.path(), work.path());
    openai_args(&mut cmd, &server);
    cmd.args(["-c", config.to_str().unwrap(), "hi"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 1, "stderr: {}", run.stderr);
    assert!(
        run.stderr.contains("no data from") && run.stderr.contains("1 s"),
        "{}",
        run.stderr
    );
}

#[tokio::test]
async fn an_edit_is_asked_with_its_diff_and_applied_when_approved() {
    let (home, work) = setup();
    let args = json!({"path": "hello.txt", "edits": [{"old_string": "hi there", "new_string": "hello there"}]});
    for approve in ["none", "all"] {
        let server = TestServer::start(vec![
            tool_turn("e1", "edit_file", &args.to_string()),
            text_turn(&["ok"]),
        ])
        .await;
        let mut cmd = taco(home.path(), work.path());
        openai_args(&mut cmd, &server);
        cmd.args(["--json", "--approve", approve, "edit it"]);
        let run = finish(&mut cmd).await;
        assert_eq!(run.code, 0, "stderr: {}", run.stderr);
        let asked: Value = run
            .stdout
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .find(|e| e["type"] == "approval_requested")
            .unwrap();
        let diff = asked["data"]["diff"].as_str().unwrap();
        assert!(
            diff.starts_with("+1 −1 in hello.txt\n") && diff.contains("-hi there\n+hello there"),
            "{diff}"
        );
        let text = std::fs::read_to_string(work.path().join("hello.txt")).unwrap();
        let expected = if approve == "all" {
            "hello there\n"
        } else {
            "hi there\n"
        };
        assert_eq!(text, expected, "--approve {approve}");
    }
}

#[tokio::test]
async fn shell_rules_allow_what_they_name_and_never_more() {
    let (home, work) = setup();
    let config = home.path().join("rules.toml");
    std::fs::write(
        &config,
        "[tools.shell]\nallow = [\"echo\"]\nask = [\"echo secret\"]\n",
    )
    .unwrap();
    let server = TestServer::start(vec![
        tool_turns(&[
            ("ok", "shell", r#"{"command": "echo made > made.txt"}"#),
            ("plain", "shell", r#"{"command": "echo hi"}"#),
            (
                "null",
                "shell",
                r#"{"command": "timeout 5 echo hi >/dev/null 2>&1"}"#,
            ),
            (
                "wrapped",
                "shell",
                r#"{"command": "timeout 5 touch wrapped.txt"}"#,
            ),
            (
                "chained",
                "shell",
                r#"{"command": "echo hi; touch chained.txt"}"#,
            ),
            ("asked", "shell", r#"{"command": "echo secret"}"#),
        ]),
        text_turn(&["done"]),
    ])
    .await;
    let mut cmd = taco(home.path(), work.path());
    cmd.arg("-c").arg(&config);
    openai_args(&mut cmd, &server);
    cmd.args(["--json", "go"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let mut status: Vec<(String, String)> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["type"] == "tool_result")
        .map(|e| {
            (
                e["data"]["id"].as_str().unwrap().to_string(),
                e["data"]["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    status.sort();
    assert_eq!(
        status,
        [
            ("asked".to_string(), "denied".to_string()),
            ("chained".to_string(), "denied".to_string()),
            ("null".to_string(), "ok".to_string()),
            ("ok".to_string(), "denied".to_string()),
            ("plain".to_string(), "ok".to_string()),
            ("wrapped".to_string(), "denied".to_string()),
        ],
        "a redirect to a file, a chain, a wrapped other command and an ask prefix are \
         asked (and denied by exec); echo through timeout into /dev/null is echo"
    );
    for file in ["chained.txt", "made.txt", "wrapped.txt"] {
        assert!(!work.path().join(file).exists(), "{file}");
    }
}

#[tokio::test]
async fn a_running_command_shows_its_last_lines_while_it_runs() {
    let (home, work) = setup();
    let command = "for i in 1 2 3 4; do echo step $i; sleep 0.35; done";
    let server = TestServer::start(vec![
        tool_turn("s", "shell", &json!({"command": command}).to_string()),
        text_turn(&["done"]),
    ])
    .await;
    let trace = work.path().join("run.trace.jsonl");
    let mut cmd = taco(home.path(), work.path());
    openai_args(&mut cmd, &server);
    cmd.args(["--json", "--approve", "all", "--trace"])
        .arg(&trace)
        .arg("go");
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let events: Vec<Value> = json_lines(&run.stdout);
    let outputs: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "tool_output")
        .map(|e| e["data"]["tail"].as_str().unwrap())
        .collect();
    assert!(outputs.len() >= 2, "{outputs:?}");
    assert!(outputs[0].starts_with("step 1"), "{outputs:?}");
    for tail in &outputs {
        assert!(tail.lines().count() <= 5 && tail.len() <= 2048, "{tail:?}");
    }
    let last_output = events
        .iter()
        .rposition(|e| e["type"] == "tool_output")
        .unwrap();
    let result = events
        .iter()
        .position(|e| e["type"] == "tool_result")
        .unwrap();
    assert!(last_output < result, "output comes while it runs");
    assert!(
        events[result]["data"]["result"]["stdout"]
            .as_str()
            .unwrap()
            .contains("step 4"),
        "the result is unchanged"
    );
    let traced = std::fs::read_to_string(&trace).unwrap();
    assert!(!traced.contains("tool_output"), "live only, like deltas");
}
