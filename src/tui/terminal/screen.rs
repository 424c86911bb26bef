//! The screen's last frame and the next, and what of the next goes to the terminal (issue 33).
//!
//! ratatui's `Terminal::draw` compares every cell of the two frames by measuring the width of
//! its symbol and comparing symbols with `memcmp`, before it knows whether the cell changed:
//! ~150 instructions a cell, 1.8 M for a 200×60 frame, as much as rendering the frame. Here a
//! cell that did not change costs a few compares: styles first, then its symbol, whose width
//! is asked only when it is more than one byte. What is written is what ratatui would write
//! (the same cells, in the same order: a property test holds the two diffs equal).

use std::io::{self, Write};

use ratatui::backend::{Backend, ClearType, CrosstermBackend};
use ratatui::buffer::{Buffer, Cell, CellDiffOption, CellWidth};
use ratatui::crossterm::cursor::Hide;
use ratatui::crossterm::queue;
use ratatui::layout::{Rect, Size};
use ratatui::style::{Color, Modifier};

/// Styles that show on a blank cell: when a wide symbol narrows, the columns it covered are
/// written again if the old cell had one of them (or a background).
const VISIBLE_ON_BLANK: Modifier = Modifier::REVERSED
    .union(Modifier::UNDERLINED)
    .union(Modifier::SLOW_BLINK)
    .union(Modifier::RAPID_BLINK)
    .union(Modifier::CROSSED_OUT);

/// The largest frame drawn: a terminal that says it is larger (a pty's size is whatever its
/// owner sets, up to 65,535 × 65,535) gets this much, not two buffers of billions of cells.
const MAX_COLUMNS: u16 = 1024;
/// See [`MAX_COLUMNS`].
const MAX_ROWS: u16 = 512;

/// The terminal's backend with the frame on screen and the one being drawn.
pub struct Screen<W: Write> {
    backend: CrosstermBackend<W>,
    /// The frame on screen, and the next.
    shown: Buffer,
    next: Buffer,
}

impl<W: Write> Screen<W> {
    /// A screen of `size` (cleared by whoever entered the alternate screen).
    pub fn new(backend: CrosstermBackend<W>, size: Size) -> Self {
        let area = Rect::new(0, 0, size.width, size.height);
        Self {
            backend,
            shown: Buffer::empty(area),
            next: Buffer::empty(area),
        }
    }

    /// The backend, to ask its writer how it is doing.
    pub fn backend(&self) -> &CrosstermBackend<W> {
        &self.backend
    }

    /// The backend, for writes between frames.
    pub fn backend_mut(&mut self) -> &mut CrosstermBackend<W> {
        &mut self.backend
    }

    /// Draws one frame of `size` (at most [`MAX_COLUMNS`] × [`MAX_ROWS`]): `render` fills an
    /// empty buffer, the cells that differ from the frame on screen are written and the cursor
    /// hidden; the caller flushes (so the frame and what follows it go in one write). A new
    /// size clears the terminal and writes the whole frame.
    pub fn draw(&mut self, size: Size, render: impl FnOnce(Rect, &mut Buffer)) -> io::Result<()> {
        let area = Rect::new(0, 0, size.width.min(MAX_COLUMNS), size.height.min(MAX_ROWS));
        if area != self.shown.area {
            self.backend.clear_region(ClearType::All)?;
            self.shown = Buffer::empty(area);
            self.next = Buffer::empty(area);
        }
        render(area, &mut self.next);
        self.backend.draw(Diff::new(&self.shown, &self.next))?;
        // Queued, not `hide_cursor` (which flushes): the frame leaves in the caller's one write.
        queue!(self.backend, Hide)?;
        std::mem::swap(&mut self.shown, &mut self.next);
        self.next.reset();
        Ok(())
    }
}

/// Whether two cells draw the same: as `Cell`'s `==`, cheapest fields first and without
/// `memcmp` for a one-byte symbol.
fn same(a: &Cell, b: &Cell) -> bool {
    #[allow(deprecated)]
    let skip_eq = a.skip == b.skip;
    let (x, y) = (a.symbol().as_bytes(), b.symbol().as_bytes());
    a.fg == b.fg
        && a.bg == b.bg
        && a.modifier == b.modifier
        && a.underline_color == b.underline_color
        && a.diff_option == b.diff_option
        && skip_eq
        && x.len() == y.len()
        && match (x, y) {
            ([p], [q]) => p == q,
            _ => x == y,
        }
}

/// A cell the diff never writes (another cell covers it).
fn is_skip(cell: &Cell) -> bool {
    #[allow(deprecated)]
    let skip = cell.skip;
    cell.diff_option == CellDiffOption::Skip || (skip && cell.diff_option == CellDiffOption::None)
}

/// Columns a cell covers, as `CellWidth` says (a forced width, else its symbol's), without
/// measuring a one-byte symbol: one column.
fn width(cell: &Cell) -> usize {
    if cell.symbol().len() == 1 && !matches!(cell.diff_option, CellDiffOption::ForcedWidth(_)) {
        1
    } else {
        usize::from(cell.cell_width())
    }
}

/// Columns after a changed cell that are written too: those a wide emoji's variation
/// selector may leave stale (`force` false: only where the symbol changed), or those a
/// narrowed symbol with a visible style covered (`force`: all).
struct Trailing {
    at: usize,
    end: usize,
    force: bool,
}

/// The cells of `next` to write over `shown`, with their positions.
struct Diff<'a> {
    shown: &'a [Cell],
    next: &'a [Cell],
    width: usize,
    at: usize,
    len: usize,
    trailing: Option<Trailing>,
}

impl<'a> Diff<'a> {
    fn new(shown: &'a Buffer, next: &'a Buffer) -> Self {
        Self {
            shown: &shown.content,
            next: &next.content,
            width: usize::from(next.area.width.max(1)),
            at: 0,
            len: shown.content.len().min(next.content.len()),
            trailing: None,
        }
    }

    /// The position of cell `index` (the buffers start at the origin).
    fn item(&self, index: usize) -> (u16, u16, &'a Cell) {
        let x = u16::try_from(index % self.width).unwrap_or(u16::MAX);
        let y = u16::try_from(index / self.width).unwrap_or(u16::MAX);
        (x, y, &self.next[index])
    }

    /// The next trailing cell to write, if any is left.
    fn next_trailing(&mut self) -> Option<usize> {
        let trailing = self.trailing.as_mut()?;
        // Within the frame: ratatui's own diff indexes past its end (and panics) when a wide
        // symbol in the last cell narrows.
        while trailing.at < trailing.end && trailing.at < self.len {
            let j = trailing.at;
            trailing.at += width(&self.next[j]).max(1);
            trailing.end = trailing.end.max(trailing.at).min(self.len);
            let changed = trailing.force || self.shown[j].symbol() != self.next[j].symbol();
            if !is_skip(&self.next[j]) && changed {
                return Some(j);
            }
        }
        self.at = trailing.end;
        self.trailing = None;
        None
    }
}

impl<'a> Iterator for Diff<'a> {
    type Item = (u16, u16, &'a Cell);

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(j) = self.next_trailing() {
            return Some(self.item(j));
        }
        while self.at < self.len {
            let i = self.at;
            self.at += 1;
            let (next, shown) = (&self.next[i], &self.shown[i]);
            if is_skip(next) {
                continue;
            }
            match next.diff_option {
                CellDiffOption::Skip => {}
                CellDiffOption::ForcedWidth(forced) => {
                    self.at += usize::from(forced.get()).saturating_sub(1);
                    if !same(next, shown) {
                        return Some(self.item(i));
                    }
                }
                CellDiffOption::None | CellDiffOption::AlwaysUpdate => {
                    if next.diff_option == CellDiffOption::None && same(next, shown) {
                        self.at += width(next).saturating_sub(1);
                        continue;
                    }
                    let wide = width(next);
                    if wide > 1 && next.symbol().contains('\u{FE0F}') {
                        self.trailing = Some(Trailing {
                            at: i + 1,
                            end: (i + wide).min(self.len),
                            force: false,
                        });
                    } else if wide > 1 {
                        self.at += wide - 1;
                    } else if width(shown) > wide
                        && (shown.bg != Color::Reset || shown.modifier.intersects(VISIBLE_ON_BLANK))
                    {
                        self.trailing = Some(Trailing {
                            at: i + 1,
                            end: i + width(shown),
                            force: true,
                        });
                    }
                    return Some(self.item(i));
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests;
