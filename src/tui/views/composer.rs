//! The composer: a multi-line editor (ratatui-textarea) with prompt history.

use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::widgets::Widget;
use ratatui_textarea::{CursorMove, TextArea, WrapMode};

use crate::tui::theme::Theme;

/// Most lines the composer grows to before it scrolls.
const MAX_ROWS: u16 = 8;

/// The prompt editor.
pub struct Composer {
    area: TextArea<'static>,
    history: Vec<String>,
    /// Position while recalling history (`None`: editing a fresh draft).
    recall: Option<usize>,
    draft: Vec<String>,
}

impl Default for Composer {
    fn default() -> Self {
        Self::new()
    }
}

impl Composer {
    /// An empty composer.
    pub fn new() -> Self {
        Self {
            area: fresh(),
            history: Vec::new(),
            recall: None,
            draft: Vec::new(),
        }
    }

    /// The text as typed (lines joined with `\n`).
    pub fn text(&self) -> String {
        self.area.lines().join("\n")
    }

    /// Whether nothing is typed.
    pub fn is_empty(&self) -> bool {
        self.area.lines().iter().all(|l| l.is_empty())
    }

    /// Replaces the text and puts the cursor at the end.
    pub fn set_text(&mut self, text: &str) {
        self.area = fresh();
        self.area.insert_str(text);
    }

    /// Takes the text for sending: remembers it in the history and empties the editor.
    pub fn take(&mut self) -> String {
        let text = self.text();
        if !text.trim().is_empty() && self.history.last() != Some(&text) {
            self.history.push(text.clone());
        }
        self.area = fresh();
        self.recall = None;
        self.draft.clear();
        text
    }

    /// Inserts a line break at the cursor.
    pub fn newline(&mut self) {
        self.area.insert_newline();
    }

    /// Inserts pasted text as it is (newlines stay newlines, nothing is sent).
    pub fn paste(&mut self, text: &str) {
        // Terminals send CR for line breaks inside a paste.
        let text = text.replace("\r\n", "\n").replace('\r', "\n");
        self.area.insert_str(text);
    }

    /// Edits with a key. Up on the first line and Down on the last walk the history.
    pub fn input(&mut self, key: KeyEvent) -> bool {
        let row = self.area.cursor().0;
        let last_row = self.area.lines().len().saturating_sub(1);
        let plain = !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        match key.code {
            KeyCode::Up if plain && row == 0 && !self.history.is_empty() => self.recall_older(),
            KeyCode::Down if plain && row == last_row && self.recall.is_some() => {
                self.recall_newer()
            }
            _ => self.area.input(key),
        }
    }

    fn recall_older(&mut self) -> bool {
        let index = match self.recall {
            None => {
                self.draft = self.area.lines().to_vec();
                self.history.len() - 1
            }
            Some(0) => return false,
            Some(i) => i - 1,
        };
        self.recall = Some(index);
        let text = self.history[index].clone();
        self.set_text(&text);
        true
    }

    fn recall_newer(&mut self) -> bool {
        let Some(index) = self.recall else {
            return false;
        };
        if index + 1 < self.history.len() {
            self.recall = Some(index + 1);
            let text = self.history[index + 1].clone();
            self.set_text(&text);
        } else {
            self.recall = None;
            let draft = std::mem::take(&mut self.draft).join("\n");
            self.set_text(&draft);
        }
        true
    }

    /// Rows the editor wants (1 to `MAX_ROWS`), for the layout.
    pub fn rows(&self) -> u16 {
        (self.area.lines().len() as u16).clamp(1, MAX_ROWS)
    }

    /// Draws the editor; `placeholder` shows when it is empty.
    pub fn render(
        &mut self,
        area: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        focused: bool,
        placeholder: &str,
    ) {
        self.area.set_placeholder_text(placeholder);
        self.area.set_placeholder_style(theme.dim);
        self.area
            .set_cursor_style(if focused { theme.selected } else { theme.text });
        (&self.area).render(area, buf);
    }

    /// Moves the cursor to the end of the text.
    pub fn cursor_to_end(&mut self) {
        self.area.move_cursor(CursorMove::Bottom);
        self.area.move_cursor(CursorMove::End);
    }
}

fn fresh() -> TextArea<'static> {
    let mut area = TextArea::default();
    area.set_wrap_mode(WrapMode::WordOrGlyph);
    area.set_cursor_line_style(ratatui::style::Style::default());
    area
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn typed(c: &mut Composer, text: &str) {
        for ch in text.chars() {
            c.input(key(KeyCode::Char(ch)));
        }
    }

    #[test]
    fn history_recall_walks_back_and_returns_to_the_draft() {
        let mut c = Composer::new();
        typed(&mut c, "first");
        assert_eq!(c.take(), "first");
        typed(&mut c, "second");
        c.take();
        typed(&mut c, "draft");
        c.input(key(KeyCode::Up));
        assert_eq!(c.text(), "second");
        c.input(key(KeyCode::Up));
        assert_eq!(c.text(), "first");
        c.input(key(KeyCode::Up));
        assert_eq!(c.text(), "first", "stops at the oldest");
        c.input(key(KeyCode::Down));
        c.input(key(KeyCode::Down));
        assert_eq!(c.text(), "draft");
    }

    #[test]
    fn newlines_and_pastes_stay_in_the_text() {
        let mut c = Composer::new();
        typed(&mut c, "a");
        c.newline();
        typed(&mut c, "b");
        c.paste("\r\nc\rd");
        assert_eq!(c.text(), "a\nb\nc\nd");
        assert_eq!(c.rows(), 4);
        assert!(!c.is_empty());
        c.take();
        assert!(c.is_empty());
    }
}
