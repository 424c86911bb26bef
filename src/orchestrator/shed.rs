//! A long session's memory (issue 33): between runs, the user's conversation lets go of the
//! messages no request can send any more — those before a compaction's cut, or, with no
//! known window, those older than the history limit's reach (with as many again kept as a
//! margin). The session file keeps every message; the conversation then starts at a user
//! message, as a resumed one does, and what the next request sends does not change.

use super::call::window;
use super::conversation::Conversation;
use crate::conversation::Role;

/// Messages let go at once at the least, so a long session sheds now and then, not each run.
pub const SHED_AT_LEAST: usize = 200;

impl super::Orchestrator {
    /// Lets go of the messages no request can send any more (`shed.rs`); a window not asked
    /// for yet keeps everything (it may make every message sendable).
    pub(super) fn shed(&mut self) {
        let window_known = match (self.settings.context.window, self.asked_window) {
            (Some(_), _) | (None, Some(Some(_))) => true,
            (None, Some(None)) => false,
            (None, None) => return,
        };
        let dropped = self
            .conversation
            .shed(self.settings.history_limit, window_known);
        if dropped > 0 {
            tracing::info!(
                dropped,
                kept = self.conversation.messages.len(),
                "the conversation let go of messages no request sends"
            );
        }
    }
}

impl Conversation {
    /// Lets go of the messages no request will send (with no window known, `history_limit`
    /// says how far back a request reaches); how many went.
    pub(super) fn shed(&mut self, history_limit: usize, window_known: bool) -> usize {
        let len = self.messages.len();
        // Only the user's conversation (called between its runs).
        if self.is_nested() {
            return 0;
        }
        let needed = match (&self.compaction, window_known) {
            (Some(c), _) => c.kept_from,
            (None, false) => window(&self.messages, history_limit, len),
            // Everything is sent until a compaction cuts it.
            (None, true) => return 0,
        };
        let margin = needed.saturating_sub(history_limit).max(1);
        // Kept from a user message: a tool result never loses its call.
        let Some(from) = (1..=margin)
            .rev()
            .find(|&i| self.messages.get(i).is_some_and(|m| m.role == Role::User))
        else {
            return 0;
        };
        let dropped = from - 1;
        // Only what the session file has and an `llm_call` carried goes (the latest answer
        // is carried by the next call).
        if dropped < SHED_AT_LEAST || self.recorded < from || self.reported < from {
            return 0;
        }
        self.messages.drain(1..from);
        self.recorded -= dropped;
        self.reported -= dropped;
        self.run_start = self.run_start.saturating_sub(dropped).max(1);
        if let Some(c) = self.compaction.as_mut() {
            c.kept_from = c.kept_from.saturating_sub(dropped).max(1);
        }
        dropped
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::{Message, ToolCall};

    /// A system prompt and `runs` runs: a request, a tool call and its result, an answer.
    fn conversation(runs: usize) -> Conversation {
        let mut c = Conversation::new("system".into(), Vec::new(), None, 10);
        for n in 0..runs {
            c.messages.push(Message::user(format!("request {n}")));
            let call = ToolCall {
                id: format!("c{n}"),
                name: "read_file".into(),
                arguments: serde_json::json!({}),
            };
            c.messages.push(Message::assistant(None, None, vec![call]));
            c.messages.push(Message::tool(
                format!("c{n}"),
                "read_file",
                format!("result {n}"),
            ));
            c.messages.push(Message::assistant(
                Some(format!("answer {n}")),
                None,
                vec![],
            ));
        }
        c.recorded = c.messages.len();
        // The latest answer is carried by the next call, as in a live session.
        c.reported = c.messages.len() - 1;
        c.run_start = c.messages.len();
        c
    }

    fn sent(c: &Conversation, limit: usize, window: Option<u64>) -> Vec<Message> {
        c.request(limit, window).0.into_owned()
    }

    #[test]
    fn what_a_request_sends_is_the_same_after_shedding() {
        let mut c = conversation(500);
        let before = sent(&c, 50, None);
        let dropped = c.shed(50, false);
        assert!(dropped >= SHED_AT_LEAST, "{dropped}");
        assert!(c.messages.len() <= 1 + 50 * 2 + 4, "{}", c.messages.len());
        assert_eq!(c.messages[0].role, Role::System);
        assert_eq!(c.messages[1].role, Role::User);
        assert_eq!(sent(&c, 50, None), before);
        // Too little to let go: nothing goes.
        assert_eq!(c.shed(50, false), 0);
        // A window known and no compaction: every message is sent, none goes.
        let mut c = conversation(500);
        assert_eq!(c.shed(50, true), 0);
        assert_eq!(c.messages.len(), 2001);
    }

    #[test]
    fn a_compaction_keeps_its_cut_and_what_it_sends() {
        let mut c = conversation(500);
        c.compaction = Some(super::super::context::Compaction {
            kept_from: 1601,
            summary: "what happened".into(),
            requests: Default::default(),
        });
        let before = sent(&c, 50, Some(100_000));
        let dropped = c.shed(50, true);
        assert!(dropped > 1000, "{dropped}");
        assert_eq!(sent(&c, 50, Some(100_000)), before);
        assert_eq!(c.compaction.as_ref().unwrap().kept_from, 1601 - dropped);
    }

    #[test]
    fn unrecorded_messages_or_a_sub_agent_shed_nothing() {
        let mut c = conversation(500);
        c.recorded = 10;
        assert_eq!(c.shed(50, false), 0, "messages the session file lacks");
        let mut c = conversation(500);
        c.parent = Some("delegate-1".into());
        assert_eq!(c.shed(50, false), 0);
    }
}
