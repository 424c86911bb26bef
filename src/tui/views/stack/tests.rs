use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::*;
use crate::conversation::Usage;
use crate::event::{Event, EventData};
use crate::tui::overlay::{Effect, Handled};
use crate::tui::theme::Theme;
use crate::tui::theme::progress_text;
use ratatui::layout::Rect;

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

/// The pane as the app drives it: each event folded into a run model first, then followed
/// by the pane; events are stamped by the instant they arrive (`base` is the run's start).
struct Fed {
    stack: StackState,
    run: RunModel,
    base: Instant,
}

const T0: u64 = 1_700_000_000_000;

impl Fed {
    fn new(base: Instant) -> Self {
        let mut fed = Self {
            stack: StackState::new(),
            run: RunModel::new(),
            base,
        };
        let started = EventData::RunStarted {
            prompt: "p".into(),
            provider: "p".into(),
            model: "m".into(),
            max_turns: 10,
            trace_parent: None,
        };
        fed.on_event(&ev(started), base);
        fed
    }

    /// `event`, stamped at `now`.
    fn on_event(&mut self, event: &Event, now: Instant) {
        let mut event = event.clone();
        event.timestamp = T0 + now.saturating_duration_since(self.base).as_millis() as u64;
        self.run.apply(&event);
        self.stack.follow(&event, &self.run, now);
    }
}

impl std::ops::Deref for Fed {
    type Target = StackState;
    fn deref(&self) -> &StackState {
        &self.stack
    }
}

impl std::ops::DerefMut for Fed {
    fn deref_mut(&mut self) -> &mut StackState {
        &mut self.stack
    }
}

fn push(state: &mut Fed, f: StackFrame, now: Instant) {
    state.on_event(&ev(EventData::StackPush(f)), now);
}

fn pop(state: &mut Fed, f: StackFrame, now: Instant) {
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
fn busy(base: Instant) -> Fed {
    let mut state = Fed::new(base);
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
    let mut state = Fed::new(base);
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
        state.elapsed_ms("a", ms(base, 4000)),
        0,
        "the clock restarts after approval"
    );
    pop(
        &mut state,
        frame("a", None, "write_file", "path=x", FrameState::Done),
        ms(base, 4300),
    );
    assert!(state.live().is_empty());
    assert_eq!(state.entries[0].frame.state, FrameState::Done);
    assert_eq!(
        state.elapsed_ms("a", ms(base, 9000)),
        300,
        "frozen once ended"
    );
    assert_eq!(state.run.live_depth(), 0);
}

#[test]
fn nesting_follows_parents() {
    let base = Instant::now();
    let state = busy(base);
    assert_eq!(state.run.live_depth(), 3);
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
    let levels = |state: &Fed| -> Vec<(usize, String)> {
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
    let mut cyclic = Fed::new(base);
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
    let mut state = Fed::new(base);
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
    assert!(state.run.live_depth() <= 3);
    draw(&mut state, base, 30, 5);
}

#[test]
fn finished_frames_fade_out_then_go() {
    let base = Instant::now();
    let mut state = Fed::new(base);
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
        ms(base, 4000),
    );
    pop(
        &mut state,
        frame("b", None, "shell", "", FrameState::Done),
        ms(base, 4000),
    );
    state.on_event(&ev(EventData::MaxTurnsReached { turns: 1 }), ms(base, 6600));
    assert!(state.entries.is_empty());
}

#[test]
fn a_reused_id_after_a_pop_is_a_new_frame() {
    let base = Instant::now();
    let mut state = Fed::new(base);
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
    // The run model knows one call by an id: the new one (the old one ended).
    assert_eq!(state.live().len(), 1);
    assert_eq!(state.elapsed_ms("a", ms(base, 150)), 50, "its own clock");
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
        assert_eq!(state.run.live_depth(), 0);
        assert!(state.entries.iter().all(|e| e.frame.state == expected));
        assert!(state.is_animating(ms(base, 5000)));
        assert!(!state.is_animating(ms(base, 5500)));
    }
    let mut state = busy(base);
    state.clear();
    assert!(state.live().is_empty() && !state.is_animating(base));
}

#[test]
fn never_panics_on_tiny_areas() {
    let base = Instant::now();
    let mut state = busy(base);
    for (w, h) in [(0, 0), (1, 1), (2, 1), (3, 2), (14, 1), (200, 60)] {
        draw(&mut state, base, w, h);
        draw(&mut Fed::new(base), base, w, h);
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
    snap("stack_empty", &draw(&mut Fed::new(base), base, 30, 3));
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
    let mut state = Fed::new(now);
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
    // A narrow pane: the count without the bar.
    let terminal = draw(&mut state, now, 24, 4);
    let text: String = terminal
        .backend()
        .buffer()
        .content()
        .iter()
        .map(|c| c.symbol())
        .collect();
    assert!(text.contains("slow 2/4 ·"), "{text}");
    assert!(!text.contains('▰'), "{text}");
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn text(terminal: &Terminal<TestBackend>) -> String {
    terminal.backend().to_string()
}

#[test]
fn arrows_select_and_the_view_follows_the_selection() {
    let base = Instant::now();
    let mut state = busy(base);
    let bottom = text(&draw(&mut state, ms(base, 2500), 40, 3));
    assert!(
        bottom.contains("shell") && !bottom.contains("delegate"),
        "newest in view:\n{bottom}"
    );
    assert!(state.on_key(key(KeyCode::Up)).taken());
    assert_eq!(
        state.selected(),
        Some("s"),
        "↑ first selects the newest row"
    );
    for _ in 0..5 {
        assert!(state.on_key(key(KeyCode::Up)).taken());
    }
    assert_eq!(state.selected(), Some("d"), "stops at the top");
    let top = text(&draw(&mut state, ms(base, 2500), 40, 3));
    assert!(top.contains("delegate"), "{top}");
    assert!(state.on_key(key(KeyCode::End)).taken());
    assert_eq!(state.selected(), Some("s"));
    assert!(state.on_key(key(KeyCode::Home)).taken());
    assert_eq!(state.selected(), Some("d"));
    // Esc lets go; then it is the run's cancel again.
    assert!(state.on_key(key(KeyCode::Esc)).taken());
    assert_eq!(state.selected(), None);
    assert!(!state.on_key(key(KeyCode::Esc)).taken());
    // Letters go to the composer while nothing is selected.
    assert!(!state.on_key(key(KeyCode::Char('c'))).taken());
    assert!(
        !Fed::new(base).on_key(key(KeyCode::Up)).taken(),
        "nothing to select"
    );
}

fn cancel_effect(handled: Handled) -> Option<String> {
    match handled {
        Handled::Effects(effects) => match effects.as_slice() {
            [Effect::CancelCall(id)] => Some(id.clone()),
            _ => None,
        },
        _ => None,
    }
}

#[test]
fn c_cancels_the_selected_running_call_once_and_denies_one_awaiting_approval() {
    let base = Instant::now();
    let mut state = busy(base);
    draw(&mut state, ms(base, 2500), 60, 10);
    state.on_key(key(KeyCode::Home)); // d
    state.on_key(key(KeyCode::Down)); // r
    assert_eq!(state.selected(), Some("r"));
    assert_eq!(
        cancel_effect(state.on_key(key(KeyCode::Char('c')))).as_deref(),
        Some("r")
    );
    assert!(
        matches!(state.on_key(key(KeyCode::Char('c'))), Handled::Consumed),
        "twice: once is enough"
    );
    let screen = text(&draw(&mut state, ms(base, 2600), 60, 10));
    assert!(screen.contains("cancelling…"), "{screen}");
    state.on_key(key(KeyCode::Down)); // g, under r
    state.on_key(key(KeyCode::Down)); // w, awaiting approval
    assert_eq!(state.selected(), Some("w"));
    match state.on_key(key(KeyCode::Char('c'))) {
        Handled::Effects(effects) => match effects.as_slice() {
            [Effect::Approve(decided)] => {
                assert_eq!(decided[0].0, "w");
                assert_eq!(decided[0].1.decision, crate::event::Decision::Denied);
            }
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
    // A finished (fading) frame has nothing left to cancel.
    pop(
        &mut state,
        frame("s", None, "shell", "command=cargo test", FrameState::Done),
        ms(base, 2700),
    );
    state.on_key(key(KeyCode::End));
    assert_eq!(state.selected(), Some("s"));
    assert!(matches!(
        state.on_key(key(KeyCode::Char('c'))),
        Handled::Consumed
    ));
}

#[test]
fn the_selection_moves_to_a_neighbour_when_its_frame_fades_out() {
    let base = Instant::now();
    let mut state = busy(base);
    draw(&mut state, ms(base, 2500), 60, 10);
    state.on_key(key(KeyCode::End));
    state.on_key(key(KeyCode::Enter));
    pop(
        &mut state,
        frame("s", None, "shell", "command=cargo test", FrameState::Done),
        ms(base, 3000),
    );
    draw(&mut state, ms(base, 3000), 60, 10);
    assert_eq!(state.selected(), Some("s"), "still there while fading");
    // Long after: gone, and the row above takes the selection (the detail closes).
    draw(&mut state, ms(base, 9000), 60, 10);
    assert_eq!(state.selected(), Some("w"));
    assert!(!state.expanded);
    // Everything leaves: nothing selected, nothing panics.
    state.on_event(
        &ev(EventData::Cancelled {
            running: "tool calls".into(),
        }),
        ms(base, 9100),
    );
    draw(&mut state, ms(base, 20_000), 60, 10);
    assert_eq!(state.selected(), None);
    assert!(!state.on_key(key(KeyCode::Enter)).taken());
    // Zero-height and zero-width panes with a selection.
    let mut state = busy(base);
    state.on_key(key(KeyCode::Up));
    state.on_key(key(KeyCode::Enter));
    for (w, h) in [(0, 0), (40, 0), (0, 5), (1, 1), (5, 2)] {
        draw(&mut state, ms(base, 2500), w, h);
    }
}

/// The shell frame of `busy` with its arguments, and output that stopped at 2.5 s.
fn with_detail(base: Instant) -> Fed {
    let mut state = Fed::new(base);
    state.on_event(
        &ev(EventData::ToolCall {
            turn: 1,
            id: "s".into(),
            name: "shell".into(),
            arguments: serde_json::json!({"command": "cargo test", "timeout_secs": 600}),
            parent: Some("d".into()),
            sandbox: None,
        }),
        base,
    );
    push(
        &mut state,
        frame(
            "d",
            None,
            "delegate",
            "task=run the tests",
            FrameState::Running,
        ),
        base,
    );
    push(
        &mut state,
        frame(
            "s",
            Some("d"),
            "shell",
            "command=cargo test",
            FrameState::Running,
        ),
        ms(base, 500),
    );
    let tail = "   Compiling taco v0.1.0\n    Finished test\n     Running unittests";
    state.on_event(
        &ev(EventData::ToolOutput {
            id: "s".into(),
            tail: tail.into(),
        }),
        ms(base, 2500),
    );
    state
}

#[test]
fn snapshot_frame_detail_with_arguments_chain_and_output() {
    let base = Instant::now();
    let mut state = with_detail(base);
    state.on_key(key(KeyCode::End));
    state.on_key(key(KeyCode::Enter));
    snap("stack_detail", &draw(&mut state, ms(base, 4000), 60, 16));
    // A short pane keeps the selected row and as much detail as fits.
    let short = text(&draw(&mut state, ms(base, 4000), 60, 4));
    assert!(
        short.contains("shell") && short.contains("running"),
        "{short}"
    );
    assert!(state.on_key(key(KeyCode::Esc)).taken());
    assert!(!state.expanded && state.selected() == Some("s"));
}

fn result(id: &str, name: &str, ms: u64) -> Event {
    ev(EventData::ToolResult {
        id: id.into(),
        name: name.into(),
        ok: true,
        status: None,
        denied_by: None,
        duration_ms: ms,
        result: None,
        error: None,
    })
}

#[test]
fn snapshot_slow_and_quiet_flags_with_an_injected_clock() {
    let base = Instant::now();
    let mut state = with_detail(base);
    // shell took 1 s three times this session: slow past 3 s.
    for _ in 0..3 {
        state.flags.record("shell", Duration::from_secs(1));
    }
    state.flags.settings.quiet_after = Duration::from_secs(30);
    assert_eq!(state.flag("s", ms(base, 3000)), None, "2.5 s in: fine");
    assert_eq!(state.flag("s", ms(base, 4000)).as_deref(), Some("⚠ slow"));
    assert_eq!(
        state.flag("d", ms(base, 4000)),
        None,
        "delegate has no history"
    );
    snap("stack_flag_slow", &draw(&mut state, ms(base, 4000), 60, 3));
    // 45 s after its last output.
    assert_eq!(
        state.flag("s", ms(base, 47_500)).as_deref(),
        Some("⚠ quiet 45 s")
    );
    snap(
        "stack_flag_quiet",
        &draw(&mut state, ms(base, 47_500), 60, 3),
    );
    // A configured threshold wins over history.
    state
        .flags
        .settings
        .slow_after
        .insert("shell".into(), Duration::from_secs(600));
    assert_eq!(state.flag("s", ms(base, 29_000)), None);
    // Narrow: the flag gives way to the name.
    let narrow = text(&draw(&mut state, ms(base, 47_500), 24, 3));
    assert!(!narrow.contains('⚠'), "{narrow}");
}

#[test]
fn a_sub_agents_call_knows_its_sub_agent_and_what_it_said() {
    let base = Instant::now();
    let mut state = Fed::new(base);
    state.on_event(
        &ev(EventData::ToolCall {
            turn: 1,
            id: "d".into(),
            name: "delegate".into(),
            arguments: serde_json::json!({"task": "tidy the README and fix its links"}),
            parent: None,
            sandbox: None,
        }),
        base,
    );
    push(
        &mut state,
        frame("d", None, "delegate", "task=tidy…", FrameState::Running),
        base,
    );
    push(
        &mut state,
        frame(
            "d/w",
            Some("d"),
            "write_file",
            "path=README.md",
            FrameState::AwaitingApproval,
        ),
        base,
    );
    let agent = state.sub_agent("d/w").unwrap();
    assert_eq!(agent.from, "delegate: tidy the README and fix its links");
    assert_eq!(agent.said, None);
    assert_eq!(
        state.sub_agent("d"),
        None,
        "a top-level call is the user's agent's"
    );
    assert_eq!(state.sub_agent("nobody"), None);
    // A call a tool of the sub-agent needs first is the sub-agent's too.
    push(
        &mut state,
        frame(
            "d/w/n",
            Some("d/w"),
            "read_file",
            "",
            FrameState::AwaitingApproval,
        ),
        base,
    );
    assert_eq!(state.sub_agent("d/w/n"), Some(agent));
    // Parent cycles end.
    push(
        &mut state,
        frame("x", Some("y"), "a", "", FrameState::Running),
        base,
    );
    push(
        &mut state,
        frame("y", Some("x"), "b", "", FrameState::Running),
        base,
    );
    assert_eq!(state.sub_agent("x"), None);
}

#[test]
fn arguments_are_dropped_with_their_call() {
    let base = Instant::now();
    let mut state = with_detail(base);
    state.on_event(
        &ev(EventData::ToolCall {
            turn: 1,
            id: "never-pushed".into(),
            name: "read_file".into(),
            arguments: serde_json::json!({}),
            parent: None,
            sandbox: None,
        }),
        base,
    );
    assert!(
        state.live().iter().any(|f| f.id == "never-pushed"),
        "proposed"
    );
    state.on_event(&result("never-pushed", "read_file", 0), base);
    assert!(!state.live().iter().any(|f| f.id == "never-pushed"));
    state.on_event(
        &ev(EventData::Final {
            content: String::new(),
            turns: 1,
            usage: Default::default(),
        }),
        base,
    );
    assert!(state.live().is_empty());
}

/// A call waiting for a process slot (`[tools] max_parallel`) shows `◌ … queued` with no
/// clock; once it runs, its clock counts from then, not from when it was queued.
#[test]
fn a_queued_frame_shows_queued_and_its_clock_starts_when_it_runs() {
    let base = Instant::now();
    let mut state = Fed::new(base);
    let queued = frame("q", None, "shell", "command=sleep 2", FrameState::Queued);
    push(&mut state, queued, base);
    let screen = text(&draw(&mut state, ms(base, 7000), 60, 3));
    assert!(screen.contains("◌ shell"), "{screen}");
    assert!(
        screen.contains("queued") && !screen.contains("7."),
        "no clock while queued: {screen}"
    );
    let running = frame("q", None, "shell", "command=sleep 2", FrameState::Running);
    push(&mut state, running, ms(base, 7000));
    assert_eq!(state.elapsed_ms("q", ms(base, 7000)), 0);
    assert_eq!(state.elapsed_ms("q", ms(base, 7300)), 300);
    let screen = text(&draw(&mut state, ms(base, 7300), 60, 3));
    assert!(!screen.contains("queued"), "{screen}");
}

/// The ⚠ slow flag learns a tool's usual time from the calls the run model saw end well
/// (by the model's clock), once each; failed calls teach nothing.
#[test]
fn the_flags_learn_from_calls_that_ended_well_once_each() {
    let base = Instant::now();
    let mut state = Fed::new(base);
    for (n, status) in [
        (0, FrameState::Done),
        (1, FrameState::Done),
        (2, FrameState::Failed),
    ] {
        let id = format!("old{n}");
        let start = 10_000 * n;
        push(
            &mut state,
            frame(&id, None, "shell", "", FrameState::Running),
            ms(base, start),
        );
        pop(
            &mut state,
            frame(&id, None, "shell", "", status),
            ms(base, start + 1000),
        );
        // Events after the end do not count it again.
        state.on_event(
            &ev(EventData::MaxTurnsReached { turns: 1 }),
            ms(base, start + 1100),
        );
    }
    assert_eq!(
        state.flags.history("shell"),
        vec![Duration::from_secs(1); 2]
    );
}
