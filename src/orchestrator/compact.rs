//! Compaction (DESIGN §8): when the next request would pass the threshold of the model's
//! context window, when the provider says a request is too long, or on `/compact`, the older
//! messages are summarised by one bounded model call. In their place a request sends one
//! user-role block with the user's requests among them, verbatim, and the summary marked as
//! a model's report (`recap.rs`). The conversation (and the session file) keeps every
//! message; only what is sent changes.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::approval::FixedApprover;
use super::call::{CallError, CallFor};
use super::context::{
    COMPACT_PROMPT, Compaction, MAX_SUMMARY_CHARS, SUMMARY_MAX_BYTES, SUMMARY_MAX_TOKENS, cut,
    keep_budget, middle_cut, request_tokens, requests_budget, transcript,
};
use super::conversation::Conversation;
use super::recap::{Request, Requests};
use super::scope::{AnswerCap, Run};
use super::turn::Turn;
use super::{EventSink, Orchestrator};
use crate::conversation::{Message, Role, Usage};
use crate::event::{CompactTrigger, Compacted, EventData, Purpose};
use crate::provider::ProviderError;

impl Run<'_> {
    /// The model's context window: configured or known for the model, else asked of the
    /// provider once (Ollama's `/api/show`); `None` when nobody knows.
    pub(super) async fn window(&mut self) -> Option<u64> {
        if let Some(window) = self.orch.settings.context.window {
            return Some(window);
        }
        if let Some(asked) = self.orch.asked_window {
            return asked;
        }
        let cancel = self.cancel.clone();
        let asked = tokio::select! {
            biased;
            // Not remembered: the next call asks again.
            _ = cancel.cancelled() => return None,
            asked = self.orch.provider.context_window() => asked,
        };
        self.orch.asked_window = Some(asked);
        asked
    }

    /// Compacts first when the next request would fill more of the window than the
    /// threshold allows. Only a cancel is an error: a failed summary leaves the history as
    /// it was (the `compacted` event says why), and the call goes ahead.
    pub(super) async fn compact_if_over(
        &mut self,
        conv: &mut Conversation,
        with_tools: bool,
        window: u64,
    ) -> Result<(), CallError> {
        let specs = if with_tools { &conv.specs[..] } else { &[] };
        let tokens = request_tokens(
            &conv.messages,
            conv.compaction.as_ref(),
            conv.run_start,
            conv.measured,
            specs,
        );
        if super::context::over(tokens, window, self.orch.settings.context.compact_at) {
            self.compact(conv, CompactTrigger::Auto, Some(window))
                .await?;
        }
        Ok(())
    }

    /// Summarises the messages between the last summary and the cut; `true` when the
    /// conversation is now compacted further. A `compacted` event reports it, or why not
    /// (nothing old enough to summarise, the summary call failed).
    pub(super) async fn compact(
        &mut self,
        conv: &mut Conversation,
        trigger: CompactTrigger,
        window: Option<u64>,
    ) -> Result<bool, CallError> {
        let start = conv.compaction.as_ref().map_or(1, |c| c.kept_from);
        let before = request_tokens(
            &conv.messages,
            conv.compaction.as_ref(),
            conv.run_start,
            conv.measured,
            &conv.specs,
        );
        let mut report = Compacted {
            trigger,
            before_tokens: before,
            after_tokens: before,
            window,
            summarized: start.saturating_sub(1),
            kept_from: start,
            summary: String::new(),
            requests: Vec::new(),
            requests_left_out: 0,
            usage: Usage::default(),
            duration_ms: 0,
            parent: conv.parent.clone(),
            error: None,
            call: None,
        };
        let overflowed_at = (trigger == CompactTrigger::Overflow).then_some(before);
        let budget = keep_budget(window, overflowed_at);
        let Some(kept_from) = cut(&conv.messages, start, budget) else {
            // Automatic compaction that finds nothing to cut stays quiet: the call goes
            // ahead, and the provider's answer decides.
            if trigger != CompactTrigger::Auto {
                report.error = Some("nothing to compact yet: the conversation is short".into());
                self.emit(EventData::Compacted(Box::new(report)));
            }
            return Ok(false);
        };
        let previous = conv.compaction.as_ref().map(|c| c.summary.as_str());
        let text = transcript(previous, &conv.messages[start..kept_from], window);
        let request = [Message::system(COMPACT_PROMPT), Message::user(text)];
        let started = self.clock.now();
        let outcome = self.summary_call(&request, conv.parent.clone()).await;
        report.duration_ms = (self.clock.now() - started).as_millis() as u64;
        let turn = match outcome {
            Ok((turn, call)) => {
                report.call = Some(call);
                turn
            }
            Err(CallError::Provider(error, _)) => {
                let said = self.describe(&error);
                report.error = Some(format!("the summary call failed: {said}"));
                self.emit(EventData::Compacted(Box::new(report)));
                return Ok(false);
            }
            Err(CallError::Budget(stop)) => {
                // A run ends with the budget's message; `/compact` on its own says it here.
                if trigger == CompactTrigger::Manual {
                    report.error = Some(stop.message());
                    self.emit(EventData::Compacted(Box::new(report)));
                }
                return Err(CallError::Budget(stop));
            }
            Err(cancelled) => {
                // A run reports its own cancel; a compaction on its own says it ended.
                if trigger == CompactTrigger::Manual {
                    report.error = Some("cancelled by the user".into());
                    self.emit(EventData::Compacted(Box::new(report)));
                }
                return Err(cancelled);
            }
        };
        self.usage.add(turn.usage);
        report.usage = turn.usage;
        let summary = self
            .orch
            .settings
            .tools
            .secrets
            .redact(turn.content.trim())
            .into_owned();
        if summary.is_empty() {
            report.error = Some("the summary call returned no text".into());
            self.emit(EventData::Compacted(Box::new(report)));
            return Ok(false);
        }
        let mut summary = middle_cut(&summary, MAX_SUMMARY_CHARS).into_owned();
        if stopped_at_bound(&turn) {
            summary.push_str("\n\n[…the summary was cut: it reached its length bound]");
        }
        // The checklist the user sees stays the one the model knows: a list written in the
        // part summarised is carried over word for word, not left to the summary.
        if let Some((at, list)) = crate::todo::latest_in(&conv.messages)
            && at < kept_from
            && !list.is_empty()
        {
            summary.push_str("\n\nYour todo list, as you last wrote it with todo_write:\n");
            summary.push_str(&list.markdown());
        }
        let earlier = conv
            .compaction
            .as_ref()
            .map(|c| c.requests.clone())
            .unwrap_or_default();
        let requests = Requests::pick(
            &earlier,
            &conv.messages,
            start,
            kept_from,
            requests_budget(window),
        );
        report.requests = requests.kept.iter().map(|r| r.text.clone()).collect();
        report.requests_left_out = requests.left_out;
        conv.compaction = Some(Compaction {
            kept_from,
            summary: summary.clone(),
            requests,
        });
        conv.measured = None;
        report.after_tokens = request_tokens(
            &conv.messages,
            conv.compaction.as_ref(),
            conv.run_start,
            None,
            &conv.specs,
        );
        report.summarized = kept_from - 1;
        report.kept_from = kept_from;
        report.summary = summary;
        self.emit(EventData::Compacted(Box::new(report)));
        Ok(true)
    }

    /// The summary call: no tools, its answer bounded in tokens (asked of the provider) and
    /// in bytes (taco stops reading past [`SUMMARY_MAX_BYTES`], whatever the provider does).
    /// A provider that refuses the token field (HTTP 400) is asked once more without it, and
    /// not again. The turn, and the number of the call that answered.
    async fn summary_call(
        &mut self,
        request: &[Message],
        parent: Option<String>,
    ) -> Result<(Turn, u32), CallError> {
        let about = CallFor {
            purpose: Purpose::Compaction,
            parent,
            turn: 1,
        };
        let tokens = (!self.orch.summary_tokens_refused).then_some(SUMMARY_MAX_TOKENS);
        let cap = |tokens| AnswerCap::Summary {
            bytes: SUMMARY_MAX_BYTES,
            tokens,
        };
        // A tool's nested call may be what needed the compaction: its own bound comes back.
        let outer = self.answer_cap.replace(cap(tokens));
        let mut outcome = self.with_retries(request, &[], false, &about).await;
        if tokens.is_some()
            && let Err(CallError::Provider(ProviderError::Http { status: 400, .. }, _)) = outcome
        {
            self.orch.summary_tokens_refused = true;
            self.answer_cap = Some(cap(None));
            outcome = self.with_retries(request, &[], false, &about).await;
        }
        self.answer_cap = outer;
        outcome.map(|streamed| (streamed.turn, streamed.call))
    }
}

/// Whether the provider ended the answer at its token bound (OpenAI and Ollama `length`,
/// Anthropic `max_tokens`).
fn stopped_at_bound(turn: &Turn) -> bool {
    matches!(turn.finish_reason.as_deref(), Some("length" | "max_tokens"))
}

impl Orchestrator {
    /// Compacts the conversation now (`/compact`), between requests. `false` when nothing
    /// was compacted (the `compacted` event says why) or the user cancelled.
    pub async fn compact(&mut self, sink: &mut dyn EventSink, cancel: &CancellationToken) -> bool {
        let mut conv = std::mem::take(&mut self.conversation);
        let mut approver = FixedApprover::none();
        let clock = Arc::clone(&self.clock);
        let mut run = Run::new(
            self,
            sink,
            &mut approver,
            cancel.clone(),
            clock,
            String::new(),
        );
        let window = run.window().await;
        let done = matches!(
            run.compact(&mut conv, CompactTrigger::Manual, window).await,
            Ok(true)
        );
        self.conversation = conv;
        done
    }

    /// Restores the compaction a resumed session ended with (its `compacted` event's cut,
    /// summary and the user's requests it kept): `kept_from` is moved past tool results (a
    /// result stays with its call), and ignored when it is out of range.
    pub fn restore_compaction(
        &mut self,
        kept_from: usize,
        summary: String,
        requests: Vec<String>,
        requests_left_out: usize,
    ) {
        let messages = &self.conversation.messages;
        let mut at = kept_from.max(1);
        while messages.get(at).is_some_and(|m| m.role == Role::Tool) {
            at += 1;
        }
        if at < messages.len() && !summary.is_empty() {
            let kept = requests
                .into_iter()
                .map(|text| Request { at: None, text })
                .collect();
            self.conversation.compaction = Some(Compaction {
                kept_from: at,
                summary,
                requests: Requests {
                    kept,
                    left_out: requests_left_out,
                },
            });
            self.conversation.measured = None;
        }
    }
}
