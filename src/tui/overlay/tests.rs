//! The stack's order and routing, each overlay's keys without an app, and a snapshot of
//! each overlay drawn through the trait.

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;

use super::*;
use crate::event::{FrameState, InputKind, InputRequest, Scope};
use crate::orchestrator::approval::ApprovalRequest;
use crate::tui::views::approval::Pending;
use crate::tui::views::help::Help;

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

/// Keys with the chat focused and no guard.
const READY: KeyCtx = KeyCtx {
    focus: Focus::Chat,
    held: false,
};

/// Keys while the dialog on screen is still guarded.
const HELD: KeyCtx = KeyCtx {
    focus: Focus::Chat,
    held: true,
};

fn pending(id: &str, name: &str, position: usize, of: usize) -> Pending {
    Pending {
        call: ApprovalRequest {
            id: id.into(),
            name: name.into(),
            arguments: json!({"path": "notes.md", "content": "# Notes\n\n- first\n- second\n"}),
            sandbox: None,
        },
        position,
        of,
        lead: Some("I'll write the notes file.".into()),
        from: None,
        note: None,
        diff: None,
    }
}

fn approval(calls: &[(&str, &str)]) -> ApprovalDialog {
    let mut dialog = ApprovalDialog::new();
    for (i, (id, name)) in calls.iter().enumerate() {
        dialog.push(pending(id, name, i + 1, calls.len()));
    }
    dialog
}

fn parameter(id: &str) -> InputRequest {
    InputRequest {
        id: id.into(),
        kind: InputKind::Parameter,
        frame: "call_1/collect".into(),
        tool: "write_file".into(),
        prompt: "write_file needs a value for `path` to go on.".into(),
        parameter: Some("path".into()),
        description: Some("Where to write, relative to the workspace.".into()),
        value_type: Some("string".into()),
        depth: None,
        form: None,
    }
}

fn depth_limit(id: &str) -> InputRequest {
    InputRequest {
        id: id.into(),
        kind: InputKind::DepthLimit,
        frame: "f".into(),
        tool: "delegate".into(),
        prompt: "The tool stack reached its depth limit (2). Continue for another 20 levels?"
            .into(),
        parameter: None,
        description: None,
        value_type: None,
        depth: Some(2),
        form: None,
    }
}

fn question(request: InputRequest) -> QuestionDialog {
    let mut dialog = QuestionDialog::new();
    dialog.push(request);
    dialog
}

fn frame(id: &str, parent: Option<&str>, name: &str, summary: &str) -> StackFrame {
    StackFrame {
        id: id.into(),
        parent: parent.map(Into::into),
        name: name.into(),
        summary: summary.into(),
        state: FrameState::Running,
    }
}

fn effects(handled: Handled) -> Vec<Effect> {
    match handled {
        Handled::Effects(effects) => effects,
        other => panic!("no effects: {other:?}"),
    }
}

/// Draws `overlay` through the trait at `width`: docked overlays get the rows they ask
/// for, the others `height` rows.
fn draw(overlay: &mut dyn Overlay, width: u16, height: u16, stack: &[StackFrame]) -> String {
    let tree: Vec<(usize, &StackFrame)> = stack
        .iter()
        .map(|f| (usize::from(f.parent.is_some()), f))
        .collect();
    let theme = Theme::default();
    let ctx = DrawCtx {
        theme: &theme,
        gate: Default::default(),
        stack: &tree,
    };
    let rows = match overlay.place() {
        Place::Dock => overlay.height(width, &ctx),
        _ => height,
    };
    let mut terminal = Terminal::new(TestBackend::new(width, rows)).unwrap();
    terminal
        .draw(|f| overlay.render(f.area(), f.buffer_mut(), &ctx))
        .unwrap();
    terminal.backend().to_string()
}

// ── The stack ─────────────────────────────────────────────────────────────────────────

#[test]
fn an_approval_shows_before_a_question_whatever_came_first() {
    let mut stack = OverlayStack::new();
    stack.push(Box::new(question(parameter("q1"))));
    stack.push(Box::new(approval(&[("c1", "shell")])));
    stack.push(Box::new(question(parameter("q2"))));
    assert_eq!(
        stack.guard_id().map(|(id, _)| id).as_deref(),
        Some("approval c1")
    );
    // Only the shown dialog takes keys: `y` then Enter approves, the questions never see it.
    assert!(stack.offer(key(KeyCode::Char('y')), &READY).taken());
    let done = effects(stack.offer(key(KeyCode::Enter), &READY));
    assert!(matches!(&done[..], [Effect::Approve(d)] if d[0].0 == "c1"));
    stack.prune();
    assert!(
        stack.get::<ApprovalDialog>().is_none(),
        "decided: it closed"
    );
    assert_eq!(
        stack.guard_id().map(|(id, _)| id).as_deref(),
        Some("question q2")
    );
}

#[test]
fn help_is_modal_and_goes_over_everything() {
    let mut stack = OverlayStack::new();
    stack.push(Box::new(Help::default()));
    stack.push(Box::new(approval(&[("c1", "shell")])));
    assert!(stack.capture(key(KeyCode::Char('y')), &READY).taken());
    assert!(stack.get::<ApprovalDialog>().is_some(), "help took the y");
    assert_eq!(stack.hints(Focus::Chat).map(|h| h[0].0), Some("y/t/a"));
    assert!(stack.capture(key(KeyCode::Esc), &READY).taken());
    stack.prune();
    assert!(stack.get::<Help>().is_none());
    assert!(
        !stack.capture(key(KeyCode::Char('y')), &READY).taken(),
        "a dialog with nothing picked captures nothing"
    );
    assert!(stack.offer(key(KeyCode::Char('y')), &READY).taken());
    assert!(
        stack.capture(key(KeyCode::Enter), &READY).taken(),
        "a picked answer takes Enter from any pane"
    );
}

#[test]
fn upsert_feeds_the_open_dialog_and_end_run_closes_the_run_s_dialogs() {
    let mut stack = OverlayStack::new();
    stack.upsert(ApprovalDialog::new, |d| {
        d.push(pending("c1", "shell", 1, 2))
    });
    stack.upsert(ApprovalDialog::new, |d| {
        d.push(pending("c2", "shell", 2, 2))
    });
    stack.push(Box::new(Help::default()));
    stack.update(|d: &mut ApprovalDialog| d.remove("c1"));
    assert_eq!(
        stack.guard_id().map(|(id, _)| id).as_deref(),
        Some("approval c2")
    );
    stack.end_run();
    assert!(stack.get::<ApprovalDialog>().is_none());
    assert!(stack.get::<Help>().is_some(), "help outlives the run");
    assert!(stack.composer_note().is_none());
}

// ── Keys, without an app ──────────────────────────────────────────────────────────────

#[test]
fn a_held_dialog_only_scrolls_and_swallows_esc() {
    let mut dialog = approval(&[("c1", "shell")]);
    assert!(!dialog.on_key(key(KeyCode::Char('y')), &HELD).taken());
    assert!(dialog.on_key(key(KeyCode::Down), &HELD).taken());
    assert!(dialog.on_key(key(KeyCode::Esc), &HELD).taken(), "no deny");
    assert!(!dialog.finished());
    let elsewhere = KeyCtx {
        focus: Focus::Timeline,
        ..HELD
    };
    assert!(!dialog.on_key(key(KeyCode::Down), &elsewhere).taken());

    let mut dialog = question(parameter("q1"));
    assert!(!dialog.captures(&key(KeyCode::Char('a')), &HELD));
    assert!(!dialog.on_paste("x", &HELD).taken(), "to the composer");
}

#[test]
fn approval_keys_page_the_chat_too_and_a_reason_captures_everything() {
    let mut dialog = approval(&[("c1", "shell"), ("c2", "shell")]);
    assert!(!dialog.on_key(key(KeyCode::PageDown), &READY).taken());
    let done = effects(dialog.on_key(key(KeyCode::Char('x')), &READY));
    assert!(
        matches!(&done[..], [Effect::Yield(k)] if k == &['x']),
        "typing: {done:?}"
    );
    assert!(!dialog.captures(&key(KeyCode::Tab), &READY));
    assert!(dialog.on_key(key(KeyCode::Char('n')), &READY).taken());
    assert!(dialog.on_key(key(KeyCode::Enter), &READY).taken());
    assert!(dialog.captures(&key(KeyCode::Tab), &READY));
    assert!(dialog.on_paste("too\nrisky", &READY).taken());
    let done = effects(dialog.on_key(key(KeyCode::Enter), &READY));
    let [Effect::Approve(decided)] = &done[..] else {
        panic!("{done:?}")
    };
    assert_eq!(decided[0].1.reason.as_deref(), Some("toorisky"));
    assert!(dialog.on_key(key(KeyCode::Char('a')), &READY).taken());
    let done = effects(dialog.on_key(key(KeyCode::Enter), &READY));
    assert!(matches!(&done[..], [Effect::Approve(d)] if d[0].1.scope == Scope::Session));
    assert!(dialog.finished());
}

#[test]
fn question_keys_answer_run_commands_and_pull_the_focus() {
    let mut dialog = question(parameter("q1"));
    let timeline = KeyCtx {
        focus: Focus::Timeline,
        ..READY
    };
    assert!(dialog.captures(&key(KeyCode::Char('/')), &timeline));
    let done = effects(dialog.on_key(key(KeyCode::Char('/')), &timeline));
    assert!(matches!(&done[..], [Effect::Focus(Focus::Chat)]));
    for c in "status".chars() {
        dialog.on_key(key(KeyCode::Char(c)), &READY);
    }
    let done = effects(dialog.on_key(key(KeyCode::Enter), &READY));
    assert!(matches!(&done[..], [Effect::Command(c)] if c == "/status"));
    assert!(!dialog.on_key(key(KeyCode::PageUp), &READY).taken());
    assert!(dialog.on_key(key(KeyCode::Char('?')), &READY).taken());
    let done = effects(dialog.on_paste("a.md", &READY));
    assert!(matches!(&done[..], [Effect::Focus(Focus::Chat)]));
    let done = effects(dialog.on_key(key(KeyCode::Enter), &READY));
    assert!(
        matches!(&done[..], [Effect::Answer { id, value: Some(v) }] if id == "q1" && v == "?a.md")
    );
    assert!(dialog.finished());

    let mut dialog = question(depth_limit("d1"));
    assert!(!dialog.captures(&key(KeyCode::Char('y')), &READY));
    assert!(dialog.on_paste("y", &READY).taken(), "swallowed");
    let done = effects(dialog.on_key(key(KeyCode::Char('q')), &READY));
    assert!(
        matches!(&done[..], [Effect::Yield(k)] if k == &['q']),
        "typing: {done:?}"
    );
    let done = effects(dialog.on_key(key(KeyCode::Esc), &READY));
    assert!(matches!(&done[..], [Effect::Answer { value: None, .. }]));
}

// ── One snapshot per overlay, drawn through the trait ───────────────────────────────────

fn snap(name: &str, screen: &str) {
    insta::with_settings!({snapshot_path => "snapshots"}, {
        insta::assert_snapshot!(name, screen);
    });
}

#[test]
fn snapshot_help_overlay() {
    let mut help = Help::default();
    snap("overlay_help", &draw(&mut help, 80, 20, &[]));
    help.on_key(key(KeyCode::PageDown), &READY);
    snap("overlay_help_scrolled", &draw(&mut help, 80, 20, &[]));
}

#[test]
fn snapshot_single_and_batch_approval() {
    let mut single = approval(&[("c1", "write_file")]);
    snap("overlay_approval_single", &draw(&mut single, 72, 0, &[]));
    let mut batch = approval(&[("c1", "write_file"), ("c2", "shell")]);
    snap("overlay_approval_batch", &draw(&mut batch, 72, 0, &[]));
}

#[test]
fn snapshot_parameter_and_continue_questions() {
    let mut dialog = question(parameter("q1"));
    for c in "docs/READ".chars() {
        dialog.on_key(key(KeyCode::Char(c)), &READY);
    }
    snap("overlay_parameter_question", &draw(&mut dialog, 72, 0, &[]));
    let mut dialog = question(parameter("q1"));
    dialog.on_key(key(KeyCode::Enter), &READY);
    snap("overlay_continue_question", &draw(&mut dialog, 72, 0, &[]));
}

#[test]
fn snapshot_depth_limit_question() {
    let stack = [
        frame("call_1", None, "delegate", "task=Survey the repository"),
        frame(
            "call_1/call_1",
            Some("call_1"),
            "read_file",
            "path=Cargo.toml",
        ),
    ];
    let mut dialog = question(depth_limit("d1"));
    snap(
        "overlay_depth_limit_question",
        &draw(&mut dialog, 72, 0, &stack),
    );
}
