//! What the agent is doing, as the run model tells it: the status line's word, read from the
//! calls and dialogs of the run in progress instead of being set by hand on each event.

use super::RunModel;

/// What the agent is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activity {
    /// Waiting for the user.
    Idle,
    /// The model is answering.
    Streaming,
    /// A tool runs.
    RunningTool,
    /// A call waits for approval.
    AwaitingApproval,
    /// A question (a missing parameter, the depth limit, a form) waits for the user's answer.
    AwaitingInput,
    /// Older messages are being summarised (`/compact`).
    Compacting,
}

impl Activity {
    /// The words shown.
    pub fn label(self) -> &'static str {
        match self {
            Self::Idle => "idle",
            Self::Streaming => "streaming",
            Self::RunningTool => "running tool",
            Self::AwaitingApproval => "awaiting approval",
            Self::AwaitingInput => "awaiting input",
            Self::Compacting => "compacting",
        }
    }
}

impl RunModel {
    /// What the run in progress does now: a dialog waiting for the user comes first, then a
    /// call that has not ended, else the model is answering. Idle without a run.
    pub fn activity(&self) -> Activity {
        if !self.is_running() {
            return Activity::Idle;
        }
        if !self.approvals.is_empty() {
            return Activity::AwaitingApproval;
        }
        if !self.questions.is_empty() {
            return Activity::AwaitingInput;
        }
        // A call the model proposed runs (or is decided) next; a sub-agent's frame stays
        // open while its model answers, which is still a tool at work for the user.
        if self.calls.values().any(|c| c.state.is_open()) {
            return Activity::RunningTool;
        }
        Activity::Streaming
    }

    /// How deep the open calls nest: 1 for a top-level call, 0 when none is open.
    pub fn live_depth(&self) -> usize {
        (self.calls.values())
            .filter(|c| c.state.is_open())
            .map(|c| c.depth + 1)
            .max()
            .unwrap_or(0)
    }

    /// Counts the events that may have changed a call (streamed text does not): a view that
    /// copies the calls does it again only when this moved.
    pub fn revision(&self) -> u64 {
        self.revision
    }
}
