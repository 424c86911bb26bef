//! One model call: streamed, retried with backoff when the provider fails in a way that may
//! pass (DESIGN §4 rule 8), reported as an `llm_call` event.

use std::time::Instant;

use futures_util::StreamExt;
use tokio_util::sync::CancellationToken;

use super::turn::{Turn, TurnAssembler};
use super::{Conversation, Orchestrator, Run};
use crate::conversation::{Message, ToolSpec};
use crate::event::{DeltaKind, EventData, LlmCall};
use crate::provider::{ChatRequest, Chunk, ProviderError};

/// Why a model call did not produce a turn.
pub(super) enum CallError {
    Provider(ProviderError, Turn),
    Cancelled(Turn),
}

impl Orchestrator {
    /// Calls the model until it answers, the error is final, or the user cancels. A `retry`
    /// event precedes each new attempt; it also tells the UI to drop text streamed by the
    /// failed attempt, which the conversation never keeps (each attempt starts afresh).
    pub(super) async fn call_model(
        &mut self,
        conv: &mut Conversation,
        run: &mut Run<'_>,
        turn_no: u32,
        with_tools: bool,
        cancel: &CancellationToken,
    ) -> Result<Turn, CallError> {
        if conv.is_nested() {
            // spec/004: while the stack is not empty the system prompt carries the context.
            let prompt = match self.stack.context(&run.original) {
                Some(context) => format!("{}\n\n{context}", conv.base_prompt),
                None => conv.base_prompt.clone(),
            };
            if conv.messages.first().and_then(|m| m.content.as_deref()) != Some(prompt.as_str()) {
                conv.messages[0] = Message::system(prompt);
            }
        }
        let policy = self.settings.retry;
        let mut attempt = 1;
        let (turn, started, ttft) = loop {
            match self.stream_once(conv, run, with_tools, cancel).await {
                Ok(done) => break done,
                Err(CallError::Provider(error, partial)) => {
                    let Some(wait) = policy.wait(attempt, &error) else {
                        return Err(CallError::Provider(error, partial));
                    };
                    attempt += 1;
                    run.emit(EventData::Retry {
                        attempt,
                        max: policy.max_attempts,
                        reason: error.to_string(),
                        delay_ms: wait.as_millis() as u64,
                    });
                    tokio::select! {
                        biased;
                        _ = cancel.cancelled() => return Err(CallError::Cancelled(Turn::default())),
                        _ = tokio::time::sleep(wait) => {}
                    }
                }
                Err(cancelled) => return Err(cancelled),
            }
        };
        let tools: &[ToolSpec] = if with_tools { &conv.specs } else { &[] };
        run.usage.add(turn.usage);
        run.emit(EventData::LlmCall(Box::new(LlmCall {
            turn: turn_no,
            model: self.provider.model().to_string(),
            duration_ms: started.elapsed().as_millis() as u64,
            ttft_ms: ttft,
            finish_reason: turn.finish_reason.clone(),
            content: turn.content.clone(),
            reasoning_content: (!turn.reasoning.is_empty()).then(|| turn.reasoning.clone()),
            tool_calls: turn.tool_calls.clone(),
            usage: turn.usage,
            timings: turn.timings,
            message_count: conv.messages.len(),
            new_messages: conv.messages[conv.reported.min(conv.messages.len())..].to_vec(),
            tools: tools.iter().map(|t| t.name.clone()).collect(),
            parent: conv.parent.clone(),
        })));
        conv.reported = conv.messages.len();
        Ok(turn)
    }

    /// One streamed attempt: forwards deltas and assembles the turn.
    async fn stream_once(
        &mut self,
        conv: &Conversation,
        run: &mut Run<'_>,
        with_tools: bool,
        cancel: &CancellationToken,
    ) -> Result<(Turn, Instant, Option<u64>), CallError> {
        let started = Instant::now();
        let tools: &[ToolSpec] = if with_tools { &conv.specs } else { &[] };
        let request = ChatRequest {
            messages: &conv.messages,
            tools,
        };
        // Only the user's conversation streams into the chat; a sub-agent shows in the stack
        // and the timeline.
        let live = !conv.is_nested();
        let mut assembler = TurnAssembler::new();
        let mut ttft = None;
        let opened = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(CallError::Cancelled(assembler.finish())),
            opened = self.provider.stream(request) => opened,
        };
        let mut stream = match opened {
            Ok(stream) => stream,
            Err(error) => return Err(CallError::Provider(error, assembler.finish())),
        };
        loop {
            let next = tokio::select! {
                biased;
                _ = cancel.cancelled() => return Err(CallError::Cancelled(assembler.finish())),
                next = stream.next() => next,
            };
            let chunk = match next {
                None => break,
                Some(Ok(chunk)) => chunk,
                Some(Err(error)) => return Err(CallError::Provider(error, assembler.finish())),
            };
            ttft.get_or_insert_with(|| started.elapsed().as_millis() as u64);
            match chunk {
                Chunk::Text(text) => {
                    assembler.push_text(&text);
                    if live {
                        run.emit(EventData::Delta {
                            kind: DeltaKind::Text,
                            text,
                        });
                    }
                }
                Chunk::Reasoning(text) => {
                    assembler.push_reasoning(&text);
                    if live {
                        run.emit(EventData::Delta {
                            kind: DeltaKind::Reasoning,
                            text,
                        });
                    }
                }
                other => assembler.push(other),
            }
        }
        Ok((assembler.finish(), started, ttft))
    }
}
