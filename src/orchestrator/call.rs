//! One model call: streamed, retried with backoff when the provider fails in a way that may
//! pass (DESIGN §4 rule 8), reported as an `llm_call` event.

use std::time::Instant;

use super::context::Measured;
use super::conversation::Conversation;
use super::limits;
use super::scope::Run;
use super::turn::{Turn, TurnAssembler};
use crate::conversation::{Message, Role, ToolSpec};
use crate::event::{
    CompactTrigger, DeltaKind, EventData, LlmCall, LlmEnd, LlmFailed, LlmProgress, LlmStarted,
    Purpose,
};
use crate::provider::{ChatRequest, Chunk, ProviderError};
use futures_util::StreamExt;

/// How much later than the provider's idle timeout a stream without progress is stopped.
const IDLE_GRACE: std::time::Duration = std::time::Duration::from_millis(500);
/// How often a streaming call says how far it got (`llm_progress`), after its first byte.
const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_millis(250);

/// What a model call is for and where it runs: its `llm_started` event says so.
pub(super) struct CallFor {
    pub(super) purpose: Purpose,
    /// The frame it runs under.
    pub(super) parent: Option<String>,
    /// Its conversation's turn.
    pub(super) turn: u32,
}

/// A model call that answered.
pub(super) struct Streamed {
    pub(super) turn: Turn,
    /// When its successful attempt began.
    pub(super) started: Instant,
    /// That attempt's time to its first byte.
    pub(super) ttft: Option<u64>,
    /// Its number in the run (`llm_started.call`).
    pub(super) call: u32,
}

/// Why a model call did not produce a turn.
pub(super) enum CallError {
    Provider(ProviderError, Turn),
    Cancelled(Turn),
    /// The cost budget: the call was not sent.
    Budget(super::budget::Stop),
}

impl Run<'_> {
    /// Calls the model until it answers, the error is final, or the user cancels. A `retry`
    /// event precedes each new attempt; it also tells the UI to drop text streamed by the
    /// failed attempt, which the conversation never keeps (each attempt starts afresh).
    pub(super) async fn call_model(
        &mut self,
        conv: &mut Conversation,
        turn_no: u32,
        with_tools: bool,
    ) -> Result<Turn, CallError> {
        if conv.is_nested() {
            // spec/004: while the stack is not empty the system prompt carries the context.
            let prompt = match self.orch.stack.context(&self.original) {
                Some(context) => format!("{}\n\n{context}", conv.base_prompt),
                None => conv.base_prompt.clone(),
            };
            if conv.messages.first().and_then(|m| m.content.as_deref()) != Some(prompt.as_str()) {
                conv.messages[0] = Message::system(prompt);
            }
        }
        conv.record(self.sink);
        self.model_calls += 1;
        let max_calls = self.orch.settings.limits.max_model_calls;
        if self.model_calls > max_calls {
            return Err(CallError::Provider(
                limits::out_of_calls(max_calls),
                Turn::default(),
            ));
        }
        let window = self.window().await;
        if let Some(window) = window {
            self.compact_if_over(conv, with_tools, window).await?;
        }
        let live = !conv.is_nested();
        // Told "too long" by the provider: compact once and try again, then give up.
        let mut overflowed = false;
        let mut omitted;
        let about = CallFor {
            purpose: conv.purpose,
            parent: conv.parent.clone(),
            turn: turn_no,
        };
        let Streamed {
            turn,
            started,
            ttft,
            call,
        } = loop {
            let (sent, left_out) = conv.request(self.orch.settings.history_limit, window);
            // Images of earlier requests, made to a model that took them, become notes.
            let sent = crate::images::for_model(sent, self.orch.provider.accepts_images());
            omitted = left_out;
            let tools: &[ToolSpec] = if with_tools { &conv.specs } else { &[] };
            match self.with_retries(&sent, tools, live, &about).await {
                Ok(done) => break done,
                Err(CallError::Provider(ProviderError::ContextExceeded(said), partial)) => {
                    if !overflowed {
                        overflowed = true;
                        if self.compact(conv, CompactTrigger::Overflow, window).await? {
                            continue;
                        }
                    }
                    let error = limits::does_not_fit(&said, window);
                    return Err(CallError::Provider(error, partial));
                }
                Err(other) => return Err(other),
            }
        };
        conv.measured = (turn.usage.input_tokens > 0).then_some(Measured {
            tokens: turn.usage.input_tokens,
            at: conv.messages.len(),
        });
        let tools: &[ToolSpec] = if with_tools { &conv.specs } else { &[] };
        self.usage.add(turn.usage);
        self.emit(EventData::LlmCall(Box::new(LlmCall {
            turn: turn_no,
            model: self.orch.provider.model().to_string(),
            duration_ms: (self.clock.now() - started).as_millis() as u64,
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
            omitted,
            context_window: window,
            call: Some(call),
            purpose: Some(conv.purpose),
        })));
        conv.reported = conv.messages.len();
        Ok(turn)
    }

    /// One model call, `about` what it is for: an `llm_started` event, its attempts, and an
    /// `llm_failed` event when it ends without an answer (the caller reports an answer).
    pub(super) async fn with_retries(
        &mut self,
        messages: &[Message],
        tools: &[ToolSpec],
        live: bool,
        about: &CallFor,
    ) -> Result<Streamed, CallError> {
        // Before anything is said of the call: a call the budget refuses was never made.
        self.within_budget(messages, tools, about.purpose, about.parent.as_ref())
            .map_err(CallError::Budget)?;
        self.llm_calls += 1;
        let call = self.llm_calls;
        self.emit(EventData::LlmStarted(LlmStarted {
            call,
            purpose: about.purpose,
            parent: about.parent.clone(),
            model: self.orch.provider.model().to_string(),
            turn: about.turn,
        }));
        match self.attempts(messages, tools, live, call).await {
            Ok((turn, started, ttft)) => {
                self.spend(turn.usage);
                Ok(Streamed {
                    turn,
                    started,
                    ttft,
                    call,
                })
            }
            Err(failed) => {
                let (end, error) = match &failed {
                    CallError::Provider(error, _) => {
                        let said = error.to_string();
                        let said = self.orch.settings.tools.secrets.redact(&said).into_owned();
                        (LlmEnd::Failed, Some(said))
                    }
                    CallError::Cancelled(_) => (LlmEnd::Cancelled, None),
                    // Not from the attempts: the budget is checked before them.
                    CallError::Budget(_) => (LlmEnd::Failed, None),
                };
                self.emit(EventData::LlmFailed(LlmFailed { call, end, error }));
                Err(failed)
            }
        }
    }

    /// Streams `messages` until an attempt succeeds, the error is final, or the user cancels.
    /// A `retry` event precedes each new attempt; it also tells the UI to drop text streamed
    /// by the failed attempt, which the conversation never keeps (each attempt starts afresh).
    async fn attempts(
        &mut self,
        messages: &[Message],
        tools: &[ToolSpec],
        live: bool,
        call: u32,
    ) -> Result<(Turn, Instant, Option<u64>), CallError> {
        let cancel = self.cancel.clone();
        let policy = self.orch.settings.retry;
        let mut attempt = 1;
        loop {
            match self.stream_once(messages, tools, live, call).await {
                Ok(done) => return Ok(done),
                Err(CallError::Provider(error, partial)) => {
                    let Some(wait) = policy.wait(attempt, &error) else {
                        return Err(CallError::Provider(error, partial));
                    };
                    attempt += 1;
                    self.emit(EventData::Retry {
                        attempt,
                        max: policy.max_attempts,
                        reason: self
                            .orch
                            .settings
                            .tools
                            .secrets
                            .redact(&error.to_string())
                            .into_owned(),
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
        }
    }

    /// One streamed attempt of model call `call`: forwards deltas (when `live`: the user's
    /// conversation streams into the chat; a sub-agent or a summary shows in the stack and
    /// the timeline), says how far it got (`llm_progress`, every call) and assembles the turn.
    async fn stream_once(
        &mut self,
        messages: &[Message],
        tools: &[ToolSpec],
        live: bool,
        call: u32,
    ) -> Result<(Turn, Instant, Option<u64>), CallError> {
        let cancel = self.cancel.clone();
        let started = self.clock.now();
        let request = ChatRequest {
            messages,
            tools,
            max_tokens: self.answer_cap.and_then(|cap| cap.tokens()),
        };
        let mut assembler = TurnAssembler::new();
        let mut ttft = None;
        let mut streamed = LlmProgress {
            call,
            ttft_ms: 0,
            text_bytes: 0,
            reasoning_bytes: 0,
            tool_bytes: 0,
        };
        let mut told: Option<tokio::time::Instant> = None;
        let limits = self.orch.settings.limits;
        // A tool that asked for an answer may take less than any reply.
        let max_reply = (self.answer_cap).map_or(limits.max_reply_bytes, |cap| {
            cap.bytes().min(limits.max_reply_bytes)
        });
        let deadline = tokio::time::Instant::now() + limits.call_deadline;
        let opened = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(CallError::Cancelled(assembler.finish())),
            _ = tokio::time::sleep_until(deadline) => {
                return Err(CallError::Provider(limits::past_deadline(limits.call_deadline), assembler.finish()));
            }
            opened = self.orch.provider.stream(request) => opened,
        };
        let mut stream = match opened {
            Ok(stream) => stream,
            Err(error) => return Err(CallError::Provider(error, assembler.finish())),
        };
        let mut progress_at = tokio::time::Instant::now();
        let mut reply_bytes = 0usize;
        // A little after the provider's own idle timeout, so a stream that is silent outright
        // is reported by the provider (which names the server), and this one catches streams
        // that send only keep-alives or empty deltas. One timer for the whole call: when it
        // fires after progress, it is moved on, so chunks never touch the timer wheel.
        let stall_after = limits.idle + IDLE_GRACE;
        let stall = tokio::time::sleep_until((progress_at + stall_after).min(deadline));
        tokio::pin!(stall);
        loop {
            let next = tokio::select! {
                biased;
                _ = cancel.cancelled() => return Err(CallError::Cancelled(assembler.finish())),
                () = &mut stall => {
                    let due = (progress_at + stall_after).min(deadline);
                    if due > tokio::time::Instant::now() {
                        stall.as_mut().reset(due);
                        continue;
                    }
                    let error = if due >= deadline {
                        limits::past_deadline(limits.call_deadline)
                    } else {
                        limits::no_progress(limits.idle)
                    };
                    return Err(CallError::Provider(error, assembler.finish()));
                }
                next = stream.next() => next,
            };
            let chunk = match next {
                None => break,
                Some(Ok(chunk)) => chunk,
                Some(Err(error)) => return Err(CallError::Provider(error, assembler.finish())),
            };
            let (size, progress) = limits::weigh(&chunk);
            if progress {
                progress_at = tokio::time::Instant::now();
            }
            reply_bytes = reply_bytes.saturating_add(size);
            if reply_bytes > max_reply {
                let error = match self.answer_cap {
                    Some(cap) if cap.bytes() < limits.max_reply_bytes => cap.passed(),
                    _ => limits::too_large(limits.max_reply_bytes),
                };
                return Err(CallError::Provider(error, assembler.finish()));
            }
            if progress {
                ttft.get_or_insert_with(|| (self.clock.now() - started).as_millis() as u64);
            }
            count(&mut streamed, &chunk);
            // The first byte at once, then a few times a second while chunks make progress:
            // the timeline's row in flight. Timed by the instant of the latest progress, so a
            // chunk costs no clock read of its own.
            if progress
                && let Some(first) = ttft
                && told.is_none_or(|at| progress_at - at >= PROGRESS_EVERY)
            {
                told = Some(progress_at);
                streamed.ttft_ms = first;
                self.emit(EventData::LlmProgress(streamed));
            }
            match chunk {
                Chunk::Text(text) => {
                    assembler.push_text(&text);
                    if live {
                        self.emit(EventData::Delta {
                            kind: DeltaKind::Text,
                            text,
                        });
                    }
                }
                Chunk::Reasoning(text) => {
                    assembler.push_reasoning(&text);
                    if live {
                        self.emit(EventData::Delta {
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

/// Adds what `chunk` streamed to `streamed`'s bytes (a length, never a scan of the text).
fn count(streamed: &mut LlmProgress, chunk: &Chunk) {
    let bytes = |text: &str| text.len() as u64;
    match chunk {
        Chunk::Text(text) => streamed.text_bytes += bytes(text),
        Chunk::Reasoning(text) => streamed.reasoning_bytes += bytes(text),
        Chunk::ToolCall(delta) => {
            let named = delta.name.as_deref().map_or(0, bytes);
            streamed.tool_bytes += bytes(&delta.arguments) + named;
        }
        _ => {}
    }
}

/// Where the history sent to the model starts (DESIGN §8): the system prompt (index 0), the
/// user message that started the current run (`run_start`) and everything after it are
/// always sent; of the older turns, at most `limit` of the latest messages are added, cut at a
/// turn boundary (a user message), so a tool result never loses its call and a request never
/// starts with an assistant message. Returns 1 when nothing is left out.
pub fn window(messages: &[Message], limit: usize, run_start: usize) -> usize {
    let len = messages.len();
    let run_start = run_start.clamp(1, len.max(1));
    if len <= limit.saturating_add(1) {
        return 1;
    }
    let earliest = len - limit.max(1);
    if earliest >= run_start {
        // The current run alone is longer than the limit: it is kept whole.
        return run_start;
    }
    (earliest..run_start)
        .find(|&i| messages[i].role == Role::User)
        .unwrap_or(run_start)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::ToolCall;

    fn call(id: &str) -> Message {
        let call = ToolCall {
            id: id.into(),
            name: "t".into(),
            arguments: serde_json::json!({}),
        };
        Message::assistant(None, None, vec![call])
    }

    /// system, then `turns` × [user, assistant+call, tool, assistant].
    fn conversation(turns: usize) -> Vec<Message> {
        let mut messages = vec![Message::system("s")];
        for t in 0..turns {
            messages.push(Message::user(format!("q{t}")));
            messages.push(call(&format!("c{t}")));
            messages.push(Message::tool(format!("c{t}"), "t", "{}".into()));
            messages.push(Message::assistant(Some(format!("a{t}")), None, Vec::new()));
        }
        messages
    }

    #[test]
    fn a_stream_is_counted_by_kind_in_bytes() {
        let mut streamed = LlmProgress {
            call: 1,
            ttft_ms: 0,
            text_bytes: 0,
            reasoning_bytes: 0,
            tool_bytes: 0,
        };
        for chunk in [
            Chunk::Reasoning("think".into()),
            Chunk::Text("héllo".into()),
            Chunk::ToolCall(crate::provider::ToolCallDelta {
                index: 0,
                id: Some("call_1".into()),
                name: Some("shell".into()),
                arguments: "{\"a\":1}".into(),
            }),
            Chunk::Usage(crate::conversation::Usage::default()),
            Chunk::Finish("stop".into()),
        ] {
            count(&mut streamed, &chunk);
        }
        // The id is no output of the model's; the name and arguments are.
        assert_eq!(
            (
                streamed.text_bytes,
                streamed.reasoning_bytes,
                streamed.tool_bytes
            ),
            (6, 5, 12)
        );
        assert_eq!(streamed.tokens(), (5, 2));
    }

    #[test]
    fn short_histories_are_sent_whole() {
        let messages = conversation(3);
        let run = messages.len() - 4;
        assert_eq!(window(&messages, 50, run), 1);
        assert_eq!(window(&messages, 12, run), 1);
    }

    #[test]
    fn long_histories_start_at_a_user_message() {
        let messages = conversation(30);
        for limit in 1..=119 {
            let run = messages.len() - 4;
            let start = window(&messages, limit, run);
            assert!(start <= run, "limit {limit}: the run's request is kept");
            assert!(start > 1);
            let kept = &messages[start..];
            assert!(
                kept.len() <= limit.max(4),
                "limit {limit}: kept {}",
                kept.len()
            );
            assert_eq!(messages[start].role, Role::User, "limit {limit}");
            // Every tool result that is kept has its call kept too.
            for (i, m) in kept.iter().enumerate() {
                if m.role == Role::Tool {
                    let id = m.tool_call_id.as_deref().unwrap();
                    assert!(
                        kept[..i]
                            .iter()
                            .any(|a| a.tool_calls.iter().any(|c| c.id == id)),
                        "limit {limit}: {id} lost its call"
                    );
                }
            }
        }
    }

    #[test]
    fn the_current_run_is_kept_whole_however_long() {
        let mut messages = vec![Message::system("s"), Message::user("old")];
        messages.push(Message::assistant(Some("a".into()), None, Vec::new()));
        let run = messages.len();
        messages.push(Message::user("q"));
        for r in 0..20 {
            messages.push(call(&format!("c{r}")));
            messages.push(Message::tool(format!("c{r}"), "t", "{}".into()));
        }
        // Older turns go first; the run's request and all its rounds stay.
        assert_eq!(window(&messages, 5, run), run);
        assert_eq!(messages[run].role, Role::User);
    }
}
