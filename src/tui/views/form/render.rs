//! Drawing a form: the server's message, then each field (its title, a `*` when required,
//! its limits and default, its description, what it holds, the reason it does not hold),
//! the buttons, and a footer of keys. The view scrolls to keep the cursor's field in sight.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Widget};

use super::state::{Button, Entry, FormState};
use crate::form::{Field, FieldKind};
use crate::tui::markdown::{str_width, wrap_plain};
use crate::tui::theme::Theme;
use crate::tui::views::gate::Gate;
use crate::tui::views::keyline::{self, KeyHint, KeyStyles, hint};

/// Description rows shown per field at most.
const DESCRIPTION_ROWS: usize = 3;

/// `1`, `2.5`: a bound as a person writes it.
fn num(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        n.to_string()
    }
}

/// `lo–hi`, `≥ lo`, `≤ hi` for two optional bounds.
fn range(lo: Option<String>, hi: Option<String>, unit: &str) -> Option<String> {
    match (lo, hi) {
        (Some(lo), Some(hi)) => Some(format!("{lo}–{hi}{unit}")),
        (Some(lo), None) => Some(format!("≥ {lo}{unit}")),
        (None, Some(hi)) => Some(format!("≤ {hi}{unit}")),
        (None, None) => None,
    }
}

/// What a field takes, in a few words: `integer 1–100`, `email`, `pick 1–3`.
pub fn limits(field: &Field) -> String {
    let mut words: Vec<String> = Vec::new();
    match &field.kind {
        FieldKind::Text {
            format,
            min_length,
            max_length,
        } => {
            words.push(format.clone().unwrap_or_else(|| "text".to_string()));
            let (lo, hi) = (
                min_length.map(|n| n.to_string()),
                max_length.map(|n| n.to_string()),
            );
            words.extend(range(lo, hi, " chars"));
        }
        FieldKind::Number {
            integer,
            minimum,
            maximum,
        } => {
            words.push(if *integer { "integer" } else { "number" }.to_string());
            words.extend(range(minimum.map(num), maximum.map(num), ""));
        }
        FieldKind::Toggle => words.push("yes/no".to_string()),
        FieldKind::Choice { .. } => words.push("pick one".to_string()),
        FieldKind::Multi {
            min_items,
            max_items,
            ..
        } => {
            let lo = min_items.map(|n| n.to_string());
            let hi = max_items.map(|n| n.to_string());
            words.push(match range(lo, hi, "") {
                Some(range) => format!("pick {range}"),
                None => "pick any".to_string(),
            });
        }
    }
    if let Some(default) = &field.default {
        // A choice's default by its label, as the options show it.
        let label = |value: &serde_json::Value| match &field.kind {
            FieldKind::Choice { options } | FieldKind::Multi { options, .. } => options
                .iter()
                .find(|o| o.value == *value)
                .map(|o| o.label.clone()),
            _ => None,
        };
        let shown = match default {
            serde_json::Value::Array(values) => (values.iter())
                .map(|v| label(v).unwrap_or_else(|| v.to_string()))
                .collect::<Vec<_>>()
                .join(", "),
            serde_json::Value::String(s) => {
                label(default).unwrap_or_else(|| crate::text::safe::terminal(s).into_owned())
            }
            other => label(other).unwrap_or_else(|| other.to_string()),
        };
        words.push(format!("default {}", crate::text::summarize(&shown, 40)));
    }
    words.join(" · ")
}

/// Options laid out in rows of `width` cells after a 4-cell indent; `cursor`: the option
/// the multi-select's cursor is on (shown reversed when the field has the cursor).
fn option_lines(
    items: Vec<(bool, String)>,
    mark: (&str, &str),
    cursor: Option<usize>,
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    let mut spans: Vec<Span<'static>> = vec![Span::raw("    ")];
    let mut used = 4;
    for (i, (on, label)) in items.into_iter().enumerate() {
        let text = format!("{} {label}", if on { mark.0 } else { mark.1 });
        let w = str_width(&text) + 2;
        if used + w > width && used > 4 {
            lines.push(Line::from(std::mem::replace(
                &mut spans,
                vec![Span::raw("    ")],
            )));
            used = 4;
        }
        let mut style = if on { theme.text } else { theme.dim };
        if cursor == Some(i) {
            style = style.add_modifier(Modifier::REVERSED);
        }
        spans.push(Span::styled(text, style));
        spans.push(Span::raw("  "));
        used += w;
    }
    lines.push(Line::from(spans));
    lines
        .into_iter()
        .map(|l| keyline::clip_line(l, width))
        .collect()
}

impl FormState {
    /// What field `i` holds, as rows under its title.
    fn value_lines(
        &self,
        i: usize,
        field: &Field,
        width: usize,
        theme: &Theme,
    ) -> Vec<Line<'static>> {
        let focused = self.at() == Some(i);
        match (self.entry(i), &field.kind) {
            (Some(Entry::Text(text)), _) => {
                let room = width.saturating_sub(6);
                let text = crate::text::safe::terminal(text);
                let shown = if str_width(&text) > room {
                    format!("…{}", keyline::tail(&text, room.saturating_sub(1)))
                } else {
                    text.into_owned()
                };
                let mut spans = vec![
                    Span::styled("  › ", theme.dim),
                    Span::styled(shown, theme.text),
                ];
                if focused {
                    spans.push(Span::styled("▏", theme.key));
                }
                vec![Line::from(spans)]
            }
            (Some(Entry::Toggle(on)), _) => {
                let (mark, word) = match on {
                    Some(true) => ("[x]", "yes"),
                    Some(false) => ("[ ]", "no"),
                    None => ("[ ]", "not set"),
                };
                let mut style = theme.text;
                if focused {
                    style = style.add_modifier(Modifier::REVERSED);
                }
                vec![Line::from(vec![
                    Span::raw("    "),
                    Span::styled(format!("{mark} {word}"), style),
                ])]
            }
            (Some(Entry::Choice(picked)), FieldKind::Choice { options }) => {
                let items = (options.iter().enumerate())
                    .map(|(n, o)| (*picked == Some(n), o.label.clone()))
                    .collect();
                let cursor = focused.then_some(()).and(*picked);
                option_lines(items, ("(•)", "( )"), cursor, width, theme)
            }
            (Some(Entry::Multi { picked, at }), FieldKind::Multi { options, .. }) => {
                let items = (options.iter().zip(picked))
                    .map(|(o, on)| (*on, o.label.clone()))
                    .collect();
                option_lines(items, ("[x]", "[ ]"), focused.then_some(*at), width, theme)
            }
            _ => Vec::new(),
        }
    }

    /// The body: the message, the fields, the buttons; each row tagged with the row of the
    /// form it belongs to (`None`: the message).
    fn body(&self, width: u16, theme: &Theme) -> Vec<(Line<'static>, Option<usize>)> {
        let w = usize::from(width);
        let mut out: Vec<(Line<'static>, Option<usize>)> = Vec::new();
        for line in wrap_plain(&self.request.prompt, theme.text, width, &[], &[]) {
            out.push((line, None));
        }
        if self.spec.omitted > 0 {
            let note = format!(
                "{} more optional fields are not shown (a form shows at most {}); they are left out",
                self.spec.omitted,
                crate::form::MAX_FIELDS
            );
            for line in wrap_plain(&note, theme.warn, width, &[], &[]) {
                out.push((line, None));
            }
        }
        for (i, field) in self.spec.fields.iter().enumerate() {
            let focused = self.at() == Some(i);
            let marker = if focused { "▸ " } else { "  " };
            let mut label_style = theme.text.add_modifier(Modifier::BOLD);
            if focused {
                label_style = label_style.fg(theme.key.fg.unwrap_or_default());
            }
            let mut spans = vec![
                Span::styled(marker, theme.key),
                Span::styled(field.label(), label_style),
            ];
            if field.required {
                spans.push(Span::styled(" *", theme.warn));
            }
            spans.push(Span::styled(format!("  {}", limits(field)), theme.dim));
            out.push((keyline::clip_line(Line::from(spans), w), Some(i)));
            if let Some(description) = &field.description {
                let indent = [Span::raw("    ")];
                let rows = wrap_plain(description, theme.dim, width, &indent, &indent);
                let cut = rows.len() > DESCRIPTION_ROWS;
                for (n, line) in rows.into_iter().take(DESCRIPTION_ROWS).enumerate() {
                    let line = if cut && n + 1 == DESCRIPTION_ROWS {
                        keyline::clip_line(Line::from(format!("{line}…")), w).style(theme.dim)
                    } else {
                        line
                    };
                    out.push((line, Some(i)));
                }
            }
            for line in self.value_lines(i, field, w, theme) {
                out.push((line, Some(i)));
            }
            if let Some(reason) = self.shown_error(i) {
                let line = Line::styled(format!("    ✗ {reason}"), theme.error);
                out.push((keyline::clip_line(line, w), Some(i)));
            }
        }
        let on_buttons = self.at().is_none();
        let mut spans = vec![Span::styled(
            if on_buttons { "▸ " } else { "  " },
            theme.key,
        )];
        for button in Button::ALL {
            let mut style: Style = theme.text;
            if on_buttons && self.button() == button {
                style = style.add_modifier(Modifier::REVERSED);
            }
            spans.push(Span::styled(format!("[ {} ]", button.word()), style));
            spans.push(Span::raw("  "));
        }
        out.push((Line::from(spans), Some(self.spec.fields.len())));
        let invalid = self.invalid();
        if invalid > 0 && self.tried() {
            let fields = if invalid == 1 {
                "field does"
            } else {
                "fields do"
            };
            let line = Line::styled(
                format!("  ✗ not sent: {invalid} {fields} not hold"),
                theme.error,
            );
            out.push((keyline::clip_line(line, w), Some(self.spec.fields.len())));
        }
        out
    }

    /// Rows the form wants at `width` (the app caps them).
    pub fn wanted_rows(&self, width: u16) -> u16 {
        let inner = width.saturating_sub(2).max(1);
        let theme = Theme::default();
        let body = self.body(inner, &theme).len();
        let footer = keyline::rows_needed(&self.hints(), "", inner);
        (body + usize::from(footer) + 2).min(usize::from(u16::MAX)) as u16
    }

    /// The keys of where the cursor is.
    pub fn hints(&self) -> Vec<KeyHint> {
        let Some(i) = self.at() else {
            let what = match self.button() {
                Button::Accept => "send the form",
                Button::Decline => "decline the form",
                Button::Cancel => "cancel the form",
            };
            return vec![
                hint("a d c ←→", "pick").or("pick"),
                hint("Enter", what),
                hint("Tab ↑↓", "fields").or("fields"),
                hint("Esc", "cancel"),
            ];
        };
        let mut hints = vec![hint("Tab ↑↓", "next/previous field").or("field")];
        match self.spec.fields.get(i).map(|f| &f.kind) {
            Some(FieldKind::Toggle) => hints.push(hint("Space", "yes/no")),
            Some(FieldKind::Choice { .. }) => hints.push(hint("←→", "choose")),
            Some(FieldKind::Multi { .. }) => {
                hints.push(hint("←→", "move"));
                hints.push(hint("Space", "pick"));
            }
            _ => {}
        }
        hints.push(hint("Enter", "next").or("next"));
        hints.push(hint("Esc", "cancel the form").or("cancel"));
        hints
    }

    /// Draws the form into `area`; `gate` says whether it takes keys yet.
    pub fn render(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme, gate: Gate) {
        let area = area.intersection(buf.area);
        if area.width < 6 || area.height < 3 {
            return;
        }
        Clear.render(area, buf);
        let rows = self.spec.fields.len() + 1;
        let position = match self.at() {
            Some(i) => format!("{} of {}", i + 1, self.spec.fields.len()),
            None => "buttons".to_string(),
        };
        let title = format!(
            " form · {} · {position} ",
            crate::text::summarize(&self.request.tool, 40)
        );
        let (width, inside) = (area.width - 2, area.height - 2);
        let body = self.body(width, theme);
        let max_footer = keyline::footer_room(inside, body.len());
        let (key, what) = match gate.holds() {
            true => (theme.dim, theme.dim),
            false => (theme.key, theme.text),
        };
        let styles = KeyStyles {
            key,
            what,
            note: theme.warn,
        };
        let footer = keyline::lines(&self.hints(), &gate.note(), width, max_footer, styles);
        let room = usize::from(inside.saturating_sub(footer.len() as u16));
        // Keep the cursor's row in sight: its first line, and as much of it as fits.
        let cursor = self.at().unwrap_or(rows - 1);
        let first = body
            .iter()
            .position(|(_, r)| *r == Some(cursor))
            .unwrap_or(0);
        let last = body
            .iter()
            .rposition(|(_, r)| *r == Some(cursor))
            .unwrap_or(first);
        if first < self.top {
            self.top = first;
        } else if last >= self.top + room {
            self.top = (last + 1).saturating_sub(room).min(first);
        }
        self.top = self.top.min(body.len().saturating_sub(room));
        let below = body.len().saturating_sub(self.top + room);
        let shown: Vec<Line> = (body.into_iter().skip(self.top).take(room))
            .map(|(line, _)| line)
            .collect();
        let mut block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.warn)
            .title(Span::styled(title, theme.warn));
        if let Some(more) = keyline::more(self.top, below) {
            block = block.title_bottom(Line::styled(more, theme.warn).right_aligned());
        }
        let inner = block.inner(area);
        block.render(area, buf);
        keyline::draw_inside(inner, buf, shown, footer);
    }
}
