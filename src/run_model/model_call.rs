//! Model calls as the run model knows them (issue 27): each provider call from its
//! `llm_started` to its end (`llm_call`, a compaction's `compacted`, `llm_failed`, or the
//! run's end), with what it streamed so far (`llm_progress`), its time to first byte and its
//! retries, all on the events' clock. The timeline draws a call in flight from this.

use std::sync::Arc;

use crate::event::{Event, EventData, LlmEnd, LlmProgress, Purpose};

/// How a model call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelCallEnd {
    /// It answered (`llm_call`, or a summary's `compacted`).
    Answered,
    /// The provider failed (past its retries), or its run ended with an error.
    Failed,
    /// Cancelled, alone or with its run.
    Cancelled,
}

/// One provider call.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelCallNode {
    /// The run (request id) it belongs to.
    pub run: Arc<str>,
    /// Its number in the run.
    pub call: u32,
    /// What it is for.
    pub purpose: Purpose,
    /// The frame it runs under.
    pub parent: Option<String>,
    /// Model id.
    pub model: String,
    /// Its conversation's turn.
    pub turn: u32,
    /// When it began (event time, Unix ms).
    pub started_ms: u64,
    /// What the attempt in progress streamed so far (its time to first byte, bytes by
    /// kind); `None` until the first byte, again after a retry, and once it ended.
    pub streamed: Option<LlmProgress>,
    /// Attempts after the first (`retry` events).
    pub retries: u32,
    /// How it ended, once it has.
    pub end: Option<ModelCallEnd>,
    /// When it ended (event time).
    pub ended_ms: Option<u64>,
    /// Why it failed, when it said.
    pub error: Option<String>,
}

impl ModelCallNode {
    /// Whether it is still in flight.
    pub fn is_open(&self) -> bool {
        self.end.is_none()
    }

    /// How long it has taken at `now_ms` (event clock), retries included; once ended, how
    /// long it took.
    pub fn elapsed_ms(&self, now_ms: u64) -> u64 {
        self.ended_ms
            .unwrap_or(now_ms)
            .saturating_sub(self.started_ms)
    }

    /// Output tokens streamed so far, estimated (answer and tool calls, reasoning).
    pub fn tokens(&self) -> (u64, u64) {
        self.streamed.map_or((0, 0), |s| s.tokens())
    }

    fn close(&mut self, end: ModelCallEnd, at: u64) {
        if self.end.is_none() {
            self.end = Some(end);
            self.ended_ms = Some(at.max(self.started_ms));
            // What streamed was live only; the end's event says what counts, so a replayed
            // session folds to the state the live run had.
            self.streamed = None;
        }
    }
}

/// The model calls of the run in progress (or the last run), in the order they began.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelCalls {
    calls: Vec<ModelCallNode>,
}

impl ModelCalls {
    /// Folds one event in.
    pub(super) fn apply(&mut self, event: &Event) {
        let at = event.timestamp;
        let run = &event.request_id;
        match &event.data {
            // The previous runs' calls are over (one still open lost its end in a crash).
            EventData::RunStarted { .. } => self.calls.clear(),
            EventData::LlmStarted(started) => {
                self.calls.push(ModelCallNode {
                    run: Arc::clone(run),
                    call: started.call,
                    purpose: started.purpose,
                    parent: started.parent.clone(),
                    model: started.model.clone(),
                    turn: started.turn,
                    started_ms: at,
                    streamed: None,
                    retries: 0,
                    end: None,
                    ended_ms: None,
                    error: None,
                });
            }
            EventData::LlmProgress(progress) => {
                if let Some(node) = self.open_mut(run, progress.call) {
                    node.streamed = Some(*progress);
                }
            }
            // A retry belongs to the call in flight: model calls of a run never overlap (a
            // sub-agent's or a tool's call runs while its parent waits, not beside it).
            EventData::Retry { .. } => {
                if let Some(node) = (self.calls.iter_mut().rev()).find(|c| c.run == *run)
                    && node.is_open()
                {
                    node.retries = node.retries.saturating_add(1);
                    // The failed attempt's text is dropped; the next one starts afresh.
                    node.streamed = None;
                }
            }
            EventData::LlmCall(call) => self.end(run, call.call, ModelCallEnd::Answered, at),
            EventData::Compacted(compacted) => {
                self.end(run, compacted.call, ModelCallEnd::Answered, at);
            }
            EventData::LlmFailed(failed) => {
                let end = match failed.end {
                    LlmEnd::Failed => ModelCallEnd::Failed,
                    LlmEnd::Cancelled => ModelCallEnd::Cancelled,
                };
                if let Some(node) = self.open_mut(run, failed.call) {
                    node.error.clone_from(&failed.error);
                    node.close(end, at);
                }
            }
            // Calls still in flight when their run ends ended with it.
            EventData::Final { .. } | EventData::Cancelled { .. } | EventData::Error { .. } => {
                let end = match event.data {
                    EventData::Error { .. } => ModelCallEnd::Failed,
                    _ => ModelCallEnd::Cancelled,
                };
                for node in self.calls.iter_mut().filter(|c| c.run == *run) {
                    node.close(end, at);
                }
            }
            _ => {}
        }
    }

    /// A resumed session starts in a new process: nothing is in flight any more. Calls that
    /// were are cancelled, when they began (their end is unknown).
    pub(super) fn resumed(&mut self) {
        for node in &mut self.calls {
            let at = node.started_ms;
            node.close(ModelCallEnd::Cancelled, at);
        }
    }

    fn end(&mut self, run: &Arc<str>, call: Option<u32>, end: ModelCallEnd, at: u64) {
        if let Some(node) = call.and_then(|call| self.open_mut(run, call)) {
            node.close(end, at);
        }
    }

    fn open_mut(&mut self, run: &Arc<str>, call: u32) -> Option<&mut ModelCallNode> {
        (self.calls.iter_mut().rev()).find(|c| c.call == call && c.run == *run && c.is_open())
    }

    /// Call `call` of run `run`, open or ended.
    pub fn get(&self, run: &str, call: u32) -> Option<&ModelCallNode> {
        (self.calls.iter().rev()).find(|c| c.call == call && &*c.run == run)
    }

    /// The calls still in flight.
    pub fn open(&self) -> impl Iterator<Item = &ModelCallNode> {
        self.calls.iter().filter(|c| c.is_open())
    }

    /// Every call kept (the run in progress or the last run), in the order they began.
    pub fn all(&self) -> &[ModelCallNode] {
        &self.calls
    }
}

#[cfg(test)]
#[path = "model_call_tests.rs"]
mod tests;
