//! The tool-stack pane (DESIGN §5): the calls in flight, nested by parent, with their state
//! and live elapsed time. Finished frames stay dimmed for a moment, then leave.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use unicode_width::UnicodeWidthStr;

use crate::event::{Event, EventData, FrameState, StackFrame};
use crate::tui::theme::{Theme, duration, spinner};

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
    /// First shown tree row when the user scrolled; `None` keeps the newest rows in view.
    scroll: Option<usize>,
    /// Tree rows and pane height at the last render, for scrolling by key.
    rows: usize,
    height: usize,
}

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
                    // Time spent waiting for consent is not the tool's run time.
                    if entry.frame.state == FrameState::AwaitingApproval
                        && frame.state == FrameState::Running
                    {
                        entry.started = now;
                    }
                    entry.frame = frame.clone();
                }
                None => self.entries.push(Entry {
                    frame: frame.clone(),
                    started: now,
                    finished: None,
                    took: Duration::ZERO,
                    progress: None,
                }),
            },
            EventData::StackPop(frame) => match self.live_entry(&frame.id) {
                Some(entry) => {
                    entry.frame = frame.clone();
                    entry.finish(frame.state, now);
                }
                // Popped without a push (e.g. denied before it ran): show it fading anyway.
                None => self.entries.push(Entry {
                    frame: frame.clone(),
                    started: now,
                    finished: Some(now),
                    took: Duration::ZERO,
                    progress: None,
                }),
            },
            EventData::ToolOutput { id, tail } => {
                if let Some(entry) = self.live_entry(id)
                    && let Some(last) = tail.lines().next_back()
                {
                    entry.progress = Some(format!("› {} · ", crate::text::summarize(last, 80)));
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
            }
            EventData::Error { .. } => self.finish_live(FrameState::Failed, now),
            _ => {}
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
        let elapsed = match entry {
            Some(Entry {
                finished: Some(_),
                took,
                ..
            }) => *took,
            Some(entry) => now.saturating_duration_since(entry.started),
            None => Duration::ZERO,
        };
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

    /// Forgets every frame.
    pub fn clear(&mut self) {
        *self = Self::default();
    }

    /// ↑/↓ (k/j), Home/End scroll when there are more rows than fit; `true` when used.
    pub fn on_key(&mut self, key: KeyEvent) -> bool {
        if key.kind == KeyEventKind::Release
            || !key.modifiers.difference(KeyModifiers::SHIFT).is_empty()
            || self.rows <= self.height
        {
            return false;
        }
        let bottom = self.rows - self.height;
        let top = self.scroll.unwrap_or(bottom).min(bottom);
        let top = match key.code {
            KeyCode::Up | KeyCode::Char('k') => top.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => top + 1,
            KeyCode::Home | KeyCode::Char('g') => 0,
            KeyCode::End | KeyCode::Char('G') => bottom,
            _ => return false,
        };
        // Back at the bottom: keep the newest rows in view again.
        self.scroll = (top < bottom).then_some(top);
        true
    }

    /// Draws the stack as a tree into `area`. `now` drives spinners, clocks and fading.
    pub fn render(
        &mut self,
        area: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        now: Instant,
        focused: bool,
    ) {
        // Nothing to select: focus only routes the scroll keys here.
        let _ = focused;
        self.prune(now);
        let area = area.intersection(buf.area);
        if area.is_empty() {
            return;
        }
        let tree = self.tree();
        self.rows = tree.len();
        self.height = usize::from(area.height);
        if tree.is_empty() {
            let text = "no tools running";
            let x = area.x + area.width.saturating_sub(text.width() as u16) / 2;
            let y = area.y + area.height / 2;
            buf.set_stringn(x, y, text, usize::from(area.width), theme.dim);
            return;
        }
        let bottom = self.rows.saturating_sub(self.height);
        let top = self.scroll.unwrap_or(bottom).min(bottom);
        for (y, (index, guides)) in (area.y..).zip(tree.iter().skip(top).take(self.height)) {
            if let Some(entry) = self.entries.get(*index) {
                draw_row(buf, area.x, y, area.width, entry, guides, theme, now);
            }
        }
        // Say that more rows hide above or below.
        let edge = area.right() - 1;
        if top > 0 {
            buf.set_stringn(edge, area.y, "↑", 1, theme.dim);
        }
        if top < bottom {
            buf.set_stringn(edge, area.bottom() - 1, "↓", 1, theme.dim);
        }
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

    /// Entries in tree order with their guide prefix (`│ ├─ └─`). A frame whose parent is
    /// not on the stack is shown at the top level; parent cycles are broken.
    fn tree(&self) -> Vec<(usize, String)> {
        let mut by_id: HashMap<&str, usize> = HashMap::new();
        for (i, entry) in self.entries.iter().enumerate() {
            // With a reused id, the live frame is the parent its children mean.
            let replace = by_id
                .get(entry.frame.id.as_str())
                .is_none_or(|&j| self.entries[j].finished.is_some());
            if replace {
                by_id.insert(&entry.frame.id, i);
            }
        }
        let mut children = vec![Vec::new(); self.entries.len()];
        let mut roots = Vec::new();
        for (i, entry) in self.entries.iter().enumerate() {
            let parent = (entry.frame.parent.as_deref())
                .and_then(|p| by_id.get(p).copied())
                .filter(|&p| p != i);
            match parent {
                Some(p) => children[p].push(i),
                None => roots.push(i),
            }
        }
        let mut out = Vec::with_capacity(self.entries.len());
        let mut seen = vec![false; self.entries.len()];
        let starts = roots.into_iter().chain(0..self.entries.len());
        for root in starts {
            // Iterative, so a very deep stack cannot overflow the call stack.
            let mut todo = vec![(root, String::new(), None::<bool>)];
            while let Some((i, guides, last)) = todo.pop() {
                if std::mem::replace(&mut seen[i], true) {
                    continue;
                }
                let (mark, carry) = match last {
                    None => ("", ""),
                    Some(true) => ("└─", "  "),
                    Some(false) => ("├─", "│ "),
                };
                out.push((i, format!("{guides}{mark}")));
                let mut inner = guides;
                if inner.chars().count() < MAX_INDENT * 2 {
                    inner.push_str(carry);
                }
                let kids = &children[i];
                for (k, &child) in kids.iter().enumerate().rev() {
                    todo.push((child, inner.clone(), Some(k + 1 == kids.len())));
                }
            }
        }
        out
    }
}

/// The mark of a state and its style; a running frame spins by its own elapsed time.
fn state_mark(state: FrameState, elapsed: Duration, theme: &Theme) -> (&'static str, Style) {
    match state {
        FrameState::Running => (spinner(elapsed.as_millis()), theme.tool),
        FrameState::AwaitingApproval => ("?", theme.warn),
        FrameState::AwaitingInput => ("…", theme.warn),
        FrameState::Done => ("✓", theme.ok),
        FrameState::Failed => ("✗", theme.error),
        FrameState::Denied => ("⊘", theme.warn),
        FrameState::Cancelled => ("■", theme.dim),
    }
}

/// One tree row: guides, mark, name, summary, and the elapsed time at the right.
#[allow(clippy::too_many_arguments)]
fn draw_row(
    buf: &mut Buffer,
    x: u16,
    y: u16,
    width: u16,
    entry: &Entry,
    guides: &str,
    theme: &Theme,
    now: Instant,
) {
    let fading = entry.finished.is_some();
    let elapsed = if fading {
        entry.took
    } else {
        now.saturating_duration_since(entry.started)
    };
    let (mark, mut mark_style) = state_mark(entry.frame.state, elapsed, theme);
    let (mut name_style, mut text_style) = (theme.tool, theme.text);
    if fading {
        mark_style = mark_style.add_modifier(Modifier::DIM);
        (name_style, text_style) = (theme.dim, theme.dim);
    }
    let clock = duration(elapsed.as_millis().min(u128::from(u64::MAX)) as u64);
    let clock_w = clock.width() as u16;
    let show_clock = width >= clock_w + 1 + 12;
    let room = if show_clock {
        width - clock_w - 1
    } else {
        width
    };
    let right = x.saturating_add(room);
    let mut cx = x;
    let mut cut = false;
    for (text, style) in [
        (guides, theme.dim),
        (mark, mark_style),
        (" ", text_style),
        (entry.frame.name.as_str(), name_style),
        (" ", text_style),
        (entry.progress.as_deref().unwrap_or(""), theme.key),
        (entry.frame.summary.as_str(), text_style),
    ] {
        let left = usize::from(right.saturating_sub(cx));
        // Names and summaries come from the model: keep them on one row.
        let text: String = text
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        if text.width() > left {
            cut = true;
        }
        cx = buf.set_stringn(cx, y, &text, left, style).0;
    }
    if cut && room > 1 {
        let style = if fading { theme.dim } else { theme.text };
        buf.set_stringn(right - 1, y, "…", 1, style);
    }
    if show_clock {
        let cx = x.saturating_add(width - clock_w);
        buf.set_stringn(cx, y, &clock, usize::from(clock_w), theme.dim);
    }
}

/// A progress report as the stack shows it: a bar and `n/total` when the total is known,
/// then the message.
fn progress_text(progress: f64, total: Option<f64>, message: Option<&str>) -> String {
    const CELLS: usize = 8;
    let mut text = match total.filter(|t| t.is_finite() && *t > 0.0) {
        Some(total) => {
            let share = (progress / total).clamp(0.0, 1.0);
            let full = (share * CELLS as f64).round() as usize;
            format!(
                "{}{} {progress}/{total}",
                "▰".repeat(full),
                "▱".repeat(CELLS - full)
            )
        }
        None => format!("{progress}"),
    };
    if let Some(message) = message.filter(|m| !m.is_empty()) {
        text.push_str(" · ");
        text.push_str(message);
    }
    text.push_str(" · ");
    text
}

#[cfg(test)]
mod tests;
