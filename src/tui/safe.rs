//! Text from outside (model answers, tool arguments, results and errors, names, saved
//! sessions) never reaches the terminal raw. ratatui writes each cell's symbol to the
//! terminal as it is, so an ESC, CSI or OSC sequence, BEL, backspace, CR, another C0 or C1
//! control or a bidi override in that text could retitle the window, write the clipboard
//! (OSC 52), move the cursor or make a reviewed command read differently from what runs.
//!
//! Two layers, one guarantee:
//! - [`neutralize`] runs over the finished frame in `App::render`, the one place every glyph
//!   passes on its way to the terminal, whichever view (or future view) drew it. It strips
//!   what could still act on the terminal from the cells, so no view can forget it.
//! - [`escape`] makes what was there visible where outside text is laid out for reading
//!   (Markdown and plain wrapping, approval arguments, timeline details): `^[` for ESC,
//!   `^M` for a lone CR, `�` for C1 controls and bidi overrides. ratatui would silently drop
//!   the controls, hiding that a command carried an escape sequence at all.

use std::borrow::Cow;

use ratatui::buffer::Buffer;

/// Shown for an unsafe character that has no caret form (C1 controls, bidi overrides).
const REPLACEMENT: char = '\u{FFFD}';

/// Whether `c` can act on a terminal or reorder text instead of just showing: C0 and C1
/// controls, DEL, bidi embeddings, overrides, isolates and marks, and the Unicode line and
/// paragraph separators.
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}'
                | '\u{200E}'
                | '\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2066}'..='\u{2069}'
                | '\u{2028}'
                | '\u{2029}'
        )
}

/// `text` with every unsafe character shown as a visible placeholder: newlines stay line
/// breaks (a CR before one is dropped), tabs become four spaces, C0 controls and DEL caret
/// notation (`^[`, `^G`, `^?`), anything else `�`. Borrowed when nothing changes.
pub fn escape(text: &str) -> Cow<'_, str> {
    if !text
        .chars()
        .any(|c| c == '\t' || (c != '\n' && is_unsafe(c)))
    {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' => out.push('\n'),
            '\r' if chars.peek() == Some(&'\n') => {}
            '\t' => out.push_str("    "),
            c if (c as u32) < 0x20 => {
                out.push('^');
                out.push(char::from(b'@' + c as u8));
            }
            '\u{7F}' => out.push_str("^?"),
            c if is_unsafe(c) => out.push(REPLACEMENT),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

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
    fn controls_become_visible_and_line_breaks_stay() {
        assert!(matches!(escape("plain text\nsecond"), Cow::Borrowed(_)));
        assert_eq!(
            escape("a\x1b]52;c;aGk=\x07b\x1b[2Jc\u{9b}d\re\x08f\r\ng\th\u{7f}\u{202E}i"),
            "a^[]52;c;aGk=^Gb^[[2Jc\u{FFFD}d^Me^Hf\ng    h^?\u{FFFD}i"
        );
        assert_eq!(escape("\u{2066}x\u{2069}"), "\u{FFFD}x\u{FFFD}");
        assert!(!escape("\x00\x1f\u{85}\u{2028}").chars().any(is_unsafe));
    }

    #[test]
    fn emoji_joiners_and_marks_are_not_unsafe() {
        for c in ['\u{200D}', '\u{FE0F}', '\u{0301}', 'é', '界', ' '] {
            assert!(!is_unsafe(c), "{c:?}");
        }
    }

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
