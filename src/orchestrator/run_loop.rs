//! The loop of one conversation (the user's or a sub-agent's): model call, tool batch,
//! again, until an answer, a failure, a cancel or the turn limit (DESIGN §4 rule 3).

use futures_util::FutureExt;
use futures_util::future::BoxFuture;

use super::call::CallError;
use super::conversation::Conversation;
use super::scope::Run;
use super::{LoopEnd, MAX_TURNS_PROMPT};
use crate::conversation::Message;
use crate::event::EventData;
use crate::provider::ProviderError;

impl Run<'_> {
    /// The loop of one conversation (the user's or a sub-agent's). Nested conversations
    /// stream no deltas and report no limits of their own: their result is the tool's.
    pub(super) fn run_loop<'a>(&'a mut self, conv: &'a mut Conversation) -> BoxFuture<'a, LoopEnd> {
        async move {
            let mut turn_no = 0;
            loop {
                if turn_no == conv.max_turns {
                    return self.final_without_tools(conv, turn_no).await;
                }
                turn_no += 1;
                if !conv.is_nested() {
                    // A server's tool list may change mid-run (list_changed): each turn
                    // offers what is there now. A sub-agent keeps the set it was given.
                    conv.specs = self.orch.registry.specs();
                }
                let turn = match self.call_model(conv, turn_no, true).await {
                    Ok(turn) => turn,
                    Err(CallError::Cancelled(partial)) => {
                        conv.keep_partial(partial);
                        return LoopEnd::Cancelled {
                            running: "the model's reply",
                        };
                    }
                    Err(CallError::Provider(error, partial)) => {
                        conv.keep_partial(partial);
                        return LoopEnd::Failed {
                            kind: error.kind(),
                            message: self.describe(&error),
                        };
                    }
                    Err(CallError::Budget(stop)) => return self.budget_end(conv, &stop),
                };
                if turn.tool_calls.is_empty() {
                    let content = turn.content.clone();
                    conv.push_assistant(turn);
                    // A stop hook may send the model back to work, a few times at most.
                    if !conv.is_nested()
                        && turn_no < conv.max_turns
                        && let Some(reason) = self.stop_hooks(&content).await
                    {
                        conv.messages.push(Message::user(format!(
                            "A stop hook of the user's did not let the run end yet: {reason}"
                        )));
                        continue;
                    }
                    if !conv.is_nested()
                        && turn_no < conv.max_turns
                        && let Some(message) = self.review_plan().await
                    {
                        conv.messages.push(Message::user(message));
                        continue;
                    }
                    return LoopEnd::Answer {
                        content,
                        turns: turn_no,
                        error: None,
                    };
                }
                if !turn.content.is_empty() && !conv.is_nested() {
                    self.gathered.push(turn.content.clone());
                }
                let calls = turn.tool_calls.clone();
                conv.push_assistant(turn);
                if !self.run_batch(conv, turn_no, &calls).await {
                    return LoopEnd::Cancelled {
                        running: "tool calls",
                    };
                }
                if self.take_switch(conv) {
                    return LoopEnd::Failed {
                        kind: "abandoned",
                        message: "the user turned to a new request".to_string(),
                    };
                }
            }
        }
        .boxed()
    }

    /// Rule 3: the limit is reached with tool calls still coming; ask for an answer without tools.
    async fn final_without_tools(&mut self, conv: &mut Conversation, turns: u32) -> LoopEnd {
        if !conv.is_nested() {
            self.emit(EventData::MaxTurnsReached { turns });
        }
        conv.messages.push(Message::system(MAX_TURNS_PROMPT));
        if !conv.is_nested() {
            self.emit(EventData::MaxTurnsPromptInjected { turns });
        }
        match self.call_model(conv, turns + 1, false).await {
            Ok(turn) => {
                let content = turn.content.clone();
                conv.push_assistant(turn);
                LoopEnd::Answer {
                    content,
                    turns,
                    error: None,
                }
            }
            Err(CallError::Cancelled(partial)) => {
                conv.keep_partial(partial);
                LoopEnd::Cancelled {
                    running: "the final answer",
                }
            }
            Err(CallError::Budget(stop)) => self.budget_end(conv, &stop),
            Err(CallError::Provider(error, _partial)) => {
                let message = self.describe(&error);
                let content = if conv.is_nested() {
                    String::new()
                } else {
                    self.gathered.join("\n\n")
                };
                LoopEnd::Answer {
                    content,
                    turns,
                    error: Some((error.kind(), message)),
                }
            }
        }
    }

    /// The cost budget stopped a call: a sub-agent fails (its parent's next call stops
    /// too), the user's conversation ends with what the model said so far.
    fn budget_end(&self, conv: &Conversation, stop: &super::budget::Stop) -> LoopEnd {
        let message = stop.message();
        if conv.is_nested() {
            return LoopEnd::Failed {
                kind: "budget",
                message,
            };
        }
        LoopEnd::OverBudget {
            content: self.gathered.join("\n\n"),
            message,
        }
    }

    /// The error for the user and the trace; a server that echoes a key back (in an error
    /// body or a mid-stream error event) does not get it into either.
    pub(super) fn describe(&self, error: &ProviderError) -> String {
        let provider = &self.orch.provider;
        let text = format!("{} ({}): {error}", provider.name(), provider.model());
        self.orch.settings.tools.secrets.redact(&text).into_owned()
    }
}
