//! How orchestrator events become cells: streaming text and reasoning, tool-call states,
//! errors and notices.

use super::cell::{CellKind, NoteStyle};
use super::notices;
use super::tool::Tool;
use super::{Cell, ChatState, RunState};
use crate::event::{DeltaKind, Event, EventData};
use crate::run_model::RunModel;

impl ChatState {
    /// Applies one orchestrator event (see [`ChatState::on_event`]).
    pub(super) fn apply(&mut self, event: &Event, run: &RunModel) {
        let ts = event.timestamp;
        match &event.data {
            EventData::RunStarted { .. } => {
                self.close_streams(Some(ts));
                self.run = RunState::default();
            }
            EventData::ImagesAttached { images } => self.image_chips(images),
            EventData::UserShell(shell) => self.user_shell(shell),
            EventData::Delta { kind, text } => match kind {
                DeltaKind::Text => self.text_delta(text, ts),
                DeltaKind::Reasoning => self.reasoning_delta(text, ts),
            },
            // A sub-agent's calls never stream and never speak for the top-level agent.
            EventData::LlmCall(call) => match &call.parent {
                Some(parent) => self.sub_turn(parent, call, run),
                None => self.llm_call(call, ts),
            },
            EventData::ToolCall {
                id,
                name,
                arguments,
                parent,
                sandbox,
                ..
            } => {
                let mut tool = Tool::new(name, arguments);
                tool.sandbox = *sandbox;
                let nested = parent
                    .as_deref()
                    .and_then(|p| self.run.tools.get(p).copied());
                let i = match nested {
                    Some(parent) => self.push_nested(parent, |depth| {
                        let mut tool = tool;
                        tool.depth = depth;
                        CellKind::Tool(Box::new(tool))
                    }),
                    None => {
                        self.close_streams(Some(ts));
                        self.push(CellKind::Tool(Box::new(tool)))
                    }
                };
                self.run.tools.insert(id.clone(), i);
                self.sync_tool(id, run);
            }
            EventData::ApprovalRequested { id, diff, .. } => {
                self.update_tool(id, |tool| tool.diff.clone_from(diff));
                // The batch's other calls wait for the answers: the run model says queued.
                self.sync_open(run);
            }
            EventData::ApprovalDecided { id, .. } => self.sync_tool(id, run),
            EventData::ToolResult {
                id, result, error, ..
            } => self.update_tool(id, |tool| {
                tool.result.clone_from(result);
                tool.error.clone_from(error);
                if let Some(call) = run.call(id) {
                    tool.sync(call);
                }
            }),
            EventData::StackPush(frame) | EventData::StackPop(frame) => {
                self.sync_tool(&frame.id, run);
            }
            EventData::Retry {
                attempt,
                max,
                reason,
                delay_ms,
            } => {
                self.discard_attempt();
                let delay = *delay_ms as f64 / 1000.0;
                self.push(CellKind::Notice {
                    style: NoteStyle::Warn,
                    text: format!("retrying {attempt}/{max} in {delay:.1} s: {reason}"),
                });
            }
            // A sub-agent's compaction and loops show in the timeline only.
            EventData::Compacted(c) if c.parent.is_none() => {
                self.close_streams(Some(ts));
                let (style, text) = notices::compacted(c);
                self.push(CellKind::Notice { style, text });
            }
            EventData::LoopWarning {
                name,
                times,
                parent: None,
                ..
            } => {
                let text = notices::repeated(name, *times);
                self.push(CellKind::Notice {
                    style: NoteStyle::Warn,
                    text,
                });
            }
            // The timeline and `/tools` count these; the call's own cell says enough.
            EventData::GrantUsed { .. } => {}
            EventData::ApprovalRevoked { grant } => {
                let text = notices::revoked(grant);
                self.push(CellKind::Notice {
                    style: NoteStyle::Markdown,
                    text,
                });
            }
            EventData::Compacted(_) | EventData::LoopWarning { .. } => {}
            EventData::ModelSwitched(chosen) => {
                self.close_streams(Some(ts));
                self.push(CellKind::Notice {
                    style: NoteStyle::Markdown,
                    text: notices::switched(&chosen.provider, &chosen.model),
                });
            }
            EventData::MaxTurnsReached { turns } => {
                self.close_streams(Some(ts));
                self.push(CellKind::Notice {
                    style: NoteStyle::Warn,
                    text: format!(
                        "turn limit ({turns}) reached: asking the model for a final answer"
                    ),
                });
            }
            EventData::FilesChanged(changed) if !changed.files.is_empty() => {
                self.close_streams(Some(ts));
                self.push(CellKind::Changes(Box::new(super::changes::Changes {
                    event: (**changed).clone(),
                    diffs: super::changes::Diffs::NotAsked,
                })));
            }
            EventData::Rewound(rewound) => {
                self.close_streams(Some(ts));
                self.push(CellKind::Notice {
                    style: NoteStyle::Markdown,
                    text: notices::rewound(rewound),
                });
            }
            EventData::Checkpoint(cp) => {
                if let Some(error) = &cp.error {
                    self.push(CellKind::Notice {
                        style: NoteStyle::Warn,
                        text: format!("no checkpoint before this change: {error}"),
                    });
                }
            }
            EventData::FilesChanged(_) => {}
            // A hook's span is the timeline's; what it decided shows where it acted (a call's
            // result, a blocked prompt's error).
            EventData::Hook(_) => {}
            EventData::ModeChanged { mode } => {
                self.push(CellKind::Notice {
                    style: NoteStyle::Dim,
                    text: format!(
                        "mode: {} (Shift-Tab cycles ask → auto-edit → plan)",
                        mode.name()
                    ),
                });
            }
            // The pickers take what was listed; the chat has nothing to show.
            EventData::MaxTurnsPromptInjected { .. } | EventData::Listed(_) => {}
            // The status line shows an external agent's usage.
            EventData::UsageReported(_) => {}
            // The run's `error` says what the budget stopped, and what was spent.
            EventData::BudgetReached(_) => {}
            // The latest report shows under the call's cell while it runs.
            EventData::ToolProgress { id, .. } => self.sync_tool(id, run),
            // A model call's span is the timeline's; the chat shows what it said.
            EventData::LlmStarted(_) | EventData::LlmProgress(_) | EventData::LlmFailed(_) => {}
            // A running command's last lines show under its cell until it ends.
            EventData::ToolOutput { id, .. } => self.sync_tool(id, run),
            // The question shows in its own dialog; the answer goes to the tool.
            EventData::InputRequested(_) => {}
            EventData::WorkflowAbandoned(abandoned) => self.abandoned(abandoned, ts),
            EventData::InputAnswered { id, value, form } => {
                if let Some(request) = run.question(id) {
                    match form {
                        Some(answer) => self.form_answered(request, run, answer),
                        None => self.answered(request, run, value.as_deref()),
                    }
                }
            }
            // The answer already arrived with its `llm_call`.
            EventData::Final { .. } => {
                self.close_streams(Some(ts));
                self.sync_open(run);
            }
            EventData::Error { kind, message } => {
                self.close_streams(Some(ts));
                self.sync_open(run);
                self.push(CellKind::Error {
                    kind: kind.clone(),
                    message: message.clone(),
                });
            }
            EventData::Cancelled { .. } => {
                self.close_streams(Some(ts));
                self.sync_open(run);
                self.push(CellKind::Notice {
                    style: NoteStyle::Dim,
                    text: "■ cancelled".to_string(),
                });
            }
        }
    }

    /// Adds a cell; a blank line separates it from the previous one unless both are tool calls.
    pub(super) fn push(&mut self, kind: CellKind) -> usize {
        let after_tool = self
            .cells
            .last()
            .is_some_and(|c| Cell::is_tool_like(&c.kind));
        let gap = !(self.cells.is_empty() || after_tool && Cell::is_tool_like(&kind));
        self.cells.push(Cell::new(kind, gap, self.clock()));
        self.changed();
        self.cells.len() - 1
    }

    /// Inserts a cell before `at`, shifting every index that points at or after it.
    pub(super) fn insert(&mut self, at: usize, kind: CellKind) {
        let at = at.min(self.cells.len());
        let tool_like = Cell::is_tool_like(&kind);
        let after_tool = at > 0
            && self
                .cells
                .get(at - 1)
                .is_some_and(|c| Cell::is_tool_like(&c.kind));
        let gap = at > 0 && !(after_tool && tool_like);
        self.cells.insert(at, Cell::new(kind, gap, self.clock()));
        if let Some(next) = self.cells.get_mut(at + 1) {
            // Tool lines stay together; anything else keeps a blank line before it.
            let next_gap = !(tool_like && Cell::is_tool_like(&next.kind));
            if next.gap != next_gap {
                next.gap = next_gap;
                next.invalidate();
            }
        }
        let shift = |i: &mut usize| {
            if *i >= at {
                *i += 1;
            }
        };
        let run = &mut self.run;
        run.text_open.iter_mut().for_each(shift);
        run.reasoning_open.iter_mut().for_each(shift);
        run.assistant.iter_mut().for_each(shift);
        run.turn_text.iter_mut().for_each(shift);
        run.turn_reasoning.iter_mut().for_each(shift);
        run.tools.values_mut().for_each(shift);
        self.selected.iter_mut().for_each(shift);
        if !self.following && self.anchor.cell >= at {
            self.anchor.cell += 1;
        }
        self.changed();
    }

    /// A retry starts the model call again: what the failed attempt streamed leaves the chat
    /// (the conversation never kept it), so the answer is not shown twice.
    fn discard_attempt(&mut self) {
        let mut doomed: Vec<usize> = self
            .run
            .turn_text
            .iter()
            .chain(&self.run.turn_reasoning)
            .copied()
            .collect();
        doomed.sort_unstable();
        doomed.dedup();
        // The attempt's cells are the newest ones (tool cells only follow a finished call);
        // dropping the tail renumbers nothing that other state points at.
        if let Some(&first) = doomed.first()
            && first + doomed.len() == self.cells.len()
            && doomed.iter().enumerate().all(|(k, &i)| i == first + k)
        {
            self.cells.truncate(first);
            if self.run.assistant.is_some_and(|i| i >= first) {
                self.run.assistant = None;
            }
            if self.selected.is_some_and(|i| i >= first) {
                self.selected = None;
            }
            if !self.following && self.anchor.cell >= first {
                self.anchor.cell = first.saturating_sub(1);
                self.anchor.line = 0;
            }
        }
        self.run.text_open = None;
        self.run.reasoning_open = None;
        self.run.turn_text.clear();
        self.run.turn_reasoning.clear();
        self.run.pending_blank.clear();
        self.changed();
    }

    pub(super) fn changed(&mut self) {
        if !self.following {
            self.unseen = true;
        }
    }

    /// Shows the images of the latest request as chips in its user cell.
    fn image_chips(&mut self, images: &[crate::images::Image]) {
        let Some(i) = (0..self.cells.len())
            .rev()
            .find(|&i| matches!(self.cells[i].kind, CellKind::User(_)))
        else {
            return;
        };
        self.update_cell(i, |kind| {
            if let CellKind::User(user) = kind {
                user.images = images.iter().map(crate::images::Image::chip).collect();
            }
        });
    }

    pub(super) fn update_cell(&mut self, i: usize, f: impl FnOnce(&mut CellKind)) {
        if let Some(cell) = self.cells.get_mut(i) {
            f(&mut cell.kind);
            cell.invalidate();
            self.changed();
        }
    }

    /// Copies the run model's view of call `id` into its cell.
    fn sync_tool(&mut self, id: &str, run: &RunModel) {
        if let Some(call) = run.call(id) {
            self.update_tool(id, |tool| tool.sync(call));
        }
    }

    /// Copies the run model's view into every cell of a call still open.
    fn sync_open(&mut self, run: &RunModel) {
        let open: Vec<String> = (self.run.tools.iter())
            .filter(|(_, i)| {
                matches!(self.cells.get(**i).map(|c| &c.kind), Some(CellKind::Tool(t)) if t.is_open())
            })
            .map(|(id, _)| id.clone())
            .collect();
        for id in open {
            self.sync_tool(&id, run);
        }
    }

    pub(super) fn update_tool(&mut self, id: &str, f: impl FnOnce(&mut Tool)) {
        if let Some(&i) = self.run.tools.get(id) {
            self.update_cell(i, |kind| {
                if let CellKind::Tool(tool) = kind {
                    f(tool);
                }
            });
        }
    }
}
