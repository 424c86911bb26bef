//! Scrolling and visibility: walks outward from the anchor or the bottom, laying out only the
//! cells they pass.

use super::{Anchor, ChatState};

impl ChatState {
    /// Lays out cell `i` if needed and returns its height in lines.
    pub(super) fn height(&mut self, i: usize) -> usize {
        let (width, details, theme) = (self.width, self.details, self.theme);
        match self.cells.get_mut(i) {
            Some(cell) => {
                if cell.ensure(width, details, &theme) {
                    #[cfg(test)]
                    {
                        self.layouts += 1;
                    }
                    if crate::tui::highlight::take_deferred() {
                        cell.highlight_later();
                    }
                }
                cell.lines().len()
            }
            None => 0,
        }
    }

    pub(super) fn page(&self) -> usize {
        usize::from(self.height).saturating_sub(1).max(1)
    }

    /// The top line of a viewport that shows the bottom, or `None` when everything fits.
    pub(super) fn top_when_following(&mut self) -> Option<Anchor> {
        let mut rows = usize::from(self.height);
        let mut i = self.cells.len();
        while i > 0 {
            i -= 1;
            let h = self.height(i);
            if h > rows {
                return Some(Anchor {
                    cell: i,
                    line: h - rows,
                });
            }
            rows -= h;
            if rows == 0 {
                // Exactly full: the top is this cell's first line (if nothing visible is above,
                // the next render finds the anchor at the bottom and follows again).
                return (i > 0).then_some(Anchor { cell: i, line: 0 });
            }
        }
        None
    }

    pub(super) fn move_up(&mut self, mut n: usize) {
        loop {
            if n <= self.anchor.line {
                self.anchor.line -= n;
                return;
            }
            n -= self.anchor.line;
            self.anchor.line = 0;
            if self.anchor.cell == 0 {
                return;
            }
            self.anchor.cell -= 1;
            self.anchor.line = self.height(self.anchor.cell);
        }
    }

    pub(super) fn move_down(&mut self, mut n: usize) {
        while self.anchor.cell < self.cells.len() {
            let h = self.height(self.anchor.cell);
            if self.anchor.line + n < h {
                self.anchor.line += n;
                return;
            }
            n -= h.saturating_sub(self.anchor.line);
            self.anchor.cell += 1;
            self.anchor.line = 0;
        }
    }

    /// Whether everything from the anchor down fits in the viewport (so we are at the bottom).
    pub(super) fn fits_from_anchor(&mut self) -> bool {
        let rows = usize::from(self.height);
        let mut total = 0;
        let mut i = self.anchor.cell;
        let mut skip = self.anchor.line;
        while i < self.cells.len() {
            total += self.height(i).saturating_sub(skip);
            if total > rows {
                return false;
            }
            skip = 0;
            i += 1;
        }
        true
    }

    /// Visible `(cell, first line, end line)` runs ending at the last line.
    pub(super) fn segments_to_bottom(&mut self, rows: usize) -> Vec<(usize, usize, usize)> {
        let mut segments = Vec::new();
        let mut left = rows;
        let mut i = self.cells.len();
        while i > 0 && left > 0 {
            i -= 1;
            let h = self.height(i);
            let start = h.saturating_sub(left);
            if start < h {
                segments.push((i, start, h));
            }
            left -= h - start;
        }
        segments.reverse();
        segments
    }

    /// Visible runs starting at the anchor.
    pub(super) fn segments_from_anchor(&mut self, rows: usize) -> Vec<(usize, usize, usize)> {
        // The anchor cell may have shrunk (a wider pane, collapsed details).
        let h = self.height(self.anchor.cell);
        self.anchor.line = self.anchor.line.min(h.saturating_sub(1));
        let mut segments = Vec::new();
        let mut left = rows;
        let mut i = self.anchor.cell;
        let mut start = self.anchor.line;
        while i < self.cells.len() && left > 0 {
            let h = self.height(i);
            let start_here = start.min(h);
            let end = h.min(start_here + left);
            if end > start_here {
                segments.push((i, start_here, end));
                left -= end - start_here;
            }
            start = 0;
            i += 1;
        }
        segments
    }
}
