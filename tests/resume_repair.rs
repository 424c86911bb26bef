//! A session that lost a line still resumes into a request the APIs accept (issue 10.3).

use crate::support;

use serde_json::json;
use support::TestServer;
use support::cli::*;

#[tokio::test]
async fn a_session_missing_a_tool_line_resumes_into_a_valid_request() {
    let (home, work) = setup();
    let server = TestServer::start(vec![
        tool_turn("s1", "shell", &json!({ "command": "echo one" }).to_string()),
        text_turn(&["first done"]),
        text_turn(&["second done"]),
    ])
    .await;
    let mut cmd = taco(home.path(), work.path());
    openai_args(&mut cmd, &server);
    cmd.args(["--approve", "all", "run it"]);
    assert_eq!(finish(&mut cmd).await.code, 0);

    // Lose the tool message line, as a crash or a full disk would.
    let path = only_session(home.path());
    let text = std::fs::read_to_string(&path).unwrap();
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| !(l.contains("\"type\":\"message\"") && l.contains("\"role\":\"tool\"")))
        .collect();
    assert_eq!(
        kept.len() + 1,
        text.lines().count(),
        "exactly one tool message line"
    );
    std::fs::write(&path, kept.join("\n") + "\n").unwrap();

    let mut cmd = taco(home.path(), work.path());
    openai_args(&mut cmd, &server);
    cmd.args(["and now?", "--resume"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("lost their results"), "{}", run.stderr);
    let request = server.requests()[2].json();
    let messages = request["messages"].as_array().unwrap();
    // Every call has its result right after its turn, and nothing else comes in between.
    for (i, m) in messages.iter().enumerate() {
        for call in m["tool_calls"].as_array().into_iter().flatten() {
            let id = call["id"].as_str().unwrap();
            let answered = messages[i + 1..]
                .iter()
                .take_while(|n| n["role"] == "tool")
                .any(|n| n["tool_call_id"] == id);
            assert!(answered, "call {id} has no result: {messages:?}");
        }
    }
    assert_eq!(messages.last().unwrap()["content"], "and now?");
}

#[tokio::test]
async fn resuming_a_large_session_appends_only_what_is_new() {
    let (home, work) = setup();
    let dir = sessions_dir(home.path());
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("20260101-000000-abcdef.jsonl");
    let workdir = work.path().canonicalize().unwrap();
    // A person's conversation (`--resume` without an id takes those).
    let mut text = json!({"type": "session", "version": 2, "id": "20260101-000000-abcdef",
        "provider": "openai", "model": "m1", "workdir": workdir, "started": 1, "kind": "tui"})
    .to_string();
    text.push('\n');
    text.push_str(
        &json!({"type": "message", "timestamp": 1, "data": {"role": "system", "content": "s"}})
            .to_string(),
    );
    text.push('\n');
    for i in 0..2000 {
        let (role, content) = if i % 2 == 0 {
            ("user", "a question")
        } else {
            ("assistant", "an answer of some length")
        };
        text.push_str(&json!({"type": "message", "timestamp": 1, "data": {"role": role, "content": format!("{content} {i}")}}).to_string());
        text.push('\n');
    }
    std::fs::write(&path, &text).unwrap();
    let before = text.len();

    let server = TestServer::start(vec![text_turn(&["ok"])]).await;
    let mut cmd = taco(home.path(), work.path());
    openai_args(&mut cmd, &server);
    cmd.args(["one more", "--resume"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    // The history was sent (within the window) but not written again.
    let sent = server.requests()[0].json();
    assert!(sent["messages"].as_array().unwrap().len() > 40);
    let after = std::fs::metadata(&path).unwrap().len() as usize;
    let appended = after - before;
    let loaded = taco::session::load(&path).unwrap();
    let messages = loaded
        .entries
        .iter()
        .filter(|e| matches!(e, taco::session::Entry::Message(_)))
        .count();
    let new_messages = messages - 2001;
    assert_eq!(new_messages, 2, "the request and the answer");
    assert!(
        appended < 1024 * new_messages,
        "{appended} bytes appended for {new_messages} new messages"
    );
}

#[tokio::test]
async fn resume_by_id_from_elsewhere_uses_the_sessions_provider_model_and_workdir() {
    let (home, work) = setup();
    let server = TestServer::start(vec![text_turn(&["first"]), text_turn(&["second"])]).await;
    let mut cmd = taco(home.path(), work.path());
    cmd.args([
        "exec",
        "-p",
        "openai",
        "--base-url",
        &format!("{}/v1", server.url()),
    ])
    .args(["-m", "model-of-the-session", "first"]);
    assert_eq!(finish(&mut cmd).await.code, 0);
    let id = only_session(home.path());
    let id = id.file_stem().unwrap().to_str().unwrap().to_string();

    // From another directory, naming only the session and the server.
    let elsewhere = tempfile::tempdir().unwrap();
    let mut cmd = taco(home.path(), elsewhere.path());
    cmd.args(["exec", "--base-url", &format!("{}/v1", server.url())])
        .arg(format!("--resume={id}"))
        .arg("second");
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let workdir = work.path().canonicalize().unwrap();
    assert!(run.stderr.contains("provider 'openai'"), "{}", run.stderr);
    assert!(
        run.stderr.contains("model 'model-of-the-session'"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(&workdir.display().to_string()),
        "{}",
        run.stderr
    );
    let request = server.requests()[1].json();
    assert_eq!(request["model"], "model-of-the-session");
    let system = request["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains(&workdir.display().to_string()), "{system}");
}
