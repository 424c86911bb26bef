//! Nested calls and sub-agents in the chat: a tree under the call that started them, and
//! nothing from a sub-agent in the top-level answer.

use std::time::Instant;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use serde_json::{Value, json};

use super::*;
use crate::conversation::{ToolCall, Usage};
use crate::event::{
    DeltaKind, EventData, FrameState, InputKind, InputRequest, LlmCall, StackFrame,
};
use crate::tui::views::fed::Fed;

fn ev(timestamp: u64, data: EventData) -> Event {
    Event {
        timestamp,
        request_id: "r".into(),
        data,
    }
}

fn call(ts: u64, id: &str, parent: Option<&str>, name: &str, arguments: Value) -> Event {
    ev(
        ts,
        EventData::ToolCall {
            turn: 1,
            id: id.into(),
            name: name.into(),
            arguments,
            parent: parent.map(Into::into),
            sandbox: None,
        },
    )
}

fn done(ts: u64, id: &str, duration_ms: u64) -> Event {
    ev(
        ts,
        EventData::ToolResult {
            id: id.into(),
            name: "t".into(),
            ok: true,
            status: Some(crate::event::ToolStatus::Ok),
            denied_by: None,
            result: Some(json!("ok")),
            error: None,
            duration_ms,
        },
    )
}

fn llm(
    ts: u64,
    parent: Option<&str>,
    content: &str,
    reasoning: Option<&str>,
    calls: usize,
) -> Event {
    ev(
        ts,
        EventData::LlmCall(Box::new(LlmCall {
            turn: 1,
            model: "m".into(),
            duration_ms: 25,
            ttft_ms: None,
            finish_reason: None,
            content: content.into(),
            reasoning_content: reasoning.map(Into::into),
            tool_calls: (0..calls)
                .map(|i| ToolCall {
                    id: format!("x{i}"),
                    name: "read_file".into(),
                    arguments: json!({}),
                })
                .collect(),
            usage: Usage::default(),
            timings: None,
            message_count: 0,
            new_messages: Vec::new(),
            tools: Vec::new(),
            parent: parent.map(Into::into),
            omitted: 0,
            context_window: None,
            call: None,
            purpose: None,
        })),
    )
}

fn screen(chat: &mut ChatState, w: u16, h: u16) -> String {
    let area = Rect::new(0, 0, w, h);
    let mut buf = Buffer::empty(area);
    // Before any cell was seen: spinners show their first frame.
    chat.render(
        area,
        &mut buf,
        &Theme::default(),
        Instant::now() - std::time::Duration::from_secs(1),
    );
    let mut out = String::new();
    for y in 0..h {
        let row: String = (0..w).map(|x| buf[(x, y)].symbol().to_string()).collect();
        out.push_str(row.trim_end());
        out.push('\n');
    }
    out
}

/// A top-level answer, a `delegate` and a `shell` call; the sub-agent reads a file, and the
/// shell call runs a needed `read_file` that itself needs another.
fn nested() -> Fed<ChatState> {
    let mut chat = Fed::new(ChatState::new());
    chat.on_event(&ev(
        0,
        EventData::Delta {
            kind: DeltaKind::Text,
            text: "On it.".into(),
        },
    ));
    chat.on_event(&llm(1, None, "On it.", None, 2));
    chat.on_event(&call(
        2,
        "c1",
        None,
        "delegate",
        json!({"task": "list the binaries", "max_turns": 3}),
    ));
    chat.on_event(&call(3, "c2", None, "shell", json!({"command": "make"})));
    chat.on_event(&llm(
        4,
        Some("c1"),
        "Reading   the\nmanifest.",
        Some("hmm"),
        1,
    ));
    chat.on_event(&call(
        5,
        "c1/x0",
        Some("c1"),
        "read_file",
        json!({"path": "Cargo.toml"}),
    ));
    chat.on_event(&call(
        6,
        "c2/n1",
        Some("c2"),
        "read_file",
        json!({"path": "Makefile"}),
    ));
    chat.on_event(&call(
        7,
        "c2/n1/n1",
        Some("c2/n1"),
        "read_file",
        json!({"path": "inc.mk"}),
    ));
    chat.on_event(&done(8, "c1/x0", 3));
    chat.on_event(&llm(9, Some("c1"), "Two binaries.", None, 0));
    chat
}

#[test]
fn nested_calls_read_as_a_tree_under_their_parents() {
    let mut chat = nested();
    let shown = screen(&mut chat, 80, 11);
    assert_eq!(
        shown,
        "On it.\n\
         \n\
         ⠋ delegate “list the binaries” max_turns=3\n\
         \x20 ↳ ◆ sub-agent turn 1 · “Reading the manifest.” · 1 tool call · 25 ms\n\
         \x20 ↳ ✓ read_file path=Cargo.toml · 3 ms\n\
         \x20 ↳ ◆ sub-agent turn 1 · “Two binaries.” · 25 ms\n\
         ⠋ shell command=make\n\
         \x20 ↳ ⠋ read_file path=Makefile\n\
         \x20   ↳ ⠋ read_file path=inc.mk\n\
         \n\
         \n"
    );
}

#[test]
fn a_tools_model_call_is_not_called_a_sub_agents() {
    let mut chat = Fed::new(ChatState::new());
    chat.on_event(&call(1, "c1", None, "create_code", json!({"path": "a.py"})));
    let mut generated = llm(2, Some("c1"), "```python\nprint(1)\n```", None, 0);
    if let EventData::LlmCall(c) = &mut generated.data {
        c.purpose = Some(crate::event::Purpose::ForTool);
    }
    chat.on_event(&generated);
    let shown = screen(&mut chat, 80, 3);
    assert!(
        shown.contains("↳ ◆ llm for create_code · “print(1) ```” · 25 ms"),
        "{shown}"
    );
}

#[test]
fn a_sub_agent_never_changes_the_top_level_answer() {
    let mut chat = nested();
    assert_eq!(chat.last_assistant_text(), Some("On it."));
    // A sub-agent call with no top-level text at all leaves nothing to quote either.
    let mut quiet = Fed::new(ChatState::new());
    quiet.on_event(&llm(1, None, "", None, 1));
    quiet.on_event(&call(2, "c1", None, "delegate", json!({"task": "t"})));
    quiet.on_event(&llm(
        3,
        Some("c1"),
        "sub-agent words",
        Some("sub-agent thoughts"),
        0,
    ));
    assert_eq!(quiet.last_assistant_text(), None);
    let shown = screen(&mut quiet, 60, 4);
    assert!(!shown.contains("thought"), "no reasoning cell: {shown}");
    assert_eq!(quiet.len(), 2, "the delegate and one sub-agent line");
    // The next top-level text still streams into its own cell.
    chat.on_event(&ev(
        10,
        EventData::Delta {
            kind: DeltaKind::Text,
            text: "Done.".into(),
        },
    ));
    assert_eq!(chat.last_assistant_text(), Some("Done."));
}

#[test]
fn a_parent_never_seen_leaves_the_call_at_the_top_level() {
    let mut chat = Fed::new(ChatState::new());
    chat.on_event(&call(
        1,
        "a/b",
        Some("a"),
        "read_file",
        json!({"path": "x"}),
    ));
    chat.on_event(&llm(2, Some("zz"), "ignored", None, 0));
    assert_eq!(screen(&mut chat, 40, 2), "⠋ read_file path=x\n\n");
}

#[test]
fn deep_nesting_stops_indenting_and_narrow_panes_do_not_break() {
    let mut chat = Fed::new(ChatState::new());
    chat.on_event(&call(0, "0", None, "delegate", json!({"task": "deep"})));
    for i in 1..30 {
        let parent = (i - 1).to_string();
        chat.on_event(&call(
            i,
            &i.to_string(),
            Some(&parent),
            "delegate",
            json!({"task": "deeper"}),
        ));
    }
    let shown = screen(&mut chat, 60, 31);
    let last = shown.lines().nth(29).unwrap_or("");
    assert!(last.starts_with("                ↳ ⠋ delegate"), "{last:?}");
    for w in 0..12 {
        screen(&mut chat, w, 5);
    }
    chat.toggle_details();
    for w in [0, 3, 8, 20, 60] {
        screen(&mut chat, w, 40);
    }
}

fn ask(ts: u64, id: &str, kind: InputKind, frame: &str) -> Event {
    ev(
        ts,
        EventData::InputRequested(InputRequest {
            id: id.into(),
            kind,
            frame: frame.into(),
            tool: "write_file".into(),
            prompt: "?".into(),
            parameter: (kind == InputKind::Parameter).then(|| "path".into()),
            description: None,
            value_type: None,
            depth: (kind == InputKind::DepthLimit).then_some(20),
            form: None,
        }),
    )
}

fn answered(ts: u64, id: &str, value: Option<&str>) -> Event {
    ev(
        ts,
        EventData::InputAnswered {
            id: id.into(),
            value: value.map(Into::into),
            form: None,
        },
    )
}

#[test]
fn answers_to_questions_show_under_the_call_that_asked() {
    let mut chat = Fed::new(ChatState::new());
    chat.on_event(&call(1, "w", None, "write_file", json!({"content": "x"})));
    chat.on_event(&call(2, "s", None, "shell", json!({"command": "ls"})));
    chat.on_event(&ev(
        3,
        EventData::StackPush(StackFrame {
            id: "w/collect".into(),
            parent: Some("w".into()),
            name: "collect_tool_parameters".into(),
            summary: "path".into(),
            state: FrameState::AwaitingInput,
        }),
    ));
    chat.on_event(&ask(4, "q1", InputKind::Parameter, "w/collect"));
    chat.on_event(&answered(5, "q1", Some("notes.md")));
    chat.on_event(&ask(6, "q2", InputKind::Parameter, "w/collect"));
    chat.on_event(&answered(7, "q2", None));
    chat.on_event(&ask(8, "d1", InputKind::DepthLimit, "s"));
    chat.on_event(&answered(9, "d1", Some("y")));
    chat.on_event(&ask(10, "d2", InputKind::DepthLimit, "unknown"));
    chat.on_event(&answered(11, "d2", None));
    chat.on_event(&answered(12, "never-asked", None));
    assert_eq!(
        screen(&mut chat, 60, 8),
        "⠋ write_file content=x\n\
         \x20 ↳ ✎ path: notes.md\n\
         \x20 ↳ ⊘ no path given: the task was abandoned\n\
         ⠋ shell command=ls\n\
         \x20 ↳ ↻ depth limit 20: 20 levels more\n\
         \n\
         ⊘ write_file · depth limit 20: the nested work stops\n\
         \n"
    );
}
