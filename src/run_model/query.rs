//! What the run model answers: a call and its place in the tree, the run in progress, its
//! turn and tokens, the dialogs still open, the grants. Reads only; the fold is `apply`.

use std::sync::Arc;

use super::{CallNode, Grants, OpenApproval, RunModel};
use crate::conversation::Usage;
use crate::event::{InputRequest, ShellGrant};

impl RunModel {
    /// The depth of work under `parent`: one deeper than the parent, or the top level when
    /// there is none or it was never seen.
    pub fn depth_under(&self, parent: Option<&str>) -> usize {
        parent
            .and_then(|p| self.calls.get(p))
            .map_or(0, |c| c.depth.saturating_add(1))
    }

    /// The depth of a call or frame (0 when unknown).
    pub fn depth(&self, id: &str) -> usize {
        self.calls.get(id).map_or(0, |c| c.depth)
    }

    /// The depth of the frame a question asks for.
    pub fn question_depth(&self, question: &str) -> usize {
        self.asked
            .get(question)
            .map_or(0, |request| self.depth(&request.frame))
    }

    /// A question of the run in progress (or the last run), answered or not.
    pub fn question(&self, id: &str) -> Option<&InputRequest> {
        self.asked.get(id)
    }

    /// The frame a call or frame runs under.
    pub fn parent(&self, id: &str) -> Option<&str> {
        self.calls.get(id).and_then(|c| c.parent.as_deref())
    }

    /// A call of the run in progress (or the last run).
    pub fn call(&self, id: &str) -> Option<&CallNode> {
        self.calls.get(id)
    }

    /// The calls of the run in progress (or the last run), in the order they were made.
    pub fn calls(&self) -> impl Iterator<Item = (&str, &CallNode)> {
        self.order
            .iter()
            .filter_map(|id| self.calls.get(id).map(|c| (id.as_str(), c)))
    }

    /// The request id of the run in progress.
    pub fn current(&self) -> Option<&Arc<str>> {
        self.current.as_ref()
    }

    /// Whether a run is in progress.
    pub fn is_running(&self) -> bool {
        self.current.is_some()
    }

    /// The top-level agent's turn in the run in progress (1-based, at most the limit).
    pub fn turn(&self) -> u32 {
        self.turn
    }

    /// Tokens of the run in progress (or the last run), sub-agents included.
    pub fn run_usage(&self) -> Usage {
        self.run_usage
    }

    /// Tokens since the conversation started, sub-agents included.
    pub fn usage(&self) -> Usage {
        self.usage
    }

    /// Approvals still waiting for the user, in the order asked.
    pub fn open_approvals(&self) -> &[OpenApproval] {
        &self.approvals
    }

    /// Questions still waiting for the user, in the order asked.
    pub fn open_questions(&self) -> &[InputRequest] {
        &self.questions
    }

    /// Tools and shell prefixes the user approved beyond one call: how far, since when,
    /// how many calls each let through.
    pub fn grants(&self) -> &Grants {
        &self.grants
    }

    /// Shell grants the user gave for the session from the dialog.
    pub fn shell_prefixes(&self) -> Vec<&ShellGrant> {
        self.grants.prefixes().collect()
    }

    /// Runs started.
    pub fn runs(&self) -> usize {
        self.runs
    }

    /// Model calls of the user's conversation over every run (the session's turns).
    pub fn model_calls(&self) -> u32 {
        self.model_calls
    }
}
