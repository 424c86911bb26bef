//! The tool-stack pane (DESIGN §5): the calls in flight, nested by parent, with their state
//! and live elapsed time. Finished frames stay dimmed for a moment, then leave. A frame can
//! be selected for its detail and cancelled alone (`select.rs`); slow and quiet calls are
//! flagged (`flags.rs`). Drawing is in `draw.rs`.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::event::{Confinement, Event, EventData, FrameState, StackFrame};

mod click;
mod draw;
pub mod flags;
mod select;

pub use flags::{FlagSettings, Flags, slow_flag};
pub use select::SubAgent;

use draw::progress_text;

/// How long a finished frame stays on screen (dimmed) before it is dropped.
pub const FADE: Duration = Duration::from_millis(2500);

/// Indentation stops growing past this depth; deeper rows would only be guides.
const MAX_INDENT: usize = 32;

#[derive(Debug, Clone)]
struct Entry {
    frame: StackFrame,
    started: Instant,
    /// When it left the stack; `None` while live.
    finished: Option<Instant>,
    /// Elapsed time at the finish.
    took: Duration,
    /// The call's last progress report, ready to show (`▰▰▱▱ 2/4 · copying`).
    progress: Option<String>,
    /// The call's full arguments (from its `tool_call`), for the detail view.
    arguments: Option<Value>,
    /// The last lines of its live output, and when they came.
    output: Option<(String, Instant)>,
    /// For a sub-agent's frame: the latest text its model said.
    said: Option<String>,
    /// The user asked to cancel it; it has not ended yet.
    cancelling: bool,
    /// How it runs, for tools the sandbox covers (from its `tool_call`).
    sandbox: Option<Confinement>,
    /// The run model's clock of the call (issue 27: one clock for every pane), once the
    /// app has synced it; the pane's own instants only stand in before that.
    times: Option<Times>,
}

/// What the run model says of a call's time and end.
#[derive(Debug, Clone, Default, PartialEq)]
struct Times {
    /// When it was made (event time, Unix ms).
    started_ms: u64,
    /// When it began to run.
    running_ms: Option<u64>,
    /// How long it ran, once it ended.
    duration_ms: Option<u64>,
    /// How it ended when a mark says too little (`exit 3`).
    end: Option<String>,
}

/// What a `tool_call` said about a call that has no frame yet.
#[derive(Debug, Clone)]
struct Announced {
    arguments: Value,
    sandbox: Option<Confinement>,
}

impl Entry {
    fn new(frame: StackFrame, now: Instant, announced: Option<Announced>) -> Self {
        let (arguments, sandbox) = match announced {
            Some(a) => (Some(a.arguments), a.sandbox),
            None => (None, None),
        };
        Self {
            frame,
            started: now,
            finished: None,
            took: Duration::ZERO,
            progress: None,
            sandbox,
            arguments,
            output: None,
            said: None,
            cancelling: false,
            times: None,
        }
    }
}

impl Entry {
    fn fading_out(&self, now: Instant) -> bool {
        self.finished
            .is_some_and(|t| now.saturating_duration_since(t) < FADE)
    }

    fn kept(&self, now: Instant) -> bool {
        self.finished.is_none() || self.fading_out(now)
    }

    fn finish(&mut self, state: FrameState, now: Instant) {
        self.frame.state = state;
        self.finished = Some(now);
        self.took = now.saturating_duration_since(self.started);
    }
}

/// State of the tool-stack pane.
#[derive(Debug, Default)]
pub struct StackState {
    /// Frames in push order: live ones and those fading out.
    entries: Vec<Entry>,
    /// First shown row when scrolled to a selection; `None` keeps the newest rows in view.
    scroll: Option<usize>,
    /// Rows (tree and detail) and pane height at the last render.
    rows: usize,
    height: usize,
    /// The selected frame's id, and its row when last seen (where the selection goes when
    /// the frame leaves).
    selected: Option<(String, usize)>,
    /// The selected frame shows its detail under its row.
    expanded: bool,
    /// Arguments of calls announced (`tool_call`) but not on the stack yet, by id; dropped
    /// with their result.
    announced: HashMap<String, Announced>,
    /// Typical durations per tool, for the ⚠ flags.
    pub flags: Flags,
    /// The frame id each row of the last frame showed (`None`: a detail line), for clicks.
    drawn: Vec<Option<String>>,
    /// The latest event's time (Unix ms) and when it arrived: the event clock's `now`.
    wall: Option<(u64, Instant)>,
}

/// Most announced calls kept waiting for their frame (a batch is rarely larger).
const MAX_ANNOUNCED: usize = 256;

impl StackState {
    /// An empty stack.
    pub fn new() -> Self {
        Self::default()
    }

    /// Applies `stack_push` / `stack_pop`; `cancelled`, `final` and `error` end the frames
    /// still live (cancelled, or failed on an error).
    pub fn on_event(&mut self, event: &Event, now: Instant) {
        self.prune(now);
        match &event.data {
            EventData::StackPush(frame) => match self.live_entry(&frame.id) {
                Some(entry) => {
                    // Time spent waiting for consent, or for a process slot, is not the
                    // tool's run time.
                    if matches!(
                        entry.frame.state,
                        FrameState::AwaitingApproval | FrameState::Queued
                    ) && frame.state == FrameState::Running
                    {
                        entry.started = now;
                    }
                    entry.frame = frame.clone();
                }
                None => {
                    let arguments = self.announced.remove(&frame.id);
                    self.entries.push(Entry::new(frame.clone(), now, arguments));
                }
            },
            EventData::StackPop(frame) => match self.live_entry(&frame.id) {
                Some(entry) => {
                    entry.frame = frame.clone();
                    entry.finish(frame.state, now);
                }
                // Popped without a push (e.g. denied before it ran): show it fading anyway.
                None => {
                    let arguments = self.announced.remove(&frame.id);
                    let mut entry = Entry::new(frame.clone(), now, arguments);
                    entry.finished = Some(now);
                    self.entries.push(entry);
                }
            },
            EventData::ToolCall {
                id,
                arguments,
                sandbox,
                ..
            } if self.announced.len() < MAX_ANNOUNCED => {
                let announced = Announced {
                    arguments: arguments.clone(),
                    sandbox: *sandbox,
                };
                self.announced.insert(id.clone(), announced);
            }
            EventData::ToolResult {
                id,
                name,
                ok,
                duration_ms,
                ..
            } => {
                self.announced.remove(id);
                // Only calls that did their work say how long the tool usually takes.
                if *ok {
                    self.flags.record(name, Duration::from_millis(*duration_ms));
                }
            }
            EventData::LlmCall(call) => {
                if let Some(parent) = &call.parent
                    && !call.content.trim().is_empty()
                    && let Some(entry) = self.live_entry(parent)
                {
                    entry.said = Some(call.content.clone());
                }
            }
            EventData::ToolOutput { id, tail } => {
                if let Some(entry) = self.live_entry(id) {
                    if let Some(last) = tail.lines().next_back() {
                        entry.progress = Some(format!("› {} · ", crate::text::summarize(last, 80)));
                    }
                    entry.output = Some((tail.clone(), now));
                }
            }
            EventData::ToolProgress {
                id,
                progress,
                total,
                message,
            } => {
                if let Some(entry) = self.live_entry(id) {
                    entry.progress = Some(progress_text(*progress, *total, message.as_deref()));
                }
            }
            EventData::Cancelled { .. } | EventData::Final { .. } => {
                self.finish_live(FrameState::Cancelled, now);
                self.announced.clear();
            }
            EventData::Error { .. } => self.finish_live(FrameState::Failed, now),
            _ => {}
        }
    }

    /// Takes the run model's clock for every frame on the pane (after each event): a frame's
    /// elapsed time and end are the model's, so the stack, the chat and the timeline agree.
    pub fn follow(&mut self, event: &Event, run: &crate::run_model::RunModel, now: Instant) {
        self.wall = Some((event.timestamp, now));
        // Only events that change a call's clock or end: not every streamed delta.
        if !matches!(
            event.data,
            EventData::StackPush(_)
                | EventData::StackPop(_)
                | EventData::ApprovalDecided { .. }
                | EventData::ToolResult { .. }
                | EventData::Cancelled { .. }
                | EventData::Final { .. }
                | EventData::Error { .. }
        ) {
            return;
        }
        for entry in &mut self.entries {
            if let Some(call) = run.call(&entry.frame.id) {
                entry.times = Some(Times {
                    started_ms: call.started_ms,
                    running_ms: call.running_ms,
                    duration_ms: call.duration_ms,
                    end: match call.state {
                        crate::run_model::CallState::Ended(
                            crate::event::ToolStatus::ExitNonzero,
                        ) => call.end_label(),
                        _ => None,
                    },
                });
            }
        }
    }

    /// How long `entry` has run at `now`: by the run model's clock once synced (the event
    /// clock, advanced by the instants since the last event), else by the pane's instants.
    fn entry_elapsed(&self, entry: &Entry, now: Instant) -> Duration {
        if let (Some(times), Some((at_ms, at))) = (&entry.times, self.wall) {
            let now_ms = at_ms.saturating_add(
                now.saturating_duration_since(at)
                    .as_millis()
                    .min(u128::from(u64::MAX)) as u64,
            );
            // The same clock as `CallNode::elapsed_ms`: waiting counts until it runs.
            let ms = match (times.duration_ms, times.running_ms) {
                (Some(took), _) => took,
                (None, Some(from)) => now_ms.saturating_sub(from),
                (None, None) => now_ms.saturating_sub(times.started_ms),
            };
            return Duration::from_millis(ms);
        }
        match entry.finished {
            Some(_) => entry.took,
            None => now.saturating_duration_since(entry.started),
        }
    }

    /// Whether the pane changes with time: a live frame's clock ticks or a frame is fading.
    pub fn is_animating(&self, now: Instant) -> bool {
        self.entries.iter().any(|e| e.kept(now))
    }

    /// Frames not finished, in push order.
    pub fn live(&self) -> Vec<&StackFrame> {
        self.live_entries().map(|e| &e.frame).collect()
    }

    /// Elapsed time of the frame `id` in ms (its final duration once finished; 0 if unknown).
    pub fn elapsed_ms(&self, id: &str, now: Instant) -> u64 {
        let entry = (self.live_entries().find(|e| e.frame.id == id))
            .or_else(|| self.entries.iter().rev().find(|e| e.frame.id == id));
        let elapsed = entry.map_or(Duration::ZERO, |e| self.entry_elapsed(e, now));
        elapsed.as_millis().min(u128::from(u64::MAX)) as u64
    }

    /// Nesting depth of the deepest live frame (1 for a top-level call, 0 when empty).
    pub fn depth(&self) -> usize {
        let parents: HashMap<&str, Option<&str>> = self
            .live_entries()
            .map(|e| (e.frame.id.as_str(), e.frame.parent.as_deref()))
            .collect();
        let mut deepest = 0;
        for entry in self.live_entries() {
            let mut depth = 1;
            let mut parent = entry.frame.parent.as_deref();
            // Bounded by the frame count, so a parent cycle cannot loop forever.
            while let Some(id) = parent.filter(|_| depth <= parents.len()) {
                match parents.get(id) {
                    Some(next) => {
                        depth += 1;
                        parent = *next;
                    }
                    None => break,
                }
            }
            deepest = deepest.max(depth.min(parents.len()));
        }
        deepest
    }

    /// Live frames in tree order (a parent before its children), each with its nesting level
    /// (0 for a top-level call). A parent not on the stack counts as top level.
    pub fn live_tree(&self) -> Vec<(usize, &StackFrame)> {
        let live = self.live();
        let index: HashMap<&str, usize> = (live.iter().enumerate())
            .map(|(i, f)| (f.id.as_str(), i))
            .collect();
        let mut children = vec![Vec::new(); live.len()];
        let mut roots = Vec::new();
        for (i, frame) in live.iter().enumerate() {
            match (frame.parent.as_deref())
                .and_then(|p| index.get(p).copied())
                .filter(|&p| p != i)
            {
                Some(p) => children[p].push(i),
                None => roots.push(i),
            }
        }
        let mut out = Vec::with_capacity(live.len());
        let mut seen = vec![false; live.len()];
        // Frames caught in a parent cycle are reached from no root: start from them too.
        for root in roots.into_iter().chain(0..live.len()) {
            let mut todo = vec![(root, 0usize)];
            while let Some((i, level)) = todo.pop() {
                if std::mem::replace(&mut seen[i], true) {
                    continue;
                }
                out.push((level, live[i]));
                todo.extend(children[i].iter().rev().map(|&c| (c, level + 1)));
            }
        }
        out
    }

    /// Forgets every frame (the flags' settings and history stay: they are the session's).
    pub fn clear(&mut self) {
        let flags = std::mem::take(&mut self.flags);
        *self = Self {
            flags,
            ..Self::default()
        };
    }

    /// The ⚠ flag of the live frame `id` at `now`, if it is running slow or quiet.
    pub fn flag(&self, id: &str, now: Instant) -> Option<String> {
        let entry = self.live_entries().find(|e| e.frame.id == id)?;
        self.entry_flag(entry, now)
    }

    fn entry_flag(&self, entry: &Entry, now: Instant) -> Option<String> {
        if entry.finished.is_some() || entry.frame.state != FrameState::Running {
            return None;
        }
        let elapsed = now.saturating_duration_since(entry.started);
        let quiet = (entry.output.as_ref()).map(|(_, at)| now.saturating_duration_since(*at));
        self.flags.flag(&entry.frame.name, elapsed, quiet)
    }

    fn prune(&mut self, now: Instant) {
        self.entries.retain(|e| e.kept(now));
    }

    fn live_entries(&self) -> impl Iterator<Item = &Entry> {
        self.entries.iter().filter(|e| e.finished.is_none())
    }

    fn live_entry(&mut self, id: &str) -> Option<&mut Entry> {
        self.entries
            .iter_mut()
            .find(|e| e.finished.is_none() && e.frame.id == id)
    }

    fn finish_live(&mut self, state: FrameState, now: Instant) {
        for entry in self.entries.iter_mut().filter(|e| e.finished.is_none()) {
            entry.finish(state, now);
        }
    }
}

#[cfg(test)]
mod tests;
