//! A session that lost a line still resumes into a request the APIs accept (issue 10.3).

mod support;

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
    let dir = home.path().join(".local/share/taco/sessions");
    let path = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
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
