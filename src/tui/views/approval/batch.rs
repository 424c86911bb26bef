//! The approval dialog's batch: when several calls of one batch wait, the dialog lists them
//! all (name, short arguments, the diff's summary) with the current one marked, `Y` approves
//! every call once and `N` denies every call with one reason. A call that leaves the sandbox
//! is never approved by `Y` (it waits for its own `y`), and a sub-agent's calls are answered
//! one by one.

use ratatui::style::Style;
use ratatui::text::Line;

use super::{ApprovalState, Outcome, Pending};
use crate::event::Decision;
use crate::orchestrator::approval::BatchDecision;
use crate::orchestrator::stack::argument_summary;
use crate::tui::safe::escape;
use crate::tui::theme::Theme;

impl ApprovalState {
    /// The waiting calls `Y` and `N` may decide: the current one's batch, unless a sub-agent
    /// asks (its calls go one by one).
    fn batch_calls(&self) -> Vec<&Pending> {
        match self.current() {
            Some(current) if current.from.is_none() => {
                (self.pending.iter()).filter(|p| p.from.is_none()).collect()
            }
            _ => Vec::new(),
        }
    }

    /// Whether `Y` / `N` are offered: more than one call of the batch waits.
    pub fn offers_batch(&self) -> bool {
        self.batch_calls().len() > 1
    }

    /// Whether `Y` would approve anything: a call of the batch that may be approved wholesale.
    pub(super) fn offers_approve_all(&self) -> bool {
        self.offers_batch() && self.batch_calls().iter().any(|p| p.accepts(&approve_all()))
    }

    /// How many calls `Y` would approve.
    pub(super) fn approvable_in_batch(&self) -> usize {
        (self.batch_calls().iter())
            .filter(|p| p.accepts(&approve_all()))
            .count()
    }

    /// How many calls `N` would deny.
    pub(super) fn batch_len(&self) -> usize {
        self.batch_calls().len()
    }

    /// `Y`: every call of the batch approved once, but a call that leaves the sandbox, which
    /// stays to be answered on its own.
    pub(super) fn approve_all(&mut self) -> Outcome {
        if !self.offers_approve_all() {
            return Outcome::Ignored;
        }
        let ids: Vec<String> = (self.batch_calls().into_iter())
            .filter(|p| p.accepts(&approve_all()))
            .map(|p| p.id.clone())
            .collect();
        self.settle(ids, BatchDecision::ApproveAll)
    }

    /// `N`, then Enter or Esc: every call of the batch denied, with one reason.
    pub(super) fn deny_all(&mut self, reason: Option<String>) -> Outcome {
        let ids: Vec<String> = (self.batch_calls().into_iter())
            .map(|p| p.id.clone())
            .collect();
        self.settle(ids, BatchDecision::DenyAll(reason))
    }

    fn settle(&mut self, ids: Vec<String>, decision: BatchDecision) -> Outcome {
        let mark = match decision {
            BatchDecision::ApproveAll => Decision::Approved,
            BatchDecision::DenyAll(_) => Decision::Denied,
        };
        for id in &ids {
            self.answered(id, mark);
        }
        Outcome::Batch(ids, decision)
    }

    /// Notes that a call was answered here, for the list, and takes it off the waiting ones.
    pub(super) fn answered(&mut self, id: &str, decision: Decision) {
        if let Some(call) = self.pending.iter().find(|p| p.id == id) {
            self.done.push((call.clone(), decision));
        }
        self.remove(id);
        if self.pending.is_empty() {
            self.done.clear();
        }
    }

    /// The list of the batch's calls, answered ones first with their mark, then the waiting
    /// ones, the current one marked `▸`; empty when the call is alone.
    pub(super) fn batch_lines(&self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let waiting = self.batch_calls();
        if waiting.len() + self.done.len() < 2 || waiting.is_empty() {
            return Vec::new();
        }
        let total = waiting.len() + self.done.len();
        let mut lines = vec![Line::styled(
            format!("{total} calls in this batch, {} waiting:", waiting.len()),
            theme.dim,
        )];
        let width = usize::from(width);
        for (call, decision) in &self.done {
            let (mark, style) = match decision {
                Decision::Approved => ("✓ ", theme.ok),
                Decision::Denied => ("✗ ", theme.warn),
            };
            lines.push(row(mark, call, width, style));
        }
        for (i, call) in waiting.into_iter().enumerate() {
            let (mark, style) = if i == 0 {
                ("▸ ", theme.selected)
            } else {
                ("  ", theme.text)
            };
            lines.push(row(mark, call, width, style));
        }
        lines.push(Line::default());
        lines
    }
}

/// One call of the list on one line: `▸ edit_file · +12 −3 in a.rs · path=a.rs edits=…`, cut to
/// `width`; a call that leaves the sandbox says it is asked on its own.
fn row(mark: &str, call: &Pending, width: usize, style: Style) -> Line<'static> {
    // The change's summary before the arguments: on a narrow screen it is what is kept.
    let mut text = match call.diff.as_deref().and_then(|d| d.lines().next()) {
        Some(summary) => format!("{} · {summary} · ", crate::mcp::names::display(&call.name)),
        None => format!("{} ", crate::mcp::names::display(&call.name)),
    };
    text.push_str(&argument_summary(&call.arguments));
    if call.once_only() {
        text.push_str(" · asked on its own");
    }
    let text = escape(&text).replace('\n', "^J");
    let text = crate::text::shorten_end(&text, width.saturating_sub(2));
    Line::styled(format!("{mark}{text}"), style)
}

/// What `Y` answers each call: whether a call takes it is the request's rule
/// ([`crate::orchestrator::approval::ApprovalRequest::accepts`]), the one the orchestrator
/// also enforces.
fn approve_all() -> crate::orchestrator::approval::ApprovalAnswer {
    BatchDecision::ApproveAll.answer()
}
