//! The list of rows: columns that adapt to the width, and the bars on a shared time axis.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use unicode_width::UnicodeWidthStr;

use super::{TimelineState, clip, offset_label};
use crate::tui::theme::{Theme, duration};

/// Width of the offset column (`+123.45s`).
const OFFSET_W: u16 = 8;
/// Width of the duration column (`2 m 05 s`).
const DURATION_W: u16 = 8;
/// Nesting levels that still indent a row's name.
const MAX_INDENT: usize = 8;

/// Column widths for one pane width; 0 means the column is hidden.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Columns {
    pub name: u16,
    pub offset: u16,
    pub duration: u16,
    pub bar: u16,
}

/// Narrow panes drop the bar first, then the offset, then the duration: the name (what
/// happened) matters most.
pub(super) fn columns(width: u16) -> Columns {
    // Symbol and its space take 2 cells; each further column one separating space.
    let fixed = 2 + OFFSET_W + 1 + DURATION_W + 1;
    if width >= 70 {
        // The name gets about three fifths, up to what names usually need; the bar the rest.
        let rest = width - fixed - 1;
        let name = (rest / 5 * 3).clamp(14, 48).min(rest - 10);
        Columns {
            name,
            offset: OFFSET_W,
            duration: DURATION_W,
            bar: rest - name,
        }
    } else if width >= 40 {
        // Medium panes keep a short bar (it shows when things happened) and drop the
        // offset, so names stay readable.
        let bar = (width / 5).clamp(6, 12);
        Columns {
            name: width - 2 - DURATION_W - 1 - 1 - bar,
            offset: 0,
            duration: DURATION_W,
            bar,
        }
    } else if width >= fixed + 12 {
        Columns {
            name: width - fixed,
            offset: OFFSET_W,
            duration: DURATION_W,
            bar: 0,
        }
    } else if width >= 2 + DURATION_W + 1 + 10 {
        Columns {
            name: width - 2 - DURATION_W - 1,
            offset: 0,
            duration: DURATION_W,
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

/// Cells `[first, last)` of a bar `width` cells wide for the span `start..end` on the axis
/// `origin..horizon`. At least one cell, always inside the bar.
pub(super) fn bar_cells(start: u64, end: u64, origin: u64, horizon: u64, width: u16) -> (u16, u16) {
    if width == 0 {
        return (0, 0);
    }
    let span = u128::from(horizon.saturating_sub(origin).max(1));
    let w = u128::from(width);
    let from = u128::from(start.saturating_sub(origin));
    let to = u128::from(end.max(start).saturating_sub(origin));
    let first = (from * w / span).min(w - 1);
    // Round the end up so a span that covers part of a cell shows in it.
    let last = (to * w).div_ceil(span).clamp(first + 1, w);
    (first as u16, last as u16)
}

impl TimelineState {
    /// Draws the visible rows, keeping the selection in view.
    pub(super) fn render_list(
        &mut self,
        area: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        focused: bool,
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
            buf.set_stringn(
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
        let origin = self.origin.unwrap_or(0);
        let window = self
            .visible
            .iter()
            .enumerate()
            .skip(self.scroll)
            .take(height);
        for (y, (position, &index)) in (area.y..).zip(window) {
            let Some(row) = self.rows.get(index) else {
                continue;
            };
            let tone = row.tone.style(theme);
            // Nested work indents by its level, leaving at least half the column for the name.
            let indent = (row.depth.min(MAX_INDENT) as u16 * 2).min(cols.name / 2);
            let room = usize::from(cols.name - indent);
            buf.set_stringn(area.x + indent, y, row.symbol, 1, tone);
            let mut x = area.x.saturating_add(2);
            buf.set_stringn(x + indent, y, clip(&row.name, room), room, theme.text);
            x += cols.name;
            if cols.offset > 0 {
                let text = offset_label(row.start.saturating_sub(origin));
                right(buf, x + 1, y, cols.offset, &text, theme.dim);
                x += cols.offset + 1;
            }
            if cols.duration > 0 {
                let text = match row.duration_ms() {
                    Some(ms) => duration(ms),
                    None if row.pending => "…".to_string(),
                    None => String::new(),
                };
                right(buf, x + 1, y, cols.duration, &text, theme.dim);
                x += cols.duration + 1;
            }
            if cols.bar > 0 {
                let end = if row.pending { self.horizon } else { row.end };
                let (first, last) = bar_cells(row.start, end, origin, self.horizon, cols.bar);
                let glyph = if row.duration_ms().is_some() || row.pending {
                    "█"
                } else {
                    "│"
                };
                for cell in first..last {
                    buf.set_stringn(x + 1 + cell, y, glyph, 1, tone);
                }
            }
            if focused && position == self.selected {
                buf.set_style(Rect::new(area.x, y, area.width, 1), theme.selected);
            }
        }
    }
}

/// `text` right-aligned in `width` cells at `x`.
fn right(buf: &mut Buffer, x: u16, y: u16, width: u16, text: &str, style: ratatui::style::Style) {
    let text = clip(text, usize::from(width));
    let pad = width.saturating_sub(text.width() as u16);
    buf.set_stringn(x + pad, y, &text, usize::from(width), style);
}
