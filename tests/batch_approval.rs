//! Batch approval as a set (issue 16.4) and revocable grants (16.5), through the
//! orchestrator task: `Y` / `N` over a batch of three (all run / none runs, the reason
//! reaching the model), `Y` never approving an escalation, nothing running before every call
//! is decided; a revoked session grant asked about again, reported as `approval_revoked` in
//! the trace and the audit file, and each grant's uses reported as `grant_used`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use taco::audit::AuditLog;
use taco::event::{
    ArgShape, Confinement, Decision, Event, EventData, Grant, Scope, ShellGrant, ToolStatus,
};
use taco::orchestrator::Orchestrator;
use taco::orchestrator::approval::{ApprovalAnswer, BatchDecision};
use taco::orchestrator::task::{self, Op, OrchestratorTask};
use taco::tools::{Policy, ToolContext, ToolError, ToolSettings, TypedTool};

use crate::support;
use support::scripted::*;

/// Asks to run outside the sandbox: asked about every time, approved only one by one.
struct Escalating;
impl TypedTool for Escalating {
    type Params = NoParams;
    const NAME: &'static str = "escalating";
    const DESCRIPTION: &'static str = "Runs outside the sandbox.";
    fn default_policy(&self, _p: &NoParams, _s: &ToolSettings) -> Policy {
        Policy::Ask
    }
    fn confinement(&self, _p: &NoParams, _s: &ToolSettings) -> Option<Confinement> {
        Some(Confinement::Unsandboxed)
    }
    async fn run(&self, _p: NoParams, _ctx: &ToolContext) -> Result<Value, ToolError> {
        Ok(json!({"escalated": true}))
    }
}

/// An audit log's output, read back by the test.
#[derive(Clone, Default)]
struct Shared(Arc<std::sync::Mutex<Vec<u8>>>);
impl std::io::Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The audit records `events` make.
fn audited(events: &[Event]) -> Vec<Value> {
    let out = Shared::default();
    let mut audit = AuditLog::to_writer(Box::new(out.clone()));
    for event in events {
        audit.record(event);
    }
    let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn spawn(replies: Vec<Reply>) -> (OrchestratorTask, Arc<Scripted>) {
    let (mut r, _) = registry();
    r.register(Arc::new(Escalating));
    let provider = Scripted::new(replies);
    let orch = Orchestrator::new(provider.clone(), Arc::new(r), settings(10));
    (task::spawn(orch), provider)
}

async fn next(t: &mut OrchestratorTask) -> Event {
    tokio::time::timeout(Duration::from_secs(30), t.events.recv())
        .await
        .expect("an event in time")
        .expect("the task is running")
}

/// Events until `n` approvals were asked for; returns their ids and every event seen.
async fn until_asked(t: &mut OrchestratorTask, n: usize, seen: &mut Vec<Event>) -> Vec<String> {
    let mut ids = Vec::new();
    while ids.len() < n {
        let event = next(t).await;
        if let EventData::ApprovalRequested { id, .. } = &event.data {
            ids.push(id.clone());
        }
        seen.push(event);
    }
    ids
}

/// Events until the run's `final`.
async fn until_final(t: &mut OrchestratorTask, seen: &mut Vec<Event>) {
    loop {
        let event = next(t).await;
        let done = matches!(event.data, EventData::Final { .. });
        seen.push(event);
        if done {
            return;
        }
    }
}

fn three_guarded() -> Vec<Chunk> {
    calls(&[
        ("g1", "guarded", json!({})),
        ("g2", "guarded", json!({})),
        ("g3", "guarded", json!({})),
    ])
}

use taco::provider::Chunk;

/// (id, decision, scope) of each `approval_decided`.
fn decisions(events: &[Event]) -> Vec<(String, Decision, Scope)> {
    (events.iter())
        .filter_map(|e| match &e.data {
            EventData::ApprovalDecided {
                id,
                decision,
                scope,
                ..
            } => Some((id.clone(), *decision, *scope)),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn shift_y_runs_all_three_once_and_grants_nothing() {
    let (mut t, _) = spawn(vec![Ok(three_guarded()), Ok(text("done"))]);
    t.ops.send(Op::Submit("go".into())).unwrap();
    let mut seen = Vec::new();
    let ids = until_asked(&mut t, 3, &mut seen).await;
    t.ops
        .send(Op::DecideBatch {
            ids,
            decision: BatchDecision::ApproveAll,
        })
        .unwrap();
    until_final(&mut t, &mut seen).await;
    let approved = |id: &str| (id.to_string(), Decision::Approved, Scope::Batch);
    assert_eq!(
        decisions(&seen),
        [approved("g1"), approved("g2"), approved("g3")],
        "recorded per call, each marked as decided for the batch"
    );
    let ran: Vec<(String, ToolStatus)> = (statuses(&seen).into_iter())
        .map(|(id, status, _)| (id, status))
        .collect();
    assert_eq!(
        ran,
        [
            ("g1".to_string(), ToolStatus::Ok),
            ("g2".into(), ToolStatus::Ok),
            ("g3".into(), ToolStatus::Ok)
        ]
    );
    t.ops.send(Op::Shutdown).unwrap();
    let orch = t.handle.unwrap().await.unwrap();
    assert_eq!(
        orch.policies().session_grants().count(),
        0,
        "Y approves this batch, nothing after it"
    );
}

#[tokio::test]
async fn shift_n_runs_none_and_the_one_reason_reaches_the_model_for_each() {
    let (mut t, provider) = spawn(vec![Ok(three_guarded()), Ok(text("ok, I won't"))]);
    t.ops.send(Op::Submit("go".into())).unwrap();
    let mut seen = Vec::new();
    let ids = until_asked(&mut t, 3, &mut seen).await;
    let reason = "not in this repository".to_string();
    t.ops
        .send(Op::DecideBatch {
            ids,
            decision: BatchDecision::DenyAll(Some(reason.clone())),
        })
        .unwrap();
    until_final(&mut t, &mut seen).await;
    let denied = |id: &str| (id.to_string(), Decision::Denied, Scope::Batch);
    assert_eq!(decisions(&seen), [denied("g1"), denied("g2"), denied("g3")]);
    assert!(
        statuses(&seen)
            .iter()
            .all(|(_, status, _)| *status == ToolStatus::Denied),
        "none ran: {:?}",
        statuses(&seen)
    );
    // The audit log records each call, as for a decision taken alone.
    let denied: Vec<(String, String)> = (audited(&seen).iter())
        .filter(|r| r["event"] == "tool_denied")
        .map(|r| (r["tool"].to_string(), r["by"].to_string()))
        .collect();
    assert_eq!(denied.len(), 3, "{denied:?}");
    assert!(
        denied
            .iter()
            .all(|(t, by)| t == "\"guarded\"" && by == "\"user\"")
    );
    let sent = provider.sent();
    let results = tool_messages(&sent.last().unwrap().messages);
    assert_eq!(results.len(), 3);
    for (_, content) in results {
        let text = content.to_string();
        assert!(text.contains(&reason), "the model is told why: {text}");
    }
    t.ops.send(Op::Shutdown).unwrap();
}

/// `Y` sent for every call, an escalation among them: the escalation is not approved, the
/// batch waits for its own answer (nothing runs meanwhile), and `n` then denies it alone.
#[tokio::test(start_paused = true)]
async fn shift_y_never_approves_an_escalation_and_nothing_runs_until_it_is_answered() {
    let (mut t, _) = spawn(vec![
        Ok(calls(&[
            ("g1", "guarded", json!({})),
            ("e1", "escalating", json!({})),
            ("g2", "guarded", json!({})),
        ])),
        Ok(text("done")),
    ]);
    t.ops.send(Op::Submit("go".into())).unwrap();
    let mut seen = Vec::new();
    let ids = until_asked(&mut t, 3, &mut seen).await;
    t.ops
        .send(Op::DecideBatch {
            ids,
            decision: BatchDecision::ApproveAll,
        })
        .unwrap();
    // Time is paused: the timeout fires only once the task has nothing left to do, so an
    // empty wait means the batch is waiting for the escalation's answer.
    let quiet = tokio::time::timeout(Duration::from_secs(60), t.events.recv()).await;
    assert!(
        quiet.is_err(),
        "nothing happened before e1 was answered: {quiet:?}"
    );
    t.ops
        .send(Op::Approve {
            id: "e1".into(),
            answer: ApprovalAnswer::deny(None),
        })
        .unwrap();
    until_final(&mut t, &mut seen).await;
    assert_eq!(
        decisions(&seen),
        [
            ("g1".to_string(), Decision::Approved, Scope::Batch),
            ("e1".into(), Decision::Denied, Scope::Once),
            ("g2".into(), Decision::Approved, Scope::Batch),
        ]
    );
    let ran: Vec<(String, ToolStatus)> = (statuses(&seen).into_iter())
        .map(|(id, status, _)| (id, status))
        .collect();
    assert_eq!(
        ran,
        [
            ("e1".to_string(), ToolStatus::Denied),
            ("g1".into(), ToolStatus::Ok),
            ("g2".into(), ToolStatus::Ok)
        ]
    );
    t.ops.send(Op::Shutdown).unwrap();
}

/// A session grant lets two calls through (each a `grant_used`), is revoked, and the next
/// call is asked about again; the revocation is an `approval_revoked` event in the trace
/// and an `approval_revoked` line in the audit file, which names the tool and nothing else.
#[tokio::test]
async fn a_revoked_session_grant_asks_again_and_is_in_the_trace_and_the_audit_file() {
    let (mut t, _) = spawn(vec![
        Ok(calls(&[("g1", "guarded", json!({"x": 1}))])),
        Ok(calls(&[("g2", "guarded", json!({}))])),
        Ok(calls(&[("g3", "guarded", json!({}))])),
        Ok(text("first")),
        Ok(calls(&[("g4", "guarded", json!({}))])),
        Ok(text("second")),
    ]);
    t.ops.send(Op::Submit("one".into())).unwrap();
    let mut seen = Vec::new();
    let ids = until_asked(&mut t, 1, &mut seen).await;
    let answer = ApprovalAnswer::approve(Scope::Session);
    let id = ids[0].clone();
    t.ops.send(Op::Approve { id, answer }).unwrap();
    until_final(&mut t, &mut seen).await;
    let used: Vec<&str> = (seen.iter())
        .filter_map(|e| match &e.data {
            EventData::GrantUsed { id, grant, .. } => {
                assert_eq!(*grant, Grant::Tool("guarded".into()));
                Some(id.as_str())
            }
            _ => None,
        })
        .collect();
    assert_eq!(used, ["g2", "g3"], "the grant let two calls through");

    t.ops
        .send(Op::Revoke(Grant::Tool("guarded".into())))
        .unwrap();
    let revoked = next(&mut t).await;
    assert_eq!(
        revoked.data,
        EventData::ApprovalRevoked {
            grant: Grant::Tool("guarded".into())
        }
    );
    let line = serde_json::to_value(&revoked).unwrap();
    assert_eq!(line["type"], "approval_revoked", "{line}");
    seen.push(revoked);

    t.ops.send(Op::Submit("two".into())).unwrap();
    let asked = until_asked(&mut t, 1, &mut seen).await;
    assert_eq!(asked, ["g4"], "asked again after the revocation");
    let id = asked[0].clone();
    let answer = ApprovalAnswer::deny(None);
    t.ops.send(Op::Approve { id, answer }).unwrap();
    until_final(&mut t, &mut seen).await;
    t.ops.send(Op::Shutdown).unwrap();

    let dir = tempfile::tempdir().unwrap();
    let mut audit = AuditLog::open(dir.path()).unwrap();
    for event in &seen {
        audit.record(event);
    }
    drop(audit);
    let mut text = String::new();
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        text.push_str(&std::fs::read_to_string(entry.unwrap().path()).unwrap());
    }
    let revocations: Vec<Value> = (text.lines())
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["event"] == "approval_revoked")
        .collect();
    assert_eq!(revocations.len(), 1, "{text}");
    let record = revocations[0].as_object().unwrap();
    let mut keys: Vec<&str> = record.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["event", "grant", "request_id", "tool", "ts"]);
    assert_eq!(
        (record["tool"].as_str(), record["grant"].as_str()),
        (Some("guarded"), Some("tool"))
    );
}

#[test]
fn a_file_written_before_the_rename_still_reads_its_revocations() {
    let old = r#"{"type":"grant_revoked","timestamp":1,"request_id":"r","data":{"grant":{"shell_prefix":"cargo test"}}}"#;
    let event: Event = serde_json::from_str(old).unwrap();
    assert_eq!(
        event.data,
        EventData::ApprovalRevoked {
            grant: Grant::ShellPrefix(ShellGrant {
                program: "cargo".into(),
                subcommand: vec!["test".into()],
                args: ArgShape::Legacy,
            })
        }
    );
    assert_eq!(event.kind(), "approval_revoked");
    // A `p` grant of an older file was a string of words: read as a grant that covers nothing.
    let old = r#"{"type":"approval_decided","timestamp":1,"request_id":"r","data":{"id":"c","name":"shell","decision":"approved","scope":"once","prefix":"timeout 60"}}"#;
    let event: Event = serde_json::from_str(old).unwrap();
    let EventData::ApprovalDecided {
        prefix: Some(grant),
        ..
    } = &event.data
    else {
        panic!("{event:?}");
    };
    assert_eq!(grant.args, ArgShape::Legacy);
    assert_eq!(grant.name(), "timeout 60");
    // Written again, it stays what it was read as.
    let again: Event = serde_json::from_str(&serde_json::to_string(&event).unwrap()).unwrap();
    assert_eq!(again, event);
}

#[test]
fn a_shell_prefix_revoked_is_audited_without_its_words() {
    let out = Shared::default();
    let mut audit = AuditLog::to_writer(Box::new(out.clone()));
    audit.record(&Event {
        timestamp: 5,
        request_id: Arc::from(""),
        data: EventData::ApprovalRevoked {
            grant: Grant::ShellPrefix(
                taco::tools::builtin::suggested_grant("pytest ZZ_SECRET_WORDS").unwrap(),
            ),
        },
    });
    let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
    assert!(!text.contains("ZZ_SECRET_WORDS"), "{text}");
    let record: Value = serde_json::from_str(text.trim()).unwrap();
    assert_eq!(record["event"], "approval_revoked");
    assert_eq!(record["tool"], "shell");
    assert_eq!(record["grant"], "shell_prefix");
}
