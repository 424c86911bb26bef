//! The overlay stack: help, the approval and question dialogs, the timeline's detail view and
//! whatever comes next, behind one trait. A key goes in, a [`Handled`] comes out (consumed,
//! not consumed, or effects for the app to carry out); the app owns the stack and walks it,
//! so its key handling names no dialog. Adding a dialog is one type implementing [`Overlay`]
//! and a push.
//!
//! Keys walk fixed layers, so a dialog never has to know about the panes:
//! 1. overlays that [capture](Overlay::captures) the key (a modal one, a dialog being typed
//!    into), top first;
//! 2. the focus keys (Tab, Shift-Tab);
//! 3. the focused pane, or the overlay over it ([`Place::Pane`]), which hides the pane;
//! 4. the other shown overlays, top first (the dialog docked in the chat);
//! 5. the global keys, then the composer.
//!
//! A layer that answers [`Handled::NotConsumed`] passes the key to the next one.

use std::any::Any;
use std::fmt::Debug;

use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;

use super::layout::Focus;
use super::theme::Theme;
use super::views::gate::Gate;
use crate::event::StackFrame;
use crate::orchestrator::approval::ApprovalAnswer;

mod approval;
mod detail;
mod form;
mod grants;
mod help;
mod picker;
mod question;
mod rewind;
#[cfg(test)]
mod tests;

pub use approval::ApprovalDialog;
pub use detail::Zoomed;
pub use form::FormDialog;
pub use question::QuestionDialog;

/// Key hints for the status line: (key, what it does).
pub type Hints = &'static [(&'static str, &'static str)];

/// Where an overlay shows. Each place shows only its top overlay (the others wait their
/// turn), and the place decides when the overlay sees keys (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// In the chat, between the messages and the composer: sees what the focused pane leaves.
    Dock,
    /// Over a pane's content, which it hides: sees that pane's keys while it has the focus.
    Pane(Focus),
    /// Over the whole screen.
    Screen,
}

impl Place {
    /// Stacking order: a screen overlay is above a pane's, which is above the dock's.
    fn rank(self) -> u8 {
        match self {
            Self::Dock => 0,
            Self::Pane(_) => 1,
            Self::Screen => 2,
        }
    }

    /// Whether the user looks at this place when `focus` has the keyboard (for hints).
    fn has(self, focus: Focus) -> bool {
        match self {
            Self::Dock => focus == Focus::Chat,
            Self::Pane(pane) => pane == focus,
            Self::Screen => true,
        }
    }
}

/// What an overlay (or a pane) did with a key or a paste.
#[derive(Debug)]
pub enum Handled {
    /// Taken: nothing after it sees the key.
    Consumed,
    /// Not taken: the next layer gets it.
    NotConsumed,
    /// Taken, with effects for the app to carry out, in order.
    Effects(Vec<Effect>),
}

impl Handled {
    /// One effect.
    pub fn effect(effect: Effect) -> Self {
        Self::Effects(vec![effect])
    }

    /// `Consumed` when `used`, else `NotConsumed` (for panes that answer with a bool).
    pub fn used(used: bool) -> Self {
        if used {
            Self::Consumed
        } else {
            Self::NotConsumed
        }
    }

    /// Whether the key was taken (consumed, with or without effects).
    pub fn taken(&self) -> bool {
        !matches!(self, Self::NotConsumed)
    }
}

/// Something an overlay or a pane asks the app to do: values, never callbacks, so keys can
/// be tested without an app.
#[derive(Debug)]
pub enum Effect {
    /// Decisions on pending approvals, by call id.
    Approve(Vec<(String, ApprovalAnswer)>),
    /// One decision for several calls of the batch (`Y`, `N`), by call id.
    DecideBatch {
        /// The calls it decides.
        ids: Vec<String>,
        /// Approve all, or deny all with one reason.
        decision: crate::orchestrator::approval::BatchDecision,
    },
    /// The answer to a question; `None` declines it.
    Answer {
        /// The question's id.
        id: String,
        /// The answer.
        value: Option<String>,
    },
    /// The answer to a form: its content, a decline or a cancel.
    Fill {
        /// The question's id.
        id: String,
        /// The answer.
        answer: crate::tools::AskReply,
    },
    /// Run a slash command typed where an answer was expected.
    Command(String),
    /// Cancel one running call, by its frame id (the stack pane's `c`).
    CancelCall(String),
    /// Move the keyboard focus.
    Focus(Focus),
    /// Push another overlay (a pane's detail view).
    Open(Box<dyn Overlay>),
    /// Take a grant back (`r` in `/tools`).
    Revoke(crate::event::Grant),
    /// Copy this text to the clipboard (`y`): the app redacts it and sends OSC 52.
    Copy(String),
    /// A picker's row was chosen (`/model`, `/provider`, `/resume`).
    Pick(crate::tui::views::picker::Pick),
    /// Open the rewind overlay for this point and ask for its preview (`r` in the timeline).
    PreviewRewind(crate::event::RewindPoint),
    /// Rewind, as the rewind overlay's user confirmed.
    Rewind {
        /// Where to.
        point: crate::event::RewindPoint,
        /// What goes back.
        scope: crate::event::RewindScope,
        /// Hand-edited files are overwritten too.
        overwrite: bool,
    },
    /// These keys were typing, not an answer: the composer takes them and the dialog steps
    /// back until the user moves to it again (`app/guard.rs`).
    Yield(Vec<char>),
}

/// What an overlay knows when a key or a paste arrives.
#[derive(Debug, Clone, Copy)]
pub struct KeyCtx {
    /// The focused pane.
    pub focus: Focus,
    /// The dialog on screen does not take keys yet (see `app/guard.rs`): keys go where they
    /// would go without it.
    pub held: bool,
}

/// What an overlay needs to draw, besides its own state.
#[derive(Debug, Clone, Copy)]
pub struct DrawCtx<'a> {
    /// Colours.
    pub theme: &'a Theme,
    /// Whether the dialog on screen takes keys yet, and if not, why.
    pub gate: Gate,
    /// The live tool stack in tree order, with nesting levels.
    pub stack: &'a [(usize, &'a StackFrame)],
}

/// A dialog or view over the panes. State in, render out: what it asks for leaves as
/// [`Effect`]s, which the app carries out.
pub trait Overlay: Any + Debug {
    /// Where it shows.
    fn place(&self) -> Place;

    /// Among overlays of one place, a higher priority shows first whatever the order they
    /// came in.
    fn priority(&self) -> u8 {
        0
    }

    /// Whether it takes `key` before the focus keys and the panes: a modal overlay, or a
    /// dialog being typed into.
    fn captures(&self, _key: &KeyEvent, _ctx: &KeyCtx) -> bool {
        false
    }

    /// Handles a key (see the module docs for when it is offered one).
    fn on_key(&mut self, key: KeyEvent, ctx: &KeyCtx) -> Handled;

    /// Handles pasted text; not consumed, it goes to the composer.
    fn on_paste(&mut self, _text: &str, _ctx: &KeyCtx) -> Handled {
        Handled::NotConsumed
    }

    /// Key hints while its place has the focus; `None` leaves the pane's.
    fn hints(&self) -> Option<Hints> {
        None
    }

    /// Rows it wants at `width` when it shares its place (docked in the chat); overlays that
    /// take their whole place want none.
    fn height(&self, _width: u16, _ctx: &DrawCtx) -> u16 {
        0
    }

    /// Draws it into `area` (the dock's rows, a pane's inside, or the screen).
    fn render(&mut self, area: Rect, buf: &mut Buffer, ctx: &DrawCtx);

    /// Who it is to the dialog gate (`app/guard.rs`): a dialog that asks for an answer the
    /// user did not expect is judged afresh each time this changes. `None`: never gated.
    fn guard_id(&self) -> Option<String> {
        None
    }

    /// Whether it takes typed text (a parameter): the gate then opens only when the user
    /// moves to it.
    fn takes_text(&self) -> bool {
        false
    }

    /// What a notification says while it waits for the user (`notify.rs`), for a gated
    /// dialog; plain words, the notifier makes them inert.
    fn waiting_for(&self) -> Option<String> {
        None
    }

    /// What the composer says while it takes the keys (the composer then shows no cursor).
    fn composer_note(&self) -> Option<&'static str> {
        None
    }

    /// Whether it belongs to the running request, and closes when that ends.
    fn run_bound(&self) -> bool {
        false
    }

    /// The user typed past it: it drops a half-given answer (a picked letter).
    fn step_back(&mut self) {}

    /// Whether it is done (closed, or nothing left to ask): the stack drops it.
    fn finished(&self) -> bool;
}

/// A dialog that waits for the user takes no answer: only scrolling it works (an arrow
/// answers neither dialog), and Esc does nothing (it would deny or abandon, and without the
/// dialog cancel the run: neither was meant by someone typing). The rest goes on as if it
/// were not there.
fn held_key(key: KeyEvent, ctx: &KeyCtx, scroll: impl FnOnce(KeyEvent)) -> Handled {
    let plain = !key
        .modifiers
        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
    match key.code {
        KeyCode::Up | KeyCode::Down if plain && ctx.focus == Focus::Chat => {
            scroll(key);
            Handled::Consumed
        }
        KeyCode::Esc => Handled::Consumed,
        _ => Handled::NotConsumed,
    }
}

/// The open overlays, bottom first. The app owns it; "is a dialog open" is asked of it.
#[derive(Debug, Default)]
pub struct OverlayStack {
    items: Vec<Box<dyn Overlay>>,
}

/// Stacking key: place first, then priority.
fn rank(overlay: &dyn Overlay) -> (u8, u8) {
    (overlay.place().rank(), overlay.priority())
}

impl OverlayStack {
    /// An empty stack.
    pub fn new() -> Self {
        Self::default()
    }

    /// Opens `overlay` above every overlay of its rank or lower.
    pub fn push(&mut self, overlay: Box<dyn Overlay>) {
        let key = rank(overlay.as_ref());
        let at = (self.items.iter())
            .position(|o| rank(o.as_ref()) > key)
            .unwrap_or(self.items.len());
        self.items.insert(at, overlay);
    }

    /// The topmost open overlay of type `T`.
    pub fn get<T: Overlay>(&self) -> Option<&T> {
        (self.items.iter().rev()).find_map(|o| (o.as_ref() as &dyn Any).downcast_ref())
    }

    /// The topmost open overlay of type `T`, to change.
    pub fn get_mut<T: Overlay>(&mut self) -> Option<&mut T> {
        (self.items.iter_mut().rev()).find_map(|o| (o.as_mut() as &mut dyn Any).downcast_mut())
    }

    /// Changes the open `T` with `change`, or opens one made by `make` and changed.
    pub fn upsert<T: Overlay>(&mut self, make: impl FnOnce() -> T, change: impl FnOnce(&mut T)) {
        if let Some(open) = self.get_mut::<T>() {
            change(open);
            return;
        }
        let mut new = make();
        change(&mut new);
        self.push(Box::new(new));
    }

    /// Changes the open `T`, if any, and drops it when that finished it.
    pub fn update<T: Overlay>(&mut self, change: impl FnOnce(&mut T)) {
        if let Some(open) = self.get_mut::<T>() {
            change(open);
        }
        self.prune();
    }

    /// Closes every open `T`.
    pub fn remove<T: Overlay>(&mut self) {
        self.items.retain(|o| !(o.as_ref() as &dyn Any).is::<T>());
    }

    /// Drops finished overlays.
    pub fn prune(&mut self) {
        self.items.retain(|o| !o.finished());
    }

    /// Closes what belongs to the request that just ended.
    pub fn end_run(&mut self) {
        self.items.retain(|o| !o.run_bound());
    }

    /// Closes every overlay in `place`.
    pub fn close(&mut self, place: Place) {
        self.items.retain(|o| o.place() != place);
    }

    /// Whether an overlay is open in `place`.
    pub fn is_open(&self, place: Place) -> bool {
        self.items.iter().any(|o| o.place() == place)
    }

    /// Indexes of the shown overlays (each place's top one), top first.
    fn shown(&self) -> Vec<usize> {
        let mut places: Vec<Place> = Vec::new();
        let mut shown = Vec::new();
        for (i, o) in self.items.iter().enumerate().rev() {
            let place = o.place();
            if !places.contains(&place) {
                places.push(place);
                shown.push(i);
            }
        }
        shown
    }

    /// The overlay shown in `place`.
    pub fn top(&mut self, place: Place) -> Option<&mut (dyn Overlay + 'static)> {
        let overlay = self.items.iter_mut().rev().find(|o| o.place() == place)?;
        Some(overlay.as_mut())
    }

    /// Layer 1: offers `key` to the shown overlays that capture it, top first.
    pub fn capture(&mut self, key: KeyEvent, ctx: &KeyCtx) -> Handled {
        self.walk(|o| o.captures(&key, ctx), |o| o.on_key(key, ctx))
    }

    /// Layer 4: offers `key` to the shown overlays outside the panes, top first.
    pub fn offer(&mut self, key: KeyEvent, ctx: &KeyCtx) -> Handled {
        let outside = |o: &dyn Overlay| !matches!(o.place(), Place::Pane(_));
        self.walk(outside, |o| o.on_key(key, ctx))
    }

    /// Offers pasted text to the shown overlays, top first.
    pub fn paste(&mut self, text: &str, ctx: &KeyCtx) -> Handled {
        self.walk(|_| true, |o| o.on_paste(text, ctx))
    }

    /// Gives the shown overlays that `wants` to `handle`, top first, until one takes it.
    fn walk(
        &mut self,
        wants: impl Fn(&dyn Overlay) -> bool,
        mut handle: impl FnMut(&mut dyn Overlay) -> Handled,
    ) -> Handled {
        for i in self.shown() {
            let Some(overlay) = self.items.get_mut(i) else {
                continue;
            };
            if !wants(overlay.as_ref()) {
                continue;
            }
            let handled = handle(overlay.as_mut());
            if handled.taken() {
                return handled;
            }
        }
        Handled::NotConsumed
    }

    /// Hints of the top shown overlay that has some, where the user looks (`focus`).
    pub fn hints(&self, focus: Focus) -> Option<Hints> {
        (self.shown().into_iter())
            .filter_map(|i| self.items.get(i))
            .filter(|o| o.place().has(focus))
            .find_map(|o| o.hints())
    }

    /// What the composer says, from the top overlay that says.
    pub fn composer_note(&self) -> Option<&'static str> {
        self.items.iter().rev().find_map(|o| o.composer_note())
    }

    /// The gated overlay on screen (the top one that has a guard id), and whether it takes
    /// typed text.
    pub fn guard_id(&self) -> Option<(String, bool)> {
        (self.items.iter().rev()).find_map(|o| o.guard_id().map(|id| (id, o.takes_text())))
    }

    /// The gated overlay on screen, by its gate id, and what a notification says of it.
    pub fn waiting(&self) -> Option<(String, String)> {
        (self.items.iter().rev()).find_map(|o| {
            let id = o.guard_id()?;
            Some((id, o.waiting_for().unwrap_or_default()))
        })
    }

    /// Tells the guarded overlay on screen that the user typed past it.
    pub fn step_back(&mut self) {
        if let Some(overlay) = self.items.iter_mut().rev().find(|o| o.guard_id().is_some()) {
            overlay.step_back();
        }
    }
}
