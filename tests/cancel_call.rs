//! Cancelling one call from the stack pane (issue 14.4): `Op::CancelCall` stops that call
//! alone while it runs, its result says the user cancelled it, and the run goes on.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use taco::event::{Event, EventData, FrameState, ToolStatus};
use taco::orchestrator::Orchestrator;
use taco::orchestrator::task::{self, Op, OrchestratorTask};

use crate::support;
use support::scripted::*;

/// Events until the run's final answer; `on` may send ops as events arrive.
async fn until_final(
    t: &mut OrchestratorTask,
    mut on: impl FnMut(&Event) -> Vec<Op>,
) -> Vec<Event> {
    let mut seen = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(10), t.events.recv())
            .await
            .expect("the run went on")
            .expect("the task is alive");
        for op in on(&event) {
            t.ops.send(op).unwrap();
        }
        let done = matches!(event.data, EventData::Final { .. });
        seen.push(event);
        if done {
            return seen;
        }
    }
}

fn running(event: &Event, id: &str) -> bool {
    matches!(&event.data, EventData::StackPush(f) if f.id == id && f.state == FrameState::Running)
}

async fn finish(t: OrchestratorTask) -> Orchestrator {
    t.ops.send(Op::Shutdown).unwrap();
    t.handle.unwrap().await.unwrap()
}

#[tokio::test]
async fn cancelling_one_call_of_a_batch_leaves_the_other_and_the_run_goes_on() {
    let (r, _) = registry();
    let provider = Scripted::new(vec![
        Ok(calls(&[
            ("slow", "echo", json!({"text": "never", "sleep_ms": 4000})),
            ("quick", "echo", json!({"text": "hi", "sleep_ms": 300})),
        ])),
        Ok(text("done")),
    ]);
    let mut t = task::spawn(Orchestrator::new(
        provider.clone(),
        Arc::new(r),
        settings(10),
    ));
    t.ops.send(Op::Submit("go".into())).unwrap();
    let started = std::time::Instant::now();
    let events = until_final(&mut t, |e| {
        if running(e, "slow") {
            // Twice, and for ids that are not running: all harmless.
            vec![
                Op::CancelCall("slow".into()),
                Op::CancelCall("slow".into()),
                Op::CancelCall("nobody".into()),
            ]
        } else {
            Vec::new()
        }
    })
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "the slow call was stopped"
    );
    assert_eq!(
        statuses(&events)
            .into_iter()
            .map(|(id, status, _)| (id, status))
            .collect::<Vec<_>>(),
        [
            ("slow".to_string(), ToolStatus::Cancelled),
            ("quick".to_string(), ToolStatus::Ok)
        ]
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e.data, EventData::Cancelled { .. })),
        "the run itself was not cancelled"
    );
    // The model saw both results and answered.
    let sent = provider.sent();
    assert_eq!(sent.len(), 2);
    assert_eq!(
        tool_messages(&sent[1].messages),
        [
            (
                "slow".to_string(),
                json!({"error": "cancelled by the user"})
            ),
            ("quick".to_string(), json!({"echo": "hi"})),
        ]
    );
    // A cancel for a call of a finished run, between runs, does nothing.
    t.ops.send(Op::CancelCall("slow".into())).unwrap();
    let orch = finish(t).await;
    assert_eq!(
        orch.messages().last().unwrap().content.as_deref(),
        Some("done")
    );
}

#[tokio::test]
async fn a_cancel_for_a_finished_call_is_a_no_op() {
    let (r, _) = registry();
    let provider = Scripted::new(vec![
        Ok(calls(&[("a", "echo", json!({"text": "one"}))])),
        Ok(calls(&[(
            "b",
            "echo",
            json!({"text": "two", "sleep_ms": 200}),
        )])),
        Ok(text("done")),
    ]);
    let mut t = task::spawn(Orchestrator::new(
        provider.clone(),
        Arc::new(r),
        settings(10),
    ));
    t.ops.send(Op::Submit("go".into())).unwrap();
    let events = until_final(&mut t, |e| match &e.data {
        // `a` ended: cancelling it now must not touch `b`.
        EventData::ToolResult { id, .. } if id == "a" => vec![Op::CancelCall("a".into())],
        _ => Vec::new(),
    })
    .await;
    let statuses: Vec<ToolStatus> = statuses(&events).into_iter().map(|s| s.1).collect();
    assert_eq!(statuses, [ToolStatus::Ok, ToolStatus::Ok]);
    finish(t).await;
}

#[tokio::test]
async fn cancelling_a_sub_agent_stops_everything_under_it_and_nothing_else() {
    let (mut r, _) = registry();
    r.register(Arc::new(taco::tools::builtin::Delegate));
    let provider = Scripted::new(vec![
        Ok(calls(&[(
            "d1",
            "delegate",
            json!({"task": "wait a while", "tools": ["echo"]}),
        )])),
        Ok(calls(&[(
            "c1",
            "echo",
            json!({"text": "x", "sleep_ms": 4000}),
        )])),
        Ok(text("parent carries on")),
    ]);
    let mut t = task::spawn(Orchestrator::new(
        provider.clone(),
        Arc::new(r),
        settings(10),
    ));
    t.ops.send(Op::Submit("go".into())).unwrap();
    let events = until_final(&mut t, |e| {
        if running(e, "d1/c1") {
            vec![Op::CancelCall("d1".into())]
        } else {
            Vec::new()
        }
    })
    .await;
    let statuses: Vec<(String, ToolStatus)> =
        statuses(&events).into_iter().map(|s| (s.0, s.1)).collect();
    assert_eq!(
        statuses,
        [
            ("d1/c1".to_string(), ToolStatus::Cancelled),
            ("d1".to_string(), ToolStatus::Cancelled)
        ]
    );
    let last = events.last().unwrap();
    assert!(
        matches!(&last.data, EventData::Final { content, .. } if content == "parent carries on"),
        "{last:?}"
    );
    finish(t).await;
}
