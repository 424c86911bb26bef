//! Rewind through the orchestrator task, as the TUI drives it (issue 29): a preview with the
//! files' diffs and the conversation's side, a rewind of both that the next request goes on
//! from (in a new session file), its undo, a run's changes with their diffs, and a bad point
//! that changes nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use taco::checkpoint::{Limits, Store};
use taco::clock::SystemClock;
use taco::event::{
    Change, Event, EventData, FilesChanged, Listed, RewindPoint, RewindPreview, RewindScope,
    Rewound,
};
use taco::orchestrator::Orchestrator;
use taco::orchestrator::task::{self, Op, OrchestratorTask};
use taco::recorder::Recorder;
use taco::session::SessionWriter;
use taco::tools::{Policy, ToolRegistry};

use crate::support;
use support::scripted::*;

struct Setup {
    task: OrchestratorTask,
    provider: Arc<Scripted>,
    work: tempfile::TempDir,
    sessions: tempfile::TempDir,
    _state: tempfile::TempDir,
}

fn start() -> Setup {
    let work = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("keep.txt"), "kept\n").unwrap();
    let store = Store::open_in(
        state.path(),
        work.path(),
        Limits::default(),
        Arc::new(SystemClock),
    )
    .unwrap();
    store.checkpoint("start").unwrap();
    let provider = Scripted::new(vec![
        Ok(text("first answer")),
        Ok(calls(&[(
            "w1",
            "write_file",
            json!({"path": "a.txt", "content": "one\ntwo\n"}),
        )])),
        Ok(text("second answer")),
        Ok(text("third answer")),
    ]);
    let mut s = settings(10);
    s.workdir = work.path().canonicalize().unwrap();
    s.policies.insert("write_file".into(), Policy::Allow);
    let orchestrator = Orchestrator::new(provider.clone(), Arc::new(ToolRegistry::builtins()), s)
        .with_checkpoints(Arc::new(store));
    let writer = SessionWriter::create(sessions.path(), "p", "m", work.path()).unwrap();
    let recorder = Recorder::new(Some(writer), Some(sessions.path().to_path_buf()), None);
    Setup {
        task: task::spawn_recording(orchestrator, recorder),
        provider,
        work,
        sessions,
        _state: state,
    }
}

async fn until(t: &mut OrchestratorTask, stop: impl Fn(&EventData) -> bool) -> Vec<Event> {
    let mut seen = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(10), t.events.recv())
            .await
            .expect("an event in time")
            .expect("the task is alive");
        let done = stop(&event.data);
        seen.push(event);
        if done {
            return seen;
        }
    }
}

fn is_final(d: &EventData) -> bool {
    matches!(d, EventData::Final { .. })
}

fn session_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    files
}

#[tokio::test]
async fn preview_rewind_both_undo_and_a_runs_diffs_through_the_task() {
    let Setup {
        mut task,
        provider,
        work,
        sessions,
        _state,
    } = start();
    task.ops.send(Op::Submit("one".into())).unwrap();
    until(&mut task, is_final).await;
    task.ops.send(Op::Submit("two".into())).unwrap();
    let seen = until(&mut task, is_final).await;
    let second = seen[0].request_id.to_string();
    let changed: FilesChanged = seen
        .iter()
        .find_map(|e| match &e.data {
            EventData::FilesChanged(c) => Some((**c).clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("the run says what it changed: {seen:?}"));
    assert_eq!(changed.headline(), "1 file changed (+2 −0)");
    assert_eq!(
        std::fs::read_to_string(work.path().join("a.txt")).unwrap(),
        "one\ntwo\n"
    );

    // Ctrl-O's diffs: the run's change as a unified diff.
    task.ops
        .send(Op::ShowChanges {
            from: changed.from.clone(),
            to: changed.to.clone(),
        })
        .unwrap();
    let seen = until(
        &mut task,
        |d| matches!(d, EventData::Listed(l) if matches!(**l, Listed::Changes(_))),
    )
    .await;
    let EventData::Listed(listed) = &seen.last().unwrap().data else {
        unreachable!()
    };
    let Listed::Changes(view) = &**listed else {
        unreachable!()
    };
    let files = view.files.as_ref().unwrap();
    assert_eq!(files[0].file.path, "a.txt");
    assert!(
        files[0].diff.contains("+one") && files[0].diff.contains("+two"),
        "{}",
        files[0].diff
    );

    // The preview: a.txt would be deleted, with its diff; the conversation goes back before
    // "two", one run leaves it.
    let point = RewindPoint::Run {
        request_id: second.clone(),
    };
    task.ops.send(Op::PreviewRewind(point.clone())).unwrap();
    let seen = until(
        &mut task,
        |d| matches!(d, EventData::Listed(l) if matches!(**l, Listed::Rewind(_))),
    )
    .await;
    let EventData::Listed(listed) = &seen.last().unwrap().data else {
        unreachable!()
    };
    let Listed::Rewind(preview) = &**listed else {
        unreachable!()
    };
    let RewindPreview {
        files,
        conversation,
        ..
    } = &**preview;
    let files = files.as_ref().unwrap();
    assert_eq!(files.files.len(), 1);
    assert_eq!(files.files[0].file.change, Change::Deleted);
    assert!(
        files.files[0].diff.contains("-one"),
        "{}",
        files.files[0].diff
    );
    assert!(files.hand_edits.is_empty());
    let conversation = conversation.as_ref().unwrap();
    assert_eq!(conversation.prompt, "two");
    assert_eq!(conversation.runs_dropped, 1);
    assert!(
        work.path().join("a.txt").exists(),
        "a preview changes nothing"
    );

    // Both: the file goes, the conversation forks into a new session file.
    task.ops
        .send(Op::Rewind {
            point,
            scope: RewindScope::Both,
            overwrite: false,
        })
        .unwrap();
    let seen = until(&mut task, |d| {
        matches!(d, EventData::Rewound(_) | EventData::Error { .. })
    })
    .await;
    let EventData::Rewound(rewound) = &seen.last().unwrap().data else {
        panic!("{:?}", seen.last())
    };
    let Rewound {
        restored,
        undo,
        fork,
        ..
    } = &**rewound;
    assert_eq!(restored, &["a.txt".to_string()]);
    assert!(!work.path().join("a.txt").exists());
    assert_eq!(
        std::fs::read_to_string(work.path().join("keep.txt")).unwrap(),
        "kept\n"
    );
    let fork = fork.as_ref().unwrap();
    assert_eq!(fork.prompt, "two");
    assert_eq!(session_files(sessions.path()).len(), 2);

    // The next request goes on from before "two", and is written to the fork.
    task.ops.send(Op::Submit("three".into())).unwrap();
    until(&mut task, is_final).await;
    let sent = provider.sent();
    let last: Vec<String> = (sent.last().unwrap().messages.iter())
        .filter_map(|m| m.content.clone())
        .collect();
    assert_eq!(last, ["SYSTEM", "one", "first answer", "three"], "{last:?}");
    let fork_file = sessions.path().join(format!("{}.jsonl", fork.session));
    let fork_text = std::fs::read_to_string(&fork_file).unwrap();
    assert!(fork_text.contains("third answer"));
    let old_file = sessions.path().join(format!("{}.jsonl", fork.from_session));
    let old_text = std::fs::read_to_string(&old_file).unwrap();
    assert!(old_text.contains("second answer") && !old_text.contains("third answer"));
    let loaded = taco::session::load(&fork_file).unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);

    // Undo: back to the checkpoint taken before the rewind.
    task.ops
        .send(Op::Rewind {
            point: RewindPoint::Checkpoint {
                id: undo.clone().unwrap(),
            },
            scope: RewindScope::Files,
            overwrite: false,
        })
        .unwrap();
    until(&mut task, |d| matches!(d, EventData::Rewound(_))).await;
    assert_eq!(
        std::fs::read_to_string(work.path().join("a.txt")).unwrap(),
        "one\ntwo\n"
    );

    // A point that is not in the session: said, nothing done.
    task.ops
        .send(Op::Rewind {
            point: RewindPoint::Call {
                request_id: "nope".into(),
                call: "nope".into(),
            },
            scope: RewindScope::Both,
            overwrite: false,
        })
        .unwrap();
    let seen = until(&mut task, |d| {
        matches!(d, EventData::Error { .. } | EventData::Rewound(_))
    })
    .await;
    assert!(
        matches!(&seen.last().unwrap().data, EventData::Error { kind, message } if kind == "rewind" && message.contains("no call")),
        "{:?}",
        seen.last()
    );
    assert!(work.path().join("a.txt").exists());
    assert_eq!(session_files(sessions.path()).len(), 2);
    task.ops.send(Op::Shutdown).unwrap();
}
