//! Selecting a frame in the stack pane: ↑/↓ move, Enter shows its detail (arguments, state,
//! elapsed, parent chain, live output), `c` cancels that call alone, Esc lets go. Keys come
//! out as effects, never as orchestrator calls.

use std::time::Instant;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::style::Style;

use super::{Entry, StackState};
use crate::event::FrameState;
use crate::orchestrator::approval::ApprovalAnswer;
use crate::tools::builtin::delegate::{self, is_delegate};
use crate::tui::overlay::{Effect, Handled};
use crate::tui::theme::{Theme, duration};

/// Most lines of arguments, sub-agent text and output the detail shows (each).
const DETAIL_LINES: usize = 6;

/// Where an approval comes from when a sub-agent asks it.
#[derive(Debug, Clone, PartialEq)]
pub struct SubAgent {
    /// `delegate: <task summary>`.
    pub from: String,
    /// The latest text the sub-agent's model said, if it said any.
    pub said: Option<String>,
}

impl StackState {
    /// A key while the pane has the focus. ↑/↓ (k/j), Home/End (g/G) select; Enter shows or
    /// hides the selected frame's detail; `c` cancels the selected call (denies it while it
    /// awaits approval); Esc closes the detail, then lets go of the selection.
    pub fn on_key(&mut self, key: KeyEvent) -> Handled {
        if key.kind == KeyEventKind::Release
            || !key.modifiers.difference(KeyModifiers::SHIFT).is_empty()
        {
            return Handled::NotConsumed;
        }
        let tree = self.tree();
        let Some(last) = tree.len().checked_sub(1) else {
            return Handled::NotConsumed;
        };
        let row = self.sync_selection(&tree);
        let to = match (key.code, row) {
            (KeyCode::Up | KeyCode::Char('k'), None) => last,
            (KeyCode::Up | KeyCode::Char('k'), Some(row)) => row.saturating_sub(1),
            (KeyCode::Down | KeyCode::Char('j'), None) => 0,
            (KeyCode::Down | KeyCode::Char('j'), Some(row)) => (row + 1).min(last),
            (KeyCode::Home | KeyCode::Char('g'), _) => 0,
            (KeyCode::End | KeyCode::Char('G'), _) => last,
            (KeyCode::Enter, Some(_)) => {
                self.expanded = !self.expanded;
                return Handled::Consumed;
            }
            (KeyCode::Esc, Some(_)) => {
                if !std::mem::take(&mut self.expanded) {
                    self.selected = None;
                }
                return Handled::Consumed;
            }
            (KeyCode::Char('c'), Some(row)) => return self.cancel(tree[row].0),
            // Without a selection, Esc cancels the run and letters go to the composer.
            _ => return Handled::NotConsumed,
        };
        if let Some((index, _)) = tree.get(to) {
            self.selected = Some((self.entries[*index].frame.id.clone(), to));
        }
        Handled::Consumed
    }

    /// The row the selection is on, moved to the nearest row when its frame left (or `None`
    /// when nothing is left to select).
    pub(super) fn sync_selection(&mut self, tree: &[(usize, String)]) -> Option<usize> {
        let (id, row) = self.selected.as_ref()?;
        let found = tree
            .iter()
            .position(|(i, _)| self.entries.get(*i).is_some_and(|e| &e.frame.id == id));
        let row = match found {
            Some(row) => row,
            None if tree.is_empty() => {
                (self.selected, self.expanded) = (None, false);
                return None;
            }
            None => {
                // Its frame faded out under the cursor: the row that took its place.
                self.expanded = false;
                let row = (*row).min(tree.len() - 1);
                let (index, _) = tree.get(row)?;
                let id = self.entries.get(*index)?.frame.id.clone();
                self.selected = Some((id, row));
                return Some(row);
            }
        };
        if let Some(selected) = self.selected.as_mut() {
            selected.1 = row;
        }
        Some(row)
    }

    /// The selected frame's id, if one is selected.
    pub fn selected(&self) -> Option<&str> {
        self.selected.as_ref().map(|(id, _)| id.as_str())
    }

    /// `c` on entry `index`: a running (or queued) call is cancelled alone, one awaiting
    /// approval is denied; anything else has nothing to cancel.
    fn cancel(&mut self, index: usize) -> Handled {
        let Some(entry) = self.entries.get(index) else {
            return Handled::Consumed;
        };
        let id = entry.frame.id.clone();
        if entry.finished() || self.cancelling.contains(&id) {
            return Handled::Consumed;
        }
        match entry.frame.state {
            FrameState::Running | FrameState::Queued => {
                self.cancelling.insert(id.clone());
                Handled::effect(Effect::CancelCall(id))
            }
            FrameState::AwaitingApproval => {
                self.cancelling.insert(id.clone());
                let answer = ApprovalAnswer::deny(Some("cancelled from the tool stack".into()));
                Handled::effect(Effect::Approve(vec![(id, answer)]))
            }
            _ => Handled::Consumed,
        }
    }

    /// When the live frame `id` runs inside a sub-agent (its nearest `delegate` ancestor):
    /// which one, and what it said last.
    pub fn sub_agent(&self, id: &str) -> Option<SubAgent> {
        let find = |id: &str| self.live_entries().find(|e| e.frame.id == id);
        let mut parent = find(id)?.frame.parent.as_deref();
        let mut steps = 0;
        let agent = loop {
            // Bounded by the frame count, so a parent cycle cannot loop forever.
            let up = find(parent?).filter(|_| steps <= self.entries.len())?;
            if is_delegate(&up.frame.name) {
                break up;
            }
            parent = up.frame.parent.as_deref();
            steps += 1;
        };
        let task = (agent.call.arguments.as_ref())
            .and_then(|a| a.get("task"))
            .and_then(|t| t.as_str())
            .map_or_else(|| agent.frame.summary.clone(), String::from);
        Some(SubAgent {
            from: format!("{}: {}", delegate::NAME, crate::text::summarize(&task, 60)),
            said: agent.call.said.clone(),
        })
    }

    /// The detail lines of `entry`: state and elapsed, parent chain, arguments, what a
    /// sub-agent said, live output, and the keys.
    pub(super) fn detail(
        &self,
        entry: &Entry,
        now: Instant,
        theme: &Theme,
    ) -> Vec<(String, Style)> {
        let mut out = Vec::new();
        let elapsed = self.entry_elapsed(entry, now);
        let mut status = format!(
            "{} · {}",
            state_word(entry.frame.state),
            duration(elapsed.as_millis().min(u128::from(u64::MAX)) as u64)
        );
        if let Some(flag) = self.right_note(entry, now) {
            status.push_str(" · ");
            status.push_str(&flag);
        }
        out.push((status, theme.text));
        if let Some(p) = &entry.call.progress {
            let text = crate::tui::theme::progress_text(p.progress, p.total, p.message.as_deref());
            out.push((
                format!("progress: {}", text.trim_end_matches(" · ")),
                theme.key,
            ));
        }
        out.push((format!("under: {}", self.chain(entry)), theme.dim));
        if let Some(sandbox) = entry.call.sandbox {
            out.push((sandbox.label(), theme.dim));
        }
        match &entry.call.arguments {
            Some(arguments) => {
                let text = serde_json::to_string_pretty(arguments).unwrap_or_default();
                push_lines(&mut out, "args:", &text, false, theme);
            }
            None => out.push((format!("args: {}", entry.frame.summary), theme.dim)),
        }
        if let Some(said) = &entry.call.said {
            push_lines(&mut out, "said:", said, true, theme);
        }
        if let Some(tail) = &entry.call.tail {
            push_lines(&mut out, "output:", tail, true, theme);
        }
        let keys = match entry.frame.state {
            _ if entry.finished() || self.cancelling.contains(&entry.frame.id) => "Enter/Esc close",
            FrameState::Running | FrameState::Queued => "c cancel this call · Enter/Esc close",
            FrameState::AwaitingApproval => "c deny · Enter/Esc close",
            _ => "Enter/Esc close",
        };
        out.push((keys.to_string(), theme.key));
        out
    }

    /// The frames `entry` runs under, outermost first (`delegate › read_file`), by name and
    /// the summary of a sub-agent; a parent no longer on the stack shows as its id.
    fn chain(&self, entry: &Entry) -> String {
        let mut names = Vec::new();
        let mut parent = entry.frame.parent.clone();
        // Bounded by the frame count, so a parent cycle cannot loop forever.
        while let Some(id) = parent.take().filter(|_| names.len() <= self.entries.len()) {
            match self.entries.iter().rev().find(|e| e.frame.id == id) {
                Some(up) => {
                    names.push(up.frame.name.clone());
                    parent = up.frame.parent.clone();
                }
                None => names.push(id),
            }
        }
        if names.is_empty() {
            return "the model's turn (top level)".to_string();
        }
        names.reverse();
        names.join(" › ")
    }
}

/// A labelled block of at most [`DETAIL_LINES`] lines: the first ones, or the last ones for
/// text that grows at the end (output).
fn push_lines(out: &mut Vec<(String, Style)>, label: &str, text: &str, last: bool, theme: &Theme) {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    out.push((label.to_string(), theme.dim));
    let hidden = lines.len().saturating_sub(DETAIL_LINES);
    let shown = if last {
        &lines[hidden..]
    } else {
        &lines[..lines.len() - hidden]
    };
    if last && hidden > 0 {
        out.push((format!("  … {hidden} earlier lines"), theme.dim));
    }
    out.extend(shown.iter().map(|l| (format!("  {l}"), theme.text)));
    if !last && hidden > 0 {
        out.push((format!("  … {hidden} more lines"), theme.dim));
    }
}

fn state_word(state: FrameState) -> &'static str {
    match state {
        FrameState::Running => "running",
        FrameState::Queued => "queued for a process slot",
        FrameState::AwaitingApproval => "awaiting approval",
        FrameState::AwaitingInput => "awaiting input",
        FrameState::Done => "done",
        FrameState::Failed => "failed",
        FrameState::Denied => "denied",
        FrameState::Cancelled => "cancelled",
    }
}
