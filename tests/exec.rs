//! `taco exec` as a process against a loopback OpenAI-compatible server (DESIGN §6).

mod support;

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use support::{Reply, TestServer};
use tokio::io::AsyncWriteExt;
use tokio::process::Command;

/// The binary with a clean environment: no keys, no user config.
fn taco(home: &Path, workdir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_taco"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .current_dir(workdir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    cmd
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

async fn finish(cmd: &mut Command) -> Run {
    let output = tokio::time::timeout(Duration::from_secs(60), cmd.output())
        .await
        .expect("taco exec hung")
        .unwrap();
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

fn sse(payloads: &[Value]) -> Vec<String> {
    let mut out: Vec<String> = payloads.iter().map(|p| format!("data: {p}\n\n")).collect();
    out.push("data: [DONE]\n\n".into());
    out
}

fn chunk(delta: Value, finish: Option<&str>) -> Value {
    json!({"id": "c", "object": "chat.completion.chunk", "model": "m", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
}

fn tool_turn(id: &str, name: &str, args: &str) -> Reply {
    Reply::sse(sse(&[
        chunk(json!({"role": "assistant", "content": null}), None),
        chunk(
            json!({"tool_calls": [{"index": 0, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": args}}]}),
            None,
        ),
        chunk(json!({}), Some("tool_calls")),
        json!({"id": "c", "choices": [], "usage": {"prompt_tokens": 20, "completion_tokens": 5}}),
    ]))
}

fn text_turn(parts: &[&str]) -> Reply {
    let mut payloads: Vec<Value> = parts
        .iter()
        .map(|p| chunk(json!({"content": p}), None))
        .collect();
    payloads.push(chunk(json!({}), Some("stop")));
    payloads.push(
        json!({"id": "c", "choices": [], "usage": {"prompt_tokens": 30, "completion_tokens": 3}}),
    );
    Reply::sse(sse(&payloads))
}

fn setup() -> (tempfile::TempDir, tempfile::TempDir) {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("hello.txt"), "hi there\n").unwrap();
    (home, work)
}

fn openai_args(cmd: &mut Command, server: &TestServer) {
    cmd.args([
        "exec",
        "--provider",
        "openai",
        "--base-url",
        &format!("{}/v1", server.url()),
        "--model",
        "m1",
    ]);
}

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
            "search_files",
            "shell",
            "web_fetch"
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
    let events: Vec<Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let request_id = events[0]["request_id"].as_str().unwrap();
    assert!(uuid::Uuid::parse_str(request_id).is_ok());
    for e in &events {
        assert_eq!(e["request_id"], request_id);
        assert!(e["timestamp"].as_u64().unwrap() > 1_600_000_000_000);
        assert!(e["data"].is_object());
    }
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "run_started",
            "llm_call",
            "tool_call",
            "stack_push",
            "tool_result",
            "stack_pop",
            "delta",
            "delta",
            "llm_call",
            "final"
        ]
    );
    assert_eq!(
        events[1]["data"]["tool_calls"][0]["arguments"],
        json!({"path": "hello.txt"})
    );
    assert_eq!(
        events[1]["data"]["usage"],
        json!({"input_tokens": 20, "output_tokens": 5})
    );
    assert_eq!(events[4]["data"]["ok"], true);
    assert!(events[4]["data"]["result"].to_string().contains("hi there"));
    assert_eq!(events[9]["data"]["content"], "It says hi.");
    assert_eq!(
        events[9]["data"]["usage"],
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
        run.stderr.contains("unknown field `base`"),
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
