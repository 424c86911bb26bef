//! One conversation with the model (the user's, or a sub-agent's): its messages, what was
//! already reported and recorded, its tools and limits.

use std::borrow::Cow;
use std::collections::HashSet;

use super::EventSink;
use super::context::{Compaction, Measured, sent};
use super::turn::Turn;
use crate::conversation::{Message, ToolSpec};
use crate::event::Purpose;

/// One conversation with the model: the user's, or a `delegate` sub-agent's.
#[derive(Debug, Default)]
pub(super) struct Conversation {
    pub(super) messages: Vec<Message>,
    /// Messages already carried by an `llm_call` event (see `LlmCall::new_messages`).
    pub(super) reported: usize,
    /// Messages already handed to the sink's `message` (the user's conversation only).
    pub(super) recorded: usize,
    /// The system prompt without the tool context.
    pub(super) base_prompt: String,
    /// The tools offered in this conversation.
    pub(super) specs: Vec<ToolSpec>,
    /// The frame it runs under (`None` for the user's conversation).
    pub(super) parent: Option<String>,
    /// What its model calls are for: the user's turns, a sub-agent's, a one-call check.
    pub(super) purpose: Purpose,
    /// Its turn limit.
    pub(super) max_turns: u32,
    /// Tools whose usage instructions the model has been given.
    pub(super) instructed: HashSet<String>,
    /// Index of the user message that started the current run: it and everything after it
    /// are always sent, whatever the history limit.
    pub(super) run_start: usize,
    /// The summary standing for the older messages, once compacted.
    pub(super) compaction: Option<Compaction>,
    /// What the provider counted for the latest request (cleared by a compaction).
    pub(super) measured: Option<Measured>,
}

impl Conversation {
    pub(super) fn new(
        system_prompt: String,
        specs: Vec<ToolSpec>,
        parent: Option<String>,
        max_turns: u32,
    ) -> Self {
        Self {
            messages: vec![Message::system(system_prompt.clone())],
            reported: 0,
            recorded: 0,
            base_prompt: system_prompt,
            specs,
            purpose: Purpose::by_parent(parent.as_deref()),
            parent,
            max_turns: max_turns.max(1),
            instructed: HashSet::new(),
            // A sub-agent's task is its first message after the system prompt.
            run_start: 1,
            compaction: None,
            measured: None,
        }
    }

    /// The messages the next request sends, and how many of the conversation's are left
    /// out. Compacted: the system prompt, the recap (the user's earlier requests and the
    /// summary, as user-role data), the run's own request and the tail. With no known window,
    /// the history limit trims older turns instead (DESIGN §8).
    pub(super) fn request(
        &self,
        history_limit: usize,
        window: Option<u64>,
    ) -> (Cow<'_, [Message]>, usize) {
        let from = match (&self.compaction, window) {
            (Some(c), _) => c.kept_from,
            (None, None) => super::call::window(&self.messages, history_limit, self.run_start),
            (None, Some(_)) => 1,
        };
        (
            sent(
                &self.messages,
                self.compaction.as_ref(),
                from,
                self.run_start,
            ),
            from.saturating_sub(1),
        )
    }

    pub(super) fn is_nested(&self) -> bool {
        self.parent.is_some()
    }

    /// Hands the messages appended since the last call to the sink (session files keep the
    /// user's conversation; a sub-agent's lives only in its events).
    pub(super) fn record(&mut self, sink: &mut dyn EventSink) {
        if self.is_nested() {
            return;
        }
        for message in &self.messages[self.recorded.min(self.messages.len())..] {
            sink.message(message);
        }
        self.recorded = self.messages.len();
    }

    pub(super) fn push_assistant(&mut self, turn: Turn) {
        let content =
            (!turn.content.is_empty() || turn.tool_calls.is_empty()).then_some(turn.content);
        let reasoning = (!turn.reasoning.is_empty()).then_some(turn.reasoning);
        let mut message = Message::assistant(content, reasoning, turn.tool_calls);
        message.reasoning_signature = turn.reasoning_signature;
        self.messages.push(message);
    }

    /// Keeps what was streamed before a cancel or a failure so the conversation shows it.
    pub(super) fn keep_partial(&mut self, partial: Turn) {
        if !partial.content.is_empty() {
            self.messages
                .push(Message::assistant(Some(partial.content), None, Vec::new()));
        }
    }
}
