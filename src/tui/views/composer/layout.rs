//! How many rows the composer takes and which of them show: the editor's wrapped rows, up to
//! `MAX_ROWS`, then it scrolls with the cursor in view.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;
use ratatui_textarea::TextArea;

use super::search::Search;
use super::{Composer, MAX_ROWS};
use crate::tui::markdown::wrap_plain;
use crate::tui::theme::Theme;

impl Composer {
    /// Rows the composer wants at `width` (1 to `MAX_ROWS`): its wrapped rows, as the editor
    /// lays them out.
    pub fn rows(&mut self, width: u16) -> u16 {
        if let Some(search) = &self.search {
            let lines = self.search_lines(search, width, &Theme::default());
            return (lines.len().max(1).min(usize::from(MAX_ROWS))) as u16;
        }
        if self.laid_out != Some(width) {
            // The editor wraps when it draws: draw it once, aside, at this width.
            let rect = Rect::new(0, 0, width, MAX_ROWS);
            let mut scratch = Buffer::empty(rect);
            (&self.area).render(rect, &mut scratch);
            self.laid_out = Some(width);
        }
        let rows = screen_rows(&self.area).min(usize::from(MAX_ROWS));
        (rows.max(1)) as u16
    }

    /// Scrolls the editor so the cursor shows and no rows are left blank below the text
    /// while text above is hidden (after a deletion, or at a new width), where the editor
    /// itself only keeps the cursor in view.
    pub(super) fn fit_viewport(&mut self, height: u16) {
        let height = usize::from(height);
        if height == 0 {
            return;
        }
        let total = screen_rows(&self.area);
        let cursor = self.area.screen_cursor().row;
        let prev = usize::from(self.area.scroll_offset().0);
        let top = if cursor < prev {
            cursor
        } else if prev + height <= cursor {
            cursor + 1 - height
        } else {
            prev
        };
        let top = top.min(total.saturating_sub(height));
        if top == prev {
            return;
        }
        let Ok(delta) = i16::try_from(top as i64 - prev as i64) else {
            return;
        };
        // Scrolling may pull the cursor into the old viewport; it goes back where it was.
        let saved = self.area.cursor();
        self.area.scroll((delta, 0));
        if self.area.cursor() != saved {
            self.jump(saved.0, saved.1);
        }
    }

    /// `(reverse-i-search)'query': match`, wrapped to `width`.
    pub(super) fn search_lines(
        &self,
        search: &Search,
        width: u16,
        theme: &Theme,
    ) -> Vec<Line<'static>> {
        let prompt = [Span::styled(
            search.prompt(),
            if search.is_failing() {
                theme.warn
            } else {
                theme.key
            },
        )];
        let found = search.found().and_then(|i| self.history.get(i));
        let text = found.map_or("", |d| d.typed.as_str());
        // Only what fits is laid out: an entry can be long.
        let head: String = text
            .chars()
            .take(usize::from(width) * usize::from(MAX_ROWS))
            .collect();
        let mut lines = wrap_plain(&head, theme.text, width.max(1), &prompt, &[]);
        if lines.is_empty() {
            // Nothing found yet: the prompt alone.
            lines.push(Line::from(prompt.to_vec()));
        }
        lines.truncate(usize::from(MAX_ROWS));
        lines
    }
}

/// How many rows the editor's text takes as last laid out: the screen row where the last
/// row starts, found by bisection over the editor's screen-to-text map (the map is not
/// public, its lookups are).
pub(super) fn screen_rows(area: &TextArea<'_>) -> usize {
    let last = area.screen_to_data(usize::MAX, 0);
    // No more rows than chars and lines.
    let (mut lo, mut hi) = (0, area.lines().iter().map(|l| l.len() + 1).sum::<usize>());
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if area.screen_to_data(mid, 0) >= last {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo + 1
}
