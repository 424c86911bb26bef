//! The inline approval dialog (DESIGN §7): one pending call at a time, decided with one key.
//! Keys are letters that never renumber: `y` once, `t` this turn, `a` this session, `n` deny.

use std::time::Duration;

use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget, Wrap};
use serde_json::Value;

use crate::event::Scope;
use crate::orchestrator::approval::ApprovalAnswer;
use crate::tui::safe::escape;
use crate::tui::theme::Theme;

/// A call waiting for the user's decision.
#[derive(Debug, Clone, PartialEq)]
pub struct Pending {
    /// Call id.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Arguments as the model sent them.
    pub arguments: Value,
    /// Position in its batch (1-based).
    pub position: usize,
    /// Size of its batch.
    pub of: usize,
    /// The assistant text that led to the call.
    pub lead: Option<String>,
    /// Who asks when it is not the user's agent (`delegate: <task summary>`).
    pub from: Option<String>,
    /// Where the tool comes from and what it claims (see `Tool::approval_note`).
    pub note: Option<String>,
    /// What the call would change (a summary line, then a unified diff): shown instead of
    /// the arguments, which would repeat the whole new content.
    pub diff: Option<String>,
}

/// What a key did to the dialog.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Not a dialog key.
    Ignored,
    /// Used (scrolling, typing a reason).
    Used,
    /// Decisions to send, by call id.
    Decided(Vec<(String, ApprovalAnswer)>),
}

/// The calls waiting for approval and the dialog's own state.
#[derive(Debug, Default)]
pub struct ApprovalState {
    pending: Vec<Pending>,
    scroll: u16,
    /// Set while the user types a reason after `n`.
    reason: Option<String>,
}

impl ApprovalState {
    /// No pending calls.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a call from an `approval_requested` event.
    pub fn push(&mut self, pending: Pending) {
        if !self.pending.iter().any(|p| p.id == pending.id) {
            self.pending.push(pending);
        }
    }

    /// Whether the dialog is showing.
    pub fn is_open(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Whether the user is typing a denial reason.
    pub fn is_typing_reason(&self) -> bool {
        self.reason.is_some()
    }

    /// The call shown now.
    pub fn current(&self) -> Option<&Pending> {
        self.pending.first()
    }

    /// Forgets a call decided elsewhere (or everything, when the run ends).
    pub fn remove(&mut self, id: &str) {
        let was_current = self.current().is_some_and(|p| p.id == id);
        self.pending.retain(|p| p.id != id);
        if was_current {
            self.scroll = 0;
            self.reason = None;
        }
    }

    /// Drops every pending call.
    pub fn clear(&mut self) {
        self.pending.clear();
        self.scroll = 0;
        self.reason = None;
    }

    /// Handles a key while the dialog is open.
    pub fn on_key(&mut self, key: KeyEvent) -> Outcome {
        let Some(current) = self.pending.first().cloned() else {
            return Outcome::Ignored;
        };
        if let Some(reason) = &mut self.reason {
            match key.code {
                KeyCode::Enter => {
                    let text = reason.trim().to_string();
                    let answer = ApprovalAnswer::deny((!text.is_empty()).then_some(text));
                    return self.decide(vec![(current.id, answer)]);
                }
                KeyCode::Esc => return self.decide(vec![(current.id, ApprovalAnswer::deny(None))]),
                KeyCode::Backspace => {
                    reason.pop();
                }
                KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                    reason.push(c)
                }
                _ => return Outcome::Ignored,
            }
            return Outcome::Used;
        }
        if key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
        {
            return Outcome::Ignored;
        }
        match key.code {
            KeyCode::Char('y') => self.approve(Scope::Once),
            KeyCode::Char('t') => self.approve(Scope::Turn),
            KeyCode::Char('a') => self.approve(Scope::Session),
            KeyCode::Char('p') => match self.offered_prefix() {
                Some(prefix) => {
                    let mut answer = ApprovalAnswer::approve(Scope::Once);
                    answer.prefix = Some(prefix);
                    self.decide(vec![(current.id, answer)])
                }
                None => Outcome::Ignored,
            },
            KeyCode::Char('n') => {
                self.reason = Some(String::new());
                Outcome::Used
            }
            KeyCode::Esc => self.decide(vec![(current.id, ApprovalAnswer::deny(None))]),
            KeyCode::Up | KeyCode::Char('k') => {
                self.scroll = self.scroll.saturating_sub(1);
                Outcome::Used
            }
            KeyCode::Down | KeyCode::Char('j') => {
                self.scroll = self.scroll.saturating_add(1);
                Outcome::Used
            }
            KeyCode::PageUp => {
                self.scroll = self.scroll.saturating_sub(10);
                Outcome::Used
            }
            KeyCode::PageDown => {
                self.scroll = self.scroll.saturating_add(10);
                Outcome::Used
            }
            _ => Outcome::Ignored,
        }
    }

    /// For a shell call: the command prefix `p` would allow for the session.
    fn offered_prefix(&self) -> Option<String> {
        let current = self.pending.first()?;
        if current.name != crate::tools::builtin::SHELL {
            return None;
        }
        let command = current.arguments.get("command")?.as_str()?;
        crate::tools::builtin::suggested_prefix(command)
    }

    /// Approves the current call; a turn or session grant also approves the other pending
    /// calls of the same tool, since the grant covers them.
    fn approve(&mut self, scope: Scope) -> Outcome {
        let Some(current) = self.pending.first() else {
            return Outcome::Ignored;
        };
        let name = current.name.clone();
        let mut decided = vec![(current.id.clone(), ApprovalAnswer::approve(scope))];
        if scope != Scope::Once {
            decided.extend(
                self.pending
                    .iter()
                    .skip(1)
                    .filter(|p| p.name == name)
                    .map(|p| (p.id.clone(), ApprovalAnswer::approve(scope))),
            );
        }
        self.decide(decided)
    }

    fn decide(&mut self, decided: Vec<(String, ApprovalAnswer)>) -> Outcome {
        for (id, _) in &decided {
            self.remove(id);
        }
        Outcome::Decided(decided)
    }

    /// Rows the dialog wants for `width` (capped by the caller).
    pub fn wanted_rows(&self, width: u16) -> u16 {
        let Some(current) = self.current() else {
            return 0;
        };
        let inner = width.saturating_sub(2).max(1) as usize;
        let args = match &current.diff {
            Some(diff) => diff.clone(),
            None => pretty(&current.arguments),
        };
        let arg_rows: usize = args
            .lines()
            .map(|l| l.chars().count().div_ceil(inner).max(1))
            .sum();
        // The lead shows at most its last two non-blank lines (see `render`).
        let lead_rows = current.lead.as_deref().map_or(0, |l| {
            l.lines().filter(|l| !l.trim().is_empty()).count().min(2)
        });
        let note_rows = current
            .note
            .as_deref()
            .map_or(0, |n| n.chars().count().div_ceil(inner).max(1));
        // Two borders and the footer.
        (arg_rows + lead_rows + note_rows + 3).min(u16::MAX as usize) as u16
    }

    /// Draws the dialog for the current call into `area`; `wait` is how long its keys are
    /// still guarded (see `App::dialog_wait`).
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme, wait: Option<Duration>) {
        let Some(current) = self.current() else {
            return;
        };
        if area.width < 4 || area.height < 3 {
            return;
        }
        Clear.render(area, buf);
        let batch = if current.of > 1 {
            format!(" · call {} of {}", current.position, current.of)
        } else {
            String::new()
        };
        let title = Line::from(vec![
            Span::styled(" Approve ", theme.warn),
            Span::styled(
                escape(&current.name).replace('\n', "^J"),
                theme.tool.add_modifier(ratatui::style::Modifier::BOLD),
            ),
            Span::styled(format!("?{batch} "), theme.warn),
        ]);
        // A sub-agent's call says so: the lead quoted is the sub-agent's, not the parent's.
        let mut title = title;
        if let Some(from) = &current.from {
            let from = format!("from {} ", escape(from).replace('\n', "^J"));
            title.spans.push(Span::styled(from, theme.dim));
        }
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.warn)
            .title(title);
        let inner = block.inner(area);
        block.render(area, buf);

        let mut lines: Vec<Line<'static>> = Vec::new();
        if let Some(lead) = current
            .lead
            .as_deref()
            .map(str::trim)
            .filter(|l| !l.is_empty())
        {
            let last: Vec<&str> = lead.lines().filter(|l| !l.trim().is_empty()).collect();
            let start = last.len().saturating_sub(2);
            for line in &last[start..] {
                lines.push(Line::styled(
                    format!("“{}”", escape(line.trim())),
                    theme.dim,
                ));
            }
        }
        if let Some(note) = &current.note {
            lines.push(Line::styled(format!("⚑ {}", escape(note)), theme.warn));
        }
        match &current.diff {
            Some(diff) => lines.extend(diff_lines(diff, theme)),
            None => {
                for line in pretty(&current.arguments).lines() {
                    lines.push(Line::styled(line.to_string(), theme.code));
                }
            }
        }
        let body_height = inner.height.saturating_sub(1);
        let body = Rect {
            height: body_height,
            ..inner
        };
        // Rows after wrapping, so the footer can say how much is below the fold.
        let width = inner.width.max(1) as usize;
        let total: usize = lines.iter().map(|l| l.width().div_ceil(width).max(1)).sum();
        let scroll = self.scroll.min(total.saturating_sub(1) as u16);
        let below = total.saturating_sub(scroll as usize + body_height as usize);
        let footer = self.footer(theme, below, wait);
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .scroll((scroll, 0))
            .render(body, buf);
        let footer_area = Rect {
            y: inner.y + body_height,
            height: inner.height - body_height,
            ..inner
        };
        Paragraph::new(footer).render(footer_area, buf);
    }

    fn footer(&self, theme: &Theme, below: usize, wait: Option<Duration>) -> Vec<Line<'static>> {
        if let Some(reason) = &self.reason {
            return vec![Line::from(vec![
                Span::styled(
                    "Reason for the model (Enter sends, Esc skips): ",
                    theme.warn,
                ),
                Span::raw(reason.clone()),
                Span::styled("▏", theme.key),
            ])];
        }
        // Guarded: the keys are dimmed and the wait comes first, so it shows at any width.
        let (key_style, what_style) = match wait {
            Some(_) => (theme.dim, theme.dim),
            None => (theme.key, theme.text),
        };
        let key = |k: &'static str, what: &'static str| {
            [Span::styled(k, key_style), Span::styled(what, what_style)]
        };
        let mut spans = Vec::new();
        if let Some(wait) = wait {
            spans.push(Span::styled(format!("{} · ", guard_note(wait)), theme.warn));
        }
        for (k, what) in [
            ("y", " once  "),
            ("t", " this turn  "),
            ("a", " this session  "),
            ("n", " deny  "),
        ] {
            spans.extend(key(k, what));
        }
        if let Some(prefix) = self.offered_prefix() {
            spans.push(Span::styled("p", key_style));
            spans.push(Span::styled(
                format!(" always '{}'  ", escape(&prefix)),
                what_style,
            ));
        }
        if below > 0 {
            spans.push(Span::styled(
                format!("↓ {below} more · ↑↓ scroll"),
                theme.warn,
            ));
        } else {
            spans.push(Span::styled("↑↓ scroll", theme.dim));
        }
        vec![Line::from(spans)]
    }
}

/// What a guarded dialog says instead of taking keys: `keys active in 0.3 s` (rounded up,
/// so it never says 0.0 while still waiting).
pub fn guard_note(wait: Duration) -> String {
    let tenths = wait.as_millis().div_ceil(100);
    format!("keys active in {}.{} s", tenths / 10, tenths % 10)
}

/// Arguments for a person to review: `key: value` per line, multi-line strings (file
/// contents, scripts) shown as the text they are, other values as indented JSON. Controls
/// show as placeholders (`^[`, see `safe::escape`): what is approved is what is seen.
pub fn pretty(arguments: &Value) -> String {
    let Value::Object(map) = arguments else {
        // JSON escapes C0 controls but not C1 controls or bidi overrides.
        return escape(&json_text(arguments)).into_owned();
    };
    // Short values first, so `path` or `command` is seen before a long file body.
    let mut fields: Vec<(&String, &Value)> = map.iter().collect();
    fields.sort_by_key(|(_, v)| matches!(v, Value::String(t) if t.contains('\n')));
    let mut out = String::new();
    for (key, value) in fields {
        let key = escape(key).replace('\n', "^J");
        match value {
            Value::String(text) if text.contains('\n') => {
                out.push_str(&key);
                out.push_str(":\n");
                for line in text.lines() {
                    out.push_str("  ");
                    out.push_str(&escape(line));
                    out.push('\n');
                }
            }
            Value::String(text) => {
                out.push_str(&format!("{key}: {}\n", escape(text)));
            }
            other => {
                out.push_str(&format!("{key}: {}\n", escape(&json_text(other))));
            }
        }
    }
    out
}

fn json_text(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

/// A diff as coloured lines: the summary bold, headers dim, `+` added, `-` removed, and the
/// code on added and context lines coloured by the file's language (`highlight::diff`).
/// Control characters from the file are shown escaped, never sent to the terminal.
pub fn diff_lines(diff: &str, theme: &Theme) -> Vec<Line<'static>> {
    crate::tui::highlight::diff::styled(diff, theme)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Decision;
    use serde_json::json;

    fn pending(id: &str, name: &str, position: usize, of: usize) -> Pending {
        Pending {
            id: id.into(),
            name: name.into(),
            arguments: json!({"path": "a"}),
            position,
            of,
            lead: None,
            from: None,
            note: None,
            diff: None,
        }
    }

    fn key(c: KeyCode) -> KeyEvent {
        KeyEvent::new(c, KeyModifiers::NONE)
    }

    #[test]
    fn p_allows_a_shell_commands_prefix_and_nothing_else() {
        let mut s = ApprovalState::new();
        let mut shell = pending("1", "shell", 1, 1);
        shell.arguments = json!({"command": "cargo test --test mcp"});
        s.push(shell);
        let Outcome::Decided(d) = s.on_key(key(KeyCode::Char('p'))) else {
            panic!("p answers a shell call");
        };
        assert_eq!(d[0].1.prefix.as_deref(), Some("cargo test"));
        assert_eq!(
            d[0].1.scope,
            Scope::Once,
            "the prefix is the grant, not the tool"
        );

        let mut s = ApprovalState::new();
        let mut chained = pending("1", "shell", 1, 1);
        chained.arguments = json!({"command": "cargo test; rm -rf x"});
        s.push(chained);
        assert_eq!(
            s.on_key(key(KeyCode::Char('p'))),
            Outcome::Ignored,
            "no prefix for a chain"
        );
        let mut s = ApprovalState::new();
        s.push(pending("1", "write_file", 1, 1));
        assert_eq!(s.on_key(key(KeyCode::Char('p'))), Outcome::Ignored);
    }

    #[test]
    fn each_key_sends_the_right_decision_and_scope() {
        let cases = [
            (KeyCode::Char('y'), Decision::Approved, Scope::Once),
            (KeyCode::Char('t'), Decision::Approved, Scope::Turn),
            (KeyCode::Char('a'), Decision::Approved, Scope::Session),
            (KeyCode::Esc, Decision::Denied, Scope::Once),
        ];
        for (code, decision, scope) in cases {
            let mut s = ApprovalState::new();
            s.push(pending("1", "shell", 1, 1));
            let Outcome::Decided(d) = s.on_key(key(code)) else {
                panic!("{code:?}")
            };
            assert_eq!(d.len(), 1);
            assert_eq!(
                (d[0].1.decision, d[0].1.scope),
                (decision, scope),
                "{code:?}"
            );
            assert!(!s.is_open());
        }
    }

    #[test]
    fn n_asks_for_an_optional_reason() {
        let mut s = ApprovalState::new();
        s.push(pending("1", "shell", 1, 1));
        assert_eq!(s.on_key(key(KeyCode::Char('n'))), Outcome::Used);
        assert!(s.is_typing_reason());
        for c in "no rm".chars() {
            s.on_key(key(KeyCode::Char(c)));
        }
        let Outcome::Decided(d) = s.on_key(key(KeyCode::Enter)) else {
            panic!()
        };
        assert_eq!(d[0].1, ApprovalAnswer::deny(Some("no rm".into())));

        s.push(pending("2", "shell", 1, 1));
        s.on_key(key(KeyCode::Char('n')));
        let Outcome::Decided(d) = s.on_key(key(KeyCode::Esc)) else {
            panic!()
        };
        assert_eq!(d[0].1, ApprovalAnswer::deny(None));
    }

    #[test]
    fn a_grant_covers_the_other_calls_of_that_tool_in_the_batch() {
        let mut s = ApprovalState::new();
        s.push(pending("1", "shell", 1, 3));
        s.push(pending("2", "write_file", 2, 3));
        s.push(pending("3", "shell", 3, 3));
        let Outcome::Decided(d) = s.on_key(key(KeyCode::Char('t'))) else {
            panic!()
        };
        assert_eq!(
            d.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>(),
            ["1", "3"]
        );
        assert_eq!(s.current().map(|p| p.id.as_str()), Some("2"));
        let Outcome::Decided(d) = s.on_key(key(KeyCode::Char('y'))) else {
            panic!()
        };
        assert_eq!(d.len(), 1);
        assert!(!s.is_open());
    }

    #[test]
    fn arguments_read_as_text() {
        let shown = pretty(&json!({"path": "a.txt", "content": "line 1\nline 2", "n": 3}));
        assert_eq!(shown, "n: 3\npath: a.txt\ncontent:\n  line 1\n  line 2\n");
        assert_eq!(pretty(&json!("raw")), "\"raw\"");
    }

    #[test]
    fn other_keys_are_not_taken() {
        let mut s = ApprovalState::new();
        assert_eq!(
            s.on_key(key(KeyCode::Char('y'))),
            Outcome::Ignored,
            "closed dialog"
        );
        s.push(pending("1", "shell", 1, 1));
        assert_eq!(s.on_key(key(KeyCode::Char('x'))), Outcome::Ignored);
        assert_eq!(
            s.on_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)),
            Outcome::Ignored
        );
        assert!(s.is_open());
    }
}
