//! `!command` in the composer: the user's own shell command, run by the orchestrator task
//! in the sandbox (`orchestrator/user_shell.rs`), shown as a shell cell in the chat. Only
//! when nothing runs: a command run during a request would race the model's calls on the
//! workspace, and its output would have no clear next message to go with. Esc (Ctrl-C,
//! `/cancel`) cancels it like a request.

use std::time::Instant;

use super::{App, Command};
use crate::event::{Event, EventData};
use crate::orchestrator::task::Op;

impl App {
    /// `!command` typed and sent.
    pub(super) fn run_bang(&mut self, command: &str, now: Instant) -> Vec<Command> {
        let command = command.trim();
        if self.read_only {
            self.flash("read-only: this is a saved trace, nothing is run", now);
            return Vec::new();
        }
        if command.is_empty() {
            self.flash("type a shell command after ! (it runs in the sandbox)", now);
            return Vec::new();
        }
        if self.busy {
            if self.composer.is_empty() {
                self.composer.set_text(&format!("!{command}"));
            }
            self.flash(
                "! commands run when nothing else does: send it when the running request ends; it is back in the editor",
                now,
            );
            return Vec::new();
        }
        self.chat.scroll_to_bottom();
        self.user_shell = Some(command.to_string());
        self.busy = true;
        self.sync_activity(now);
        vec![Command::Op(Op::UserShell(command.to_string()))]
    }

    /// The end of the `!` command the app waits for: the app is free again (`None`: the
    /// event is not that).
    pub(super) fn bang_ended(&mut self, event: &Event, now: Instant) -> Option<Vec<Command>> {
        let EventData::UserShell(shell) = &event.data else {
            return None;
        };
        if shell.is_running() || self.user_shell.take().is_none() {
            return None;
        }
        Some(self.end_run(now))
    }
}
