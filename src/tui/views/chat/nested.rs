//! Nested work in the chat: cells under the call that started them (a sub-agent's turns,
//! nested calls, answers to questions), so a delegate's work reads as a tree.

use super::cell::{CellKind, NoteStyle};
use super::{Cell, ChatState};
use crate::event::{InputKind, InputRequest, LlmCall, WorkflowAbandoned};
use crate::run_model::RunModel;
use crate::tui::theme::duration;

impl ChatState {
    /// Adds a cell at the end of the subtree of the tool cell `parent`, one level deeper, so
    /// nested work reads as a tree under the call that started it. Returns its index.
    pub(super) fn push_nested(
        &mut self,
        parent: usize,
        kind: impl FnOnce(usize) -> CellKind,
    ) -> usize {
        let level = self.cells.get(parent).map_or(0, Cell::nesting);
        let mut at = parent + 1;
        while self.cells.get(at).is_some_and(|c| c.nesting() > level) {
            at += 1;
        }
        let kind = kind(level + 1);
        if at >= self.cells.len() {
            return self.push(kind);
        }
        self.insert(at, kind);
        at
    }

    /// A nested model call (a sub-agent's turn, an answer check, a tool's request): one dim
    /// line under the call it runs for, saying which (what it said or which tools it asked
    /// for); nothing changes in the top-level answer.
    pub(super) fn sub_turn(&mut self, parent: &str, call: &LlmCall, run: &RunModel) {
        let Some(&cell) = self.run.tools.get(parent) else {
            return;
        };
        let tool = run.call(parent).map(|c| c.name.as_str());
        let mut text = call.purpose().label(call.turn, tool);
        // The line is cut to the pane anyway: a few dozen words are plenty.
        // Code a tool asked for often comes fenced; the fence line says nothing.
        let content = call.content.trim_start();
        let content = match content.strip_prefix("```") {
            Some(fenced) => fenced.split_once('\n').map_or("", |(_, code)| code),
            None => content,
        };
        let said = (content.split_whitespace().take(40))
            .collect::<Vec<_>>()
            .join(" ");
        if !said.is_empty() {
            text.push_str(&format!(" · “{said}”"));
        }
        match call.tool_calls.len() {
            0 => {}
            1 => text.push_str(" · 1 tool call"),
            n => text.push_str(&format!(" · {n} tool calls")),
        }
        text.push_str(&format!(" · {}", duration(call.duration_ms)));
        self.push_nested(cell, |depth| CellKind::Nested {
            depth,
            mark: "◆",
            text,
        });
    }

    /// The question dialog closed: one dim line under the call that asked says what became
    /// of it (the dialog itself leaves no trace in the chat).
    pub(super) fn answered(&mut self, request: &InputRequest, run: &RunModel, value: Option<&str>) {
        let parameter = request.parameter.as_deref().unwrap_or("the value");
        let limit = request
            .depth
            .map_or_else(|| "depth limit".to_string(), |d| format!("depth limit {d}"));
        let (mark, text) = match (request.kind, value) {
            (InputKind::Parameter, Some(value)) => ("✎", format!("{parameter}: {value}")),
            (InputKind::Parameter, None) => {
                ("⊘", format!("no {parameter} given: the task was abandoned"))
            }
            (InputKind::DepthLimit, Some(_)) => ("↻", format!("{limit}: 20 levels more")),
            (InputKind::DepthLimit, None) => ("⊘", format!("{limit}: the nested work stops")),
            (InputKind::Submit | InputKind::Form, Some(_)) => {
                ("✎", "the form was sent".to_string())
            }
            (InputKind::Submit | InputKind::Form, None) => {
                ("⊘", "the form was not sent".to_string())
            }
            (InputKind::Plan, Some(answer)) => match answer.trim() {
                "a" | "A" | "y" | "yes" => ("✔", "plan approved (ask mode)".to_string()),
                "e" | "E" => ("✔", "plan approved (auto-edit mode)".to_string()),
                _ => ("✎", format!("plan feedback: {answer}")),
            },
            (InputKind::Plan, None) => ("⊘", "the plan was left as it is".to_string()),
        };
        self.nested_answer(request, run, mark, text);
    }

    /// A form closed: what the server got (how many fields, or declined, or cancelled).
    pub(super) fn form_answered(
        &mut self,
        request: &InputRequest,
        run: &RunModel,
        answer: &crate::tools::AskReply,
    ) {
        let (mark, text) = match answer {
            crate::tools::AskReply::Accept(content) => {
                let n = content.len();
                let fields = if n == 1 { "field" } else { "fields" };
                ("✎", format!("form sent to {}: {n} {fields}", request.tool))
            }
            crate::tools::AskReply::Decline => ("⊘", format!("form declined: {}", request.tool)),
            crate::tools::AskReply::Cancel => ("⊘", format!("form cancelled: {}", request.tool)),
        };
        self.nested_answer(request, run, mark, text);
    }

    /// One dim line under the call that asked.
    fn nested_answer(
        &mut self,
        request: &InputRequest,
        run: &RunModel,
        mark: &'static str,
        text: String,
    ) {
        // The question's frame hangs under the call that needs the answer.
        let call = (run.parent(&request.frame))
            .and_then(|parent| self.run.tools.get(parent))
            .or_else(|| self.run.tools.get(&request.frame))
            .copied();
        match call {
            Some(cell) => {
                self.push_nested(cell, |depth| CellKind::Nested { depth, mark, text });
            }
            None => {
                self.push(CellKind::Notice {
                    style: NoteStyle::Dim,
                    text: format!("{mark} {} · {text}", request.tool),
                });
            }
        }
    }

    /// A reply to a question was a new request: the workflow that asked was abandoned (its
    /// cell shows it failed). The request itself follows as the user's message.
    pub(super) fn abandoned(&mut self, abandoned: &WorkflowAbandoned, ts: u64) {
        self.close_streams(Some(ts));
        self.push(CellKind::Notice {
            style: NoteStyle::Warn,
            text: format!("workflow abandoned: new request ({})", abandoned.tool),
        });
    }
}
