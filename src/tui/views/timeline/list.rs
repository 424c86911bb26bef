//! The list of rows: columns that adapt to the width (the name takes what is left), and
//! each row's bar on its run's time axis.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use unicode_width::UnicodeWidthStr;

use ratatui::style::Style;

use super::axis::{self, Axis};
use super::row::{Kind, Row};
use super::{TimelineState, clip, offset_label};
use crate::tui::theme::{Theme, duration};

/// Width of the offset column (`+123.45s`).
const OFFSET_W: u16 = 8;
/// Width of the duration column (`850 ms`, `12.5 s`, `10m01s`, `2h05m`).
const DURATION_W: u16 = 6;
/// Nesting levels that still indent a row's name.
const MAX_INDENT: u16 = 8;

/// Column widths for one pane width; 0 means the column is hidden.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Columns {
    pub name: u16,
    pub offset: u16,
    pub duration: u16,
    pub bar: u16,
}

/// Columns for a pane `width` cells wide. The offset, the duration and the bar get what
/// they need and narrow panes drop them (the bar first, then the offset, then the
/// duration); the name (what happened) takes every cell left.
pub(super) fn columns(width: u16) -> Columns {
    let duration = DURATION_W;
    // Symbol and its space take 2 cells; each further column one separating space.
    if width >= 90 {
        let bar = (width / 4).clamp(12, 40);
        Columns {
            name: width - 2 - (OFFSET_W + 1) - (duration + 1) - (bar + 1),
            offset: OFFSET_W,
            duration,
            bar,
        }
    } else if width >= 40 {
        // A short bar still shows when things happened and what waited.
        let bar = (width / 6).clamp(6, 12);
        Columns {
            name: width - 2 - (duration + 1) - (bar + 1),
            offset: 0,
            duration,
            bar,
        }
    } else if width >= 2 + duration + 1 + 12 {
        Columns {
            name: width - 2 - (duration + 1),
            offset: 0,
            duration,
            bar: 0,
        }
    } else {
        Columns {
            name: width.saturating_sub(2),
            offset: 0,
            duration: 0,
            bar: 0,
        }
    }
}

impl TimelineState {
    /// Draws the visible rows, keeping the selection in view; a model call in flight shows
    /// how long it has taken at `now_ms`.
    pub(super) fn render_list(
        &mut self,
        area: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        focused: bool,
        now_ms: Option<u64>,
    ) {
        let height = usize::from(area.height);
        self.page = height.max(1);
        if self.visible.is_empty() {
            let text = if self.rows.is_empty() {
                "no events yet".to_string()
            } else {
                format!("no {} events · f: filter", self.filter.label())
            };
            let text = clip(&text, usize::from(area.width));
            let x = area.x + (area.width.saturating_sub(text.width() as u16)) / 2;
            crate::tui::put::stringn(
                buf,
                x,
                area.y + area.height / 2,
                &text,
                usize::from(area.width),
                theme.dim,
            );
            return;
        }
        self.selected = self.selected.min(self.visible.len() - 1);
        // Scroll just enough to show the selection; never leave blank rows below the list.
        if self.selected < self.scroll {
            self.scroll = self.selected;
        } else if self.selected >= self.scroll + height {
            self.scroll = self.selected + 1 - height;
        }
        self.scroll = self.scroll.min(self.visible.len().saturating_sub(height));

        let cols = columns(area.width);
        let window: Vec<(usize, usize)> = (self.visible.iter().copied().enumerate())
            .skip(self.scroll)
            .take(height)
            .collect();
        for (y, (position, index)) in (area.y..).zip(window) {
            let Some(row) = self.rows.get(index) else {
                continue;
            };
            let Some(run) = self.runs.get_mut(&row.run) else {
                continue;
            };
            let origin = run.origin;
            let horizon = run.horizon;
            let axis = run.axis();
            let tone = row.tone.style(theme);
            // Nested work indents by its level, leaving at least half the column for the name.
            let indent = (row.depth.min(MAX_INDENT) * 2).min(cols.name / 2);
            let room = usize::from(cols.name - indent);
            crate::tui::put::stringn(buf, area.x + indent, y, row.symbol, 1, tone);
            let mut x = area.x.saturating_add(2);
            crate::tui::put::stringn(buf, x + indent, y, &clip(&row.name, room), room, theme.text);
            x += cols.name;
            if cols.offset > 0 {
                let text = offset_label(row.start.saturating_sub(origin));
                right(buf, x + 1, y, cols.offset, &text, theme.dim);
                x += cols.offset + 1;
            }
            // The idle time before a run goes in its bar when there is one, else here.
            let idle = row.idle_before.map(axis::idle_label);
            if cols.duration > 0 {
                let (text, style) = match (row.duration_ms(), &idle) {
                    (Some(ms), _) => (short_duration(ms), theme.dim),
                    (None, _) if row.pending => match now_ms.filter(|_| row.kind == Kind::Llm) {
                        Some(now) => (short_duration(now.saturating_sub(row.start)), theme.dim),
                        None => ("…".to_string(), theme.dim),
                    },
                    (None, Some(idle)) if cols.bar < 10 => (idle.clone(), theme.warn),
                    _ => (String::new(), theme.dim),
                };
                right(buf, x + 1, y, cols.duration, &text, style);
                x += cols.duration + 1;
            }
            if cols.bar > 0 {
                let bar = Rect::new(x + 1, y, cols.bar, 1);
                let end = if row.pending { horizon } else { row.end };
                let glyphs = Glyphs {
                    tone,
                    dim: theme.dim,
                    wait: theme.warn,
                };
                draw_bar(buf, bar, axis, row, end, glyphs);
                if let Some(idle) = idle.filter(|_| cols.bar >= 10) {
                    crate::tui::put::stringn(
                        buf,
                        bar.x,
                        y,
                        &format!("{idle} idle"),
                        bar.width.into(),
                        theme.warn,
                    );
                }
            }
            if focused && position == self.selected {
                buf.set_style(Rect::new(area.x, y, area.width, 1), theme.selected);
            }
        }
    }
}

/// The styles of a bar: its row's tone, the axis breaks, the time spent waiting.
#[derive(Clone, Copy)]
struct Glyphs {
    tone: Style,
    dim: Style,
    wait: Style,
}

/// One row's bar on its run's `axis`: `┊` where the axis skips a long wait for the user,
/// `░` for time spent waiting (an answer's row, a call's wait for approval), `█` for work,
/// `│` for an instant.
fn draw_bar(buf: &mut Buffer, bar: Rect, axis: &Axis, row: &Row, end: u64, glyphs: Glyphs) {
    // Cells set directly (every glyph here is one column wide): through `stringn`, which
    // measures non-ASCII text grapheme by grapheme, the bars were most of a frame's render.
    let cells = |buf: &mut Buffer, first: u16, last: u16, glyph: &str, style: Style| {
        let n = last.saturating_sub(first);
        crate::tui::put::repeat(buf, bar.x + first, bar.y, glyph, n, style);
    };
    for at in axis.breaks(bar.width) {
        cells(buf, at, at + 1, "┊", glyphs.dim);
    }
    let (first, last) = axis.cells(row.start, end, bar.width);
    let (glyph, style) = if row.is_wait() {
        ("░", glyphs.wait)
    } else if row.duration_ms().is_some() || row.pending {
        ("█", glyphs.tone)
    } else {
        ("│", glyphs.tone)
    };
    cells(buf, first, last, glyph, style);
    // The part of a call spent waiting for approval, over its bar.
    if let Some((asked, answered)) = row.wait {
        let (first, last) = axis.cells(asked, answered.unwrap_or(end).min(end), bar.width);
        cells(buf, first, last, "░", glyphs.wait);
    }
}
/// A duration in at most six cells: `850 ms`, `12.5 s`, `10m01s`, `2h05m`.
pub(super) fn short_duration(ms: u64) -> String {
    let secs = ms / 1000;
    if secs < 60 {
        duration(ms)
    } else if secs < 6000 {
        format!("{}m{:02}s", secs / 60, secs % 60)
    } else {
        format!("{}h{:02}m", secs / 3600, (secs % 3600) / 60)
    }
}

/// `text` right-aligned in `width` cells at `x`.
fn right(buf: &mut Buffer, x: u16, y: u16, width: u16, text: &str, style: Style) {
    let text = clip(text, usize::from(width));
    let pad = width.saturating_sub(text.width() as u16);
    crate::tui::put::stringn(buf, x + pad, y, &text, usize::from(width), style);
}
