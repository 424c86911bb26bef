//! How tool calls end: their `tool_result` events, and results for calls that never ran
//! (abandoned, cancelled) so every call has one, in call order.

use tokio_util::sync::CancellationToken;

use super::scope::{Pending, Run};
use crate::event::{EventData, FrameState};
use crate::tools::outcome::Ended;
use crate::tools::runner::CallOutcome;

/// The state a finished call's frame leaves the stack in.
pub(super) fn final_state(outcome: &CallOutcome, cancel: &CancellationToken) -> FrameState {
    match (&outcome.ended, cancel.is_cancelled()) {
        (Ended::Done(_), _) => FrameState::Done,
        (Ended::Denied { .. }, _) => FrameState::Denied,
        // A tool that fails as the run is cancelled was stopped by the cancel.
        (Ended::Cancelled, _) | (_, true) => FrameState::Cancelled,
        (_, false) => FrameState::Failed,
    }
}

impl Run<'_> {
    /// Every call not decided yet is abandoned with the workflow.
    pub(super) fn abandon(&mut self, calls: &[Pending], outcomes: &mut [Option<CallOutcome>]) {
        for (slot, call) in outcomes.iter_mut().zip(calls) {
            if slot.is_none() {
                let ended =
                    Ended::Abandoned("abandoned: the user stopped this workflow".to_string());
                let outcome = CallOutcome::not_run(&call.frame, &call.name, ended);
                self.emit_result(&outcome);
                *slot = Some(outcome);
            }
        }
    }

    /// Fills in calls that never ran (a cancel) so every call has a result, in call order.
    pub(super) fn finish(
        &mut self,
        calls: &[Pending],
        outcomes: Vec<Option<CallOutcome>>,
    ) -> Vec<CallOutcome> {
        outcomes
            .into_iter()
            .zip(calls)
            .map(|(slot, call)| {
                slot.unwrap_or_else(|| {
                    let outcome = CallOutcome::not_run(&call.frame, &call.name, Ended::Cancelled);
                    self.emit_result(&outcome);
                    outcome
                })
            })
            .collect()
    }

    /// The `tool_result` event of an outcome.
    pub(super) fn emit_result(&mut self, outcome: &CallOutcome) {
        let ended = &outcome.ended;
        let result = ended.result().cloned();
        self.emit(EventData::ToolResult {
            id: outcome.id.clone(),
            name: outcome.name.clone(),
            ok: ended.status().is_ok(),
            status: Some(ended.status()),
            denied_by: ended.denied_by(),
            result,
            error: ended.error().map(String::from),
            duration_ms: outcome.duration.as_millis() as u64,
        });
    }
}
