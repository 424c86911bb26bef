//! `/agent [NAME]`: which loop this screen drives, taco's own or an external ACP agent of the
//! config's `[agents]` (issue 32). Switching leaves this screen's session (its file stays, as
//! after `/resume`) and opens the other loop in place, on a new session.

use std::time::Instant;

use super::{App, Command};
use crate::tui::views::chat::NoticeKind;

/// The name `/agent` gives taco's own loop.
pub const TACO: &str = "taco";

impl App {
    pub(super) fn agent_command(&mut self, name: &str, now: Instant) -> Vec<Command> {
        if self.read_only {
            self.flash("read-only: this is a saved trace, nothing is sent", now);
            return Vec::new();
        }
        let name = name.trim();
        if name.is_empty() {
            let text = self.agents_listed();
            self.chat.push_notice(NoticeKind::Info, text);
            return Vec::new();
        }
        let target = if name == TACO {
            None
        } else if self.info.agents.iter().any(|a| a == name) {
            Some(name.to_string())
        } else {
            let text = format!("No agent `{name}`: /agent lists the loops there are.");
            self.chat.push_notice(NoticeKind::Warn, text);
            return Vec::new();
        };
        if target == self.info.driving {
            self.chat.push_notice(
                NoticeKind::Info,
                format!("`{name}` drives this screen already."),
            );
            return Vec::new();
        }
        if self.busy {
            self.chat.push_notice(
                NoticeKind::Warn,
                "A request is running: cancel it (Esc) or let it end, then switch.",
            );
            return Vec::new();
        }
        vec![Command::Agent(target)]
    }

    /// The loops there are, the one driving marked.
    fn agents_listed(&self) -> String {
        let mark = |driving: bool| if driving { " (this screen)" } else { "" };
        let mut lines = vec![format!(
            "- `{TACO}`: taco's own loop{}",
            mark(self.info.driving.is_none())
        )];
        for agent in &self.info.agents {
            lines.push(format!(
                "- `{agent}`: external agent over ACP{}",
                mark(self.info.driving.as_deref() == Some(agent.as_str()))
            ));
        }
        let hint = if self.info.agents.is_empty() {
            "\n\nThe config defines no `[agents.NAME]` (README: Driving other agents)."
        } else {
            ""
        };
        format!(
            "Loops: `/agent NAME` switches (a new session).\n\n{}{hint}",
            lines.join("\n")
        )
    }
}
