//! The panes agree (issue 27): one recorded session driven through the App, and at every
//! moment every call shows the same state and the same elapsed time in the chat, the stack,
//! the timeline and the status line as the run model has.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use std::collections::HashSet;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use regex::Regex;
use serde_json::json;
use taco::clock::{Clock, ManualClock};
use taco::conversation::Usage;
use taco::event::{Event, EventData, Scope, ToolStatus};
use taco::orchestrator::approval::{ApprovalAnswer, ApprovalRequest, Approver};
use taco::orchestrator::context::COMPACT_PROMPT;
use taco::orchestrator::task::Op;
use taco::orchestrator::{EventSink, Orchestrator};
use taco::provider::{ChatRequest, Chunk, ChunkStream, Provider, ProviderError};
use taco::run_model::CallState;
use taco::tools::ToolRegistry;
use taco::tui::app::Command;
use taco::tui::layout::panes;
use taco::tui::theme::{SPINNER, Theme, call_mark, duration};
use taco::tui::views::stack::FADE;
use taco::tui::views::status::Activity;
use tokio_util::sync::CancellationToken;

use crate::support;
use support::app::Harness;
use support::scripted::*;

/// The model thinks this long before each answer.
const THINK: Duration = Duration::from_millis(400);
/// Every event takes this long to happen after the one before.
const STEP: Duration = Duration::from_millis(30);
/// The user reads a dialog this long before answering.
const READ: Duration = Duration::from_millis(1_200);

/// The scripted model on the session's clock: it thinks [`THINK`] before each answer, and
/// answers a compaction's summary call itself.
struct Paced {
    agent: Arc<Scripted>,
    clock: ManualClock,
}

impl Provider for Paced {
    fn name(&self) -> &str {
        "scripted"
    }

    fn model(&self) -> &str {
        "m1"
    }

    fn stream<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChunkStream, ProviderError>> {
        self.clock.advance(THINK);
        if request.messages.first().and_then(|m| m.content.as_deref()) != Some(COMPACT_PROMPT) {
            return self.agent.stream(request);
        }
        let mut chunks = text("SUMMARY: hello.py was made and checked.");
        chunks.push(Chunk::Usage(Usage {
            input_tokens: 300,
            output_tokens: 20,
            cached_tokens: 0,
        }));
        async move { Ok(stream_of(chunks)) }.boxed()
    }
}

/// Records every event; time moves on [`STEP`] after each.
struct Recorder {
    events: Arc<Mutex<Vec<Event>>>,
    clock: ManualClock,
}

impl EventSink for Recorder {
    fn emit(&mut self, event: Event) {
        self.events.lock().unwrap().push(event);
        self.clock.advance(STEP);
    }
}

/// The user: reads each dialog for [`READ`], approves everything but `write_file` of
/// `notes.txt`, which it denies.
struct User {
    clock: ManualClock,
}

impl Approver for User {
    fn decide<'a>(
        &'a mut self,
        batch: &'a [ApprovalRequest],
    ) -> BoxFuture<'a, Vec<ApprovalAnswer>> {
        self.clock.advance(READ);
        let answers = (batch.iter())
            .map(
                |call| match call.arguments.get("path").and_then(|p| p.as_str()) {
                    Some("notes.txt") => ApprovalAnswer::deny(Some("not now".into())),
                    _ => ApprovalAnswer::approve(Scope::Once),
                },
            )
            .collect();
        async move { answers }.boxed()
    }
}

/// The model's script: `create_code` (its save asks), a failing `shell` beside a
/// `write_file` the user denies, a sub-agent that reads the file, the answer.
fn script() -> Vec<Reply> {
    vec![
        Ok(calls(&[(
            "c1",
            "create_code",
            json!({"description": "a hello world program", "language": "python", "path": "hello.py"}),
        )])),
        // The nested generation call.
        Ok(text("print('Hello, world!')")),
        Ok(calls(&[
            ("s1", "shell", json!({"command": "echo oops >&2; exit 3"})),
            (
                "w1",
                "write_file",
                json!({"path": "notes.txt", "content": "checked"}),
            ),
        ])),
        Ok(calls(&[(
            "d1",
            "delegate",
            json!({"task": "read hello.py and say what it prints", "tools": ["read_file"]}),
        )])),
        // The sub-agent's turns.
        Ok(calls(&[("r1", "read_file", json!({"path": "hello.py"}))])),
        Ok(text("It prints Hello, world!")),
        Ok(text("hello.py prints Hello, world!; the check exits 3.")),
    ]
}

/// The orchestrator of one session in a temp dir, on the session's clock, and what it emits.
struct Session {
    orch: Orchestrator,
    sink: Recorder,
    user: User,
    clock: ManualClock,
    _work: tempfile::TempDir,
}

impl Session {
    fn new() -> Self {
        let work = tempfile::tempdir().unwrap();
        let clock = ManualClock::at(BASE_MS);
        let provider = Arc::new(Paced {
            agent: Scripted::new(script()),
            clock: clock.clone(),
        });
        let mut settings = settings(10);
        settings.workdir = work.path().canonicalize().unwrap();
        let registry = Arc::new(ToolRegistry::builtins());
        let orch =
            Orchestrator::new(provider, registry, settings).with_clock(Arc::new(clock.clone()));
        Self {
            orch,
            sink: Recorder {
                events: Arc::default(),
                clock: clock.clone(),
            },
            user: User {
                clock: clock.clone(),
            },
            clock,
            _work: work,
        }
    }

    /// What the App asked for, done for real; the events it emitted.
    async fn perform(&mut self, op: &Op) -> Vec<Event> {
        let cancel = CancellationToken::new();
        match op {
            Op::Submit(prompt) => {
                self.orch
                    .run(prompt, &mut self.sink, &mut self.user, &cancel)
                    .await;
            }
            Op::Compact => {
                self.orch.compact(&mut self.sink, &cancel).await;
            }
            other => panic!("the session does not ask for {other:?}"),
        }
        std::mem::take(&mut *self.sink.events.lock().unwrap())
    }

    /// Milliseconds since the session began.
    fn ms(&self) -> u64 {
        self.clock.unix_ms() - BASE_MS
    }
}

/// When the session begins (Unix ms): the harness's `t0`.
const BASE_MS: u64 = 1_700_000_000_000;
/// The screen: wide enough for the three panes side by side, tall enough that every call
/// of the session stays in view in each of them.
const WIDTH: u16 = 200;
const HEIGHT: u16 = 80;

/// What a pane shows of a call: its mark (spinner frames as one) and its clock.
#[derive(Debug, Clone, PartialEq)]
struct Shown {
    mark: String,
    clock: Option<String>,
}

/// A spinner frame stands for "at work", whichever frame it is.
fn mark_of(glyph: &str) -> String {
    if SPINNER.contains(&glyph) {
        "spinner".to_string()
    } else {
        glyph.to_string()
    }
}

/// The text of row `row` of `area`.
fn row_text(buf: &Buffer, area: Rect, row: usize) -> String {
    let y = area.y + u16::try_from(row).unwrap();
    (area.x..area.right())
        .map(|x| buf[(x, y)].symbol())
        .collect()
}

/// The inside of a pane drawn with a border.
fn inner(rect: Rect) -> Rect {
    Rect::new(rect.x + 1, rect.y + 1, rect.width - 2, rect.height - 2)
}

/// A duration as `text::duration` writes it.
static DURATION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(\d+ ms|\d+\.\d s|\d+ m \d\d s)$").unwrap());
/// The stack's clock at the end of a row.
static STACK_CLOCK: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(\d+ ms|\d+\.\d s|\d+ m \d\d s|queued)$").unwrap());
/// The timeline's duration column, before the bar's glyphs.
static TIMELINE_CLOCK: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(\d+ ms|\d+\.\d s|\d+m\d\ds|…) [ █░│┊]*$").unwrap());
/// The depth in the stack's title.
static DEPTH: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"depth (\d+)").unwrap());

fn is_duration(text: &str) -> bool {
    DURATION.is_match(text)
}

/// A chat cell's mark line: `✓ shell command=… · exit 3 · 30 ms`, nested ones after `↳`.
fn read_chat(text: &str) -> Shown {
    let body = text.trim_start();
    let body = body.strip_prefix("↳ ").unwrap_or(body);
    let mark = body.chars().next().map(String::from).unwrap_or_default();
    let clock = (body.trim_end().split(" · "))
        .filter(|part| is_duration(part))
        .last()
        .map(String::from);
    Shown {
        mark: mark_of(&mark),
        clock,
    }
}

/// A stack row: guides, mark, name, summary, and the clock at the right.
fn read_stack(text: &str) -> Shown {
    let body = text.trim_start_matches([' ', '│', '├', '└', '─']);
    let mark = body.chars().next().map(String::from).unwrap_or_default();
    let clock = STACK_CLOCK
        .captures(text.trim_end())
        .map(|c| c[1].to_string());
    Shown {
        mark: mark_of(&mark),
        clock,
    }
}

/// A timeline row: symbol, name, the duration column, the bar.
fn read_timeline(text: &str) -> Shown {
    let mark = text
        .trim_start()
        .chars()
        .next()
        .map(String::from)
        .unwrap_or_default();
    let clock = TIMELINE_CLOCK.captures(text).map(|c| c[1].to_string());
    Shown {
        mark: mark_of(&mark),
        clock,
    }
}

/// How every call stands in the run model at a moment.
type Seen = Vec<(String, CallState)>;

/// Renders the app at its clock and says every way the panes and the status line
/// disagree with the run model about any call: its state mark and its clock in the chat,
/// the stack (while it shows the call), the timeline's call row and result row; the
/// status line's activity and the stack's depth. `compacting`: a `/compact` is under way
/// (the app's own, not a run's).
fn disagreements(
    h: &mut Harness,
    compacting: bool,
    results: &HashSet<String>,
    doctor: impl Fn(&mut Buffer),
) -> (Vec<String>, Seen) {
    let terminal = h.screen(WIDTH, HEIGHT);
    let mut buf = terminal.backend().buffer().clone();
    doctor(&mut buf);
    let buf = &buf;
    let panes = panes(Rect::new(0, 0, WIDTH, HEIGHT), h.app.focus());
    let (chat, stack, timeline) = (
        inner(panes.chat.unwrap()),
        inner(panes.stack.unwrap()),
        inner(panes.timeline.unwrap()),
    );
    let now_ms = BASE_MS + h.ms;
    let app = &h.app;
    let model = app.run_model();
    let theme = Theme::default();
    let mut wrong = Vec::new();
    let mut seen = Vec::new();
    for (id, call) in model.calls() {
        seen.push((id.to_string(), call.state));
        let mark = mark_of(call_mark(call.state, &theme).0);
        let clock = duration(call.elapsed_ms(now_ms));
        let ended = call.state.status();
        let mut say = |pane: &str, what: String| {
            wrong.push(format!(
                "{id} ({:?}, {clock}) in the {pane}: {what}",
                call.state
            ));
        };

        // The chat: every call has its cell; a clock, when shown, is the model's, and a
        // call that ran and ended shows how long it took.
        match app.chat.tool_row(id) {
            None => say("chat", "no cell in view".into()),
            Some(row) => {
                let text = row_text(buf, chat, row);
                let shown = read_chat(&text);
                let ran = matches!(
                    ended,
                    Some(ToolStatus::Ok | ToolStatus::Failed | ToolStatus::ExitNonzero)
                );
                if shown.mark != mark
                    || shown.clock.as_ref().is_some_and(|c| *c != clock)
                    || (ran && shown.clock.is_none())
                {
                    say("chat", format!("{shown:?} on {:?}", text.trim_end()));
                }
            }
        }

        // The stack: open calls, and ended ones while they fade, with the model's clock
        // (a call not yet let through says `queued`).
        let fading = call
            .ended_ms
            .is_some_and(|at| now_ms - at < FADE.as_millis() as u64);
        match (app.stack.row_of(id), call.state.is_open() || fading) {
            (None, false) => {}
            (None, true) => say("stack", "not shown".into()),
            (Some(row), false) => say(
                "stack",
                format!("still shown: {:?}", row_text(buf, stack, row)),
            ),
            (Some(row), true) => {
                let text = row_text(buf, stack, row);
                let want = match call.state {
                    CallState::Proposed | CallState::Queued => "queued".to_string(),
                    _ => clock.clone(),
                };
                let shown = read_stack(&text);
                if shown.mark != mark || shown.clock.as_deref() != Some(&want) {
                    say("stack", format!("{shown:?} on {:?}", text.trim_end()));
                }
            }
        }

        // The timeline: the call's row (`…` while open, then the model's clock) and, once
        // its result came, that result's row with the call's mark and clock.
        let (call_row, result_row) = app.timeline.call_rows(id);
        match call_row {
            None => say("timeline", "no call row in view".into()),
            Some(row) => {
                let text = row_text(buf, timeline, row);
                let shown = read_timeline(&text);
                let want = if ended.is_some() {
                    clock.clone()
                } else {
                    "…".into()
                };
                if shown.mark != "→" || shown.clock.as_deref() != Some(&want) {
                    say(
                        "timeline's call row",
                        format!("{shown:?} on {:?}", text.trim_end()),
                    );
                }
            }
        }
        match (result_row, results.contains(id)) {
            (None, false) => {}
            (None, true) => say("timeline", "no result row in view".into()),
            (Some(_), false) => say("timeline", "a result row before its result".into()),
            (Some(row), true) => {
                let text = row_text(buf, timeline, row);
                let shown = read_timeline(&text);
                if shown.mark != mark || shown.clock.as_deref() != Some(&clock) {
                    say(
                        "timeline's result row",
                        format!("{shown:?} on {:?}", text.trim_end()),
                    );
                }
            }
        }
    }

    // The status line says what the run model says is happening; the stack how deep.
    let activity = if compacting {
        Activity::Compacting
    } else {
        model.activity()
    };
    let status = row_text(buf, panes.status, 0);
    let labels = [
        Activity::Idle,
        Activity::Streaming,
        Activity::RunningTool,
        Activity::AwaitingApproval,
        Activity::AwaitingInput,
        Activity::Compacting,
    ];
    let said: Vec<&str> = (labels.iter().map(|a| a.label()))
        .filter(|label| status.contains(label))
        .collect();
    if said != [activity.label()] {
        wrong.push(format!(
            "the status line says {said:?}, the model {activity:?}: {:?}",
            status.trim_end()
        ));
    }
    let title = row_text(buf, panes.stack.unwrap(), 0);
    let depth = model.live_depth();
    let shows_depth = DEPTH
        .captures(&title)
        .map(|c| c[1].parse::<usize>().unwrap());
    if shows_depth != (depth > 0).then_some(depth) {
        wrong.push(format!(
            "the stack's title says depth {shows_depth:?}, the model {depth}: {:?}",
            title.trim()
        ));
    }
    (wrong, seen)
}

/// Types `line` into the composer and presses Enter: what the app asks for.
fn enter(h: &mut Harness, line: &str) -> Vec<Command> {
    let now = h.now();
    for c in line.chars() {
        h.app
            .on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE), now);
    }
    h.app
        .on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE), now)
}

/// The one operation `commands` holds.
fn op_of(commands: Vec<Command>) -> Op {
    match commands.as_slice() {
        [Command::Op(op)] => op.clone(),
        other => panic!("expected one op, got {other:?}"),
    }
}

/// Feeds `events` to the app at their own times, and checks the panes after each one and
/// halfway through every pause between two (a dialog read, a model thinking, a command
/// running). `compacting`: a `/compact` runs until its `compacted` event.
fn replay(h: &mut Harness, events: &[Event], mut compacting: bool, moments: &mut Moments) {
    for event in events {
        let at = event.timestamp - BASE_MS;
        if at > h.ms + 2 * STEP.as_millis() as u64 {
            h.ms = (h.ms + at) / 2;
            let moment = format!("halfway to {} at {at} ms", event.kind());
            check(h, compacting, &moment, moments);
        }
        h.ms = at;
        let now = h.now();
        h.app.on_event(event, now);
        match &event.data {
            EventData::ToolResult { id, .. } => {
                moments.results.insert(id.clone());
            }
            EventData::Compacted(_) => compacting = false,
            _ => {}
        }
        check(
            h,
            compacting,
            &format!("after {} at {at} ms", event.kind()),
            moments,
        );
    }
}

/// What the checks found: how every call stood at each moment, and each moment the panes
/// disagreed at, with how.
#[derive(Default)]
struct Moments {
    seen: Vec<Seen>,
    wrong: Vec<String>,
    /// Calls whose `tool_result` the app has taken (the timeline's result rows).
    results: HashSet<String>,
}

fn check(h: &mut Harness, compacting: bool, moment: &str, moments: &mut Moments) {
    let (wrong, seen) = disagreements(h, compacting, &moments.results, |_| {});
    if !wrong.is_empty() {
        moments
            .wrong
            .push(format!("{moment}:\n  {}", wrong.join("\n  ")));
    }
    moments.seen.push(seen);
}

#[tokio::test]
async fn every_call_shows_one_state_and_one_clock_in_every_pane() {
    let mut session = Session::new();
    let mut h = Harness::new();
    let mut moments = Moments::default();

    let op = op_of(enter(&mut h, PROMPT));
    assert_eq!(op, Op::Submit(PROMPT.into()));
    let run = session.perform(&op).await;
    replay(&mut h, &run, false, &mut moments);

    // Later, when every finished call has left the stack.
    h.ms += FADE.as_millis() as u64 + 1_000;
    check(&mut h, false, "after the fade", &mut moments);

    // `/compact`: the app asks for it, says so while it runs, and takes its event.
    session
        .clock
        .advance(Duration::from_millis(h.ms.saturating_sub(session.ms())));
    h.ms = session.ms();
    let op = op_of(enter(&mut h, "/compact"));
    assert_eq!(op, Op::Compact);
    check(&mut h, true, "while compacting", &mut moments);
    let compact = session.perform(&op).await;
    // The summary call's span, then the compaction that ends it.
    assert!(
        matches!(&compact[..], [.., e] if matches!(&e.data, EventData::Compacted(c) if c.error.is_none())),
        "{compact:?}"
    );
    let traced: Vec<&str> = (compact.iter().filter(|e| e.is_trace()))
        .map(|e| e.kind())
        .collect();
    assert_eq!(traced, ["llm_started", "compacted"], "{compact:?}");
    replay(&mut h, &compact, true, &mut moments);

    assert!(
        moments.wrong.is_empty(),
        "the panes disagree at {} of {} moments:\n{}",
        moments.wrong.len(),
        moments.seen.len(),
        moments.wrong.join("\n")
    );

    // The session had what the issue asks for, and the checks saw each call at work,
    // waiting and ended.
    let states = |id: &str| -> Vec<CallState> {
        let mut states: Vec<CallState> = (moments.seen.iter())
            .filter_map(|m| m.iter().find(|(i, _)| i == id).map(|(_, s)| *s))
            .collect();
        states.dedup();
        states
    };
    use CallState::*;
    assert_eq!(states("c1"), [Proposed, Running, Ended(ToolStatus::Ok)]);
    assert_eq!(
        states("c1/needs-1"),
        [Proposed, AwaitingApproval, Running, Ended(ToolStatus::Ok)]
    );
    assert_eq!(
        states("s1"),
        [
            Proposed,
            AwaitingApproval,
            Running,
            Ended(ToolStatus::ExitNonzero)
        ]
    );
    assert_eq!(
        states("w1"),
        [Proposed, AwaitingApproval, Ended(ToolStatus::Denied)]
    );
    assert_eq!(states("d1"), [Proposed, Running, Ended(ToolStatus::Ok)]);
    assert_eq!(states("d1/r1"), [Proposed, Running, Ended(ToolStatus::Ok)]);
    assert!(moments.seen.len() > 50, "{} moments", moments.seen.len());
}

const PROMPT: &str = "make hello.py and check it";

/// Writes `to` over every `from` on screen (both of single-width characters, as long).
fn doctor(buf: &mut Buffer, from: &str, to: &str) {
    let (from, to): (Vec<char>, Vec<char>) = (from.chars().collect(), to.chars().collect());
    assert_eq!(from.len(), to.len());
    let area = buf.area;
    for y in area.top()..area.bottom() {
        let row: Vec<String> = (area.left()..area.right())
            .map(|x| buf[(x, y)].symbol().to_string())
            .collect();
        for start in 0..row.len().saturating_sub(from.len() - 1) {
            let here = (row[start..start + from.len()].iter())
                .zip(&from)
                .all(|(cell, c)| cell.chars().eq([*c]));
            if here {
                for (i, c) in to.iter().enumerate() {
                    let x = area.left() + u16::try_from(start + i).unwrap();
                    buf[(x, y)].set_char(*c);
                }
            }
        }
    }
}

/// The check reads what each pane shows: a mark or a clock drawn wrong in any pane is
/// caught, and named by call and pane.
#[tokio::test]
async fn the_check_catches_a_pane_that_disagrees() {
    let mut session = Session::new();
    let mut h = Harness::new();
    let run = session.perform(&op_of(enter(&mut h, PROMPT))).await;
    // Up to the end of the failed command.
    let mut results = HashSet::new();
    for event in &run {
        h.ms = event.timestamp - BASE_MS;
        let now = h.now();
        h.app.on_event(event, now);
        if let EventData::ToolResult { id, .. } = &event.data {
            results.insert(id.clone());
            if id == "s1" {
                break;
            }
        }
    }
    let panes_of = |wrong: &[String]| -> Vec<String> {
        (wrong.iter())
            .map(|w| {
                w.split(" in the ")
                    .nth(1)
                    .unwrap()
                    .split(':')
                    .next()
                    .unwrap()
                    .to_string()
            })
            .collect()
    };
    let (wrong, _) = disagreements(&mut h, false, &results, |_| {});
    assert!(wrong.is_empty(), "{wrong:#?}");

    // The failed command drawn as a success.
    let (wrong, _) = disagreements(&mut h, false, &results, |buf| doctor(buf, "✗", "✓"));
    assert!(wrong.iter().all(|w| w.starts_with("s1 ")), "{wrong:#?}");
    assert_eq!(
        panes_of(&wrong),
        ["chat", "stack", "timeline's result row"],
        "{wrong:#?}"
    );

    // Its clock drawn a little off wherever it shows (its first digit one more).
    let took = duration(h.app.run_model().call("s1").unwrap().duration_ms.unwrap());
    let off: String = (took.chars().enumerate())
        .map(|(i, c)| match (i, c.to_digit(10)) {
            (0, Some(d)) => char::from_digit((d + 1) % 10, 10).unwrap(),
            _ => c,
        })
        .collect();
    let (wrong, _) = disagreements(&mut h, false, &results, |buf| doctor(buf, &took, &off));
    assert!(wrong.iter().all(|w| w.starts_with("s1 ")), "{wrong:#?}");
    assert_eq!(
        panes_of(&wrong),
        [
            "chat",
            "stack",
            "timeline's call row",
            "timeline's result row"
        ],
        "{wrong:#?}"
    );

    // The status line's word and the stack's depth are read too.
    let (wrong, _) = disagreements(&mut h, false, &results, |buf| {
        doctor(buf, "streaming", "compactin")
    });
    assert_eq!(wrong.len(), 1, "{wrong:#?}");
    assert!(
        wrong[0].starts_with("the status line says []"),
        "{wrong:#?}"
    );
    let (wrong, _) = disagreements(&mut h, false, &results, |buf| {
        doctor(buf, " tool stack ─────────", " tool stack · depth 1");
    });
    assert_eq!(wrong.len(), 1, "{wrong:#?}");
    assert!(
        wrong[0].starts_with("the stack's title says depth Some(1)"),
        "{wrong:#?}"
    );
}
