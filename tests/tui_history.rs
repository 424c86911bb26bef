//! The TUI rebuilt from a saved session (`--resume`) or trace (`taco trace`): snapshots of
//! the restored chat and timeline, and the read-only view.

use std::time::Instant;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;
use taco::conversation::{Message, ToolCall, Usage};
use taco::event::{Event, EventData, FrameState, LlmCall, StackFrame};
use taco::session::Entry;
use taco::tui::app::{App, AppInfo, Command};

const T0: u64 = 1_790_000_000_000;

fn info() -> AppInfo {
    AppInfo {
        provider: "openai".into(),
        model: "gpt-x".into(),
        auto_reason: None,
        max_turns: 10,
        workdir: "/work/project".into(),
        tools: Vec::new(),
        dialog_guard: std::time::Duration::from_millis(400),
        ..Default::default()
    }
}

fn event(ms: u64, data: EventData) -> Entry {
    Entry::Event(Event {
        timestamp: T0 + ms,
        request_id: "r1".into(),
        data,
    })
}

fn llm(turn: u32, content: &str, calls: Vec<ToolCall>, duration_ms: u64) -> EventData {
    EventData::LlmCall(Box::new(LlmCall {
        turn,
        model: "gpt-x".into(),
        duration_ms,
        ttft_ms: Some(80),
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
        tool_calls: calls,
        usage: Usage {
            input_tokens: 120,
            output_tokens: 12,
            cached_tokens: 0,
        },
        timings: None,
        message_count: 2,
        new_messages: Vec::new(),
        tools: vec!["list_dir".into()],
        parent: None,
        omitted: 0,
        context_window: None,
        call: None,
        purpose: None,
    }))
}

fn frame(state: FrameState) -> StackFrame {
    StackFrame {
        id: "c1".into(),
        parent: None,
        name: "list_dir".into(),
        summary: "path=.".into(),
        state,
    }
}

/// A finished run as a session file holds it: messages and trace events, no deltas.
fn session(with_messages: bool) -> Vec<Entry> {
    let call = ToolCall {
        id: "c1".into(),
        name: "list_dir".into(),
        arguments: json!({"path": "."}),
    };
    let mut entries = Vec::new();
    let message = |entries: &mut Vec<Entry>, m: Message| {
        if with_messages {
            entries.push(Entry::Message(m));
        }
    };
    message(&mut entries, Message::system("You are taco."));
    message(&mut entries, Message::user("what is in this project?"));
    entries.push(event(
        0,
        EventData::RunStarted {
            prompt: "what is in this project?".into(),
            provider: "openai".into(),
            model: "gpt-x".into(),
            max_turns: 10,
            trace_parent: None,
        },
    ));
    entries.push(event(900, llm(1, "Let me look.", vec![call.clone()], 900)));
    entries.push(event(
        900,
        EventData::ToolCall {
            turn: 1,
            id: "c1".into(),
            name: "list_dir".into(),
            arguments: json!({"path": "."}),
            parent: None,
            sandbox: None,
        },
    ));
    entries.push(event(900, EventData::StackPush(frame(FrameState::Running))));
    entries.push(event(
        940,
        EventData::ToolResult {
            id: "c1".into(),
            name: "list_dir".into(),
            ok: true,
            status: Some(taco::event::ToolStatus::Ok),
            denied_by: None,
            result: Some(json!({"entries": [{"name": "src"}, {"name": "Cargo.toml"}]})),
            error: None,
            duration_ms: 40,
        },
    ));
    entries.push(event(940, EventData::StackPop(frame(FrameState::Done))));
    message(
        &mut entries,
        Message::assistant(Some("Let me look.".into()), None, vec![call]),
    );
    message(&mut entries, Message::tool("c1", "list_dir", "{}".into()));
    entries.push(event(
        2100,
        llm(
            2,
            "A Rust crate: `src/` and `Cargo.toml`.",
            Vec::new(),
            1160,
        ),
    ));
    message(
        &mut entries,
        Message::assistant(
            Some("A Rust crate: `src/` and `Cargo.toml`.".into()),
            None,
            Vec::new(),
        ),
    );
    entries.push(event(
        2100,
        EventData::Final {
            content: "A Rust crate: `src/` and `Cargo.toml`.".into(),
            turns: 2,
            usage: Usage {
                input_tokens: 240,
                output_tokens: 24,
                cached_tokens: 0,
            },
        },
    ));
    entries
}

fn screen(app: &mut App, now: Instant) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(150, 24)).unwrap();
    terminal
        .draw(|f| app.render(f.area(), f.buffer_mut(), now))
        .unwrap();
    terminal
}

#[test]
fn a_resumed_session_restores_the_chat_and_the_timeline() {
    let now = Instant::now();
    let mut app = App::new(info(), now);
    app.replay(&session(true), now);
    app.chat.push_notice(
        taco::tui::views::chat::NoticeKind::Info,
        "Resumed session `20260101-000000-abcdef` (6 messages).",
    );
    assert!(!app.is_busy(), "nothing runs after a replay");
    assert_eq!(
        app.timeline.len(),
        6,
        "one row per trace event except stack events"
    );
    let terminal = screen(&mut app, now);
    let text = format!("{}", terminal.backend());
    assert_eq!(
        text.matches("what is in this project?").count(),
        1,
        "one user cell: {text}"
    );
    insta::assert_snapshot!(terminal.backend());
    // And it goes on: the next prompt is sent.
    for c in "and the tests?".chars() {
        app.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE), now);
    }
    let sent = app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE), now);
    assert!(matches!(sent.as_slice(), [Command::Op(_)]));
}

#[test]
fn a_trace_file_opens_read_only() {
    let now = Instant::now();
    let mut app = App::new(info(), now);
    app.set_read_only("`run.trace`");
    app.replay(&session(false), now);
    assert!(app.is_read_only());
    let terminal = screen(&mut app, now);
    let text = format!("{}", terminal.backend());
    assert!(
        text.contains("what is in this project?"),
        "the run's prompt stands in for the user message: {text}"
    );
    insta::assert_snapshot!(terminal.backend());
    for c in "hello".chars() {
        app.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE), now);
    }
    assert_eq!(
        app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE), now),
        [],
        "nothing is sent from a trace"
    );
}

fn type_line(app: &mut App, line: &str, now: Instant) {
    for c in line.chars() {
        app.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE), now);
    }
    app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE), now);
}

#[test]
fn grants_do_not_survive_a_resume_and_clear_resets_the_tokens() {
    let now = Instant::now();
    let mut info = info();
    info.tools = vec![taco::tui::commands::ToolInfo {
        name: "shell".into(),
        description: "Run a shell command.".into(),
        schema: json!({}),
        policy: "ask".into(),
        usage: None,
    }];
    let mut app = App::new(info, now);
    let mut entries = session(true);
    entries.push(event(
        900,
        EventData::ApprovalDecided {
            id: "c9".into(),
            name: "shell".into(),
            decision: taco::event::Decision::Approved,
            scope: taco::event::Scope::Session,
            reason: None,
            prefix: None,
        },
    ));
    app.replay(&entries, now);
    type_line(&mut app, "/tools", now);
    let text = format!("{}", screen(&mut app, now).backend());
    assert!(text.contains("shell  ask"), "the tool is listed: {text}");
    assert!(
        text.contains("None: every call that asks is asked about"),
        "no grant survived the resume: {text}"
    );
    app.on_key(
        ratatui::crossterm::event::KeyEvent::from(ratatui::crossterm::event::KeyCode::Esc),
        now,
    );

    let before = format!("{}", screen(&mut app, now).backend());
    assert!(before.contains("tok"), "{before}");
    type_line(&mut app, "/clear", now);
    let after = format!("{}", screen(&mut app, now).backend());
    let status = |screen: &str| screen.lines().last().unwrap_or("").to_string();
    assert_ne!(status(&before), status(&after), "the counters moved");
    assert!(status(&after).contains("↑0 ↓0"), "{}", status(&after));
}
