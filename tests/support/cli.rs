//! Running the `taco` binary in tests: a clean environment, OpenAI-style replies.
#![allow(dead_code)]

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::process::Command;

use super::{Reply, TestServer};

/// The binary with a clean environment: no keys, no user config.
pub fn taco(home: &Path, workdir: &Path) -> Command {
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

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub async fn finish(cmd: &mut Command) -> Run {
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

/// Every line of `taco exec --json` output, parsed.
pub fn json_lines(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

pub fn sse(payloads: &[Value]) -> Vec<String> {
    let mut out: Vec<String> = payloads.iter().map(|p| format!("data: {p}\n\n")).collect();
    out.push("data: [DONE]\n\n".into());
    out
}

pub fn chunk(delta: Value, finish: Option<&str>) -> Value {
    json!({"id": "c", "object": "chat.completion.chunk", "model": "m", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
}

pub fn tool_turn(id: &str, name: &str, args: &str) -> Reply {
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

/// One turn that makes several calls: (id, name, arguments).
pub fn tool_turns(list: &[(&str, &str, &str)]) -> Reply {
    let mut payloads = vec![chunk(json!({"role": "assistant", "content": null}), None)];
    for (index, (id, name, args)) in list.iter().enumerate() {
        payloads.push(chunk(
            json!({"tool_calls": [{"index": index, "id": id, "type": "function", "function": {"name": name, "arguments": args}}]}),
            None,
        ));
    }
    payloads.push(chunk(json!({}), Some("tool_calls")));
    payloads.push(
        json!({"id": "c", "choices": [], "usage": {"prompt_tokens": 20, "completion_tokens": 5}}),
    );
    Reply::sse(sse(&payloads))
}

pub fn text_turn(parts: &[&str]) -> Reply {
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

pub fn setup() -> (tempfile::TempDir, tempfile::TempDir) {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("hello.txt"), "hi there\n").unwrap();
    (home, work)
}

/// A config where a failed call is final at once (connection errors are otherwise retried
/// with backoff, which only slows these tests down).
pub fn no_retries(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("no-retries.toml");
    let text = "[providers.openai.options]\nmax_attempts = 1\n[providers.ollama.options]\nmax_attempts = 1\n";
    std::fs::write(&path, text).unwrap();
    path
}

pub fn openai_args(cmd: &mut Command, server: &TestServer) {
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

/// Where taco keeps sessions under a test's HOME.
pub fn sessions_dir(home: &Path) -> std::path::PathBuf {
    home.join(".local/share/taco/sessions")
}

/// The session files under a test's HOME (not the index beside them).
pub fn session_files(home: &Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(sessions_dir(home))
        .map(|d| {
            d.map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
                .collect()
        })
        .unwrap_or_default()
}

/// The one session file under a test's HOME.
pub fn only_session(home: &Path) -> std::path::PathBuf {
    let files = session_files(home);
    assert_eq!(files.len(), 1, "{files:?}");
    files[0].clone()
}
