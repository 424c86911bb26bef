//! Model calls in flight (issue 27): a row from `llm_started`, renamed as the call streams
//! and retries, its elapsed time ticking while the run goes on, replaced by the call's end;
//! each row labelled for what the call was for.

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;

use super::*;
use crate::conversation::{ToolCall, Usage};
use crate::event::{
    CompactTrigger, Compacted, LlmCall, LlmEnd, LlmFailed, LlmProgress, LlmStarted, Purpose,
};
use crate::tui::views::fed::Fed;

/// Run start, in unix ms.
const T0: u64 = 1_700_000_000_000;

fn ev(at: u64, data: EventData) -> Event {
    Event {
        timestamp: T0 + at,
        request_id: "r".into(),
        data,
    }
}

fn run_started() -> EventData {
    EventData::RunStarted {
        prompt: "explain the code".into(),
        provider: "openai".into(),
        model: "gpt-4o".into(),
        max_turns: 10,
        trace_parent: None,
    }
}

fn start(call: u32, purpose: Purpose, parent: Option<&str>) -> EventData {
    EventData::LlmStarted(LlmStarted {
        call,
        purpose,
        parent: parent.map(Into::into),
        model: "gpt-4o".into(),
        turn: 1,
    })
}

fn progress(call: u32, ttft_ms: u64, text: u64, reasoning: u64) -> EventData {
    EventData::LlmProgress(LlmProgress {
        call,
        ttft_ms,
        text_bytes: text,
        reasoning_bytes: reasoning,
        tool_bytes: 0,
    })
}

/// Call `call`'s `llm_call`; `purpose` `None` as files before issue 27 have it.
fn answered(
    call: Option<u32>,
    purpose: Option<Purpose>,
    parent: Option<&str>,
    content: &str,
) -> EventData {
    EventData::LlmCall(Box::new(LlmCall {
        turn: 1,
        model: "gpt-4o".into(),
        duration_ms: 1_000,
        ttft_ms: Some(850),
        finish_reason: Some("stop".into()),
        content: content.into(),
        reasoning_content: None,
        tool_calls: vec![ToolCall {
            id: "c1".into(),
            name: "read_file".into(),
            arguments: json!({}),
        }],
        usage: Usage {
            input_tokens: 1_200,
            output_tokens: 150,
            cached_tokens: 0,
        },
        timings: None,
        message_count: 0,
        new_messages: Vec::new(),
        tools: Vec::new(),
        parent: parent.map(Into::into),
        omitted: 0,
        context_window: None,
        call,
        purpose,
    }))
}

fn tool_call(id: &str, name: &str) -> EventData {
    EventData::ToolCall {
        turn: 1,
        id: id.into(),
        name: name.into(),
        arguments: json!({}),
        parent: None,
        sandbox: None,
    }
}

fn draw(state: &mut TimelineState, width: u16, now_ms: Option<u64>) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, 4)).unwrap();
    terminal
        .draw(|f| state.render(f.area(), f.buffer_mut(), &Theme::default(), false, now_ms))
        .unwrap();
    terminal.backend().to_string()
}

fn names(state: &TimelineState) -> Vec<String> {
    (state.rows.iter())
        .map(|r| format!("{} {}", r.symbol, r.name))
        .collect()
}

/// A run whose first model call has streamed for 2.4 s.
fn streaming() -> Fed<TimelineState> {
    let mut state = Fed::new(TimelineState::new());
    for (at, data) in [
        (0, run_started()),
        (10, start(1, Purpose::Conversation, None)),
        (860, progress(1, 850, 200, 600)),
        (2_400, progress(1, 850, 480, 600)),
    ] {
        state.on_event(&ev(at, data));
    }
    state
}

#[test]
fn a_model_call_in_flight_has_its_row_with_elapsed_tokens_and_ttft() {
    let mut state = streaming();
    assert_eq!(state.rows.len(), 2, "progress renames the row, adds none");
    let row = &state.rows[1];
    assert!(row.pending);
    assert_eq!(
        &*row.name,
        "llm turn 1 · ~270 tok (~150 reasoning) · ttft 850 ms · gpt-4o"
    );
    // Its time counts on the events' clock at each frame, from the call's start.
    let screen = draw(&mut state, 100, Some(T0 + 3_010));
    insta::with_settings!({snapshot_path => "../snapshots"}, {
        insta::assert_snapshot!("timeline_live_model_row", screen);
    });
    assert!(screen.contains("◇ llm turn 1 · ~270 tok"), "{screen}");
    assert!(screen.contains("3.0 s"), "{screen}");
    // Without a run going on (a resumed session), it does not count.
    let idle = draw(&mut state, 100, None);
    assert!(idle.contains('…') && !idle.contains("3.0 s"), "{idle}");
}

#[test]
fn a_retry_renames_the_row_and_the_answer_takes_its_place() {
    let mut state = streaming();
    state.on_event(&ev(
        2_500,
        EventData::Retry {
            attempt: 2,
            max: 3,
            reason: "HTTP 503".into(),
            delay_ms: 400,
        },
    ));
    assert_eq!(
        &*state.rows[1].name, "llm turn 1 · waiting · 1 retry · gpt-4o",
        "the failed attempt's text is gone"
    );
    assert!(state.rows[2].name.starts_with("retry 2/3"));
    state.on_event(&ev(3_200, progress(1, 300, 40, 0)));
    state.on_event(&ev(
        4_010,
        answered(Some(1), Some(Purpose::Conversation), None, ""),
    ));
    assert_eq!(
        names(&state),
        [
            "▶ run · openai/gpt-4o · explain the code",
            "◆ llm turn 1 · 1.4k tok $0.0045 · gpt-4o · 1 tool call · 1 retry",
            "↻ retry 2/3 in 400 ms · HTTP 503",
        ],
        "the finished row replaced the row in flight"
    );
    let row = &state.rows[1];
    assert!(!row.pending);
    assert_eq!(
        row.duration_ms(),
        Some(4_000),
        "from the call's start, retries included"
    );
    assert_eq!(state.visible, [0, 1, 2]);
}

#[test]
fn a_failed_call_shows_as_a_problem_and_a_cancelled_run_closes_what_was_in_flight() {
    let mut state = Fed::new(TimelineState::new());
    for (at, data) in [
        (0, run_started()),
        (5, tool_call("d1", "delegate")),
        (10, start(1, Purpose::SubAgent, Some("d1"))),
        (
            900,
            EventData::LlmFailed(LlmFailed {
                call: 1,
                end: LlmEnd::Failed,
                error: Some("HTTP 500 from\nthe server".into()),
            }),
        ),
        (1_000, start(2, Purpose::Conversation, None)),
        (1_500, progress(2, 200, 40, 0)),
        (
            1_800,
            EventData::Cancelled {
                running: "llm".into(),
            },
        ),
    ] {
        state.on_event(&ev(at, data));
    }
    assert_eq!(
        names(&state),
        [
            "▶ run · openai/gpt-4o · explain the code",
            "→ delegate",
            "✗ sub-agent turn 1 failed: HTTP 500 from the server",
            "■ llm turn 1 cancelled",
            "■ cancelled llm",
        ]
    );
    assert_eq!(state.rows[2].depth, 1, "under its delegate");
    assert_eq!(state.rows[2].duration_ms(), Some(890));
    assert!(!state.rows[3].pending, "nothing is in flight after the run");
    assert_eq!(state.rows[3].duration_ms(), Some(800));
    // Both are problems, and model calls.
    let f = KeyEvent::new(KeyCode::Char('f'), KeyModifiers::NONE);
    state.on_key(f);
    assert_eq!(state.filter_label(), "llm");
    assert_eq!(state.visible, [2, 3]);
    for _ in 0..3 {
        state.on_key(f);
    }
    assert_eq!(state.filter_label(), "problems");
    assert_eq!(state.visible, [2, 3, 4]);
}

#[test]
fn rows_say_what_each_call_was_for() {
    let mut state = Fed::new(TimelineState::new());
    let compacted = Compacted {
        trigger: CompactTrigger::Auto,
        before_tokens: 9_000,
        after_tokens: 2_000,
        window: Some(10_000),
        summarized: 12,
        kept_from: 13,
        summary: "s".into(),
        requests: Vec::new(),
        requests_left_out: 0,
        usage: Usage::default(),
        duration_ms: 700,
        parent: None,
        error: None,
        call: Some(1),
    };
    let events = [
        (0, run_started()),
        (10, start(1, Purpose::Compaction, None)),
        (720, EventData::Compacted(Box::new(compacted))),
        (800, tool_call("c1", "create_code")),
        (810, start(2, Purpose::ForTool, Some("c1"))),
        (
            1_200,
            answered(Some(2), Some(Purpose::ForTool), Some("c1"), "print(1)"),
        ),
        (1_300, start(3, Purpose::AnswerCheck, Some("c1"))),
        (
            1_500,
            answered(Some(3), Some(Purpose::AnswerCheck), Some("c1"), "no"),
        ),
        // A file written before calls said what they were for.
        (1_600, tool_call("d1", "delegate")),
        (1_700, answered(None, None, Some("d1"), "")),
    ];
    let mut in_flight = Vec::new();
    for (at, data) in events {
        let starts = matches!(data, EventData::LlmStarted(_));
        state.on_event(&ev(at, data));
        if starts {
            in_flight.push(state.rows.last().map(|r| r.name.to_string()));
        }
    }
    assert_eq!(
        in_flight,
        [
            Some("compaction summary · waiting · gpt-4o".to_string()),
            Some("llm for create_code · waiting · gpt-4o".to_string()),
            Some("answer check · waiting · gpt-4o".to_string()),
        ]
    );
    assert_eq!(
        names(&state),
        [
            "▶ run · openai/gpt-4o · explain the code",
            "⇊ compacted 9000 → 2000 tokens · 12 messages summarised",
            "→ create_code",
            "◆ llm for create_code · 1.4k tok $0.0045 · gpt-4o · 1 tool call",
            "◆ answer check · 1.4k tok $0.0045 · gpt-4o · 1 tool call · said no",
            "→ delegate",
            "◆ sub-agent turn 1 · 1.4k tok $0.0045 · gpt-4o · 1 tool call",
        ]
    );
    assert_eq!(
        state.rows[1].duration_ms(),
        Some(710),
        "the summary's row spans its call"
    );
}

#[test]
fn rows_in_flight_keep_their_place_when_earlier_runs_are_put_above() {
    let mut state = streaming();
    let mut earlier = Fed::new(TimelineState::new());
    let before = Event {
        timestamp: T0 - 60_000,
        request_id: "old".into(),
        data: run_started(),
    };
    earlier.on_event(&before);
    let earlier = std::mem::take(&mut *earlier);
    state.prepend(earlier);
    state.on_event(&ev(
        3_000,
        answered(Some(1), Some(Purpose::Conversation), None, ""),
    ));
    assert_eq!(state.rows.len(), 3);
    assert!(state.rows[2].name.starts_with("llm turn 1 · 1.4k tok"));
    assert!(!state.rows.iter().any(|r| r.pending));
}
