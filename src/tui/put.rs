//! Text into a buffer exactly as `Buffer::set_line` and `Buffer::set_stringn` put it, with a
//! fast path for plain ASCII. Those walk every string grapheme by grapheme and measure each;
//! most of what taco draws (answers, code, timeline rows) is plain ASCII, where every byte is
//! one grapheme one column wide, and the walk was ~9% of a live session's CPU.

use ratatui::buffer::Buffer;
use ratatui::style::Style;
use ratatui::text::Line;

use crate::text::printable_ascii;

/// As [`Buffer::set_line`]: each span with the line's style patched by its own, at most
/// `max_width` columns; returns where it stopped.
pub fn line(buf: &mut Buffer, x: u16, y: u16, line: &Line<'_>, max_width: u16) -> (u16, u16) {
    let mut remaining = max_width;
    let mut x = x;
    for span in line {
        if remaining == 0 {
            break;
        }
        let style = line.style.patch(span.style);
        let pos = stringn(buf, x, y, &span.content, usize::from(remaining), style);
        remaining = remaining.saturating_sub(pos.0.saturating_sub(x));
        x = pos.0;
    }
    (x, y)
}

/// As [`Buffer::set_stringn`]: `text` from `(x, y)`, at most `max_width` columns and never
/// past the buffer's right edge; returns where it stopped.
pub fn stringn(
    buf: &mut Buffer,
    x: u16,
    y: u16,
    text: &str,
    max_width: usize,
    style: Style,
) -> (u16, u16) {
    let area = buf.area;
    if !printable_ascii(text) || y < area.top() || y >= area.bottom() || x < area.left() {
        return buf.set_stringn(x, y, text, max_width, style);
    }
    let max_width = u16::try_from(max_width).unwrap_or(u16::MAX);
    let room = area.right().saturating_sub(x).min(max_width);
    let n = u16::try_from(text.len()).unwrap_or(u16::MAX).min(room);
    let mut x = x;
    for byte in &text.as_bytes()[..usize::from(n)] {
        buf[(x, y)].set_char(char::from(*byte)).set_style(style);
        x += 1;
    }
    (x, y)
}

/// `symbol` (one column wide) `n` times from `(x, y)`, within the buffer: a pane's rules.
pub fn repeat(buf: &mut Buffer, x: u16, y: u16, symbol: &str, n: u16, style: Style) {
    let area = buf.area;
    if y < area.top() || y >= area.bottom() {
        return;
    }
    let end = x.saturating_add(n).min(area.right());
    for x in x.max(area.left())..end {
        buf[(x, y)].set_symbol(symbol).set_style(style);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use ratatui::layout::Rect;
    use ratatui::style::{Color, Modifier};
    use ratatui::text::Span;

    use super::*;

    fn pair(area: Rect) -> (Buffer, Buffer) {
        let mut a = Buffer::empty(area);
        // Something under the text, so a cell left alone shows.
        for (i, cell) in a.content.iter_mut().enumerate() {
            cell.set_char(char::from(b'a' + (i % 26) as u8));
        }
        (a.clone(), a)
    }

    #[test]
    fn lines_land_as_ratatui_puts_them() {
        let texts = [
            "plain ascii text",
            "",
            "tab\there",
            "wide 日本語 text",
            "e\u{301}combining",
            "emoji 👩‍💻 zwj",
            "ctrl \u{1b}[31m esc",
            "a very long line that runs past the right edge of the small buffer",
        ];
        let area = Rect::new(2, 1, 20, 3);
        for first in texts {
            for second in texts {
                for (x, width) in [(2, 20), (5, 7), (2, 0), (21, 5), (3, 40)] {
                    let line = Line::from(vec![
                        Span::styled(first, Style::new().fg(Color::Red)),
                        Span::raw(second),
                    ])
                    .style(Style::new().add_modifier(Modifier::BOLD));
                    let (mut ours, mut theirs) = pair(area);
                    let at = super::line(&mut ours, x, 2, &line, width);
                    let want = theirs.set_line(x, 2, &line, width);
                    assert_eq!(at, want, "{first:?} {second:?} at {x} width {width}");
                    assert_eq!(ours, theirs, "{first:?} {second:?} at {x} width {width}");
                }
            }
        }
    }

    #[test]
    fn rules_stay_inside_the_buffer() {
        let area = Rect::new(2, 1, 6, 2);
        let (mut ours, mut theirs) = pair(area);
        repeat(&mut ours, 0, 1, "─", 20, Style::new());
        theirs.set_stringn(2, 1, "─".repeat(6), 6, Style::new());
        assert_eq!(ours, theirs);
        repeat(&mut ours, 3, 9, "─", 2, Style::new());
        assert_eq!(ours, theirs, "a row outside the buffer draws nothing");
    }
}
