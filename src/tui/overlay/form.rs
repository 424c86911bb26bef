//! A server's form as an overlay, docked in the chat like the question dialog and behind the
//! same dialog gate (`app/guard.rs`): it takes typed text, so keys typed before it opened go
//! on to the composer until the user moves to it (Tab). Forms from calls running side by
//! side wait their turn.

use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;

use super::{DrawCtx, Effect, Handled, Hints, KeyCtx, Overlay, Place, held_key};
use crate::event::InputRequest;
use crate::tui::views::form::{FormState, Step};

/// The forms waiting for an answer, the first one shown.
#[derive(Debug, Default)]
pub struct FormDialog {
    forms: Vec<FormState>,
}

impl FormDialog {
    /// No forms yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the form of a `form` question; `false` when it carries none.
    pub fn push(&mut self, request: InputRequest) -> bool {
        match FormState::new(request) {
            Some(form) => {
                self.forms.push(form);
                true
            }
            None => false,
        }
    }

    /// Forgets a form answered (or ended) elsewhere.
    pub fn remove(&mut self, id: &str) {
        self.forms.retain(|f| f.request.id != id);
    }

    /// The form shown now.
    pub fn current(&self) -> Option<&FormState> {
        self.forms.first()
    }
}

impl Overlay for FormDialog {
    fn place(&self) -> Place {
        Place::Dock
    }

    /// Every key but the chat's scrolling while the chat has the focus: Tab moves between
    /// fields, not panes.
    fn captures(&self, key: &KeyEvent, ctx: &KeyCtx) -> bool {
        let scroll = matches!(key.code, KeyCode::PageUp | KeyCode::PageDown)
            || (key.code == KeyCode::Char('o') && key.modifiers.contains(KeyModifiers::CONTROL));
        !ctx.held && ctx.focus == crate::tui::layout::Focus::Chat && !scroll
    }

    fn on_key(&mut self, key: KeyEvent, ctx: &KeyCtx) -> Handled {
        if ctx.held {
            return held_key(key, ctx, |_| {});
        }
        let Some(form) = self.forms.first_mut() else {
            return Handled::NotConsumed;
        };
        match form.on_key(key) {
            Step::Done(answer) => {
                let id = form.request.id.clone();
                self.forms.remove(0);
                Handled::effect(Effect::Fill { id, answer })
            }
            Step::Used | Step::Refused => Handled::Consumed,
            Step::Ignored if matches!(key.code, KeyCode::PageUp | KeyCode::PageDown) => {
                Handled::NotConsumed
            }
            Step::Ignored => Handled::Consumed,
        }
    }

    /// Into the text field under the cursor, on one line; elsewhere it is swallowed, so it
    /// does not land in the composer either.
    fn on_paste(&mut self, text: &str, ctx: &KeyCtx) -> Handled {
        if ctx.held {
            return Handled::NotConsumed;
        }
        if let Some(form) = self.forms.first_mut() {
            form.on_paste(text);
        }
        Handled::Consumed
    }

    fn hints(&self) -> Option<Hints> {
        Some(&[("Tab ↑↓", "field"), ("Esc", "cancel the form")])
    }

    fn height(&self, width: u16, _ctx: &DrawCtx) -> u16 {
        self.forms.first().map_or(0, |f| f.wanted_rows(width))
    }

    fn render(&mut self, area: Rect, buf: &mut Buffer, ctx: &DrawCtx) {
        if let Some(form) = self.forms.first_mut() {
            form.render(area, buf, ctx.theme, ctx.gate);
        }
    }

    fn guard_id(&self) -> Option<String> {
        self.forms.first().map(|f| format!("form {}", f.request.id))
    }

    fn waiting_for(&self) -> Option<String> {
        let form = self.forms.first()?;
        Some(format!("{} sent a form", form.request.tool))
    }

    fn takes_text(&self) -> bool {
        true
    }

    fn composer_note(&self) -> Option<&'static str> {
        Some("fill in the form above")
    }

    fn run_bound(&self) -> bool {
        true
    }

    fn finished(&self) -> bool {
        self.forms.is_empty()
    }
}
