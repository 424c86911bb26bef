#![allow(clippy::unwrap_used)]

use std::num::NonZeroU16;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex};

use proptest::prelude::*;
use ratatui::Terminal;
use ratatui::TerminalOptions;
use ratatui::Viewport;
use ratatui::style::Style;

use super::*;

/// A writer whose bytes the test reads (ratatui keeps its backend's writer to itself).
#[derive(Clone, Default)]
struct Sink(Arc<Mutex<Vec<u8>>>);

impl Sink {
    /// What was written since the last take.
    fn take(&self) -> Vec<u8> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Symbols of every kind the diff treats apart: ASCII, a two-byte narrow one, a wide one, a
/// wide emoji with a variation selector, an empty one.
const SYMBOLS: [&str; 7] = [" ", "a", "b", "é", "世", "\u{2764}\u{FE0F}", ""];
const COLORS: [Color; 3] = [Color::Reset, Color::Red, Color::Indexed(42)];
const MODIFIERS: [Modifier; 3] = [Modifier::empty(), Modifier::BOLD, Modifier::REVERSED];

/// One cell from seven numbers, each picking a field.
fn cell(pick: [u8; 7]) -> Cell {
    let mut cell = Cell::default();
    cell.set_symbol(SYMBOLS[usize::from(pick[0]) % SYMBOLS.len()]);
    cell.fg = COLORS[usize::from(pick[1]) % COLORS.len()];
    cell.bg = COLORS[usize::from(pick[2]) % COLORS.len()];
    cell.underline_color = COLORS[usize::from(pick[3]) % COLORS.len()];
    cell.modifier = MODIFIERS[usize::from(pick[4]) % MODIFIERS.len()];
    cell.diff_option = match pick[5] % 8 {
        0 => CellDiffOption::Skip,
        1 => CellDiffOption::AlwaysUpdate,
        2 => CellDiffOption::ForcedWidth(NonZeroU16::MIN),
        3 => CellDiffOption::ForcedWidth(NonZeroU16::new(2).unwrap()),
        _ => CellDiffOption::None,
    };
    #[allow(deprecated)]
    {
        cell.skip = pick[6].is_multiple_of(9);
    }
    cell
}

/// A buffer of `width` × `height` from `picks` (cycled), most cells alike so most are equal.
fn buffer(width: u16, height: u16, picks: &[[u8; 7]], base: &Buffer, change: u8) -> Buffer {
    let mut buf = base.clone();
    for (i, c) in buf.content.iter_mut().enumerate() {
        let pick = picks[i % picks.len()];
        if pick[0] % 4 < change % 4 {
            *c = cell(pick);
        }
    }
    let _ = (width, height);
    buf
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// The cells written and their order are ratatui's own diff's, wherever that one works.
    #[test]
    fn the_diff_is_ratatuis(
        width in 1u16..10,
        height in 1u16..4,
        before in prop::collection::vec(any::<[u8; 7]>(), 1..12),
        after in prop::collection::vec(any::<[u8; 7]>(), 1..12),
        change in any::<u8>(),
    ) {
        let area = Rect::new(0, 0, width, height);
        let shown = buffer(width, height, &before, &Buffer::empty(area), 3);
        let next = buffer(width, height, &after, &shown, change);
        let ours: Vec<(u16, u16, Cell)> =
            Diff::new(&shown, &next).map(|(x, y, c)| (x, y, c.clone())).collect();
        let theirs = catch_unwind(AssertUnwindSafe(|| {
            shown.diff(&next).into_iter().map(|(x, y, c)| (x, y, c.clone())).collect::<Vec<_>>()
        }));
        if let Ok(theirs) = theirs {
            prop_assert_eq!(ours, theirs);
        }
    }

    /// `same` is `Cell`'s own equality.
    #[test]
    fn same_is_cell_equality(a in any::<[u8; 7]>(), b in any::<[u8; 7]>()) {
        let (a, b) = (cell(a), cell(b));
        prop_assert_eq!(same(&a, &b), a == b);
        prop_assert!(same(&a, &a.clone()));
    }
}

#[test]
fn an_unchanged_frame_writes_nothing_but_the_cursor_and_a_change_writes_its_cell() {
    let size = Size::new(20, 3);
    let sink = Sink::default();
    let mut screen = Screen::new(CrosstermBackend::new(sink.clone()), size);
    let text = |buf: &mut Buffer, s: &str| {
        buf.set_string(0, 1, s, Style::default());
    };
    screen
        .draw(size, |_, buf| text(buf, "hello there"))
        .unwrap();
    let first = sink.take();
    let first = String::from_utf8_lossy(&first);
    assert!(
        first.contains("hello") && first.contains("there"),
        "{first:?}"
    );
    screen
        .draw(size, |_, buf| text(buf, "hello there"))
        .unwrap();
    let second = sink.take();
    // No cell: only the styles reset and the cursor hidden, as ratatui ends every frame.
    assert_eq!(second, b"\x1b[39m\x1b[49m\x1b[59m\x1b[0m\x1b[?25l");
    screen
        .draw(size, |_, buf| text(buf, "hello thorn"))
        .unwrap();
    let third = String::from_utf8(sink.take()).unwrap();
    // "there" → "thorn": the two cells that changed, each where it is (row 2, 1-based).
    assert!(third.starts_with("\x1b[2;9Ho\x1b[2;11Hn"), "{third:?}");
    assert!(
        !third.contains("hello"),
        "unchanged cells are not written: {third:?}"
    );
}

#[test]
fn the_bytes_written_are_ratatuis_frame_after_frame() {
    let area = Rect::new(0, 0, 16, 4);
    let frames: [&[(u16, u16, &str, Color)]; 4] = [
        &[
            (0, 0, "one two", Color::Reset),
            (2, 2, "世界 ok", Color::Red),
        ],
        &[
            (0, 0, "one too", Color::Reset),
            (2, 2, "世界 ok", Color::Red),
        ],
        &[
            (1, 1, "\u{2764}\u{FE0F} x", Color::Green),
            (2, 2, "ab ok", Color::Red),
        ],
        &[(0, 3, "the end", Color::Blue)],
    ];
    let paint = |buf: &mut Buffer, frame: &[(u16, u16, &str, Color)]| {
        for (x, y, text, color) in frame {
            buf.set_string(*x, *y, text, Style::default().bg(*color));
        }
    };
    let (ours, theirs) = (Sink::default(), Sink::default());
    let mut screen = Screen::new(CrosstermBackend::new(ours.clone()), area.as_size());
    let options = TerminalOptions {
        viewport: Viewport::Fixed(area),
    };
    let mut terminal =
        Terminal::with_options(CrosstermBackend::new(theirs.clone()), options).unwrap();
    for frame in frames {
        screen
            .draw(area.as_size(), |_, buf| paint(buf, frame))
            .unwrap();
        terminal.draw(|f| paint(f.buffer_mut(), frame)).unwrap();
    }
    let (ours, theirs) = (ours.take(), theirs.take());
    assert!(ours.len() > 40, "{ours:?}");
    assert_eq!(
        String::from_utf8_lossy(&ours),
        String::from_utf8_lossy(&theirs)
    );
}

#[test]
fn a_terminal_that_says_it_is_huge_gets_a_bounded_frame() {
    let sink = Sink::default();
    let mut screen = Screen::new(CrosstermBackend::new(sink.clone()), Size::new(10, 2));
    let mut drawn = Rect::default();
    screen
        .draw(Size::new(u16::MAX, u16::MAX), |area, _| drawn = area)
        .unwrap();
    assert_eq!(drawn, Rect::new(0, 0, MAX_COLUMNS, MAX_ROWS));
    assert_eq!(
        screen.shown.content.len(),
        usize::from(MAX_COLUMNS) * usize::from(MAX_ROWS)
    );
}

#[test]
fn a_new_size_clears_and_writes_the_whole_frame() {
    let sink = Sink::default();
    let mut screen = Screen::new(CrosstermBackend::new(sink.clone()), Size::new(10, 2));
    let paint = |_: Rect, buf: &mut Buffer| {
        buf.set_string(0, 0, "abc", Style::default());
    };
    screen.draw(Size::new(10, 2), paint).unwrap();
    sink.take();
    screen.draw(Size::new(12, 3), paint).unwrap();
    let out = String::from_utf8(sink.take()).unwrap();
    assert!(out.contains("\x1b[2J") && out.contains("abc"), "{out:?}");
    assert_eq!(screen.shown.area, Rect::new(0, 0, 12, 3));
}
