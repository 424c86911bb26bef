//! Earlier runs put above the timeline (issue 15): rows, links, payloads in both stores, the
//! conversation and the selection all survive the move.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;

use super::tests::open;
use super::*;
use crate::conversation::{Message, ToolCall, Usage};
use crate::event::LlmCall;

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

/// Run `name` at `t`: it asks, reads a file of `content`, and answers.
fn run(name: &str, t: u64, content: &str, sent_before: usize) -> Vec<Event> {
    let at = |dt: u64, data: EventData| Event {
        timestamp: 1_700_000_000_000 + t + dt,
        request_id: name.into(),
        data,
    };
    let call = ToolCall {
        id: format!("{name}-call"),
        name: "read_file".into(),
        arguments: json!({"path": format!("{name}.txt")}),
    };
    let llm = |turn, new_messages: Vec<Message>, count| {
        EventData::LlmCall(Box::new(LlmCall {
            turn,
            model: "m".into(),
            duration_ms: 10,
            ttft_ms: None,
            finish_reason: None,
            content: format!("{name} says {turn}"),
            reasoning_content: None,
            tool_calls: Vec::new(),
            usage: Usage::default(),
            timings: None,
            message_count: count,
            new_messages,
            tools: Vec::new(),
            parent: None,
            omitted: 0,
            context_window: None,
            call: None,
            purpose: None,
        }))
    };
    let prompt = format!("the prompt of {name}");
    vec![
        at(
            0,
            EventData::RunStarted {
                prompt: prompt.clone(),
                provider: "p".into(),
                model: "m".into(),
                max_turns: 5,
                trace_parent: None,
            },
        ),
        at(10, llm(1, vec![Message::user(prompt)], sent_before + 1)),
        at(
            11,
            EventData::ToolCall {
                turn: 1,
                id: call.id.clone(),
                name: call.name.clone(),
                arguments: call.arguments.clone(),
                parent: None,
                sandbox: None,
            },
        ),
        at(
            20,
            EventData::ToolResult {
                id: call.id.clone(),
                name: call.name.clone(),
                ok: true,
                status: None,
                denied_by: None,
                result: Some(json!({"content": content})),
                error: None,
                duration_ms: 9,
            },
        ),
        at(
            30,
            llm(
                2,
                vec![
                    Message::assistant(None, None, vec![call.clone()]),
                    Message::tool(call.id.clone(), "read_file", content.to_string()),
                ],
                sent_before + 3,
            ),
        ),
    ]
}

fn fed(events: &[Event]) -> TimelineState {
    let mut state = TimelineState::new();
    let model = RunModel::new();
    for event in events {
        state.on_event(event, &model);
    }
    state
}

fn detail_text(state: &mut TimelineState) -> String {
    let detail = open(state);
    (detail.lines.iter())
        .map(|l| l.text.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn earlier_rows_go_above_and_every_payload_link_and_message_is_found() {
    // The older run's file is big enough to seal a block of its store.
    let big = "an old line of the older file\n".repeat(4_000);
    let mut older = fed(&run("older", 0, &big, 0));
    assert!(
        older
            .store
            .reader()
            .get::<Event>(older.rows[3].payload.unwrap())
            .is_some()
    );
    let mut state = fed(&run("newer", 100_000, "newer content", 3));
    // The newer run's tool call is selected (newest row, then up two).
    let _ = state.on_key(key(KeyCode::Up));
    let _ = state.on_key(key(KeyCode::Up));
    assert_eq!(
        &*state.rows[state.visible[state.selected]].name,
        "read_file path=newer.txt"
    );
    let older_rows = older.rows.len();
    state.prepend(std::mem::take(&mut older));

    assert_eq!(state.rows.len(), 2 * older_rows);
    assert!(state.rows[0].name.contains("the prompt of older"));
    assert!(state.rows[older_rows].name.contains("the prompt of newer"));
    // The selection stayed on its row, and its link still finds its own result.
    let selected = state.visible[state.selected];
    assert_eq!(&*state.rows[selected].name, "read_file path=newer.txt");
    let text = detail_text(&mut state);
    assert!(text.contains("newer content"), "{text}");
    // The older tool call's result comes from the block it sealed, now in the newer store.
    let _ = state.on_key(key(KeyCode::Home));
    let _ = state.on_key(key(KeyCode::Down));
    let _ = state.on_key(key(KeyCode::Down));
    let text = detail_text(&mut state);
    assert!(
        text.contains("read_file") && text.contains("an old line"),
        "{text}"
    );
    // The newer run's last model call was sent the older messages, then its own.
    let _ = state.on_key(key(KeyCode::End));
    let text = detail_text(&mut state);
    let older_prompt = text.find("the prompt of older").expect(&text);
    let newer_prompt = text.find("the prompt of newer").expect(&text);
    assert!(older_prompt < newer_prompt, "{text}");
    assert!(text.contains("newer content"), "{text}");
}

#[test]
fn prepending_keeps_the_view_and_following() {
    let mut state = fed(&run("newer", 100_000, "x", 0));
    assert!(!state.at_top(), "following the newest row");
    state.prepend(fed(&run("older", 0, "y", 0)));
    // Still following: the newest row stays selected.
    assert_eq!(state.selected, state.visible.len() - 1);
    let _ = state.on_key(key(KeyCode::Home));
    assert!(state.at_top());
    // An empty timeline prepends nothing and stays as it was.
    let rows = state.rows.len();
    state.prepend(TimelineState::new());
    assert_eq!(state.rows.len(), rows);
}
