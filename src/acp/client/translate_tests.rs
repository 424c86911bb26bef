use agent_client_protocol::v1::schema::SessionUpdate;
use serde_json::json;

use super::*;
use crate::event::{Decision, Scope};
use crate::run_model::RunModel;

/// An update from its ACP JSON (as an agent sends it), translated at `now`.
fn feed(t: &mut Translator, update: Value, now: u64) -> Vec<EventData> {
    let parsed: SessionUpdate = serde_json::from_value(update.clone()).unwrap();
    t.update(&parsed, update, now)
}

fn kinds(events: &[EventData]) -> Vec<&'static str> {
    events.iter().map(EventData::kind).collect()
}

fn text(s: &str) -> Value {
    json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": s}})
}

/// The events folded into a run model, as the panes see them.
fn folded(events: &[EventData]) -> RunModel {
    let mut run = RunModel::new();
    let id: std::sync::Arc<str> = std::sync::Arc::from("r1");
    for (i, data) in events.iter().enumerate() {
        run.apply(&crate::event::Event {
            timestamp: 1_000 + i as u64,
            request_id: id.clone(),
            data: data.clone(),
        });
    }
    run
}

#[test]
fn text_tools_and_text_read_as_two_turns() {
    let mut t = Translator::new("codex", std::path::Path::new("/w"));
    let mut all = t.start("fix it", 1000);
    all.extend(feed(&mut t, text("Let me look."), 10));
    all.extend(feed(
        &mut t,
        json!({"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Read src/main.rs",
               "kind": "read", "status": "pending",
               "locations": [{"path": "/w/src/main.rs", "line": 3}]}),
        20,
    ));
    all.extend(feed(
        &mut t,
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "in_progress"}),
        30,
    ));
    all.extend(feed(
        &mut t,
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed",
               "content": [{"type": "content", "content": {"type": "text", "text": "fn main() {}"}}]}),
        80,
    ));
    all.extend(feed(&mut t, text("Done."), 90));
    all.extend(t.finish(StopReason::EndTurn, 100));
    assert_eq!(
        kinds(&all),
        [
            "run_started",
            "llm_started",
            "delta",
            "llm_call",
            "tool_call",
            "stack_push",
            "stack_push",
            "tool_result",
            "stack_pop",
            "llm_started",
            "delta",
            "llm_call",
            "final"
        ]
    );
    let EventData::ToolCall {
        name,
        arguments,
        turn,
        ..
    } = &all[4]
    else {
        panic!("{:?}", all[4]);
    };
    assert_eq!((name.as_str(), *turn), ("read", 1));
    // No raw input: the arguments are its title.
    assert_eq!(arguments["title"], "Read src/main.rs");
    let EventData::StackPush(frame) = &all[5] else {
        panic!()
    };
    assert_eq!(
        (frame.summary.as_str(), frame.state),
        ("Read src/main.rs", FrameState::Queued)
    );
    let EventData::ToolResult {
        ok,
        result,
        duration_ms,
        ..
    } = &all[7]
    else {
        panic!()
    };
    assert!(*ok);
    assert_eq!(*duration_ms, 60);
    let result = result.as_ref().unwrap();
    assert_eq!(result["content"], "fn main() {}");
    assert_eq!(result["locations"][0]["line"], 3);
    // The payload keeps every ACP update of the call, as sent, the first one too.
    let updates = result["updates"].as_array().unwrap();
    assert_eq!(updates.len(), 3);
    assert_eq!(updates[0]["sessionUpdate"], "tool_call");
    assert_eq!(updates[2]["status"], "completed");
    let EventData::Final { content, turns, .. } = all.last().unwrap() else {
        panic!()
    };
    assert_eq!((content.as_str(), *turns), ("Done.", 2));
    // The run model, the one fold, agrees.
    let run = folded(&all);
    let call = run.call("t1").unwrap();
    assert_eq!(
        call.state,
        crate::run_model::CallState::Ended(ToolStatus::Ok)
    );
    assert!(!run.is_running());
}

#[test]
fn a_failed_call_fails_with_what_the_agent_said() {
    let mut t = Translator::new("a", std::path::Path::new("/w"));
    t.start("x", 1000);
    feed(
        &mut t,
        json!({"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Run tests",
               "kind": "execute", "status": "in_progress"}),
        0,
    );
    let out = feed(
        &mut t,
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "failed",
               "content": [{"type": "content", "content": {"type": "text", "text": "exit 1"}}]}),
        5,
    );
    assert_eq!(kinds(&out), ["tool_result", "stack_pop"]);
    let EventData::ToolResult { ok, error, .. } = &out[0] else {
        panic!()
    };
    assert!(!ok);
    assert_eq!(error.as_deref(), Some("exit 1"));
    // A later update of an ended call changes nothing.
    let again = feed(
        &mut t,
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed"}),
        6,
    );
    assert!(again.is_empty(), "{again:?}");
}

#[test]
fn nesting_comes_from_meta_when_the_parent_is_known() {
    let mut t = Translator::new("claude", std::path::Path::new("/w"));
    t.start("x", 1000);
    feed(
        &mut t,
        json!({"sessionUpdate": "tool_call", "toolCallId": "task", "title": "Task", "kind": "think"}),
        0,
    );
    let out = feed(
        &mut t,
        json!({"sessionUpdate": "tool_call", "toolCallId": "inner", "title": "grep",
               "kind": "search", "_meta": {"claudeCode": {"parentToolUseId": "task"}}}),
        1,
    );
    let EventData::ToolCall { parent, .. } = &out[0] else {
        panic!()
    };
    assert_eq!(parent.as_deref(), Some("task"));
    let unknown = feed(
        &mut t,
        json!({"sessionUpdate": "tool_call", "toolCallId": "x", "title": "x",
               "_meta": {"parentToolCallId": "nobody"}}),
        2,
    );
    let EventData::ToolCall { parent, .. } = &unknown[0] else {
        panic!()
    };
    assert_eq!(*parent, None);
}

#[test]
fn a_permission_request_is_an_approval_with_the_diff() {
    let mut t = Translator::new("codex", std::path::Path::new("/w"));
    t.start("x", 1000);
    let update: ToolCallUpdate = serde_json::from_value(json!({
        "toolCallId": "w1", "title": "Write a.txt", "kind": "edit", "status": "pending",
        "content": [{"type": "diff", "path": "/w/a.txt", "oldText": null, "newText": "hi\n"}]
    }))
    .unwrap();
    let out = t.approval(&update, json!({"raw": true}), "codex asks".into(), 0);
    assert_eq!(
        kinds(&out),
        [
            "tool_call",
            "stack_push",
            "stack_push",
            "approval_requested"
        ]
    );
    let EventData::ApprovalRequested {
        name, note, diff, ..
    } = &out[3]
    else {
        panic!()
    };
    assert_eq!(name, "edit");
    assert_eq!(note.as_deref(), Some("codex asks"));
    assert!(diff.as_deref().unwrap().contains("+hi"), "{diff:?}");
    let decided = t.decided("w1", Decision::Denied, Scope::Once, None, 9);
    assert_eq!(
        kinds(&decided),
        ["approval_decided", "tool_result", "stack_pop"]
    );
    let mut all = out;
    all.extend(decided);
    let run = folded(&all);
    assert_eq!(
        run.call("w1").unwrap().state,
        crate::run_model::CallState::Ended(ToolStatus::Denied)
    );
    assert!(run.open_approvals().is_empty());
}

#[test]
fn a_plan_is_the_checklist() {
    let mut t = Translator::new("a", std::path::Path::new("/w"));
    let mut all = t.start("x", 1000);
    all.extend(feed(
        &mut t,
        json!({"sessionUpdate": "plan", "entries": [
            {"content": "Read", "priority": "high", "status": "completed"},
            {"content": "Fix", "priority": "medium", "status": "in_progress"},
            {"content": "Test", "priority": "low", "status": "pending"}]}),
        0,
    ));
    assert_eq!(kinds(&all), ["run_started", "tool_call", "tool_result"]);
    let run = folded(&all);
    assert_eq!(run.todos().headline(), "1/3 done · Fix");
}

#[test]
fn usage_feeds_the_gauge_and_the_cost() {
    let mut t = Translator::new("a", std::path::Path::new("/w"));
    let out = feed(
        &mut t,
        json!({"sessionUpdate": "usage_update", "used": 500, "size": 1000,
               "cost": {"amount": 0.25, "currency": "USD"}}),
        0,
    );
    let run = folded(&out);
    assert_eq!(run.context().unwrap().percent(), Some(50));
    assert_eq!(run.session_cost(&Default::default()), Some(0.25));
}

#[test]
fn cancel_and_death_end_the_run() {
    let mut t = Translator::new("a", std::path::Path::new("/w"));
    t.start("x", 1000);
    feed(&mut t, text("partial"), 0);
    let out = t.finish(StopReason::Cancelled, 5);
    assert_eq!(kinds(&out), ["llm_failed", "cancelled"]);
    t.start("y", 1000);
    feed(&mut t, text("partial"), 0);
    let out = t.abort(false, "the agent a exited (exit status: 3)".into(), 9);
    assert_eq!(kinds(&out), ["llm_failed", "error"]);
    // Nothing more once it ended.
    assert!(t.abort(false, "again".into(), 10).is_empty());
    assert!(t.finish(StopReason::EndTurn, 9).is_empty());
}

#[test]
fn text_and_calls_are_bounded() {
    let mut t = Translator::new("a", std::path::Path::new("/w"));
    t.start("x", 1000);
    let chunk = "x".repeat(MAX_TEXT / 2 + 1);
    assert_eq!(
        kinds(&feed(&mut t, text(&chunk), 0)),
        ["llm_started", "delta"]
    );
    assert!(feed(&mut t, text(&chunk), 1).is_empty());
    assert!(feed(&mut t, text(&chunk), 2).is_empty());
    assert_eq!(t.take_notices().len(), 1, "said once");
    let mut made = 0;
    for i in 0..MAX_CALLS + 10 {
        let out = feed(
            &mut t,
            json!({"sessionUpdate": "tool_call", "toolCallId": format!("c{i}"), "title": "t"}),
            3,
        );
        made += out
            .iter()
            .filter(|e| matches!(e, EventData::ToolCall { .. }))
            .count();
    }
    assert_eq!(made, MAX_CALLS);
    assert_eq!(t.take_notices().len(), 1);
    // A call's kept updates are bounded too.
    let mut t = Translator::new("a", std::path::Path::new("/w"));
    t.start("x", 1000);
    feed(
        &mut t,
        json!({"sessionUpdate": "tool_call", "toolCallId": "c", "title": "t", "status": "in_progress"}),
        0,
    );
    for _ in 0..MAX_UPDATES + 5 {
        feed(
            &mut t,
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "c", "title": "t"}),
            1,
        );
    }
    let out = feed(
        &mut t,
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "c", "status": "completed"}),
        2,
    );
    let EventData::ToolResult { result, .. } = &out[0] else {
        panic!("{out:?}")
    };
    let result = result.as_ref().unwrap();
    assert_eq!(result["updates"].as_array().unwrap().len(), MAX_UPDATES);
    assert_eq!(result["updates_dropped"], 7);
}

#[test]
fn a_terminal_s_recorded_output_keeps_its_last_part_within_the_bound() {
    use crate::acp::client::terminals::{News, Started};
    use agent_client_protocol::v1::schema::TerminalExitStatus;
    let mut t = Translator::new("a", std::path::Path::new("/w"));
    t.start("go", 10);
    let started = Started {
        id: "term-1".into(),
        command: "yes".into(),
        cwd: String::new(),
    };
    t.terminal_started(&started, 1);
    let output = format!("é{}end", "x".repeat(super::MAX_CONTENT));
    let ended = News::Ended {
        id: "term-1".into(),
        exit: TerminalExitStatus::new().exit_code(0),
        output,
        truncated: false,
    };
    let out = t.terminal(ended, 2);
    let result = out
        .iter()
        .find_map(|e| match e {
            EventData::ToolResult { result, .. } => result.clone(),
            _ => None,
        })
        .unwrap();
    let kept = result["output"].as_str().unwrap();
    assert!(
        kept.len() <= super::MAX_CONTENT && kept.ends_with("end"),
        "{}",
        kept.len()
    );
    assert_eq!(result["truncated"], json!(true));
    assert!(result["output_omitted"].as_u64().unwrap() > 0);
}
