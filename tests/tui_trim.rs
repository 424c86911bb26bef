//! Issue 33: a live session's panes hold a bounded window of runs. The app records into a
//! real session file (the recorder the orchestrator uses), lets go of older runs once the
//! panes hold enough (rebuilding them from the file's end, as a resume does), and scrolling
//! back to the top reads every run back, down to the first. The heap the app holds does not
//! grow with the number of runs (counted by the test binary's allocator meter).

use crate::support;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyCode;
use ratatui::layout::Rect;
use serde_json::json;
use support::app::Harness;
use taco::conversation::{Message, ToolCall, Usage};
use taco::event::{
    DeltaKind, Event, EventData, FrameState, LlmCall, LlmStarted, Purpose, StackFrame, ToolStatus,
};
use taco::recorder::Recorder;
use taco::tui::app::{App, AppInfo, Command, TRIM_KEEP_ENTRIES};

/// Run `n`'s answer: some 1.7 KB of Markdown.
fn answer(n: usize) -> String {
    let mut text = format!("## Answer {n}\n\n");
    for i in 0..20 {
        text.push_str(&format!(
            "- point {i} of run {n}: the loader keeps the tail and an index of the rest, `code_{i}`.\n"
        ));
    }
    text
}

fn prompt(n: usize) -> String {
    format!("question number {n}")
}

fn llm(n: usize, turn: u32, content: String, calls: Vec<ToolCall>, new: Vec<Message>) -> EventData {
    EventData::LlmCall(Box::new(LlmCall {
        turn,
        model: "m".into(),
        duration_ms: 100,
        ttft_ms: Some(10),
        finish_reason: Some("stop".into()),
        content,
        reasoning_content: None,
        tool_calls: calls,
        usage: Usage {
            input_tokens: 1000,
            output_tokens: 300,
            cached_tokens: 0,
        },
        timings: None,
        message_count: 2 * n + new.len(),
        new_messages: new,
        tools: vec!["read_file".into()],
        parent: None,
        omitted: 0,
        context_window: None,
        call: Some(turn),
        purpose: Some(Purpose::Conversation),
    }))
}

/// What the orchestrator sends for run `n`: every fifth run reads a file first; the answer
/// streams word by word.
fn run_events(n: usize) -> Vec<EventData> {
    let mut out = vec![EventData::RunStarted {
        prompt: prompt(n),
        provider: "openai".into(),
        model: "m".into(),
        max_turns: 50,
        trace_parent: None,
    }];
    let started = |turn| {
        EventData::LlmStarted(LlmStarted {
            call: turn,
            purpose: Purpose::Conversation,
            parent: None,
            model: "m".into(),
            turn,
        })
    };
    let mut turn = 1;
    if n.is_multiple_of(5) {
        let id = format!("call-{n}");
        let arguments = json!({"path": "notes.md"});
        let call = ToolCall {
            id: id.clone(),
            name: "read_file".into(),
            arguments: arguments.clone(),
        };
        out.push(started(turn));
        out.push(llm(
            n,
            turn,
            String::new(),
            vec![call],
            vec![Message::user(prompt(n))],
        ));
        out.push(EventData::ToolCall {
            turn,
            id: id.clone(),
            name: "read_file".into(),
            arguments,
            parent: None,
            sandbox: None,
        });
        let frame = StackFrame {
            id: id.clone(),
            parent: None,
            name: "read_file".into(),
            summary: "notes.md".into(),
            state: FrameState::Running,
        };
        out.push(EventData::StackPush(frame.clone()));
        out.push(EventData::ToolResult {
            id,
            name: "read_file".into(),
            ok: true,
            status: Some(ToolStatus::Ok),
            denied_by: None,
            result: Some(json!({"content": format!("notes of run {n}\n").repeat(100)})),
            error: None,
            duration_ms: 3,
        });
        out.push(EventData::StackPop(StackFrame {
            state: FrameState::Done,
            ..frame
        }));
        turn += 1;
    }
    out.push(started(turn));
    let text = answer(n);
    for word in text.split_inclusive(' ') {
        out.push(EventData::Delta {
            kind: DeltaKind::Text,
            text: word.to_string(),
        });
    }
    let reply = Message::assistant(Some(text.clone()), None, vec![]);
    out.push(llm(n, turn, text.clone(), vec![], vec![reply]));
    out.push(EventData::Final {
        content: text,
        turns: turn,
        usage: Usage::default(),
    });
    out
}

/// The app over a recorder writing a real session file, driven run by run.
struct Live {
    h: Harness,
    recorder: Recorder,
    path: Option<PathBuf>,
    trims: usize,
    /// Trims asked for and not carried out yet (when `hold`).
    held: Vec<PathBuf>,
    hold: bool,
}

impl Live {
    fn new(sessions: &Path) -> Self {
        let recorder = Recorder::deferred(
            Some(sessions.to_path_buf()),
            None,
            "openai",
            "m",
            Path::new("/work/project"),
        );
        let mut h = Harness::new();
        let info = AppInfo {
            session: Some(recorder.locator()),
            ..support::app::info()
        };
        h.app = App::new(info, h.t0);
        Self {
            h,
            recorder,
            path: None,
            trims: 0,
            held: Vec::new(),
            hold: false,
        }
    }

    /// Runs `runs` one by one, as the orchestrator would (recording each event before the
    /// app takes it), carrying out the app's trims; draws a frame every ten runs.
    fn run(&mut self, runs: std::ops::Range<usize>) {
        for n in runs {
            let sent = self.h.command(&prompt(n));
            assert!(sent.iter().any(|c| matches!(c, Command::Op(_))), "{sent:?}");
            self.recorder.message(&Message::user(prompt(n)));
            let id: Arc<str> = Arc::from(format!("req-{n}").as_str());
            for data in run_events(n) {
                self.h.ms += 5;
                let event = Event {
                    timestamp: 1_700_000_000_000 + self.h.ms,
                    request_id: Arc::clone(&id),
                    data,
                };
                self.recorder.event(&event);
                let now = self.h.now();
                for command in self.h.app.on_event(&event, now) {
                    match command {
                        Command::Trim(path) if self.hold => self.held.push(path),
                        Command::Trim(path) => self.trim(path),
                        _ => {}
                    }
                }
            }
            if n.is_multiple_of(10) {
                self.draw();
            }
        }
    }

    /// What the event loop does for a trim: read the file's end, hand it to the app.
    fn trim(&mut self, path: PathBuf) {
        let end = std::fs::metadata(&path).unwrap().len();
        let read = taco::session::earlier(&path, end, TRIM_KEEP_ENTRIES);
        let now = self.h.now();
        self.h.app.trimmed(path.clone(), read, now);
        self.path = Some(path);
        self.trims += 1;
    }

    fn draw(&mut self) {
        let mut buf = Buffer::empty(Rect::new(0, 0, 200, 60));
        let now = self.h.now();
        self.h.app.render(buf.area, &mut buf, now);
    }
}

#[test]
fn a_long_live_session_holds_a_window_and_scrolls_back_to_its_first_run() {
    let sessions = tempfile::tempdir().unwrap();
    let before = crate::meter::live();
    let mut live = Live::new(sessions.path());
    live.run(0..250);
    let at_250 = crate::meter::live() - before;
    live.run(250..1_000);
    let at_1000 = crate::meter::live() - before;
    assert!(live.trims >= 10, "trims: {}", live.trims);
    // 750 more runs held whole would be some 11 MB (14.5 KB a run, measured untrimmed).
    let grew = at_1000 - at_250;
    assert!(
        grew < 1 << 20,
        "the app grew by {grew} B over 750 runs (held {at_250} B after 250)"
    );

    // The chat shows the newest run; scrolling back to the top reads the older runs back
    // from the file until the first.
    live.draw();
    let mut reads = 0;
    for _ in 0..2_000 {
        let mut commands = live.h.key(KeyCode::PageUp);
        live.draw();
        commands.extend(live.h.app.want_earlier());
        for command in commands {
            if let Command::LoadEarlier(earlier) = command {
                let read = taco::session::earlier(
                    &earlier.path,
                    earlier.before,
                    taco::startup::RESUME_ENTRIES,
                );
                let now = live.h.now();
                live.h.app.prepend_earlier(read, now);
                reads += 1;
            }
        }
        let screen = support::app::screen_text(&live.h.screen(200, 60));
        if screen.contains("question number 0\n") || screen.contains("question number 0 ") {
            assert!(reads > 0);
            // Back at the newest line, the next run lets the runs read back go again.
            live.h.key(KeyCode::End);
            live.draw();
            let trims = live.trims;
            live.run(1_000..1_001);
            assert_eq!(live.trims, trims + 1, "the runs read back were not let go");
            return;
        }
    }
    panic!(
        "the first run never came back ({reads} reads): {}",
        support::app::screen_text(&live.h.screen(200, 60))
    );
}

#[test]
fn a_trim_the_file_has_overtaken_is_dropped() {
    let sessions = tempfile::tempdir().unwrap();
    let mut live = Live::new(sessions.path());
    live.hold = true;
    live.run(0..taco::tui::app::TRIM_AFTER);
    let [path] = live.held.as_slice() else {
        panic!("one trim asked: {:?}", live.held)
    };
    let path = path.clone();
    // The orchestrator recorded the start of a run the app has not taken yet: the read
    // holds it, and the app must not rebuild its panes from it.
    live.recorder.message(&Message::user(prompt(999)));
    let unseen = Event {
        timestamp: 1_800_000_000_000,
        request_id: Arc::from("req-unseen"),
        data: run_events(999).remove(0),
    };
    live.recorder.event(&unseen);
    let before = support::app::screen_text(&live.h.screen(200, 60));
    live.trim(path.clone());
    assert_eq!(support::app::screen_text(&live.h.screen(200, 60)), before);
    assert!(live.h.app.want_earlier().is_none(), "nothing was let go");

    // The same read without the unseen run is taken: the panes keep the newest runs.
    let sessions = tempfile::tempdir().unwrap();
    let mut live = Live::new(sessions.path());
    live.hold = true;
    live.run(0..taco::tui::app::TRIM_AFTER);
    let path = live.held[0].clone();
    live.trim(path);
    let screen = support::app::screen_text(&live.h.screen(200, 60));
    assert!(
        screen.contains(&format!("Answer {}", taco::tui::app::TRIM_AFTER - 1)),
        "{screen}"
    );
    // Scrolled to the top, the app asks for the runs it let go.
    for _ in 0..200 {
        live.h.key(KeyCode::PageUp);
        live.draw();
    }
    assert!(
        live.h.app.want_earlier().is_some(),
        "the runs let go are in the file"
    );
    let _ = (Instant::now(), Duration::ZERO);
}
