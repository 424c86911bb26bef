//! The composer inside the app: its height on a real screen, Ctrl-C clearing a draft before
//! it cancels or quits, Ctrl-R, big pastes collapsed in the transcript but sent whole, and the
//! prompt history kept in a file across launches.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use std::sync::Arc;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;
use taco::conversation::Usage;
use taco::event::{EventData, FrameState, StackFrame};
use taco::history::PromptLog;
use taco::orchestrator::task::Op;
use taco::secrets::Secrets;
use taco::tui::app::Command;

mod support;
use support::app::Harness;

impl Harness {
    /// A fresh app whose history is the file in `dir` (as `taco` starts).
    fn with_log(dir: &std::path::Path, secrets: Secrets) -> Self {
        let mut h = Self::new();
        let log = PromptLog::in_dir(dir, Arc::new(secrets));
        h.app.set_prompt_history(log.load(), Some(log));
        h
    }

    fn key_with(&mut self, code: KeyCode, modifiers: KeyModifiers) -> Vec<Command> {
        self.ms += 10;
        let now = self.now();
        self.app.on_key(KeyEvent::new(code, modifiers), now)
    }

    fn key(&mut self, code: KeyCode) -> Vec<Command> {
        self.key_with(code, KeyModifiers::NONE)
    }

    fn ctrl(&mut self, c: char) -> Vec<Command> {
        self.key_with(KeyCode::Char(c), KeyModifiers::CONTROL)
    }

    fn type_text(&mut self, text: &str) {
        for c in text.chars() {
            self.key(KeyCode::Char(c));
        }
    }

    fn paste(&mut self, text: &str) {
        let now = self.now();
        self.app.on_paste(text, now);
    }

    fn start_run(&mut self) {
        self.event(EventData::RunStarted {
            prompt: "p".into(),
            provider: "demo".into(),
            model: "demo".into(),
            max_turns: 10,
        });
    }

    /// A whole run for the prompt just sent.
    fn run(&mut self) {
        self.start_run();
        self.finish_run();
        assert!(!self.app.is_busy());
    }

    fn finish_run(&mut self) -> Vec<Command> {
        self.event(EventData::Final {
            content: "done".into(),
            turns: 1,
            usage: Usage::default(),
        })
    }

    /// The screen as text, one line a row (trailing blanks trimmed).
    fn text(&mut self, width: u16, height: u16) -> String {
        let terminal = self.screen(width, height);
        let buffer = terminal.backend().buffer();
        (0..buffer.area.height)
            .map(|y| {
                let row: String = (0..buffer.area.width)
                    .map(|x| buffer[(x, y)].symbol())
                    .collect();
                row.trim_end().to_string()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

fn submit(text: &str) -> Command {
    Command::Op(Op::Submit(text.into()))
}

fn sixty_words() -> String {
    (1..=60)
        .map(|i| format!("word{i}"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn a_long_prompt_shows_whole_at_120_columns() {
    let mut h = Harness::new();
    h.type_text(&sixty_words());
    let screen = h.text(120, 30);
    for i in 1..=60 {
        assert!(
            screen.contains(&format!("word{i} ")) || screen.contains(&format!("word{i}\n")),
            "word{i} shows:\n{screen}"
        );
    }
    insta::assert_snapshot!(h.screen(120, 30).backend());
}

#[test]
fn ctrl_c_clears_the_draft_then_cancels_then_quits() {
    let mut h = Harness::new();
    h.type_text("go");
    assert_eq!(h.key(KeyCode::Enter), [submit("go")]);
    h.start_run();
    h.type_text("half typed");
    assert_eq!(h.ctrl('c'), [], "the first Ctrl-C clears the draft");
    assert_eq!(h.app.composer_text(), "");
    assert!(h.app.is_busy(), "and the run goes on");
    assert!(h.text(120, 30).contains("draft cleared"));
    h.key(KeyCode::Up);
    assert_eq!(h.app.composer_text(), "half typed", "Up brings it back");
    assert_eq!(h.ctrl('c'), []);
    assert_eq!(h.ctrl('c'), [Command::Op(Op::Cancel)], "empty: it cancels");
    assert_eq!(h.ctrl('c'), [Command::Quit]);

    // Idle: a draft typed between the two Ctrl-C is cleared, not a reason to quit.
    let mut h = Harness::new();
    assert_eq!(h.ctrl('c'), []);
    h.type_text("x");
    assert_eq!(h.ctrl('c'), []);
    assert!(!h.app.should_quit());
    assert_eq!(h.ctrl('c'), []);
    assert_eq!(h.ctrl('c'), [Command::Quit]);
}

#[test]
fn with_a_dialog_open_ctrl_c_cancels_at_once_and_keeps_the_draft() {
    let mut h = Harness::new();
    h.start_run();
    h.event(EventData::StackPush(StackFrame {
        id: "c1".into(),
        parent: None,
        name: "shell".into(),
        summary: "ls".into(),
        state: FrameState::AwaitingApproval,
    }));
    h.event(EventData::ApprovalRequested {
        id: "c1".into(),
        name: "shell".into(),
        arguments: json!({"command": "ls"}),
        position: 1,
        of: 1,
        note: None,
        diff: None,
    });
    assert!(h.app.approval_open());
    h.paste("typed ahead");
    assert_eq!(h.ctrl('c'), [Command::Op(Op::Cancel)]);
    assert_eq!(h.app.composer_text(), "typed ahead");
}

#[test]
fn ctrl_r_searches_and_esc_leaves_it_without_cancelling() {
    let mut h = Harness::new();
    for prompt in ["list the files", "run the tests", "fix the lint"] {
        h.type_text(prompt);
        h.key(KeyCode::Enter);
        h.run();
    }
    h.start_run();
    h.type_text("mine");
    assert_eq!(h.ctrl('r'), []);
    h.type_text("the t");
    let screen = h.text(120, 30);
    assert!(
        screen.contains("(reverse-i-search)'the t': run the tests"),
        "{screen}"
    );
    assert!(screen.contains("search earlier prompts"), "{screen}");
    assert_eq!(
        h.key(KeyCode::Esc),
        [],
        "Esc leaves the search, not the run"
    );
    assert_eq!(h.app.composer_text(), "mine");
    assert!(h.app.is_busy());
    h.ctrl('c');
    h.finish_run();
    h.ctrl('r');
    h.type_text("list");
    assert_eq!(
        h.key(KeyCode::Enter),
        [],
        "Enter takes the match, sends nothing"
    );
    assert_eq!(h.app.composer_text(), "list the files");
    assert_eq!(h.key(KeyCode::Enter), [submit("list the files")]);
    // Ctrl-C in a search leaves it.
    h.run();
    h.type_text("keep");
    h.ctrl('r');
    h.type_text("fix");
    assert_eq!(h.ctrl('c'), []);
    assert_eq!(h.app.composer_text(), "keep");
}

#[test]
fn a_big_paste_is_collapsed_in_the_transcript_and_sent_whole() {
    let mut h = Harness::new();
    let log: String = (1..=40)
        .map(|i| format!("error line {i}"))
        .collect::<Vec<_>>()
        .join("\n");
    h.type_text("why does this fail? ");
    h.paste(&log);
    assert!(
        h.text(120, 30)
            .contains("why does this fail? [pasted 40 lines]"),
        "a chip in the composer"
    );
    let full = format!("why does this fail? {log}");
    assert_eq!(h.key(KeyCode::Enter), [submit(&full)]);
    let screen = h.text(120, 30);
    assert!(
        screen.contains("› why does this fail? [pasted 40 lines]"),
        "{screen}"
    );
    assert!(!screen.contains("error line 20"), "{screen}");
    insta::assert_snapshot!(h.screen(120, 20).backend());
    h.ctrl('o');
    let screen = h.text(120, 60);
    assert!(
        screen.contains("error line 20"),
        "Ctrl-O expands it:\n{screen}"
    );
}

#[test]
fn a_queued_paste_is_collapsed_when_its_turn_comes() {
    let mut h = Harness::new();
    h.type_text("first");
    h.key(KeyCode::Enter);
    h.start_run();
    let log = "x\n".repeat(30);
    h.paste(&log);
    assert_eq!(h.key(KeyCode::Enter), []);
    assert_eq!(h.finish_run(), [submit(&log.replace('\r', ""))]);
    let screen = h.text(120, 30);
    assert!(screen.contains("› [pasted 31 lines]"), "{screen}");
}

#[test]
fn prompts_are_kept_across_launches_redacted() {
    let dir = tempfile::tempdir().unwrap();
    let key = "sk-live-abcdef0123456789";
    let secrets = || Secrets::new([key.to_string()]);
    let mut first = Harness::with_log(dir.path(), secrets());
    first.type_text("the first prompt");
    first.key(KeyCode::Enter);
    first.run();
    first.type_text(&format!("use {key} for the call"));
    first.key(KeyCode::Enter);
    first.run();
    first.type_text("a draft never sent");
    first.ctrl('c');
    first.type_text("/quit");
    assert_eq!(first.key(KeyCode::Enter), [Command::Quit]);
    let file = std::fs::read_to_string(dir.path().join("prompt-history.jsonl")).unwrap();
    assert!(!file.contains(key), "{file}");
    assert_eq!(file.lines().count(), 3, "{file}");

    let mut second = Harness::with_log(dir.path(), secrets());
    second.key(KeyCode::Up);
    assert_eq!(second.app.composer_text(), "a draft never sent");
    second.key(KeyCode::Up);
    assert_eq!(second.app.composer_text(), "use sk-…*** for the call");
    second.key(KeyCode::Up);
    assert_eq!(second.app.composer_text(), "the first prompt");
}
