//! Keeping the timeline's rows in step: a call's row ends when the run model ends the call,
//! and each run's span and waits for the user (what the time axis squeezes) follow its events.

use super::row::Row;
use super::{MIN_IDLE_MS, RunSpan, TimelineState};
use crate::event::{Event, EventData};
use crate::run_model::RunModel;

impl TimelineState {
    /// Ends the rows of calls the run model says ended before their result came (a denied
    /// call ends with its decision): each row's clock stops when the call's does.
    pub(super) fn follow_calls(&mut self, run: &RunModel) {
        for (id, &index) in &self.open_calls {
            if let Some(row) = self.rows.get_mut(index).filter(|r| r.pending)
                && let Some(call) = run.call(id).filter(|c| !c.state.is_open())
            {
                row.end_call(call.ended_ms.unwrap_or(row.start), call.duration_ms);
            }
        }
    }

    /// Keeps the run of `event` up to date (its span and its waits for the user) and marks
    /// on `row` what waited: the idle time before a new run, the wait an answer ended, the
    /// approval its call waits for.
    pub(super) fn follow_run(&mut self, event: &Event, row: &mut Row) {
        let at = event.timestamp;
        let id = &event.request_id;
        if self.last_run.as_ref() != Some(id) {
            let before = (self.last_run.as_ref()).and_then(|r| self.runs.get(r));
            let idle = before.map_or(0, |r| row.start.saturating_sub(r.horizon));
            if idle >= MIN_IDLE_MS && !self.runs.contains_key(id) {
                row.idle_before = Some(idle);
            }
            self.last_run = Some(id.clone());
        }
        let span = (self.runs.entry(id.clone())).or_insert_with(|| RunSpan::new(row.start));
        span.cover(row.start, row.end.max(at));
        let (key, asked) = match &event.data {
            EventData::ApprovalRequested { id, .. } => (format!("approval {id}"), true),
            EventData::ApprovalDecided { id, .. } => (format!("approval {id}"), false),
            EventData::InputRequested(request) => (format!("question {}", request.id), true),
            EventData::InputAnswered { id, .. } => (format!("question {id}"), false),
            _ => return,
        };
        let started = if asked {
            span.wait(key, at);
            at
        } else {
            let Some(started) = span.answered(&key, at) else {
                return;
            };
            // The answer's row spans the wait, so its bar and duration show it.
            row.start = started.min(row.end);
            started
        };
        let call = match &event.data {
            EventData::ApprovalRequested { id, .. } | EventData::ApprovalDecided { id, .. } => {
                self.open_calls.get(id).and_then(|&i| self.rows.get_mut(i))
            }
            _ => None,
        };
        if let Some(call) = call {
            call.wait = Some((started, (!asked).then_some(at)));
        }
    }
}
