//! The event loop itself, on a test terminal, with a fake engine: keys become Ops, events
//! become screen state, and closing the input winds the loop down. No provider, no tty.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::{Context, Poll};

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use serde_json::json;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use super::*;
use crate::conversation::Usage;
use crate::event::{DeltaKind, EventData};
use crate::orchestrator::approval::ApprovalAnswer;
use crate::orchestrator::task::Op;

/// An engine that records the Ops it gets and hands out the events a test sends.
struct FakeEngine {
    ops: UnboundedSender<Op>,
    events: UnboundedReceiver<Event>,
    /// How many events the loop has taken, so the test knows when they are on screen.
    taken: Arc<AtomicUsize>,
}

impl Engine for FakeEngine {
    fn send(&mut self, op: Op) -> bool {
        self.ops.send(op).is_ok()
    }

    fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        let polled = self.events.poll_recv(cx);
        if let Poll::Ready(Some(_)) = &polled {
            self.taken.fetch_add(1, Ordering::SeqCst);
        }
        polled
    }

    fn try_event(&mut self) -> Option<Event> {
        let event = self.events.try_recv().ok()?;
        self.taken.fetch_add(1, Ordering::SeqCst);
        Some(event)
    }

    fn shutdown(self: Box<Self>, _grace: Duration) -> BoxFuture<'static, ()> {
        let _ = self.ops.send(Op::Shutdown);
        async {}.boxed()
    }
}

fn info() -> AppInfo {
    AppInfo {
        provider: "fake".into(),
        model: "m".into(),
        auto_reason: None,
        max_turns: 10,
        workdir: "/work".into(),
        tools: Vec::new(),
        dialog_guard: Duration::ZERO,
        ..Default::default()
    }
}

/// A test terminal: frames drawn into a `TestBackend`, other writes kept.
struct TestScreen {
    terminal: Terminal<TestBackend>,
    written: Vec<u8>,
    /// Whether it says it is behind.
    behind: Arc<AtomicBool>,
    /// Frames drawn.
    draws: Arc<AtomicUsize>,
}

impl TestScreen {
    fn new(width: u16, height: u16) -> Self {
        Self {
            terminal: Terminal::new(TestBackend::new(width, height)).unwrap(),
            written: Vec::new(),
            behind: Arc::default(),
            draws: Arc::default(),
        }
    }
}

impl Screen for TestScreen {
    fn draw(&mut self, app: &mut App, now: Instant) -> io::Result<frames::Drawn> {
        let mut render = frames::Took::ZERO;
        self.draws.fetch_add(1, Ordering::SeqCst);
        let drawn = (self.terminal).draw(|frame| {
            let area = frame.area();
            render = render_timed(app, area, frame.buffer_mut(), now);
        });
        let Ok(_) = drawn;
        Ok(frames::Drawn {
            render,
            wait: Duration::ZERO,
        })
    }

    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.written.extend_from_slice(bytes);
        Ok(())
    }

    fn behind(&self) -> bool {
        self.behind.load(Ordering::SeqCst)
    }
}

fn key(code: KeyCode) -> io::Result<TermEvent> {
    Ok(TermEvent::Key(KeyEvent::new(code, KeyModifiers::NONE)))
}

/// What a loop test drives: a fake engine (its Ops and events), the keyboard, the screen.
struct Rig {
    engine: Option<Box<dyn Engine>>,
    ops: UnboundedReceiver<Op>,
    events: UnboundedSender<Event>,
    /// Events the loop has taken.
    counter: Arc<AtomicUsize>,
    keys: UnboundedSender<io::Result<TermEvent>>,
    input: Box<dyn futures_util::Stream<Item = io::Result<TermEvent>> + Unpin>,
    screen: TestScreen,
}

fn rig(width: u16, height: u16) -> Rig {
    let (ops_tx, ops) = unbounded_channel();
    let (events, events_rx) = unbounded_channel();
    let counter = Arc::new(AtomicUsize::new(0));
    let engine: Option<Box<dyn Engine>> = Some(Box::new(FakeEngine {
        ops: ops_tx,
        events: events_rx,
        taken: Arc::clone(&counter),
    }));
    let (keys, mut keys_rx) = unbounded_channel();
    let input = futures_util::stream::poll_fn(move |cx| keys_rx.poll_recv(cx));
    Rig {
        engine,
        ops,
        events,
        counter,
        keys,
        input: Box::new(input),
        screen: TestScreen::new(width, height),
    }
}

/// Waits until the loop has taken `count` events (it handles each as it takes it).
async fn taken(counter: &AtomicUsize, count: usize) {
    while counter.load(Ordering::SeqCst) < count {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

#[tokio::test]
async fn the_loop_drives_the_app_through_a_fake_engine() {
    let Rig {
        mut engine,
        mut ops,
        events,
        counter,
        keys,
        mut input,
        mut screen,
    } = rig(100, 30);
    let mut signals = None;
    let mut io = Io {
        screen: &mut screen,
        input: &mut input,
        signals: &mut signals,
        tmux: &mut None,
        launched: Instant::now(),
    };
    let mut app = App::new(info(), Instant::now());
    let run: Arc<str> = Arc::from("run-1");

    let script = async {
        for code in [KeyCode::Char('h'), KeyCode::Char('i'), KeyCode::Enter] {
            keys.send(key(code)).unwrap();
        }
        assert_eq!(ops.recv().await, Some(Op::Submit("hi".into())));
        let started = EventData::RunStarted {
            prompt: "hi".into(),
            provider: "fake".into(),
            model: "m".into(),
            max_turns: 10,
            trace_parent: None,
        };
        let delta = EventData::Delta {
            kind: DeltaKind::Text,
            text: "Hello from a fake engine.".into(),
        };
        let approval = EventData::ApprovalRequested {
            id: "c1".into(),
            name: "write_file".into(),
            arguments: json!({"path": "note.md"}),
            position: 1,
            of: 1,
            note: None,
            diff: None,
            sandbox: None,
        };
        for data in [started, delta, approval] {
            events.send(Event::now(&run, data)).unwrap();
        }
        taken(&counter, 3).await;
        // A letter picks, Enter carries it out.
        keys.send(key(KeyCode::Char('y'))).unwrap();
        keys.send(key(KeyCode::Enter)).unwrap();
        match ops.recv().await {
            Some(Op::Approve { id, answer }) => {
                assert_eq!(id, "c1");
                assert_eq!(answer, ApprovalAnswer::approve(crate::event::Scope::Once));
            }
            other => panic!("expected an approval, got {other:?}"),
        }
        let end = EventData::Final {
            content: "Hello from a fake engine.".into(),
            turns: 1,
            usage: Usage::default(),
        };
        events.send(Event::now(&run, end)).unwrap();
        taken(&counter, 4).await;
        // The terminal's input ends: the loop winds down as on a closed terminal.
        drop(keys);
    };
    let (ended, ()) = tokio::join!(drive(&mut app, &mut io, &mut engine), script);

    assert_eq!(ended.unwrap(), Ended::Quit);
    assert!(!app.is_busy(), "the final answer ended the run");
    assert!(!app.approval_open());
    let area = Rect::new(0, 0, 100, 30);
    let mut buffer = Buffer::empty(area);
    app.render(area, &mut buffer, Instant::now());
    let screen: String = buffer.content().iter().map(|c| c.symbol()).collect();
    assert!(screen.contains("Hello from a fake engine."), "{screen}");
    // The wind-down stops the engine.
    engine.unwrap().shutdown(SHUTDOWN_GRACE).await;
    assert_eq!(ops.recv().await, Some(Op::Shutdown));
}

#[tokio::test]
async fn y_in_the_timeline_detail_writes_osc_52_to_the_terminal() {
    use base64::Engine as _;
    let Rig {
        mut engine,
        events,
        counter,
        keys,
        mut input,
        mut screen,
        ..
    } = rig(160, 30);
    let mut signals = None;
    let mut io = Io {
        screen: &mut screen,
        input: &mut input,
        signals: &mut signals,
        tmux: &mut None,
        launched: Instant::now(),
    };
    let mut app = App::new(info(), Instant::now());
    let run: Arc<str> = Arc::from("run-1");
    let script = async {
        let call = EventData::ToolCall {
            turn: 1,
            id: "c1".into(),
            name: "read_file".into(),
            arguments: json!({"path": "notes.txt"}),
            parent: None,
            sandbox: None,
        };
        events.send(Event::now(&run, call)).unwrap();
        taken(&counter, 1).await;
        // Tab to the stack, Tab to the timeline, open the row, copy it.
        for code in [
            KeyCode::Tab,
            KeyCode::Tab,
            KeyCode::Enter,
            KeyCode::Char('y'),
        ] {
            keys.send(key(code)).unwrap();
        }
        // The keys queued before the input ends are all taken first.
        drop(keys);
    };
    let (ended, ()) = tokio::join!(drive(&mut app, &mut io, &mut engine), script);
    assert_eq!(ended.unwrap(), Ended::Quit);
    let written = &screen.written;
    assert!(written.starts_with(b"\x1b]52;c;"), "{written:?}");
    assert!(written.ends_with(b"\x07"), "{written:?}");
    let payload = &written[7..written.len() - 1];
    let text = base64::engine::general_purpose::STANDARD
        .decode(payload)
        .unwrap();
    let text = String::from_utf8(text).unwrap();
    assert!(text.starts_with("→ tool_call\n"), "{text}");
    assert!(text.contains("\"path\": \"notes.txt\""), "{text}");
}

#[tokio::test]
async fn a_terminal_that_is_behind_puts_frames_off_but_not_keys() {
    let Rig {
        mut engine,
        mut ops,
        // Kept: the engine stays alive.
        events: _events,
        keys,
        mut input,
        mut screen,
        ..
    } = rig(100, 30);
    let (behind, draws) = (Arc::clone(&screen.behind), Arc::clone(&screen.draws));
    behind.store(true, Ordering::SeqCst);
    let mut signals = None;
    let mut io = Io {
        screen: &mut screen,
        input: &mut input,
        signals: &mut signals,
        tmux: &mut None,
        launched: Instant::now(),
    };
    let mut app = App::new(info(), Instant::now());
    let script = async {
        for code in [KeyCode::Char('h'), KeyCode::Char('i'), KeyCode::Enter] {
            keys.send(key(code)).unwrap();
        }
        assert_eq!(ops.recv().await, Some(Op::Submit("hi".into())));
        // Several frames' time with the terminal behind: keys were handled, nothing drawn.
        tokio::time::sleep(FRAME * 4).await;
        assert_eq!(draws.load(Ordering::SeqCst), 0);
        behind.store(false, Ordering::SeqCst);
        while draws.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        drop(keys);
    };
    let (ended, ()) = tokio::join!(drive(&mut app, &mut io, &mut engine), script);
    assert_eq!(ended.unwrap(), Ended::Quit);
    assert_eq!(
        draws.load(Ordering::SeqCst),
        1,
        "the frame put off, drawn once caught up"
    );
}
