//! The approval dialog as an overlay: docked in the chat, above any question (the run cannot
//! go on without it), behind the dialog gate (`app/guard.rs`), closed when its batch is
//! decided. Typing at it gives the keys back to the composer (`Effect::Yield`).

use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;

use super::{DrawCtx, Effect, Handled, Hints, KeyCtx, Overlay, Place, held_key};
use crate::tui::views::approval::{ApprovalState, Outcome, Pending};

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

    /// The answer a letter picked, waiting for Enter.
    pub fn armed(&self) -> Option<crate::tui::views::approval::Choice> {
        self.state.armed()
    }

    fn once_only(&self) -> bool {
        self.state.current().is_some_and(|p| p.once_only())
    }
}

impl Overlay for ApprovalDialog {
    fn place(&self) -> Place {
        Place::Dock
    }

    fn priority(&self) -> u8 {
        1
    }

    /// A reason being typed, or a picked answer waiting for Enter, takes every key, whatever
    /// has the focus (Enter must confirm, not open a timeline row).
    fn captures(&self, _key: &KeyEvent, ctx: &KeyCtx) -> bool {
        self.state.is_typing_reason() || (!ctx.held && self.state.armed().is_some())
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
            Outcome::Typed(keys) => Handled::effect(Effect::Yield(keys)),
            _ if typing => Handled::Consumed,
            // Page keys scroll the chat too; an Esc the dialog did not take still cancels
            // (one that only dropped a picked answer did its job).
            Outcome::Used if matches!(key.code, KeyCode::PageUp | KeyCode::PageDown) => {
                Handled::NotConsumed
            }
            Outcome::Ignored
                if matches!(key.code, KeyCode::PageUp | KeyCode::PageDown | KeyCode::Esc) =>
            {
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
            (true, false) => &[("y", "once"), ("n", "deny"), ("Enter", "confirm")],
            (true, true) => &[
                ("y", "once"),
                ("n", "deny"),
                ("Y/N", "all"),
                ("Enter", "confirm"),
            ],
            (false, false) => &[
                ("y/t/a", "approve"),
                ("n", "deny"),
                ("Enter", "confirm"),
                ("Tab", "panes"),
            ],
            (false, true) => &[
                ("y/t/a", "approve"),
                ("n", "deny"),
                ("Y/N", "all"),
                ("Enter", "confirm"),
            ],
        })
    }

    fn height(&self, width: u16, _ctx: &DrawCtx) -> u16 {
        self.state.wanted_rows(width)
    }

    fn render(&mut self, area: Rect, buf: &mut Buffer, ctx: &DrawCtx) {
        self.state.render(area, buf, ctx.theme, ctx.gate);
    }

    fn guard_id(&self) -> Option<String> {
        (self.state.current()).map(|call| format!("approval {}", call.id))
    }

    fn waiting_for(&self) -> Option<String> {
        (self.state.current()).map(|call| format!("approve {}?", call.name))
    }

    fn composer_note(&self) -> Option<&'static str> {
        Some(match (self.once_only(), self.state.offers_batch()) {
            (true, false) => "answer above: y or n, then Enter",
            (true, true) => "answer above: y / n / Y / N, then Enter",
            (false, false) => "answer above: a letter, then Enter",
            (false, true) => "answer above: a letter, then Enter (Y / N: all)",
        })
    }

    fn step_back(&mut self) {
        self.state.disarm();
    }

    fn run_bound(&self) -> bool {
        true
    }

    fn finished(&self) -> bool {
        !self.state.is_open()
    }
}
