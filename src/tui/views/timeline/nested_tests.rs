//! Nested work in the timeline: rows indent by their `parent` chain, questions show with
//! the asks filter, and sub-agents keep their own conversation.

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;

use super::tests::open;
use super::*;
use crate::conversation::Usage;
use crate::event::{FrameState, InputKind, InputRequest, LlmCall, StackFrame};
use crate::tui::views::fed::Fed;

const T0: u64 = 1_700_000_000_000;

fn ev(at: u64, data: EventData) -> Event {
    Event {
        timestamp: T0 + at,
        request_id: "r".into(),
        data,
    }
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn call(id: &str, parent: Option<&str>, name: &str) -> EventData {
    EventData::ToolCall {
        turn: 1,
        id: id.into(),
        name: name.into(),
        arguments: json!({"path": id}),
        parent: parent.map(Into::into),
        sandbox: None,
    }
}

fn llm(parent: Option<&str>, said: &str, count: usize) -> EventData {
    EventData::LlmCall(Box::new(LlmCall {
        turn: 1,
        model: "m".into(),
        duration_ms: 10,
        ttft_ms: None,
        finish_reason: None,
        content: said.into(),
        reasoning_content: None,
        tool_calls: Vec::new(),
        usage: Usage::default(),
        timings: None,
        message_count: count,
        new_messages: (0..count)
            .map(|i| Message::user(format!("{said} {i}")))
            .collect(),
        tools: Vec::new(),
        parent: parent.map(Into::into),
        omitted: 0,
        context_window: None,
        call: None,
        purpose: None,
    }))
}

fn question() -> InputRequest {
    InputRequest {
        id: "q1".into(),
        kind: InputKind::Parameter,
        frame: "w/collect".into(),
        tool: "write_file".into(),
        prompt: "write_file needs a value for `path`.".into(),
        parameter: Some("path".into()),
        description: Some("Where to write.".into()),
        value_type: Some("string".into()),
        depth: None,
        form: None,
    }
}

/// A delegate whose sub-agent reads a file, and a needed `write_file` under `edit` that
/// asks for its path; one call names a parent never seen.
fn nested() -> Fed<TimelineState> {
    let mut state = Fed::new(TimelineState::new());
    let events = [
        llm(None, "top", 2),
        call("d", None, "delegate"),
        call("e", None, "edit"),
        llm(Some("d"), "sub", 3),
        call("d/r", Some("d"), "read_file"),
        call("e/w", Some("e"), "write_file"),
        EventData::StackPush(StackFrame {
            id: "w/collect".into(),
            parent: Some("e/w".into()),
            name: "collect_tool_parameters".into(),
            summary: "path".into(),
            state: FrameState::AwaitingInput,
        }),
        EventData::InputRequested(question()),
        EventData::InputAnswered {
            id: "q1".into(),
            value: Some("a.md".into()),
            form: None,
        },
        call("orphan", Some("gone"), "shell"),
    ];
    for (i, data) in events.into_iter().enumerate() {
        state.on_event(&ev(i as u64 * 10, data));
    }
    state
}

fn draw(state: &mut TimelineState, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|f| state.render(f.area(), f.buffer_mut(), &Theme::default(), false, None))
        .unwrap();
    // TestBackend cannot print a zero-width buffer.
    if width == 0 {
        return String::new();
    }
    terminal.backend().to_string()
}

#[test]
fn rows_indent_by_their_parent_chain() {
    let mut state = nested();
    let depths: Vec<(usize, &str)> = (state.rows.iter())
        .map(|r| (usize::from(r.depth), &*r.name))
        .collect();
    assert_eq!(
        depths,
        [
            (0, "llm turn 1 · m"),
            (0, "delegate path=d"),
            (0, "edit path=e"),
            (1, "sub-agent turn 1 · m"),
            (1, "read_file path=d/r"),
            (1, "write_file path=e/w"),
            (2, "write_file asks for path"),
            (2, "answered a.md"),
            (0, "shell path=orphan"),
        ]
    );
    let shown = draw(&mut state, 70, 9);
    assert!(shown.contains("\"  → read_file path=d/r"), "{shown}");
    assert!(shown.contains("\"    ? write_file asks"), "{shown}");
    assert!(shown.contains("\"→ shell path=orphan"), "{shown}");
    for w in 0..12 {
        draw(&mut state, w, 4);
    }
}

#[test]
fn the_asks_filter_shows_questions_and_answers() {
    let mut state = nested();
    for _ in 0..3 {
        state.on_key(key(KeyCode::Char('f')));
    }
    assert_eq!(state.filter_label(), "asks");
    assert_eq!(state.visible.len(), 2);
}

#[test]
fn a_question_s_detail_shows_what_was_asked() {
    let mut state = nested();
    state.on_key(key(KeyCode::Home));
    for _ in 0..6 {
        state.on_key(key(KeyCode::Down));
    }
    let text: Vec<String> = (open(&mut state).lines.iter())
        .map(|l| l.text.clone())
        .collect();
    for wanted in [
        "kind: missing parameter",
        "tool: write_file",
        "parameter: path (string)",
        "description: Where to write.",
        "── question",
        "write_file needs a value for `path`.",
    ] {
        assert!(text.iter().any(|t| t == wanted), "{wanted}: {text:?}");
    }
    state.on_key(key(KeyCode::Esc));
    state.on_key(key(KeyCode::Down));
    let text: Vec<String> = (open(&mut state).lines.iter())
        .map(|l| l.text.clone())
        .collect();
    assert!(text.iter().any(|t| t == "answer: a.md"), "{text:?}");
}

#[test]
fn a_sub_agent_keeps_its_own_conversation() {
    let mut state = nested();
    assert_eq!(
        state.conversation.len(),
        2,
        "the sub-agent did not truncate it"
    );
    state.on_key(key(KeyCode::Home));
    for _ in 0..3 {
        state.on_key(key(KeyCode::Down));
    }
    let text: Vec<String> = (open(&mut state).lines.iter())
        .map(|l| l.text.clone())
        .collect();
    assert!(text.iter().any(|t| t == "sub-agent of: d"), "{text:?}");
    assert!(text.iter().any(|t| t == "── messages sent (3)"), "{text:?}");
    assert!(text.iter().any(|t| t.contains("sub 2")), "{text:?}");
    assert!(!text.iter().any(|t| t.contains("top 0")), "{text:?}");
}
