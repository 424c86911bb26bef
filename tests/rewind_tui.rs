//! Rewind in the app (issue 29): `r` on a timeline row opens the rewind overlay (loading,
//! then the preview: files, diffs, hand edits, the conversation's side), a side that cannot
//! go back says why and cannot be picked, the overlay obeys the dialog gate, `/rewind` lists
//! the runs and their calls, and a run's `✎ N files changed` cell shows its diffs with
//! Ctrl-O. Snapshots at 100×30.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use std::time::{Duration, Instant};

use ratatui::crossterm::event::{KeyCode, KeyModifiers};
use serde_json::json;
use taco::conversation::Usage;
use taco::event::{
    Change, ChangedFile, ChangesView, CheckpointTaken, ConversationPreview, EventData,
    FileDiffView, FilesChanged, FilesPreview, Fork, Listed, RewindPoint, RewindPreview,
    RewindScope, Rewound, ToolStatus,
};
use taco::orchestrator::task::Op;
use taco::tui::app::{App, Command};
use taco::tui::layout::Focus;

use crate::support;
use support::app::{Harness, info, screen_text};

const NOTES_DIFF: &str = "diff --git a/notes.txt b/notes.txt\nindex 1111111..2222222 100644\n--- a/notes.txt\n+++ b/notes.txt\n@@ -1,2 +1,2 @@\n first line\n-written by the model\n+as it was before\n";
const MADE_DIFF: &str = "diff --git a/made.txt b/made.txt\ndeleted file mode 100644\nindex 3333333..0000000\n--- a/made.txt\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-one\n-two\n-three\n";

fn file(path: &str, change: Change, added: u64, removed: u64) -> ChangedFile {
    ChangedFile {
        path: path.into(),
        change,
        added,
        removed,
        binary: false,
    }
}

fn checkpoint(id: &str, calls: &[&str]) -> EventData {
    EventData::Checkpoint(CheckpointTaken {
        id: Some(id.into()),
        calls: calls.iter().map(|c| c.to_string()).collect(),
        changed: true,
        skipped: Vec::new(),
        skipped_count: 0,
        error: None,
    })
}

/// The run's `files_changed`: notes.txt changed, made.txt created.
fn files_changed() -> FilesChanged {
    FilesChanged {
        from: "cp-before-write".into(),
        to: "cp-end".into(),
        files: vec![
            file("made.txt", Change::Added, 3, 0),
            file("notes.txt", Change::Modified, 1, 1),
        ],
        added: 4,
        removed: 1,
        omitted: 0,
    }
}

/// The steps of this file's stories, on the shared harness.
trait RewindSteps {
    fn call(&mut self, id: &str, name: &str, arguments: serde_json::Value, checkpoint: &str);
    fn run(&mut self);
    fn timeline_row(&mut self, downs: usize) -> Vec<Command>;
    fn preview(
        &mut self,
        files: Result<FilesPreview, String>,
        conversation: Result<ConversationPreview, String>,
    );
    fn text(&mut self) -> String;
}

impl RewindSteps for Harness {
    /// A call, the checkpoint before it, and its result.
    fn call(&mut self, id: &str, name: &str, arguments: serde_json::Value, checkpoint_id: &str) {
        self.event(EventData::ToolCall {
            turn: 1,
            id: id.into(),
            name: name.into(),
            arguments,
            parent: None,
            sandbox: None,
        });
        self.event(checkpoint(checkpoint_id, &[id]));
        self.event(EventData::ToolResult {
            id: id.into(),
            name: name.into(),
            ok: true,
            status: Some(ToolStatus::Ok),
            denied_by: None,
            result: Some(json!("ok")),
            error: None,
            duration_ms: 5,
        });
    }

    /// A run that writes notes.txt, then runs a shell command that creates made.txt.
    fn run(&mut self) {
        self.event(EventData::RunStarted {
            prompt: "tidy the notes".into(),
            provider: "demo".into(),
            model: "demo".into(),
            max_turns: 10,
            trace_parent: None,
        });
        self.call(
            "call-write",
            "write_file",
            json!({"path": "notes.txt", "content": "first line\nwritten by the model\n"}),
            "cp-before-write",
        );
        self.call(
            "call-shell",
            "shell",
            json!({"command": "seq 3 > made.txt"}),
            "cp-before-shell",
        );
        self.event(checkpoint("cp-end", &[]));
        self.event(EventData::FilesChanged(Box::new(files_changed())));
        self.event(EventData::Final {
            content: "Done.".into(),
            turns: 1,
            usage: Usage::default(),
        });
    }

    /// Focuses the timeline, selects its first row and moves down `downs` rows, then `r`.
    fn timeline_row(&mut self, downs: usize) -> Vec<Command> {
        for _ in 0..3 {
            if self.app.focus() == Focus::Timeline {
                break;
            }
            self.key(KeyCode::Tab);
        }
        assert_eq!(self.app.focus(), Focus::Timeline);
        self.key(KeyCode::Home);
        for _ in 0..downs {
            self.key(KeyCode::Down);
        }
        self.key(KeyCode::Char('r'))
    }

    fn preview(
        &mut self,
        files: Result<FilesPreview, String>,
        conversation: Result<ConversationPreview, String>,
    ) {
        let point = RewindPoint::Call {
            request_id: "run-1".into(),
            call: "call-write".into(),
        };
        self.event(EventData::Listed(Box::new(Listed::Rewind(Box::new(
            RewindPreview {
                point,
                files,
                conversation,
            },
        )))));
    }

    fn text(&mut self) -> String {
        screen_text(&self.screen(100, 30))
    }
}

fn write_point() -> RewindPoint {
    RewindPoint::Call {
        request_id: "run-1".into(),
        call: "call-write".into(),
    }
}

/// What rewinding to before the write would do: notes.txt back, made.txt gone, and
/// notes.txt edited by hand since.
fn files_preview() -> FilesPreview {
    FilesPreview {
        checkpoint: "cp-before-write-0123456789".into(),
        files: vec![
            FileDiffView {
                file: file("made.txt", Change::Deleted, 0, 3),
                diff: MADE_DIFF.into(),
                truncated: false,
            },
            FileDiffView {
                file: file("notes.txt", Change::Modified, 1, 1),
                diff: NOTES_DIFF.into(),
                truncated: false,
            },
        ],
        omitted: 0,
        hand_edits: vec!["notes.txt".into()],
    }
}

fn conversation() -> ConversationPreview {
    ConversationPreview {
        prompt: "tidy the notes".into(),
        runs_dropped: 1,
    }
}

/// The ops among `commands`.
fn ops(commands: &[Command]) -> Vec<&Op> {
    commands
        .iter()
        .filter_map(|c| match c {
            Command::Op(op) => Some(op),
            _ => None,
        })
        .collect()
}

/// The run's rows in the timeline: ▶ run, write_file, its result, shell, its result, ✎,
/// the answer. The write_file call is the second.
const WRITE_ROW: usize = 1;

#[test]
fn r_on_a_call_row_previews_the_rewind_and_confirms_what_was_picked() {
    let mut h = Harness::new();
    h.run();
    let asked = h.timeline_row(WRITE_ROW);
    assert_eq!(ops(&asked), [&Op::PreviewRewind(write_point())]);
    assert!(h.app.rewind_open());
    insta::assert_snapshot!("rewind_loading", h.text());

    h.preview(Ok(files_preview()), Ok(conversation()));
    insta::assert_snapshot!("rewind_overlay_files_diff_hand_edits", h.text());

    // The next file's diff; the hand-edited file is to be overwritten too.
    h.key(KeyCode::Right);
    h.key(KeyCode::Char('o'));
    let screen = h.text();
    assert!(screen.contains("OVERWRITTEN"), "{screen}");
    assert!(screen.contains("as it was before"), "{screen}");
    insta::assert_snapshot!("rewind_overlay_second_file_overwrite", screen);

    // A letter only picks: Enter carries it out.
    assert!(ops(&h.key(KeyCode::Char('f'))).is_empty());
    let screen = h.text();
    assert!(screen.contains("f › restore 2 files"), "{screen}");
    let done = h.key(KeyCode::Enter);
    assert_eq!(
        ops(&done),
        [&Op::Rewind {
            point: write_point(),
            scope: RewindScope::Files,
            overwrite: true,
        }]
    );
    assert!(!h.app.rewind_open());
}

#[test]
fn esc_closes_the_overlay_and_changes_nothing() {
    let mut h = Harness::new();
    h.run();
    h.timeline_row(WRITE_ROW);
    h.preview(Ok(files_preview()), Ok(conversation()));
    h.key(KeyCode::Char('b'));
    // Esc drops the pick, a second closes.
    assert!(ops(&h.key(KeyCode::Esc)).is_empty());
    assert!(h.app.rewind_open());
    assert!(ops(&h.key(KeyCode::Esc)).is_empty());
    assert!(!h.app.rewind_open());
    // Hand edits are kept by default.
    h.timeline_row(WRITE_ROW);
    h.preview(Ok(files_preview()), Ok(conversation()));
    h.key(KeyCode::Char('b'));
    let done = h.key(KeyCode::Enter);
    assert_eq!(
        ops(&done),
        [&Op::Rewind {
            point: write_point(),
            scope: RewindScope::Both,
            overwrite: false,
        }]
    );
}

#[test]
fn a_side_that_cannot_go_back_says_why_and_cannot_be_picked() {
    let mut h = Harness::new();
    h.run();
    h.timeline_row(WRITE_ROW);
    h.preview(
        Ok(files_preview()),
        Err("the session is not saved (--no-session)".into()),
    );
    let screen = h.text();
    assert!(
        screen.contains("✗ cannot go back: the session is not saved"),
        "{screen}"
    );
    insta::assert_snapshot!("rewind_overlay_conversation_unavailable", screen);
    // `c` and `b` answer nothing here: typing, it goes to the message.
    assert!(ops(&h.key(KeyCode::Char('c'))).is_empty());
    assert!(ops(&h.key(KeyCode::Enter)).is_empty());
    assert!(!h.app.rewind_open() || !h.text().contains("c ›"));
    assert_eq!(h.app.composer_text(), "c");
}

/// An app whose dialogs wait for 2 s of quiet after typing (the default).
fn guarded() -> Harness {
    let mut info = info();
    info.dialog_guard = Duration::from_secs(2);
    let t0 = Instant::now();
    Harness {
        app: App::new(info, t0),
        t0,
        ms: 0,
    }
}

#[test]
fn keys_typed_before_the_overlay_opened_do_not_confirm_it() {
    let mut h = guarded();
    h.run();
    h.timeline_row(WRITE_ROW);
    // Typed while the preview was on its way, and just after it came: typing, not answers.
    let mut commands = h.type_text("f");
    h.preview(Ok(files_preview()), Ok(conversation()));
    commands.extend(h.type_text("f"));
    commands.extend(h.key(KeyCode::Enter));
    assert!(
        !ops(&commands)
            .iter()
            .any(|op| matches!(op, Op::Rewind { .. })),
        "{commands:?}"
    );
    assert!(h.app.rewind_open());
    let screen = h.text();
    assert!(screen.contains("your message is unsent"), "{screen}");
    // The typing is the user's message, whole.
    assert_eq!(h.app.composer_text(), "ff");

    // Tab moves to the dialog: now a letter and Enter rewind.
    h.key(KeyCode::Tab);
    h.key(KeyCode::Char('f'));
    let done = h.key(KeyCode::Enter);
    assert_eq!(
        ops(&done),
        [&Op::Rewind {
            point: write_point(),
            scope: RewindScope::Files,
            overwrite: false,
        }]
    );
}

#[test]
fn after_a_quiet_the_overlay_takes_keys_by_itself() {
    let mut h = guarded();
    h.run();
    h.timeline_row(WRITE_ROW);
    h.preview(Ok(files_preview()), Ok(conversation()));
    // `r` was typed a moment ago: the dialog waits, and says for how long.
    let screen = h.text();
    assert!(screen.contains("keys active in"), "{screen}");
    h.ms += 2500;
    h.key(KeyCode::Char('c'));
    let done = h.key(KeyCode::Enter);
    assert_eq!(
        ops(&done),
        [&Op::Rewind {
            point: write_point(),
            scope: RewindScope::Conversation,
            overwrite: false,
        }]
    );
    assert_eq!(h.app.composer_text(), "");
}

#[test]
fn r_waits_for_the_run_to_end() {
    let mut h = Harness::new();
    h.event(EventData::RunStarted {
        prompt: "tidy the notes".into(),
        provider: "demo".into(),
        model: "demo".into(),
        max_turns: 10,
        trace_parent: None,
    });
    h.call(
        "call-write",
        "write_file",
        json!({"path": "notes.txt", "content": "x"}),
        "cp-before-write",
    );
    let asked = h.timeline_row(WRITE_ROW);
    assert!(ops(&asked).is_empty(), "{asked:?}");
    assert!(!h.app.rewind_open());
    let screen = h.text();
    assert!(
        screen.contains("rewind waits for the run to end"),
        "{screen}"
    );
}

#[test]
fn the_rewind_picker_lists_runs_and_calls_newest_first() {
    let mut h = Harness::new();
    h.run();
    h.ms += 1000;
    h.event(EventData::RunStarted {
        prompt: "now explain it".into(),
        provider: "demo".into(),
        model: "demo".into(),
        max_turns: 10,
        trace_parent: None,
    });
    h.event(EventData::Final {
        content: "It is tidy.".into(),
        turns: 1,
        usage: Usage::default(),
    });
    h.command("/rewind");
    let screen = h.text();
    insta::assert_snapshot!("rewind_picker", screen);
    // Newest first: the second run, then the first with its calls (shell, then write).
    let explain = screen.find("now explain it").unwrap();
    let tidy = screen.find("tidy the notes").unwrap();
    let shell = screen.find("✎ shell").unwrap();
    let write = screen.find("✎ write_file").unwrap();
    assert!(explain < tidy && tidy < shell && shell < write, "{screen}");
    assert!(screen.contains("✎ 2 files changed (+4 −1)"), "{screen}");
    // Choosing the write opens the same overlay for it.
    h.key(KeyCode::Down);
    h.key(KeyCode::Down);
    h.key(KeyCode::Down);
    let asked = h.key(KeyCode::Enter);
    assert_eq!(ops(&asked), [&Op::PreviewRewind(write_point())]);
    assert!(h.app.rewind_open());
}

#[test]
fn the_files_changed_cell_expands_to_its_diffs() {
    let mut h = Harness::new();
    h.run();
    let screen = h.text();
    assert!(screen.contains("✎ 2 files changed (+4 −1)"), "{screen}");
    insta::assert_snapshot!("files_changed_collapsed", screen);

    let asked = h.key_with(KeyCode::Char('o'), KeyModifiers::CONTROL);
    assert_eq!(
        ops(&asked),
        [&Op::ShowChanges {
            from: "cp-before-write".into(),
            to: "cp-end".into(),
        }]
    );
    assert!(h.text().contains("reading the diffs…"));
    h.event(EventData::Listed(Box::new(Listed::Changes(Box::new(
        ChangesView {
            from: "cp-before-write".into(),
            to: "cp-end".into(),
            files: Ok(vec![FileDiffView {
                file: file("made.txt", Change::Added, 3, 0),
                diff: "diff --git a/made.txt b/made.txt\nnew file mode 100644\n--- /dev/null\n+++ b/made.txt\n@@ -0,0 +1,3 @@\n+1\n+2\n+3\n".into(),
                truncated: false,
            }]),
        },
    )))));
    let screen = h.text();
    assert!(screen.contains("+3 −0 made.txt"), "{screen}");
    insta::assert_snapshot!("files_changed_expanded", screen);
    // Asked once: collapsing and expanding again asks nothing more.
    h.key_with(KeyCode::Char('o'), KeyModifiers::CONTROL);
    let again = h.key_with(KeyCode::Char('o'), KeyModifiers::CONTROL);
    assert!(ops(&again).is_empty(), "{again:?}");
}

#[test]
fn a_conversation_fork_marks_where_the_conversation_went_back() {
    let mut h = Harness::new();
    h.run();
    h.event(EventData::Rewound(Box::new(Rewound {
        point: RewindPoint::Run {
            request_id: "run-1".into(),
        },
        checkpoint: Some("cp-before-write".into()),
        restored: vec!["made.txt".into(), "notes.txt".into()],
        kept: Vec::new(),
        failed: Vec::new(),
        undo: Some("cp-undo-0123456789".into()),
        fork: Some(Fork {
            from_session: "20261127-old".into(),
            session: "20261127-new".into(),
            prompt: "tidy the notes".into(),
        }),
    })));
    let screen = h.text();
    assert!(screen.contains("The conversation went back"), "{screen}");
    assert!(screen.contains("20261127-new"), "{screen}");
    // The run is left behind in the picker; the rewound row's `r` undoes the rewind.
    h.command("/rewind");
    assert!(h.text().contains("left behind"));
    h.key(KeyCode::Esc);
    let asked = h.timeline_row(7);
    assert_eq!(
        ops(&asked),
        [&Op::PreviewRewind(RewindPoint::Checkpoint {
            id: "cp-undo-0123456789".into()
        })]
    );
}

#[test]
fn status_says_why_checkpoints_are_off() {
    let mut info = info();
    info.checkpoints = Some(Err(
        "checkpoints are off ([checkpoints] enabled = false in the config)".into(),
    ));
    let t0 = Instant::now();
    let mut h = Harness {
        app: App::new(info, t0),
        t0,
        ms: 0,
    };
    h.command("/status");
    let screen = screen_text(&h.screen(100, 40));
    assert!(
        screen.contains("Checkpoints: checkpoints are off"),
        "{screen}"
    );
}

#[test]
fn status_measures_the_checkpoint_store() {
    let work = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let store = taco::checkpoint::Store::open_in(
        state.path(),
        work.path(),
        Default::default(),
        std::sync::Arc::new(taco::clock::SystemClock),
    );
    let store = store.expect("git is installed (checkpoints need it)");
    let mut info = info();
    info.checkpoints = Some(Ok(std::sync::Arc::new(store)));
    let t0 = Instant::now();
    let mut h = Harness {
        app: App::new(info, t0),
        t0,
        ms: 0,
    };
    let commands = h.command("/status");
    assert!(
        commands
            .iter()
            .any(|c| matches!(c, Command::MeasureCheckpoints(_))),
        "{commands:?}"
    );
    h.app.on_checkpoints_measured(3 * 1024 * 1024);
    let screen = screen_text(&h.screen(100, 40));
    assert!(screen.contains("Checkpoint store: 3.0 MiB"), "{screen}");
}
