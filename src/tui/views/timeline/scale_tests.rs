//! The time scale (issue 14.3): each run on its own axis, a long wait for approval squeezed
//! and marked, the wait drawn apart from the work, the idle time between runs said on the
//! next run's row; and the name column taking the cells the others do not need.

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;

use super::list::{Columns, columns, short_duration};
use super::tests::draw;
use super::*;
use crate::conversation::Usage;
use crate::event::{Decision, LlmCall, Scope};
use crate::tui::views::fed::Fed;

const T0: u64 = 1_700_000_000_000;
/// Run B starts four minutes after run A ended.
const B: u64 = 1_500 + 240_000;
/// Run B's approval waits ten minutes.
const WAIT: u64 = 600_000;

fn ev(run: &str, at: u64, data: EventData) -> Event {
    Event {
        timestamp: T0 + at,
        request_id: run.into(),
        data,
    }
}

fn llm(turn: u32, duration_ms: u64, calls: usize) -> EventData {
    EventData::LlmCall(Box::new(LlmCall {
        turn,
        model: "m".into(),
        duration_ms,
        ttft_ms: None,
        finish_reason: None,
        content: String::new(),
        reasoning_content: None,
        tool_calls: (0..calls)
            .map(|i| crate::conversation::ToolCall {
                id: format!("c{i}"),
                name: "shell".into(),
                arguments: json!({}),
            })
            .collect(),
        usage: Usage::default(),
        timings: None,
        message_count: 0,
        new_messages: Vec::new(),
        tools: Vec::new(),
        parent: None,
        omitted: 0,
        context_window: None,
        call: None,
        purpose: None,
    }))
}

fn started(prompt: &str) -> EventData {
    EventData::RunStarted {
        prompt: prompt.into(),
        provider: "demo".into(),
        model: "m".into(),
        max_turns: 10,
        trace_parent: None,
    }
}

fn call(id: &str, command: &str) -> EventData {
    EventData::ToolCall {
        turn: 1,
        id: id.into(),
        name: "shell".into(),
        arguments: json!({ "command": command }),
        parent: None,
        sandbox: None,
    }
}

fn result(id: &str, duration_ms: u64) -> EventData {
    EventData::ToolResult {
        id: id.into(),
        name: "shell".into(),
        ok: true,
        status: None,
        denied_by: None,
        result: Some(json!("ok")),
        error: None,
        duration_ms,
    }
}

fn done() -> EventData {
    EventData::Final {
        content: "done".into(),
        turns: 2,
        usage: Usage::default(),
    }
}

/// Run A: 1.5 s, no waits. Four minutes later, run B: 3 s of work around a ten-minute
/// approval of its shell call.
fn two_runs() -> Fed<TimelineState> {
    let mut state = Fed::new(TimelineState::new());
    let events = [
        ev("a", 0, started("list files")),
        ev("a", 800, llm(1, 800, 1)),
        ev("a", 800, call("a1", "ls")),
        ev("a", 900, result("a1", 100)),
        ev("a", 1_500, llm(2, 600, 0)),
        ev("a", 1_500, done()),
        ev("b", B, started("run the tests")),
        ev("b", B + 1_000, llm(1, 1_000, 1)),
        ev("b", B + 1_000, call("b1", "cargo test")),
        ev(
            "b",
            B + 1_000,
            EventData::ApprovalRequested {
                id: "b1".into(),
                name: "shell".into(),
                arguments: json!({"command": "cargo test"}),
                position: 1,
                of: 1,
                note: None,
                diff: None,
                sandbox: None,
            },
        ),
        ev(
            "b",
            B + 1_000 + WAIT,
            EventData::ApprovalDecided {
                id: "b1".into(),
                name: "shell".into(),
                decision: Decision::Approved,
                scope: Scope::Once,
                reason: None,
                prefix: None,
            },
        ),
        ev("b", B + 2_000 + WAIT, result("b1", 1_000)),
        ev("b", B + 3_000 + WAIT, llm(2, 1_000, 0)),
        ev("b", B + 3_000 + WAIT, done()),
    ];
    for event in &events {
        state.on_event(event);
    }
    state
}

fn rows(terminal: &Terminal<TestBackend>) -> Vec<String> {
    let buf = terminal.backend().buffer();
    (0..buf.area.height)
        .map(|y| (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect())
        .collect()
}

#[test]
fn each_run_has_its_own_axis_and_a_long_approval_is_squeezed() {
    let mut state = two_runs();
    // Run A's axis is its own 1.5 s, not the session's fourteen minutes.
    let a = state.runs.get_mut("a").unwrap().axis().clone();
    assert_eq!(a.span(), 1_500);
    assert!(a.gaps().is_empty());
    // Run B's axis is its own span, its ten-minute wait squeezed to an eighth of its 3 s
    // of work.
    let b = state.runs.get_mut("b").unwrap().axis().clone();
    assert_eq!(b.gaps().len(), 1);
    assert_eq!(b.span(), 3_000 + 375);
    // Its first model call fills the first 1.0 of 3.375 s of a 27-cell bar, from its start.
    assert_eq!(b.cells(T0 + B, T0 + B + 1_000, 27), (0, 8));
    // Its last one ends at the end of the bar.
    assert_eq!(
        b.cells(T0 + B + 2_000 + WAIT, T0 + B + 3_000 + WAIT, 27),
        (19, 27)
    );
    // Offsets count from each run's own start.
    assert_eq!(state.rows[7].start, T0 + B);
    assert_eq!(
        state.rows[6].idle_before,
        Some(240_000),
        "four minutes idle"
    );
}

#[test]
fn snapshot_two_runs_with_a_long_approval() {
    let mut state = two_runs();
    let wide = draw(&mut state, 100, 15);
    let text = rows(&wide);
    // B's run row says how long nothing ran before it.
    assert!(text[6].contains("⋯4m idle"), "{}", text[6]);
    // Its shell call: waiting (░) then running (█), the axis broken (┊) where the wait is
    // squeezed, on every row of run B.
    let call = &text[8];
    assert!(call.contains('░') && call.contains('█'), "{call}");
    assert!(
        text[12].contains('┊') && text[13].contains('┊'),
        "{text:#?}"
    );
    assert!(!text[1].contains('┊'), "run A has no break: {}", text[1]);
    snap("timeline_two_runs_100", &wide);
    // Without room for a bar the idle time shows in the duration column.
    let narrow = draw(&mut state, 31, 15);
    assert!(rows(&narrow)[6].contains("⋯4m"), "{:#?}", rows(&narrow));
    snap("timeline_two_runs_31", &narrow);
    snap("timeline_two_runs_58", &draw(&mut state, 58, 15));
}

fn snap(name: &str, terminal: &Terminal<TestBackend>) {
    insta::with_settings!({snapshot_path => "../snapshots"}, {
        insta::assert_snapshot!(name, terminal.backend().to_string());
    });
}

#[test]
fn the_name_takes_the_columns_the_others_do_not_need() {
    // 80×24 puts the timeline in a pane 32 cells wide inside: no bar, no offset, a
    // six-cell duration, and 23 cells of name (12 before, beside an offset column).
    assert_eq!(
        columns(32),
        Columns {
            name: 23,
            offset: 0,
            duration: 6,
            bar: 0
        }
    );
    // 60×20 shows it alone, 58 cells wide: a short bar, the name takes the rest (35
    // before).
    assert_eq!(
        columns(58),
        Columns {
            name: 39,
            offset: 0,
            duration: 6,
            bar: 9
        }
    );
    // Every cell is given out: symbol, name, and a space before each other column.
    for width in [21, 31, 40, 58, 64, 89, 90, 120, 200] {
        let c = columns(width);
        let used = 2
            + c.name
            + [c.offset, c.duration, c.bar]
                .iter()
                .filter(|&&w| w > 0)
                .map(|w| w + 1)
                .sum::<u16>();
        assert_eq!(used, width, "{width}: {c:?}");
    }
    // Durations fit their six cells, whatever their size.
    for (ms, shown) in [
        (850, "850 ms"),
        (12_500, "12.5 s"),
        (601_000, "10m01s"),
        (7_500_000, "2h05m"),
    ] {
        assert_eq!(short_duration(ms), shown);
    }
}
