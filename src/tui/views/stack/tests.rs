use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::*;
use crate::conversation::Usage;

fn ev(data: EventData) -> Event {
    Event {
        timestamp: 1_700_000_000_000,
        request_id: "r".into(),
        data,
    }
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

fn push(state: &mut StackState, f: StackFrame, now: Instant) {
    state.on_event(&ev(EventData::StackPush(f)), now);
}

fn pop(state: &mut StackState, f: StackFrame, now: Instant) {
    state.on_event(&ev(EventData::StackPop(f)), now);
}

fn ms(base: Instant, ms: u64) -> Instant {
    base + Duration::from_millis(ms)
}

fn draw(state: &mut StackState, now: Instant, width: u16, height: u16) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|f| state.render(f.area(), f.buffer_mut(), &Theme::default(), now, true))
        .unwrap();
    terminal
}

/// A delegate running a nested read and a nested write waiting for approval, plus a shell
/// call at the top level whose parent is not on the stack.
fn busy(base: Instant) -> StackState {
    let mut state = StackState::new();
    push(
        &mut state,
        frame(
            "d",
            None,
            "delegate",
            "task=summarise the repo",
            FrameState::Running,
        ),
        base,
    );
    push(
        &mut state,
        frame(
            "r",
            Some("d"),
            "read_file",
            "path=src/main.rs",
            FrameState::Running,
        ),
        ms(base, 1200),
    );
    push(
        &mut state,
        frame(
            "g",
            Some("r"),
            "grep",
            "pattern=fn main",
            FrameState::AwaitingInput,
        ),
        ms(base, 1500),
    );
    push(
        &mut state,
        frame(
            "w",
            Some("d"),
            "write_file",
            "path=NOTES.md content=# Notes",
            FrameState::AwaitingApproval,
        ),
        ms(base, 2000),
    );
    push(
        &mut state,
        frame(
            "s",
            Some("gone"),
            "shell",
            "command=cargo test",
            FrameState::Running,
        ),
        ms(base, 2100),
    );
    state
}

fn snap(name: &str, terminal: &Terminal<TestBackend>) {
    insta::with_settings!({snapshot_path => "../snapshots"}, {
        insta::assert_snapshot!(name, terminal.backend().to_string());
    });
}

#[test]
fn push_state_change_and_pop() {
    let base = Instant::now();
    let mut state = StackState::new();
    push(
        &mut state,
        frame(
            "a",
            None,
            "write_file",
            "path=x",
            FrameState::AwaitingApproval,
        ),
        base,
    );
    assert_eq!(state.live().len(), 1);
    assert_eq!(state.live()[0].state, FrameState::AwaitingApproval);
    push(
        &mut state,
        frame("a", None, "write_file", "path=x", FrameState::Running),
        ms(base, 4000),
    );
    assert_eq!(state.live().len(), 1, "same id: a state change");
    assert_eq!(state.live()[0].state, FrameState::Running);
    assert_eq!(
        state.entries[0].started,
        ms(base, 4000),
        "the clock restarts after approval"
    );
    pop(
        &mut state,
        frame("a", None, "write_file", "path=x", FrameState::Done),
        ms(base, 4300),
    );
    assert!(state.live().is_empty());
    assert_eq!(state.entries[0].frame.state, FrameState::Done);
    assert_eq!(state.entries[0].took, Duration::from_millis(300));
    assert_eq!(state.depth(), 0);
}

#[test]
fn nesting_follows_parents() {
    let base = Instant::now();
    let state = busy(base);
    assert_eq!(state.depth(), 3);
    let ids: Vec<&str> = state.live().iter().map(|f| f.id.as_str()).collect();
    assert_eq!(ids, ["d", "r", "g", "w", "s"], "push order");
    let tree: Vec<(&str, String)> = state
        .tree()
        .into_iter()
        .map(|(i, g)| (state.entries[i].frame.id.as_str(), g))
        .collect();
    let expected = [
        ("d", ""),
        ("r", "├─"),
        ("g", "│ └─"),
        ("w", "└─"),
        ("s", ""),
    ];
    let expected: Vec<(&str, String)> = expected.iter().map(|(i, g)| (*i, g.to_string())).collect();
    assert_eq!(tree, expected);
}

#[test]
fn the_live_tree_gives_each_frame_its_level() {
    let base = Instant::now();
    let mut state = busy(base);
    let levels = |state: &StackState| -> Vec<(usize, String)> {
        (state.live_tree().into_iter())
            .map(|(level, f)| (level, f.id.clone()))
            .collect()
    };
    let expected = [(0, "d"), (1, "r"), (2, "g"), (1, "w"), (0, "s")];
    let expected: Vec<(usize, String)> =
        expected.iter().map(|(l, i)| (*l, i.to_string())).collect();
    assert_eq!(levels(&state), expected);
    // A finished frame leaves the live tree; its child moves to the top level.
    pop(
        &mut state,
        frame("r", Some("d"), "read_file", "", FrameState::Done),
        ms(base, 5000),
    );
    assert!(levels(&state).contains(&(0, "g".to_string())));
    // Cycles: every frame once.
    let mut cyclic = StackState::new();
    push(
        &mut cyclic,
        frame("a", Some("b"), "x", "", FrameState::Running),
        base,
    );
    push(
        &mut cyclic,
        frame("b", Some("a"), "y", "", FrameState::Running),
        base,
    );
    assert_eq!(cyclic.live_tree().len(), 2);
}

#[test]
fn parent_cycles_are_shown_once_each() {
    let base = Instant::now();
    let mut state = StackState::new();
    push(
        &mut state,
        frame("a", Some("b"), "x", "", FrameState::Running),
        base,
    );
    push(
        &mut state,
        frame("b", Some("a"), "y", "", FrameState::Running),
        base,
    );
    push(
        &mut state,
        frame("c", Some("c"), "z", "", FrameState::Running),
        base,
    );
    assert_eq!(state.tree().len(), 3);
    assert!(state.depth() <= 3);
    draw(&mut state, base, 30, 5);
}

#[test]
fn finished_frames_fade_out_then_go() {
    let base = Instant::now();
    let mut state = StackState::new();
    assert!(!state.is_animating(base));
    push(
        &mut state,
        frame("a", None, "shell", "command=ls", FrameState::Running),
        base,
    );
    assert!(state.is_animating(ms(base, 60_000)), "a live clock ticks");
    pop(
        &mut state,
        frame("a", None, "shell", "command=ls", FrameState::Failed),
        ms(base, 1000),
    );
    assert!(state.is_animating(ms(base, 3000)), "fading");
    let text = draw(&mut state, ms(base, 3000), 30, 1)
        .backend()
        .to_string();
    assert!(text.contains("✗ shell"), "{text}");
    assert!(!state.is_animating(ms(base, 3500)));
    let text = draw(&mut state, ms(base, 3500), 30, 1)
        .backend()
        .to_string();
    assert!(text.contains("no tools running"), "{text}");
    assert!(state.entries.is_empty(), "pruned by render");

    // Pruned by events as well.
    push(
        &mut state,
        frame("b", None, "shell", "", FrameState::Running),
        base,
    );
    pop(
        &mut state,
        frame("b", None, "shell", "", FrameState::Done),
        base,
    );
    state.on_event(&ev(EventData::MaxTurnsReached { turns: 1 }), ms(base, 2600));
    assert!(state.entries.is_empty());
}

#[test]
fn a_reused_id_after_a_pop_is_a_new_frame() {
    let base = Instant::now();
    let mut state = StackState::new();
    push(
        &mut state,
        frame("a", None, "ls", "", FrameState::Running),
        base,
    );
    pop(
        &mut state,
        frame("a", None, "ls", "", FrameState::Done),
        base,
    );
    push(
        &mut state,
        frame("a", None, "ls", "", FrameState::Running),
        ms(base, 100),
    );
    assert_eq!(state.entries.len(), 2);
    assert_eq!(state.live().len(), 1);
}

#[test]
fn cancelled_final_and_error_end_live_frames() {
    let base = Instant::now();
    for (data, expected) in [
        (
            EventData::Cancelled {
                running: "tools".into(),
            },
            FrameState::Cancelled,
        ),
        (
            EventData::Final {
                content: String::new(),
                turns: 1,
                usage: Usage::default(),
            },
            FrameState::Cancelled,
        ),
        (
            EventData::Error {
                kind: "http".into(),
                message: "500".into(),
            },
            FrameState::Failed,
        ),
    ] {
        let mut state = busy(base);
        state.on_event(&ev(data), ms(base, 3000));
        assert!(state.live().is_empty());
        assert_eq!(state.depth(), 0);
        assert!(state.entries.iter().all(|e| e.frame.state == expected));
        assert!(state.is_animating(ms(base, 5000)));
        assert!(!state.is_animating(ms(base, 5500)));
    }
    let mut state = busy(base);
    state.clear();
    assert!(state.live().is_empty() && !state.is_animating(base));
}

#[test]
fn arrows_scroll_only_when_rows_overflow() {
    let base = Instant::now();
    let mut state = busy(base);
    let up = KeyEvent::new(KeyCode::Up, KeyModifiers::NONE);
    let down = KeyEvent::new(KeyCode::Down, KeyModifiers::NONE);
    draw(&mut state, base, 40, 10);
    assert!(!state.on_key(up));
    let bottom = draw(&mut state, ms(base, 2500), 40, 3)
        .backend()
        .to_string();
    assert!(
        bottom.contains("shell") && !bottom.contains("delegate"),
        "newest in view:\n{bottom}"
    );
    assert!(state.on_key(up));
    assert!(state.on_key(up));
    let top = draw(&mut state, ms(base, 2500), 40, 3)
        .backend()
        .to_string();
    assert!(top.contains("delegate"), "{top}");
    assert!(state.on_key(down) && state.on_key(down));
    assert_eq!(state.scroll, None, "back at the bottom: follows again");
}

#[test]
fn never_panics_on_tiny_areas() {
    let base = Instant::now();
    let mut state = busy(base);
    for (w, h) in [(0, 0), (1, 1), (2, 1), (3, 2), (14, 1), (200, 60)] {
        draw(&mut state, base, w, h);
        draw(&mut StackState::new(), base, w, h);
    }
    let mut buf = ratatui::buffer::Buffer::empty(Rect::new(0, 0, 4, 4));
    state.render(
        Rect::new(2, 2, 40, 40),
        &mut buf,
        &Theme::default(),
        base,
        false,
    );
    // `now` before some frames started (they were pushed at later instants): no panic.
    draw(&mut state, base, 40, 6);
}

#[test]
fn snapshot_running_tools_nested_and_awaiting() {
    let base = Instant::now();
    let mut state = busy(base);
    snap("stack_running", &draw(&mut state, ms(base, 3456), 48, 7));
    snap(
        "stack_running_narrow",
        &draw(&mut state, ms(base, 3456), 20, 5),
    );
}

#[test]
fn snapshot_fading_finished_frame() {
    let base = Instant::now();
    let mut state = busy(base);
    pop(
        &mut state,
        frame("g", Some("r"), "grep", "pattern=fn main", FrameState::Done),
        ms(base, 2500),
    );
    pop(
        &mut state,
        frame(
            "w",
            Some("d"),
            "write_file",
            "path=NOTES.md",
            FrameState::Denied,
        ),
        ms(base, 2600),
    );
    snap("stack_fading", &draw(&mut state, ms(base, 3000), 48, 6));
    snap("stack_empty", &draw(&mut StackState::new(), base, 30, 3));
}

#[test]
fn progress_shows_a_bar_when_the_total_is_known() {
    assert_eq!(
        progress_text(2.0, Some(4.0), Some("copying")),
        "▰▰▰▰▱▱▱▱ 2/4 · copying · "
    );
    assert_eq!(progress_text(7.0, None, None), "7 · ");
    assert_eq!(
        progress_text(9.0, Some(4.0), None),
        "▰▰▰▰▰▰▰▰ 9/4 · ",
        "never past full"
    );
    assert_eq!(
        progress_text(1.0, Some(0.0), None),
        "1 · ",
        "a zero total is no total"
    );
}

#[test]
fn a_live_frame_shows_its_latest_progress() {
    let now = Instant::now();
    let mut state = StackState::new();
    push(
        &mut state,
        frame("s", None, "slow", "steps=4", FrameState::Running),
        now,
    );
    for step in 1..=2 {
        state.on_event(
            &ev(EventData::ToolProgress {
                id: "s".into(),
                progress: f64::from(step),
                total: Some(4.0),
                message: Some(format!("step {step}")),
            }),
            now,
        );
    }
    let terminal = draw(&mut state, now, 70, 4);
    let text: String = terminal
        .backend()
        .buffer()
        .content()
        .iter()
        .map(|c| c.symbol())
        .collect();
    assert!(text.contains("2/4 · step 2"), "{text}");
    assert!(!text.contains("step 1"), "{text}");
}
