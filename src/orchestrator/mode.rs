//! Permission modes in a run (issue 30.2): the mode is shared between the task and a
//! running request (a switch applies from the next batch of calls); plan mode refuses what
//! could change the workspace, tells the model to write a plan, and asks the user to
//! approve it; auto-edit approves file edits.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use serde_json::Value;

use super::scope::{Pending, Run};
use crate::event::{EventData, InputKind, InputRequest, Mode};
use crate::tools::Policy;
use crate::tools::outcome::{DeniedBy, Ended};

/// What the model is told in plan mode.
pub const PLAN_PROMPT: &str = "You are in plan mode. Do not change anything: only read-only tools run here (reading, listing and searching files, fetching pages); writes, edits and shell commands are refused. Investigate what you need, then answer with a concrete, numbered plan of the changes you would make (files, what changes in each, how to check it). The user will approve the plan or send feedback.";

/// What the model is told when the user approves its plan.
const APPROVED: &str = "The user approved the plan. Carry it out now.";

/// The mode, shared: the task sets it, a running request reads it at each batch.
#[derive(Debug, Clone, Default)]
pub struct ModeCell(Arc<AtomicU8>);

impl ModeCell {
    /// The mode now.
    pub fn get(&self) -> Mode {
        match self.0.load(Ordering::SeqCst) {
            1 => Mode::AutoEdit,
            2 => Mode::Plan,
            _ => Mode::Ask,
        }
    }

    /// Sets it.
    pub fn set(&self, mode: Mode) {
        let n = match mode {
            Mode::Ask => 0,
            Mode::AutoEdit => 1,
            Mode::Plan => 2,
        };
        self.0.store(n, Ordering::SeqCst);
    }
}

/// What the user said to a plan.
enum PlanAnswer {
    /// Approved: carry it out in this mode.
    Approved(Mode),
    /// Keep planning with this feedback.
    Feedback(String),
    /// Nothing: the plan is the answer.
    Left,
}

impl super::Orchestrator {
    /// Switches the permission mode between requests and says so (recorded).
    pub fn set_mode(&mut self, mode: Mode, sink: &mut dyn super::EventSink) {
        self.mode.set(mode);
        let request_id: Arc<str> = Arc::from(uuid::Uuid::new_v4().to_string());
        sink.emit(crate::event::Event {
            timestamp: self.clock.unix_ms(),
            request_id,
            data: EventData::ModeChanged { mode },
        });
    }
}

impl Run<'_> {
    /// A call's policy under the mode (after the hooks), or why plan mode refuses it.
    pub(super) fn moded(
        &self,
        call: &Pending,
        arguments: &Value,
        policy: Policy,
        must_ask: bool,
    ) -> Result<Policy, Ended> {
        let Some(tool) = self.orch.registry.get(&call.name) else {
            return Ok(policy);
        };
        match self.orch.mode.get() {
            Mode::Ask => Ok(policy),
            Mode::Plan if tool.changes_workspace(arguments) || tool.runs_process() => {
                Err(Ended::Denied {
                    by: DeniedBy::Mode,
                    message: format!(
                        "plan mode: {} could change the workspace, so it is not run; only read-only tools run while planning. Write the plan instead.",
                        call.name
                    ),
                })
            }
            Mode::Plan => Ok(policy),
            Mode::AutoEdit if tool.edits_files() && policy == Policy::Ask && !must_ask => {
                Ok(Policy::Allow)
            }
            Mode::AutoEdit => Ok(policy),
        }
    }

    /// Switches the mode and says so.
    pub(super) fn switch_mode(&mut self, mode: Mode) {
        self.orch.mode.set(mode);
        self.emit(EventData::ModeChanged { mode });
    }

    /// In plan mode, when the model has answered: the user approves the plan (the run goes
    /// on, carrying it out, in the mode they chose), sends feedback (it goes on planning),
    /// or leaves it. `Some(message)`: the message the run goes on with.
    pub(super) async fn review_plan(&mut self) -> Option<String> {
        if self.orch.mode.get() != Mode::Plan || !self.approver.can_ask() {
            return None;
        }
        let request = InputRequest {
            id: format!("plan/q{}", self.next_number()),
            kind: InputKind::Plan,
            frame: String::new(),
            tool: "plan".to_string(),
            prompt: "The plan is ready. a: approve it and carry it out (ask mode) · e: approve it in auto-edit mode · or write what to change to keep planning".to_string(),
            parameter: None,
            description: None,
            value_type: None,
            depth: None,
            form: None,
        };
        let answer = match self.ask(&request).await {
            None | Some(None) => PlanAnswer::Left,
            Some(Some(text)) => match text.trim() {
                "a" | "A" | "y" | "yes" => PlanAnswer::Approved(Mode::Ask),
                "e" | "E" => PlanAnswer::Approved(Mode::AutoEdit),
                "" => PlanAnswer::Left,
                _ => PlanAnswer::Feedback(text),
            },
        };
        match answer {
            PlanAnswer::Approved(mode) => {
                self.switch_mode(mode);
                Some(APPROVED.to_string())
            }
            PlanAnswer::Feedback(text) => Some(text),
            PlanAnswer::Left => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cell_holds_each_mode() {
        let cell = ModeCell::default();
        assert_eq!(cell.get(), Mode::Ask);
        for mode in [Mode::Plan, Mode::AutoEdit, Mode::Ask] {
            cell.clone().set(mode);
            assert_eq!(cell.get(), mode);
        }
    }
}
