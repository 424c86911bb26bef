//! What the user approved is what happens (issue 26.4): a `write_file` or `edit_file` whose
//! file changes between its `approval_requested` (the diff) and the answer writes nothing.
//! Headless, the model is told what changed; in the TUI the call is asked about again with the
//! fresh diff, and runs only once that is approved. Real orchestrator runs, real files.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use taco::event::{Decision, Event, EventData, Scope, ToolStatus};
use taco::orchestrator::Orchestrator;
use taco::orchestrator::approval::{ApprovalAnswer, ApprovalRequest, Approver};
use taco::orchestrator::task::{self, Op, OrchestratorTask};
use taco::tools::ToolRegistry;
use tokio_util::sync::CancellationToken;

use crate::support;
use support::scripted::*;

/// Approves every call once, after doing `meddle` to the workspace: the user's hands
/// between the diff and the answer, with nobody to show a fresh diff to (`exec`).
struct Meddler {
    root: PathBuf,
    meddle: fn(&Path),
    asked: usize,
}

impl Approver for Meddler {
    fn decide<'a>(
        &'a mut self,
        batch: &'a [ApprovalRequest],
    ) -> BoxFuture<'a, Vec<ApprovalAnswer>> {
        self.asked += batch.len();
        (self.meddle)(&self.root);
        let answers = batch
            .iter()
            .map(|_| ApprovalAnswer::approve(Scope::Once))
            .collect();
        async move { answers }.boxed()
    }
}

fn workspace() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("a.txt"), "alpha\nbeta\n").unwrap();
    (dir, root)
}

fn orchestrator(root: &Path, replies: Vec<Reply>) -> (Orchestrator, Arc<Scripted>) {
    let provider = Scripted::new(replies);
    let mut settings = settings(5);
    settings.workdir = root.to_path_buf();
    let orch = Orchestrator::new(
        provider.clone(),
        Arc::new(ToolRegistry::builtins()),
        settings,
    );
    (orch, provider)
}

fn edit_beta() -> Value {
    json!({"path": "a.txt", "edits": [{"old_string": "beta", "new_string": "BETA"}]})
}

/// Runs one call headless with `meddle` done between its diff and the answer; returns the
/// error the model was told and the tool's status.
async fn headless(
    root: &Path,
    name: &str,
    arguments: Value,
    meddle: fn(&Path),
) -> (String, ToolStatus) {
    let (mut orch, provider) = orchestrator(
        root,
        vec![Ok(calls(&[("c1", name, arguments)])), Ok(text("ok"))],
    );
    let mut approver = Meddler {
        root: root.to_path_buf(),
        meddle,
        asked: 0,
    };
    let mut events: Vec<Event> = Vec::new();
    orch.run("go", &mut events, &mut approver, &CancellationToken::new())
        .await;
    assert_eq!(
        approver.asked, 1,
        "asked once: nobody to show a fresh diff to"
    );
    let diff = events.iter().find_map(|e| match &e.data {
        EventData::ApprovalRequested { diff, .. } => diff.clone(),
        _ => None,
    });
    assert!(diff.is_some(), "the approval carried a diff");
    let sent = provider.sent();
    let results = tool_messages(&sent.last().unwrap().messages);
    assert_eq!(results.len(), 1);
    let error = results[0].1["error"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let (_, status, _) = statuses(&events).pop().unwrap();
    (error, status)
}

#[tokio::test]
async fn headless_an_edit_over_a_file_changed_meanwhile_writes_nothing_and_the_model_is_told() {
    let (_d, root) = workspace();
    let (error, status) = headless(&root, "edit_file", edit_beta(), |root| {
        std::fs::write(root.join("a.txt"), "alpha\nbeta\nthe user's line\n").unwrap();
    })
    .await;
    assert_eq!(status, ToolStatus::Failed);
    assert_eq!(
        error,
        "'a.txt' changed after its diff was shown; nothing was written; read it again and \
         make the change on what it holds now"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "alpha\nbeta\nthe user's line\n",
        "the user's change is kept, the edit is not applied"
    );
}

#[tokio::test]
async fn headless_an_overwrite_of_a_file_changed_meanwhile_writes_nothing() {
    let (_d, root) = workspace();
    let args = json!({"path": "a.txt", "content": "the model's\n"});
    let (error, status) = headless(&root, "write_file", args, |root| {
        std::fs::write(root.join("a.txt"), "the user's\n").unwrap();
    })
    .await;
    assert_eq!(status, ToolStatus::Failed);
    assert!(
        error.starts_with("'a.txt' changed after its diff was shown; nothing was written"),
        "{error}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "the user's\n"
    );
}

#[tokio::test]
async fn headless_a_new_file_created_meanwhile_is_not_overwritten() {
    let (_d, root) = workspace();
    let args = json!({"path": "new.txt", "content": "the model's\n"});
    let (error, status) = headless(&root, "write_file", args, |root| {
        std::fs::write(root.join("new.txt"), "the user's\n").unwrap();
    })
    .await;
    assert_eq!(status, ToolStatus::Failed);
    assert!(
        error.starts_with(
            "'new.txt' was created after its diff was shown (the diff was for a new file); nothing was written"
        ),
        "{error}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("new.txt")).unwrap(),
        "the user's\n"
    );
}

#[tokio::test]
async fn headless_a_file_deleted_meanwhile_is_not_made_again() {
    let (_d, root) = workspace();
    for (name, args) in [
        ("edit_file", edit_beta()),
        ("write_file", json!({"path": "a.txt", "content": "x\n"})),
    ] {
        std::fs::write(root.join("a.txt"), "alpha\nbeta\n").unwrap();
        let (error, status) = headless(&root, name, args, |root| {
            std::fs::remove_file(root.join("a.txt")).unwrap();
        })
        .await;
        assert_eq!(status, ToolStatus::Failed, "{name}");
        assert!(
            error.starts_with("'a.txt' was deleted after its diff was shown; nothing was written"),
            "{name}: {error}"
        );
        assert!(!root.join("a.txt").exists(), "{name}");
    }
}

#[tokio::test]
async fn headless_a_file_replaced_by_a_symlink_meanwhile_is_not_written_through_it() {
    let (_d, root) = workspace();
    for (name, args) in [
        ("edit_file", edit_beta()),
        ("write_file", json!({"path": "a.txt", "content": "x\n"})),
    ] {
        let _ = std::fs::remove_file(root.join("a.txt"));
        std::fs::write(root.join("a.txt"), "alpha\nbeta\n").unwrap();
        let (error, status) = headless(&root, name, args, |root| {
            // The same content, now another file's.
            std::fs::write(root.join("target.txt"), "alpha\nbeta\n").unwrap();
            std::fs::remove_file(root.join("a.txt")).unwrap();
            std::os::unix::fs::symlink("target.txt", root.join("a.txt")).unwrap();
        })
        .await;
        assert_eq!(status, ToolStatus::Failed, "{name}");
        assert!(
            error.starts_with("'a.txt' was replaced after its diff was shown (by a symlink"),
            "{name}: {error}"
        );
        assert_eq!(
            std::fs::read_to_string(root.join("target.txt")).unwrap(),
            "alpha\nbeta\n",
            "{name}"
        );
    }
}

/// Nothing changes between the diff and the answer: the edit applies.
#[tokio::test]
async fn headless_an_unchanged_file_is_edited() {
    let (_d, root) = workspace();
    let (error, status) = headless(&root, "edit_file", edit_beta(), |_| {}).await;
    assert_eq!((error.as_str(), status), ("", ToolStatus::Ok));
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "alpha\nBETA\n"
    );
}

async fn next(t: &mut OrchestratorTask) -> Event {
    tokio::time::timeout(Duration::from_secs(30), t.events.recv())
        .await
        .expect("an event in time")
        .expect("the task is running")
}

/// The next `approval_requested`: its id, diff and note; fails on an `approval_decided` first.
async fn asked(
    t: &mut OrchestratorTask,
    seen: &mut Vec<Event>,
) -> (String, String, Option<String>) {
    loop {
        let event = next(t).await;
        seen.push(event.clone());
        match event.data {
            EventData::ApprovalRequested { id, diff, note, .. } => {
                return (id, diff.unwrap(), note);
            }
            EventData::ApprovalDecided { .. } => panic!("decided before it was asked: {event:?}"),
            _ => {}
        }
    }
}

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

fn approve(t: &OrchestratorTask, id: &str) {
    let answer = ApprovalAnswer::approve(Scope::Once);
    let id = id.to_string();
    t.ops.send(Op::Approve { id, answer }).unwrap();
}

/// In the TUI: approved after the file changed, the call is not run blind; it is asked about
/// again with the diff against what the file holds now (the dialog says why), and that
/// approval applies the edit over the user's change.
#[tokio::test]
async fn in_the_tui_a_changed_file_is_asked_about_again_with_the_fresh_diff() {
    let (_d, root) = workspace();
    let (orch, provider) = orchestrator(
        &root,
        vec![
            Ok(calls(&[("c1", "edit_file", edit_beta())])),
            Ok(text("ok")),
        ],
    );
    let mut t = task::spawn(orch);
    t.ops.send(Op::Submit("go".into())).unwrap();
    let mut seen = Vec::new();
    let (id, first, note) = asked(&mut t, &mut seen).await;
    assert_eq!((id.as_str(), note), ("c1", None));
    assert!(first.contains("-beta\n+BETA"), "{first}");
    std::fs::write(root.join("a.txt"), "ALPHA by the user\nbeta\n").unwrap();
    approve(&t, "c1");
    let (id, fresh, note) = asked(&mut t, &mut seen).await;
    assert_eq!(id, "c1");
    assert!(
        note.as_deref()
            .is_some_and(|n| n.contains("the file changed while this dialog was open")),
        "{note:?}"
    );
    assert_ne!(first, fresh);
    assert!(
        fresh.contains(" ALPHA by the user\n-beta\n+BETA"),
        "{fresh}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "ALPHA by the user\nbeta\n",
        "nothing was written on the first approval"
    );
    approve(&t, "c1");
    until_final(&mut t, &mut seen).await;
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "ALPHA by the user\nBETA\n",
        "the approved diff, over the user's change"
    );
    let decided: Vec<(String, Decision)> = (seen.iter())
        .filter_map(|e| match &e.data {
            EventData::ApprovalDecided { id, decision, .. } => Some((id.clone(), *decision)),
            _ => None,
        })
        .collect();
    assert_eq!(
        decided,
        [("c1".to_string(), Decision::Approved)],
        "one decision"
    );
    let results = tool_messages(&provider.sent().last().unwrap().messages);
    assert_eq!(results[0].1["change"], "+1 −1 in a.txt");
    t.ops.send(Op::Shutdown).unwrap();
}

/// In the TUI, when there is no fresh diff to show (the file was deleted), the call fails
/// visibly with what changed instead of being run blind.
#[tokio::test]
async fn in_the_tui_a_file_deleted_while_the_dialog_was_open_fails_visibly() {
    let (_d, root) = workspace();
    let (orch, provider) = orchestrator(
        &root,
        vec![
            Ok(calls(&[("c1", "edit_file", edit_beta())])),
            Ok(text("ok")),
        ],
    );
    let mut t = task::spawn(orch);
    t.ops.send(Op::Submit("go".into())).unwrap();
    let mut seen = Vec::new();
    asked(&mut t, &mut seen).await;
    std::fs::remove_file(root.join("a.txt")).unwrap();
    approve(&t, "c1");
    until_final(&mut t, &mut seen).await;
    let error = seen.iter().find_map(|e| match &e.data {
        EventData::ToolResult { error, .. } => error.clone(),
        _ => None,
    });
    assert!(
        error
            .as_deref()
            .is_some_and(|e| e
                .starts_with("'a.txt' was deleted after its diff was shown; nothing was written")),
        "{error:?}"
    );
    assert!(!root.join("a.txt").exists());
    let results = tool_messages(&provider.sent().last().unwrap().messages);
    assert!(
        results[0].1["error"]
            .as_str()
            .unwrap()
            .contains("was deleted")
    );
    t.ops.send(Op::Shutdown).unwrap();
}
