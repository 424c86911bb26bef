//! A dialog's key hints laid out to fit: whole items wrapped onto as many rows as allowed,
//! else their short words, else the keys alone (`y/t/a/n`). A hint is never cut mid-word;
//! only a single key wider than the whole row is clipped.

use std::borrow::Cow;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};
use unicode_width::UnicodeWidthStr;

/// One key and what it does, in full and in a short form for narrow rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyHint {
    /// The key (`y`, `Esc`, `↑↓`).
    pub key: Cow<'static, str>,
    /// What it does, in full (`this session`).
    pub what: Cow<'static, str>,
    /// What it does, shorter (`session`); the full words when there is no shorter form.
    pub short: Cow<'static, str>,
}

/// A hint whose words have no shorter form.
pub fn hint(key: impl Into<Cow<'static, str>>, what: impl Into<Cow<'static, str>>) -> KeyHint {
    let what = what.into();
    KeyHint {
        key: key.into(),
        short: what.clone(),
        what,
    }
}

impl KeyHint {
    /// The same hint with `short` as its narrow form.
    pub fn or(mut self, short: impl Into<Cow<'static, str>>) -> Self {
        self.short = short.into();
        self
    }
}

/// The styles of a key line.
#[derive(Debug, Clone, Copy)]
pub struct KeyStyles {
    /// The keys.
    pub key: Style,
    /// What they do.
    pub what: Style,
    /// A note before the keys (a guarded dialog's countdown).
    pub note: Style,
}

/// How much of each hint a layout shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// Keys and their full words.
    Full,
    /// Keys and their short words.
    Short,
    /// Keys alone, single letters joined by `/`.
    Keys,
}

/// Gap between two hints.
const GAP: &str = "  ";

/// The items of `hints` in `form` for rows of `width` cells, each as (key, words) with the
/// separator before the next. In the full form a hint wider than a row takes its short words,
/// so a long one (a shell grant's) is not cut while its short form fits.
fn items(hints: &[KeyHint], form: Form, width: usize) -> Vec<Vec<(String, bool)>> {
    match form {
        Form::Full | Form::Short => hints
            .iter()
            .map(|h| {
                let full_width = h.key.width() + 1 + h.what.width();
                let what = if form == Form::Full && full_width <= width {
                    &h.what
                } else {
                    &h.short
                };
                let mut parts = vec![(h.key.to_string(), true)];
                if !what.is_empty() {
                    parts.push((format!(" {what}"), false));
                }
                parts
            })
            .collect(),
        Form::Keys => {
            // `y/t/a/n`: consecutive one-letter keys read as one group.
            let mut out: Vec<Vec<(String, bool)>> = Vec::new();
            let mut letters = false;
            for h in hints {
                let letter = h.key.chars().count() == 1 && h.key.is_ascii();
                match out.last_mut() {
                    Some(group) if letter && letters => {
                        group.push(("/".to_string(), false));
                        group.push((h.key.to_string(), true));
                    }
                    _ => out.push(vec![(h.key.to_string(), true)]),
                }
                letters = letter;
            }
            out
        }
    }
}

/// Packs `items` into rows of `width` cells, after a `note` of `note_width` cells (and a
/// space) on the first row; two cells between items. An item wider than a row gets a row of
/// its own.
fn pack(items: &[Vec<(String, bool)>], note_width: usize, width: usize) -> Vec<Vec<usize>> {
    let mut rows: Vec<Vec<usize>> = vec![Vec::new()];
    // The note's space stands in for the first gap.
    let mut used = if note_width > 0 { note_width - 1 } else { 0 };
    for (i, item) in items.iter().enumerate() {
        let w: usize = item.iter().map(|(t, _)| t.width()).sum();
        let gap = if used == 0 { 0 } else { GAP.len() };
        if used > 0 && used + gap + w > width {
            rows.push(Vec::new());
            used = 0;
        }
        let gap = if used == 0 { 0 } else { GAP.len() };
        used += gap + w;
        if let Some(row) = rows.last_mut() {
            row.push(i);
        }
    }
    rows
}

/// The form and rows `hints` take in `width` cells with at most `max_rows` rows: the
/// fullest form that fits, else the keys alone on as many rows as they need.
pub fn fit(hints: &[KeyHint], note: &str, width: u16, max_rows: u16) -> (Form, usize) {
    let width = usize::from(width.max(1));
    let max_rows = usize::from(max_rows.max(1));
    for form in [Form::Full, Form::Short] {
        let rows = pack(&items(hints, form, width), note.width(), width).len();
        if rows <= max_rows {
            return (form, rows);
        }
    }
    (
        Form::Keys,
        pack(&items(hints, Form::Keys, width), note.width(), width).len(),
    )
}

/// Rows `hints` need at `width` in their full form (what a dialog asks for).
pub fn rows_needed(hints: &[KeyHint], note: &str, width: u16) -> u16 {
    let width = usize::from(width.max(1));
    let rows = pack(&items(hints, Form::Full, width), note.width(), width).len();
    u16::try_from(rows).unwrap_or(u16::MAX)
}

/// `hints` laid out in `width` cells on at most `max_rows` rows when a form fits them (see
/// [`fit`]); `note` (may be empty) leads the first row.
pub fn lines(
    hints: &[KeyHint],
    note: &str,
    width: u16,
    max_rows: u16,
    styles: KeyStyles,
) -> Vec<Line<'static>> {
    let (form, _) = fit(hints, note, width, max_rows);
    let cells = usize::from(width.max(1));
    let items = items(hints, form, cells);
    let rows = pack(&items, note.width(), cells);
    let mut out = Vec::with_capacity(rows.len());
    for (r, row) in rows.iter().enumerate() {
        let mut spans = Vec::new();
        if r == 0 && !note.is_empty() {
            spans.push(Span::styled(note.to_string(), styles.note));
        }
        for (n, &i) in row.iter().enumerate() {
            if n > 0 {
                spans.push(Span::styled(GAP, styles.what));
            } else if r == 0 && !note.is_empty() {
                spans.push(Span::styled(" ", styles.what));
            }
            for (text, is_key) in items.get(i).into_iter().flatten() {
                let style = if *is_key { styles.key } else { styles.what };
                spans.push(Span::styled(text.clone(), style));
            }
        }
        out.push(Line::from(spans));
    }
    out
}

/// Rows a dialog's keys may take when its inside is `inside` rows and its body wants
/// `body`: what the body leaves, else half the inside, and one row at the least.
pub fn footer_room(inside: u16, body: usize) -> u16 {
    let left = u16::try_from(usize::from(inside).saturating_sub(body)).unwrap_or(u16::MAX);
    left.max(inside / 2).max(1)
}

/// Draws a dialog's inside: `body` from the top, its `footer` rows (the keys) under it.
pub fn draw_inside(
    inner: Rect,
    buf: &mut Buffer,
    body: Vec<Line<'static>>,
    footer: Vec<Line<'static>>,
) {
    let footer_rows = u16::try_from(footer.len())
        .unwrap_or(u16::MAX)
        .min(inner.height);
    let body_rows = inner.height - footer_rows;
    Paragraph::new(body).render(
        Rect {
            height: body_rows,
            ..inner
        },
        buf,
    );
    Paragraph::new(footer).render(
        Rect {
            y: inner.y + body_rows,
            height: footer_rows,
            ..inner
        },
        buf,
    );
}

/// `↓ 12 more`, `↑ 3 more`, `↑ 3 ↓ 12 more`: what a cut view has out of sight, for its
/// border; `None` when everything shows.
pub fn more(above: usize, below: usize) -> Option<String> {
    match (above, below) {
        (0, 0) => None,
        (0, below) => Some(format!(" ↓ {below} more ")),
        (above, 0) => Some(format!(" ↑ {above} more ")),
        (above, below) => Some(format!(" ↑ {above} ↓ {below} more ")),
    }
}

/// The longest end of `text` at most `width` cells wide.
pub fn tail(text: &str, width: usize) -> String {
    let mut used = 0;
    let mut out: Vec<char> = text
        .chars()
        .rev()
        .take_while(|c| {
            used += unicode_width::UnicodeWidthChar::width(*c).unwrap_or(0);
            used <= width
        })
        .collect();
    out.reverse();
    out.into_iter().collect()
}

/// `line` cut to `width` cells, `…` as its last cell when it was longer.
pub fn clip_line(line: Line<'static>, width: usize) -> Line<'static> {
    if line.width() <= width {
        return line;
    }
    let mut left = width.saturating_sub(1);
    let mut spans = Vec::new();
    for span in line.spans {
        let mut text = String::new();
        for c in span.content.chars() {
            let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
            if w > left {
                left = 0;
                break;
            }
            left -= w;
            text.push(c);
        }
        spans.push(Span::styled(text, span.style));
        if left == 0 {
            break;
        }
    }
    if width > 0 {
        spans.push(Span::raw("…"));
    }
    Line::from(spans)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn approval() -> Vec<KeyHint> {
        vec![
            hint("y", "once"),
            hint("t", "this turn").or("turn"),
            hint("a", "this session").or("session"),
            hint("n", "deny"),
            hint("↑↓", "scroll").or(""),
        ]
    }

    fn text(lines: &[Line]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    const PLAIN: KeyStyles = KeyStyles {
        key: Style::new(),
        what: Style::new(),
        note: Style::new(),
    };

    #[test]
    fn a_wide_row_takes_every_hint_in_full() {
        let lines = lines(&approval(), "", 80, 1, PLAIN);
        assert_eq!(
            text(&lines),
            ["y once  t this turn  a this session  n deny  ↑↓ scroll"]
        );
    }

    #[test]
    fn a_narrow_row_wraps_whole_hints_when_rows_allow() {
        let lines = lines(&approval(), "", 42, 2, PLAIN);
        assert_eq!(
            text(&lines),
            ["y once  t this turn  a this session", "n deny  ↑↓ scroll"]
        );
        assert_eq!(rows_needed(&approval(), "", 42), 2);
    }

    #[test]
    fn one_row_shortens_then_keeps_only_the_keys_never_cutting_a_word() {
        assert_eq!(
            text(&lines(&approval(), "", 40, 1, PLAIN)),
            ["y once  t turn  a session  n deny  ↑↓"]
        );
        assert_eq!(text(&lines(&approval(), "", 20, 1, PLAIN)), ["y/t/a/n  ↑↓"]);
        assert_eq!(fit(&approval(), "", 20, 1), (Form::Keys, 1));
        // Narrower than the keys: they wrap, whole, rather than vanish.
        assert_eq!(
            text(&lines(&approval(), "", 5, 1, PLAIN)),
            ["y/t/a/n", "↑↓"]
        );
    }

    #[test]
    fn a_hint_wider_than_the_row_takes_its_short_words_alone() {
        let mut hints = approval();
        hints.push(
            hint("p", "allows `cargo test …`, not other cargo commands")
                .or("allows `cargo test …`"),
        );
        assert_eq!(
            text(&lines(&hints, "", 42, 4, PLAIN)),
            [
                "y once  t this turn  a this session",
                "n deny  ↑↓ scroll  p allows `cargo test …`"
            ]
        );
        // With room, the full words.
        assert_eq!(
            text(&lines(&hints, "", 60, 4, PLAIN))[1],
            "p allows `cargo test …`, not other cargo commands"
        );
    }

    #[test]
    fn a_note_leads_the_first_row() {
        let lines = lines(&approval(), "keys active in 0.3 s ·", 44, 3, PLAIN);
        assert_eq!(
            text(&lines),
            [
                "keys active in 0.3 s · y once  t this turn",
                "a this session  n deny  ↑↓ scroll"
            ]
        );
    }

    #[test]
    fn the_more_marker_says_what_is_out_of_sight() {
        assert_eq!(more(0, 0), None);
        assert_eq!(more(0, 12).as_deref(), Some(" ↓ 12 more "));
        assert_eq!(more(3, 0).as_deref(), Some(" ↑ 3 more "));
        assert_eq!(more(3, 12).as_deref(), Some(" ↑ 3 ↓ 12 more "));
        assert_eq!(tail("abcdef", 3), "def");
        assert_eq!(tail("ab", 5), "ab");
        let line = Line::from(vec![Span::raw("  ▸ "), Span::raw("delegate task=level 12")]);
        assert_eq!(clip_line(line.clone(), 14).to_string(), "  ▸ delegate …");
        assert_eq!(
            clip_line(line, 40).to_string(),
            "  ▸ delegate task=level 12"
        );
    }

    #[test]
    fn nothing_to_lay_out_is_one_empty_row() {
        assert_eq!(text(&lines(&[], "", 10, 1, PLAIN)), [""]);
        assert_eq!(
            text(&lines(&approval(), "", 0, 0, PLAIN)),
            ["y/t/a/n", "↑↓"]
        );
    }
}
