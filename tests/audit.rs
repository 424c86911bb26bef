//! The audit log (DESIGN §8): which events become records, what the records hold, and that no
//! content, argument, output or free text ever reaches the file.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use std::collections::HashMap;
use std::io::{self, Write};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use taco::audit::{self, AuditLog};
use taco::conversation::{Message, ToolCall, Usage};
use taco::event::{
    Decision, DeltaKind, DeniedBy, Event, EventData, FrameState, InputKind, InputRequest, LlmCall,
    Scope, StackFrame, ToolStatus,
};
use taco::orchestrator::Orchestrator;
use taco::orchestrator::approval::{EXEC_DENIED, FixedApprover};
use taco::tools::Policy;
use tokio_util::sync::CancellationToken;

use crate::support;
use support::scripted::{Scripted, calls, registry, settings, text};

/// Appears in every free-text field of the events; must never reach the audit log.
const MARKER: &str = "ZZ_MARKER_ZZ";

/// A writer the test can read back after handing it to the audit log.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Shared {
    fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }

    fn records(&self) -> Vec<Value> {
        self.text()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }
}

fn names(records: &[Value]) -> Vec<&str> {
    records
        .iter()
        .map(|r| r["event"].as_str().unwrap())
        .collect()
}

/// Builds events of one run with increasing timestamps.
struct Script {
    request_id: Arc<str>,
    ts: u64,
    events: Vec<Event>,
}

impl Script {
    fn new(request_id: &str, ts: u64) -> Self {
        Self {
            request_id: Arc::from(request_id),
            ts,
            events: Vec::new(),
        }
    }

    fn at(&mut self, ts: u64, data: EventData) {
        self.ts = ts;
        self.push(data);
    }

    fn push(&mut self, data: EventData) {
        self.events.push(Event {
            timestamp: self.ts,
            request_id: Arc::clone(&self.request_id),
            data,
        });
        self.ts += 1;
    }

    fn tool_call(&mut self, id: &str, name: &str, parent: Option<&str>) {
        self.push(EventData::ToolCall {
            turn: 1,
            id: id.into(),
            name: name.into(),
            arguments: json!({ "path": MARKER, "command": format!("echo {MARKER}") }),
            parent: parent.map(Into::into),
            sandbox: None,
        });
    }

    fn result(&mut self, id: &str, name: &str, outcome: Result<Value, String>, duration_ms: u64) {
        let (ok, result, error) = match outcome {
            Ok(value) => (true, Some(value), None),
            Err(error) => (false, None, Some(error)),
        };
        self.push(EventData::ToolResult {
            id: id.into(),
            name: name.into(),
            ok,
            status: Some(ToolStatus::of(None, ok, None)),
            denied_by: None,
            result,
            error,
            duration_ms,
        });
    }

    fn denied(&mut self, id: &str, name: &str, by: DeniedBy, error: String) {
        self.push(EventData::ToolResult {
            id: id.into(),
            name: name.into(),
            ok: false,
            status: Some(ToolStatus::Denied),
            denied_by: Some(by),
            result: None,
            error: Some(error),
            duration_ms: 0,
        });
    }

    fn decided(&mut self, id: &str, name: &str, decision: Decision, reason: Option<&str>) {
        self.push(EventData::ApprovalDecided {
            id: id.into(),
            name: name.into(),
            decision,
            scope: Scope::Once,
            reason: reason.map(Into::into),
            prefix: None,
        });
    }

    fn frame(&mut self, id: &str, name: &str, parent: Option<&str>, state: FrameState) {
        let frame = StackFrame {
            id: id.into(),
            parent: parent.map(Into::into),
            name: name.into(),
            summary: format!("{name} {MARKER}"),
            state,
        };
        let data = match state {
            FrameState::Running | FrameState::AwaitingApproval | FrameState::AwaitingInput => {
                EventData::StackPush(frame)
            }
            _ => EventData::StackPop(frame),
        };
        self.push(data);
    }
}

fn llm_call(
    turn: u32,
    finish_reason: &str,
    tool_calls: &[(&str, &str)],
    usage: (u64, u64),
    parent: Option<&str>,
) -> EventData {
    EventData::LlmCall(Box::new(LlmCall {
        turn,
        model: "gpt-4o".into(),
        duration_ms: 800,
        ttft_ms: Some(120),
        finish_reason: Some(finish_reason.into()),
        content: format!("thinking about {MARKER}"),
        reasoning_content: Some(format!("reasoning {MARKER}")),
        tool_calls: tool_calls
            .iter()
            .map(|(id, name)| ToolCall {
                id: (*id).into(),
                name: (*name).into(),
                arguments: json!({ "secret": MARKER }),
            })
            .collect(),
        usage: Usage {
            input_tokens: usage.0,
            output_tokens: usage.1,
            cached_tokens: 0,
        },
        timings: None,
        message_count: 2,
        new_messages: vec![
            Message::user(format!("please {MARKER}")),
            Message::tool("c0", "read_file", format!("{{\"content\": \"{MARKER}\"}}")),
        ],
        tools: vec!["read_file".into(), "shell".into()],
        parent: parent.map(Into::into),
        omitted: 0,
        context_window: None,
        call: None,
        purpose: None,
    }))
}

/// A full run: policy, user and exec denials, successes, a failure, a sub-agent, questions,
/// a retry, an error and the final answer; every free-text field holds the marker.
fn realistic_run() -> Vec<Event> {
    let mut s = Script::new("0b7c5e7e-1f0a-4a55-9d0e-3f7c2b1f6a10", 1_700_000_000_000);
    s.push(EventData::RunStarted {
        prompt: format!("please do {MARKER}"),
        provider: "openai".into(),
        model: "gpt-4o".into(),
        max_turns: 10,
        trace_parent: None,
    });
    s.push(EventData::Delta {
        kind: DeltaKind::Reasoning,
        text: MARKER.into(),
    });
    s.push(EventData::Retry {
        attempt: 1,
        max: 3,
        reason: format!("HTTP 529: {MARKER}"),
        delay_ms: 500,
    });
    let batch = [
        ("c1", "read_file"),
        ("c2", "shell"),
        ("c3", "write_file"),
        ("c4", "rm_rf"),
        ("c5", "delegate"),
        ("c6", "call ZZ_MARKER_ZZ now"),
    ];
    s.push(llm_call(1, "tool_calls", &batch, (100, 20), None));
    for (id, name) in batch {
        s.tool_call(id, name, None);
    }
    // The policy denies rm_rf: only its result says so.
    s.denied(
        "c4",
        "rm_rf",
        DeniedBy::Policy,
        "the call was denied: the configured policy for this tool is deny".into(),
    );
    // The model made up a tool name: it is not a name the audit log copies.
    s.result(
        "c6",
        "call ZZ_MARKER_ZZ now",
        Err(format!("unknown tool {MARKER}")),
        0,
    );
    // shell and write_file need approval: one approved, one denied with a reason.
    s.frame("c2", "shell", None, FrameState::AwaitingApproval);
    s.frame("c3", "write_file", None, FrameState::AwaitingApproval);
    for (k, (id, name)) in [("c2", "shell"), ("c3", "write_file")]
        .into_iter()
        .enumerate()
    {
        s.push(EventData::ApprovalRequested {
            id: id.into(),
            name: name.into(),
            arguments: json!({ "command": MARKER }),
            position: k + 1,
            of: 2,
            note: None,
            diff: None,
            sandbox: None,
        });
    }
    s.decided("c2", "shell", Decision::Approved, None);
    s.decided(
        "c3",
        "write_file",
        Decision::Denied,
        Some(&format!("not {MARKER}")),
    );
    s.denied(
        "c3",
        "write_file",
        DeniedBy::User,
        format!("the call was denied: not {MARKER}"),
    );
    s.frame("c3", "write_file", None, FrameState::Denied);
    // read_file asks for a missing parameter first.
    s.frame("c1", "read_file", None, FrameState::AwaitingInput);
    s.push(EventData::InputRequested(InputRequest {
        id: "q1".into(),
        kind: InputKind::Parameter,
        frame: "c1".into(),
        tool: "read_file".into(),
        prompt: format!("Which file? {MARKER}"),
        parameter: Some("path".into()),
        description: Some(MARKER.into()),
        value_type: Some("string".into()),
        depth: None,
        form: None,
    }));
    s.push(EventData::InputAnswered {
        id: "q1".into(),
        value: Some(MARKER.into()),
        form: None,
    });
    s.frame("c1", "read_file", None, FrameState::Running);
    s.frame("c2", "shell", None, FrameState::Running);
    s.frame("c5", "delegate", None, FrameState::Running);
    s.result("c1", "read_file", Ok(json!({ "content": MARKER })), 12);
    s.result("c2", "shell", Err(format!("exit 1: {MARKER}")), 30);
    // The sub-agent: its model call, a call exec denies, a call that runs.
    s.push(llm_call(
        1,
        "tool_calls",
        &[("n1", "read_file"), ("n2", "shell")],
        (50, 5),
        Some("c5"),
    ));
    s.tool_call("n1", "read_file", Some("c5"));
    s.tool_call("n2", "shell", Some("c5"));
    s.push(EventData::ApprovalRequested {
        id: "n2".into(),
        name: "shell".into(),
        arguments: json!({ "command": MARKER }),
        position: 1,
        of: 1,
        note: None,
        diff: None,
        sandbox: None,
    });
    s.decided("n2", "shell", Decision::Denied, Some(EXEC_DENIED));
    s.denied(
        "n2",
        "shell",
        DeniedBy::Headless,
        format!("the call was denied: {EXEC_DENIED}"),
    );
    s.frame("n1", "read_file", Some("c5"), FrameState::Running);
    s.result("n1", "read_file", Ok(json!({ "content": MARKER })), 5);
    s.frame("n1", "read_file", Some("c5"), FrameState::Done);
    s.push(llm_call(2, "stop", &[], (60, 6), Some("c5")));
    s.result(
        "c5",
        "delegate",
        Ok(json!({ "answer": MARKER, "turns": 2 })),
        50,
    );
    s.push(llm_call(2, "tool_calls", &[], (200, 30), None));
    s.push(EventData::MaxTurnsReached { turns: 2 });
    s.push(EventData::MaxTurnsPromptInjected { turns: 2 });
    s.push(llm_call(3, "length", &[], (300, 40), None));
    s.push(EventData::Error {
        kind: "timeout".into(),
        message: format!("openai (gpt-4o): timed out: {MARKER}"),
    });
    s.at(
        1_700_000_004_321,
        EventData::Final {
            content: format!("the answer is {MARKER}"),
            turns: 2,
            usage: Usage {
                input_tokens: 710,
                output_tokens: 101,
                cached_tokens: 0,
            },
        },
    );
    s.events
}

#[test]
fn a_run_becomes_metadata_records_and_nothing_else() {
    let out = Shared::default();
    let mut log = AuditLog::to_writer(Box::new(out.clone()));
    let events = realistic_run();
    for event in &events {
        log.record(event);
    }
    let mut cancelled = Script::new("5d1c0f3e-8a5b-4a7e-b6f1-2c9d8e7f6a5b", 1_700_000_100_000);
    cancelled.push(EventData::RunStarted {
        prompt: MARKER.into(),
        provider: "anthropic".into(),
        model: "claude-sonnet-4-5".into(),
        max_turns: 5,
        trace_parent: None,
    });
    cancelled.push(EventData::Cancelled {
        running: format!("the model's reply {MARKER}"),
    });
    for event in &cancelled.events {
        log.record(event);
    }

    let text = out.text();
    assert!(!text.contains(MARKER), "the marker leaked:\n{text}");
    assert!(!text.contains("denied:"), "an error text leaked:\n{text}");
    let records = out.records();
    assert_eq!(
        names(&records),
        [
            "message_received",
            "tool_denied",
            "tool_executed",
            "tool_denied",
            "tool_executed",
            "tool_executed",
            "tool_denied",
            "tool_executed",
            "tool_executed",
            "message_error",
            "message_complete",
            "message_received",
            "message_error",
        ]
    );
    let run = &events[0].request_id;
    assert!(records[..11].iter().all(|r| r["request_id"] == **run));
    assert_eq!(records[0]["ts"], 1_700_000_000_000u64);
    // Every record carries the timestamp of the event it came from.
    let stamps: Vec<u64> = events.iter().map(|e| e.timestamp).collect();
    assert!(
        records[..11]
            .iter()
            .all(|r| stamps.contains(&r["ts"].as_u64().unwrap()))
    );

    let without_ts = |r: &Value| {
        let mut r = r.clone();
        let map = r.as_object_mut().unwrap();
        map.remove("ts");
        map.remove("request_id");
        r
    };
    let expected = [
        json!({"event": "message_received", "provider": "openai", "model": "gpt-4o", "max_turns": 10}),
        json!({"event": "tool_denied", "tool": "rm_rf", "by": "policy"}),
        json!({"event": "tool_executed", "tool": "(invalid)", "ok": false, "status": "failed", "duration_ms": 0}),
        json!({"event": "tool_denied", "tool": "write_file", "by": "user"}),
        json!({"event": "tool_executed", "tool": "read_file", "ok": true, "status": "ok", "duration_ms": 12}),
        json!({"event": "tool_executed", "tool": "shell", "ok": false, "status": "failed", "duration_ms": 30}),
        json!({"event": "tool_denied", "tool": "shell", "by": "exec", "parent": "c5"}),
        json!({"event": "tool_executed", "tool": "read_file", "ok": true, "status": "ok", "duration_ms": 5, "parent": "c5"}),
        json!({"event": "tool_executed", "tool": "delegate", "ok": true, "status": "ok", "duration_ms": 50}),
        json!({"event": "message_error", "kind": "timeout"}),
        json!({
            "event": "message_complete",
            "turns": 2,
            "usage": {"input_tokens": 710, "output_tokens": 101},
            "duration_ms": 4321,
            "stop_reason": "length",
        }),
        json!({"event": "message_received", "provider": "anthropic", "model": "claude-sonnet-4-5", "max_turns": 5}),
        json!({"event": "message_error", "kind": "cancelled"}),
    ];
    for (record, expected) in records.iter().zip(&expected) {
        assert_eq!(without_ts(record), *expected);
    }
    // The line's own order: ts, event, request_id first.
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with(r#"{"ts":1700000000000,"event":"message_received","request_id":""#),
        "{first}"
    );
}

#[test]
fn the_stop_reason_is_the_top_level_calls() {
    let out = Shared::default();
    let mut log = AuditLog::to_writer(Box::new(out.clone()));
    let mut s = Script::new("r", 10);
    // Events of a run whose start was not seen: still recorded, without a duration.
    s.push(llm_call(1, "end_turn", &[], (1, 1), None));
    s.push(llm_call(1, "max_tokens", &[], (1, 1), Some("d1")));
    s.push(EventData::Final {
        content: MARKER.into(),
        turns: 1,
        usage: Usage::default(),
    });
    for event in &s.events {
        log.record(event);
    }
    let records = out.records();
    assert_eq!(names(&records), ["message_complete"]);
    assert_eq!(records[0]["stop_reason"], "end_turn");
    assert_eq!(records[0]["duration_ms"], Value::Null);
}

#[test]
fn a_free_text_error_kind_is_not_copied() {
    let out = Shared::default();
    let mut log = AuditLog::to_writer(Box::new(out.clone()));
    let mut s = Script::new("r", 10);
    s.push(EventData::Error {
        kind: format!("provider said {MARKER}"),
        message: MARKER.into(),
    });
    log.record(&s.events[0]);
    let records = out.records();
    assert_eq!(records[0]["kind"], "(invalid)");
}

#[tokio::test]
async fn the_orchestrators_denials_are_told_apart() {
    let (r, _) = registry();
    let provider = Scripted::new(vec![
        Ok(calls(&[
            ("a", "echo", json!({ "text": MARKER })),
            ("b", "fail", json!({})),
            ("g", "guarded", json!({})),
            ("c", "crash", json!({})),
        ])),
        Ok(text(&format!("done {MARKER}"))),
    ]);
    let mut s = settings(10);
    s.policies = HashMap::from([("crash".to_string(), Policy::Deny)]);
    let mut orch = Orchestrator::new(provider, Arc::new(r), s);
    let mut events = Vec::new();
    orch.run(
        &format!("go {MARKER}"),
        &mut events,
        &mut FixedApprover::none(),
        &CancellationToken::new(),
    )
    .await;

    let out = Shared::default();
    let mut log = AuditLog::to_writer(Box::new(out.clone()));
    for event in &events {
        log.record(event);
    }
    let text = out.text();
    assert!(!text.contains(MARKER), "the marker leaked:\n{text}");
    let records = out.records();
    let summary: Vec<(String, String)> = records
        .iter()
        .map(|r| {
            let detail = match r["event"].as_str().unwrap() {
                "tool_denied" => format!("{} by {}", r["tool"], r["by"]),
                "tool_executed" => format!("{} ok={}", r["tool"], r["ok"]),
                "message_complete" => format!("stop={}", r["stop_reason"]),
                _ => String::new(),
            };
            (r["event"].as_str().unwrap().to_string(), detail)
        })
        .collect();
    assert_eq!(summary.len(), 6, "{summary:?}");
    assert_eq!(summary[0].0, "message_received");
    assert_eq!(
        summary[1],
        (
            "tool_denied".to_string(),
            r#""crash" by "policy""#.to_string()
        )
    );
    assert_eq!(
        summary[2],
        (
            "tool_denied".to_string(),
            r#""guarded" by "exec""#.to_string()
        )
    );
    // The two that ran finish in either order.
    let mut ran = vec![summary[3].1.clone(), summary[4].1.clone()];
    ran.sort();
    assert_eq!(ran, [r#""echo" ok=true"#, r#""fail" ok=false"#]);
    assert_eq!(
        summary[5],
        ("message_complete".to_string(), r#"stop="stop""#.to_string())
    );
    assert_eq!(records[5]["turns"], 2);
    assert!(records[5]["duration_ms"].is_u64());
}

#[test]
fn open_writes_private_daily_files_in_the_dir() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path().join("state").join("taco");
    let mut log = AuditLog::open(&dir).unwrap();
    for event in realistic_run() {
        log.record(&event);
    }
    drop(log);
    let files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    // One file: the one made private first is the one tracing-appender writes.
    assert_eq!(files.len(), 1, "{files:?}");
    let name = files[0].file_name().unwrap().to_str().unwrap().to_string();
    let date = name.strip_prefix("audit.jsonl.").unwrap();
    assert_eq!(date.len(), 10, "{name}");
    assert!(
        date.chars().all(|c| c.is_ascii_digit() || c == '-'),
        "{name}"
    );
    let content = std::fs::read_to_string(&files[0]).unwrap();
    assert!(!content.contains(MARKER));
    let lines: Vec<Value> = content
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 11);
    assert!(lines.iter().all(|l| l["event"].is_string()));

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&files[0]).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
    }

    // Opening again appends to the same file.
    let mut log = AuditLog::open(&dir).unwrap();
    log.record(&realistic_run()[0]);
    drop(log);
    let content = std::fs::read_to_string(&files[0]).unwrap();
    assert_eq!(content.lines().count(), 12);
}

#[test]
fn open_fails_cleanly_where_no_dir_can_be() {
    let temp = tempfile::tempdir().unwrap();
    let file = temp.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    assert!(AuditLog::open(&file.join("sub")).is_err());
}

/// What the diagnostic log (`src/logging.rs`) uses to create `taco.log`.
#[cfg(unix)]
#[test]
fn private_files_are_created_0600_and_narrowed() {
    use std::os::unix::fs::PermissionsExt;
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path().join("x").join("taco");
    audit::create_private_dir(&dir).unwrap();
    let path = dir.join("taco.log");
    let mut file = audit::open_private(&path).unwrap();
    writeln!(file, "one").unwrap();
    drop(file);
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(&dir), 0o700);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let mut file = audit::open_private(&path).unwrap();
    writeln!(file, "two").unwrap();
    drop(file);
    assert_eq!(mode(&path), 0o600);
    // Appended, never truncated.
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "one\ntwo\n");
}

#[test]
fn state_dir_ends_in_taco() {
    if let Some(dir) = audit::state_dir() {
        assert!(dir.ends_with("taco"));
    }
}

#[test]
fn leaving_the_sandbox_and_sandbox_denials_are_recorded() {
    use taco::event::{Confinement, SandboxMode};
    let out = Shared::default();
    let mut log = AuditLog::to_writer(Box::new(out.clone()));
    let mut s = Script::new("r", 10);
    let sandboxed = Confinement::Sandboxed {
        mode: SandboxMode::WorkspaceWrite,
        network: false,
    };
    let call = |s: &mut Script, id: &str, sandbox: Confinement| {
        s.push(EventData::ToolCall {
            turn: 1,
            id: id.into(),
            name: "shell".into(),
            arguments: json!({"command": MARKER}),
            parent: None,
            sandbox: Some(sandbox),
        });
    };
    call(&mut s, "a", sandboxed);
    s.push(EventData::ToolResult {
        id: "a".into(),
        name: "shell".into(),
        ok: false,
        status: Some(ToolStatus::SandboxDenied),
        denied_by: None,
        result: Some(json!({"stderr": MARKER, "sandbox_denied": true})),
        error: Some(MARKER.into()),
        duration_ms: 4,
    });
    call(&mut s, "b", Confinement::Unsandboxed);
    s.decided("b", "shell", Decision::Approved, None);
    s.result("b", "shell", Ok(json!({"stdout": MARKER})), 6);
    call(&mut s, "c", Confinement::Unsandboxed);
    s.decided("c", "shell", Decision::Denied, Some(MARKER));
    s.denied("c", "shell", DeniedBy::User, MARKER.into());
    for event in &s.events {
        log.record(event);
    }
    assert!(!out.text().contains(MARKER), "{}", out.text());
    let records = out.records();
    assert_eq!(
        names(&records),
        [
            "tool_executed",
            "sandbox_escalation",
            "tool_executed",
            "sandbox_escalation",
            "tool_denied"
        ]
    );
    assert_eq!(
        records[0]["sandbox"],
        json!({"run": "sandboxed", "mode": "workspace-write", "network": false})
    );
    assert_eq!(records[0]["sandbox_denied"], true);
    assert_eq!(
        (&records[1]["tool"], &records[1]["approved"]),
        (&json!("shell"), &json!(true))
    );
    assert_eq!(records[2]["sandbox"], json!({"run": "unsandboxed"}));
    assert!(records[2].get("sandbox_denied").is_none());
    assert_eq!(records[3]["approved"], false);
}
