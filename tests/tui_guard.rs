//! Typing never answers a dialog (issue 26). A dialog that opens while the user types, or
//! while a message is unsent, waits (keys go on to the composer) until the user moves to it
//! with Tab or, with nothing unsent, stops typing for 2 s; a dialog that takes text waits for
//! Tab. An answer is a letter and Enter; a letter followed by more typing is typing. The
//! sweep below types sentences at every speed from 60 to 1,500 ms a key, starting anywhere
//! from 3 s before to 5 s after each kind of dialog opens, and checks that nothing was
//! answered and the sentence arrived whole. Time is the harness's clock, walked by hand.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use std::sync::Arc;
use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;
use taco::event::{Confinement, Event, EventData, InputKind, InputRequest, Scope};
use taco::orchestrator::approval::ApprovalAnswer;
use taco::orchestrator::task::Op;
use taco::session::Entry;
use taco::tui::app::{App, AppInfo, Command};

struct Harness {
    app: App,
    t0: Instant,
    ms: u64,
}

impl Harness {
    fn with_guard(ms: u64) -> Self {
        let t0 = Instant::now();
        let info = AppInfo {
            provider: "demo".into(),
            model: "demo".into(),
            max_turns: 10,
            workdir: "/work/project".into(),
            dialog_guard: Duration::from_millis(ms),
            ..Default::default()
        };
        Self {
            app: App::new(info, t0),
            t0,
            ms: 0,
        }
    }

    /// The default quiet (2 s), with a request running.
    fn running() -> Self {
        let mut h = Self::with_guard(2000);
        h.event(started());
        h
    }

    fn now(&self) -> Instant {
        self.t0 + Duration::from_millis(self.ms)
    }

    fn event(&mut self, data: EventData) -> Vec<Command> {
        let event = Event {
            timestamp: 1_700_000_000_000 + self.ms,
            request_id: Arc::from("run-1"),
            data,
        };
        let now = self.now();
        self.app.on_event(&event, now)
    }

    fn key(&mut self, code: KeyCode) -> Vec<Command> {
        let now = self.now();
        self.app
            .on_key(KeyEvent::new(code, KeyModifiers::NONE), now)
    }

    /// A letter, then Enter: a deliberate answer.
    fn answer(&mut self, letter: char) -> Vec<Command> {
        let mut sent = self.key(KeyCode::Char(letter));
        sent.extend(self.key(KeyCode::Enter));
        sent
    }

    /// Types `text` a key every `gap_ms`, returning everything the keys sent.
    fn type_slowly(&mut self, text: &str, gap_ms: u64) -> Vec<Command> {
        let mut sent = Vec::new();
        for c in text.chars() {
            self.ms += gap_ms;
            sent.extend(self.key(KeyCode::Char(c)));
        }
        sent
    }

    fn screen(&mut self, width: u16, height: u16) -> String {
        format!("{}", self.terminal(width, height).backend())
    }

    fn terminal(&mut self, width: u16, height: u16) -> Terminal<TestBackend> {
        let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
        let now = self.now();
        terminal
            .draw(|f| self.app.render(f.area(), f.buffer_mut(), now))
            .unwrap();
        terminal
    }
}

fn started() -> EventData {
    EventData::RunStarted {
        prompt: "p".into(),
        provider: "demo".into(),
        model: "demo".into(),
        max_turns: 10,
        trace_parent: None,
    }
}

fn approval(id: &str, name: &str, sandbox: Option<Confinement>, of: usize) -> EventData {
    EventData::ApprovalRequested {
        id: id.into(),
        name: name.into(),
        arguments: json!({"path": "notes.md", "command": "rm -rf build"}),
        position: 1,
        of,
        note: None,
        diff: None,
        sandbox,
    }
}

fn question(id: &str, kind: InputKind) -> EventData {
    EventData::InputRequested(InputRequest {
        id: id.into(),
        kind,
        frame: "f".into(),
        tool: "write_file".into(),
        prompt: "Which file?".into(),
        parameter: (kind == InputKind::Parameter).then(|| "path".into()),
        description: (kind == InputKind::Submit).then(|| "name: alice".into()),
        value_type: None,
        depth: (kind == InputKind::DepthLimit).then_some(20),
        form: None,
    })
}

/// A server's form: a name (required) and a yes/no.
fn form(id: &str) -> EventData {
    let schema = json!({
        "type": "object",
        "properties": {"name": {"type": "string"}, "ok": {"type": "boolean", "default": true}},
        "required": ["name"]
    });
    EventData::InputRequested(InputRequest {
        id: id.into(),
        kind: InputKind::Form,
        frame: "f".into(),
        tool: "MCP server fixture".into(),
        prompt: "MCP server fixture asks: Who are you?".into(),
        parameter: None,
        description: None,
        value_type: None,
        depth: None,
        form: Some(taco::form::FormSpec::parse(&schema, &[]).unwrap()),
    })
}

fn approve(id: &str, scope: Scope) -> Command {
    Command::Op(Op::Approve {
        id: id.into(),
        answer: ApprovalAnswer::approve(scope),
    })
}

/// Whether a command answers a dialog.
fn answers(command: &Command) -> bool {
    matches!(
        command,
        Command::Op(
            Op::Approve { .. } | Op::DecideBatch { .. } | Op::Answer { .. } | Op::Fill { .. }
        )
    )
}

/// Every dialog a run can open.
#[derive(Debug, Clone, Copy)]
enum Dialog {
    Write,
    Escalation,
    Batch,
    Parameter,
    DepthLimit,
    Form,
}

const DIALOGS: [Dialog; 6] = [
    Dialog::Write,
    Dialog::Escalation,
    Dialog::Batch,
    Dialog::Parameter,
    Dialog::DepthLimit,
    Dialog::Form,
];

fn open(h: &mut Harness, dialog: Dialog) {
    match dialog {
        Dialog::Write => h.event(approval("c1", "write_file", None, 1)),
        Dialog::Escalation => h.event(approval("c1", "shell", Some(Confinement::Unsandboxed), 1)),
        Dialog::Batch => {
            h.event(approval("c1", "write_file", None, 2));
            h.event(approval("c2", "shell", None, 2))
        }
        Dialog::Parameter => h.event(question("q1", InputKind::Parameter)),
        Dialog::DepthLimit => h.event(question("q1", InputKind::DepthLimit)),
        Dialog::Form => h.event(form("q1")),
    };
}

/// Sentences a person types, each starting with a letter some dialog answers to.
const SENTENCES: [&str; 6] = [
    "yes please",
    "no wait",
    "also try this",
    "then the password is hunter2",
    "Yes, N/A",
    "please stop",
];

/// Key gaps from a fast typist (60 ms) to a slow one (1,500 ms).
const GAPS: [u64; 10] = [60, 100, 160, 250, 300, 400, 600, 800, 1100, 1500];

/// A user sends a message at 0 ms, the run starts, `dialog` opens at `at` ms, and the user
/// types `sentence` and Enter, a key every `gap` ms from `start` ms. Returns what was sent
/// and the app.
fn scenario(
    dialog: Dialog,
    at: u64,
    start: u64,
    gap: u64,
    sentence: &str,
) -> (Vec<Command>, Harness) {
    let mut h = Harness::with_guard(2000);
    h.type_slowly("go", 30);
    let mut sent = h.key(KeyCode::Enter);
    h.ms += 40;
    h.event(started());
    let keys: Vec<(u64, KeyCode)> = (sentence.chars().map(KeyCode::Char))
        .chain([KeyCode::Enter])
        .enumerate()
        .map(|(i, code)| (start + i as u64 * gap, code))
        .collect();
    let mut opened = false;
    for (t, code) in keys {
        if !opened && at <= t {
            h.ms = h.ms.max(at);
            open(&mut h, dialog);
            opened = true;
        }
        h.ms = h.ms.max(t);
        sent.extend(h.key(code));
    }
    if !opened {
        h.ms = h.ms.max(at);
        open(&mut h, dialog);
    }
    (sent, h)
}

#[test]
fn typing_never_answers_a_dialog_at_any_speed_or_moment() {
    let mut checked = 0;
    for dialog in DIALOGS {
        for at in [150, 1200, 2600, 7000] {
            for gap in GAPS {
                for sentence in SENTENCES {
                    // From 3 s before the dialog opens to 5 s after, every 400 ms.
                    for step in 0..=20u64 {
                        let Some(start) = (at + step * 400).checked_sub(3000) else {
                            continue;
                        };
                        if start < 100 {
                            continue;
                        }
                        let (sent, h) = scenario(dialog, at, start, gap, sentence);
                        let what = format!(
                            "{dialog:?} at {at} ms, {sentence:?} from {start} ms, a key every {gap} ms"
                        );
                        assert!(!sent.iter().any(answers), "{what}: answered {sent:?}");
                        assert_eq!(
                            h.app.queued().last(),
                            Some(sentence),
                            "{what}: the sentence is the user's next message"
                        );
                        checked += 1;
                    }
                }
            }
        }
    }
    assert!(checked > 24_000, "{checked} cases");
}

#[test]
fn the_continue_question_takes_no_typing_either() {
    for gap in GAPS {
        for sentence in SENTENCES {
            for after in [100, 700, 2500, 6000] {
                let mut h = Harness::running();
                h.event(question("q1", InputKind::Parameter));
                // The user moves to the question and sends it empty: "Continue with current
                // task? (y/n)".
                h.ms += 3000;
                h.key(KeyCode::Tab);
                h.key(KeyCode::Enter);
                assert!(h.app.question_confirming());
                h.ms += after;
                let mut sent = h.type_slowly(sentence, gap);
                sent.extend(h.key(KeyCode::Enter));
                assert!(
                    !sent.iter().any(answers),
                    "{sentence:?} {gap} {after}: {sent:?}"
                );
                assert_eq!(h.app.queued().last(), Some(sentence));
                assert!(h.app.question_open());
            }
        }
    }
}

#[test]
fn a_waiting_dialog_says_why_and_tab_or_quiet_lets_the_user_answer() {
    let mut h = Harness::running();
    h.type_slowly("al", 100);
    h.event(approval("c1", "write_file", None, 1));
    assert!(h.app.dialog_gate(h.now()).holds());
    assert!(h.app.needs_tick(h.now()), "the countdown redraws");
    let screen = h.screen(110, 30);
    assert!(
        screen.contains("your message is unsent · Tab to answer"),
        "{screen}"
    );
    // A deliberate y while it waits goes to the message, and the status line says so.
    assert_eq!(h.key(KeyCode::Char('y')), []);
    assert_eq!(h.app.composer_text(), "aly");
    assert!(h.screen(110, 30).contains("Tab answers the dialog"));
    // Tab moves to it; y picks; Enter approves.
    assert_eq!(h.key(KeyCode::Tab), []);
    assert!(!h.app.dialog_gate(h.now()).holds());
    assert_eq!(h.key(KeyCode::Char('y')), []);
    assert!(h.app.dialog_armed());
    assert!(h.screen(110, 30).contains("approve this call once"));
    assert_eq!(h.key(KeyCode::Enter), [approve("c1", Scope::Once)]);
    assert_eq!(h.app.composer_text(), "aly", "the draft is kept");

    // With nothing unsent, 2 s of quiet is enough, counted down on the dialog.
    let mut h = Harness::running();
    h.type_slowly("x", 100);
    h.key(KeyCode::Backspace);
    h.event(approval("c1", "write_file", None, 1));
    assert!(
        h.screen(110, 30)
            .contains("keys active in 2.0 s · Tab: answer now")
    );
    h.ms += 1999;
    assert!(h.app.dialog_gate(h.now()).holds());
    h.ms += 1;
    assert!(!h.app.dialog_gate(h.now()).holds());
    assert_eq!(h.answer('a'), [approve("c1", Scope::Session)]);
}

#[test]
fn a_dialog_that_takes_text_waits_for_tab_and_a_form_is_sent_after_y_enter() {
    let mut h = Harness::running();
    h.ms += 10_000;
    h.event(question("q1", InputKind::Parameter));
    assert!(h.screen(110, 30).contains("press Tab to answer"));
    h.ms += 5000;
    assert_eq!(h.type_slowly("notes", 80), []);
    assert_eq!(h.app.composer_text(), "notes", "not the parameter line");
    assert_eq!(
        h.key(KeyCode::Enter),
        [],
        "the message is queued, not the answer"
    );
    h.key(KeyCode::Tab);
    assert_eq!(h.type_slowly("a.md", 80), []);
    assert_eq!(
        h.key(KeyCode::Enter),
        [Command::Op(Op::Answer {
            id: "q1".into(),
            value: Some("a.md".into())
        })]
    );
    // The form's confirmation follows straight on: it takes keys, y then Enter sends.
    h.ms += 50;
    h.event(EventData::InputAnswered {
        id: "q1".into(),
        value: Some("a.md".into()),
        form: None,
    });
    h.ms += 50;
    h.event(question("q2", InputKind::Submit));
    let screen = h.screen(110, 30);
    assert!(
        screen.contains("name: alice"),
        "what is sent shows:\n{screen}"
    );
    assert_eq!(h.key(KeyCode::Char('y')), []);
    assert!(h.screen(110, 30).contains("send these answers"));
    assert_eq!(
        h.key(KeyCode::Enter),
        [Command::Op(Op::Answer {
            id: "q2".into(),
            value: Some("y".into())
        })]
    );
    assert_eq!(h.app.queued().collect::<Vec<_>>(), ["notes"]);
}

#[test]
fn wide_answers_say_what_they_will_do_before_enter() {
    let mut h = Harness::running();
    h.ms += 5000;
    h.event(EventData::ApprovalRequested {
        id: "c1".into(),
        name: "shell".into(),
        arguments: json!({"command": "cargo test"}),
        position: 1,
        of: 2,
        note: None,
        diff: None,
        sandbox: None,
    });
    h.event(approval("c2", "write_file", None, 2));
    for (letter, says) in [
        ('a', "allow every shell call for the rest of the session"),
        ('t', "allow shell until this request ends"),
        ('p', "for the rest of the session, allows `cargo test …`"),
        ('Y', "approve all 2 calls of the batch, once each"),
        ('N', "deny all 2 calls of the batch"),
    ] {
        assert_eq!(h.key(KeyCode::Char(letter)), [], "{letter} only picks");
        let screen = h.screen(240, 40);
        assert!(screen.contains(says), "{letter}:\n{screen}");
        h.key(KeyCode::Esc);
        assert!(h.app.approval_open(), "Esc unpicks");
    }
}

#[test]
fn the_next_call_of_a_batch_follows_on_and_a_double_tap_approves_nothing_more() {
    let mut h = Harness::running();
    h.ms += 5000;
    h.event(approval("c1", "write_file", None, 2));
    h.event(approval("c2", "shell", None, 2));
    assert_eq!(h.answer('y'), [approve("c1", Scope::Once)]);
    // A second y right after (a double tap, key repeat) only picks for the next call.
    h.ms += 30;
    assert_eq!(h.key(KeyCode::Char('y')), []);
    h.ms += 30;
    assert_eq!(h.key(KeyCode::Char('y')), [], "yy is typing");
    assert!(h.app.approval_open());
    assert_eq!(h.app.composer_text(), "yy");
    h.key(KeyCode::Tab);
    assert_eq!(h.answer('y'), [approve("c2", Scope::Once)]);
}

#[test]
fn esc_enter_paste_and_arrows_while_a_dialog_waits_do_what_the_typist_meant() {
    let mut h = Harness::running();
    h.type_slowly("n", 50);
    h.event(approval("c1", "write_file", None, 1));
    h.ms += 50;
    assert_eq!(h.key(KeyCode::Esc), [], "Esc neither denies nor cancels");
    assert!(h.app.approval_open() && h.app.is_busy());
    h.type_slowly("ext", 50);
    assert_eq!(h.key(KeyCode::Enter), [], "Enter queues the message");
    assert_eq!(h.app.queued().collect::<Vec<_>>(), ["next"]);
    assert!(h.app.approval_open());
    h.app.on_paste("pasted y", h.now());
    assert_eq!(h.app.composer_text(), "pasted y");
    // Up would recall "next" into the composer; here it scrolls the dialog instead.
    assert_eq!(h.key(KeyCode::Up), []);
    assert_eq!(h.app.composer_text(), "pasted y");
    // Ctrl-C is deliberate: it cancels at once.
    let now = h.now();
    assert_eq!(
        h.app.on_key(
            KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL),
            now
        ),
        [Command::Op(Op::Cancel)]
    );
}

#[test]
fn a_paste_at_a_dialog_that_takes_keys_is_a_message() {
    let mut h = Harness::running();
    h.ms += 5000;
    h.event(approval("c1", "write_file", None, 1));
    h.key(KeyCode::Char('y'));
    h.app.on_paste("yes, and also", h.now());
    assert_eq!(h.app.composer_text(), "yes, and also");
    assert!(!h.app.dialog_armed(), "the picked y is dropped");
    assert_eq!(
        h.key(KeyCode::Enter),
        [],
        "Enter sends the message, approves nothing"
    );
    assert!(h.app.approval_open());
}

#[test]
fn zero_quiet_takes_keys_at_once_when_nothing_is_unsent() {
    let mut h = Harness::with_guard(0);
    h.event(started());
    h.type_slowly("abc", 10);
    h.event(approval("c1", "write_file", None, 1));
    assert!(h.app.dialog_gate(h.now()).holds(), "abc is unsent");
    for _ in 0..3 {
        h.key(KeyCode::Backspace);
    }
    h.event(approval("c2", "write_file", None, 1));
    h.key(KeyCode::Tab);
    // A turn grant answers every waiting call of that tool.
    assert_eq!(
        h.answer('t'),
        [approve("c1", Scope::Turn), approve("c2", Scope::Turn)]
    );
}

#[test]
fn a_session_that_ended_in_a_dialog_leaves_no_gate_behind() {
    let mut h = Harness::with_guard(2000);
    let event = |data| {
        Entry::Event(Event {
            timestamp: 1_700_000_000_000,
            request_id: Arc::from("run-1"),
            data,
        })
    };
    let entries = [event(started()), event(approval("c1", "shell", None, 1))];
    let now = h.now();
    h.app.replay(&entries, now);
    assert!(!h.app.approval_open());
    assert!(!h.app.dialog_gate(now).holds());
    h.key(KeyCode::Char('x'));
    assert_eq!(h.app.composer_text(), "x");
}

#[test]
fn snapshot_waiting_and_picked_approval() {
    let mut h = Harness::running();
    h.type_slowly("also t", 100);
    h.event(approval("c1", "write_file", None, 1));
    h.type_slowly("ry", 100);
    // Mid-spinner frame, so the status line renders the same on every run.
    h.ms = (h.ms / 100 + 1) * 100 + 50;
    insta::assert_snapshot!("waiting", h.screen(110, 28));
    h.key(KeyCode::Tab);
    h.key(KeyCode::Char('a'));
    insta::assert_snapshot!("picked", h.screen(110, 28));
}

#[test]
fn a_click_on_a_waiting_dialog_moves_to_it() {
    use ratatui::crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
    let mut h = Harness::running();
    h.type_slowly("draft", 100);
    h.event(approval("c1", "write_file", None, 1));
    let screen = h.screen(110, 30);
    assert!(h.app.dialog_gate(h.now()).holds());
    let row = screen
        .lines()
        .position(|l| l.contains("path: notes.md"))
        .expect("the dialog is drawn") as u16;
    h.app.on_mouse(MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column: 10,
        row,
        modifiers: KeyModifiers::NONE,
    });
    assert!(!h.app.dialog_gate(h.now()).holds(), "the click moved to it");
    assert_eq!(h.answer('y'), [approve("c1", Scope::Once)]);
    assert_eq!(h.app.composer_text(), "draft");
}

#[test]
fn a_form_waits_for_tab_then_takes_its_fields_and_answers_whole() {
    let mut h = Harness::running();
    h.event(form("q1"));
    let screen = h.screen(100, 30);
    assert!(
        screen.contains("press Tab to answer") && screen.contains("Who are you?"),
        "{screen}"
    );
    // Typed before the user moved to it: the composer's.
    h.type_slowly("hi", 100);
    assert_eq!(h.app.composer_text(), "hi");
    assert_eq!(h.key(KeyCode::Tab), []);
    let sent = h.type_slowly("Ann", 100);
    assert!(sent.is_empty(), "{sent:?}");
    assert_eq!(h.app.composer_text(), "hi", "the name went into the form");
    // Tab moves through the fields to the buttons; Enter accepts the whole form.
    assert!(h.screen(100, 30).contains("1 of 2"));
    h.key(KeyCode::Tab);
    assert!(h.screen(100, 30).contains("2 of 2"));
    h.key(KeyCode::Tab);
    let sent = h.key(KeyCode::Enter);
    let want = taco::tools::AskReply::Accept(
        json!({"name": "Ann", "ok": true})
            .as_object()
            .unwrap()
            .clone(),
    );
    assert_eq!(
        sent,
        [Command::Op(Op::Fill {
            id: "q1".into(),
            answer: want
        })]
    );
    assert!(
        !h.screen(100, 30).contains("Who are you?"),
        "the form closed"
    );
}

#[test]
fn esc_at_a_form_cancels_it_and_d_enter_declines_it() {
    let mut h = Harness::running();
    h.event(form("q1"));
    h.key(KeyCode::Tab);
    assert_eq!(
        h.key(KeyCode::Esc),
        [Command::Op(Op::Fill {
            id: "q1".into(),
            answer: taco::tools::AskReply::Cancel
        })]
    );
    // Long after: the next form waits for Tab again; Shift-Tab from the first field wraps
    // to the buttons.
    h.ms += 5000;
    h.event(form("q2"));
    h.key(KeyCode::Tab);
    h.key(KeyCode::BackTab);
    assert_eq!(
        h.answer('d'),
        [Command::Op(Op::Fill {
            id: "q2".into(),
            answer: taco::tools::AskReply::Decline
        })]
    );
}
