//! A failed command looks failed everywhere (issue 27.2) and every pane tells one time
//! (27.1): a `shell` call that exits 3 shows `exit 3` on its chat cell (with its last
//! lines), on its stack frame and on its timeline row, is in the `problems` filter, and the
//! three show the same elapsed time, the run model's. A session written before
//! `exit_nonzero` existed (status `ok` beside `exit_code: 3`) reads the same.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;
use taco::event::{EventData, FrameState, StackFrame, ToolStatus};
use taco::tui::layout::Focus;

use crate::support;
use support::app::{Harness, screen_text};

fn frame(state: FrameState) -> EventData {
    let frame = StackFrame {
        id: "c1".into(),
        parent: None,
        name: "shell".into(),
        summary: "command=make".into(),
        state,
    };
    match state {
        FrameState::Running => EventData::StackPush(frame),
        _ => EventData::StackPop(frame),
    }
}

/// A run whose one `shell` call exits 3 after printing to stderr; `status` and `ok` as a
/// session of that era recorded them. Events come 10 ms apart: it runs from the push (30 ms)
/// to its result (40 ms).
fn failed_make(status: ToolStatus, ok: bool) -> Harness {
    let mut h = Harness::new();
    h.event(EventData::RunStarted {
        prompt: "build it".into(),
        provider: "demo".into(),
        model: "demo".into(),
        max_turns: 10,
        trace_parent: None,
    });
    h.event(EventData::ToolCall {
        turn: 1,
        id: "c1".into(),
        name: "shell".into(),
        arguments: json!({"command": "make"}),
        parent: None,
        sandbox: None,
    });
    h.event(frame(FrameState::Running));
    h.event(EventData::ToolResult {
        id: "c1".into(),
        name: "shell".into(),
        ok,
        status: Some(status),
        denied_by: None,
        result: Some(json!({
            "exit_code": 3,
            "stdout": "cc -o app main.c\n",
            "stderr": "main.c:3: error: expected ';'\nmake: *** [app] Error 3\n",
            "timed_out": false,
        })),
        error: None,
        duration_ms: 17,
    });
    h.event(frame(FrameState::Failed));
    h
}

fn text(h: &mut Harness) -> String {
    screen_text(&h.screen(200, 40))
}

fn assert_failed_everywhere(h: &mut Harness) {
    let screen = text(h);
    // The chat's cell: the mark, how it ended and how long it ran, and its last lines.
    assert!(
        screen.contains("✗ shell command=make · exit 3 · 10 ms"),
        "{screen}"
    );
    assert!(screen.contains("make: *** [app] Error 3"), "{screen}");
    // The stack's fading frame and the timeline's row: the same end, the same time.
    assert!(screen.contains("✗ shell command=make"), "{screen}");
    assert!(
        screen.contains("exit 3 10 ms"),
        "the stack frame:\n{screen}"
    );
    assert!(
        screen.contains("✗ shell exit 3"),
        "the timeline row:\n{screen}"
    );
    assert!(!screen.contains("shell ok"), "{screen}");
    assert!(
        !screen.contains("17 ms"),
        "one clock, not the runner's:\n{screen}"
    );
    // The problems filter keeps it.
    let now = h.now();
    while h.app.focus() != Focus::Timeline {
        h.app
            .on_key(KeyEvent::new(KeyCode::Tab, KeyModifiers::NONE), now);
    }
    // A pane's letters act once it is used (a navigation key since it got the focus).
    h.app
        .on_key(KeyEvent::new(KeyCode::End, KeyModifiers::NONE), now);
    for _ in 0..4 {
        h.app
            .on_key(KeyEvent::new(KeyCode::Char('f'), KeyModifiers::NONE), now);
    }
    let screen = text(h);
    assert!(screen.contains("timeline · problems"), "{screen}");
    assert!(screen.contains("✗ shell exit 3"), "{screen}");
}

#[test]
fn a_command_that_exits_3_is_failed_in_the_chat_the_stack_the_timeline_and_problems() {
    let mut h = failed_make(ToolStatus::ExitNonzero, false);
    assert_failed_everywhere(&mut h);
}

#[test]
fn a_session_that_recorded_it_as_ok_reads_as_failed_too() {
    let mut h = failed_make(ToolStatus::Ok, true);
    assert_failed_everywhere(&mut h);
}
