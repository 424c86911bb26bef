//! The tool-stack pane (DESIGN §5): the calls in flight, nested by parent, with their state
//! and live elapsed time. Finished frames stay dimmed for a moment, then leave. A frame can
//! be selected for its detail and cancelled alone (`select.rs`); slow and quiet calls are
//! flagged (`flags.rs`). Drawing is in `draw.rs`.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use crate::event::{FrameState, StackFrame, ToolStatus};
use crate::run_model::{CallNode, CallState, RunModel};

mod click;
mod draw;
pub mod flags;
mod select;

pub use flags::{FlagSettings, Flags, slow_flag};
pub use select::SubAgent;

/// How long a finished frame stays on screen (dimmed) before it is dropped.
pub const FADE: Duration = Duration::from_millis(2500);

/// Indentation stops growing past this depth; deeper rows would only be guides.
const MAX_INDENT: usize = 32;

/// A call on the pane: the run model's copy of it (its state, clock, output, what let it
/// through), and the frame overlays draw.
#[derive(Debug, Clone)]
struct Entry {
    /// The call as the run model tells it.
    call: CallNode,
    /// The frame other views draw (id, parent, name, summary, state in frame terms).
    frame: StackFrame,
}

impl Entry {
    fn new(id: &str, call: &CallNode) -> Self {
        Self {
            frame: StackFrame {
                id: id.to_string(),
                parent: call.parent.clone(),
                name: call.name.clone(),
                summary: call.summary.clone(),
                state: frame_state(call.state),
            },
            call: call.clone(),
        }
    }

    fn finished(&self) -> bool {
        !self.call.state.is_open()
    }

    /// Whether it still shows at `now_ms` (event clock): open, or ended less than [`FADE`]
    /// ago.
    fn kept(&self, now_ms: u64) -> bool {
        self.call.ended_ms.is_none_or(|at| {
            now_ms.saturating_sub(at) < u64::try_from(FADE.as_millis()).unwrap_or(u64::MAX)
        })
    }
}

/// A call's state in the words of a stack frame (a proposed call waits like a queued one).
fn frame_state(state: CallState) -> FrameState {
    match state {
        CallState::Proposed | CallState::Queued => FrameState::Queued,
        CallState::AwaitingApproval => FrameState::AwaitingApproval,
        CallState::AwaitingInput => FrameState::AwaitingInput,
        CallState::Running => FrameState::Running,
        CallState::Ended(ToolStatus::Ok) => FrameState::Done,
        CallState::Ended(ToolStatus::Denied | ToolStatus::SandboxDenied) => FrameState::Denied,
        CallState::Ended(ToolStatus::Cancelled | ToolStatus::Abandoned) => FrameState::Cancelled,
        CallState::Ended(_) => FrameState::Failed,
    }
}

/// State of the tool-stack pane: which calls of the run model it shows (open ones, and ended
/// ones while they fade), the selection, the scroll and the ⚠ flags' history. Every call's
/// state, clock and output is the run model's (issue 27: one fold of call state).
#[derive(Debug, Default)]
pub struct StackState {
    /// The calls shown, in the order they were made.
    entries: Vec<Entry>,
    /// The run model's revision the entries were copied at.
    copied: Option<u64>,
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
    /// Calls the user asked to cancel that have not ended yet.
    cancelling: HashSet<String>,
    /// Typical durations per tool, for the ⚠ flags.
    pub flags: Flags,
    /// Calls whose duration the flags have taken.
    timed: HashSet<String>,
    /// The frame id each row of the last frame showed (`None`: a detail line), for clicks.
    drawn: Vec<Option<String>>,
    /// The latest event's time (Unix ms) and when it arrived: the event clock's `now`.
    wall: Option<(u64, Instant)>,
}

impl StackState {
    /// An empty stack.
    pub fn new() -> Self {
        Self::default()
    }

    /// Follows the run model after an event: the calls it shows are copied again when the
    /// model changed, and the event's time sets the clock.
    pub fn follow(&mut self, event: &crate::event::Event, run: &RunModel, now: Instant) {
        if event.timestamp > 0 {
            self.wall = Some((event.timestamp, now));
        }
        if self.copied == Some(run.revision()) {
            return;
        }
        self.copied = Some(run.revision());
        let now_ms = self.now_ms(now);
        self.entries = (run.calls())
            .map(|(id, call)| Entry::new(id, call))
            .filter(|e| e.kept(now_ms))
            .collect();
        self.cancelling
            .retain(|id| run.call(id).is_some_and(|c| c.state.is_open()));
        // Only calls that did their work say how long the tool usually takes.
        for (id, call) in run.calls() {
            if call.state == CallState::Ended(ToolStatus::Ok)
                && let Some(took) = call.duration_ms
                && self.timed.insert(id.to_string())
            {
                self.flags.record(&call.name, Duration::from_millis(took));
            }
        }
        self.timed.retain(|id| run.call(id).is_some());
    }

    /// Unix ms at `now` by the events' clock: the latest event's time plus what passed since.
    fn now_ms(&self, now: Instant) -> u64 {
        self.wall.map_or(0, |(at_ms, at)| {
            let since = now.saturating_duration_since(at).as_millis();
            at_ms.saturating_add(u64::try_from(since).unwrap_or(u64::MAX))
        })
    }

    /// How long `entry` has run at `now` (waiting counts until it runs): the run model's
    /// clock, advanced by the instants since the last event.
    fn entry_elapsed(&self, entry: &Entry, now: Instant) -> Duration {
        Duration::from_millis(entry.call.elapsed_ms(self.now_ms(now)))
    }

    /// Whether the pane changes with time: a live frame's clock ticks or a frame is fading.
    pub fn is_animating(&self, now: Instant) -> bool {
        let now_ms = self.now_ms(now);
        self.entries.iter().any(|e| e.kept(now_ms))
    }

    /// Rows the pane would draw: every frame shown, live or fading (a checklist above it
    /// leaves it room for them).
    pub fn wanted_rows(&self) -> usize {
        self.entries.len()
    }

    /// Frames not finished, in the order made.
    pub fn live(&self) -> Vec<&StackFrame> {
        self.live_entries().map(|e| &e.frame).collect()
    }

    /// Elapsed time of the frame `id` in ms (its final duration once finished; 0 if unknown).
    pub fn elapsed_ms(&self, id: &str, now: Instant) -> u64 {
        let entry = self.entries.iter().rev().find(|e| e.frame.id == id);
        let elapsed = entry.map_or(Duration::ZERO, |e| self.entry_elapsed(e, now));
        elapsed.as_millis().min(u128::from(u64::MAX)) as u64
    }

    /// The row of the last frame (from the top of the pane) that showed call `id`, if it
    /// was in view: tests read what the stack shows of a call there.
    pub fn row_of(&self, id: &str) -> Option<usize> {
        (self.drawn.iter()).position(|d| d.as_deref() == Some(id))
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
        if entry.call.state != CallState::Running {
            return None;
        }
        let now_ms = self.now_ms(now);
        let elapsed = Duration::from_millis(entry.call.elapsed_ms(now_ms));
        let quiet =
            (entry.call.output_ms).map(|at| Duration::from_millis(now_ms.saturating_sub(at)));
        self.flags.flag(&entry.frame.name, elapsed, quiet)
    }

    fn prune(&mut self, now: Instant) {
        let now_ms = self.now_ms(now);
        self.entries.retain(|e| e.kept(now_ms));
    }

    fn live_entries(&self) -> impl Iterator<Item = &Entry> {
        self.entries.iter().filter(|e| !e.finished())
    }
}

#[cfg(test)]
mod tests;
