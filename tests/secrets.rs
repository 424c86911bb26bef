//! Secrets stay out of tools and transcripts (issue 9.3): `taco exec` as a process, a shell
//! call that prints its environment and a file holding the key, against a loopback server.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use crate::support;

use std::path::Path;

use serde_json::json;
use support::cli::*;
use support::{Reply, TestServer};

const KEY: &str = "sk-test-SECRET-0a1b2c3d4e5f6789";
const TOKEN: &str = "ghp_SECRETTOKEN0123456789abcdef";

/// Every file below `dir`, as text (lossy), with its path.
fn files_under(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(bytes) = std::fs::read(&path) {
                out.push((
                    path.display().to_string(),
                    String::from_utf8_lossy(&bytes).into_owned(),
                ));
            }
        }
    }
    out
}

fn assert_clean(what: &str, text: &str) {
    for secret in [KEY, TOKEN, "SECRET"] {
        assert!(!text.contains(secret), "{what} carries {secret}:\n{text}");
    }
}

#[tokio::test]
async fn env_in_a_shell_call_reaches_no_file_output_or_request() {
    let (home, work) = setup();
    // The key also sits in a file, so redaction (not only scrubbing) is exercised.
    std::fs::write(work.path().join("key.txt"), format!("{KEY}\n")).unwrap();
    let config = home.path().join("taco.toml");
    std::fs::write(
        &config,
        "[tools.shell]\nenv_passthrough = [\"GITHUB_TOKEN\"]\n",
    )
    .unwrap();
    let command = "env; echo from-file:$(cat key.txt); echo var:$OPENAI_API_KEY";
    let server = TestServer::start(vec![
        tool_turn("s1", "shell", &json!({ "command": command }).to_string()),
        text_turn(&["done"]),
    ])
    .await;
    let mut cmd = taco(home.path(), work.path());
    openai_args(&mut cmd, &server);
    cmd.env("OPENAI_API_KEY", KEY)
        .env("GITHUB_TOKEN", TOKEN)
        .env("TACO_TEST_VISIBLE", "plain-value")
        .args(["-c", config.to_str().unwrap()])
        .args(["--json", "--approve", "all", "--trace"])
        .arg(work.path().join("run.trace"))
        .arg("show me the environment");
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let second = requests[1].json();
    let tool_message = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    // The command ran: plain variables are there, the key variable is not, the file's
    // copy of the key and the passed-through token are masked.
    assert!(
        tool_message.contains("TACO_TEST_VISIBLE=plain-value"),
        "{tool_message}"
    );
    assert!(!tool_message.contains("OPENAI_API_KEY="), "{tool_message}");
    assert!(tool_message.contains("var:\\n"), "{tool_message}");
    assert!(tool_message.contains("from-file:sk-…***"), "{tool_message}");
    assert!(
        tool_message.contains("GITHUB_TOKEN=ghp…***"),
        "{tool_message}"
    );
    assert_clean(
        "the request after the tool call",
        &String::from_utf8_lossy(&requests[1].body),
    );
    assert_clean("stdout (--json)", &run.stdout);
    assert_clean("stderr", &run.stderr);
    let mut saw_session = false;
    for (path, text) in files_under(home.path()) {
        saw_session |= path.contains("sessions");
        assert_clean(&path, &text);
    }
    assert!(saw_session, "a session file was written under HOME");
    let trace = std::fs::read_to_string(work.path().join("run.trace")).unwrap();
    assert!(trace.contains("tool_result"));
    assert_clean("the trace", &trace);
}

#[tokio::test]
async fn a_provider_that_echoes_the_key_mid_stream_does_not_get_it_printed() {
    let (home, work) = setup();
    let echo = format!(
        "data: {{\"error\": {{\"message\": \"key {KEY} is not allowed here\", \"type\": \"invalid_request_error\"}}}}\n\n"
    );
    let server = TestServer::start(vec![Reply::sse([
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n".to_string(),
        echo,
    ])])
    .await;
    let mut cmd = taco(home.path(), work.path());
    openai_args(&mut cmd, &server);
    cmd.env("OPENAI_API_KEY", KEY).args(["--json", "hi"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 1, "stderr: {}", run.stderr);
    assert!(run.stderr.contains("is not allowed here"), "{}", run.stderr);
    assert!(run.stderr.contains("sk-…***"), "{}", run.stderr);
    assert_clean("stderr", &run.stderr);
    assert_clean("stdout", &run.stdout);
    for (path, text) in files_under(home.path()) {
        assert_clean(&path, &text);
    }
}
