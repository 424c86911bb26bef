//! The detail view: the full payload of one timeline row, wrapped (or not, panned with
//! ←/→) and scrollable, over the pane or the whole screen.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use unicode_width::UnicodeWidthChar;

use super::Shown;
use crate::conversation::Message;
use crate::tui::highlight;
use crate::tui::theme::Theme;
use crate::tui::views::keyline::{self, KeyHint, KeyStyles, hint};

mod copy;
mod doc;

use doc::Line;

/// Cells ←/→ move the text when it is not wrapped.
const PAN: usize = 8;
/// Cells a wrapped line's further rows hang in.
const HANG: u16 = 2;

/// The detail view of one row. Its lines are built once when it opens, so new events never
/// move it. It shows over the timeline pane as an overlay, or over the whole screen when
/// zoomed (its keys: `overlay/detail.rs`).
#[derive(Debug, Default)]
pub struct Detail {
    pub(super) lines: Vec<Line>,
    /// Closed by a key: the overlay stack drops it.
    pub(crate) closed: bool,
    /// Whether long lines wrap (else they are cut at the edge and ←/→ pan).
    wrap: bool,
    /// Cells hidden at the left while not wrapping.
    pan: usize,
    /// Widest line in cells (its indent included), for bounding the pan.
    widest: usize,
    /// Rows `(line, start byte, end byte)` for `wrapped_for` (one per line when not wrapping).
    segments: Vec<(usize, usize, usize)>,
    wrapped_for: Option<(u16, bool)>,
    scroll: usize,
    /// Updated by render; bounds scrolling from keys.
    max_scroll: usize,
    page: usize,
    /// Text columns from the last render, for bounding the pan.
    room: usize,
}

impl Detail {
    /// The detail of a row, with times relative to `origin`.
    pub(super) fn new(shown: &Shown, origin: u64, conversation: &[Message]) -> Self {
        let lines = doc::build(shown, origin, conversation);
        let widest = (lines.iter())
            .map(|l| usize::from(l.indent) + cells(&l.text))
            .max()
            .unwrap_or(0);
        Self {
            max_scroll: lines.len(),
            lines,
            wrap: true,
            widest,
            page: 10,
            ..Self::default()
        }
    }

    /// Scrolls by `delta` lines (clamped).
    pub(crate) fn scroll_by(&mut self, delta: isize) {
        let target = self.scroll.saturating_add_signed(delta);
        self.scroll = target.min(self.max_scroll);
    }

    /// Scrolls to the top (`false`) or the bottom (`true`).
    pub(crate) fn scroll_to(&mut self, bottom: bool) {
        self.scroll = if bottom { self.max_scroll } else { 0 };
    }

    /// Lines a page key moves.
    pub(crate) fn page(&self) -> isize {
        self.page.max(1) as isize
    }

    /// Moves unwrapped text left (`-1`) or right (`1`) by a few cells; wrapped text has
    /// nothing to pan. Returns whether it is a key of the view now.
    pub(crate) fn pan_by(&mut self, direction: isize) -> bool {
        if self.wrap {
            return false;
        }
        let most = self.widest.saturating_sub(self.room);
        let step = direction.saturating_mul(PAN as isize);
        self.pan = self.pan.saturating_add_signed(step).min(most);
        true
    }

    /// Wraps long lines, or stops wrapping them (they are then cut and pan with ←/→): text
    /// that was wrapped by its author reads best unwrapped.
    pub(crate) fn toggle_wrap(&mut self) {
        self.wrap = !self.wrap;
        self.pan = 0;
    }

    /// Whether long lines wrap.
    pub fn wraps(&self) -> bool {
        self.wrap
    }

    /// Draws the visible part of the payload and its key hints at the bottom; `zoomed`
    /// says which keys lead back.
    pub(crate) fn draw(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme, zoomed: bool) {
        if area.width == 0 || area.height == 0 {
            return;
        }
        if self.wrapped_for != Some((area.width, self.wrap)) {
            self.rewrap(area.width);
        }
        // The key rows: two at most when the view is tall enough, else one, else none.
        let hints = self.hints(zoomed);
        let styles = KeyStyles {
            key: theme.key,
            what: theme.dim,
            note: theme.warn,
        };
        let max_rows = match area.height {
            0..=2 => 0,
            3..=9 => 1,
            _ => 2,
        };
        // The key rows and the marker of what is cut depend on each other: settle them.
        let mut key_rows = 0;
        let mut note = String::new();
        for _ in 0..3 {
            let height = usize::from(area.height - key_rows);
            let max_scroll = self.segments.len().saturating_sub(height);
            let scroll = self.scroll.min(max_scroll);
            let below = self.segments.len().saturating_sub(scroll + height);
            note =
                keyline::more(scroll, below).map_or(String::new(), |m| format!("{} ·", m.trim()));
            let rows = keyline::fit(&hints, &note, area.width, max_rows.max(1)).1;
            let rows = u16::try_from(rows).unwrap_or(u16::MAX).min(max_rows);
            if rows == key_rows {
                break;
            }
            key_rows = rows;
        }
        let height = usize::from(area.height - key_rows);
        self.page = height.saturating_sub(1).max(1);
        self.max_scroll = self.segments.len().saturating_sub(height);
        self.scroll = self.scroll.min(self.max_scroll);
        self.room = usize::from(area.width);
        // Kept as asked: a wider screen shows more, a narrower one pans as far again.
        let pan = self.pan.min(self.widest.saturating_sub(self.room));
        let visible = self.segments.iter().skip(self.scroll).take(height);
        for (y, &(index, start, end)) in (area.y..).zip(visible) {
            if let Some(line) = self.lines.get(index) {
                let unwrapped = (!self.wrap).then_some(pan);
                draw_row(buf, area, y, line, (start, end), unwrapped, theme);
            }
        }
        if key_rows > 0 {
            let lines = keyline::lines(&hints, &note, area.width, key_rows, styles);
            let top = area.bottom() - key_rows;
            for (y, line) in (top..).zip(lines.iter().take(usize::from(key_rows))) {
                crate::tui::put::line(buf, area.x, y, line, area.width);
            }
        }
    }

    /// The keys of the view in its state.
    fn hints(&self, zoomed: bool) -> Vec<KeyHint> {
        let mut hints = if zoomed {
            vec![hint("Esc/z", "back")]
        } else {
            vec![hint("Esc", "close"), hint("z", "full screen").or("zoom")]
        };
        hints.push(hint("↑↓", "scroll").or(""));
        hints.push(hint("y", "copy"));
        if self.wrap {
            hints.push(hint("w", "no wrap").or("nowrap"));
        } else {
            hints.push(hint("←→", "pan").or(""));
            hints.push(hint("w", "wrap"));
        }
        hints
    }

    /// Splits the lines into rows for `width`: wrapped, or one row a line. The line at the
    /// top stays at the top.
    fn rewrap(&mut self, width: u16) {
        let top = self.segments.get(self.scroll).map(|s| s.0);
        self.segments.clear();
        for (index, line) in self.lines.iter().enumerate() {
            if !self.wrap {
                self.segments.push((index, 0, line.text.len()));
                continue;
            }
            let room = usize::from(width - line.indent_at(width));
            let rest = room - usize::from(hang(line, width));
            for (start, end) in wrap_hanging(&line.text, room, rest) {
                self.segments.push((index, start, end));
            }
        }
        if let Some(top) = top {
            self.scroll = self.segments.partition_point(|s| s.0 < top);
        }
        self.wrapped_for = Some((width, self.wrap));
    }
}

/// One row of a line: its part `start..end` in the line's colours. `unwrapped` is how far
/// an unwrapped line is panned: it is shifted that many cells left, with `‹` / `›` where
/// text goes on out of sight.
fn draw_row(
    buf: &mut Buffer,
    area: Rect,
    y: u16,
    line: &Line,
    (start, end): (usize, usize),
    unwrapped: Option<usize>,
    theme: &Theme,
) {
    // Wrapped rows after a line's first hang under it, so each line's start stands out.
    let indent = match (unwrapped, start) {
        (None, 0) => line.indent_at(area.width),
        (None, _) => line.indent_at(area.width) + hang(line, area.width),
        (Some(_), _) => line.indent,
    };
    let pan = unwrapped.unwrap_or(0);
    let mut pen = Pen {
        x: area.x,
        right: area.right(),
        skip: pan,
        cut: false,
    };
    pen.put(buf, y, &" ".repeat(usize::from(indent)), Style::default());
    let split = line.label.clamp(start, end);
    pen.put(buf, y, &line.text[start..split], theme.dim);
    for (from, to, paint) in highlight::pieces(&line.runs, split, end) {
        let style = paint.map_or(line.tone.style(theme), |p| p.style(theme));
        pen.put(buf, y, &line.text[from..to], style);
    }
    if unwrapped.is_some() {
        let hidden = pan > 0 && !line.text.is_empty();
        if hidden {
            crate::tui::put::stringn(buf, area.x, y, "‹", 1, theme.dim);
        }
        if pen.cut && area.width > 1 {
            crate::tui::put::stringn(buf, area.right() - 1, y, "›", 1, theme.dim);
        }
    }
}

/// Writes text left to right, first skipping `skip` cells, never past `right`.
struct Pen {
    x: u16,
    right: u16,
    skip: usize,
    /// Whether text went past the right edge.
    cut: bool,
}

impl Pen {
    fn put(&mut self, buf: &mut Buffer, y: u16, text: &str, style: Style) {
        for (i, c) in text.char_indices() {
            let w = c.width().unwrap_or(0);
            if self.skip > 0 {
                // A wide character cut by the left edge shows as blanks.
                if w > self.skip {
                    let blanks = w - self.skip;
                    self.skip = 0;
                    for _ in 0..blanks {
                        self.cell(buf, y, " ", 1, style);
                    }
                } else {
                    self.skip -= w;
                }
                continue;
            }
            if usize::from(self.x) + w > usize::from(self.right) {
                self.cut = true;
                return;
            }
            self.cell(buf, y, &text[i..i + c.len_utf8()], w, style);
        }
    }

    fn cell(&mut self, buf: &mut Buffer, y: u16, symbol: &str, w: usize, style: Style) {
        if self.x >= self.right {
            self.cut = true;
            return;
        }
        crate::tui::put::stringn(buf, self.x, y, symbol, w.max(1), style);
        self.x = self.x.saturating_add(w as u16);
    }
}

/// Display width of `text`.
fn cells(text: &str) -> usize {
    text.chars().map(|c| c.width().unwrap_or(0)).sum()
}

/// Cells the rows after a line's first are indented further at `width`: under the line's
/// own leading spaces (pretty JSON, code) and two more, none when that leaves too little.
fn hang(line: &Line, width: u16) -> u16 {
    let lead = line.text.len() - line.text.trim_start_matches(' ').len();
    let hang = u16::try_from(lead).unwrap_or(u16::MAX).saturating_add(HANG);
    if line.indent_at(width).saturating_add(hang) <= width / 2 {
        hang
    } else {
        0
    }
}

/// Byte ranges of `text` that each fit `width` cells, breaking after a space when one is
/// on the line and hard otherwise. Always at least one range; never an empty range for a
/// non-empty text, so every character is shown once.
#[cfg(test)]
pub(super) fn wrap(text: &str, width: usize) -> Vec<(usize, usize)> {
    wrap_hanging(text, width, width)
}

/// [`wrap`] with the first range `first` cells wide and the others `rest`.
fn wrap_hanging(text: &str, first: usize, rest: usize) -> Vec<(usize, usize)> {
    let mut width = first.max(1);
    let mut out = Vec::new();
    let mut start = 0;
    let mut used = 0;
    let mut after_space = None;
    for (i, ch) in text.char_indices() {
        let w = ch.width().unwrap_or(0);
        if used + w > width && i > start {
            let cut = after_space.filter(|&b| b > start && b <= i).unwrap_or(i);
            out.push((start, cut));
            width = rest.max(1);
            start = cut;
            used = text[start..i].chars().map(|c| c.width().unwrap_or(0)).sum();
            after_space = None;
        }
        used += w;
        if ch == ' ' {
            after_space = Some(i + 1);
        }
    }
    out.push((start, text.len()));
    out
}

#[cfg(test)]
mod tests;
