//! Calling the user back (issue 27.6): the app says "notify" as a command, from pure state:
//! where the user is (focus reports, tmux's answer) and what waits (the gated dialog on
//! screen, a run that ended). `tui/notify.rs` decides and writes; the loop only writes out.

use super::{App, Command};
use crate::event::EventData;
use crate::tui::notify::{Notifier, RunEnd};
use crate::tui::tmux::PaneState;

impl App {
    /// Calls the user back by `notifier` from now on (`[ui] notify`, the terminal, tmux).
    pub fn set_notifier(&mut self, notifier: Notifier) {
        self.notifier = notifier;
    }

    /// The terminal reported gaining or losing focus.
    pub fn on_focus(&mut self, focused: bool) {
        self.notifier.set_focused(focused);
    }

    /// tmux said something new about taco's pane.
    pub fn on_tmux(&mut self, state: PaneState) {
        self.notifier.set_tmux(state.shown, &state.client_term);
        self.tmux = Some(state);
    }

    /// The notification for the gated dialog on screen, the first time it shows.
    pub(super) fn notice_dialog(&mut self) -> Option<Command> {
        let (id, what) = self.overlays.waiting()?;
        self.notifier.dialog(&id, &what).map(Command::Notify)
    }

    /// The notification for a run that `data` ended.
    pub(super) fn notice_run_end(&mut self, data: &EventData) -> Option<Command> {
        let end = match data {
            EventData::Error { .. } => RunEnd::Failed,
            EventData::Cancelled { .. } => RunEnd::Cancelled,
            _ => RunEnd::Answered,
        };
        self.notifier.run_ended(end).map(Command::Notify)
    }
}
