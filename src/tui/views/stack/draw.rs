//! Drawing the stack pane: the tree of frames, the selected frame's detail under its row,
//! each live frame's clock and ⚠ flag.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use unicode_width::UnicodeWidthStr;

use super::{Entry, MAX_INDENT, StackState};
use crate::event::{Confinement, FrameState, ToolStatus};
use crate::run_model::{CallNode, CallState};
use crate::tui::theme::{SPINNER, Theme, call_mark, duration, spinner};

/// A row of the pane: a frame (entry index, guide prefix) or a line of the selected frame's
/// detail (indent, text, style).
enum Row {
    Frame(usize, String),
    Detail(usize, String, Style),
}

impl StackState {
    /// Draws the stack as a tree into `area`. `now` drives spinners, clocks, flags and
    /// fading; the selection shows while `focused`, with the selected frame's detail under it
    /// when expanded.
    pub fn render(
        &mut self,
        area: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        now: Instant,
        focused: bool,
    ) {
        self.prune(now);
        let tree = self.tree();
        let selected = self.sync_selection(&tree);
        let area = area.intersection(buf.area);
        self.drawn.clear();
        if area.is_empty() {
            return;
        }
        if tree.is_empty() {
            (self.rows, self.height) = (0, usize::from(area.height));
            let text = "no tools running";
            let x = area.x + area.width.saturating_sub(text.width() as u16) / 2;
            let y = area.y + area.height / 2;
            crate::tui::put::stringn(buf, x, y, text, usize::from(area.width), theme.dim);
            return;
        }
        let mut rows: Vec<Row> = tree.into_iter().map(|(i, g)| Row::Frame(i, g)).collect();
        let mut detail_rows = 0;
        if let Some(row) = selected.filter(|_| self.expanded)
            && let Some(Row::Frame(index, guides)) = rows.get(row)
            && let Some(entry) = self.entries.get(*index)
        {
            let indent = guides.chars().count() + 2;
            let lines = self.detail(entry, now, theme);
            detail_rows = lines.len();
            let at = row + 1;
            rows.splice(
                at..at,
                lines.into_iter().map(|(t, s)| Row::Detail(indent, t, s)),
            );
        }
        self.rows = rows.len();
        self.height = usize::from(area.height);
        let bottom = self.rows.saturating_sub(self.height);
        let mut top = self.scroll.unwrap_or(bottom).min(bottom);
        if let Some(row) = selected {
            // The selected row in view, and as much of its detail as fits under it.
            let end = row + detail_rows;
            if end >= top + self.height {
                top = end + 1 - self.height;
            }
            top = top.min(row);
        }
        self.scroll = (top < bottom).then_some(top);
        for (y, (n, row)) in (area.y..).zip(rows.iter().enumerate().skip(top).take(self.height)) {
            let id = match row {
                Row::Frame(index, _) => self.entries.get(*index).map(|e| e.frame.id.clone()),
                Row::Detail(..) => None,
            };
            self.drawn.push(id);
            match row {
                Row::Frame(index, guides) => {
                    if let Some(entry) = self.entries.get(*index) {
                        let flag = self.right_note(entry, now);
                        let line = (area.x, y, area.width);
                        let elapsed = self.entry_elapsed(entry, now);
                        draw_row(buf, line, entry, guides, flag, theme, elapsed);
                    }
                }
                Row::Detail(indent, text, style) => {
                    let x = area
                        .x
                        .saturating_add(u16::try_from(*indent).unwrap_or(u16::MAX));
                    if x < area.right() {
                        let text = clean(text);
                        crate::tui::put::stringn(
                            buf,
                            x,
                            y,
                            &text,
                            usize::from(area.right() - x),
                            *style,
                        );
                    }
                }
            }
            if focused && selected == Some(n) {
                let line = Rect::new(area.x, y, area.width, 1);
                buf.set_style(line, theme.selected);
            }
        }
        // Say that more rows hide above or below.
        let edge = area.right() - 1;
        if top > 0 {
            crate::tui::put::stringn(buf, edge, area.y, "↑", 1, theme.dim);
        }
        if top < bottom {
            crate::tui::put::stringn(buf, edge, area.bottom() - 1, "↓", 1, theme.dim);
        }
    }

    /// What shows left of a live frame's clock: a cancel on its way, or a ⚠ flag.
    pub(super) fn right_note(&self, entry: &Entry, now: Instant) -> Option<String> {
        if entry.finished() {
            return None;
        }
        if self.cancelling.contains(&entry.frame.id) {
            return Some("cancelling…".to_string());
        }
        self.entry_flag(entry, now)
    }

    /// Entries in tree order with their guide prefix (`│ ├─ └─`). A frame whose parent is
    /// not on the stack is shown at the top level; parent cycles are broken.
    pub(super) fn tree(&self) -> Vec<(usize, String)> {
        let mut by_id: HashMap<&str, usize> = HashMap::new();
        for (i, entry) in self.entries.iter().enumerate() {
            // With a reused id, the live frame is the parent its children mean.
            let replace = by_id
                .get(entry.frame.id.as_str())
                .is_none_or(|&j| self.entries[j].finished());
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

/// Text from outside on one row: controls become spaces.
fn clean(text: &str) -> String {
    (text.chars())
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// The mark of a call's state (the chat's too) and its style; a call at work spins by its
/// own elapsed time.
fn state_mark(state: CallState, elapsed: Duration, theme: &Theme) -> (&'static str, Style) {
    match call_mark(state, theme) {
        (mark, style) if mark == SPINNER[0] => (spinner(elapsed.as_millis()), style),
        other => other,
    }
}

/// One tree row at `(x, y, width)`: guides, mark, name, summary, and at the right the
/// elapsed time after a note (a ⚠ flag) when there is room for it.
fn draw_row(
    buf: &mut Buffer,
    (x, y, width): (u16, u16, u16),
    entry: &Entry,
    guides: &str,
    note: Option<String>,
    theme: &Theme,
    elapsed: Duration,
) {
    let fading = entry.finished();
    let (mark, mut mark_style) = state_mark(entry.call.state, elapsed, theme);
    let (mut name_style, mut text_style) = (theme.tool, theme.text);
    if fading {
        mark_style = mark_style.add_modifier(Modifier::DIM);
        (name_style, text_style) = (theme.dim, theme.dim);
    }
    // A queued call has not started: no clock yet (it counts from when it runs).
    let mut clock = if !fading && entry.frame.state == FrameState::Queued {
        "queued".to_string()
    } else {
        duration(elapsed.as_millis().min(u128::from(u64::MAX)) as u64)
    };
    // A command that said it failed says how, beside its clock.
    let note = note.or_else(|| match entry.call.state {
        CallState::Ended(ToolStatus::ExitNonzero) => entry.call.end_label(),
        _ => None,
    });
    let mut note_w = 0;
    if let Some(note) = note.filter(|n| width as usize >= clock.width() + n.width() + 2 + 12) {
        note_w = note.width() as u16;
        clock = format!("{note} {clock}");
    }
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
    let (tag, tag_style) = sandbox_tag(entry, theme, fading);
    let mut progress = progress_of(&entry.call);
    // A narrow pane keeps the count rather than the bar: `4/40` says more than `▰▱▱▱▱…`.
    let name = crate::mcp::names::display(&entry.frame.name);
    let before = guides.width() + mark.width() + 2 + name.width() + tag.width();
    if let Some(p) = &entry.call.progress
        && before + crate::tui::theme::progress_text(p.progress, p.total, None).width()
            > usize::from(room)
    {
        progress = match p.total.filter(|t| t.is_finite() && *t > 0.0) {
            Some(total) => format!("{}/{total} · ", p.progress),
            None => format!("{} · ", p.progress),
        };
    }
    for (text, style) in [
        (guides, theme.dim),
        (mark, mark_style),
        (" ", text_style),
        (&*name, name_style),
        (" ", text_style),
        (tag.as_str(), tag_style),
        (progress.as_str(), theme.key),
        (entry.frame.summary.as_str(), text_style),
    ] {
        let left = usize::from(right.saturating_sub(cx));
        // Names and summaries come from the model: keep them on one row.
        let text = clean(text);
        if text.width() > left {
            cut = true;
        }
        cx = crate::tui::put::stringn(buf, cx, y, &text, left, style).0;
    }
    if cut && room > 1 {
        let style = if fading { theme.dim } else { theme.text };
        crate::tui::put::stringn(buf, right - 1, y, "…", 1, style);
    }
    if show_clock {
        let cx = x.saturating_add(width - clock_w);
        crate::tui::put::stringn(buf, cx, y, &clock, usize::from(clock_w), theme.dim);
        if note_w > 0 {
            crate::tui::put::stringn(buf, cx, y, &clock, usize::from(note_w), theme.warn);
        }
    }
}

/// `[sandboxed] ` after a call's name: how it runs, a warning when unconfined although a
/// sandbox was expected.
fn sandbox_tag(entry: &Entry, theme: &Theme, fading: bool) -> (String, Style) {
    let Some(sandbox) = entry.call.sandbox else {
        return (String::new(), theme.dim);
    };
    let style = match sandbox {
        Confinement::Unsandboxed | Confinement::Unavailable if !fading => theme.warn,
        _ => theme.dim,
    };
    (format!("[{}] ", sandbox.short()), style)
}

/// What a running call said of its progress last: its report, else its last output line.
fn progress_of(call: &CallNode) -> String {
    if let Some(p) = &call.progress {
        return crate::tui::theme::progress_text(p.progress, p.total, p.message.as_deref());
    }
    match call.tail.as_deref().and_then(|t| t.lines().next_back()) {
        Some(last) if call.state.is_open() => {
            format!("› {} · ", crate::text::summarize(last, 80))
        }
        _ => String::new(),
    }
}
