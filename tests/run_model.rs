//! The run model is the one place the event stream is folded (issue 11): replaying a
//! recorded session file through it gives, event by event, the state the live run had.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use std::sync::Arc;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::json;
use taco::conversation::Message;
use taco::event::{Event, InputRequest, Scope, ToolStatus};
use taco::orchestrator::approval::{ApprovalAnswer, ApprovalRequest, Approver};
use taco::orchestrator::{EventSink, Orchestrator};
use taco::run_model::{CallState, RunModel};
use taco::session::{self, Entry, SessionWriter};
use tokio_util::sync::CancellationToken;

use crate::support;
use support::scripted::*;

/// Approves for the session and answers every question.
struct User;

impl Approver for User {
    fn decide<'a>(
        &'a mut self,
        batch: &'a [ApprovalRequest],
    ) -> BoxFuture<'a, Vec<ApprovalAnswer>> {
        let answers = vec![ApprovalAnswer::approve(Scope::Session); batch.len()];
        async move { answers }.boxed()
    }

    fn can_ask(&self) -> bool {
        true
    }

    fn ask<'a>(&'a mut self, _request: &'a InputRequest) -> BoxFuture<'a, Option<String>> {
        async { Some("typed".to_string()) }.boxed()
    }
}

/// What the TUI does with the event stream: folds it live; and what the recorder does:
/// writes the session file.
struct Live {
    model: RunModel,
    states: Vec<RunModel>,
    writer: SessionWriter,
}

impl EventSink for Live {
    fn emit(&mut self, event: Event) {
        self.model.apply(&event);
        if event.is_trace() {
            self.states.push(self.model.clone());
        }
        self.writer.event(&event).unwrap();
    }

    fn message(&mut self, message: &Message) {
        self.writer.message(message).unwrap();
    }
}

#[tokio::test]
async fn a_recorded_session_replays_to_the_state_the_live_run_had() {
    let tmp = tempfile::tempdir().unwrap();
    let writer = SessionWriter::create(tmp.path(), "scripted", "m", tmp.path()).unwrap();
    let path = writer.path().to_path_buf();
    let mut live = Live {
        model: RunModel::new(),
        states: Vec::new(),
        writer,
    };
    let provider = Scripted::new(vec![
        Ok(calls(&[
            ("e1", "echo", json!({"text": "a"})),
            ("g1", "guarded", json!({})),
            ("d1", "delegate", json!({"task": "look"})),
        ])),
        Ok(calls(&[("s1", "echo", json!({"text": "b"}))])),
        Ok(text("sub done")),
        Ok(calls(&[("e2", "echo", json!({}))])),
        Ok(text("all done")),
        Ok(calls(&[("g2", "guarded", json!({}))])),
        Ok(text("bye")),
    ]);
    let (mut r, _) = registry();
    r.register(Arc::new(taco::tools::builtin::Delegate));
    let mut orch = Orchestrator::new(provider, Arc::new(r), settings(10));
    let cancel = CancellationToken::new();
    orch.run("first", &mut live, &mut User, &cancel).await;

    // The live state after the first run: the whole call tree, ended.
    let model = &live.model;
    assert!(!model.is_running());
    assert_eq!(model.turn(), 3, "two rounds of results, then the answer");
    assert_eq!(model.grants().get("guarded"), Some(&Scope::Session));
    let tree: Vec<(&str, usize, Option<&str>, CallState)> = model
        .calls()
        .map(|(id, c)| (id, c.depth, c.parent.as_deref(), c.state))
        .collect();
    let ok = CallState::Ended(ToolStatus::Ok);
    assert_eq!(
        tree,
        [
            ("e1", 0, None, ok),
            ("g1", 0, None, ok),
            ("d1", 0, None, ok),
            ("d1/s1", 1, Some("d1"), ok),
            ("e2", 0, None, ok),
            ("e2/collect_tool_parameters", 1, Some("e2"), ok),
        ]
    );
    let sub_agent_tokens = model.run_usage();
    assert!(sub_agent_tokens.input_tokens > 0);

    orch.run("again", &mut live, &mut User, &cancel).await;
    assert_eq!(live.model.runs(), 2);
    assert!(
        live.model.open_approvals().is_empty(),
        "the session grant let g2 run"
    );

    let loaded = session::load(&path).unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let mut replayed = RunModel::new();
    let mut states = Vec::new();
    for entry in &loaded.entries {
        if let Entry::Event(event) = entry {
            replayed.apply(event);
            states.push(replayed.clone());
        }
    }
    assert_eq!(states.len(), live.states.len());
    for (i, (replayed, live)) in states.iter().zip(&live.states).enumerate() {
        assert_eq!(replayed, live, "state after event {i}");
    }
    assert_eq!(
        RunModel::replay(loaded.entries.iter().filter_map(|e| match e {
            Entry::Event(event) => Some(event),
            Entry::Message(_) => None,
        })),
        live.model
    );
}
