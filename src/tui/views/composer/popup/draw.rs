//! Drawing the popup: a framed list at the bottom of the rows over the composer, commands
//! with what they do, files with their start cut when they do not fit; matched chars stand
//! out and the selected row is marked and reversed.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use super::super::Composer;
use super::super::files::Cut;
use super::{Item, PopupKind, Trigger, VISIBLE};
use crate::tui::commands::COMMANDS;
use crate::tui::theme::Theme;

impl Composer {
    /// Draws the popup at the bottom of `above` (the rows over the composer), if it shows.
    pub fn render_popup(&mut self, above: Rect, buf: &mut Buffer, theme: &Theme) {
        let Some(trigger) = self.sync_popup() else {
            return;
        };
        let popup = &self.popup;
        let shown = popup.items.len().min(VISIBLE);
        let height = (shown.max(1) as u16 + 2).min(above.height);
        if height < 3 || above.width < 8 {
            return;
        }
        let area = Rect {
            y: above.y + above.height - height,
            height,
            ..above
        };
        let inner_width = usize::from(area.width - 2);
        let first = popup.selected.saturating_sub(shown.saturating_sub(1));
        let rows = &popup.items[first.min(popup.items.len())..][..shown];
        let mut lines: Vec<Line<'static>> = match trigger.kind {
            PopupKind::Command => command_lines(rows, inner_width, theme),
            PopupKind::File => rows
                .iter()
                .map(|item| file_line(item, inner_width, theme))
                .collect(),
        };
        if let Some(line) = (popup.selected.checked_sub(first)).and_then(|row| lines.get_mut(row)) {
            // A mark as well as the colours: the choice shows without them too.
            if let Some(lead) = line.spans.first_mut() {
                *lead = Span::raw("›");
            }
            let width = line.width();
            line.spans
                .push(Span::raw(" ".repeat(inner_width.saturating_sub(width))));
            *line = std::mem::take(line).patch_style(theme.selected);
        }
        if lines.is_empty() {
            lines.push(Line::styled(self.empty_note(&trigger), theme.dim));
        }
        let title = self.popup_title(&trigger);
        Clear.render(area, buf);
        Paragraph::new(lines)
            .block(
                Block::default()
                    .borders(Borders::ALL)
                    .border_style(theme.border_focused)
                    .title(Span::styled(title, theme.title)),
            )
            .render(area, buf);
    }

    fn popup_title(&self, trigger: &Trigger) -> String {
        let hint = match trigger.kind {
            PopupKind::Command => "Tab completes · Esc closes",
            PopupKind::File => "Tab inserts · Esc closes",
        };
        let what = match trigger.kind {
            PopupKind::Command => {
                let all = COMMANDS.len() + self.custom.len() + self.mcp.prompts.len();
                if self.popup.matched == all {
                    format!("commands · {all}")
                } else {
                    format!("commands · {} of {all}", self.popup.matched)
                }
            }
            PopupKind::File => {
                let listing = self.files.listing();
                let total = listing.map_or(0, |l| l.paths.len());
                let cut = match listing.and_then(|l| l.cut) {
                    Some(Cut::Files) => "+",
                    Some(Cut::Time) => "+ (listing cut short)",
                    None => "",
                };
                // The servers' resources are ranked with the files.
                let (what, total) = match self.mcp.resources.len() {
                    0 => ("files", total),
                    n => ("files and resources", total + n),
                };
                if trigger.query.is_empty() {
                    format!("{what} · {total}{cut}")
                } else {
                    format!("{what} · {} of {total}{cut}", self.popup.matched)
                }
            }
        };
        format!(" {what} · {hint} ")
    }

    fn empty_note(&self, trigger: &Trigger) -> String {
        match trigger.kind {
            PopupKind::Command => format!(
                "no command starts with or contains /{}; /help lists them",
                trigger.query
            ),
            PopupKind::File if !self.files.has_root() => "no workspace to list".into(),
            PopupKind::File if self.files.listing().is_none() => "listing the workspace…".into(),
            PopupKind::File => format!("no file matches {}", trigger.query),
        }
    }
}

/// Command rows: name and arguments in a column, then what it does (cut to the width).
fn command_lines(rows: &[Item], width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let label = |i: &Item| {
        i.text.width()
            + if i.args.is_empty() {
                0
            } else {
                1 + i.args.width()
            }
    };
    let column = rows.iter().map(label).max().unwrap_or(0);
    rows.iter()
        .map(|item| {
            let mut spans = vec![Span::raw(" ")];
            spans.extend(marked(&item.text, &item.positions, theme.key, theme));
            if !item.args.is_empty() {
                spans.push(Span::styled(format!(" {}", item.args), theme.dim));
            }
            let pad = column - label(item) + 2;
            spans.push(Span::raw(" ".repeat(pad)));
            let room = width.saturating_sub(1 + column + 2);
            spans.push(Span::styled(cut_end(&item.about, room), theme.dim));
            Line::from(spans)
        })
        .collect()
}

/// A file row: the path, its start cut off when it does not fit (the name matters most).
fn file_line(item: &Item, width: usize, theme: &Theme) -> Line<'static> {
    let room = width.saturating_sub(1);
    let chars: Vec<char> = item.text.chars().collect();
    let mut skip = 0;
    if item.text.width() > room {
        // Keep the tail that fits after an ellipsis.
        let mut kept = 1;
        skip = chars.len();
        while skip > 0 && kept + chars[skip - 1].width().unwrap_or(0) <= room {
            skip -= 1;
            kept += chars[skip].width().unwrap_or(0);
        }
    }
    let mut spans = vec![Span::raw(" ")];
    if skip > 0 {
        spans.push(Span::styled("…", theme.dim));
    }
    let text: String = chars[skip..].iter().collect();
    let positions: Vec<usize> = (item.positions.iter())
        .filter_map(|p| p.checked_sub(skip))
        .collect();
    spans.extend(marked(&text, &positions, theme.text, theme));
    // A resource's name and type, when there is room after it.
    let left = room.saturating_sub(text.width() + usize::from(skip > 0) + 2);
    if !item.about.is_empty() && left > 4 {
        spans.push(Span::styled(
            format!("  {}", cut_end(&item.about, left)),
            theme.dim,
        ));
    }
    Line::from(spans)
}

/// `text` in `style`, the chars at `positions` stand out.
fn marked(text: &str, positions: &[usize], style: Style, theme: &Theme) -> Vec<Span<'static>> {
    let hit = theme
        .key
        .add_modifier(Modifier::BOLD | Modifier::UNDERLINED);
    let mut spans: Vec<Span<'static>> = Vec::new();
    let mut run = String::new();
    let mut run_hit = false;
    for (i, c) in text.chars().enumerate() {
        let is_hit = positions.contains(&i);
        if is_hit != run_hit && !run.is_empty() {
            let style = if run_hit { hit } else { style };
            spans.push(Span::styled(std::mem::take(&mut run), style));
        }
        run_hit = is_hit;
        run.push(c);
    }
    if !run.is_empty() {
        spans.push(Span::styled(run, if run_hit { hit } else { style }));
    }
    spans
}

/// `text` cut to `room` columns, with an ellipsis when cut.
fn cut_end(text: &str, room: usize) -> String {
    if text.width() <= room {
        return text.to_string();
    }
    let mut out = String::new();
    let mut used = 1;
    for c in text.chars() {
        used += c.width().unwrap_or(0);
        if used > room {
            break;
        }
        out.push(c);
    }
    if room > 0 {
        out.push('…');
    }
    out
}
