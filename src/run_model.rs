//! The run model: what the event stream says about the run in progress, folded in one place
//! (DESIGN §3). The call tree (parents, depths, states, how each call ended), the turn
//! number, token usage (sub-agents included), the approvals and questions still open, and the
//! grants the user gave. The orchestrator owns the facts and reports them as events; the
//! chat, the stack pane, the timeline, the status line, `/status`, `/tools`, the audit log
//! and `taco trace` read them from here instead of keeping maps of their own. Folding the
//! events of a recorded trace gives the same state the live run had.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crate::conversation::Usage;
use crate::event::{Decision, Event, EventData, FrameState, InputRequest, Purpose, ToolStatus};
use crate::orchestrator::approval::ApprovalRequest;
use crate::orchestrator::stack::argument_summary;
use crate::text::summarize;
use crate::todo::TodoList;

mod activity;
mod call;
mod gauge;
mod grants;
mod model_call;
mod query;
mod spend;
mod turns;

pub use activity::Activity;
pub use call::{CallNode, CallState, Progress, Via};
pub use gauge::ContextGauge;
pub use grants::{GrantRecord, Grants};
pub use model_call::{ModelCallEnd, ModelCallNode, ModelCalls};
pub use turns::{Turn, TurnCall, TurnChanges, Turns};

/// An approval the user has not answered yet: the orchestrator's request (the one approval
/// type: the dialog's call is it too) and where it stands in its batch.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenApproval {
    /// The call asked about.
    pub call: ApprovalRequest,
    /// Position in its batch (1-based) and the batch size.
    pub position: (usize, usize),
}

/// The state of the run in progress (and what outlives runs: grants, session usage).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunModel {
    current: Option<Arc<str>>,
    max_turns: u32,
    turn: u32,
    /// Results still due before the model is called again (top-level calls of a turn).
    results_due: usize,
    calls: HashMap<String, CallNode>,
    /// Call ids in the order they were made.
    order: Vec<String>,
    /// Every question of the run, by id (answered ones too: what was asked stays known).
    asked: HashMap<String, InputRequest>,
    approvals: Vec<OpenApproval>,
    questions: Vec<InputRequest>,
    run_usage: Usage,
    usage: Usage,
    /// Tools and shell prefixes the user allowed beyond one call.
    grants: Grants,
    runs: usize,
    /// Model calls of the user's conversation, every run (a sub-agent's are its own).
    model_calls: u32,
    /// How full the user's conversation is: tokens of the latest request (and its reply)
    /// and the window, when known.
    context: Option<ContextGauge>,
    /// The session's tokens by model (for its cost; a `/clear` keeps them: they were spent).
    by_model: BTreeMap<String, Usage>,
    /// The model of the latest call (a compaction's summary call is made with it).
    last_model: Option<String>,
    /// Tokens of the model calls nested under each frame (a sub-agent's whole subtree), by
    /// model.
    subtree: HashMap<String, BTreeMap<String, Usage>>,
    /// Counts the events that may have changed a call: a view copies the calls again only
    /// when it moved.
    revision: u64,
    /// Provider calls from their start to their end (`model_call.rs`).
    llm: ModelCalls,
    /// The permission mode (issue 30.2), as the last `mode_changed` said.
    mode: crate::event::Mode,
    /// The session's runs and their calls, for rewind (`turns.rs`).
    turns: Turns,
    /// The agent's checklist as its latest `todo_write` left it (issue 30.3); outlives
    /// runs, a `/clear` empties it.
    todos: TodoList,
    /// Calls made so far (every run), and when each `todo_write` of this run was made: of
    /// two writes in one batch the one made last wins, whichever ends last (the model reads
    /// its results in the order it made them).
    made: u64,
    todo_made: HashMap<String, u64>,
    /// When the write the checklist shows was made.
    todos_made: u64,
    /// What an external agent (ACP) said the session cost, in dollars: it makes model
    /// calls taco does not see, so its own figure is the session's.
    reported_cost: Option<f64>,
}

impl RunModel {
    /// Nothing has happened yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Folds one event in; `true` when it ended the run in progress.
    pub fn apply(&mut self, event: &Event) -> bool {
        self.llm.apply(event);
        self.turns.apply(event);
        // Streamed text and a model call's progress change no call: views that copy calls
        // skip them.
        if !matches!(
            event.data,
            EventData::Delta { .. } | EventData::LlmProgress(_)
        ) {
            self.revision = self.revision.wrapping_add(1);
        }
        match &event.data {
            EventData::RunStarted { max_turns, .. } => {
                // The previous run's calls are over: nothing refers to them any more.
                self.calls.clear();
                self.todo_made.clear();
                self.subtree.clear();
                self.order.clear();
                self.asked.clear();
                self.approvals.clear();
                self.questions.clear();
                self.current = Some(Arc::clone(&event.request_id));
                self.max_turns = (*max_turns).max(1);
                self.turn = 1;
                self.results_due = 0;
                self.run_usage = Usage::default();
                self.runs += 1;
            }
            EventData::LlmCall(call) => {
                // A sub-agent's turns are its own: only the top-level agent's count here.
                if call.parent.is_none() {
                    self.turn = call.turn.min(self.max_turns.max(1));
                    self.results_due = call.tool_calls.len();
                    self.model_calls = self.model_calls.saturating_add(1);
                    self.context = Some(ContextGauge {
                        used: call
                            .usage
                            .input_tokens
                            .saturating_add(call.usage.output_tokens),
                        window: call.context_window,
                    });
                }
                self.run_usage.add(call.usage);
                self.usage.add(call.usage);
                self.by_model
                    .entry(call.model.clone())
                    .or_default()
                    .add(call.usage);
                self.last_model = Some(call.model.clone());
                // Only a sub-agent speaks for its frame: an answer check's "no" or a tool's
                // generated code are not its last words.
                if let Some(parent) = &call.parent
                    && call.purpose() == Purpose::SubAgent
                    && !call.content.trim().is_empty()
                    && let Some(frame) = self.calls.get_mut(parent)
                {
                    frame.said = Some(summarize(&call.content, 2000));
                }
                // Every frame above a sub-agent's call counts it in its subtree.
                let mut frame = call.parent.clone();
                let mut hops = 0;
                while let Some(id) = frame {
                    self.subtree
                        .entry(id.clone())
                        .or_default()
                        .entry(call.model.clone())
                        .or_default()
                        .add(call.usage);
                    frame = self.calls.get(&id).and_then(|c| c.parent.clone());
                    hops += 1;
                    // A doctored trace could make a cycle of parents.
                    if hops > self.calls.len() {
                        break;
                    }
                }
            }
            EventData::UsageReported(usage) => self.reported(usage),
            EventData::ApprovalRevoked { grant } => self.grants.revoked(grant),
            EventData::ModeChanged { mode } => self.mode = *mode,
            EventData::GrantUsed { id, grant, .. } => {
                self.grants.used(grant);
                if let Some(call) = self.calls.get_mut(id) {
                    call.via = Some(Via::Granted(grant.clone()));
                }
            }
            EventData::Compacted(compacted) => {
                self.run_usage.add(compacted.usage);
                self.usage.add(compacted.usage);
                if let Some(model) = &self.last_model {
                    self.by_model
                        .entry(model.clone())
                        .or_default()
                        .add(compacted.usage);
                }
                if compacted.parent.is_none() && compacted.error.is_none() {
                    self.context = Some(ContextGauge {
                        used: compacted.after_tokens,
                        window: compacted.window,
                    });
                }
            }
            EventData::ToolCall {
                id,
                name,
                parent,
                sandbox,
                arguments,
                ..
            } => {
                self.made += 1;
                if name == crate::tools::builtin::todo_write::NAME {
                    self.todo_made.insert(id.clone(), self.made);
                }
                let call = self.add(id, name, parent.as_deref(), event.timestamp);
                call.sandbox = *sandbox;
                call.summary = crate::todo::call_summary(name, arguments)
                    .unwrap_or_else(|| argument_summary(arguments));
                call.arguments = Some(arguments.clone());
            }
            EventData::StackPush(frame) => {
                // Frames without a call (parameter collection) nest like calls.
                if !self.calls.get(&frame.id).is_some_and(|c| c.state.is_open()) {
                    let parent = frame.parent.as_deref();
                    self.add(&frame.id, &frame.name, parent, event.timestamp);
                }
                if let Some(call) = self.calls.get_mut(&frame.id)
                    && !frame.summary.is_empty()
                {
                    call.summary.clone_from(&frame.summary);
                }
                self.set_state(&frame.id, frame.state, event.timestamp);
            }
            EventData::StackPop(frame) => {
                // Popped without a push or a call (refused before it ran): still a call.
                if !self.calls.contains_key(&frame.id) {
                    let parent = frame.parent.as_deref();
                    self.add(&frame.id, &frame.name, parent, event.timestamp);
                }
                // A frame without a result of its own (parameter collection) ends here; a
                // call's result says more and comes first.
                if let Some(call) = self.calls.get_mut(&frame.id)
                    && call.state.is_open()
                {
                    let status = match frame.state {
                        FrameState::Done => ToolStatus::Ok,
                        FrameState::Denied => ToolStatus::Denied,
                        FrameState::Cancelled => ToolStatus::Cancelled,
                        _ => ToolStatus::Failed,
                    };
                    call.end(CallState::Ended(status), event.timestamp);
                }
            }
            EventData::ToolOutput { id, tail } => {
                if let Some(call) = self.calls.get_mut(id) {
                    call.tail = Some(tail.clone());
                    call.output_ms = Some(event.timestamp);
                }
            }
            EventData::ToolProgress {
                id,
                progress,
                total,
                message,
            } => {
                if let Some(call) = self.calls.get_mut(id) {
                    call.progress = Some(Progress {
                        progress: *progress,
                        total: *total,
                        message: message.clone(),
                    });
                }
            }
            EventData::ApprovalRequested {
                id,
                name,
                arguments,
                position,
                of,
                sandbox,
                ..
            } => {
                // Asked again (its file changed while the dialog was open): still one approval.
                if !self.approvals.iter().any(|a| a.call.id == *id) {
                    self.approvals.push(OpenApproval {
                        call: ApprovalRequest {
                            id: id.clone(),
                            name: name.clone(),
                            arguments: arguments.clone(),
                            sandbox: *sandbox,
                        },
                        position: (*position, *of),
                    });
                }
                self.set_state(id, FrameState::AwaitingApproval, event.timestamp);
                // The batch's other calls wait for the answers: queued, not running.
                for (other, call) in &mut self.calls {
                    if other != id && call.state == CallState::Proposed {
                        call.state = CallState::Queued;
                    }
                }
            }
            EventData::ApprovalDecided {
                id,
                name,
                decision,
                scope,
                prefix,
                reason,
            } => {
                self.approvals.retain(|a| a.call.id != *id);
                if *decision == Decision::Approved {
                    if let Some(prefix) = prefix {
                        self.grants.prefix(prefix, event.timestamp);
                    }
                    self.grants.tool(name, *scope, event.timestamp);
                    self.set_state(id, FrameState::Running, event.timestamp);
                    if let Some(call) = self.calls.get_mut(id) {
                        call.via = Some(Via::Approved {
                            scope: *scope,
                            prefix: prefix.clone(),
                        });
                    }
                } else if let Some(call) = self.calls.get_mut(id) {
                    call.reason.clone_from(reason);
                    call.move_to(CallState::Ended(ToolStatus::Denied), event.timestamp);
                }
            }
            EventData::InputRequested(request) => {
                self.asked.insert(request.id.clone(), request.clone());
                self.questions.push(request.clone());
            }
            EventData::InputAnswered { id, .. } => self.questions.retain(|q| q.id != *id),
            EventData::ToolResult {
                id,
                name,
                ok,
                status,
                result,
                ..
            } => {
                let top_level = self.calls.get(id).is_none_or(|c| c.parent.is_none());
                // Only the user's agent writes the checklist: a sub-agent's list is its own.
                if top_level
                    && name == crate::tools::builtin::todo_write::NAME
                    && ToolStatus::of(*status, *ok, result.as_ref()) == ToolStatus::Ok
                    && let Some(list) = result.as_ref().and_then(TodoList::from_result)
                {
                    let made = self.todo_made.get(id).copied().unwrap_or(self.made);
                    if made >= self.todos_made {
                        self.todos = list;
                        self.todos_made = made;
                    }
                }
                // A call the user denied stays denied (files from before `status` existed
                // record its result as a plain failure).
                if let Some(call) = self.calls.get_mut(id)
                    && call.state != CallState::Ended(ToolStatus::Denied)
                {
                    let status = ToolStatus::of(*status, *ok, result.as_ref());
                    call.result(status, result.as_ref(), event.timestamp);
                }
                // The last result of a batch means the model is called again: the next turn.
                // A nested call's result goes to its tool or sub-agent, not the model.
                if top_level && self.results_due > 0 {
                    self.results_due -= 1;
                    if self.results_due == 0 {
                        self.turn = (self.turn + 1).min(self.max_turns.max(1));
                    }
                }
            }
            // Only the end of the run in progress ends it (a max-turns run reports an error
            // and then its final answer; a session problem has no run).
            EventData::Final { .. } | EventData::Cancelled { .. } | EventData::Error { .. }
                if self.current.as_ref() == Some(&event.request_id) =>
            {
                // Calls still open when the run ends did not finish: cancelled with it, or
                // failed with it on an error.
                let status = match event.data {
                    EventData::Error { .. } => ToolStatus::Failed,
                    _ => ToolStatus::Cancelled,
                };
                for call in self.calls.values_mut().filter(|c| c.state.is_open()) {
                    call.end(CallState::Ended(status), event.timestamp);
                }
                self.end_run();
                return true;
            }
            _ => {}
        }
        false
    }

    /// Folds a whole recorded stream in.
    pub fn replay<'e>(events: impl IntoIterator<Item = &'e Event>) -> Self {
        let mut model = Self::new();
        for event in events {
            model.apply(event);
        }
        model
    }

    /// A resumed session starts in a new process: grants belonged to the old one, and
    /// nothing is running or waiting.
    pub fn resumed(&mut self) {
        self.end_run();
        self.grants.clear();
        self.llm.resumed();
    }

    /// A new conversation (`/clear`): its turn and token counts start again; session
    /// grants stay.
    pub fn cleared(&mut self) {
        self.todos = TodoList::default();
        self.usage = Usage::default();
        self.turn = 0;
        self.context = None;
    }

    /// The session's runs and their calls, as a rewind sees them.
    pub fn turns(&self) -> &Turns {
        &self.turns
    }

    /// Provider calls of the run in progress (or the last run), from start to end.
    pub fn llm(&self) -> &ModelCalls {
        &self.llm
    }

    /// How full the user's conversation is, once a model call has said.
    pub fn context(&self) -> Option<ContextGauge> {
        self.context
    }

    /// The agent's checklist (empty until a `todo_write`).
    pub fn todos(&self) -> &TodoList {
        &self.todos
    }

    /// The permission mode.
    pub fn mode(&self) -> crate::event::Mode {
        self.mode
    }

    fn end_run(&mut self) {
        self.current = None;
        self.approvals.clear();
        self.questions.clear();
        self.results_due = 0;
        self.grants.end_run();
    }

    /// The call `id`, made at `at` unless it is open already. An id a model reuses after
    /// its call ended names a new call (some servers number calls afresh every turn).
    fn add(&mut self, id: &str, name: &str, parent: Option<&str>, at: u64) -> &mut CallNode {
        let fresh = self.calls.get(id).is_none_or(|c| !c.state.is_open());
        if fresh {
            if self.calls.contains_key(id) {
                self.order.retain(|o| o != id);
            }
            let depth = self.depth_under(parent);
            let call = CallNode::new(name, parent, depth, at);
            self.calls.insert(id.to_string(), call);
            self.order.push(id.to_string());
        }
        self.calls
            .entry(id.to_string())
            .or_insert_with(|| CallNode::new(name, parent, 0, at))
    }

    fn set_state(&mut self, id: &str, state: FrameState, at: u64) {
        let Some(call) = self.calls.get_mut(id) else {
            return;
        };
        let state = match state {
            FrameState::AwaitingApproval => CallState::AwaitingApproval,
            FrameState::AwaitingInput => CallState::AwaitingInput,
            FrameState::Running => CallState::Running,
            FrameState::Queued => CallState::Queued,
            FrameState::Done => CallState::Ended(ToolStatus::Ok),
            FrameState::Failed => CallState::Ended(ToolStatus::Failed),
            FrameState::Denied => CallState::Ended(ToolStatus::Denied),
            FrameState::Cancelled => CallState::Ended(ToolStatus::Cancelled),
        };
        call.move_to(state, at);
    }
}

#[cfg(test)]
#[path = "run_model/tests.rs"]
mod tests;
