//! The TUI's app state driven by events and keys, without a terminal, and snapshots of whole
//! screens rendered into ratatui's TestBackend.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseEvent, MouseEventKind};
use serde_json::json;
use taco::conversation::ToolCall;
use taco::conversation::Usage;
use taco::event::{
    DeltaKind, Event, EventData, FrameState, InputKind, InputRequest, LlmCall, Scope, StackFrame,
};
use taco::orchestrator::approval::ApprovalAnswer;
use taco::orchestrator::task::Op;
use taco::tui::app::{App, AppInfo, Command};
use taco::tui::commands::ToolInfo;
use taco::tui::layout::Focus;
use taco::tui::views::status::Activity;

fn info() -> AppInfo {
    AppInfo {
        provider: "demo".into(),
        model: "demo".into(),
        auto_reason: Some("no API key in the environment and no local Ollama".into()),
        max_turns: 10,
        workdir: "/work/project".into(),
        tools: vec![
            ToolInfo {
                name: "read_file".into(),
                description: "Read a file. More text.".into(),
                schema: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
                policy: "allow".into(),
                usage: Some("Read before you write.".into()),
            },
            ToolInfo {
                name: "shell".into(),
                description: "Run a command.".into(),
                schema: json!({"type": "object"}),
                policy: "ask".into(),
                usage: None,
            },
        ],
        dialog_guard: GUARD,
        ..Default::default()
    }
}

/// The default quiet before a dialog takes keys by itself (`config::DIALOG_QUIET_MS`).
const GUARD: Duration = Duration::from_millis(2000);

struct Harness {
    app: App,
    t0: Instant,
    ms: u64,
    request: Arc<str>,
}

impl Harness {
    fn new() -> Self {
        let t0 = Instant::now();
        Self {
            app: App::new(info(), t0),
            t0,
            ms: 0,
            request: Arc::from("run-1"),
        }
    }

    /// Dialogs take keys at once (`dialog_guard_ms = 0`): snapshots of a ready dialog
    /// without walking the clock, which would move every elapsed time on screen.
    fn unguarded() -> Self {
        let t0 = Instant::now();
        let info = AppInfo {
            dialog_guard: Duration::ZERO,
            mcp: None,
            ..info()
        };
        Self {
            app: App::new(info, t0),
            t0,
            ms: 0,
            request: Arc::from("run-1"),
        }
    }

    fn now(&self) -> Instant {
        self.t0 + Duration::from_millis(self.ms)
    }

    fn event(&mut self, data: EventData) -> Vec<Command> {
        self.ms += 10;
        let event = Event {
            timestamp: 1_700_000_000_000 + self.ms,
            request_id: self.request.clone(),
            data,
        };
        let now = self.now();
        self.app.on_event(&event, now)
    }

    fn key(&mut self, code: KeyCode) -> Vec<Command> {
        self.key_with(code, KeyModifiers::NONE)
    }

    fn key_with(&mut self, code: KeyCode, modifiers: KeyModifiers) -> Vec<Command> {
        let now = self.now();
        self.app.on_key(KeyEvent::new(code, modifiers), now)
    }

    fn type_text(&mut self, text: &str) {
        for c in text.chars() {
            self.key(KeyCode::Char(c));
        }
    }

    /// The user stops and reads the dialog: long past its quiet, and with Tab where it
    /// waits for one (it takes text), so its keys answer.
    fn look(&mut self) {
        self.ms += 2500;
        if self.app.dialog_gate(self.now()).holds() {
            self.key(KeyCode::Tab);
        }
        assert!(
            !self.app.dialog_gate(self.now()).holds(),
            "the dialog takes keys"
        );
    }

    /// A letter, then Enter: a deliberate answer.
    fn answer(&mut self, letter: char) -> Vec<Command> {
        assert_eq!(self.key(KeyCode::Char(letter)), [], "{letter} only picks");
        self.key(KeyCode::Enter)
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

    fn ask(
        &mut self,
        id: &str,
        name: &str,
        arguments: serde_json::Value,
        position: usize,
        of: usize,
    ) {
        self.event(EventData::ToolCall {
            turn: 1,
            id: id.into(),
            name: name.into(),
            arguments: arguments.clone(),
            parent: None,
            sandbox: None,
        });
        self.event(EventData::StackPush(StackFrame {
            id: id.into(),
            parent: None,
            name: name.into(),
            summary: "x".into(),
            state: FrameState::AwaitingApproval,
        }));
        self.event(EventData::ApprovalRequested {
            id: id.into(),
            name: name.into(),
            arguments,
            position,
            of,
            note: None,
            diff: None,
            sandbox: None,
        });
    }

    fn screen(&mut self, width: u16, height: u16) -> Terminal<TestBackend> {
        let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
        let now = self.now();
        terminal
            .draw(|f| self.app.render(f.area(), f.buffer_mut(), now))
            .unwrap();
        terminal
    }
}

fn approve(id: &str, answer: ApprovalAnswer) -> Command {
    Command::Op(Op::Approve {
        id: id.into(),
        answer,
    })
}

#[test]
fn enter_submits_and_a_prompt_typed_while_running_is_queued_until_the_end() {
    let mut h = Harness::new();
    h.type_text("list files");
    assert_eq!(
        h.key(KeyCode::Enter),
        [Command::Op(Op::Submit("list files".into()))]
    );
    assert!(h.app.is_busy());
    assert_eq!(h.app.composer_text(), "");
    h.start_run();
    h.type_text("and then this");
    assert_eq!(
        h.key(KeyCode::Enter),
        [],
        "nothing is sent while a request runs"
    );
    assert_eq!(h.app.queued().collect::<Vec<_>>(), ["and then this"]);
    let after = h.event(EventData::Final {
        content: "done".into(),
        turns: 1,
        usage: Usage::default(),
    });
    assert_eq!(after, [Command::Op(Op::Submit("and then this".into()))]);
    assert_eq!(h.app.queued().count(), 0);
    assert!(h.app.is_busy());
}

#[test]
fn each_approval_key_sends_the_right_decision_and_scope() {
    for (key, answer) in [
        ('y', ApprovalAnswer::approve(Scope::Once)),
        ('t', ApprovalAnswer::approve(Scope::Turn)),
        ('a', ApprovalAnswer::approve(Scope::Session)),
    ] {
        let mut h = Harness::new();
        h.start_run();
        h.ask("c1", "shell", json!({"command": "ls"}), 1, 1);
        assert!(h.app.approval_open());
        assert_eq!(h.app.activity(), Activity::AwaitingApproval);
        h.look();
        assert_eq!(h.answer(key), [approve("c1", answer)], "key {key}");
        assert!(!h.app.approval_open());
    }
    // n, then a reason, then Enter.
    let mut h = Harness::new();
    h.start_run();
    h.ask("c1", "shell", json!({"command": "rm -rf /"}), 1, 1);
    h.look();
    assert_eq!(h.answer('n'), []);
    h.type_text("too risky");
    assert_eq!(
        h.key(KeyCode::Enter),
        [approve(
            "c1",
            ApprovalAnswer::deny(Some("too risky".into()))
        )]
    );
    // Esc denies without a reason.
    h.ask("c2", "shell", json!({"command": "ls"}), 1, 1);
    h.look();
    assert_eq!(
        h.key(KeyCode::Esc),
        [approve("c2", ApprovalAnswer::deny(None))]
    );
}

#[test]
fn the_dialog_takes_letters_but_the_timeline_stays_navigable() {
    let mut h = Harness::new();
    h.start_run();
    h.ask("c1", "shell", json!({"command": "ls"}), 1, 2);
    h.ask("c2", "write_file", json!({"path": "a"}), 2, 2);
    h.look();
    h.key(KeyCode::Char('x'));
    assert_eq!(
        h.app.composer_text(),
        "x",
        "a letter that answers nothing is typing: it goes to the composer"
    );
    assert!(
        h.app.dialog_gate(h.now()).holds(),
        "and the dialog steps back"
    );
    h.key(KeyCode::Backspace);
    h.key(KeyCode::Tab);
    assert!(!h.app.dialog_gate(h.now()).holds(), "Tab moves to it");
    h.key(KeyCode::Tab);
    h.key(KeyCode::Tab);
    assert_eq!(h.app.focus(), Focus::Timeline);
    assert_eq!(h.key(KeyCode::Up), [], "the timeline takes its keys");
    assert_eq!(h.key(KeyCode::Char('y')), [], "y picks");
    assert_eq!(
        h.key(KeyCode::Enter),
        [approve("c1", ApprovalAnswer::approve(Scope::Once))],
        "Enter carries it out, not the timeline's row"
    );
    assert!(h.app.approval_open(), "call 2 of 2 is next");
    assert!(
        !h.app.dialog_gate(h.now()).holds(),
        "the next call follows on from the one just answered"
    );
    assert_eq!(
        h.answer('y'),
        [approve("c2", ApprovalAnswer::approve(Scope::Once))]
    );
}

#[test]
fn esc_and_ctrl_c_cancel_and_a_second_ctrl_c_quits() {
    let mut h = Harness::new();
    h.type_text("go");
    h.key(KeyCode::Enter);
    h.start_run();
    assert_eq!(h.key(KeyCode::Esc), [Command::Op(Op::Cancel)]);
    assert_eq!(
        h.key_with(KeyCode::Char('c'), KeyModifiers::CONTROL),
        [Command::Op(Op::Cancel)]
    );
    assert_eq!(
        h.key_with(KeyCode::Char('c'), KeyModifiers::CONTROL),
        [Command::Quit]
    );
    assert!(h.app.should_quit());

    // Idle: the first Ctrl-C only warns; one after the window does not quit either.
    let mut h = Harness::new();
    assert_eq!(h.key_with(KeyCode::Char('c'), KeyModifiers::CONTROL), []);
    h.ms += 2500;
    assert_eq!(h.key_with(KeyCode::Char('c'), KeyModifiers::CONTROL), []);
    assert_eq!(
        h.key_with(KeyCode::Char('c'), KeyModifiers::CONTROL),
        [Command::Quit]
    );
    // Esc when idle sends nothing.
    let mut h = Harness::new();
    assert_eq!(h.key(KeyCode::Esc), []);
}

#[test]
fn cancelled_ends_the_run_and_clears_the_dialog() {
    let mut h = Harness::new();
    h.start_run();
    h.ask("c1", "shell", json!({"command": "ls"}), 1, 1);
    h.event(EventData::Cancelled {
        running: "tool calls".into(),
    });
    assert!(!h.app.is_busy());
    assert!(!h.app.approval_open());
    assert_eq!(h.app.activity(), Activity::Idle);
}

#[test]
fn tab_cycles_focus_and_completes_commands() {
    let mut h = Harness::new();
    assert_eq!(h.app.focus(), Focus::Chat);
    h.key(KeyCode::Tab);
    assert_eq!(h.app.focus(), Focus::Stack);
    h.key(KeyCode::Tab);
    assert_eq!(h.app.focus(), Focus::Timeline);
    h.key(KeyCode::BackTab);
    assert_eq!(h.app.focus(), Focus::Stack);
    h.key(KeyCode::Tab);
    h.key(KeyCode::Tab);
    assert_eq!(h.app.focus(), Focus::Chat);
    h.type_text("/he");
    h.key(KeyCode::Tab);
    assert_eq!(h.app.composer_text(), "/help");
    assert_eq!(
        h.app.focus(),
        Focus::Chat,
        "Tab completed instead of moving focus"
    );
    h.key(KeyCode::Enter);
    assert!(h.app.help_open());
    h.key(KeyCode::Esc);
    assert!(!h.app.help_open());
    h.key(KeyCode::Char('?'));
    assert!(h.app.help_open(), "? on an empty composer opens help");
}

#[test]
fn slash_commands_answer_in_the_chat() {
    let mut h = Harness::new();
    h.type_text("/quit");
    assert_eq!(h.key(KeyCode::Enter), [Command::Quit]);
    let mut h = Harness::new();
    h.type_text("/clear");
    assert_eq!(h.key(KeyCode::Enter), [Command::Op(Op::Clear)]);
    h.type_text("/cancel");
    assert_eq!(h.key(KeyCode::Enter), [], "nothing to cancel");
    h.type_text("/tools");
    h.key(KeyCode::Enter);
    let view = format!("{}", h.screen(120, 80).backend());
    assert!(view.contains("/tools · grants, rules, tools"), "{view}");
    h.key(KeyCode::Esc);
    h.type_text("/tool read_file");
    h.key(KeyCode::Enter);
    h.type_text("/status");
    h.key(KeyCode::Enter);
    h.type_text("/bogus");
    h.key(KeyCode::Enter);
    let screen = format!("{}", h.screen(120, 80).backend());
    assert!(
        screen.contains("read_file") && screen.contains("(allow)"),
        "{screen}"
    );
    assert!(screen.contains("\"path\""), "the schema is shown: {screen}");
    assert!(screen.contains("Tool stack: empty"), "{screen}");
    assert!(screen.contains("unknown command"), "{screen}");
}

#[test]
fn scrolling_up_stops_following_and_end_resumes() {
    let mut h = Harness::new();
    h.start_run();
    for i in 0..200 {
        h.event(EventData::Delta {
            kind: DeltaKind::Text,
            text: format!("line {i}\n\n"),
        });
    }
    h.screen(100, 30);
    assert!(h.app.chat.is_following());
    h.key(KeyCode::PageUp);
    assert!(!h.app.chat.is_following());
    h.app.on_mouse(MouseEvent {
        kind: MouseEventKind::ScrollUp,
        column: 5,
        row: 5,
        modifiers: KeyModifiers::NONE,
    });
    h.event(EventData::Delta {
        kind: DeltaKind::Text,
        text: "more\n".into(),
    });
    assert!(
        !h.app.chat.is_following(),
        "new text does not pull the view down"
    );
    h.key(KeyCode::End);
    assert!(h.app.chat.is_following());
}

#[test]
fn snapshot_empty_start_screen() {
    let mut h = Harness::new();
    insta::assert_snapshot!(h.screen(160, 30).backend());
}

/// Instructions found in a real repository, shown in the welcome line and by `/status`.
#[test]
fn snapshot_welcome_names_the_project_instruction_files() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().canonicalize().unwrap();
    let work = repo.join("app");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir(&work).unwrap();
    std::fs::write(repo.join("AGENTS.md"), "Use tabs.\n").unwrap();
    // A directory named AGENTS.md is passed over (with a note) for CLAUDE.md, which is cut.
    std::fs::create_dir(work.join("AGENTS.md")).unwrap();
    std::fs::write(work.join("CLAUDE.md"), "x\n".repeat(20_000)).unwrap();
    let names: Vec<String> = taco::instructions::DEFAULT_NAMES
        .iter()
        .map(|n| n.to_string())
        .collect();
    let instructions = taco::instructions::load(&work, &names);
    let t0 = Instant::now();
    let mut h = Harness {
        app: App::new(
            AppInfo {
                instructions,
                ..info()
            },
            t0,
        ),
        t0,
        ms: 0,
        request: Arc::from("run-1"),
    };
    insta::assert_snapshot!(h.screen(160, 30).backend());

    h.type_text("/status");
    h.key(KeyCode::Enter);
    let screen = format!("{}", h.screen(240, 40).backend());
    let lines: Vec<&str> = screen
        .lines()
        .filter(|l| l.contains("Project instructions:"))
        .collect();
    assert_eq!(lines.len(), 2, "the welcome line and /status: {screen}");
    assert!(
        lines[1].contains(
            "Project instructions: ../AGENTS.md, CLAUDE.md (cut to 32.0 KiB of 39.1 KiB). AGENTS.md was not read"
        ),
        "{screen}"
    );
}

#[test]
fn snapshot_approval_dialog_with_long_arguments() {
    let mut h = Harness::unguarded();
    h.type_text("write the config");
    h.key(KeyCode::Enter);
    h.start_run();
    h.event(EventData::Delta {
        kind: DeltaKind::Text,
        text: "I'll write the new config file now.".into(),
    });
    let content: String = (1..=40).map(|i| format!("setting_{i} = {i}\n")).collect();
    h.ask(
        "c1",
        "write_file",
        json!({"path": "config/settings.toml", "content": content}),
        1,
        2,
    );
    h.ask("c2", "shell", json!({"command": "cargo test"}), 2, 2);
    insta::assert_snapshot!(h.screen(150, 36).backend());
}

#[test]
fn snapshot_help_screen() {
    let mut h = Harness::new();
    h.key(KeyCode::Char('?'));
    insta::assert_snapshot!(h.screen(100, 44).backend());
}

#[test]
fn snapshot_narrow_layout_shows_one_pane_and_tab_switches() {
    let mut h = Harness::new();
    h.type_text("hello");
    h.key(KeyCode::Enter);
    h.start_run();
    h.event(EventData::Delta {
        kind: DeltaKind::Text,
        text: "Hi! Let me look.".into(),
    });
    h.event(EventData::LlmCall(Box::new(LlmCall {
        turn: 1,
        model: "demo".into(),
        duration_ms: 120,
        ttft_ms: Some(20),
        finish_reason: Some("tool_calls".into()),
        content: "Hi! Let me look.".into(),
        reasoning_content: None,
        tool_calls: vec![],
        usage: Usage {
            input_tokens: 12,
            output_tokens: 5,
            cached_tokens: 0,
        },
        timings: None,
        message_count: 2,
        new_messages: vec![],
        tools: vec![],
        parent: None,
        omitted: 0,
        context_window: None,
        call: None,
        purpose: None,
    })));
    insta::assert_snapshot!("narrow_chat", h.screen(70, 20).backend());
    h.key(KeyCode::Tab);
    h.key(KeyCode::Tab);
    insta::assert_snapshot!("narrow_timeline", h.screen(70, 20).backend());
}

#[test]
fn any_size_renders_without_panicking() {
    let mut h = Harness::new();
    h.type_text("x");
    h.key(KeyCode::Enter);
    h.start_run();
    h.ask("c1", "shell", json!({"command": "ls"}), 1, 1);
    for w in [0, 1, 5, 20, 40, 79, 80, 139, 140, 250] {
        for ht in [0, 1, 2, 5, 10, 40] {
            h.screen(w, ht);
        }
    }
}

// ── Nested calls, sub-agents and questions ────────────────────────────────────────────────

fn answer(id: &str, value: Option<&str>) -> Command {
    Command::Op(Op::Answer {
        id: id.into(),
        value: value.map(Into::into),
    })
}

fn llm_call(turn: u32, parent: Option<&str>, content: &str, calls: &[(&str, &str)]) -> EventData {
    EventData::LlmCall(Box::new(LlmCall {
        turn,
        model: "demo".into(),
        duration_ms: 40,
        ttft_ms: Some(10),
        finish_reason: Some(
            if calls.is_empty() {
                "stop"
            } else {
                "tool_calls"
            }
            .into(),
        ),
        content: content.into(),
        reasoning_content: None,
        tool_calls: calls
            .iter()
            .map(|(id, name)| ToolCall {
                id: (*id).into(),
                name: (*name).into(),
                arguments: json!({}),
            })
            .collect(),
        usage: Usage {
            input_tokens: 100,
            output_tokens: 10,
            cached_tokens: 0,
        },
        timings: None,
        message_count: 2,
        new_messages: vec![],
        tools: vec![],
        parent: parent.map(Into::into),
        omitted: 0,
        context_window: None,
        call: None,
        purpose: None,
    }))
}

fn frame(
    id: &str,
    parent: Option<&str>,
    name: &str,
    summary: &str,
    state: FrameState,
) -> StackFrame {
    StackFrame {
        id: id.into(),
        parent: parent.map(Into::into),
        name: name.into(),
        summary: summary.into(),
        state,
    }
}

impl Harness {
    /// A tool call and its running frame.
    fn call(
        &mut self,
        id: &str,
        parent: Option<&str>,
        name: &str,
        arguments: serde_json::Value,
        summary: &str,
    ) {
        self.event(EventData::ToolCall {
            turn: 1,
            id: id.into(),
            name: name.into(),
            arguments,
            parent: parent.map(Into::into),
            sandbox: None,
        });
        self.event(EventData::StackPush(frame(
            id,
            parent,
            name,
            summary,
            FrameState::Running,
        )));
    }

    fn finish(&mut self, id: &str, parent: Option<&str>, name: &str, summary: &str, ms: u64) {
        self.event(EventData::ToolResult {
            id: id.into(),
            name: name.into(),
            ok: true,
            status: Some(taco::event::ToolStatus::Ok),
            denied_by: None,
            result: Some(json!("ok")),
            error: None,
            duration_ms: ms,
        });
        self.event(EventData::StackPop(frame(
            id,
            parent,
            name,
            summary,
            FrameState::Done,
        )));
    }

    /// `edit_file` also needs a `write_file`, whose `path` is missing: a parameter question.
    fn ask_parameter(&mut self, id: &str) {
        self.call(
            "call_2/call_2",
            Some("call_2"),
            "write_file",
            json!({"content": "# taco\n"}),
            "content=# taco",
        );
        self.event(EventData::StackPush(frame(
            "call_2/call_2/collect",
            Some("call_2/call_2"),
            "collect_tool_parameters",
            "path",
            FrameState::AwaitingInput,
        )));
        self.event(EventData::InputRequested(InputRequest {
            id: id.into(),
            kind: InputKind::Parameter,
            frame: "call_2/call_2/collect".into(),
            tool: "write_file".into(),
            prompt: "write_file needs a value for `path` to go on.".into(),
            parameter: Some("path".into()),
            description: Some("Where to write, relative to the workspace.".into()),
            value_type: Some("string".into()),
            depth: None,
            form: None,
        }));
    }

    fn ask_depth(&mut self, id: &str) {
        self.event(EventData::InputRequested(InputRequest {
            id: id.into(),
            kind: InputKind::DepthLimit,
            frame: "call_1/call_1".into(),
            tool: "read_file".into(),
            prompt: "The tool stack reached its depth limit (2). Continue for another 20 levels?"
                .into(),
            parameter: None,
            description: None,
            value_type: None,
            depth: Some(2),
            form: None,
        }));
    }

    /// Moves the clock to the middle of a spinner frame, so chat spinners (phased by real
    /// time) and stack clocks (by this clock) render the same on every run.
    fn settle(&mut self) {
        self.ms = (self.ms / 100 + 1) * 100 + 50;
    }
}

/// A request whose model delegates a survey to a sub-agent (which reads two files, one
/// still running) and edits the README, which first runs a needed `read_file`.
fn nested_run(h: &mut Harness) {
    h.type_text("survey the repo and fix the README");
    h.key(KeyCode::Enter);
    h.start_run();
    let lead = "I'll hand the survey to a sub-agent and fix the README myself.";
    h.event(EventData::Delta {
        kind: DeltaKind::Text,
        text: lead.into(),
    });
    h.event(llm_call(
        1,
        None,
        lead,
        &[("call_1", "delegate"), ("call_2", "edit_file")],
    ));
    h.call(
        "call_1",
        None,
        "delegate",
        json!({"task": "Survey the repository layout and list the binaries", "tools": ["read_file"]}),
        "task=Survey the repository layout…",
    );
    h.call(
        "call_2",
        None,
        "edit_file",
        json!({"path": "README.md", "instructions": "fix the install section"}),
        "path=README.md",
    );
    h.event(llm_call(
        1,
        Some("call_1"),
        "Let me read the manifest.",
        &[("call_1", "read_file")],
    ));
    h.call(
        "call_1/call_1",
        Some("call_1"),
        "read_file",
        json!({"path": "Cargo.toml"}),
        "path=Cargo.toml",
    );
    h.finish(
        "call_1/call_1",
        Some("call_1"),
        "read_file",
        "path=Cargo.toml",
        3,
    );
    h.event(llm_call(2, Some("call_1"), "", &[("call_2", "read_file")]));
    h.call(
        "call_1/call_2",
        Some("call_1"),
        "read_file",
        json!({"path": "src/main.rs"}),
        "path=src/main.rs",
    );
    h.call(
        "call_2/call_1",
        Some("call_2"),
        "read_file",
        json!({"path": "README.md"}),
        "path=README.md",
    );
}

#[test]
fn sub_agent_turns_leave_the_top_level_answer_and_turn_alone() {
    let mut h = Harness::new();
    nested_run(&mut h);
    assert_eq!(
        h.app.chat.last_assistant_text(),
        Some("I'll hand the survey to a sub-agent and fix the README myself."),
        "the approval dialog still quotes the top-level agent"
    );
    // The nested results do not end the top-level batch: only its own two calls do.
    h.finish(
        "call_1/call_2",
        Some("call_1"),
        "read_file",
        "path=src/main.rs",
        5,
    );
    h.finish(
        "call_2/call_1",
        Some("call_2"),
        "read_file",
        "path=README.md",
        5,
    );
    let status = format!("{}", h.screen(200, 30).backend());
    assert!(status.contains("turn 1/10"), "{status}");
    h.finish("call_1", None, "delegate", "task", 50);
    h.finish("call_2", None, "edit_file", "path=README.md", 50);
    let status = format!("{}", h.screen(200, 30).backend());
    assert!(status.contains("turn 2/10"), "{status}");
    assert!(
        status.contains("↑300 ↓30 tok"),
        "sub-agent tokens count: {status}"
    );
}

#[test]
fn a_parameter_answer_is_sent_on_enter() {
    let mut h = Harness::new();
    nested_run(&mut h);
    h.ask_parameter("q1");
    assert!(h.app.question_open());
    assert_eq!(h.app.activity(), Activity::AwaitingInput);
    h.look();
    h.type_text("docs/README.md");
    assert_eq!(
        h.app.composer_text(),
        "",
        "letters never reach the composer"
    );
    assert_eq!(
        h.key(KeyCode::Enter),
        [answer("q1", Some("docs/README.md"))]
    );
    assert!(!h.app.question_open());
}

#[test]
fn esc_abandons_a_parameter_question() {
    let mut h = Harness::new();
    nested_run(&mut h);
    h.ask_parameter("q1");
    h.look();
    h.type_text("half");
    assert_eq!(h.key(KeyCode::Esc), [answer("q1", None)]);
    assert!(
        h.app.is_busy(),
        "Esc answered the question; it did not cancel the run"
    );
}

#[test]
fn an_empty_enter_asks_to_continue() {
    let mut h = Harness::new();
    nested_run(&mut h);
    h.ask_parameter("q1");
    h.look();
    assert_eq!(h.key(KeyCode::Enter), []);
    assert!(h.app.question_confirming());
    assert_eq!(h.answer('y'), [], "y goes back to the question");
    assert!(h.app.question_open() && !h.app.question_confirming());
    h.type_text("a.md");
    assert_eq!(h.app.composer_text(), "");
    h.key_with(KeyCode::Char('u'), KeyModifiers::CONTROL);
    assert_eq!(h.key(KeyCode::Enter), []);
    assert_eq!(h.answer('n'), [answer("q1", None)]);
}

#[test]
fn depth_limit_y_continues_and_n_stops() {
    for (key, value) in [('y', Some("y")), ('n', None)] {
        let mut h = Harness::new();
        nested_run(&mut h);
        h.ask_depth("d1");
        h.look();
        assert_eq!(h.key(KeyCode::Char('x')), [], "another letter is typing");
        assert_eq!(h.app.composer_text(), "x");
        h.key(KeyCode::Backspace);
        h.key(KeyCode::Tab);
        assert_eq!(h.answer(key), [answer("d1", value)], "key {key}");
    }
    let mut h = Harness::new();
    nested_run(&mut h);
    h.ask_depth("d1");
    h.look();
    assert_eq!(h.key(KeyCode::Esc), [answer("d1", None)]);
}

#[test]
fn letters_reach_the_question_from_any_pane_and_paste_goes_in_on_one_line() {
    let mut h = Harness::new();
    nested_run(&mut h);
    h.ask_parameter("q1");
    h.look();
    h.key(KeyCode::Tab);
    h.key(KeyCode::Tab);
    assert_eq!(h.app.focus(), Focus::Timeline);
    h.type_text("docs/");
    assert_eq!(
        h.app.focus(),
        Focus::Chat,
        "typing brings the dialog back into focus"
    );
    h.app.on_paste("READ\nME.md", h.now());
    assert_eq!(h.app.composer_text(), "");
    assert_eq!(
        h.key(KeyCode::Enter),
        [answer("q1", Some("docs/READ ME.md"))]
    );
}

#[test]
fn the_question_closes_when_answered_and_when_the_run_ends() {
    let mut h = Harness::new();
    nested_run(&mut h);
    h.ask_parameter("q1");
    h.event(EventData::InputAnswered {
        id: "other".into(),
        value: None,
        form: None,
    });
    assert!(
        h.app.question_open(),
        "another question's answer does not close it"
    );
    h.event(EventData::InputAnswered {
        id: "q1".into(),
        value: Some("x".into()),
        form: None,
    });
    assert!(!h.app.question_open());
    assert_eq!(h.app.activity(), Activity::RunningTool);

    for end in [
        EventData::Cancelled {
            running: "tools".into(),
        },
        EventData::Error {
            kind: "http".into(),
            message: "boom".into(),
        },
        EventData::Final {
            content: "done".into(),
            turns: 1,
            usage: Usage::default(),
        },
    ] {
        let mut h = Harness::new();
        nested_run(&mut h);
        h.ask_depth("d1");
        h.event(end);
        assert!(!h.app.question_open());
        assert_eq!(h.app.activity(), Activity::Idle);
        h.type_text("next");
        assert_eq!(
            h.app.composer_text(),
            "next",
            "the composer takes keys again"
        );
    }
}

#[test]
fn status_shows_the_tree_depth_and_what_the_innermost_frame_waits_for() {
    let mut h = Harness::new();
    nested_run(&mut h);
    h.ask_parameter("q1");
    h.look();
    // Commands typed in the dialog run as commands; the question stays open.
    h.type_text("/status");
    assert_eq!(h.key(KeyCode::Enter), []);
    assert!(h.app.question_open());
    h.type_text("/tool read_file");
    assert_eq!(h.key(KeyCode::Enter), []);
    let screen = format!("{}", h.screen(200, 90).backend());
    assert!(screen.contains("nesting depth 3"), "{screen}");
    assert!(
        screen.contains("Original request: “survey the repo"),
        "{screen}"
    );
    assert!(screen.contains("• delegate task=Survey"), "{screen}");
    assert!(
        screen.contains("  ◦ read_file path=src/main.rs · running"),
        "{screen}"
    );
    assert!(
        screen.contains("collect_tool_parameters path · awaiting input"),
        "{screen}"
    );
    assert!(
        screen.contains("Innermost: collect_tool_parameters waits for your answer"),
        "{screen}"
    );
    assert!(screen.contains("Usage"), "{screen}");
    assert!(screen.contains("Read before you write."), "{screen}");
    // A path is an answer, not a command.
    h.type_text("/tmp/notes.md");
    assert_eq!(h.key(KeyCode::Enter), [answer("q1", Some("/tmp/notes.md"))]);
}

#[test]
fn snapshot_nested_stack() {
    let mut h = Harness::new();
    nested_run(&mut h);
    h.settle();
    insta::assert_snapshot!(h.screen(200, 30).backend());
}

#[test]
fn snapshot_parameter_question() {
    let mut h = Harness::unguarded();
    nested_run(&mut h);
    h.ask_parameter("q1");
    // A question that takes text waits for Tab.
    h.key(KeyCode::Tab);
    h.type_text("docs/READ");
    h.settle();
    insta::assert_snapshot!(h.screen(160, 34).backend());
}

#[test]
fn snapshot_continue_question() {
    let mut h = Harness::unguarded();
    nested_run(&mut h);
    h.ask_parameter("q1");
    h.key(KeyCode::Tab);
    h.key(KeyCode::Enter);
    h.settle();
    insta::assert_snapshot!(h.screen(160, 34).backend());
}

#[test]
fn snapshot_depth_limit_question() {
    let mut h = Harness::unguarded();
    nested_run(&mut h);
    h.ask_depth("d1");
    h.settle();
    insta::assert_snapshot!(h.screen(160, 34).backend());
}

#[test]
fn questions_render_at_any_size() {
    let mut h = Harness::new();
    nested_run(&mut h);
    h.ask_parameter("q1");
    h.ask_depth("d1");
    h.type_text("界界界界界界界界界界");
    for w in [0, 1, 5, 20, 40, 79, 80, 139, 140, 250] {
        for ht in [0, 1, 2, 5, 10, 40] {
            h.screen(w, ht);
        }
    }
    h.key(KeyCode::Enter);
    h.screen(30, 12);
    h.key(KeyCode::Char('y'));
    h.screen(30, 12);
    h.key(KeyCode::Enter);
    h.screen(30, 12);
}

// ── Overlays: the ones the snapshots above do not show ────────────────────────────────────

#[test]
fn snapshot_single_approval() {
    let mut h = Harness::unguarded();
    h.type_text("tidy up");
    h.key(KeyCode::Enter);
    h.start_run();
    h.event(EventData::Delta {
        kind: DeltaKind::Text,
        text: "I'll remove the build directory.".into(),
    });
    h.ask("c1", "shell", json!({"command": "rm -rf target"}), 1, 1);
    h.settle();
    insta::assert_snapshot!(h.screen(150, 30).backend());
}

#[test]
fn the_timeline_detail_opens_over_its_pane_and_takes_esc_first() {
    let mut h = Harness::new();
    h.type_text("hello");
    h.key(KeyCode::Enter);
    h.start_run();
    h.event(llm_call(1, None, "Hi! Let me look.", &[]));
    h.key(KeyCode::Tab);
    h.key(KeyCode::Tab);
    assert_eq!(h.app.focus(), Focus::Timeline);
    assert_eq!(h.key(KeyCode::Enter), []);
    assert!(h.app.detail_open());
    h.settle();
    insta::assert_snapshot!(h.screen(160, 30).backend());
    assert_eq!(h.key(KeyCode::Esc), [], "Esc closes the detail first");
    assert!(!h.app.detail_open() && h.app.is_busy());
    assert_eq!(h.key(KeyCode::Esc), [Command::Op(Op::Cancel)]);

    // The detail hides the list: `f` does not filter under it, it goes to the composer.
    h.key(KeyCode::Enter);
    h.key(KeyCode::Char('f'));
    assert_eq!(h.app.focus(), Focus::Chat);
    assert_eq!(h.app.composer_text(), "f");
    assert!(
        h.app.detail_open(),
        "it stays open while the focus is elsewhere"
    );
    let screen = format!("{}", h.screen(160, 30).backend());
    assert!(screen.contains("timeline · all"), "{screen}");
    // /clear forgets the rows, and so the detail of one.
    h.key(KeyCode::Backspace);
    h.type_text("/clear");
    h.key(KeyCode::Enter);
    assert!(!h.app.detail_open());
}

#[test]
fn snapshot_approval_of_an_mcp_tool_shows_its_server_and_unchecked_hints() {
    let mut h = Harness::unguarded();
    h.type_text("what changed?");
    h.key(KeyCode::Enter);
    h.start_run();
    let name = "mcp__fs__read_text_file";
    h.event(EventData::ToolCall {
        turn: 1,
        id: "c1".into(),
        name: name.into(),
        arguments: json!({"path": "notes.txt"}),
        parent: None,
        sandbox: None,
    });
    h.event(EventData::ApprovalRequested {
        id: "c1".into(),
        name: name.into(),
        arguments: json!({"path": "notes.txt"}),
        position: 1,
        of: 1,
        note: Some(
            "MCP server fs · its tool 'read_text_file' · the server says: read-only (a hint, not checked)"
                .into(),
        ),
        diff: None,
        sandbox: None,
    });
    h.settle();
    let terminal = h.screen(150, 30);
    let text = screen_text(&terminal);
    assert!(text.contains("⚑ MCP server fs"), "{text}");
    insta::assert_snapshot!(terminal.backend());
}

/// Opens the approval dialog of `name` with the diff of `old` → `new` on `path`.
fn approve_change(name: &str, path: &str, old: Option<&str>, new: &str) -> Harness {
    let mut h = Harness::unguarded();
    h.type_text("change it");
    h.key(KeyCode::Enter);
    h.start_run();
    h.event(EventData::ApprovalRequested {
        id: "c1".into(),
        name: name.into(),
        arguments: json!({"path": path, "content": new}),
        position: 1,
        of: 1,
        note: None,
        diff: Some(taco::tools::diff::render(path, old, new)),
        sandbox: None,
    });
    h.settle();
    h
}

#[test]
fn snapshot_approval_shows_an_edit_as_a_diff() {
    let old = "fn main() {\n    let x = 1;\n    println!(\"{x}\");\n}\n";
    let new = "fn main() {\n    let x = 2;\n    println!(\"{x}\");\n    println!(\"done\");\n}\n";
    let mut h = approve_change("edit_file", "src/main.rs", Some(old), new);
    let terminal = h.screen(150, 30);
    insta::assert_snapshot!(terminal.backend());
    let buffer = terminal.backend().buffer();
    let row = |needle: &str| {
        (0..buffer.area.height)
            .find(|&y| {
                (0..buffer.area.width)
                    .map(|x| buffer[(x, y)].symbol())
                    .collect::<String>()
                    .contains(needle)
            })
            .unwrap_or_else(|| panic!("{needle} not on screen"))
    };
    let colour = |needle: &str| {
        let y = row(needle);
        let x = (0..buffer.area.width)
            .find(|&x| buffer[(x, y)].symbol() == "+" || buffer[(x, y)].symbol() == "-")
            .unwrap();
        buffer[(x, y)].fg
    };
    assert_ne!(
        colour("+    let x = 2;"),
        colour("-    let x = 1;"),
        "added and removed lines differ in colour"
    );
}

#[test]
fn snapshot_approval_shows_an_overwrite_as_a_diff() {
    let mut h = approve_change(
        "write_file",
        "notes.md",
        Some("# Notes\nold line\n"),
        "# Notes\nnew line\n",
    );
    insta::assert_snapshot!(h.screen(150, 24).backend());
}

#[test]
fn snapshot_approval_shows_a_new_file_as_all_added() {
    let mut h = approve_change("write_file", "hello.py", None, "print('hello')\n");
    insta::assert_snapshot!(h.screen(150, 24).backend());
}

/// A run whose shell call `command` waits for approval, its dialog on screen.
fn asking_shell(command: &str) -> Harness {
    let mut h = Harness::unguarded();
    h.type_text("run the tests");
    h.key(KeyCode::Enter);
    h.start_run();
    h.ask("c1", "shell", json!({ "command": command }), 1, 1);
    h.settle();
    h
}

/// Every cell's symbol of a drawn screen, in one string (for `contains` checks).
fn screen_text(terminal: &Terminal<TestBackend>) -> String {
    terminal
        .backend()
        .buffer()
        .content()
        .iter()
        .map(|c| c.symbol())
        .collect()
}

#[test]
fn snapshot_a_shell_approval_offers_to_allow_its_command_prefix() {
    let mut h = asking_shell("cargo test --test mcp");
    let terminal = h.screen(150, 24);
    let text = screen_text(&terminal);
    assert!(
        text.contains("p allows `cargo test …`, not other cargo commands"),
        "{text}"
    );
    insta::assert_snapshot!(terminal.backend());
}

#[test]
fn p_sends_the_prefix_and_tools_lists_what_was_allowed() {
    let mut h = asking_shell("cargo test --test mcp");
    let sent = h.answer('p');
    let [Command::Op(Op::Approve { id, answer })] = sent.as_slice() else {
        panic!("{sent:?}");
    };
    assert_eq!(
        (id.as_str(), answer.prefix.as_ref().map(|g| g.name())),
        ("c1", Some("cargo test".to_string()))
    );
    h.event(EventData::ApprovalDecided {
        id: "c1".into(),
        name: "shell".into(),
        decision: taco::event::Decision::Approved,
        scope: Scope::Once,
        reason: None,
        prefix: taco::tools::builtin::suggested_grant("cargo test"),
    });
    h.type_text("/tools");
    h.key(KeyCode::Enter);
    let screen = format!("{}", h.screen(140, 60).backend());
    assert!(
        screen.contains("shell 'cargo test …'  session       since just now"),
        "{screen}"
    );
}

#[test]
fn the_status_line_gauges_the_context_and_compact_shows_what_it_did() {
    let mut h = Harness::new();
    h.type_text("hello");
    h.key(KeyCode::Enter);
    h.start_run();
    let mut call = llm_call(1, None, "hi", &[]);
    if let EventData::LlmCall(c) = &mut call {
        c.context_window = Some(1000);
        c.usage = Usage {
            input_tokens: 700,
            output_tokens: 100,
            cached_tokens: 0,
        };
    }
    h.event(call);
    h.event(EventData::Final {
        content: "hi".into(),
        turns: 1,
        usage: Usage::default(),
    });
    let text = screen_text(&h.screen(140, 30));
    assert!(text.contains("ctx 80%"), "{text}");
    assert!(!text.contains('$'), "no price known for model demo: {text}");
    // The gauge warns as the window fills.
    let status_row = h.screen(140, 30).backend().buffer().clone();
    let cell = (0..140)
        .map(|x| &status_row[(x, 29)])
        .collect::<Vec<_>>()
        .windows(3)
        .find(|w| w.iter().map(|c| c.symbol()).collect::<String>() == "ctx")
        .map(|w| w[0].fg);
    assert_eq!(
        cell,
        Some(taco::tui::theme::Theme::default().warn.fg.unwrap())
    );

    let sent = {
        h.type_text("/compact");
        h.key(KeyCode::Enter)
    };
    assert_eq!(sent, vec![Command::Op(Op::Compact)]);
    assert_eq!(h.app.activity(), Activity::Compacting);
    assert!(
        h.app.is_busy(),
        "Esc cancels it; prompts typed meanwhile wait"
    );
    h.request = Arc::from("compact-1");
    h.event(EventData::Compacted(Box::new(taco::event::Compacted {
        trigger: taco::event::CompactTrigger::Manual,
        before_tokens: 800,
        after_tokens: 150,
        window: Some(1000),
        summarized: 12,
        kept_from: 13,
        summary: "SUMMARY".into(),
        requests: Vec::new(),
        requests_left_out: 0,
        usage: Usage {
            input_tokens: 500,
            output_tokens: 40,
            cached_tokens: 0,
        },
        duration_ms: 900,
        parent: None,
        error: None,
        call: None,
    })));
    let text = screen_text(&h.screen(140, 30));
    assert!(text.contains("ctx 15%"), "{text}");
    h.type_text("/status");
    h.key(KeyCode::Enter);
    let text = screen_text(&h.screen(300, 60));
    assert!(text.contains("Context: 150 of 1000 tokens (15%)"), "{text}");
    assert!(
        text.contains("context compacted (/compact): 800 → 150 tokens, 12 older"),
        "{text}"
    );
    assert!(
        text.contains("⇊ compacted 800 → 150"),
        "the timeline row: {text}"
    );
    assert_eq!(
        h.app.activity(),
        Activity::Idle,
        "a compaction is not a run"
    );
}

#[test]
fn tools_revoke_takes_a_prefix_back_and_tools_stops_listing_it() {
    let mut h = asking_shell("cargo test --test mcp");
    h.answer('p');
    h.event(EventData::ApprovalDecided {
        id: "c1".into(),
        name: "shell".into(),
        decision: taco::event::Decision::Approved,
        scope: Scope::Once,
        reason: None,
        prefix: taco::tools::builtin::suggested_grant("cargo test"),
    });
    h.type_text("/tools revoke nothing here");
    let sent = h.key(KeyCode::Enter);
    assert!(sent.is_empty(), "{sent:?}");
    let screen = screen_text(&h.screen(300, 60));
    assert!(
        screen.contains("No grant named 'nothing here'. Granted: 'cargo test'."),
        "{screen}"
    );
    h.type_text("/tools revoke cargo test");
    let sent = h.key(KeyCode::Enter);
    let grant = taco::event::Grant::ShellPrefix(
        taco::tools::builtin::suggested_grant("cargo test").unwrap(),
    );
    assert_eq!(sent, vec![Command::Op(Op::Revoke(grant.clone()))]);
    h.event(EventData::ApprovalRevoked { grant });
    let screen = screen_text(&h.screen(300, 60));
    assert!(
        screen.contains("commands cargo test … are asked about again"),
        "{screen}"
    );
    h.type_text("/tools");
    h.key(KeyCode::Enter);
    let screen = format!("{}", h.screen(300, 60).backend());
    assert!(!screen.contains("shell 'cargo test'  session"), "{screen}");
    assert!(screen.contains("None: every call that asks"), "{screen}");
}

#[test]
fn compact_during_a_request_runs_when_it_ends_before_queued_prompts() {
    let mut h = Harness::new();
    h.type_text("first");
    h.key(KeyCode::Enter);
    h.start_run();
    h.type_text("/compact");
    assert!(
        h.key(KeyCode::Enter).is_empty(),
        "not while the request runs"
    );
    h.type_text("second");
    assert!(h.key(KeyCode::Enter).is_empty(), "queued");
    let sent = h.event(EventData::Final {
        content: "done".into(),
        turns: 1,
        usage: Usage::default(),
    });
    assert_eq!(sent, vec![Command::Op(Op::Compact)]);
    h.request = Arc::from("compact-1");
    let sent = h.event(EventData::Compacted(Box::new(taco::event::Compacted {
        trigger: taco::event::CompactTrigger::Manual,
        before_tokens: 10,
        after_tokens: 10,
        window: None,
        summarized: 0,
        kept_from: 1,
        summary: String::new(),
        requests: Vec::new(),
        requests_left_out: 0,
        usage: Usage::default(),
        duration_ms: 0,
        parent: None,
        error: Some("cancelled by the user".into()),
        call: None,
    })));
    assert_eq!(sent, vec![Command::Op(Op::Submit("second".into()))]);
    let text = screen_text(&h.screen(300, 40));
    assert!(
        text.contains("not compacted (/compact): cancelled by the user"),
        "{text}"
    );
}

#[test]
fn the_session_cost_shows_when_the_model_has_a_price() {
    let mut h = Harness::new();
    h.type_text("hello");
    h.key(KeyCode::Enter);
    h.start_run();
    let mut call = llm_call(1, None, "hi", &[]);
    if let EventData::LlmCall(c) = &mut call {
        c.model = "gpt-4.1".into();
        c.usage = Usage {
            input_tokens: 100_000,
            output_tokens: 10_000,
            cached_tokens: 0,
        };
    }
    h.event(call);
    let text = screen_text(&h.screen(200, 30));
    // 0.1 M in at $2 + 0.01 M out at $8.
    assert!(text.contains("$0.280"), "{text}");
    assert!(
        text.contains("110.0k tok $0.280"),
        "the timeline row: {text}"
    );
}
