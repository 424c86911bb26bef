//! The approval dialog as an overlay: docked in the chat, above any question (the run cannot
//! go on without it), guarded against type-ahead, closed when its batch is decided.

use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;

use super::{DrawCtx, Effect, Handled, Hints, KeyCtx, Overlay, Place, held_key};
use crate::tui::views::approval::{ApprovalState, Outcome, Pending};
use crate::tui::views::status::Activity;

/// The calls waiting for approval, one shown at a time.
#[derive(Debug, Default)]
pub struct ApprovalDialog {
    state: ApprovalState,
}

impl ApprovalDialog {
    /// No calls yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a call from an `approval_requested` event.
    pub fn push(&mut self, pending: Pending) {
        self.state.push(pending);
    }

    /// Forgets a call decided elsewhere.
    pub fn remove(&mut self, id: &str) {
        self.state.remove(id);
    }

    fn once_only(&self) -> bool {
        self.state.current().is_some_and(Pending::once_only)
    }
}

impl Overlay for ApprovalDialog {
    fn place(&self) -> Place {
        Place::Dock
    }

    fn priority(&self) -> u8 {
        1
    }

    /// A reason being typed takes every key, whatever has the focus.
    fn captures(&self, _key: &KeyEvent, _ctx: &KeyCtx) -> bool {
        self.state.is_typing_reason()
    }

    fn on_key(&mut self, key: KeyEvent, ctx: &KeyCtx) -> Handled {
        let typing = self.state.is_typing_reason();
        if ctx.held && !typing {
            return held_key(key, ctx, |key| {
                self.state.on_key(key);
            });
        }
        match self.state.on_key(key) {
            Outcome::Decided(decided) => Handled::effect(Effect::Approve(decided)),
            Outcome::Batch(ids, decision) => Handled::effect(Effect::DecideBatch { ids, decision }),
            _ if typing => Handled::Consumed,
            // Page keys scroll the chat too; an Esc the dialog did not take still cancels.
            _ if matches!(key.code, KeyCode::PageUp | KeyCode::PageDown | KeyCode::Esc) => {
                Handled::NotConsumed
            }
            // While the dialog is open, letters belong to it, not to the composer.
            _ => Handled::Consumed,
        }
    }

    /// Pasted into a reason being typed; otherwise it is a message for the composer.
    fn on_paste(&mut self, text: &str, ctx: &KeyCtx) -> Handled {
        if ctx.held || !self.state.is_typing_reason() {
            return Handled::NotConsumed;
        }
        for c in text.chars().filter(|c| !c.is_control()) {
            self.state
                .on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
        }
        Handled::Consumed
    }

    fn hints(&self) -> Option<Hints> {
        // A call that leaves the sandbox (or has none) is approved once or not at all.
        Some(match (self.once_only(), self.state.offers_batch()) {
            (true, false) => &[("y", "approve once"), ("n", "deny"), ("Tab", "panes")],
            (true, true) => &[
                ("y", "once"),
                ("n", "deny"),
                ("Y/N", "all"),
                ("Tab", "panes"),
            ],
            (false, false) => &[("y/t/a", "approve"), ("n", "deny"), ("Tab", "panes")],
            (false, true) => &[
                ("y/t/a", "approve"),
                ("n", "deny"),
                ("Y/N", "all"),
                ("Tab", "panes"),
            ],
        })
    }

    fn height(&self, width: u16, _ctx: &DrawCtx) -> u16 {
        self.state.wanted_rows(width)
    }

    fn render(&mut self, area: Rect, buf: &mut Buffer, ctx: &DrawCtx) {
        self.state.render(area, buf, ctx.theme, ctx.wait);
    }

    fn guard_id(&self) -> Option<String> {
        (self.state.current()).map(|call| format!("approval {}", call.id))
    }

    fn activity(&self) -> Option<Activity> {
        Some(Activity::AwaitingApproval)
    }

    fn composer_note(&self) -> Option<&'static str> {
        Some(match (self.once_only(), self.state.offers_batch()) {
            (true, false) => "answer the approval above (y / n)",
            (true, true) => "answer above (y / n; Y / N: all)",
            (false, false) => "answer the approval above (y / t / a / n)",
            (false, true) => "answer above (y / t / a / n; Y / N: all)",
        })
    }

    fn run_bound(&self) -> bool {
        true
    }

    fn finished(&self) -> bool {
        !self.state.is_open()
    }
}
