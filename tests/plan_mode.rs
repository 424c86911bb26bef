//! Permission modes (issue 30.2): `exec --mode plan` refuses what could change the workspace
//! and tells the model to plan; `--mode auto-edit` lets file edits through without asking;
//! in the TUI's task, a plan ends in a question that approves it (switching the mode and
//! carrying it out) or sends feedback.

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use support::TestServer;
use support::cli::*;
use taco::event::{EventData, InputKind, Mode};
use taco::orchestrator::Orchestrator;
use taco::orchestrator::task::{self, Op, OrchestratorTask};
use taco::tools::ToolRegistry;

fn result_of<'a>(lines: &'a [Value], id: &str) -> &'a Value {
    &lines
        .iter()
        .find(|e| e["type"] == "tool_result" && e["data"]["id"] == id)
        .unwrap_or_else(|| panic!("no result for {id}"))["data"]
}

#[tokio::test]
async fn exec_in_plan_mode_runs_reads_refuses_writes_and_shell_and_asks_for_a_plan() {
    let (home, work) = setup();
    let server = TestServer::start(vec![
        tool_turns(&[
            ("r1", "read_file", r#"{"path": "hello.txt"}"#),
            ("w1", "write_file", r#"{"path": "new.txt", "content": "x"}"#),
            ("s1", "shell", r#"{"command": "touch made.txt"}"#),
        ]),
        text_turn(&["1. add new.txt"]),
    ])
    .await;
    let mut cmd = taco(home.path(), work.path());
    openai_args(&mut cmd, &server);
    cmd.args(["--mode", "plan", "--approve", "all", "--json", "add a file"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let lines = json_lines(&run.stdout);
    assert_eq!(result_of(&lines, "r1")["status"], "ok");
    for id in ["w1", "s1"] {
        assert_eq!(result_of(&lines, id)["status"], "denied", "{id}");
        assert_eq!(result_of(&lines, id)["denied_by"], "mode", "{id}");
    }
    assert!(!work.path().join("new.txt").exists() && !work.path().join("made.txt").exists());
    let first = server.requests()[0].json()["messages"].to_string();
    assert!(first.contains("You are in plan mode"), "{first}");
    let second = server.requests()[1].json()["messages"].to_string();
    assert!(
        second.contains("plan mode: write_file could change the workspace"),
        "{second}"
    );
    assert!(run.stdout.contains("1. add new.txt"));
}

#[tokio::test]
async fn exec_in_auto_edit_mode_edits_without_asking_but_shell_still_asks() {
    let (home, work) = setup();
    let server = TestServer::start(vec![
        tool_turns(&[
            ("w1", "write_file", r#"{"path": "new.txt", "content": "x"}"#),
            ("s1", "shell", r#"{"command": "touch made.txt"}"#),
        ]),
        text_turn(&["done"]),
    ])
    .await;
    let mut cmd = taco(home.path(), work.path());
    openai_args(&mut cmd, &server);
    // Nobody can be asked: what asks is denied.
    cmd.args(["--mode", "auto-edit", "--json", "go"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let lines = json_lines(&run.stdout);
    assert_eq!(result_of(&lines, "w1")["status"], "ok");
    assert!(work.path().join("new.txt").exists());
    assert_eq!(result_of(&lines, "s1")["denied_by"], "headless");
    assert!(!work.path().join("made.txt").exists());
}

async fn next_until(t: &mut OrchestratorTask, stop: impl Fn(&EventData) -> bool) -> Vec<EventData> {
    let mut seen = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(10), t.events.recv())
            .await
            .expect("an event in time")
            .expect("the task is alive");
        let done = stop(&event.data);
        seen.push(event.data);
        if done {
            return seen;
        }
    }
}

fn plan_question(d: &EventData) -> bool {
    matches!(d, EventData::InputRequested(q) if q.kind == InputKind::Plan)
}

#[tokio::test]
async fn a_plan_is_sent_back_with_feedback_then_approved_and_carried_out_in_the_mode_chosen() {
    use support::scripted::*;
    let provider = Scripted::new(vec![
        Ok(text("plan v1")),
        Ok(text("plan v2, with tabs")),
        Ok(calls(&[(
            "w1",
            "write_file",
            json!({"path": "a.txt", "content": "a"}),
        )])),
        Ok(text("done")),
    ]);
    let work = tempfile::tempdir().unwrap();
    let mut settings = settings(10);
    settings.workdir = work.path().canonicalize().unwrap();
    let orchestrator = Orchestrator::new(
        provider.clone(),
        Arc::new(ToolRegistry::builtins()),
        settings,
    );
    let mut t = task::spawn(orchestrator);
    t.ops.send(Op::SetMode(Mode::Plan)).unwrap();
    next_until(&mut t, |d| {
        matches!(d, EventData::ModeChanged { mode: Mode::Plan })
    })
    .await;
    t.ops.send(Op::Submit("add a".into())).unwrap();
    let seen = next_until(&mut t, plan_question).await;
    let Some(EventData::InputRequested(q)) = seen.last() else {
        unreachable!()
    };
    t.ops
        .send(Op::Answer {
            id: q.id.clone(),
            value: Some("use tabs".into()),
        })
        .unwrap();
    let seen = next_until(&mut t, plan_question).await;
    assert!(
        !seen
            .iter()
            .any(|d| matches!(d, EventData::ModeChanged { .. })),
        "still planning"
    );
    let sent = provider.sent();
    let last: Vec<String> = sent
        .last()
        .unwrap()
        .messages
        .iter()
        .filter_map(|m| m.content.clone())
        .collect();
    assert!(last.iter().any(|m| m == "use tabs"), "{last:?}");
    let Some(EventData::InputRequested(q)) = seen.last() else {
        unreachable!()
    };
    // `e`: approved, carried out in auto-edit (the write is not asked about).
    t.ops
        .send(Op::Answer {
            id: q.id.clone(),
            value: Some("e".into()),
        })
        .unwrap();
    let seen = next_until(&mut t, |d| matches!(d, EventData::Final { .. })).await;
    assert!(seen.iter().any(|d| matches!(
        d,
        EventData::ModeChanged {
            mode: Mode::AutoEdit
        }
    )));
    assert!(
        !seen
            .iter()
            .any(|d| matches!(d, EventData::ApprovalRequested { .. }))
    );
    assert!(work.path().join("a.txt").exists());
    let sent = provider.sent();
    let third: Vec<String> = sent[2]
        .messages
        .iter()
        .filter_map(|m| m.content.clone())
        .collect();
    assert!(
        third.iter().any(|m| m.contains("approved the plan")),
        "{third:?}"
    );
    t.ops.send(Op::Shutdown).unwrap();
}
