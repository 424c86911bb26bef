//! The mouse, copying and themes through the whole app (issue 14.6): the wheel scrolls the
//! pane under the pointer and no other, a click focuses a pane and selects what it hits, `y`
//! copies a timeline payload or a chat message as OSC 52 (redacted), the stack's ⚠ shows on
//! the chat's tool cell, and the same screen in the dark and the light theme.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{
    KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier};
use serde_json::json;
use taco::event::{DeltaKind, EventData, FrameState, StackFrame};
use taco::secrets::Secrets;
use taco::tui::app::{App, AppInfo, Command};
use taco::tui::clipboard::Route;
use taco::tui::layout::{self, Focus, Panes};
use taco::tui::theme::Theme;
use taco::tui::views::stack::FlagSettings;

use crate::support;
use support::app::{Harness, info};

const WIDTH: u16 = 160;
const HEIGHT: u16 = 40;

/// The steps of this file's stories, on the shared harness.
trait TuiMouseSteps {
    fn press(&mut self, code: KeyCode, modifiers: KeyModifiers) -> Vec<Command>;
    fn tap(&mut self, code: KeyCode) -> Vec<Command>;
    fn mouse(&mut self, kind: MouseEventKind, column: u16, row: u16);
    fn wheel_up(&mut self, column: u16, row: u16);
    fn wheel_down(&mut self, column: u16, row: u16);
    fn click(&mut self, column: u16, row: u16);
    fn text(&mut self) -> String;
    fn start(&mut self);
    fn say(&mut self, text: &str);
    fn call(&mut self, id: &str, name: &str, arguments: serde_json::Value);
    fn push(&mut self, id: &str, name: &str, state: FrameState);
    fn result(&mut self, id: &str, name: &str, result: serde_json::Value);
    fn busy(&mut self);
}

impl TuiMouseSteps for Harness {
    fn press(&mut self, code: KeyCode, modifiers: KeyModifiers) -> Vec<Command> {
        self.ms += 10;
        let now = self.now();
        self.app.on_key(KeyEvent::new(code, modifiers), now)
    }

    fn tap(&mut self, code: KeyCode) -> Vec<Command> {
        self.press(code, KeyModifiers::NONE)
    }

    fn mouse(&mut self, kind: MouseEventKind, column: u16, row: u16) {
        self.app.on_mouse(MouseEvent {
            kind,
            column,
            row,
            modifiers: KeyModifiers::NONE,
        });
    }

    fn wheel_up(&mut self, column: u16, row: u16) {
        self.mouse(MouseEventKind::ScrollUp, column, row);
    }

    fn wheel_down(&mut self, column: u16, row: u16) {
        self.mouse(MouseEventKind::ScrollDown, column, row);
    }

    fn click(&mut self, column: u16, row: u16) {
        self.mouse(MouseEventKind::Down(MouseButton::Left), column, row);
    }

    /// The screen as text, drawn at the test size.
    fn text(&mut self) -> String {
        let terminal = self.screen(WIDTH, HEIGHT);
        buffer_text(terminal.backend().buffer())
    }

    fn start(&mut self) {
        self.tap(KeyCode::Char('g'));
        self.tap(KeyCode::Char('o'));
        self.tap(KeyCode::Enter);
        self.event(EventData::RunStarted {
            prompt: "go".into(),
            provider: "demo".into(),
            model: "demo".into(),
            max_turns: 10,
            trace_parent: None,
        });
    }

    fn say(&mut self, text: &str) {
        self.event(EventData::Delta {
            kind: DeltaKind::Text,
            text: text.into(),
        });
    }

    fn call(&mut self, id: &str, name: &str, arguments: serde_json::Value) {
        self.event(EventData::ToolCall {
            turn: 1,
            id: id.into(),
            name: name.into(),
            arguments,
            parent: None,
            sandbox: None,
        });
    }

    fn push(&mut self, id: &str, name: &str, state: FrameState) {
        self.event(EventData::StackPush(StackFrame {
            id: id.into(),
            parent: None,
            name: name.into(),
            summary: format!("{id} summary"),
            state,
        }));
    }

    fn result(&mut self, id: &str, name: &str, result: serde_json::Value) {
        self.event(EventData::ToolResult {
            id: id.into(),
            name: name.into(),
            ok: true,
            status: Some(taco::event::ToolStatus::Ok),
            denied_by: None,
            result: Some(result),
            error: None,
            duration_ms: 5,
        });
    }

    /// A run with a long answer, 20 finished calls (40 timeline rows) and 4 calls still on
    /// the stack, so every pane has more than it shows.
    fn busy(&mut self) {
        self.start();
        for i in 0..40 {
            self.say(&format!("paragraph {i} of a long answer\n\n"));
        }
        for i in 0..20 {
            let id = format!("r{i}");
            self.call(&id, "read_file", json!({"path": format!("f{i}.txt")}));
            self.result(&id, "read_file", json!({"content": "x"}));
        }
        // The finished reads have faded from the stack by the time the shells start.
        self.ms += 3000;
        for i in 0..4 {
            let id = format!("s{i}");
            self.call(&id, "shell", json!({"command": format!("sleep {i}")}));
            self.push(&id, "shell", FrameState::Running);
        }
        self.text();
    }
}

fn panes() -> Panes {
    layout::panes(Rect::new(0, 0, WIDTH, HEIGHT), Focus::Chat)
}

/// A point inside `rect`, `down` rows below its top border.
fn inside(rect: Option<Rect>, down: u16) -> (u16, u16) {
    let rect = rect.unwrap();
    (rect.x + 3, rect.y + 1 + down)
}

fn buffer_text(buf: &Buffer) -> String {
    let area = buf.area;
    let mut out = String::new();
    for y in area.top()..area.bottom() {
        for x in area.left()..area.right() {
            out.push_str(buf[(x, y)].symbol());
        }
        out.push('\n');
    }
    out
}

/// The text an OSC 52 copy sets the clipboard to (its first sequence).
fn copied(commands: &[Command]) -> String {
    let [Command::Copy(osc)] = commands else {
        panic!("one copy, got {commands:?}");
    };
    let bytes = osc.bytes();
    assert!(bytes.starts_with(b"\x1b]52;c;"), "{bytes:?}");
    let end = bytes.iter().position(|&b| b == 0x07).unwrap();
    String::from_utf8(STANDARD.decode(&bytes[7..end]).unwrap()).unwrap()
}

#[test]
fn the_wheel_scrolls_the_pane_under_the_pointer_and_no_other() {
    let mut h = Harness::new();
    h.busy();
    let p = panes();
    let timeline = h.app.timeline.selected_position();
    assert!(h.app.chat.is_following());
    assert_eq!(h.app.stack.selected(), None);

    // Over the chat: the chat scrolls; the timeline and the stack stay.
    let (x, y) = inside(p.chat, 5);
    h.wheel_up(x, y);
    assert!(!h.app.chat.is_following(), "the chat scrolled");
    assert_eq!(h.app.timeline.selected_position(), timeline);
    assert_eq!(h.app.stack.selected(), None);
    h.wheel_down(x, y);
    h.wheel_down(x, y);
    h.text();
    assert!(h.app.chat.is_following(), "back at the bottom");

    // Over the timeline: its selection moves; the chat and the stack stay.
    let (x, y) = inside(p.timeline, 5);
    h.wheel_up(x, y);
    h.wheel_up(x, y);
    assert_eq!(
        h.app.timeline.selected_position(),
        timeline.map(|t| t - 2),
        "two rows up"
    );
    assert!(h.app.chat.is_following());
    assert_eq!(h.app.stack.selected(), None);

    // Over the stack: a frame is selected; the chat and the timeline stay.
    let moved = h.app.timeline.selected_position();
    let (x, y) = inside(p.stack, 1);
    h.wheel_down(x, y);
    assert_eq!(h.app.stack.selected(), Some("s0"));
    h.wheel_down(x, y);
    assert_eq!(h.app.stack.selected(), Some("s1"));
    assert!(h.app.chat.is_following());
    assert_eq!(h.app.timeline.selected_position(), moved);

    // Over the status line: nothing moves, and the focus never changed.
    h.wheel_up(10, HEIGHT - 1);
    assert!(h.app.chat.is_following());
    assert_eq!(h.app.timeline.selected_position(), moved);
    assert_eq!(h.app.focus(), Focus::Chat);
}

#[test]
fn the_wheel_over_the_timeline_detail_scrolls_the_detail_not_the_list() {
    let mut h = Harness::new();
    h.busy();
    let keys: serde_json::Map<String, serde_json::Value> =
        (0..80).map(|i| (format!("key{i:02}"), json!(i))).collect();
    h.call("big", "configure", serde_json::Value::Object(keys));
    let p = panes();
    let (x, y) = inside(p.timeline, 2);
    h.click(x, y);
    // The newest row, a call whose arguments are longer than the pane.
    h.tap(KeyCode::End);
    h.tap(KeyCode::Enter);
    assert!(h.app.detail_open());
    let position = h.app.timeline.selected_position();
    let before = h.text();
    h.wheel_down(x, y);
    h.wheel_down(x, y);
    let after = h.text();
    assert_ne!(before, after, "the detail moved");
    assert_eq!(h.app.timeline.selected_position(), position);
    assert!(h.app.chat.is_following(), "the chat did not move");
}

#[test]
fn the_wheel_over_a_docked_approval_scrolls_it_and_not_the_chat() {
    let mut h = Harness::new();
    h.busy();
    let content: Vec<String> = (0..60).map(|i| format!("line {i}")).collect();
    let arguments = json!({"path": "a.txt", "content": content.join("\n")});
    h.call("w1", "write_file", arguments.clone());
    h.event(EventData::ApprovalRequested {
        id: "w1".into(),
        name: "write_file".into(),
        arguments,
        position: 1,
        of: 1,
        note: None,
        diff: None,
        sandbox: None,
    });
    let before = h.text();
    let row = before
        .lines()
        .position(|l| l.contains("Approve write_file"))
        .unwrap() as u16;
    h.wheel_down(5, row + 3);
    h.wheel_down(5, row + 3);
    let after = h.text();
    assert_ne!(before, after, "the dialog scrolled");
    assert!(h.app.chat.is_following(), "the chat did not");
    assert!(h.app.approval_open());
}

#[test]
fn a_click_focuses_the_pane_and_selects_the_row_frame_or_message_under_it() {
    let mut h = Harness::new();
    h.busy();
    let p = panes();

    let (x, y) = inside(p.timeline, 3);
    h.click(x, y);
    assert_eq!(h.app.focus(), Focus::Timeline);
    let clicked = h.app.timeline.selected_position().unwrap();
    let screen = h.text();
    let row = screen.lines().nth(usize::from(y)).unwrap();
    // The list shows the newest rows; the clicked one stays selected as it draws.
    assert_eq!(h.app.timeline.selected_position(), Some(clicked));
    assert!(row.contains("read_file") || row.contains("shell"), "{row}");
    // New rows do not pull the selection away (End follows again).
    h.call("late", "list_dir", json!({"path": "."}));
    assert_eq!(h.app.timeline.selected_position(), Some(clicked));

    let (x, y) = inside(p.stack, 2);
    h.click(x, y);
    assert_eq!(h.app.focus(), Focus::Stack);
    assert_eq!(h.app.stack.selected(), Some("s2"));

    // A message in the chat: selected for copying; `y` copies it.
    let screen = h.text();
    let row = screen
        .lines()
        .position(|l| l.contains("paragraph 38 of a long answer"))
        .unwrap() as u16;
    h.click(5, row);
    assert_eq!(h.app.focus(), Focus::Chat);
    assert!(h.app.chat.selected().is_some());
    let text = copied(&h.tap(KeyCode::Char('y')));
    assert!(
        text.starts_with("paragraph 0 of a long answer\n\n"),
        "{text:?}"
    );
    assert!(text.contains("paragraph 39"), "the whole answer: {text:?}");
    assert!(h.text().contains("copied"), "the flash says so");
    assert_eq!(h.app.composer_text(), "", "y was not typed");

    // A click on the composer lets go of it.
    h.click(5, p.chat.unwrap().bottom() - 2);
    assert_eq!(h.app.chat.selected(), None);
    assert_eq!(h.app.focus(), Focus::Chat);
}

#[test]
fn alt_up_selects_the_newest_message_and_y_copies_its_markdown_source() {
    let mut h = Harness::new();
    h.start();
    h.say("Use **this**:\n\n```sh\ncargo test\n```\n");
    h.text();
    assert!(h.tap(KeyCode::Char('y')).is_empty());
    assert_eq!(h.app.composer_text(), "y", "no selection: y is typed");
    h.tap(KeyCode::Backspace);

    h.press(KeyCode::Up, KeyModifiers::ALT);
    let source = copied(&h.tap(KeyCode::Char('y')));
    assert_eq!(source, "Use **this**:\n\n```sh\ncargo test\n```\n");
    // ↑ walks to the user's message.
    h.tap(KeyCode::Up);
    assert_eq!(copied(&h.tap(KeyCode::Char('y'))), "go");
    // Any other key lets go and does what it does.
    h.tap(KeyCode::Char('x'));
    assert_eq!(h.app.chat.selected(), None);
    assert_eq!(h.app.composer_text(), "x");
    // Esc lets go without cancelling the run.
    h.press(KeyCode::Up, KeyModifiers::ALT);
    assert!(h.tap(KeyCode::Esc).is_empty());
    assert_eq!(h.app.chat.selected(), None);
    assert!(h.app.is_busy());
}

#[test]
fn with_an_approval_docked_y_approves_and_no_message_stays_selected() {
    let mut h = Harness::new();
    h.start();
    h.say("I will write a file.");
    h.press(KeyCode::Up, KeyModifiers::ALT);
    assert!(h.app.chat.selected().is_some());
    h.call("w1", "write_file", json!({"path": "a.txt"}));
    h.event(EventData::ApprovalRequested {
        id: "w1".into(),
        name: "write_file".into(),
        arguments: json!({"path": "a.txt"}),
        position: 1,
        of: 1,
        note: None,
        diff: None,
        sandbox: None,
    });
    h.text();
    assert!(
        h.tap(KeyCode::Char('y')).is_empty(),
        "y picks, it does not copy"
    );
    let commands = h.tap(KeyCode::Enter);
    assert!(
        matches!(
            commands.as_slice(),
            [Command::Op(taco::orchestrator::task::Op::Approve { .. })]
        ),
        "{commands:?}"
    );
    assert_eq!(h.app.chat.selected(), None);
}

#[test]
fn y_in_the_timeline_detail_copies_the_payload_with_keys_masked() {
    let secret = "sk-test-0123456789abcdef";
    let info = AppInfo {
        secrets: Arc::new(Secrets::new([secret.to_string()])),
        ..info()
    };
    let mut h = Harness::new();
    h.app = App::new(info, h.t0);
    h.start();
    h.call(
        "c1",
        "shell",
        json!({"command": format!("curl -H 'Bearer {secret}' x")}),
    );
    h.text();
    let (x, y) = inside(panes().timeline, 0);
    h.click(x, y);
    h.tap(KeyCode::End);
    h.tap(KeyCode::Enter);
    assert!(h.app.detail_open());
    let text = copied(&h.tap(KeyCode::Char('y')));
    assert!(text.starts_with("→ tool_call\n"), "{text:?}");
    assert!(
        text.contains("\"command\": \"curl -H 'Bearer sk-…***' x\""),
        "{text:?}"
    );
    assert!(!text.contains(secret), "the key is masked: {text:?}");
    assert!(h.app.detail_open(), "copying leaves the view open");

    // Inside tmux the same copy is also wrapped for passthrough.
    h.app.set_clipboard(Route::Tmux);
    let commands = h.tap(KeyCode::Char('y'));
    let Some(Command::Copy(osc)) = commands.first() else {
        panic!("a copy: {commands:?}");
    };
    let bytes = osc.bytes();
    let wrapped = bytes.windows(7).position(|w| w == b"\x1bPtmux;").unwrap();
    assert!(bytes[..wrapped].ends_with(b"\x07"), "plain first");
    assert!(bytes.ends_with(b"\x1b\\"));
}

#[test]
fn snapshot_the_chat_flags_a_slow_call_like_the_stack() {
    let info = AppInfo {
        stack_flags: FlagSettings {
            slow_after: [("shell".to_string(), Duration::from_secs(2))].into(),
            ..FlagSettings::default()
        },
        ..info()
    };
    let mut h = Harness::new();
    h.app = App::new(info, h.t0);
    h.start();
    h.call("s1", "shell", json!({"command": "sleep 100"}));
    h.push("s1", "shell", FrameState::Running);
    let early = buffer_text(h.screen(120, 12).backend().buffer());
    assert!(!early.contains('⚠'), "{early}");
    h.ms += 3_000;
    let terminal = h.screen(120, 12);
    let screen = buffer_text(terminal.backend().buffer());
    let flagged: Vec<&str> = screen.lines().filter(|l| l.contains("⚠ slow")).collect();
    assert_eq!(flagged.len(), 2, "chat and stack: {screen}");
    assert!(flagged.iter().all(|l| l.contains("shell")), "{screen}");
    insta::assert_snapshot!(terminal.backend());
    // Its end ends the flag.
    h.result("s1", "shell", json!({"exit_code": 0}));
    h.event(EventData::StackPop(StackFrame {
        id: "s1".into(),
        parent: None,
        name: "shell".into(),
        summary: "s1 summary".into(),
        state: FrameState::Done,
    }));
    let done = buffer_text(h.screen(120, 12).backend().buffer());
    assert!(!done.contains('⚠'), "{done}");
}

/// A screen that uses most colours: a user message, an answer with code, finished and failed
/// calls, a running call, the timeline.
fn themed(theme: Theme) -> String {
    let mut h = Harness::new();
    h.app.set_theme(theme);
    h.start();
    h.say("Here is `code` and a **heading**:\n\n# Plan\n\n```rust\nfn main() {}\n```\n");
    h.call("r1", "read_file", json!({"path": "a.txt"}));
    h.result("r1", "read_file", json!({"content": "x"}));
    h.call("s1", "shell", json!({"command": "make"}));
    h.push("s1", "shell", FrameState::Running);
    let terminal = h.screen(100, 20);
    styled(terminal.backend().buffer())
}

/// Each row's text, then its styled runs: `x..x fg bg +MODIFIERS`.
fn styled(buf: &Buffer) -> String {
    let area = buf.area;
    let mut out = String::new();
    for y in area.top()..area.bottom() {
        let mut text = String::new();
        let mut runs: Vec<(u16, u16, String)> = Vec::new();
        for x in area.left()..area.right() {
            let cell = &buf[(x, y)];
            text.push_str(cell.symbol());
            let style = cell.style();
            let mut label = String::new();
            if style.fg.is_some_and(|c| c != Color::Reset) {
                label.push_str(&format!(" fg={}", color(style.fg)));
            }
            if style.bg.is_some_and(|c| c != Color::Reset) {
                label.push_str(&format!(" bg={}", color(style.bg)));
            }
            for (m, name) in [
                (Modifier::BOLD, "bold"),
                (Modifier::ITALIC, "italic"),
                (Modifier::REVERSED, "reversed"),
                (Modifier::UNDERLINED, "underlined"),
                (Modifier::DIM, "dim"),
            ] {
                if style.add_modifier.contains(m) {
                    label.push_str(&format!(" +{name}"));
                }
            }
            match runs.last_mut() {
                Some((_, end, last)) if *last == label && *end == x => *end = x + 1,
                _ => runs.push((x, x + 1, label)),
            }
        }
        out.push_str(text.trim_end());
        out.push('\n');
        for (from, to, label) in runs.into_iter().filter(|r| !r.2.is_empty()) {
            out.push_str(&format!("    {from}..{to}{label}\n"));
        }
    }
    out
}

fn color(color: Option<Color>) -> String {
    match color {
        Some(Color::Indexed(i)) => i.to_string(),
        Some(other) => format!("{other:?}"),
        None => "-".into(),
    }
}

#[test]
fn snapshot_the_same_screen_in_the_dark_theme() {
    insta::assert_snapshot!(themed(Theme::dark()));
}

#[test]
fn snapshot_the_same_screen_in_the_light_theme() {
    let light = themed(Theme::light());
    let dark = themed(Theme::dark());
    let text = |s: &str| -> Vec<String> {
        (s.lines())
            .filter(|l| !l.starts_with("    "))
            .map(String::from)
            .collect()
    };
    assert_eq!(
        text(&light),
        text(&dark),
        "the same screen, only coloured otherwise"
    );
    assert_ne!(light, dark);
    insta::assert_snapshot!(light);
}
