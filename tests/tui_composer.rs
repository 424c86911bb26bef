//! The composer inside the app: its height on a real screen, Ctrl-C clearing a draft before
//! it cancels or quits, Ctrl-R, big pastes collapsed in the transcript but sent whole, the
//! prompt history kept in a file across launches, the slash command popup, the `@` file
//! finder over a real directory, and files attached to a message (capped, confined, shown as
//! chips).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;
use taco::conversation::{Message, Usage};
use taco::event::{EventData, FrameState, StackFrame};
use taco::history::PromptLog;
use taco::orchestrator::task::Op;
use taco::secrets::Secrets;
use taco::session::Entry;
use taco::tui::app::{App, AppInfo, Command};
use taco::tui::commands::COMMANDS;
use taco::tui::layout::Focus;
use taco::tui::theme::Theme;
use taco::tui::views::composer::PopupKind;
use taco::tui::views::help::Help;

use crate::support;
use support::app::Harness;

/// The steps of this file's stories, on the shared harness.
trait TuiComposerSteps {
    fn with_log(dir: &std::path::Path, secrets: Secrets) -> Self;
    fn tap_with(&mut self, code: KeyCode, modifiers: KeyModifiers) -> Vec<Command>;
    fn tap(&mut self, code: KeyCode) -> Vec<Command>;
    fn ctrl(&mut self, c: char) -> Vec<Command>;
    fn tap_text(&mut self, text: &str);
    fn paste(&mut self, text: &str);
    fn start_run(&mut self);
    fn run(&mut self);
    fn finish_run(&mut self) -> Vec<Command>;
    fn text(&mut self, width: u16, height: u16) -> String;
}

impl TuiComposerSteps for Harness {
    /// A fresh app whose history is the file in `dir` (as `taco` starts).
    fn with_log(dir: &std::path::Path, secrets: Secrets) -> Self {
        let mut h = Self::new();
        let log = PromptLog::in_dir(dir, Arc::new(secrets));
        h.app.set_prompt_history(log.load(), Some(log));
        h
    }

    fn tap_with(&mut self, code: KeyCode, modifiers: KeyModifiers) -> Vec<Command> {
        self.ms += 10;
        let now = self.now();
        self.app.on_key(KeyEvent::new(code, modifiers), now)
    }

    fn tap(&mut self, code: KeyCode) -> Vec<Command> {
        self.tap_with(code, KeyModifiers::NONE)
    }

    fn ctrl(&mut self, c: char) -> Vec<Command> {
        self.tap_with(KeyCode::Char(c), KeyModifiers::CONTROL)
    }

    fn tap_text(&mut self, text: &str) {
        for c in text.chars() {
            self.tap(KeyCode::Char(c));
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
            trace_parent: None,
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
    h.tap_text(&sixty_words());
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
    h.tap_text("go");
    assert_eq!(h.tap(KeyCode::Enter), [submit("go")]);
    h.start_run();
    h.tap_text("half typed");
    assert_eq!(h.ctrl('c'), [], "the first Ctrl-C clears the draft");
    assert_eq!(h.app.composer_text(), "");
    assert!(h.app.is_busy(), "and the run goes on");
    assert!(h.text(120, 30).contains("draft cleared"));
    h.tap(KeyCode::Up);
    assert_eq!(h.app.composer_text(), "half typed", "Up brings it back");
    assert_eq!(h.ctrl('c'), []);
    assert_eq!(h.ctrl('c'), [Command::Op(Op::Cancel)], "empty: it cancels");
    assert_eq!(h.ctrl('c'), [Command::Quit]);

    // Idle: a draft typed between the two Ctrl-C is cleared, not a reason to quit.
    let mut h = Harness::new();
    assert_eq!(h.ctrl('c'), []);
    h.tap_text("x");
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
        sandbox: None,
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
        h.tap_text(prompt);
        h.tap(KeyCode::Enter);
        h.run();
    }
    h.start_run();
    h.tap_text("mine");
    assert_eq!(h.ctrl('r'), []);
    h.tap_text("the t");
    let screen = h.text(120, 30);
    assert!(
        screen.contains("(reverse-i-search)'the t': run the tests"),
        "{screen}"
    );
    assert!(screen.contains("search earlier prompts"), "{screen}");
    assert_eq!(
        h.tap(KeyCode::Esc),
        [],
        "Esc leaves the search, not the run"
    );
    assert_eq!(h.app.composer_text(), "mine");
    assert!(h.app.is_busy());
    h.ctrl('c');
    h.finish_run();
    h.ctrl('r');
    h.tap_text("list");
    assert_eq!(
        h.tap(KeyCode::Enter),
        [],
        "Enter takes the match, sends nothing"
    );
    assert_eq!(h.app.composer_text(), "list the files");
    assert_eq!(h.tap(KeyCode::Enter), [submit("list the files")]);
    // Ctrl-C in a search leaves it.
    h.run();
    h.tap_text("keep");
    h.ctrl('r');
    h.tap_text("fix");
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
    h.tap_text("why does this fail? ");
    h.paste(&log);
    assert!(
        h.text(120, 30)
            .contains("why does this fail? [pasted 40 lines]"),
        "a chip in the composer"
    );
    let full = format!("why does this fail? {log}");
    assert_eq!(h.tap(KeyCode::Enter), [submit(&full)]);
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
    h.tap_text("first");
    h.tap(KeyCode::Enter);
    h.start_run();
    let log = "x\n".repeat(30);
    h.paste(&log);
    assert_eq!(h.tap(KeyCode::Enter), []);
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
    first.tap_text("the first prompt");
    first.tap(KeyCode::Enter);
    first.run();
    first.tap_text(&format!("use {key} for the call"));
    first.tap(KeyCode::Enter);
    first.run();
    first.tap_text("a draft never sent");
    first.ctrl('c');
    first.tap_text("/quit");
    assert_eq!(first.tap(KeyCode::Enter), [Command::Quit]);
    let file = std::fs::read_to_string(dir.path().join("prompt-history.jsonl")).unwrap();
    assert!(!file.contains(key), "{file}");
    assert_eq!(file.lines().count(), 3, "{file}");

    let mut second = Harness::with_log(dir.path(), secrets());
    second.tap(KeyCode::Up);
    assert_eq!(second.app.composer_text(), "a draft never sent");
    second.tap(KeyCode::Up);
    assert_eq!(second.app.composer_text(), "use sk-…*** for the call");
    second.tap(KeyCode::Up);
    assert_eq!(second.app.composer_text(), "the first prompt");
}

// The command popup and the `@` file finder.

impl Harness {
    /// A fresh app working in `dir` (the `@` finder lists it, mentions attach from it).
    fn in_dir(dir: &Path) -> Self {
        let mut h = Self::new();
        let info = AppInfo {
            workdir: dir.display().to_string(),
            ..support::app::info()
        };
        h.app = App::new(info, h.t0);
        h
    }

    /// Waits (real time, bounded) until the `@` finder has listed the workspace.
    fn files_listed(&mut self) {
        // Working the popup out starts the listing.
        let _ = self.app.popup();
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while self.app.listing_files() {
            assert!(
                std::time::Instant::now() < deadline,
                "the file list never came"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// The popup's choices (none when it is closed).
    fn choices(&mut self) -> Vec<String> {
        self.app
            .popup()
            .map(|(_, items, _)| items)
            .unwrap_or_default()
    }

    fn selected(&mut self) -> Option<usize> {
        self.app.popup().map(|(_, _, selected)| selected)
    }

    fn send(&mut self, text: &str) -> String {
        self.tap_text(text);
        match self.tap(KeyCode::Enter).as_slice() {
            [Command::Op(Op::Submit(sent))] => sent.clone(),
            other => panic!("nothing sent: {other:?}"),
        }
    }
}

fn strings(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn slash_opens_a_popup_of_every_command_in_the_table() {
    let mut h = Harness::new();
    assert_eq!(h.app.popup(), None);
    h.tap_text("/");
    let (kind, items, selected) = h.app.popup().unwrap();
    assert_eq!(kind, PopupKind::Command);
    // Whatever the table holds, in its order: a command added there shows here.
    let table: Vec<String> = COMMANDS.iter().map(|c| c.name.to_string()).collect();
    assert_eq!((items, selected), (table, 0));
    let screen = h.text(120, 30);
    assert!(
        screen.contains("/help         every key and command"),
        "{screen}"
    );
    assert!(
        screen.contains("↑↓ choose  Tab take  Esc close"),
        "{screen}"
    );
    insta::assert_snapshot!("slash_popup_open_120", h.screen(120, 30).backend());
    insta::assert_snapshot!("slash_popup_open_60", h.screen(60, 20).backend());
}

#[test]
fn the_command_popup_filters_prefix_first_and_completes_the_choice() {
    let mut h = Harness::new();
    h.tap_text("/c");
    // Starts with c, then contains it.
    assert_eq!(
        h.choices(),
        strings(&["/cancel", "/clear", "/compact", "/mcp"])
    );
    insta::assert_snapshot!("slash_popup_filtered_120", h.screen(120, 30).backend());
    insta::assert_snapshot!("slash_popup_filtered_60", h.screen(60, 20).backend());
    h.tap_text("l");
    // Starts with cl, then cl in order (fuzzy).
    assert_eq!(h.choices(), strings(&["/clear", "/cancel"]));
    h.tap(KeyCode::Backspace);
    h.tap(KeyCode::Down);
    h.tap(KeyCode::Down);
    assert_eq!(h.selected(), Some(2));
    h.tap(KeyCode::Up);
    assert_eq!(h.selected(), Some(1));
    h.tap(KeyCode::Tab);
    assert_eq!(h.app.composer_text(), "/clear");
    assert_eq!(
        h.app.focus(),
        Focus::Chat,
        "Tab completed, the focus stayed"
    );
    assert_eq!(h.choices(), strings(&["/clear"]));
    insta::assert_snapshot!("slash_popup_completed_120", h.screen(120, 30).backend());
    insta::assert_snapshot!("slash_popup_completed_60", h.screen(60, 20).backend());
    // A whole command that takes no argument runs on Enter, as before.
    assert_eq!(h.tap(KeyCode::Enter), [Command::Op(Op::Clear)]);
    assert!(h.text(120, 30).contains("New conversation."));
    assert_eq!(h.app.popup(), None);
    // Up from the first choice goes round to the last.
    h.tap_text("/");
    h.tap(KeyCode::Up);
    assert_eq!(h.selected(), Some(COMMANDS.len() - 1));
}

#[test]
fn enter_completes_a_partial_command_and_runs_a_whole_one() {
    let mut h = Harness::new();
    h.tap_text("/he");
    assert_eq!(h.tap(KeyCode::Enter), []);
    assert_eq!(h.app.composer_text(), "/help");
    assert!(!h.app.help_open(), "completed, not run");
    h.tap(KeyCode::Enter);
    assert!(h.app.help_open());
    h.tap(KeyCode::Esc);
    // A command that needs an argument completes with a blank, and the popup closes.
    h.tap_text("/tool");
    assert_eq!(h.choices()[0], "/tool", "the exact name first");
    h.tap(KeyCode::Enter);
    assert_eq!(h.app.composer_text(), "/tool ");
    assert_eq!(h.app.popup(), None);
    // Nothing matches: Enter sends as before, and the command is unknown.
    h.ctrl('u');
    h.tap_text("/zz");
    assert_eq!(h.choices(), Vec::<String>::new());
    assert!(
        h.text(120, 30)
            .contains("no command starts with or contains /zz")
    );
    h.tap(KeyCode::Enter);
    assert!(h.text(120, 30).contains("unknown command"));
}

#[test]
fn esc_closes_the_popup_and_keeps_the_draft() {
    let mut h = Harness::new();
    h.tap_text("/st");
    assert!(h.app.popup().is_some());
    assert_eq!(h.tap(KeyCode::Esc), [], "Esc only closed the popup");
    assert_eq!(h.app.popup(), None);
    assert_eq!(h.app.composer_text(), "/st");
    h.tap_text("a");
    assert_eq!(h.app.popup(), None, "closed for this word");
    // Tab still completes the old way.
    h.tap(KeyCode::Tab);
    assert_eq!(h.app.composer_text(), "/status");
    h.ctrl('u');
    h.tap_text("/");
    assert!(h.app.popup().is_some(), "a new command opens it again");
}

#[test]
fn help_lists_the_commands_of_the_one_table() {
    // Wide enough that no description wraps.
    let lines = Help::lines(&Theme::default(), 200);
    let text: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    for command in COMMANDS {
        assert!(
            text.iter()
                .any(|l| l.contains(command.name) && l.contains(command.about)),
            "{} in the help:\n{}",
            command.name,
            text.join("\n")
        );
    }
}

/// A workspace with nested files, some ignored, some in places never listed.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in [
        ("src/main.rs", "fn main() {}\n"),
        ("src/domain/remains.rs", "// remains\n"),
        ("src/tui/mod.rs", "mod app;\n"),
        ("docs/maintenance.md", "# Maintenance\n"),
        (".gitignore", "ignored/\n*.log\n"),
        ("ignored/main_ignored.rs", "x\n"),
        ("main.log", "x\n"),
        (".git/main.txt", "x\n"),
        ("target/main.rs", "x\n"),
        ("node_modules/main/index.js", "x\n"),
    ] {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

#[test]
fn at_opens_a_fuzzy_finder_over_the_workspace_files() {
    let dir = workspace();
    let mut h = Harness::in_dir(dir.path());
    h.tap_text("see @");
    h.files_listed();
    assert_eq!(h.app.popup().map(|p| p.0), Some(PopupKind::File));
    // Ignored files, .git, target and node_modules are not listed; shortest paths first.
    assert_eq!(
        h.choices(),
        strings(&[
            "src/main.rs",
            "src/tui/mod.rs",
            "docs/maintenance.md",
            "src/domain/remains.rs",
        ])
    );
    h.tap_text("main");
    // The file name matched at a word start, then in a file name, then inside one.
    assert_eq!(
        h.choices(),
        strings(&[
            "src/main.rs",
            "docs/maintenance.md",
            "src/domain/remains.rs"
        ])
    );
    // The welcome line names the temporary directory.
    h.app.chat.clear();
    insta::assert_snapshot!("file_finder_120", h.screen(120, 30).backend());
    insta::assert_snapshot!("file_finder_60", h.screen(60, 20).backend());
    h.tap(KeyCode::Down);
    h.tap(KeyCode::Tab);
    assert_eq!(h.app.composer_text(), "see @docs/maintenance.md ");
    assert_eq!(h.app.popup(), None, "the path is done: the finder closed");
    // Enter inserts too (nothing is sent), and Esc closes the finder, the draft kept.
    h.tap_text("and @tmod");
    assert_eq!(h.choices()[0], "src/tui/mod.rs");
    assert_eq!(h.tap(KeyCode::Enter), []);
    assert_eq!(
        h.app.composer_text(),
        "see @docs/maintenance.md and @src/tui/mod.rs "
    );
    h.tap_text("@x");
    h.tap(KeyCode::Esc);
    assert_eq!(h.app.popup(), None);
    assert!(h.app.composer_text().ends_with("@x"));
}

#[test]
fn a_mentioned_file_is_sent_with_the_message_and_shows_as_a_chip() {
    let dir = workspace();
    let mut h = Harness::in_dir(dir.path());
    let sent = h.send("explain @src/main.rs please");
    assert_eq!(
        sent,
        "explain @src/main.rs please\n\n<file path=\"src/main.rs\" size=\"13 B\">\n```rs\nfn main() {}\n```\n</file>"
    );
    let screen = h.text(120, 30);
    assert!(
        screen.contains("› explain [@src/main.rs · 13 B] please"),
        "{screen}"
    );
    assert!(!screen.contains("fn main()"), "{screen}");
    h.ctrl('o');
    assert!(h.text(120, 40).contains("fn main() {}"), "Ctrl-O shows it");
    h.ctrl('o');
    h.run();
    // The history keeps the mention, not the file.
    h.tap(KeyCode::Up);
    assert_eq!(h.app.composer_text(), "explain @src/main.rs please");
    // Trailing punctuation is not part of the path; a path that is not there is just text.
    h.ctrl('u');
    let sent = h.send("see @src/main.rs, not @nothing/here");
    assert!(sent.starts_with("see @src/main.rs, not @nothing/here\n\n<file path=\"src/main.rs\""));
    assert_eq!(sent.matches("<file ").count(), 1);
    let screen = h.text(120, 30);
    assert!(
        screen.contains("› see [@src/main.rs · 13 B], not @nothing/here"),
        "{screen}"
    );
}

#[test]
fn a_queued_message_keeps_its_chips_until_its_turn() {
    let dir = workspace();
    let mut h = Harness::in_dir(dir.path());
    h.tap_text("first");
    h.tap(KeyCode::Enter);
    h.start_run();
    h.tap_text("then @src/main.rs");
    assert_eq!(h.tap(KeyCode::Enter), []);
    let commands = h.finish_run();
    let [Command::Op(Op::Submit(sent))] = commands.as_slice() else {
        panic!("the queued message was not sent");
    };
    assert!(sent.contains("fn main() {}"));
    assert!(h.text(120, 30).contains("› then [@src/main.rs · 13 B]"));
}

#[test]
fn attachments_are_capped_and_what_is_refused_is_said() {
    let outer = tempfile::tempdir().unwrap();
    let ws = outer.path().join("ws");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(ws.join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(outer.path().join("secret.txt"), "OUTSIDE-SECRET\n").unwrap();
    let line = "a".repeat(1023) + "\n";
    std::fs::write(ws.join("huge.txt"), line.repeat(100)).unwrap();
    std::fs::write(ws.join("blob.bin"), b"\x7fELF\0\0\x01binary").unwrap();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("../secret.txt", ws.join("out.txt")).unwrap();
        std::os::unix::fs::symlink("src/main.rs", ws.join("in.rs")).unwrap();
    }
    let mut h = Harness::in_dir(&ws);
    let sent = h.send("@huge.txt @blob.bin @../secret.txt @out.txt @src @in.rs");
    // The huge file is cut, with a note the model sees.
    let block = sent.split("<file ").nth(1).unwrap();
    assert!(block.starts_with("path=\"huge.txt\" size=\"100.0 KB\" cut=\"64.0 KB\">"));
    assert!(block.contains("(cut: only the first 64.0 KB of 100.0 KB are attached)"));
    assert_eq!(block.matches(&line).count(), 64, "64 KiB of content");
    // A symlink that stays inside is followed; nothing from outside is sent.
    assert!(
        sent.contains("<file path=\"in.rs\" size=\"13 B\">"),
        "{sent}"
    );
    assert!(!sent.contains("OUTSIDE-SECRET"));
    assert!(!sent.contains("ELF"));
    assert_eq!(sent.matches("<file ").count(), 2);
    let screen = h.text(160, 60);
    for said in [
        "› [@huge.txt · 100.0 KB · cut to 64.0 KB] @blob.bin @../secret.txt @out.txt",
        "@src [@in.rs · 13 B]",
        "@huge.txt is 100.0 KB: only its first 64.0 KB are attached.",
        "@blob.bin was not attached: it is a binary file (13 B); only text is",
        "@../secret.txt was not attached: path '../secret.txt' is outside the",
        "@out.txt was not attached: path 'out.txt' is outside the workspace",
        "the symlink 'out.txt' leads out of it.",
        "@src was not attached: it is a directory; only files are attached.",
    ] {
        assert!(screen.contains(said), "{said}:\n{screen}");
    }
}

#[test]
fn a_message_carries_at_most_256_kib_of_files() {
    let dir = tempfile::tempdir().unwrap();
    for i in 1..=5 {
        std::fs::write(dir.path().join(format!("f{i}.txt")), "x".repeat(64 * 1024)).unwrap();
    }
    let mut h = Harness::in_dir(dir.path());
    let sent = h.send("@f1.txt @f2.txt @f3.txt @f4.txt @f5.txt");
    assert_eq!(sent.matches("<file ").count(), 4);
    assert!(!sent.contains("path=\"f5.txt\""));
    assert_eq!(sent.matches(&"x".repeat(64 * 1024)).count(), 4);
    let screen = h.text(160, 40);
    assert!(
        screen.contains("@f5.txt was not attached: the message already carries 256.0 KB of files."),
        "{screen}"
    );
}

#[test]
fn a_resumed_session_shows_attachments_as_chips() {
    let dir = workspace();
    let mut h = Harness::in_dir(dir.path());
    let sent = h.send("explain @src/main.rs");
    let mut resumed = Harness::new();
    let now = resumed.now();
    resumed
        .app
        .replay(&[Entry::Message(Message::user(sent))], now);
    let screen = resumed.text(120, 30);
    assert!(
        screen.contains("› explain [@src/main.rs · 13 B]"),
        "{screen}"
    );
    assert!(!screen.contains("fn main()"), "{screen}");
}

#[tokio::test]
async fn an_attached_key_is_redacted_before_the_model_sees_it() {
    use support::scripted::{Scripted, registry, settings, text};
    use taco::orchestrator::Orchestrator;
    use taco::tools::ToolSettings;
    let key = "sk-live-abcdef0123456789";
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("env.txt"),
        format!("OPENAI_API_KEY={key}\n"),
    )
    .unwrap();
    let mut h = Harness::in_dir(dir.path());
    let sent = h.send("why does @env.txt fail?");
    assert!(sent.contains(key), "the composer sends what the file holds");
    // The orchestrator redacts the prompt, files included, like everything the model sees.
    let provider = Scripted::new(vec![Ok(text("ok"))]);
    let mut config = settings(1);
    config.tools = Arc::new(ToolSettings {
        secrets: Arc::new(Secrets::new([key.to_string()])),
        ..ToolSettings::default()
    });
    let mut orch = Orchestrator::new(provider.clone(), Arc::new(registry().0), config);
    let mut events = Vec::new();
    support::scripted::headless(&mut orch, &sent, &mut events).await;
    let user = provider.sent()[0].messages.last().unwrap().clone();
    let content = user.content.unwrap();
    assert!(content.contains("<file path=\"env.txt\""), "{content}");
    assert!(!content.contains(key), "{content}");
}
