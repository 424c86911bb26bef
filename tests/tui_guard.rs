//! The dialog guard (issue 9): a dialog that opens while the user types never takes their
//! letters as an answer. Keys within the guard, or while a burst of typing goes on, reach the
//! composer untouched; after the guard and a pause the dialog answers as usual. Time is the
//! harness's clock, walked by hand.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::style::Style;
use serde_json::json;
use taco::event::{Event, EventData, InputKind, InputRequest, Scope};
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
            auto_reason: None,
            max_turns: 10,
            workdir: "/work/project".into(),
            tools: Vec::new(),
            dialog_guard: Duration::from_millis(ms),
            ..Default::default()
        };
        Self {
            app: App::new(info, t0),
            t0,
            ms: 0,
        }
    }

    /// The default guard, 400 ms, with a request running.
    fn running() -> Self {
        let mut h = Self::with_guard(400);
        h.event(EventData::RunStarted {
            prompt: "p".into(),
            provider: "demo".into(),
            model: "demo".into(),
            max_turns: 10,
        });
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

    /// Types `text` a key every `gap_ms`, returning everything the keys sent.
    fn type_slowly(&mut self, text: &str, gap_ms: u64) -> Vec<Command> {
        let mut sent = Vec::new();
        for c in text.chars() {
            self.ms += gap_ms;
            sent.extend(self.key(KeyCode::Char(c)));
        }
        sent
    }

    fn ask(&mut self, id: &str, name: &str) {
        self.event(EventData::ApprovalRequested {
            id: id.into(),
            name: name.into(),
            arguments: json!({"path": "notes.md", "content": "a\nb\nc\nd\ne\nf\ng\nh\ni\nj"}),
            position: 1,
            of: 1,
            note: None,
            diff: None,
            sandbox: None,
        });
    }

    fn question(&mut self, id: &str, kind: InputKind) {
        self.event(EventData::InputRequested(InputRequest {
            id: id.into(),
            kind,
            frame: "f".into(),
            tool: "write_file".into(),
            prompt: "Which file?".into(),
            parameter: (kind == InputKind::Parameter).then(|| "path".into()),
            description: None,
            value_type: None,
            depth: (kind == InputKind::DepthLimit).then_some(20),
        }));
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

    /// The style of the `y` that starts `y once` in the approval footer.
    fn y_key_style(&mut self) -> Style {
        let terminal = self.terminal(110, 28);
        let buf = terminal.backend().buffer();
        for y in 0..buf.area.height {
            let row: String = (0..buf.area.width)
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect();
            if let Some(at) = row.find("y once") {
                let x = row[..at].chars().count() as u16;
                return buf[(x, y)].style();
            }
        }
        panic!("no approval footer")
    }
}

fn approve(id: &str, scope: Scope) -> Command {
    Command::Op(Op::Approve {
        id: id.into(),
        answer: ApprovalAnswer::approve(scope),
    })
}

#[test]
fn typing_across_an_opening_approval_never_answers_it() {
    let mut h = Harness::running();
    assert_eq!(h.type_slowly("also ", 120), []);
    h.ask("c1", "write_file");
    // "try this" holds a t, an a-less y and more: all of it is the user's message.
    let sent = h.type_slowly("try this and that", 120);
    assert_eq!(sent, [], "no key answered the dialog");
    assert!(h.app.approval_open());
    assert_eq!(h.app.composer_text(), "also try this and that");
    // The user stops, reads, and answers.
    h.ms += 300;
    assert_eq!(h.app.dialog_wait(h.now()), None);
    assert_eq!(h.key(KeyCode::Char('y')), [approve("c1", Scope::Once)]);
    assert!(!h.app.approval_open());
    assert_eq!(h.app.composer_text(), "also try this and that");
}

#[test]
fn a_burst_keeps_the_dialog_guarded_past_its_guard_time() {
    let mut h = Harness::running();
    h.ask("c1", "write_file");
    // 2 s of fast typing, far past the 400 ms guard: every gap is shorter than the quiet gap.
    let sent = h.type_slowly(&"tatatatata".repeat(2), 100);
    assert_eq!(sent, []);
    assert_eq!(h.app.composer_text(), "tatatatatatatatatata");
    assert!(h.app.dialog_wait(h.now()).is_some(), "still typing");
    // A pause shorter than the quiet gap is still the same burst.
    h.ms += 200;
    assert_eq!(h.key(KeyCode::Char('a')), []);
    h.ms += 260;
    assert_eq!(h.key(KeyCode::Char('a')), [approve("c1", Scope::Session)]);
}

#[test]
fn a_key_within_the_guard_is_held_even_after_a_pause() {
    let mut h = Harness::running();
    h.ms += 5000;
    h.ask("c1", "write_file");
    let now = h.now();
    assert_eq!(h.app.dialog_wait(now), Some(Duration::from_millis(400)));
    assert!(h.app.needs_tick(now), "the countdown redraws");
    assert!(
        h.screen(100, 30).contains("keys active in 0.4 s"),
        "the dialog says it waits"
    );
    h.ms += 399;
    assert_eq!(h.key(KeyCode::Char('y')), [], "one ms early");
    assert_eq!(h.app.composer_text(), "y");
    h.ms += 300;
    assert_eq!(h.key(KeyCode::Char('y')), [approve("c1", Scope::Once)]);
}

#[test]
fn esc_enter_paste_and_arrows_during_the_guard_do_what_the_typist_meant() {
    let mut h = Harness::running();
    h.ask("c1", "write_file");
    h.ms += 50;
    assert_eq!(h.key(KeyCode::Esc), [], "Esc neither denies nor cancels");
    assert!(h.app.approval_open() && h.app.is_busy());
    h.type_slowly("next", 50);
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
fn the_next_call_of_a_batch_is_guarded_again() {
    let mut h = Harness::running();
    h.ask("c1", "write_file");
    h.ask("c2", "shell");
    h.ms += 1000;
    assert_eq!(h.key(KeyCode::Char('y')), [approve("c1", Scope::Once)]);
    // A second y right after (a double tap, key repeat) must not approve a call not read.
    h.ms += 30;
    assert_eq!(h.key(KeyCode::Char('y')), []);
    assert!(h.app.approval_open());
    h.ms += 1000;
    assert_eq!(h.key(KeyCode::Char('y')), [approve("c2", Scope::Once)]);
}

#[test]
fn a_question_that_opens_while_typing_leaves_the_letters_to_the_composer() {
    let mut h = Harness::running();
    h.question("q1", InputKind::Parameter);
    assert_eq!(h.type_slowly("notes", 80), []);
    assert_eq!(h.app.composer_text(), "notes", "not the parameter line");
    assert_eq!(
        h.key(KeyCode::Enter),
        [],
        "the message is queued, not the answer"
    );
    assert!(h.app.question_open());
    h.ms += 1000;
    assert_eq!(h.type_slowly("a.md", 80), []);
    assert_eq!(
        h.key(KeyCode::Enter),
        [Command::Op(Op::Answer {
            id: "q1".into(),
            value: Some("a.md".into())
        })]
    );
    assert_eq!(h.app.queued().collect::<Vec<_>>(), ["notes"]);
}

#[test]
fn the_depth_question_takes_y_only_after_its_guard() {
    let mut h = Harness::running();
    h.question("d1", InputKind::DepthLimit);
    assert!(h.screen(100, 30).contains("keys active in 0.4 s"));
    h.ms += 100;
    assert_eq!(h.key(KeyCode::Char('y')), []);
    assert_eq!(h.key(KeyCode::Esc), []);
    assert!(h.app.question_open());
    assert_eq!(h.app.composer_text(), "y");
    h.ms += 1000;
    assert!(!h.screen(100, 30).contains("keys active"));
    assert_eq!(
        h.key(KeyCode::Char('y')),
        [Command::Op(Op::Answer {
            id: "d1".into(),
            value: Some("y".into())
        })]
    );
}

#[test]
fn a_zero_guard_answers_at_once() {
    let mut h = Harness::with_guard(0);
    h.event(EventData::RunStarted {
        prompt: "p".into(),
        provider: "demo".into(),
        model: "demo".into(),
        max_turns: 10,
    });
    h.type_slowly("abc", 10);
    h.ask("c1", "write_file");
    assert_eq!(h.app.dialog_wait(h.now()), None);
    assert_eq!(h.key(KeyCode::Char('t')), [approve("c1", Scope::Turn)]);
}

#[test]
fn a_session_that_ended_in_a_dialog_leaves_no_guard_behind() {
    let mut h = Harness::with_guard(400);
    let event = |data| {
        Entry::Event(Event {
            timestamp: 1_700_000_000_000,
            request_id: Arc::from("run-1"),
            data,
        })
    };
    let entries = [
        event(EventData::RunStarted {
            prompt: "p".into(),
            provider: "demo".into(),
            model: "demo".into(),
            max_turns: 10,
        }),
        event(EventData::ApprovalRequested {
            id: "c1".into(),
            name: "shell".into(),
            arguments: json!({}),
            position: 1,
            of: 1,
            note: None,
            diff: None,
            sandbox: None,
        }),
    ];
    let now = h.now();
    h.app.replay(&entries, now);
    assert!(!h.app.approval_open());
    assert_eq!(h.app.dialog_wait(now), None);
    h.key(KeyCode::Char('x'));
    assert_eq!(h.app.composer_text(), "x");
}

#[test]
fn snapshot_guarded_approval() {
    let mut h = Harness::running();
    h.type_slowly("also t", 100);
    h.ask("c1", "write_file");
    h.type_slowly("ry", 100);
    // Mid-spinner frame, so the status line renders the same on every run.
    h.ms = (h.ms / 100 + 1) * 100 + 50;
    insta::assert_snapshot!(h.screen(110, 28));
    // The text cannot show it: the answer keys are dimmed until they work.
    let guarded = h.y_key_style();
    h.ms += 1000;
    assert!(!h.screen(110, 28).contains("keys active"));
    assert_ne!(h.y_key_style(), guarded);
}
