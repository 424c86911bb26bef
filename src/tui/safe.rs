//! Text from outside (model answers, tool arguments, results and errors, names, saved
//! sessions) never reaches the terminal raw. ratatui writes each cell's symbol to the
//! terminal as it is, so an ESC, CSI or OSC sequence, BEL, backspace, CR, another C0 or C1
//! control or a bidi override in that text could retitle the window, write the clipboard
//! (OSC 52), move the cursor or make a reviewed command read differently from what runs.
//!
//! The characters and their placeholders are the core's (`text::safe`), shared with every
//! output outside the TUI. Two layers here, one guarantee:
//! - [`neutralize`] runs over the finished frame in `App::render`, the one place every glyph
//!   passes on its way to the terminal, whichever view (or future view) drew it. It strips
//!   what could still act on the terminal from the cells, so no view can forget it.
//! - [`escape`] makes what was there visible where outside text is laid out for reading
//!   (Markdown and plain wrapping, approval arguments, timeline details): `^[` for ESC,
//!   `^M` for a lone CR, `�` for C1 controls and bidi overrides. ratatui would silently drop
//!   the controls, hiding that a command carried an escape sequence at all.

use ratatui::buffer::Buffer;

pub use crate::text::safe::{REPLACEMENT, escape, is_unsafe};

/// Strips unsafe characters from every cell of a drawn frame. They are zero-width, so the
/// layout does not move; a cell left empty shows `�`, so the removal does not go unseen.
pub fn neutralize(buf: &mut Buffer) {
    for cell in &mut buf.content {
        let symbol = cell.symbol();
        // Almost every cell is printable ASCII: skip those without looking at chars.
        if symbol.bytes().all(|b| (0x20..0x7F).contains(&b)) {
            continue;
        }
        if !symbol.chars().any(is_unsafe) {
            continue;
        }
        let kept: String = symbol.chars().filter(|c| !is_unsafe(*c)).collect();
        if kept.is_empty() {
            cell.set_char(REPLACEMENT);
        } else {
            cell.set_symbol(&kept);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::layout::Rect;

    #[test]
    fn neutralize_strips_cells_and_marks_empty_ones() {
        let mut buf = Buffer::empty(Rect::new(0, 0, 4, 1));
        buf[(0, 0)].set_symbol("a\u{202E}");
        buf[(1, 0)].set_symbol("\u{2067}");
        buf[(2, 0)].set_symbol("\x1b");
        buf[(3, 0)].set_symbol("é");
        neutralize(&mut buf);
        let symbols: Vec<&str> = buf.content.iter().map(|c| c.symbol()).collect();
        assert_eq!(symbols, ["a", "\u{FFFD}", "\u{FFFD}", "é"]);
    }
}
