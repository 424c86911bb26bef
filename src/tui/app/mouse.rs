//! The mouse: the wheel scrolls what is under the pointer (a pane, or the overlay shown over
//! it, or the dialog docked in the chat); a left click focuses the pane under it and selects
//! the timeline row, stack frame or chat message clicked. Rectangles come from the last
//! frame drawn, so the pointer means what the user saw.

use ratatui::crossterm::event::{
    KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use ratatui::layout::{Position, Rect};

use super::App;
use crate::tui::layout::Focus;
use crate::tui::overlay::{KeyCtx, Place};

/// Lines the chat moves per wheel step.
const WHEEL_LINES: usize = 3;

/// Where the chat's parts were drawn in the last frame.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Areas {
    /// The messages.
    pub messages: Rect,
    /// The dialog docked under them (empty without one).
    pub dock: Rect,
}

impl App {
    /// Takes a mouse event (only reported while `[ui] mouse` is on).
    pub fn on_mouse(&mut self, mouse: MouseEvent) {
        let at = Position::new(mouse.column, mouse.row);
        match mouse.kind {
            MouseEventKind::ScrollUp => self.wheel(at, KeyCode::Up),
            MouseEventKind::ScrollDown => self.wheel(at, KeyCode::Down),
            MouseEventKind::Down(MouseButton::Left) => self.click(at),
            _ => {}
        }
        self.overlays.prune();
    }

    /// The pane drawn at `at`, and its rectangle.
    fn pane_at(&self, at: Position) -> Option<(Focus, Rect)> {
        let panes = self.panes?;
        [
            (Focus::Chat, panes.chat),
            (Focus::Stack, panes.stack),
            (Focus::Timeline, panes.timeline),
        ]
        .into_iter()
        .find_map(|(pane, rect)| rect.filter(|r| r.contains(at)).map(|r| (pane, r)))
    }

    /// One wheel step (`code` is the arrow it stands for) over `at`.
    fn wheel(&mut self, at: Position, code: KeyCode) {
        let key = KeyEvent::new(code, KeyModifiers::NONE);
        let ctx = KeyCtx {
            focus: self.focus,
            held: false,
        };
        // An overlay over the whole screen (help) is all that shows.
        if let Some(overlay) = self.overlays.top(Place::Screen) {
            overlay.on_key(key, &ctx);
            return;
        }
        let Some((pane, _)) = self.pane_at(at) else {
            return;
        };
        if pane != Focus::Chat {
            // Whatever shows there scrolls: the list, or the detail view over it.
            self.pane_key(pane, key, &ctx);
            return;
        }
        let docked = self.areas.dock.contains(at);
        let over = if docked {
            Place::Dock
        } else {
            Place::Pane(Focus::Chat)
        };
        if let Some(overlay) = self.overlays.top(over) {
            // A dialog scrolls only as a focused chat would scroll it.
            let ctx = KeyCtx {
                focus: Focus::Chat,
                held: false,
            };
            overlay.on_key(key, &ctx);
        } else if !docked {
            match code {
                KeyCode::Up => self.chat.scroll_up(WHEEL_LINES),
                _ => self.chat.scroll_down(WHEEL_LINES),
            }
        }
    }

    /// A left click at `at`: focus the pane, select what was clicked in it.
    fn click(&mut self, at: Position) {
        // Help over the whole screen waits for its own keys.
        if self.overlays.is_open(Place::Screen) {
            return;
        }
        let Some((pane, rect)) = self.pane_at(at) else {
            return;
        };
        self.focus_on(pane);
        // A click in a pane is using it: its letter keys act (see `focus_on`).
        self.pane_used = true;
        // A click on a dialog that waits for the user moves to it, as Tab does.
        if self.areas.dock.contains(at) {
            self.guard.engage();
        }
        // The pane's inside: its border takes a cell on each side.
        let top = rect.y.saturating_add(1);
        let Some(row) = at.y.checked_sub(top) else {
            return;
        };
        if self.overlays.is_open(Place::Pane(pane)) {
            return;
        }
        match pane {
            Focus::Timeline => {
                self.timeline.select_at(row);
            }
            Focus::Stack => {
                self.stack.select_at(row);
            }
            Focus::Chat => {
                let messages = self.areas.messages;
                let docked = self.overlays.is_open(Place::Dock);
                match at.y.checked_sub(messages.y) {
                    Some(line) if messages.contains(at) && !docked => {
                        self.chat.select_at(line);
                    }
                    _ => self.chat.clear_selection(),
                }
            }
        }
    }
}
