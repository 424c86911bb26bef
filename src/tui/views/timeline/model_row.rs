//! The rows of model calls (issue 27): a call in flight has its row from `llm_started`,
//! renamed as it streams (tokens so far, time to first byte, retries) from the run model's
//! [`ModelCallNode`]; its end (`llm_call`, `compacted`, `llm_failed`) takes that row's
//! place. Each says what the call was for: the user's turn, a sub-agent's, a compaction's
//! summary, an answer check, a tool's request.

use std::sync::Arc;

use super::TimelineState;
use super::label::{one_line, spend};
use super::row::{Kind, Row, Tone};

use crate::config::pricing::Pricing;
use crate::event::{Event, EventData, LlmCall, LlmEnd, LlmFailed, Purpose};
use crate::run_model::{ModelCallEnd, ModelCallNode, RunModel};
use crate::text::{duration, human};

/// The symbol of a call in flight (its end is `◆`).
pub(super) const LIVE: &str = "◇";

/// What a call was for, in a few words (`Purpose::label`), with the tool that asked from
/// the run model.
pub(super) fn who(purpose: Purpose, turn: u32, parent: Option<&str>, run: &RunModel) -> String {
    let tool = parent.and_then(|p| run.call(p)).map(|c| one_line(&c.name));
    purpose.label(turn, tool.as_deref())
}

/// The name of a call in flight: what it is for, then what it streamed so far (tokens
/// estimated, reasoning apart), its time to first byte and its retries, then the model.
pub(super) fn live_name(node: &ModelCallNode, run: &RunModel) -> String {
    let mut name = who(node.purpose, node.turn, node.parent.as_deref(), run);
    match node.streamed {
        None => name.push_str(" · waiting"),
        Some(streamed) => {
            let (answer, reasoning) = node.tokens();
            name.push_str(&format!(
                " · ~{} tok",
                human(answer.saturating_add(reasoning))
            ));
            if reasoning > 0 {
                name.push_str(&format!(" (~{} reasoning)", human(reasoning)));
            }
            name.push_str(&format!(" · ttft {}", duration(streamed.ttft_ms)));
        }
    }
    push_retries(&mut name, node.retries);
    name.push_str(&format!(" · {}", one_line(&node.model)));
    name
}

/// `· 1 retry`, `· 3 retries`; nothing without any.
fn push_retries(name: &mut String, retries: u32) {
    match retries {
        0 => {}
        1 => name.push_str(" · 1 retry"),
        n => name.push_str(&format!(" · {n} retries")),
    }
}

/// The row of a call that answered: what it was for, its tokens (and cost), the model, its
/// tool calls and retries; and when it began (its live row's start, retries included).
pub(super) fn answered(
    call: &LlmCall,
    at: u64,
    request: &str,
    pricing: &Pricing,
    run: &RunModel,
) -> (&'static str, Tone, String, u64) {
    let node = call.call.and_then(|c| run.llm().get(request, c));
    let purpose = call.purpose();
    // Tokens (and cost) first: the model is in the status line, and a narrow pane cuts the
    // end of the label.
    let cost = pricing.cost(&call.model, &call.usage);
    let spent = spend(&call.usage, cost)
        .map(|s| format!("{s} · "))
        .unwrap_or_default();
    let who = who(purpose, call.turn, call.parent.as_deref(), run);
    let mut name = format!("{who} · {spent}{}", one_line(&call.model));
    match call.tool_calls.len() {
        0 => {}
        1 => name.push_str(" · 1 tool call"),
        n => name.push_str(&format!(" · {n} tool calls")),
    }
    // What a check decided is its whole answer.
    if purpose == Purpose::AnswerCheck && !call.content.trim().is_empty() {
        let said = one_line(&crate::text::summarize(call.content.trim(), 24));
        name.push_str(&format!(" · said {said}"));
    }
    push_retries(&mut name, node.map_or(0, |n| n.retries));
    let start = node.map_or(at.saturating_sub(call.duration_ms), |n| n.started_ms);
    ("◆", Tone::Llm, name, start)
}

/// The row of a call that ended without an answer, from when it began.
pub(super) fn failed(
    failed: &LlmFailed,
    at: u64,
    request: &str,
    run: &RunModel,
) -> (&'static str, Tone, String, u64) {
    let node = run.llm().get(request, failed.call);
    let mut name = match node {
        Some(n) => who(n.purpose, n.turn, n.parent.as_deref(), run),
        None => "llm".to_string(),
    };
    let (symbol, tone) = match failed.end {
        LlmEnd::Failed => {
            name.push_str(" failed");
            if let Some(error) = &failed.error {
                name.push_str(&format!(": {}", one_line(error)));
            }
            ("✗", Tone::Error)
        }
        LlmEnd::Cancelled => {
            name.push_str(" cancelled");
            ("■", Tone::Dim)
        }
    };
    push_retries(&mut name, node.map_or(0, |n| n.retries));
    (symbol, tone, name, node.map_or(at, |n| n.started_ms))
}

impl TimelineState {
    /// Keeps the rows of model calls in flight up to date: renamed as they stream and retry
    /// (the run model folded the event first), their run's span grown; closed when their run
    /// ends without their own end (the run's row says why).
    pub(super) fn follow_models(&mut self, event: &Event, run: &RunModel) {
        let request = &event.request_id;
        let ended = match &event.data {
            EventData::LlmProgress(_) | EventData::Retry { .. } => false,
            EventData::Final { .. } | EventData::Cancelled { .. } | EventData::Error { .. } => true,
            _ => return,
        };
        let live: Vec<(u32, usize)> = (self.open_models.iter())
            .filter(|((r, _), _)| r == request)
            .map(|((_, call), &index)| (*call, index))
            .collect();
        let current = self.visible.get(self.selected).copied();
        let mut kinds_changed = false;
        for (call, index) in live {
            let (Some(node), Some(row)) = (run.llm().get(request, call), self.rows.get_mut(index))
            else {
                continue;
            };
            if ended {
                self.open_models.remove(&(Arc::clone(request), call));
                let end = match node.end {
                    Some(ModelCallEnd::Failed) => LlmEnd::Failed,
                    _ => LlmEnd::Cancelled,
                };
                let said = LlmFailed {
                    call,
                    end,
                    error: None,
                };
                let (symbol, tone, name, _) = failed(&said, event.timestamp, request, run);
                row.symbol = symbol;
                row.tone = tone;
                row.name = name.into_boxed_str();
                row.kind = Kind::LlmFailed;
                row.pending = false;
                row.end = event.timestamp.max(row.start);
                kinds_changed = true;
            } else {
                row.name = live_name(node, run).into_boxed_str();
                if let Some(span) = self.runs.get_mut(request) {
                    span.cover(row.start, event.timestamp);
                }
            }
        }
        if kinds_changed {
            self.refilter_at(current);
        }
    }

    /// The row in flight that `event` ends (a model call's answer, summary or failure),
    /// no longer in flight.
    pub(super) fn take_live(&mut self, event: &Event) -> Option<usize> {
        let call = match &event.data {
            EventData::LlmCall(call) => call.call?,
            EventData::Compacted(compacted) => compacted.call?,
            EventData::LlmFailed(failed) => failed.call,
            _ => return None,
        };
        self.open_models
            .remove(&(Arc::clone(&event.request_id), call))
    }

    /// Puts `row` (a model call's end) in the place of the call's row in flight: from when
    /// the call began, at its depth; the list is filtered again when its kind changed.
    pub(super) fn replace(&mut self, index: usize, mut row: Row) {
        let current = self.visible.get(self.selected).copied();
        let Some(slot) = self.rows.get_mut(index) else {
            return;
        };
        row.start = slot.start.min(row.end);
        row.depth = slot.depth;
        row.idle_before = row.idle_before.or(slot.idle_before);
        let changed = slot.matches(self.filter) != row.matches(self.filter);
        *slot = row;
        if changed {
            self.refilter_at(current);
        }
    }
}
