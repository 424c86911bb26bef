//! Readline's editing keys where the editor's own differ: Ctrl-U and Ctrl-W stop at the
//! line start and at whitespace, Alt-B and Alt-F move over letters and digits.

use ratatui_textarea::CursorMove;

use super::Composer;

impl Composer {
    /// Moves the cursor to `(row, col)`; `false` when that is past what the editor can jump to.
    pub(super) fn jump(&mut self, row: usize, col: usize) -> bool {
        let (Ok(row), Ok(col)) = (u16::try_from(row), u16::try_from(col)) else {
            return false;
        };
        self.area.move_cursor(CursorMove::Jump(row, col));
        true
    }

    /// Alt-B: back to the start of a word, readline's words (letters and digits).
    pub(super) fn word_back(&mut self) -> bool {
        let (row, col) = (self.area.cursor().0, self.area.cursor().1);
        if col == 0 {
            // At a line start: to the end of the line before, as readline crosses lines.
            self.area.move_cursor(CursorMove::Back);
            return false;
        }
        let line = self.area.lines().get(row).map_or("", String::as_str);
        let before: Vec<char> = line.chars().take(col).collect();
        let gap = before
            .iter()
            .rev()
            .take_while(|c| !c.is_alphanumeric())
            .count();
        let word = (before.iter().rev().skip(gap))
            .take_while(|c| c.is_alphanumeric())
            .count();
        if !self.jump(row, col - gap - word) {
            self.area.move_cursor(CursorMove::WordBack);
        }
        false
    }

    /// Alt-F: forward to the end of a word, readline's words (letters and digits).
    pub(super) fn word_forward(&mut self) -> bool {
        let (row, col) = (self.area.cursor().0, self.area.cursor().1);
        let line = self.area.lines().get(row).map_or("", String::as_str);
        let after: Vec<char> = line.chars().skip(col).collect();
        if after.is_empty() {
            self.area.move_cursor(CursorMove::Forward);
            return false;
        }
        let gap = after.iter().take_while(|c| !c.is_alphanumeric()).count();
        let word = (after.iter().skip(gap))
            .take_while(|c| c.is_alphanumeric())
            .count();
        if !self.jump(row, col + gap + word) {
            self.area.move_cursor(CursorMove::WordForward);
        }
        false
    }

    /// Ctrl-U: deletes from the cursor to the start of its line (into the yank buffer).
    pub(super) fn kill_to_line_start(&mut self) -> bool {
        if self.area.cursor().1 == 0 {
            return false;
        }
        self.area.delete_line_by_head()
    }

    /// Ctrl-W: deletes the word before the cursor, back to whitespace as readline does
    /// (punctuation is part of the word; Alt-Backspace stops at it).
    pub(super) fn rub_out_word(&mut self) -> bool {
        let (row, col) = (self.area.cursor().0, self.area.cursor().1);
        let Some(line) = self.area.lines().get(row) else {
            return false;
        };
        let before: Vec<char> = line.chars().take(col).collect();
        let spaces = before
            .iter()
            .rev()
            .take_while(|c| c.is_whitespace())
            .count();
        let word = (before.iter().rev().skip(spaces))
            .take_while(|c| !c.is_whitespace())
            .count();
        let n = spaces + word;
        // At the start of a line it joins the line to the one before, like Backspace; past
        // what a jump can address it is the editor's own word rub-out.
        if n == 0 || !self.jump(row, col - n) {
            return self.area.delete_word();
        }
        self.area.delete_str(n)
    }
}
