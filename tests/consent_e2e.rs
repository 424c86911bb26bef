//! End to end (issue 26): a person types a sentence at 300 ms a key, Enter included, while an
//! approval, an escalation and an MCP form open in the real binary in tmux. None of them is
//! answered by the typing: the write is not made, the unsandboxed command does not run, the
//! form is not sent; each sentence reaches the model later as the user's own message.
//! Needs tmux (CI installs it).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use crate::support;

use std::path::Path;
use std::time::Duration;

use serde_json::Value;
use support::cli::{text_turn, tool_turn};
use support::tmux::Tmux;
use support::{Reply, TestServer};

/// Sentences that begin with the dialogs' own answer letters.
const SENTENCES: [&str; 3] = [
    "yes go ahead and write it",
    "a quick one: yes, run it",
    "yes my password is hunter2",
];

/// A reply that arrives over about 1.8 s, so the dialog it asks for opens mid-sentence.
fn slow(reply: Reply) -> Reply {
    reply.chunk_delay(Duration::from_millis(300))
}

fn config(home: &Path, server: &TestServer) {
    let dir = home.join("config/taco");
    std::fs::create_dir_all(&dir).unwrap();
    let text = format!(
        "provider = \"local\"\n\n[providers.local]\nkind = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"m\"\n\n[providers.local.options]\nmax_attempts = 1\n\n[mcp.servers.fixture]\ncommand = {:?}\npolicy = \"allow\"\n",
        server.url(),
        support::mcp::fixture().display().to_string()
    );
    std::fs::write(dir.join("config.toml"), text).unwrap();
}

/// Types `sentence` and Enter, a key every 300 ms, like a person not looking at the screen.
fn type_like_a_person(tmux: &Tmux, sentence: &str) {
    for c in sentence.chars() {
        tmux.text(&c.to_string());
        std::thread::sleep(Duration::from_millis(300));
    }
    tmux.keys(&["Enter"]);
}

/// The last user message of a request body.
fn last_user(request: &Value) -> String {
    (request["messages"].as_array().unwrap().iter())
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string()
}

#[test]
fn a_sentence_typed_at_300_ms_a_key_answers_no_approval_escalation_or_form() {
    if !crate::support::needs::tmux() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let server = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(TestServer::start(vec![
            slow(tool_turn(
                "w1",
                "write_file",
                r#"{"path": "victim.txt", "content": "written by typing"}"#,
            )),
            slow(tool_turn(
                "s1",
                "shell",
                r#"{"command": "touch escaped.txt", "unsandboxed": true}"#,
            )),
            slow(tool_turn("f1", "mcp__fixture__ask", "{}")),
            text_turn(&["All three were declined."]),
            text_turn(&["ok 1"]),
            text_turn(&["ok 2"]),
            text_turn(&["ok 3"]),
        ]));
    config(home.path(), &server);
    let tmux = support::tmux::launch_taco(home.path(), work.path(), "", "", (170, 45));
    tmux.wait_for("Welcome to taco");
    // The MCP server's tools are there before the request.
    tmux.wait_for_mcp("mcp__fixture__ask");

    tmux.text("start");
    tmux.keys(&["Enter"]);
    type_like_a_person(&tmux, SENTENCES[0]);
    let screen = tmux.wait_for("1 queued");
    assert!(screen.contains("Approve write_file?"), "{screen}");
    assert!(!work.path().join("victim.txt").exists(), "{screen}");
    // The user reads it and denies it: Tab, n, Enter, and no reason.
    tmux.wait_for_ready("Approve write_file?");
    tmux.keys(&["n", "Enter"]);
    tmux.wait_for("Reason for the model");
    tmux.keys(&["Enter"]);

    type_like_a_person(&tmux, SENTENCES[1]);
    let screen = tmux.wait_for("2 queued");
    assert!(screen.contains("Run shell unsandboxed?"), "{screen}");
    assert!(!work.path().join("escaped.txt").exists(), "{screen}");
    tmux.wait_for_ready("Run shell unsandboxed?");
    tmux.keys(&["n", "Enter"]);
    tmux.wait_for("Reason for the model");
    tmux.keys(&["Enter"]);

    type_like_a_person(&tmux, SENTENCES[2]);
    let screen = tmux.wait_for("3 queued");
    assert!(
        screen.contains("Who are you?"),
        "the form's first field:\n{screen}"
    );
    // The user moves to the form and cancels it (Esc).
    tmux.wait_for_ready("Who are you?");
    tmux.keys(&["Escape"]);
    tmux.wait_for("ok 3");

    let requests = server.requests();
    let bodies: Vec<Value> = requests.iter().map(|r| r.json()).collect();
    assert_eq!(
        bodies.len(),
        7,
        "three tool turns, the answer, three messages"
    );
    // What each call came back with: denied, denied, cancelled; never run or sent.
    let results: Vec<String> = (bodies[3]["messages"].as_array().unwrap().iter())
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(results.len(), 3, "{results:?}");
    assert!(results[0].contains("denied"), "{results:?}");
    assert!(results[1].contains("denied"), "{results:?}");
    assert!(
        results[2].contains("cancelled") && !results[2].contains("hunter2"),
        "{results:?}"
    );
    // Each sentence arrived whole, as the user's message.
    for (body, sentence) in bodies[4..].iter().zip(SENTENCES) {
        assert_eq!(last_user(body), sentence);
    }
    assert!(!work.path().join("victim.txt").exists());
    assert!(!work.path().join("escaped.txt").exists());
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.wait_for("EXITED");
}
