//! The chat pane: user messages, streamed Markdown answers, reasoning, tool calls, errors and
//! notices, in one scrollable column.
//!
//! Cost does not grow with history: each cell caches its wrapped lines per width, and a frame
//! lays out only the cells it shows. The scroll position is an anchor (a cell and a line in
//! it) or "following the bottom", never a global line number, so scrolling walks only the
//! lines it moves over.

use std::collections::HashMap;
use std::time::Instant;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;

use crate::event::Event;
use crate::run_model::RunModel;
use crate::tui::markdown::str_width;
use crate::tui::theme::{Theme, spinner};

mod cell;
mod changes;
mod earlier;
mod events;
mod flags;
mod nested;
#[cfg(test)]
mod nested_tests;
mod notices;
mod scroll;
mod select;
mod shell;
mod stream;
#[cfg(test)]
mod tests;
mod tool;

use cell::{Cell, CellKind, NoteStyle, User};

/// How a notice added with [`ChatState::push_notice`] looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoticeKind {
    /// Information, rendered as Markdown (slash-command output).
    Info,
    /// A warning line.
    Warn,
    /// An error line.
    Error,
}

/// The top visible line when not following: line `line` of cell `cell`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Anchor {
    cell: usize,
    line: usize,
}

/// What the current run is streaming into.
#[derive(Debug, Default)]
struct RunState {
    /// The answer cell receiving text deltas.
    text_open: Option<usize>,
    /// The reasoning cell receiving reasoning deltas.
    reasoning_open: Option<usize>,
    /// Answer cells of the current model call (more than one when reasoning interleaves).
    turn_text: Vec<usize>,
    /// Reasoning cells of the current model call.
    turn_reasoning: Vec<usize>,
    /// Tool cells by call id.
    tools: HashMap<String, usize>,
    /// The answer cell of the latest model call that said something.
    assistant: Option<usize>,
    /// Blank text that arrived before any answer text of this call.
    pending_blank: String,
}

/// State of the chat pane.
#[derive(Debug)]
pub struct ChatState {
    cells: Vec<Cell>,
    following: bool,
    anchor: Anchor,
    /// Width and height of the last rendered area (layouts and paging use them).
    width: u16,
    height: u16,
    theme: Theme,
    details: bool,
    /// Something changed below the view while not following.
    unseen: bool,
    run: RunState,
    /// The caller's clock for the event being applied (spinner phases); `None`: real time.
    now: Option<Instant>,
    /// The message selected for copying (`y`), by cell.
    selected: Option<usize>,
    /// What each row of the last frame showed: (cell, line), `None` for the hint row.
    drawn: Vec<Option<(usize, usize)>>,
    /// New code is highlighted on a background thread (see `highlight::in_background`).
    highlight_background: bool,
    /// A cell shown in the last frame has code still to colour.
    highlight_pending: bool,
    /// Layouts done (tests check that unchanged cells are not laid out again).
    #[cfg(test)]
    layouts: usize,
}

impl Default for ChatState {
    fn default() -> Self {
        Self::new()
    }
}

impl ChatState {
    /// An empty pane, following the bottom.
    pub fn new() -> Self {
        Self {
            cells: Vec::new(),
            following: true,
            anchor: Anchor::default(),
            width: 0,
            height: 0,
            theme: Theme::default(),
            details: false,
            unseen: false,
            run: RunState::default(),
            now: None,
            selected: None,
            drawn: Vec::new(),
            highlight_background: false,
            highlight_pending: false,
            #[cfg(test)]
            layouts: 0,
        }
    }

    /// Adds a message the user sent.
    pub fn push_user(&mut self, text: &str) {
        self.push_user_shown(text, None);
    }

    /// Adds a message the user sent that showed as `shown` in the composer (big pastes as
    /// chips): it shows so until Ctrl-O expands details, then in full.
    pub fn push_user_shown(&mut self, text: &str, shown: Option<String>) {
        self.close_streams(None);
        self.push(CellKind::User(User {
            text: text.to_string(),
            collapsed: shown.filter(|shown| shown != text),
            images: Vec::new(),
        }));
    }

    /// Adds a notice: slash-command output (`Info`, Markdown), a warning or an error.
    pub fn push_notice(&mut self, kind: NoticeKind, text: impl Into<String>) {
        let style = match kind {
            NoticeKind::Info => NoteStyle::Markdown,
            NoticeKind::Warn => NoteStyle::Warn,
            NoticeKind::Error => NoteStyle::Error,
        };
        self.push(CellKind::Notice {
            style,
            text: text.into(),
        });
    }

    /// Updates the pane from an orchestrator event.
    pub fn on_event(&mut self, event: &Event, run: &RunModel) {
        self.apply(event, run);
    }

    /// Updates the pane from an event that arrived at `now` (the clock later renders use,
    /// so spinners start in phase with it).
    pub fn on_event_at(&mut self, event: &Event, run: &RunModel, now: Instant) {
        self.now = Some(now);
        self.apply(event, run);
        self.now = None;
    }

    /// When a cell added now is first seen.
    fn clock(&self) -> Instant {
        self.now.unwrap_or_else(Instant::now)
    }

    /// Scrolls up by `lines`; stops following the bottom.
    pub fn scroll_up(&mut self, lines: usize) {
        if lines == 0 || self.height == 0 {
            return;
        }
        if self.following {
            let Some(top) = self.top_when_following() else {
                return; // everything fits: nothing above
            };
            self.anchor = top;
            self.following = false;
            self.unseen = false;
        }
        self.move_up(lines);
    }

    /// Scrolls down by `lines`; reaching the bottom resumes following.
    pub fn scroll_down(&mut self, lines: usize) {
        if self.following || self.height == 0 {
            return;
        }
        self.move_down(lines);
        if self.fits_from_anchor() {
            self.scroll_to_bottom();
        }
    }

    /// Scrolls up by one viewport.
    pub fn page_up(&mut self) {
        self.scroll_up(self.page());
    }

    /// Scrolls down by one viewport.
    pub fn page_down(&mut self) {
        self.scroll_down(self.page());
    }

    /// Jumps to the bottom and follows new content again.
    pub fn scroll_to_bottom(&mut self) {
        self.following = true;
        self.unseen = false;
    }

    /// Whether new content keeps the bottom in view.
    pub fn is_following(&self) -> bool {
        self.following
    }

    /// Expands or collapses every tool cell, reasoning block and pasted text.
    pub fn toggle_details(&mut self) {
        self.details = !self.details;
    }

    /// Forgets every cell.
    pub fn clear(&mut self) {
        self.cells.clear();
        self.selected = None;
        self.run = RunState::default();
        self.anchor = Anchor::default();
        self.following = true;
        self.unseen = false;
    }

    /// The answer text of the latest model call of the current run that said something
    /// (while it streams, the text so far).
    pub fn last_assistant_text(&self) -> Option<&str> {
        let i = self.run.text_open.or(self.run.assistant)?;
        match &self.cells.get(i)?.kind {
            CellKind::Assistant(a) if !a.text.trim().is_empty() => Some(&a.text),
            _ => None,
        }
    }

    /// Number of cells.
    pub fn len(&self) -> usize {
        self.cells.len()
    }

    /// Whether there are no cells.
    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    /// The row of the last frame (from the top of the pane) that showed the mark line of
    /// call `id`'s cell, if it was in view: tests read what the chat shows of a call there.
    pub fn tool_row(&self, id: &str) -> Option<usize> {
        let &cell = self.run.tools.get(id)?;
        let line = usize::from(self.cells.get(cell)?.gap);
        self.drawn.iter().position(|d| *d == Some((cell, line)))
    }

    /// Draws the visible cells into `area` (the pane's inner area, expected blank as ratatui's
    /// frame buffer is; the app draws the border). `now` only picks spinner frames. The width
    /// and theme are kept for layouts that scrolling needs between frames.
    pub fn render(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme, now: Instant) {
        let area = area.intersection(buf.area);
        self.theme = *theme;
        self.width = area.width;
        self.height = area.height;
        self.drawn.clear();
        if area.is_empty() {
            return;
        }
        let background = self.highlight_background;
        crate::tui::highlight::take_deferred();
        crate::tui::highlight::in_background(background, || {
            self.draw_rows(area, buf, theme, now);
        });
        self.highlight_pending = self
            .drawn
            .iter()
            .flatten()
            .any(|&(i, _)| self.cells.get(i).is_some_and(Cell::highlight_pending));
    }

    /// Leaves new code's highlighting to a background thread, drawn plain until its colours
    /// are in (the TUI loop sets it; by default everything is coloured at once, as tests and
    /// snapshots want).
    pub fn set_highlight_in_background(&mut self, on: bool) {
        self.highlight_background = on;
    }

    /// Whether a cell in view has code still to colour: another frame should be drawn.
    pub fn highlight_pending(&self) -> bool {
        self.highlight_pending
    }

    /// Draws the rows of the view (`render` after its setup).
    fn draw_rows(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme, now: Instant) {
        let height = usize::from(area.height);
        if !self.following && self.fits_from_anchor() {
            self.scroll_to_bottom();
        }
        let hint = !self.following && height >= 2;
        let segments = if self.following {
            self.segments_to_bottom(height)
        } else {
            self.segments_from_anchor(height - usize::from(hint))
        };
        let mut y = area.y;
        for (i, start, end) in segments {
            let Some(cell) = self.cells.get(i) else {
                continue;
            };
            let spin = cell.spinner_line();
            let elapsed = now.saturating_duration_since(cell.seen).as_millis();
            let lines = cell.lines().get(start..end).unwrap_or_default();
            for (n, line) in lines.iter().enumerate() {
                if let Some((row, span)) = spin
                    && row == start + n
                {
                    draw_spinner_line(buf, (area.x, y, area.width), line, span, spinner(elapsed));
                } else {
                    crate::tui::put::line(buf, area.x, y, line, area.width);
                }
                let at = start + n;
                if self.selected == Some(i) && !(cell.gap && at == 0) {
                    buf.set_style(Rect::new(area.x, y, area.width, 1), theme.selected);
                }
                self.drawn.push(Some((i, at)));
                y += 1;
            }
        }
        if hint {
            let (texts, style) = if self.unseen {
                (
                    [
                        "↓ new messages below · End to follow",
                        "↓ new below · End",
                        "↓ new",
                    ],
                    theme.warn,
                )
            } else {
                (
                    ["↓ more below · End to follow", "↓ more · End", "↓"],
                    theme.dim,
                )
            };
            let fits = texts
                .iter()
                .find(|t| str_width(t) <= usize::from(area.width));
            let text = fits.unwrap_or(&texts[2]);
            let row = area.bottom() - 1;
            crate::tui::put::stringn(buf, area.x, row, text, usize::from(area.width), style);
        }
    }
}

/// Draws `line` with the first character of span `mark` (a placeholder) replaced by the
/// spinner frame; `at` is `(x, y, width)`.
fn draw_spinner_line(
    buf: &mut Buffer,
    (x, y, width): (u16, u16, u16),
    line: &Line<'_>,
    mark: usize,
    frame: &str,
) {
    let end = x.saturating_add(width);
    let mut cx = x;
    for (i, span) in line.spans.iter().enumerate() {
        let rest: String;
        let pieces: [(&str, _); 2] = if i == mark {
            rest = span.content.chars().skip(1).collect();
            [(frame, span.style), (rest.as_str(), span.style)]
        } else {
            [(span.content.as_ref(), span.style), ("", span.style)]
        };
        for (text, style) in pieces {
            if cx >= end {
                return;
            }
            cx = crate::tui::put::stringn(buf, cx, y, text, usize::from(end - cx), style).0;
        }
    }
}
