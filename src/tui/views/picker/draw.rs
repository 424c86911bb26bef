//! Drawing the picker: a box over the screen with the filter, the rows (text in a column,
//! the detail beside it, dim lines under, errors wrapped; a row in use marked with a dot, a
//! row of little worth greyed out) and the keys.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Widget};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use super::{ERROR_LINES, MAX_WIDTH, Picker, Row, RowKind};
use crate::text::{shorten_end, shorten_start};
use crate::tui::theme::Theme;

impl Picker {
    /// The rows `row` takes at `width` columns.
    fn height_of(row: &Row, width: usize) -> usize {
        match row.kind {
            RowKind::Error => wrap(&row.text, width.saturating_sub(4))
                .len()
                .clamp(1, ERROR_LINES),
            RowKind::Item(_) if !row.below.is_empty() => 2,
            _ => 1,
        }
    }

    /// Keeps the selection in view in a list `height` rows tall.
    fn scroll_into_view(&mut self, shown: &[usize], height: usize, width: usize) {
        let Some(pos) = self
            .selected
            .and_then(|s| shown.iter().position(|&i| i == s))
        else {
            self.offset = self.offset.min(shown.len().saturating_sub(1));
            return;
        };
        if pos < self.offset {
            self.offset = pos;
        }
        let taken = |from: usize| -> usize {
            (shown[from..=pos].iter())
                .filter_map(|&i| self.rows.get(i))
                .map(|r| Self::height_of(r, width))
                .sum()
        };
        while self.offset < pos && taken(self.offset) > height {
            self.offset += 1;
        }
    }

    /// Draws the picker centered in `area` (the whole screen).
    pub fn draw(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let width = if area.width >= 64 {
            (area.width - 4).min(MAX_WIDTH)
        } else {
            area.width
        };
        let shown = self.shown_indexes();
        let inner_width = width.saturating_sub(2) as usize;
        let choices = (shown.iter())
            .filter(|&&i| self.rows.get(i).and_then(Row::pick).is_some())
            .count();
        // "Nothing matches" is said unless something is still coming.
        let loading =
            (shown.iter()).any(|&i| (self.rows.get(i)).is_some_and(|r| r.kind == RowKind::Loading));
        let say_empty = choices == 0 && !loading;
        let wanted: usize = (shown.iter())
            .filter_map(|&i| self.rows.get(i))
            .map(|r| Self::height_of(r, inner_width))
            .sum::<usize>()
            + usize::from(say_empty);
        let most = if area.height >= 16 {
            area.height - 2
        } else {
            area.height
        };
        let height = (wanted.max(1) as u16).saturating_add(4).min(most);
        if width < 20 || height < 5 {
            return;
        }
        let popup = area.centered(Constraint::Length(width), Constraint::Length(height));
        Clear.render(popup, buf);
        let at = (self.selected)
            .and_then(|s| {
                (shown.iter())
                    .filter(|&&i| self.rows.get(i).and_then(Row::pick).is_some())
                    .position(|&i| i == s)
            })
            .map_or(0, |p| p + 1);
        let title = format!("{} · {at}/{choices}", self.title);
        let title = format!(" {} ", shorten_end(&title, inner_width.saturating_sub(2)));
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.border_focused)
            .title(Span::styled(title, theme.title));
        let inner = block.inner(popup);
        block.render(popup, buf);
        let list_height = inner.height.saturating_sub(2) as usize;
        self.page = list_height.max(1);
        self.scroll_into_view(&shown, list_height, inner_width);
        let filter = if self.filter.is_empty() {
            Line::from(vec![
                Span::styled("› ", theme.key),
                Span::styled("type to filter", theme.dim),
            ])
        } else {
            let room = inner_width.saturating_sub(3);
            Line::from(vec![
                Span::styled("› ", theme.key),
                Span::styled(shorten_start(&self.filter, room), theme.text),
                Span::styled("▏", theme.key),
            ])
        };
        filter.render(Rect { height: 1, ..inner }, buf);
        let mut y = inner.y + 1;
        let bottom = inner.y + 1 + list_height as u16;
        if say_empty && list_height > 0 {
            let text = format!(
                "  {}",
                // With a filter typed, it is the filter that leaves nothing.
                shorten_end(
                    if self.filter.is_empty() {
                        &self.empty
                    } else {
                        "nothing matches the filter"
                    },
                    inner_width.saturating_sub(2),
                )
            );
            Line::styled(text, theme.dim).render(
                Rect {
                    y,
                    height: 1,
                    ..inner
                },
                buf,
            );
            y += 1;
        }
        let text_column = text_column(&shown, &self.rows, inner_width);
        let mut last_drawn = self.offset;
        for (pos, &i) in shown.iter().enumerate().skip(self.offset) {
            let Some(row) = self.rows.get(i) else {
                continue;
            };
            let h = Self::height_of(row, inner_width) as u16;
            if y + h > bottom {
                break;
            }
            let selected = Some(i) == self.selected;
            let lines = Self::row_lines(row, selected, inner_width, text_column, theme);
            for (n, line) in lines.into_iter().enumerate() {
                line.render(
                    Rect {
                        y: y + n as u16,
                        height: 1,
                        ..inner
                    },
                    buf,
                );
            }
            y += h;
            last_drawn = pos;
        }
        let below = shown.len().saturating_sub(last_drawn + 1);
        let hints = Rect {
            y: inner.y + inner.height.saturating_sub(1),
            height: 1,
            ..inner
        };
        hint_line(below, inner_width, theme).render(hints, buf);
    }

    /// A row's lines at `width`.
    fn row_lines(
        row: &Row,
        selected: bool,
        width: usize,
        column: usize,
        theme: &Theme,
    ) -> Vec<Line<'static>> {
        match &row.kind {
            RowKind::Loading => vec![Line::styled(
                format!("  … {}", shorten_end(&row.text, width.saturating_sub(4))),
                theme.dim,
            )],
            RowKind::Error => {
                let mut lines = wrap(&row.text, width.saturating_sub(4));
                lines.truncate(ERROR_LINES);
                (lines.into_iter().enumerate())
                    .map(|(n, text)| {
                        let lead = if n == 0 { "  ✗ " } else { "    " };
                        Line::styled(format!("{lead}{text}"), theme.error)
                    })
                    .collect()
            }
            RowKind::Item(_) => {
                let room = width.saturating_sub(2);
                let text = shorten_end(&row.text, column.min(room));
                let detail_room = room.saturating_sub(column + 2);
                let detail = shorten_end(&row.detail, detail_room);
                let pad = room.saturating_sub(text.width() + detail.width());
                let mark = match (selected, row.marked) {
                    (true, _) => "› ",
                    (false, true) => "● ",
                    (false, false) => "  ",
                };
                let base = match (selected, row.dim) {
                    (true, _) => theme.selected,
                    (false, true) => theme.dim,
                    (false, false) => theme.text,
                };
                let mut lines = vec![Line::from(vec![
                    Span::styled(mark, base.patch(theme.key)),
                    Span::styled(text, base),
                    Span::styled(" ".repeat(pad), base),
                    Span::styled(detail, base.patch(theme.dim)),
                ])];
                if !row.below.is_empty() {
                    let below = shorten_end(&row.below, width.saturating_sub(4));
                    lines.push(Line::styled(format!("    {below}"), theme.dim));
                }
                lines
            }
        }
    }
}

/// How wide the text column is: the widest shown text, leaving the details what they need
/// (at least two fifths of the row).
fn text_column(shown: &[usize], rows: &[Row], width: usize) -> usize {
    let room = width.saturating_sub(2);
    let items = shown
        .iter()
        .filter_map(|&i| rows.get(i))
        .filter(|r| r.pick().is_some());
    let (text, detail) = items.fold((0, 0), |(t, d), r| {
        (t.max(r.text.width()), d.max(r.detail.width()))
    });
    let detail_room = if detail == 0 {
        0
    } else {
        (detail + 2).min(room * 2 / 5)
    };
    text.min(room.saturating_sub(detail_room))
}

/// The keys, and how many rows are out of view below (shortened to fit `width`).
fn hint_line(below: usize, width: usize, theme: &Theme) -> Line<'static> {
    let full: &[(&str, &str)] = &[
        ("↑↓", "move"),
        ("PgUp/PgDn", "page"),
        ("Enter", "choose"),
        ("Esc", "close"),
    ];
    let short: &[(&str, &str)] = &[("↑↓", ""), ("Enter", "choose"), ("Esc", "close")];
    let more = if below > 0 {
        format!("  ↓ {below} more")
    } else {
        String::new()
    };
    let len = |keys: &[(&str, &str)]| -> usize {
        keys.iter()
            .map(|(k, w)| k.width() + w.width() + 3)
            .sum::<usize>()
            + more.width()
    };
    let keys = if len(full) <= width { full } else { short };
    let mut spans = Vec::new();
    for (key, what) in keys {
        spans.push(Span::styled(format!(" {key}"), theme.key));
        if !what.is_empty() {
            spans.push(Span::styled(format!(" {what} "), theme.dim));
        } else {
            spans.push(Span::raw(" "));
        }
    }
    spans.push(Span::styled(more, theme.warn));
    Line::from(spans)
}

/// `text` in lines of at most `width` columns, broken at spaces where it can be.
pub(super) fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(8);
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let sep = usize::from(!line.is_empty());
        if line.width() + sep + word.width() > width && !line.is_empty() {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        for c in word.chars() {
            if line.width() + c.width().unwrap_or(0) > width {
                lines.push(std::mem::take(&mut line));
            }
            line.push(c);
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}
