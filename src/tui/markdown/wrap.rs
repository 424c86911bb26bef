//! Widths and greedy word wrapping of styled text.

use ratatui::style::Style;
use ratatui::text::Span;
use unicode_width::UnicodeWidthChar;

/// Display width of a char; control characters count as nothing (they are dropped).
pub(super) fn char_width(c: char) -> usize {
    c.width().unwrap_or(0)
}

/// Display width of a string, by chars (control characters count as nothing).
pub fn str_width(s: &str) -> usize {
    s.chars().map(char_width).sum()
}

/// Drops trailing whitespace-only spans and trailing spaces, so blank lines carry no padding.
pub(super) fn trim_trailing_blanks(spans: &mut Vec<Span<'static>>) {
    while let Some(last) = spans.last_mut() {
        let trimmed = last.content.trim_end();
        if trimmed.is_empty() {
            spans.pop();
        } else {
            if trimmed.len() != last.content.len() {
                last.content = trimmed.to_string().into();
            }
            return;
        }
    }
}

/// Greedy word wrapper over styled text: words break at spaces, over-long words at chars.
pub(super) struct Wrapper {
    avail: usize,
    rows: Vec<Vec<Span<'static>>>,
    row: Vec<Span<'static>>,
    row_w: usize,
    word: Vec<(char, Style)>,
    word_w: usize,
    spaces: Vec<Style>,
}

impl Wrapper {
    pub(super) fn new(avail: usize) -> Self {
        Self {
            avail: avail.max(1),
            rows: Vec::new(),
            row: Vec::new(),
            row_w: 0,
            word: Vec::new(),
            word_w: 0,
            spaces: Vec::new(),
        }
    }

    pub(super) fn push_str(&mut self, text: &str, style: Style) {
        for c in text.chars() {
            match c {
                '\n' => self.newline_hard(),
                ' ' | '\t' => {
                    self.flush_word();
                    self.spaces.push(style);
                }
                c => {
                    let w = char_width(c);
                    if w == 0 && c.is_control() {
                        continue;
                    }
                    self.word.push((c, style));
                    self.word_w += w;
                }
            }
        }
    }

    pub(super) fn append(&mut self, c: char, style: Style, w: usize) {
        match self.row.last_mut() {
            Some(last) if last.style == style => last.content.to_mut().push(c),
            _ => self.row.push(Span::styled(c.to_string(), style)),
        }
        self.row_w += w;
    }

    pub(super) fn break_row(&mut self) {
        self.rows.push(std::mem::take(&mut self.row));
        self.row_w = 0;
    }

    pub(super) fn newline_hard(&mut self) {
        self.flush_word();
        self.spaces.clear();
        self.break_row();
    }

    pub(super) fn flush_word(&mut self) {
        if self.word.is_empty() {
            return;
        }
        let spaces_w = self.spaces.len();
        if self.row_w + spaces_w + self.word_w <= self.avail {
            for style in std::mem::take(&mut self.spaces) {
                self.append(' ', style, 1);
            }
        } else {
            self.spaces.clear();
            if self.row_w > 0 {
                self.break_row();
            }
        }
        let word = std::mem::take(&mut self.word);
        let fits = self.row_w + self.word_w <= self.avail;
        for (c, style) in word {
            let w = char_width(c);
            if !fits && self.row_w > 0 && self.row_w + w > self.avail {
                self.break_row();
            }
            self.append(c, style, w);
        }
        self.word_w = 0;
    }

    pub(super) fn finish(mut self) -> Vec<Vec<Span<'static>>> {
        self.flush_word();
        if !self.row.is_empty() {
            self.break_row();
        }
        while self.rows.last().is_some_and(Vec::is_empty) {
            self.rows.pop();
        }
        self.rows
    }
}
