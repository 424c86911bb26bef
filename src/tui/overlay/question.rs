//! The question dialog as an overlay: a missing parameter (typed on one line, or the
//! "Continue with current task?" that an empty answer asks), the depth limit, or sending a
//! filled-in form. Docked in the chat under any approval, behind the dialog gate
//! (`app/guard.rs`), closed when nothing is asked.

use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;

use super::{DrawCtx, Effect, Handled, Hints, KeyCtx, Overlay, Place, held_key};
use crate::event::{InputKind, InputRequest};
use crate::tui::commands::{self, SlashCommand};
use crate::tui::layout::Focus;
use crate::tui::views::input::{InputState, Outcome};

/// The questions waiting for an answer, the first one shown.
#[derive(Debug, Default)]
pub struct QuestionDialog {
    state: InputState,
}

impl QuestionDialog {
    /// No questions yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a question from an `input_requested` event.
    pub fn push(&mut self, request: InputRequest) {
        self.state.push(request);
    }

    /// Forgets a question answered elsewhere.
    pub fn remove(&mut self, id: &str) {
        self.state.remove(id);
    }

    /// The question shown now.
    pub fn current(&self) -> Option<&InputRequest> {
        self.state.current()
    }

    /// The yes (`true`) or no a letter picked, waiting for Enter.
    pub fn armed(&self) -> Option<bool> {
        self.state.armed()
    }

    /// Whether it asks "Continue with current task?".
    pub fn is_confirming(&self) -> bool {
        self.state.is_confirming()
    }

    /// Whether a parameter is asked for: the dialog takes typed text.
    fn typed(&self) -> bool {
        !self.state.is_yes_no()
            && (self.state.current()).is_some_and(|q| q.kind == InputKind::Parameter)
    }
}

/// A letter, as opposed to a control key.
fn letter(key: &KeyEvent) -> bool {
    matches!(key.code, KeyCode::Char(_)) && !key.modifiers.contains(KeyModifiers::CONTROL)
}

impl Overlay for QuestionDialog {
    fn place(&self) -> Place {
        Place::Dock
    }

    /// Letters typed for a parameter go to it from any pane; a picked yes or no takes every
    /// key (Enter must confirm it, not open a timeline row).
    fn captures(&self, key: &KeyEvent, ctx: &KeyCtx) -> bool {
        !ctx.held && ((self.typed() && letter(key)) || self.state.armed().is_some())
    }

    fn on_key(&mut self, key: KeyEvent, ctx: &KeyCtx) -> Handled {
        if ctx.held {
            return held_key(key, ctx, |key| {
                self.state.on_key(key);
            });
        }
        let typing = self.typed();
        let mut effects = Vec::new();
        if typing && letter(&key) {
            // Typing brings the dialog back into focus.
            effects.push(Effect::Focus(Focus::Chat));
        }
        // `/status`, `/cancel`, … still work while a parameter is asked for; text that is
        // no command (an absolute path) is an answer.
        if typing && key.code == KeyCode::Enter && !self.state.is_confirming() {
            let line = self.state.line().trim();
            if line.starts_with('/') && !matches!(commands::parse(line), SlashCommand::Unknown(_)) {
                let line = self.state.take_line();
                effects.push(Effect::Command(line.trim().to_string()));
                return Handled::Effects(effects);
            }
        }
        match self.state.on_key(key) {
            Outcome::Answered(id, value) => effects.push(Effect::Answer { id, value }),
            Outcome::Typed(keys) => effects.push(Effect::Yield(keys)),
            Outcome::Used => {}
            // Chat scrolling and Ctrl-O still work; nothing else reaches the composer.
            Outcome::Ignored => {
                let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
                let passes = match key.code {
                    KeyCode::PageUp | KeyCode::PageDown => true,
                    KeyCode::Char('o') => ctrl,
                    _ => false,
                };
                if passes && effects.is_empty() {
                    return Handled::NotConsumed;
                }
            }
        }
        if effects.is_empty() {
            Handled::Consumed
        } else {
            Handled::Effects(effects)
        }
    }

    /// Into the parameter line, on one row; a question that takes no text swallows it, so it
    /// does not land in the composer either.
    fn on_paste(&mut self, text: &str, ctx: &KeyCtx) -> Handled {
        if ctx.held {
            return Handled::NotConsumed;
        }
        if self.state.on_paste(text) {
            return Handled::effect(Effect::Focus(Focus::Chat));
        }
        Handled::Consumed
    }

    fn hints(&self) -> Option<Hints> {
        Some(self.state.hints())
    }

    fn height(&self, width: u16, ctx: &DrawCtx) -> u16 {
        self.state.wanted_rows(width, ctx.stack.len())
    }

    fn render(&mut self, area: Rect, buf: &mut Buffer, ctx: &DrawCtx) {
        self.state.render(area, buf, ctx.theme, ctx.stack, ctx.gate);
    }

    fn guard_id(&self) -> Option<String> {
        (self.state.current()).map(|q| format!("question {}", q.id))
    }

    fn waiting_for(&self) -> Option<String> {
        let q = self.state.current()?;
        Some(match q.kind {
            InputKind::Parameter => format!("{} needs a value", q.tool),
            InputKind::DepthLimit => "the tool stack reached its depth limit".to_string(),
            InputKind::Plan => "the plan is ready: approve it or say what to change".to_string(),
            InputKind::Submit | InputKind::Form => format!("send the form to {}?", q.tool),
        })
    }

    fn takes_text(&self) -> bool {
        self.typed()
    }

    fn composer_note(&self) -> Option<&'static str> {
        Some(if self.state.is_yes_no() {
            "answer above: y or n, then Enter"
        } else {
            "answer the question above"
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
