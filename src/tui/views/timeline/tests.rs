use crate::tui::views::fed::Fed;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;

use super::list::columns;
use super::*;
use crate::conversation::{Message, ToolCall, Usage};
use crate::event::LlmCall;
use crate::tui::layout::Focus;
use crate::tui::overlay::{DrawCtx, KeyCtx, Overlay};

/// Run start, in unix ms.
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

fn llm(turn: u32, duration_ms: u64, calls: Vec<ToolCall>) -> EventData {
    let mut assistant = Message::assistant(
        None,
        None,
        vec![ToolCall {
            id: "call_0".into(),
            name: "list_dir".into(),
            arguments: json!({"path": "."}),
        }],
    );
    assistant.content = Some("Let me look.".into());
    EventData::LlmCall(Box::new(LlmCall {
        turn,
        model: "gpt-4o".into(),
        duration_ms,
        ttft_ms: Some(230),
        finish_reason: Some("tool_calls".into()),
        content: "I'll read the file.".into(),
        reasoning_content: Some("The user wants the readme.".into()),
        tool_calls: calls,
        usage: Usage {
            input_tokens: 1200,
            output_tokens: 80,
            cached_tokens: 0,
        },
        timings: None,
        message_count: 4,
        new_messages: vec![
            Message::system("You are taco."),
            Message::user("What does README.md say?"),
            assistant,
            Message::tool("call_0", "list_dir", r#"{"entries":["README.md"]}"#.into()),
        ],
        tools: vec!["read_file".into(), "list_dir".into(), "shell".into()],
        parent: None,
        omitted: 0,
        context_window: None,
        call: None,
        purpose: None,
    }))
}

fn read_call() -> ToolCall {
    ToolCall {
        id: "call_1".into(),
        name: "read_file".into(),
        arguments: json!({"path": "README.md"}),
    }
}

/// A run with every kind of row, as the orchestrator emits it (timestamps from T0); line 4
/// is the `llm_call`, built in code for its messages.
const SESSION: &str = r##"
{"type":"run_started","timestamp":0,"request_id":"r","data":{"prompt":"What does\nREADME.md say?","provider":"openai","model":"gpt-4o","max_turns":10}}
{"type":"retry","timestamp":300,"request_id":"r","data":{"attempt":1,"max":3,"reason":"429 rate limited","delay_ms":500}}
{"type":"delta","timestamp":500,"request_id":"r","data":{"kind":"text","text":"I'll"}}
llm_call
{"type":"tool_call","timestamp":2000,"request_id":"r","data":{"turn":1,"id":"call_1","name":"read_file","arguments":{"path":"README.md"},"parent":null}}
{"type":"stack_push","timestamp":2000,"request_id":"r","data":{"id":"call_1","parent":null,"name":"read_file","summary":"path=README.md","state":"awaiting_approval"}}
{"type":"approval_requested","timestamp":2000,"request_id":"r","data":{"id":"call_1","name":"read_file","arguments":{"path":"README.md"},"position":1,"of":1}}
{"type":"approval_decided","timestamp":3000,"request_id":"r","data":{"id":"call_1","name":"read_file","decision":"approved","scope":"turn"}}
{"type":"stack_push","timestamp":3000,"request_id":"r","data":{"id":"call_1","parent":null,"name":"read_file","summary":"path=README.md","state":"running"}}
{"type":"tool_result","timestamp":3500,"request_id":"r","data":{"id":"call_1","name":"read_file","ok":true,"result":{"text":"# taco"},"duration_ms":500}}
{"type":"stack_pop","timestamp":3500,"request_id":"r","data":{"id":"call_1","parent":null,"name":"read_file","summary":"path=README.md","state":"done"}}
{"type":"tool_result","timestamp":3600,"request_id":"r","data":{"id":"call_9","name":"shell","ok":false,"error":"exit 1","duration_ms":100}}
{"type":"max_turns_reached","timestamp":3700,"request_id":"r","data":{"turns":1}}
{"type":"max_turns_prompt_injected","timestamp":3700,"request_id":"r","data":{"turns":1}}
{"type":"error","timestamp":3800,"request_id":"r","data":{"kind":"http","message":"500 from server"}}
{"type":"cancelled","timestamp":3900,"request_id":"r","data":{"running":"tool calls"}}
{"type":"final","timestamp":4000,"request_id":"r","data":{"content":"It says taco.","turns":1,"usage":{"input_tokens":1200,"output_tokens":80}}}
"##;

fn session() -> Vec<Event> {
    let lines = SESSION.lines().filter(|l| !l.is_empty());
    lines
        .map(|line| match line {
            "llm_call" => ev(2000, llm(1, 1250, vec![read_call()])),
            json => {
                let mut event: Event = serde_json::from_str(json).unwrap();
                event.timestamp += T0;
                event
            }
        })
        .collect()
}

fn filled() -> Fed<TimelineState> {
    let mut state = Fed::new(TimelineState::new());
    for event in session() {
        state.on_event(&event);
    }
    state
}

/// The list drawn at `width` × `height`, focused.
pub(super) fn draw(state: &mut TimelineState, width: u16, height: u16) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|f| state.render(f.area(), f.buffer_mut(), &Theme::default(), true, None))
        .unwrap();
    terminal
}

/// Keys as the app passes them with the timeline focused.
const CTX: KeyCtx = KeyCtx {
    focus: Focus::Timeline,
    held: false,
};

/// Enter on the selected row: the detail view the app opens over the pane.
pub(super) fn open(state: &mut TimelineState) -> Detail {
    let Handled::Effects(mut effects) = state.on_key(key(KeyCode::Enter)) else {
        panic!("Enter opens a detail");
    };
    let Some(Effect::Open(overlay)) = effects.pop() else {
        panic!("Enter opens a detail");
    };
    let overlay: Box<dyn std::any::Any> = overlay;
    *overlay.downcast::<Detail>().unwrap()
}

/// Draws an open detail view as the app does, over the whole pane.
fn draw_detail(detail: &mut Detail, width: u16, height: u16) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    let theme = Theme::default();
    let ctx = DrawCtx {
        theme: &theme,
        gate: Default::default(),
        stack: &[],
    };
    terminal
        .draw(|f| detail.render(f.area(), f.buffer_mut(), &ctx))
        .unwrap();
    terminal
}

fn snap(name: &str, terminal: &Terminal<TestBackend>) {
    insta::with_settings!({snapshot_path => "../snapshots"}, {
        insta::assert_snapshot!(name, terminal.backend().to_string());
    });
}

#[test]
fn one_row_per_trace_event_without_deltas_or_stack_events() {
    let state = filled();
    assert_eq!(state.len(), 13);
    let summary: Vec<(&str, Tone, &str)> = state
        .rows
        .iter()
        .map(|r| (r.symbol, r.tone, &*r.name))
        .collect();
    use super::row::Tone;
    assert_eq!(
        summary[0],
        (
            "▶",
            Tone::Text,
            "run · openai/gpt-4o · What does README.md say?"
        )
    );
    assert_eq!(summary[1].0, "↻");
    assert_eq!(
        summary[2],
        (
            "◆",
            Tone::Llm,
            "llm turn 1 · 1.3k tok $0.0038 · gpt-4o · 1 tool call"
        )
    );
    assert_eq!(summary[3], ("→", Tone::Tool, "read_file path=README.md"));
    assert_eq!(
        summary[4],
        ("?", Tone::Warn, "approve? (1/1) read_file path=README.md")
    );
    assert_eq!(summary[5], ("✔", Tone::Ok, "approved read_file (turn)"));
    assert_eq!(summary[6], ("✓", Tone::Ok, "read_file ok"));
    assert_eq!(summary[7], ("✗", Tone::Error, "shell failed: exit 1"));
    assert_eq!(summary[8].0, "⚠");
    assert_eq!(summary[9].0, "⚠");
    assert_eq!(
        summary[10],
        ("✗", Tone::Error, "error http: 500 from server")
    );
    assert_eq!(summary[11].0, "■");
    assert_eq!(summary[12].0, "●");
    // llm_call and tool_result start `duration_ms` before their timestamp.
    assert_eq!(
        (state.rows[2].start, state.rows[2].end),
        (T0 + 750, T0 + 2000)
    );
    assert_eq!(
        (state.rows[6].start, state.rows[6].end),
        (T0 + 3000, T0 + 3500)
    );
    assert_eq!(state.rows[0].duration_ms(), None);
}

#[test]
fn a_tool_result_ends_its_calls_span() {
    let mut state = Fed::new(TimelineState::new());
    let events = session();
    for event in &events[..5] {
        state.on_event(event);
    }
    let call = &state.rows[3];
    assert!(call.pending);
    assert_eq!(call.duration_ms(), None);
    for event in &events[5..] {
        state.on_event(event);
    }
    let call = &state.rows[3];
    assert!(!call.pending);
    assert_eq!((call.start, call.end), (T0 + 2000, T0 + 3500));
    // Its clock is how long it ran, as every pane says; its span covers the wait too.
    assert_eq!(call.duration_ms(), Some(500));
    assert_eq!(call.link, Some(6));
}

#[test]
fn a_denied_call_ends_with_its_decision_and_reads_as_denied() {
    let mut state = Fed::new(TimelineState::new());
    let json = |at: u64, data: serde_json::Value| -> Event {
        let event = json!({"type": data["type"], "timestamp": T0 + at, "request_id": "r", "data": data["data"]});
        serde_json::from_value(event).unwrap()
    };
    let events = [
        json(
            0,
            json!({"type": "run_started", "data": {"prompt": "p", "provider": "p", "model": "m", "max_turns": 10}}),
        ),
        json(
            10,
            json!({"type": "tool_call", "data": {"turn": 1, "id": "w", "name": "write_file", "arguments": {"path": "a"}, "parent": null}}),
        ),
        json(
            20,
            json!({"type": "approval_requested", "data": {"id": "w", "name": "write_file", "arguments": {"path": "a"}, "position": 1, "of": 1}}),
        ),
        json(
            1020,
            json!({"type": "approval_decided", "data": {"id": "w", "name": "write_file", "decision": "denied", "scope": "once", "reason": "not now"}}),
        ),
    ];
    for event in &events {
        state.on_event(event);
    }
    // Denied: the call is over (the run model ended it), though its result is still to come.
    let call = &state.rows[1];
    assert!(!call.pending);
    assert_eq!((call.end, call.duration_ms()), (T0 + 1020, Some(0)));
    state.on_event(&json(1050, json!({"type": "tool_result", "data": {"id": "w", "name": "write_file", "ok": false, "status": "denied", "denied_by": "user", "error": "the call was denied: not now", "duration_ms": 0}})));
    let result = state.rows.last().unwrap();
    // The mark the chat and the stack show for a denial, not a failure's.
    assert_eq!(
        (result.symbol, result.tone, &*result.name),
        ("⊘", super::row::Tone::Warn, "write_file denied: not now")
    );
    assert_eq!(state.rows[1].link, Some(4));
    assert_eq!(state.rows[1].end, T0 + 1020, "ended at the decision");
}

#[test]
fn bars_sit_on_their_runs_axis_and_show_the_wait_for_approval() {
    // The axis runs from the run start (T0) to the final event (T0 + 4000); the one-second
    // approval is too short to squeeze.
    let mut state = filled();
    let run = state.runs.get_mut("r").unwrap();
    assert_eq!((run.origin, run.horizon), (T0, T0 + 4000));
    let terminal = draw(&mut state, 120, 13);
    let cols = columns(120);
    assert_eq!((cols.name, cols.duration, cols.bar), (71, 6, 30));
    let bar_x = 2 + cols.name + 1 + cols.offset + 1 + cols.duration + 1;
    let buf = terminal.backend().buffer();
    let row_cells = |y: u16| -> String {
        (bar_x..bar_x + cols.bar)
            .map(|x| buf[(x, y)].symbol().to_string())
            .collect()
    };
    // llm_call 750..2000 ms of 4000 over 30 cells → cells 5..15.
    let llm = row_cells(2);
    assert_eq!(llm.chars().position(|c| c == '█'), Some(5), "{llm}");
    assert_eq!(llm.matches('█').count(), 10, "{llm}");
    // tool_call 2000..3500 → cells 15..27: waiting for approval until 3000 (cell 23),
    // then running.
    let call = row_cells(3);
    assert_eq!(call.chars().position(|c| c == '░'), Some(15), "{call}");
    assert_eq!(call.matches('░').count(), 8, "{call}");
    assert_eq!(call.matches('█').count(), 4, "{call}");
    // The approval's own row spans the wait, drawn as waiting.
    let approved = row_cells(5);
    assert_eq!(approved.matches('░').count(), 8, "{approved}");
    // The final event is an instant in the last cell.
    assert_eq!(row_cells(12).chars().position(|c| c == '│'), Some(29));
}

#[test]
fn the_selection_follows_until_the_user_moves_away() {
    let mut state = Fed::new(TimelineState::new());
    let events = session();
    for event in &events[..8] {
        state.on_event(event);
    }
    assert_eq!(state.selected, 5);
    assert!(state.on_key(key(KeyCode::Up)).taken());
    assert!(state.on_key(key(KeyCode::Char('k'))).taken());
    state.on_event(&events[8]);
    state.on_event(&events[9]);
    assert_eq!(state.selected, 3, "stays where the user put it");
    assert!(state.on_key(key(KeyCode::End)).taken());
    assert_eq!(state.selected, 6);
    state.on_event(&events[11]);
    assert_eq!(state.selected, 7, "follows again");
    assert!(state.on_key(key(KeyCode::Home)).taken());
    assert_eq!(state.selected, 0);
    assert!(state.on_key(key(KeyCode::PageDown)).taken());
    assert!(state.on_key(key(KeyCode::Char('j'))).taken());
    assert_eq!(state.selected, 7);
    state.on_event(&events[12]);
    assert_eq!(state.selected, 8, "↓ onto the newest row follows too");
    assert!(!state.on_key(key(KeyCode::Char('x'))).taken());
    assert!(
        !state
            .on_key(KeyEvent::new(KeyCode::Char('j'), KeyModifiers::CONTROL))
            .taken()
    );
}

#[test]
fn f_cycles_the_filter_by_kind() {
    let mut state = filled();
    let mut seen = Vec::new();
    for _ in 0..5 {
        seen.push((state.filter_label(), state.visible.len()));
        assert!(state.on_key(key(KeyCode::Char('f'))).taken());
    }
    assert_eq!(
        seen,
        [
            ("all", 13),
            ("llm", 1),
            ("tools", 3),
            ("asks", 2),
            ("problems", 6)
        ]
    );
    assert_eq!(state.filter_label(), "all");
    assert_eq!(state.len(), 13);

    // A selected row that stays visible stays selected.
    state.on_key(key(KeyCode::Home));
    state.on_key(key(KeyCode::Down));
    state.on_key(key(KeyCode::Down));
    state.on_key(key(KeyCode::Char('f')));
    assert_eq!(state.visible[state.selected], 2);
}

#[test]
fn enter_opens_the_detail_and_esc_closes_it() {
    let mut state = filled();
    assert!(
        !state.on_key(key(KeyCode::Esc)).taken(),
        "Esc is the app's without a detail"
    );
    state.on_key(key(KeyCode::Home));
    state.on_key(key(KeyCode::Down));
    state.on_key(key(KeyCode::Down));
    let mut detail = open(&mut state);
    let text: Vec<&str> = detail.lines.iter().map(|l| l.text.as_str()).collect();
    let text = text.join("\n");
    for needle in [
        "◆ llm_call",
        "at +0.75s · took 1.2 s",
        "ttft: 230 ms",
        "finish: tool_calls",
        "usage: 1200 in · 80 out",
        "tools offered: read_file, list_dir, shell",
        "I'll read the file.",
        "The user wants the readme.",
        "read_file (call_1)",
        "  \"path\": \"README.md\"",
        "messages sent (4)",
        "[1] system",
        "You are taco.",
        "[2] user",
        "What does README.md say?",
        "[3] assistant",
        "list_dir (call_0)",
        "[4] tool list_dir · tool_call_id call_0",
        "  \"entries\": [",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }
    assert!(
        detail.on_key(key(KeyCode::Down), &CTX).taken(),
        "scrolls inside"
    );
    assert!(
        !detail.on_key(key(KeyCode::Char('f')), &CTX).taken(),
        "no filtering under a detail: the detail does not take `f`, and it hides the list"
    );
    assert!(detail.on_key(key(KeyCode::Esc), &CTX).taken());
    assert!(detail.finished());
}

#[test]
fn a_tool_calls_detail_shows_its_arguments_and_result() {
    let mut state = filled();
    state.on_key(key(KeyCode::Home));
    for _ in 0..3 {
        state.on_key(key(KeyCode::Down));
    }
    let lines = &open(&mut state).lines;
    let text: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
    assert!(
        text.contains(&"── arguments") && text.contains(&"── result"),
        "{text:?}"
    );
    assert!(text.contains(&"  \"text\": \"# taco\""), "{text:?}");
}

#[test]
fn wrapping_breaks_after_spaces_and_keeps_every_character() {
    assert_eq!(detail::wrap("", 5), [(0, 0)]);
    assert_eq!(detail::wrap("abc def ghi", 7), [(0, 4), (4, 11)]);
    assert_eq!(detail::wrap("abcdefgh", 3), [(0, 3), (3, 6), (6, 8)]);
    assert_eq!(detail::wrap("中文字", 1), [(0, 3), (3, 6), (6, 9)]);
}

#[test]
fn clear_forgets_rows_but_keeps_the_filter() {
    let mut state = filled();
    state.on_key(key(KeyCode::Char('f')));
    state.clear();
    assert!(state.is_empty());
    assert_eq!(state.filter_label(), "llm");
}

#[test]
fn never_panics_on_any_size_or_payload() {
    let mut state = filled();
    let huge = "x".repeat(200_000) + "\n\t\u{7}中文 " + &"y ".repeat(50_000);
    state.on_event(&ev(
        5000,
        EventData::ToolResult {
            id: "big".into(),
            name: "shell".into(),
            ok: true,
            status: Some(crate::event::ToolStatus::Ok),
            denied_by: None,
            result: Some(json!({"stdout": huge})),
            error: None,
            duration_ms: u64::MAX,
        },
    ));
    state.on_event(&ev(
        0,
        EventData::Error {
            kind: "\n".into(),
            message: huge.clone(),
        },
    ));
    for (w, h) in [(0, 0), (1, 1), (2, 1), (5, 3), (20, 2), (33, 4), (200, 60)] {
        draw(&mut state, w, h);
    }
    let mut buf = Buffer::empty(Rect::new(0, 0, 10, 10));
    state.render(
        Rect::new(5, 5, 50, 50),
        &mut buf,
        &Theme::default(),
        true,
        None,
    );
    // The same with the last row's detail open.
    state.on_key(key(KeyCode::End));
    state.on_key(key(KeyCode::Up));
    let mut detail = open(&mut state);
    detail.on_key(key(KeyCode::End), &CTX);
    for (w, h) in [(0, 0), (1, 1), (2, 1), (5, 3), (20, 2), (33, 4), (200, 60)] {
        draw_detail(&mut detail, w, h);
    }
    let mut buf = Buffer::empty(Rect::new(0, 0, 10, 10));
    let theme = Theme::default();
    let ctx = DrawCtx {
        theme: &theme,
        gate: Default::default(),
        stack: &[],
    };
    detail.render(Rect::new(5, 5, 50, 50), &mut buf, &ctx);
    let mut empty = Fed::new(TimelineState::new());
    draw(&mut empty, 1, 1);
}

#[test]
fn snapshot_mixed_list_at_60_and_120_columns() {
    let mut state = filled();
    state.on_key(key(KeyCode::Up));
    snap("timeline_list_60", &draw(&mut state, 60, 14));
    snap("timeline_list_120", &draw(&mut state, 120, 14));
    snap("timeline_list_40", &draw(&mut state, 40, 6));
}

#[test]
fn snapshot_filtered_list() {
    let mut state = filled();
    state.on_key(key(KeyCode::Char('f')));
    state.on_key(key(KeyCode::Char('f')));
    assert_eq!(state.filter_label(), "tools");
    snap("timeline_filtered_tools", &draw(&mut state, 80, 5));
    for _ in 0..3 {
        state.on_key(key(KeyCode::Char('f')));
    }
    state.clear();
    state.on_key(key(KeyCode::Char('f')));
    state.on_event(&session()[0]);
    snap("timeline_filtered_empty", &draw(&mut state, 40, 3));
}

#[test]
fn snapshot_detail_of_an_llm_call() {
    let mut state = filled();
    state.on_key(key(KeyCode::Home));
    state.on_key(key(KeyCode::Down));
    state.on_key(key(KeyCode::Down));
    let mut detail = open(&mut state);
    snap(
        "timeline_detail_llm_call",
        &draw_detail(&mut detail, 60, 44),
    );
    draw_detail(&mut detail, 40, 12);
    detail.on_key(key(KeyCode::PageDown), &CTX);
    detail.on_key(key(KeyCode::Down), &CTX);
    snap(
        "timeline_detail_llm_call_scrolled",
        &draw_detail(&mut detail, 40, 12),
    );
}

#[test]
fn the_cost_budget_stop_is_a_problem_row_saying_what_was_spent() {
    let mut state = Fed::new(TimelineState::new());
    let reached = crate::event::BudgetReached {
        max_cost: 0.075,
        spent: 0.100_04,
        next_call: 0.0021,
        input_tokens: 2_100,
        model: "gpt-4o".into(),
        purpose: crate::event::Purpose::SubAgent,
        parent: Some("call_1".into()),
    };
    state.on_event(&ev(0, EventData::BudgetReached(Box::new(reached))));
    let row = &state.rows[0];
    use super::row::{Kind, Tone};
    assert_eq!(row.kind, Kind::Problem);
    assert_eq!(
        (row.symbol, row.tone, &*row.name),
        (
            "$",
            Tone::Warn,
            "cost budget reached: $0.100 spent of $0.075 · next call ≥ $0.0021 (gpt-4o) not sent"
        )
    );
}
