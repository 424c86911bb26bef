//! The smaller instruments of issue 27 through the whole app: queued messages listed above the
//! composer (↑ takes the newest back, Ctrl-D drops it), a focused pane's letters never eating
//! the start of a sentence, the status line keeping the focused pane's keys at 80 columns,
//! and the notification the app asks for when a dialog waits for a user who looks elsewhere.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use ratatui::crossterm::event::{KeyCode, KeyModifiers};
use serde_json::json;
use taco::conversation::Usage;
use taco::event::{EventData, FrameState, InputKind, InputRequest, StackFrame};
use taco::orchestrator::task::Op;
use taco::tui::app::Command;
use taco::tui::clipboard::Route;
use taco::tui::layout::Focus;
use taco::tui::notify::{Desktop, Notifier, NotifyChoice};

use crate::support;
use support::app::Harness;

/// The steps of this file's stories, on the shared harness.
trait TuiInstrumentsSteps {
    fn start(&mut self, prompt: &str);
    fn finish(&mut self) -> Vec<Command>;
    fn text(&mut self, width: u16, height: u16) -> String;
    fn running(&mut self, id: &str);
    fn approval(&mut self, id: &str, name: &str) -> Vec<Command>;
}

impl TuiInstrumentsSteps for Harness {
    /// `prompt` sent and its run started.
    fn start(&mut self, prompt: &str) {
        self.type_text(prompt);
        self.key(KeyCode::Enter);
        self.event(EventData::RunStarted {
            prompt: prompt.into(),
            provider: "demo".into(),
            model: "demo".into(),
            max_turns: 10,
            trace_parent: None,
        });
    }

    fn finish(&mut self) -> Vec<Command> {
        self.event(EventData::Final {
            content: "done".into(),
            turns: 1,
            usage: Usage::default(),
        })
    }

    fn text(&mut self, width: u16, height: u16) -> String {
        self.screen(width, height).backend().to_string()
    }

    /// A running shell call `id`, on the stack.
    fn running(&mut self, id: &str) {
        self.event(EventData::ToolCall {
            turn: 1,
            id: id.into(),
            name: "shell".into(),
            arguments: json!({"command": "sleep 100"}),
            parent: None,
            sandbox: None,
        });
        self.event(EventData::StackPush(StackFrame {
            id: id.into(),
            parent: None,
            name: "shell".into(),
            summary: "command=sleep 100".into(),
            state: FrameState::Running,
        }));
    }

    fn approval(&mut self, id: &str, name: &str) -> Vec<Command> {
        self.event(EventData::ApprovalRequested {
            id: id.into(),
            name: name.into(),
            arguments: json!({"command": "make"}),
            position: 1,
            of: 1,
            note: None,
            diff: None,
            sandbox: None,
        })
    }
}

fn notified(commands: &[Command]) -> Vec<Vec<u8>> {
    (commands.iter())
        .filter_map(|c| match c {
            Command::Notify(escapes) => Some(escapes.bytes().to_vec()),
            _ => None,
        })
        .collect()
}

// ---- 7a: queued messages ------------------------------------------------------------------

#[test]
fn queued_messages_are_listed_above_the_composer_oldest_first() {
    let mut h = Harness::new();
    h.start("first");
    for text in ["second thing", "third\nwith a second line"] {
        h.type_text(text.split('\n').next().unwrap());
        if text.contains('\n') {
            h.key_with(KeyCode::Enter, KeyModifiers::SHIFT);
            h.type_text("with a second line");
        }
        assert_eq!(h.key(KeyCode::Enter), vec![], "queued, not sent");
    }
    let screen = h.text(100, 30);
    let second = screen.find("◌ queued: second thing").expect(&screen);
    let third = screen
        .find("◌ queued: third …  ↑ edit · Ctrl-D drop")
        .expect(&screen);
    let composer = screen.find("queue a message").expect(&screen);
    assert!(second < third && third < composer, "{screen}");
    // Cut to the width, one row each.
    let narrow = h.text(40, 30);
    assert!(narrow.contains("◌ queued: second thing"), "{narrow}");
    assert!(!narrow.contains("Ctrl-D drop"), "{narrow}");
    // Under a docked dialog ↑ scrolls the dialog: the keys are not offered then.
    h.running("a");
    h.approval("a", "shell");
    let asked = h.text(100, 40);
    assert!(asked.contains("◌ queued: third …"), "{asked}");
    assert!(!asked.contains("↑ edit"), "{asked}");
}

#[test]
fn up_in_an_empty_composer_takes_the_newest_queued_message_back_to_edit() {
    let mut h = Harness::new();
    h.start("first");
    h.type_text("second");
    h.key(KeyCode::Enter);
    h.type_text("thrid");
    h.key(KeyCode::Enter);
    assert_eq!(h.app.queued().collect::<Vec<_>>(), ["second", "thrid"]);
    h.key(KeyCode::Up);
    assert_eq!(h.app.composer_text(), "thrid");
    assert_eq!(h.app.queued().collect::<Vec<_>>(), ["second"]);
    // Edited and queued again: it goes after the others, as sent now.
    h.key(KeyCode::Backspace);
    h.key(KeyCode::Backspace);
    h.key(KeyCode::Backspace);
    h.type_text("ird");
    h.key(KeyCode::Enter);
    assert_eq!(h.app.queued().collect::<Vec<_>>(), ["second", "third"]);
    // With text in the composer ↑ is the editor's (history), not the queue's.
    h.type_text("draft");
    h.key(KeyCode::Up);
    assert_eq!(h.app.queued().count(), 2);
    assert_eq!(
        h.finish(),
        [Command::Op(Op::Submit("second".into()))],
        "the oldest goes first"
    );
}

#[test]
fn a_big_paste_comes_back_as_its_chip_not_as_the_whole_text() {
    let mut h = Harness::new();
    h.start("first");
    let pasted: String = (1..=40).map(|i| format!("line {i}\n")).collect();
    let now = h.now();
    h.app.on_paste(&pasted, now);
    h.key(KeyCode::Enter);
    assert_eq!(h.app.queued().next().map(str::len), Some(pasted.len()));
    h.key(KeyCode::Up);
    assert_eq!(
        h.app.composer_text(),
        pasted,
        "the chip stands for the paste"
    );
    let screen = h.text(100, 30);
    assert!(screen.contains("[pasted 41 lines]"), "{screen}");
}

#[test]
fn ctrl_d_on_an_empty_composer_drops_the_newest_queued_message() {
    let mut h = Harness::new();
    h.start("first");
    h.type_text("keep");
    h.key(KeyCode::Enter);
    h.type_text("drop me");
    h.key(KeyCode::Enter);
    h.key_with(KeyCode::Char('d'), KeyModifiers::CONTROL);
    assert_eq!(h.app.queued().collect::<Vec<_>>(), ["keep"]);
    let screen = h.text(120, 30);
    assert!(
        screen.contains("dropped the last queued message"),
        "{screen}"
    );
    assert!(!screen.contains("drop me"), "{screen}");
    // In a composer with text Ctrl-D is the editor's (delete a character).
    h.type_text("ab");
    h.key(KeyCode::Home);
    h.key_with(KeyCode::Char('d'), KeyModifiers::CONTROL);
    assert_eq!(h.app.composer_text(), "b");
    assert_eq!(h.app.queued().collect::<Vec<_>>(), ["keep"]);
}

// ---- 7d: a focused pane's letters do not eat a sentence ----------------------------------

#[test]
fn typing_fix_with_the_timeline_focused_goes_to_the_composer_whole() {
    let mut h = Harness::new();
    h.start("first");
    h.screen(160, 30);
    // Shift-Tab in the chat cycles the mode: Tab twice reaches the timeline.
    h.key(KeyCode::Tab);
    h.key(KeyCode::Tab);
    assert_eq!(h.app.focus(), Focus::Timeline);
    let filter = h.app.timeline.filter_label();
    assert_eq!(h.type_text("fix"), vec![]);
    assert_eq!(h.app.composer_text(), "fix");
    assert_eq!(h.app.timeline.filter_label(), filter, "the filter stays");
    assert_eq!(h.app.focus(), Focus::Chat);
}

#[test]
fn once_the_timeline_is_used_its_letters_act_until_it_loses_the_focus() {
    let mut h = Harness::new();
    h.start("first");
    h.screen(160, 30);
    // Shift-Tab in the chat cycles the mode: Tab twice reaches the timeline.
    h.key(KeyCode::Tab);
    h.key(KeyCode::Tab);
    let filter = h.app.timeline.filter_label();
    h.key(KeyCode::Up);
    h.key(KeyCode::Char('f'));
    assert_ne!(h.app.timeline.filter_label(), filter, "f filters now");
    assert_eq!(h.app.composer_text(), "");
    // Away and back: not used again until an arrow or a click.
    h.key(KeyCode::Tab);
    // Shift-Tab in the chat cycles the mode: Tab twice reaches the timeline.
    h.key(KeyCode::Tab);
    h.key(KeyCode::Tab);
    assert_eq!(h.app.focus(), Focus::Timeline);
    let now = h.app.timeline.filter_label();
    h.type_text("fine");
    assert_eq!(h.app.composer_text(), "fine");
    assert_eq!(h.app.timeline.filter_label(), now);
}

#[test]
fn typing_cat_with_the_stack_focused_never_cancels_its_selected_call() {
    let mut h = Harness::new();
    h.start("first");
    h.running("a");
    h.screen(160, 30);
    h.key(KeyCode::Tab);
    assert_eq!(h.app.focus(), Focus::Stack);
    h.key(KeyCode::Up);
    assert_eq!(h.app.stack.selected(), Some("a"));
    // The selection stays while the user goes elsewhere and comes back.
    h.key(KeyCode::Tab);
    h.key(KeyCode::BackTab);
    assert_eq!(h.app.focus(), Focus::Stack);
    assert_eq!(h.type_text("cat"), vec![], "nothing cancelled");
    assert_eq!(h.app.composer_text(), "cat");
    // Used again (an arrow), `c` is the stack's.
    h.key(KeyCode::Tab);
    assert_eq!(h.app.focus(), Focus::Stack);
    h.key(KeyCode::Down);
    assert_eq!(
        h.key(KeyCode::Char('c')),
        vec![Command::Op(Op::CancelCall("a".into()))]
    );
}

#[test]
fn a_click_in_a_pane_is_using_it() {
    use ratatui::crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
    let mut h = Harness::new();
    h.start("first");
    let screen = h.text(160, 30);
    // The timeline's title row: a click there focuses and uses the pane.
    let row = screen
        .lines()
        .position(|l| l.contains("timeline ·"))
        .unwrap();
    let col = screen
        .lines()
        .nth(row)
        .unwrap()
        .chars()
        .position(|c| c == '·');
    h.app.on_mouse(MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column: col.unwrap() as u16,
        row: row as u16 + 2,
        modifiers: KeyModifiers::NONE,
    });
    assert_eq!(h.app.focus(), Focus::Timeline);
    let filter = h.app.timeline.filter_label();
    h.key(KeyCode::Char('f'));
    assert_ne!(h.app.timeline.filter_label(), filter);
}

// ---- 7b: the status line at 80 and 120 columns -------------------------------------------

#[test]
fn the_status_line_keeps_the_focused_panes_keys_at_80_and_120_columns() {
    let mut h = Harness::new();
    h.start("first");
    h.running("a");
    h.type_text("and then");
    h.key(KeyCode::Enter);
    // Past the flash that said it was queued.
    h.ms += 4000;
    for focus_keys in [0, 1, 2] {
        for _ in 0..focus_keys {
            h.key(KeyCode::Tab);
        }
        for width in [80u16, 120] {
            let screen = h.text(width, 24);
            let status = screen.lines().last().unwrap().to_string();
            let keys: &[&str] = match h.app.focus() {
                Focus::Chat => &["Esc cancel"],
                Focus::Stack => &["↑↓ scroll"],
                Focus::Timeline => &["↑↓ select", "Enter details", "f filter"],
            };
            for key in keys {
                assert!(status.contains(key), "{width}: {key:?} in {status}");
            }
            assert!(status.contains("running tool"), "{status}");
            let name = format!("status_{:?}_{width}", h.app.focus()).to_lowercase();
            insta::assert_snapshot!(name, status);
        }
        while h.app.focus() != Focus::Chat {
            h.key(KeyCode::Tab);
        }
    }
}

// ---- 6: the app asks for a notification ---------------------------------------------------

#[test]
fn a_dialog_that_opens_while_the_terminal_is_unfocused_asks_for_one_notification() {
    let mut h = Harness::new();
    h.app.set_notifier(Notifier::new(
        NotifyChoice::Auto,
        Desktop::Osc9,
        Route::Direct,
    ));
    h.start("first");
    h.running("a");
    // Looking: nothing.
    h.app.on_focus(true);
    assert_eq!(notified(&h.approval("a", "shell")), Vec::<Vec<u8>>::new());
    h.decided("a");
    // Away: the next dialog asks once, however many events it stays open for.
    h.app.on_focus(false);
    h.running("b");
    let told = notified(&h.approval("b", "web\x1b]0;x\x07_fetch"));
    assert_eq!(
        told,
        [b"\x1b]9;taco: approve web]0,x_fetch?\x07\x07".to_vec()]
    );
    assert_eq!(
        notified(&h.approval("b", "web_fetch")),
        Vec::<Vec<u8>>::new()
    );
    assert_eq!(notified(&h.running_events()), Vec::<Vec<u8>>::new());
    h.decided("b");
    // A form's question is a dialog of its own.
    let asked = h.event(EventData::InputRequested(InputRequest {
        id: "q1".into(),
        kind: InputKind::Submit,
        frame: "b".into(),
        tool: "form".into(),
        prompt: "Send?".into(),
        parameter: None,
        description: None,
        value_type: None,
        depth: None,
        form: None,
    }));
    assert_eq!(notified(&asked).len(), 1, "{asked:?}");
    // And the run's end, once.
    let ended = h.finish();
    assert_eq!(
        notified(&ended),
        [b"\x1b]9;taco: the run finished\x07\x07".to_vec()]
    );
}

impl Harness {
    fn decided(&mut self, id: &str) {
        self.event(EventData::ApprovalDecided {
            id: id.into(),
            name: "shell".into(),
            decision: taco::event::Decision::Approved,
            scope: taco::event::Scope::Once,
            reason: None,
            prefix: None,
        });
    }

    /// An event that changes nothing a notification is about.
    fn running_events(&mut self) -> Vec<Command> {
        self.event(EventData::Delta {
            kind: taco::event::DeltaKind::Text,
            text: "still here".into(),
        })
    }
}
