//! The blocks that are more than wrapped text: fenced code and tables.

use pulldown_cmark::Alignment;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

use super::wrap::char_width;
use super::{Renderer, Table};
use crate::tui::highlight::{self, Role};

/// Appends `c`, or `text` in its place when there is one (a tab's spaces).
fn push_char(out: &mut String, text: &str, c: char) {
    if text.is_empty() {
        out.push(c);
    } else {
        out.push_str(text);
    }
}

impl Renderer<'_> {
    /// A fenced or indented code block: a dim gutter, the language tag, and the code hard
    /// wrapped, coloured by its language when it has a known one (see `tui::highlight`).
    pub(super) fn code_block(&mut self, lang: &str, code: &str) {
        let gutter = Span::styled("│ ", self.theme.dim);
        let avail = self.avail().saturating_sub(2).max(1);
        if !lang.is_empty() {
            let mut spans = self.prefix();
            spans.push(gutter.clone());
            spans.push(Span::styled(lang.to_string(), self.theme.dim));
            self.lines.push(Line::from(spans));
        }
        let code = code.strip_suffix('\n').unwrap_or(code);
        let painted = highlight::code(lang, code);
        for (n, source) in code.split('\n').enumerate() {
            let runs = painted.as_ref().and_then(|p| p.line(n)).unwrap_or_default();
            let mut rows: Vec<Vec<Span<'static>>> = vec![Vec::new()];
            let mut row_w = 0;
            let mut run = 0;
            for (at, c) in source.char_indices() {
                let (text, w) = match c {
                    '\t' => ("    ", 4),
                    c if c.is_control() => continue,
                    _ => ("", char_width(c)),
                };
                if row_w > 0 && row_w + w > avail {
                    rows.push(Vec::new());
                    row_w = 0;
                }
                while runs.get(run).is_some_and(|&(end, _)| end <= at) {
                    run += 1;
                }
                let role = runs.get(run).map_or(Role::Plain, |&(_, role)| role);
                let style = highlight::style(self.theme, role);
                if let Some(row) = rows.last_mut() {
                    match row.last_mut() {
                        Some(last) if last.style == style => {
                            push_char(last.content.to_mut(), text, c)
                        }
                        _ => {
                            let mut piece = String::new();
                            push_char(&mut piece, text, c);
                            row.push(Span::styled(piece, style));
                        }
                    }
                }
                row_w += w;
            }
            for row in rows {
                let mut spans = self.prefix();
                if row.is_empty() {
                    spans.push(Span::styled("│", self.theme.dim));
                } else {
                    spans.push(gutter.clone());
                    spans.extend(row);
                }
                self.lines.push(Line::from(spans));
            }
        }
    }

    /// A table cell's text as spans on one line (breaks become spaces).
    pub(super) fn cell_spans(&mut self) -> Vec<Span<'static>> {
        std::mem::take(&mut self.inline)
            .into_iter()
            .map(|(text, style)| Span::styled(text.replace('\n', " "), style))
            .collect()
    }

    /// Aligned columns when they fit; otherwise each row wraps as ` │ `-separated text.
    pub(super) fn table_lines(&mut self, table: Table) {
        let cols = table.rows.iter().map(Vec::len).max().unwrap_or(0);
        let mut widths = vec![0usize; cols];
        for row in &table.rows {
            for (j, cell) in row.iter().enumerate() {
                let w: usize = cell.iter().map(Span::width).sum();
                widths[j] = widths[j].max(w);
            }
        }
        let total = widths.iter().sum::<usize>() + 3 * cols.saturating_sub(1);
        let sep = Span::styled(" │ ", self.theme.dim);
        let fits = total <= self.avail();
        for (i, row) in table.rows.into_iter().enumerate() {
            let head = i < table.head_rows;
            let mut content: Vec<Span<'static>> = Vec::new();
            for (j, mut cell) in row.into_iter().enumerate() {
                if j > 0 {
                    content.push(sep.clone());
                }
                if head {
                    for span in &mut cell {
                        span.style = span.style.add_modifier(Modifier::BOLD);
                    }
                }
                let w: usize = cell.iter().map(Span::width).sum();
                let pad = widths.get(j).copied().unwrap_or(0).saturating_sub(w);
                let (left, right) = match table.aligns.get(j) {
                    _ if !fits => (0, 0),
                    Some(Alignment::Right) => (pad, 0),
                    Some(Alignment::Center) => (pad / 2, pad - pad / 2),
                    _ => (0, pad),
                };
                if left > 0 {
                    content.push(Span::raw(" ".repeat(left)));
                }
                content.extend(cell);
                if right > 0 && j + 1 < cols {
                    content.push(Span::raw(" ".repeat(right)));
                }
            }
            if fits {
                let mut spans = self.prefix();
                spans.extend(content);
                self.lines.push(Line::from(spans));
            } else {
                self.inline = content
                    .into_iter()
                    .map(|s| (s.content.into_owned(), s.style))
                    .collect();
                let table = self.table.take();
                self.flush_inline();
                self.table = table;
            }
            if head && i + 1 == table.head_rows {
                let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
                let rule = if fits {
                    rule.join("─┼─")
                } else {
                    "─".repeat(self.avail())
                };
                let mut spans = self.prefix();
                spans.push(Span::styled(rule, self.theme.dim));
                self.lines.push(Line::from(spans));
            }
        }
    }
}
