//! Taking a grant back (`/tools revoke`, issue 13.7): between requests and while one runs, a
//! revoked grant no longer allows calls; they are asked about again.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use taco::event::{EventData, Grant, Scope};
use taco::orchestrator::Orchestrator;
use taco::orchestrator::approval::ApprovalAnswer;
use taco::orchestrator::task::{self, Op, OrchestratorTask};

use crate::support;
use support::scripted::*;

/// Runs the task until `finals` answers came, approving every ask for the session, and
/// sending `after_approval` once right after the first approval. Returns the ids asked about
/// and whether an `approval_revoked` event came.
async fn drive(
    t: &mut OrchestratorTask,
    finals: usize,
    mut after_approval: Option<Op>,
) -> (Vec<String>, bool) {
    let mut asked = Vec::new();
    let mut revoked = false;
    let mut done = 0;
    while done < finals {
        let event = tokio::time::timeout(Duration::from_secs(10), t.events.recv())
            .await
            .unwrap()
            .unwrap();
        match event.data {
            EventData::ApprovalRequested { id, .. } => {
                asked.push(id.clone());
                let answer = ApprovalAnswer::approve(Scope::Session);
                t.ops.send(Op::Approve { id, answer }).unwrap();
                if let Some(op) = after_approval.take() {
                    t.ops.send(op).unwrap();
                }
            }
            EventData::ApprovalRevoked { grant } => {
                assert_eq!(grant, Grant::Tool("guarded".into()));
                revoked = true;
            }
            EventData::Final { .. } => done += 1,
            _ => {}
        }
    }
    (asked, revoked)
}

#[tokio::test]
async fn a_revoked_session_grant_is_asked_about_again() {
    let (r, _) = registry();
    let provider = Scripted::new(vec![
        Ok(calls(&[("g1", "guarded", json!({}))])),
        Ok(text("first")),
        Ok(calls(&[("g2", "guarded", json!({}))])),
        Ok(text("second")),
        Ok(calls(&[("g3", "guarded", json!({}))])),
        Ok(text("third")),
    ]);
    let mut t = task::spawn(Orchestrator::new(provider, Arc::new(r), settings(10)));
    t.ops.send(Op::Submit("one".into())).unwrap();
    t.ops.send(Op::Submit("two".into())).unwrap();
    let (asked, _) = drive(&mut t, 2, None).await;
    assert_eq!(asked, ["g1"], "the session grant allowed g2");
    // Revoking something never granted changes nothing and says nothing.
    t.ops
        .send(Op::Revoke(Grant::ShellPrefix(
            taco::tools::builtin::suggested_grant("git status").unwrap(),
        )))
        .unwrap();
    t.ops
        .send(Op::Revoke(Grant::Tool("guarded".into())))
        .unwrap();
    t.ops.send(Op::Submit("three".into())).unwrap();
    let (asked, revoked) = drive(&mut t, 1, None).await;
    assert!(revoked);
    assert_eq!(asked, ["g3"]);
    t.ops.send(Op::Shutdown).unwrap();
    let orch = t.handle.unwrap().await.unwrap();
    assert_eq!(
        orch.policies().session_grants().count(),
        1,
        "g3 granted it again"
    );
}

#[tokio::test]
async fn a_grant_revoked_while_a_run_goes_on_stops_allowing_from_the_next_batch() {
    let (r, _) = registry();
    let provider = Scripted::new(vec![
        // The echo keeps the batch busy while the revocation arrives.
        Ok(calls(&[
            ("g1", "guarded", json!({})),
            ("e1", "echo", json!({"text": "x", "sleep_ms": 500})),
        ])),
        Ok(calls(&[("g2", "guarded", json!({}))])),
        Ok(text("done")),
    ]);
    let mut t = task::spawn(Orchestrator::new(provider, Arc::new(r), settings(10)));
    t.ops.send(Op::Submit("one".into())).unwrap();
    let revoke = Op::Revoke(Grant::Tool("guarded".into()));
    let (asked, revoked) = drive(&mut t, 1, Some(revoke)).await;
    assert!(revoked);
    assert_eq!(
        asked,
        ["g1", "g2"],
        "g2 was asked although g1 granted the session"
    );
    t.ops.send(Op::Shutdown).unwrap();
}
