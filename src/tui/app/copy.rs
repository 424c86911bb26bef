//! Copying (`y`) and the look: the chat's message selection, what a copy sends to the
//! terminal (OSC 52, redacted, capped), the theme and the clipboard route chosen at startup.

use std::time::Instant;

use ratatui::crossterm::event::KeyEvent;

use super::{App, Command};
use crate::tui::clipboard::{self, Route};
use crate::tui::overlay::{Handled, Place};
use crate::tui::theme::Theme;

impl App {
    /// Draws with `theme` from now on (chosen at startup from `[ui] theme` and the terminal).
    pub fn set_theme(&mut self, theme: Theme) {
        self.theme = theme;
    }

    /// Sends copies by `route` (through tmux or not; decided at startup).
    pub fn set_clipboard(&mut self, route: Route) {
        self.clipboard = route;
    }

    /// Copies `text` to the clipboard: known key values masked (as in every file taco
    /// writes), capped, said in the status line; the loop writes the sequence out.
    pub(super) fn copy(&mut self, text: &str, now: Instant) -> Vec<Command> {
        if text.trim().is_empty() {
            self.flash("nothing to copy", now);
            return Vec::new();
        }
        let text = self.info.secrets.redact(text);
        let copy = clipboard::copy(&text, self.clipboard);
        // Inside tmux a copy gets out only when tmux takes it (set-clipboard on) or passes
        // it through: "copied" alone would be untrue.
        let blocked = (self.clipboard == Route::Tmux)
            .then(|| self.tmux.as_ref()?.copy_blocked().map(String::from))
            .flatten();
        match blocked {
            Some(value) => self.flash(clipboard::tmux_blocked(&value), now),
            None => self.flash(copy.flash(), now),
        }
        vec![Command::Copy(copy.osc)]
    }

    /// A key for the chat pane: a selected message takes `y` (copy), ↑/↓ and Esc. While a
    /// dialog waits in the chat, its keys come first and no message stays selected.
    pub(super) fn chat_key(&mut self, key: KeyEvent) -> Handled {
        if self.overlays.is_open(Place::Dock) {
            self.chat.clear_selection();
            return Handled::NotConsumed;
        }
        self.chat.on_key(key)
    }
}
