//! `/tools` and `/revoke`: the grants in force as the run model tells them, and taking one
//! back. The orchestrator owns the grants; the app sends `Op::Revoke` and shows what the
//! `approval_revoked` event says.

use std::time::Instant;

use super::{App, Command};
use crate::event::{Event, Grant};
use crate::orchestrator::task::Op;
use crate::tui::views::chat::NoticeKind;
use crate::tui::views::grants::ToolsView;

impl App {
    /// `/tools`: the grants, the configured rules and the tools, in a view over the screen.
    pub(super) fn open_tools(&mut self, now: Instant) {
        let tools = (self.tool_infos().into_iter())
            .map(|tool| (tool.name, tool.policy))
            .collect();
        let view = ToolsView::new(
            self.run.grants().all(),
            self.wall_ms(now),
            self.info.rules.clone(),
            tools,
        );
        self.overlays.remove::<ToolsView>();
        self.overlays.push(Box::new(view));
    }

    /// `/revoke NAME`, `/revoke all`: the grant (or every one) is taken back; a name that
    /// matches none says what can be revoked.
    pub(super) fn revoke_command(&mut self, what: &str, now: Instant) -> Vec<Command> {
        let grants = self.run.grants();
        let chosen: Vec<Grant> = if what.trim() == "all" {
            grants.all().into_iter().map(|(g, _)| g).collect()
        } else {
            grants.find(what).into_iter().collect()
        };
        if chosen.is_empty() {
            let text = self.nothing_to_revoke(what);
            self.chat.push_notice(NoticeKind::Warn, text);
            return Vec::new();
        }
        chosen
            .into_iter()
            .flat_map(|grant| self.revoke(grant, now))
            .collect()
    }

    /// Sends the revocation of `grant`; while a request runs it applies before its next call.
    pub(super) fn revoke(&mut self, grant: Grant, now: Instant) -> Vec<Command> {
        if self.busy {
            self.flash(
                format!("revoking {}: asked again from the next call", grant.name()),
                now,
            );
        }
        vec![Command::Op(Op::Revoke(grant))]
    }

    /// What `/revoke` says when `what` names no grant: what can be revoked, if anything.
    fn nothing_to_revoke(&self, what: &str) -> String {
        let granted: Vec<String> = (self.run.grants().all().into_iter())
            .map(|(g, _)| format!("'{}'", g.name()))
            .collect();
        if granted.is_empty() {
            return "Nothing to revoke: no grants were given this session.".to_string();
        }
        let asked = if what.trim().is_empty() {
            "Revoke which grant?".to_string()
        } else {
            format!("No grant named '{}'.", what.trim())
        };
        format!(
            "{asked} Granted: {}. '/revoke NAME' takes one back, '/revoke all' every one.",
            granted.join(", ")
        )
    }

    /// Keeps the `/tools` view, when open, in step with the grants the events report.
    pub(super) fn refresh_tools(&mut self, event: &Event, now: Instant) {
        if event.timestamp > 0 {
            self.wall = Some((event.timestamp, now));
        }
        if self.overlays.get::<ToolsView>().is_none() {
            return;
        }
        let grants = self.run.grants().all();
        let now_ms = self.wall_ms(now);
        self.overlays
            .update(|view: &mut ToolsView| view.refresh(grants, now_ms));
    }

    /// Unix ms now, as the events' clock tells it (the latest event's time plus what passed
    /// since it arrived): time stays injected.
    pub(super) fn wall_ms(&self, now: Instant) -> u64 {
        self.wall.map_or(0, |(ms, at)| {
            let since = now.saturating_duration_since(at).as_millis();
            ms.saturating_add(u64::try_from(since).unwrap_or(u64::MAX))
        })
    }
}
