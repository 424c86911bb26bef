//! The todo checklist (issue 30.3): a model writes and updates its list with `todo_write`
//! over real HTTP; the list shows at the top of the stack pane as the events arrive, in
//! `/status`, and again when the session is resumed from its file.

use crate::support;

use serde_json::{Value, json};
use support::TestServer;
use support::app::{Harness, screen_text};
use support::cli::*;
use taco::event::EventData;

const FIRST: &str = r#"{"todos": [
    {"content": "Read the code", "status": "in_progress", "activeForm": "Reading the code"},
    {"content": "Fix the bug", "status": "pending", "activeForm": "Fixing the bug"},
    {"content": "Run the tests", "status": "pending", "activeForm": "Running the tests"}
]}"#;

const SECOND: &str = r#"{"todos": [
    {"content": "Read the code", "status": "completed", "activeForm": "Reading the code"},
    {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
    {"content": "Run the tests", "status": "pending", "activeForm": "Running the tests"}
]}"#;

/// `taco exec --json` against a model that writes its list, updates it, then answers.
async fn exec_with_a_list(extra: &[&str]) -> (tempfile::TempDir, Vec<Value>, TestServer) {
    let (home, work) = setup();
    let server = TestServer::start(vec![
        tool_turn("t1", "todo_write", FIRST),
        tool_turn("t2", "todo_write", SECOND),
        text_turn(&["fixed"]),
    ])
    .await;
    let mut cmd = taco(home.path(), work.path());
    openai_args(&mut cmd, &server);
    cmd.args(extra).args(["--json", "fix the bug"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    (home, json_lines(&run.stdout), server)
}

fn result_of<'a>(lines: &'a [Value], id: &str) -> &'a Value {
    &lines
        .iter()
        .find(|e| e["type"] == "tool_result" && e["data"]["id"] == id)
        .unwrap_or_else(|| panic!("no result for {id}"))["data"]
}

#[tokio::test]
async fn the_model_writes_and_updates_its_list_and_sees_each_write_confirmed() {
    let (_home, lines, server) = exec_with_a_list(&[]).await;
    let offered = server.requests()[0].json()["tools"].to_string();
    assert!(offered.contains("\"todo_write\""), "{offered}");
    let second = result_of(&lines, "t2");
    assert_eq!(second["status"], "ok");
    assert_eq!(second["result"]["todos"][0]["status"], "completed");
    assert_eq!(second["result"]["todos"][1]["activeForm"], "Fixing the bug");
    // What the model got back says where the list stands, and how to use the tool once.
    let messages = server.requests()[1].json()["messages"].to_string();
    assert!(
        messages.contains("0 of 3 completed, 1 in progress"),
        "{messages}"
    );
    assert!(messages.contains("How to use `todo_write`"), "{messages}");
    let messages = server.requests()[2].json()["messages"].to_string();
    assert!(
        messages.contains("1 of 3 completed, 1 in progress"),
        "{messages}"
    );
}

#[tokio::test]
async fn plan_mode_lets_the_model_keep_its_list() {
    let (_home, lines, _server) = exec_with_a_list(&["--mode", "plan"]).await;
    assert_eq!(result_of(&lines, "t1")["status"], "ok");
    assert_eq!(result_of(&lines, "t2")["status"], "ok");
}

#[tokio::test]
async fn a_list_out_of_bounds_is_refused_with_a_reason_and_the_checklist_keeps_the_last() {
    let (home, work) = setup();
    let many: Vec<Value> = (0..51)
        .map(|n| json!({"content": format!("step {n}"), "status": "pending"}))
        .collect();
    let too_many = json!({ "todos": many }).to_string();
    let server = TestServer::start(vec![
        tool_turn("t1", "todo_write", FIRST),
        tool_turn("t2", "todo_write", &too_many),
        tool_turn(
            "t3",
            "todo_write",
            r#"{"todos": [{"content": "x", "status": "done"}]}"#,
        ),
        text_turn(&["ok"]),
    ])
    .await;
    let mut cmd = taco(home.path(), work.path());
    openai_args(&mut cmd, &server);
    cmd.args(["--json", "go"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let lines = json_lines(&run.stdout);
    let refused = result_of(&lines, "t2");
    assert_ne!(refused["status"], "ok");
    assert!(
        refused["error"].as_str().unwrap().contains("at most 50"),
        "{refused}"
    );
    let refused = result_of(&lines, "t3");
    assert!(
        refused["error"].as_str().unwrap().contains("in_progress"),
        "{refused}"
    );
    // The pane shows the last list that was written.
    let mut h = resumed(&home);
    let screen = screen_text(&h.screen(120, 30));
    assert!(screen.contains("todo 0/3 done"), "{screen}");
    assert!(!screen.contains("step 1"), "{screen}");
}

/// The session `taco exec` left, loaded as `--resume` loads it, into a fresh app.
fn resumed(home: &tempfile::TempDir) -> Harness {
    let path = only_session(home.path());
    let loaded = taco::session::load(&path).unwrap();
    let mut h = Harness::new();
    let now = h.now();
    h.app.replay(&loaded.entries, now);
    h
}

#[tokio::test]
async fn the_checklist_is_restored_when_the_session_is_resumed() {
    let (home, _lines, _server) = exec_with_a_list(&[]).await;
    let mut h = resumed(&home);
    let screen = screen_text(&h.screen(120, 30));
    assert!(screen.contains("todo 1/3 done"), "{screen}");
    assert!(screen.contains("✔ Read the code"), "{screen}");
    assert!(screen.contains("▶ Fixing the bug"), "{screen}");
    assert!(screen.contains("○ Run the tests"), "{screen}");
    // `/status` lists it too.
    h.command("/status");
    let screen = screen_text(&h.screen(120, 60));
    assert!(
        screen.contains("Todo (1/3 done · Fixing the bug)"),
        "{screen}"
    );
    // A new conversation has no list.
    h.command("/clear");
    let screen = screen_text(&h.screen(120, 30));
    assert!(!screen.contains("Fixing the bug"), "{screen}");
}

/// What the real tool answers to `arguments`.
async fn written(arguments: &str) -> Value {
    use taco::tools::{Tool, ToolContext, ToolReply};
    let ctx = ToolContext {
        workdir: std::env::temp_dir(),
        settings: Default::default(),
        cancel: Default::default(),
        call: "t".into(),
        progress: None,
        seen: None,
        trace: None,
    };
    let arguments: Value = serde_json::from_str(arguments).unwrap();
    match taco::tools::builtin::TodoWrite.call(arguments, &ctx).await {
        Ok(ToolReply::Done(value)) => value,
        other => panic!("{other:?}"),
    }
}

fn todo_call(h: &mut Harness, id: &str, arguments: &str) {
    h.event(EventData::ToolCall {
        turn: 1,
        id: id.into(),
        name: "todo_write".into(),
        arguments: serde_json::from_str(arguments).unwrap(),
        parent: None,
        sandbox: None,
    });
}

fn todo_result(h: &mut Harness, id: &str, result: Value) {
    h.event(EventData::ToolResult {
        id: id.into(),
        name: "todo_write".into(),
        ok: true,
        status: Some(taco::event::ToolStatus::Ok),
        denied_by: None,
        result: Some(result),
        error: None,
        duration_ms: 1,
    });
}

#[tokio::test]
async fn the_checklist_follows_each_write_above_the_calls_in_flight() {
    let mut h = Harness::new();
    h.event(EventData::RunStarted {
        prompt: "fix the bug".into(),
        provider: "demo".into(),
        model: "demo".into(),
        max_turns: 10,
        trace_parent: None,
    });
    todo_call(&mut h, "t1", FIRST);
    let screen = screen_text(&h.screen(120, 30));
    assert!(
        !screen.contains("todo 0/3"),
        "no list before its write: {screen}"
    );
    todo_result(&mut h, "t1", written(FIRST).await);
    let screen = screen_text(&h.screen(120, 30));
    assert!(screen.contains("todo 0/3 done"), "{screen}");
    assert!(screen.contains("▶ Reading the code"), "{screen}");
    todo_call(&mut h, "t2", SECOND);
    todo_result(&mut h, "t2", written(SECOND).await);
    // A command runs under the list: the list above, the stack below.
    h.event(EventData::ToolCall {
        turn: 2,
        id: "s1".into(),
        name: "shell".into(),
        arguments: json!({"command": "cargo test"}),
        parent: None,
        sandbox: None,
    });
    h.ms += 2_000;
    let terminal = h.screen(120, 24);
    let screen = screen_text(&terminal);
    assert!(screen.contains("todo 1/3 done"), "{screen}");
    assert!(screen.contains("▶ Fixing the bug"), "{screen}");
    assert!(screen.contains("command=cargo test"), "{screen}");
    insta::assert_snapshot!("todo_live_over_a_running_call", terminal.backend());
}
