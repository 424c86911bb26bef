//! The inline approval dialog (DESIGN §7): one pending call at a time. Keys are letters that
//! never renumber: `y` once, `t` this turn, `a` this session, `p` a shell command's shape,
//! `n` deny; with several calls waiting, `Y` / `N` decide the whole batch
//! (`approval/batch.rs`). A letter picks and Enter carries out (`approval/choice.rs`).

use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Widget};

use crate::event::{Confinement, Decision, Scope, ShellGrant};
use crate::orchestrator::approval::{ApprovalAnswer, ApprovalRequest, BatchDecision};
use crate::tui::safe::escape;
use crate::tui::theme::Theme;
use crate::tui::views::gate::Gate;
use crate::tui::views::keyline::{self, KeyHint, KeyStyles, hint};

pub use args::pretty;
pub use choice::Choice;

/// A call waiting for the user's decision: the orchestrator's request (id, tool, arguments,
/// how it would run, and with them which answers may decide it), and what the dialog shows
/// around it. It reads as its request (`pending.name`, `pending.once_only()`).
#[derive(Debug, Clone, PartialEq)]
pub struct Pending {
    /// The call as the orchestrator asks about it.
    pub call: ApprovalRequest,
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

impl std::ops::Deref for Pending {
    type Target = ApprovalRequest;
    fn deref(&self) -> &ApprovalRequest {
        &self.call
    }
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
    /// One decision for these calls of the batch (`Y`, `N`).
    Batch(Vec<String>, BatchDecision),
    /// These keys were typing, not an answer: they belong to the composer, and the dialog
    /// steps back.
    Typed(Vec<char>),
}

/// The calls waiting for approval and the dialog's own state.
#[derive(Debug, Default)]
pub struct ApprovalState {
    pending: Vec<Pending>,
    scroll: u16,
    /// Set while the user types a reason after `n` (or `N`).
    reason: Option<String>,
    /// The reason being typed is for every call of the batch (`N`).
    reason_for_all: bool,
    /// Calls of the batch answered here while others still wait, for the list.
    done: Vec<(Pending, Decision)>,
    /// The answer a letter picked, waiting for Enter.
    armed: Option<choice::Armed>,
}

impl ApprovalState {
    /// No pending calls.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a call from an `approval_requested` event. A call asked about again while it
    /// waits (its file changed while the dialog was open) gets the fresh diff and note.
    pub fn push(&mut self, pending: Pending) {
        let current = self.current().is_some_and(|c| c.id == pending.id);
        match self.pending.iter_mut().find(|p| p.id == pending.id) {
            Some(waiting) => {
                waiting.diff = pending.diff;
                waiting.note = pending.note;
                // What is approved changed: an answer picked for the old diff is dropped.
                if current {
                    self.armed = None;
                }
            }
            None => self.pending.push(pending),
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
            self.reason_for_all = false;
            self.armed = None;
        }
    }

    /// Drops every pending call.
    pub fn clear(&mut self) {
        self.pending.clear();
        self.done.clear();
        self.scroll = 0;
        self.reason = None;
        self.reason_for_all = false;
        self.armed = None;
    }

    /// Forgets a picked answer (the dialog stepped back).
    pub fn disarm(&mut self) {
        self.armed = None;
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
                    let reason = (!text.is_empty()).then_some(text);
                    if self.reason_for_all {
                        return self.deny_all(reason);
                    }
                    return self.decide(vec![(current.call.id, ApprovalAnswer::deny(reason))]);
                }
                KeyCode::Esc if self.reason_for_all => return self.deny_all(None),
                KeyCode::Esc => {
                    return self.decide(vec![(current.call.id, ApprovalAnswer::deny(None))]);
                }
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
        self.answer_key(key)
    }

    /// For a shell call: the grant `p` would give for the session (the request's own).
    fn offered_prefix(&self) -> Option<ShellGrant> {
        self.pending.first()?.offered_grant()
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
        for (id, answer) in &decided {
            self.answered(id, answer.decision);
        }
        Outcome::Decided(decided)
    }

    /// Rows the dialog wants for `width` (capped by the caller): the body wrapped at the
    /// inner width, and every key hint in full.
    pub fn wanted_rows(&self, width: u16) -> u16 {
        let Some(current) = self.current() else {
            return 0;
        };
        let inner = width.saturating_sub(2).max(1);
        let theme = Theme::default();
        let body = self.batch_lines(inner, &theme).len() + body_lines(current, inner, &theme).len();
        let footer = usize::from(self.footer_rows(inner, Gate::Open));
        // Two borders.
        (body + footer + 2).min(usize::from(u16::MAX)) as u16
    }

    /// Draws the dialog for the current call into `area`; `gate` says whether it takes keys
    /// yet (see `app/guard.rs`). The keys keep their rows (wrapped, else
    /// shortened); the body gets the rest and says on the bottom border how much is cut.
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme, gate: Gate) {
        let Some(current) = self.current() else {
            return;
        };
        if area.width < 4 || area.height < 3 {
            return;
        }
        Clear.render(area, buf);
        let inner_width = area.width - 2;
        let mut lines = self.batch_lines(inner_width, theme);
        lines.extend(body_lines(current, inner_width, theme));
        let inside = area.height - 2;
        let total = lines.len();
        let max_footer = keyline::footer_room(inside, total);
        let footer = self.footer(theme, inner_width, max_footer, gate);
        let body_height = inside.saturating_sub(footer.len() as u16);
        let scroll = usize::from(self.scroll).min(total.saturating_sub(1));
        let below = total.saturating_sub(scroll + usize::from(body_height));
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.warn)
            .title(title(current, theme));
        let block = match keyline::more(scroll, below) {
            Some(more) => block.title_bottom(Line::styled(more, theme.warn).right_aligned()),
            None => block,
        };
        let inner = block.inner(area);
        block.render(area, buf);
        let shown: Vec<Line> = lines
            .into_iter()
            .skip(scroll)
            .take(usize::from(body_height))
            .collect();
        keyline::draw_inside(inner, buf, shown, footer);
    }

    /// Rows the key hints need at `width` in full (a reason being typed: its prompt and
    /// its input line).
    fn footer_rows(&self, width: u16, gate: Gate) -> u16 {
        let (note, hints) = self.hints(gate);
        let rows = keyline::rows_needed(&hints, &note, width);
        let picked = self.picked_lines(gate, width, &Theme::default()).len();
        rows + u16::from(self.reason.is_some()) + u16::try_from(picked).unwrap_or(u16::MAX)
    }

    /// A picked answer's line, wrapped: what Enter will do, whole at any width.
    fn picked_lines(&self, gate: Gate, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        match (self.armed(), gate.holds(), &self.reason) {
            (Some(choice), false, None) => {
                let line = Line::styled(self.armed_line(choice), theme.warn);
                crate::tui::markdown::wrap_line(&line, width)
            }
            _ => Vec::new(),
        }
    }

    /// The key hints and the note before them (a waiting dialog's countdown, a picked
    /// answer, or the reason's prompt).
    fn hints(&self, gate: Gate) -> (String, Vec<KeyHint>) {
        if self.reason.is_some() {
            let hints = vec![hint("Enter", "sends"), hint("Esc", "skips")];
            let prompt = if self.reason_for_all {
                let calls = self.pending.iter().filter(|p| p.from.is_none()).count();
                format!("Reason for the model (denies all {calls}):")
            } else {
                "Reason for the model:".to_string()
            };
            return (prompt, hints);
        }
        if let (Some(_), false) = (self.armed(), gate.holds()) {
            return (String::new(), Self::armed_hints());
        }
        let note = match gate {
            Gate::Open => "pick, then Enter:".to_string(),
            waiting => waiting.note(),
        };
        let mut hints = if self.current().is_some_and(|p| p.once_only()) {
            vec![hint("y", "run it once").or("once"), hint("n", "deny")]
        } else {
            vec![
                hint("y", "once"),
                hint("t", "this turn").or("turn"),
                hint("a", "this session").or("session"),
                hint("n", "deny"),
            ]
        };
        if let Some(grant) = self.offered_prefix() {
            // Exactly what the grant will allow ("allows `git log …`, not other git commands").
            let allows = escape(&grant.hint()).replace('\n', "^J");
            let short = escape(&grant.short_hint()).replace('\n', "^J");
            hints.push(hint("p", allows).or(short));
        }
        if self.offers_approve_all() {
            hints.push(hint("Y", "approve all").or("all"));
        }
        if self.offers_batch() {
            hints.push(hint("N", "deny all").or("none"));
        }
        hints.push(hint("↑↓", "scroll").or(""));
        (note, hints)
    }

    /// The key rows: at most `max_rows` when a form fits them, then the reason being typed.
    fn footer(&self, theme: &Theme, width: u16, max_rows: u16, gate: Gate) -> Vec<Line<'static>> {
        // Waiting: the keys are dimmed and why comes first, so it shows at any width.
        let styles = match (gate.holds(), &self.reason) {
            (true, None) => KeyStyles {
                key: theme.dim,
                what: theme.dim,
                note: theme.warn,
            },
            // A picked answer stands out; the plain "pick, then Enter" does not.
            _ => KeyStyles {
                key: theme.key,
                what: theme.text,
                note: if self.armed.is_some() || self.reason.is_some() {
                    theme.warn
                } else {
                    theme.dim
                },
            },
        };
        let (note, hints) = self.hints(gate);
        let Some(reason) = &self.reason else {
            let mut lines = self.picked_lines(gate, width, theme);
            let room = max_rows.saturating_sub(u16::try_from(lines.len()).unwrap_or(u16::MAX));
            lines.extend(keyline::lines(&hints, &note, width, room.max(1), styles));
            return lines;
        };
        let mut lines = keyline::lines(&hints, &note, width, max_rows.saturating_sub(1), styles);
        // The end of the reason stays in view, with its cursor.
        let room = usize::from(width).saturating_sub(3);
        let shown = keyline::tail(reason, room);
        lines.push(Line::from(vec![
            Span::styled("› ", theme.key),
            Span::raw(shown),
            Span::styled("▏", theme.key),
        ]));
        lines
    }
}

/// ` Approve NAME? · call 2 of 3 from delegate: … `.
fn title(current: &Pending, theme: &Theme) -> Line<'static> {
    let batch = if current.of > 1 {
        format!(" · call {} of {}", current.position, current.of)
    } else {
        String::new()
    };
    // Leaving the sandbox is its own question: `Run shell unsandboxed?`.
    let (verb, after) = match current.sandbox {
        Some(Confinement::Unsandboxed) => (" Run ", " unsandboxed"),
        _ => (" Approve ", ""),
    };
    let mut title = Line::from(vec![
        Span::styled(verb, theme.warn),
        Span::styled(
            escape(&crate::mcp::names::display(&current.name)).replace('\n', "^J"),
            theme.tool.add_modifier(ratatui::style::Modifier::BOLD),
        ),
        Span::styled(format!("{after}?{batch} "), theme.warn),
    ]);
    // A sub-agent's call says so: the lead quoted is the sub-agent's, not the parent's.
    if let Some(from) = &current.from {
        let from = format!("from {} ", escape(from).replace('\n', "^J"));
        title.spans.push(Span::styled(from, theme.dim));
    }
    title
}

/// What the dialog shows of a call, wrapped to `width`: the last words that led to it, the
/// tool's note, then the diff or the arguments.
fn body_lines(current: &Pending, width: u16, theme: &Theme) -> Vec<Line<'static>> {
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
    if let Some(sandbox) = current.sandbox {
        lines.push(sandbox_line(sandbox, theme));
    }
    match &current.diff {
        Some(diff) => lines.extend(diff_lines(diff, theme)),
        None => {
            for line in pretty(&current.arguments).lines() {
                lines.push(Line::styled(line.to_string(), theme.code));
            }
        }
    }
    (lines.iter())
        .flat_map(|line| crate::tui::markdown::wrap_line(line, width))
        .collect()
}

/// How the call would run: plain when sandboxed, a warning when it would not be.
fn sandbox_line(sandbox: Confinement, theme: &Theme) -> Line<'static> {
    let label = sandbox.label();
    match sandbox {
        Confinement::Sandboxed { .. } | Confinement::Off => Line::styled(label, theme.dim),
        _ => Line::styled(
            format!("⚠ {label}; asked each time, no grant covers it"),
            theme.warn,
        ),
    }
}

/// A diff as coloured lines: the summary bold, headers dim, `+` added, `-` removed, and the
/// code on added and context lines coloured by the file's language (`highlight::diff`).
/// Control characters from the file are shown escaped, never sent to the terminal.
pub fn diff_lines(diff: &str, theme: &Theme) -> Vec<Line<'static>> {
    crate::tui::highlight::diff::styled(diff, theme)
}

mod args;
mod batch;
mod choice;
#[cfg(test)]
mod tests;
