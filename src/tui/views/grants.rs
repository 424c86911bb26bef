//! The `/tools` view: every grant in force (what, how far, since when, how many calls it let
//! through), every configured rule, and the tools with their policies. The grants come from
//! the run model (the orchestrator's events); the view only selects one for `r` to revoke.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Widget};

use crate::event::{Grant, Scope};
use crate::run_model::GrantRecord;
use crate::tui::markdown::wrap_plain;
use crate::tui::safe::escape;
use crate::tui::theme::Theme;
use crate::tui::views::keyline::{self, KeyStyles, hint};
use crate::tui::views::picker::age;

/// Widest grant name before it is cut (a long shell prefix).
const MAX_NAME: usize = 40;

/// What `/tools` shows, and which grant is selected.
#[derive(Debug, Default)]
pub struct ToolsView {
    grants: Vec<(Grant, GrantRecord)>,
    /// Grants the user revoked that the orchestrator has not reported gone yet (a running
    /// request takes them back before its next call).
    revoking: Vec<Grant>,
    /// Unix ms the ages are counted to.
    now_ms: u64,
    rules: Vec<String>,
    /// (tool, policy in words).
    tools: Vec<(String, String)>,
    selected: usize,
    /// First line shown.
    pub scroll: u16,
    /// Closed by a key: the overlay stack drops it.
    pub closed: bool,
}

impl ToolsView {
    /// The view of `grants` as of `now_ms`, the configured `rules` and the `tools`.
    pub fn new(
        grants: Vec<(Grant, GrantRecord)>,
        now_ms: u64,
        rules: Vec<String>,
        tools: Vec<(String, String)>,
    ) -> Self {
        Self {
            grants,
            now_ms,
            rules,
            tools,
            ..Self::default()
        }
    }

    /// Counts the ages to `now_ms` (the view stays open while time passes).
    pub fn set_now(&mut self, now_ms: u64) {
        self.now_ms = self.now_ms.max(now_ms);
    }

    /// New grants from the events; the selection stays on its grant while it exists.
    pub fn refresh(&mut self, grants: Vec<(Grant, GrantRecord)>, now_ms: u64) {
        let selected = self.selected().cloned();
        self.grants = grants;
        self.now_ms = now_ms;
        self.revoking
            .retain(|r| self.grants.iter().any(|(g, _)| g == r));
        self.selected = selected
            .and_then(|s| self.grants.iter().position(|(g, _)| *g == s))
            .unwrap_or(self.selected)
            .min(self.grants.len().saturating_sub(1));
    }

    /// The selected grant, if there is one.
    pub fn selected(&self) -> Option<&Grant> {
        self.grants.get(self.selected).map(|(g, _)| g)
    }

    /// Marks the selected grant as being revoked; returns it.
    pub fn revoke_selected(&mut self) -> Option<Grant> {
        let grant = self.selected()?.clone();
        if !self.revoking.contains(&grant) {
            self.revoking.push(grant.clone());
        }
        Some(grant)
    }

    /// Moves the selection by `by` grants.
    pub fn move_by(&mut self, by: isize) {
        let last = self.grants.len().saturating_sub(1);
        self.selected = self.selected.saturating_add_signed(by).min(last);
    }

    /// Every line of the view at `width` cells.
    pub fn lines(&self, theme: &Theme, width: u16) -> Vec<Line<'static>> {
        let mut lines = wrap_plain("Grants", theme.heading, width, &[], &[]);
        if self.grants.is_empty() {
            let none = "  None: every call that asks is asked about. y t a p in the approval \
                        dialog give one.";
            lines.extend(wrap_plain(none, theme.dim, width, &[], &[]));
        }
        let names: Vec<String> = (self.grants.iter()).map(|(g, _)| grant_name(g)).collect();
        let name_width = names.iter().map(|n| n.chars().count()).max().unwrap_or(0);
        let ages: Vec<String> = (self.grants.iter())
            .map(|(_, record)| age(record.since_ms, self.now_ms))
            .collect();
        // Columns as wide as their widest entry, so a row fits 80 columns where it can.
        let age_width = ages.iter().map(|a| a.chars().count()).max().unwrap_or(0);
        for (i, ((grant, record), (name, age))) in (self.grants.iter())
            .zip(names.iter().zip(&ages))
            .enumerate()
        {
            let mark = if i == self.selected { "▸ " } else { "  " };
            let scope = match record.scope {
                Scope::Session => "session",
                _ => "this request",
            };
            let calls = match record.used {
                1 => "1 call".to_string(),
                n => format!("{n} calls"),
            };
            let state = if self.revoking.contains(grant) {
                " · revoked at the next call".to_string()
            } else {
                String::new()
            };
            let text = format!(
                "{mark}{name:<name_width$}  {scope:<12}  since {age:<age_width$}  {calls} allowed{state}"
            );
            let style = if i == self.selected {
                theme.selected
            } else {
                theme.text
            };
            lines.extend(wrap_plain(&text, style, width, &[], &[Span::raw("    ")]));
        }
        lines.push(Line::default());
        lines.extend(wrap_plain(
            "Configured rules",
            theme.heading,
            width,
            &[],
            &[],
        ));
        if self.rules.is_empty() {
            let none = "  None: each tool follows its default policy.";
            lines.extend(wrap_plain(none, theme.dim, width, &[], &[]));
        }
        for rule in &self.rules {
            let text = format!("  {rule}");
            lines.extend(wrap_plain(
                &text,
                theme.text,
                width,
                &[],
                &[Span::raw("    ")],
            ));
        }
        lines.push(Line::default());
        lines.extend(wrap_plain("Tools", theme.heading, width, &[], &[]));
        let tool_width = (self.tools.iter())
            .map(|(n, _)| n.chars().count())
            .max()
            .unwrap_or(0)
            .min(MAX_NAME);
        for (name, policy) in &self.tools {
            let name = crate::text::shorten_end(&escape(name), MAX_NAME);
            let first = Span::styled(format!("  {name:<tool_width$}  "), theme.tool);
            let rest = Span::raw(" ".repeat(tool_width + 4));
            lines.extend(wrap_plain(policy, theme.dim, width, &[first], &[rest]));
        }
        lines
    }

    /// Draws the view centered in `area`, its keys at the bottom; a cut page says so on its
    /// border.
    pub fn draw(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let width = area.width.min(110);
        let inner_width = width.saturating_sub(2);
        let lines = self.lines(theme, inner_width);
        let mut hints = vec![hint("↑↓", "select").or(""), hint("r", "revoke")];
        if self.grants.is_empty() {
            hints.clear();
        }
        hints.push(hint("Esc", "close"));
        let footer_rows = keyline::rows_needed(&hints, "", inner_width);
        let wanted = (lines.len() as u16).saturating_add(footer_rows + 2);
        let height = area.height.min(wanted);
        if width < 4 || height < 3 {
            return;
        }
        let popup = crate::tui::layout::centered(area, width, height);
        Clear.render(popup, buf);
        let inside = height - 2;
        let max_footer = keyline::footer_room(inside, lines.len());
        let styles = KeyStyles {
            key: theme.key,
            what: theme.text,
            note: theme.warn,
        };
        let footer = keyline::lines(&hints, "", inner_width, max_footer, styles);
        let page = usize::from(inside.saturating_sub(footer.len() as u16));
        // The selected grant stays in view.
        let selected_line = 1 + self.selected;
        let scroll = usize::from(self.scroll)
            .max(selected_line.saturating_sub(page.saturating_sub(1)))
            .min(lines.len().saturating_sub(page));
        let below = lines.len().saturating_sub(scroll + page);
        let mut block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.border_focused)
            .title(Span::styled(" /tools · grants, rules, tools ", theme.title));
        if let Some(more) = keyline::more(scroll, below) {
            block = block.title_bottom(Line::styled(more, theme.warn).right_aligned());
        }
        let inner = block.inner(popup);
        block.render(popup, buf);
        let shown: Vec<Line> = lines.into_iter().skip(scroll).take(page).collect();
        keyline::draw_inside(inner, buf, shown, footer);
    }
}

/// `write_file`, or `shell 'cargo test'`: what `/revoke` takes.
fn grant_name(grant: &Grant) -> String {
    let name = match grant {
        Grant::Tool(name) => name.clone(),
        Grant::ShellPrefix(prefix) => format!("shell '{prefix}'"),
    };
    crate::text::shorten_end(&name.replace('\n', "^J"), MAX_NAME)
}

#[cfg(test)]
mod tests;
