//! One timeline row per trace event: its symbol, tone, one-line name and time span.

use std::sync::Arc;

pub(super) use super::filter::Filter;
use super::label::{grant_label, one_line, sandboxed, summary, titled};
use super::model_row;
pub(super) use super::row_labels::Tone;
use super::row_labels::{approval_asked, approval_decided, hook_label, rewound_label};
use super::store::Payload;

use crate::config::pricing::Pricing;
use crate::event::{Event, EventData, InputKind, ToolStatus};
use crate::run_model::RunModel;

/// What kind of event a row shows: all that filters, spans and grouping need of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Kind {
    /// A model call: in flight (`pending`) or answered.
    Llm,
    /// A model call that failed or was cancelled.
    LlmFailed,
    Compacted,
    ToolCall,
    /// A hook's run (a span); `ok`: it did not deny or fail.
    Hook {
        ok: bool,
    },
    ToolResult {
        ok: bool,
    },
    /// A call's progress (one row per call, updated in place).
    Progress,
    ApprovalAsked,
    ApprovalDecided,
    Revoked,
    Question,
    Answer,
    /// An error, retry, limit, loop warning or cancellation.
    Problem,
    Other,
}

impl Kind {
    fn of(data: &EventData) -> Self {
        match data {
            EventData::LlmStarted(_) | EventData::LlmCall(_) => Self::Llm,
            EventData::LlmFailed(_) => Self::LlmFailed,
            EventData::Compacted(_) => Self::Compacted,
            EventData::ToolCall { .. } => Self::ToolCall,
            EventData::Hook(h) => Self::Hook {
                ok: h.error.is_none() && h.decision != Some(crate::event::HookDecision::Deny),
            },
            EventData::ToolResult {
                ok, status, result, ..
            } => Self::ToolResult {
                ok: ToolStatus::of(*status, *ok, result.as_ref()).is_ok(),
            },
            EventData::ToolProgress { .. } => Self::Progress,
            EventData::ApprovalRequested { .. } => Self::ApprovalAsked,
            EventData::ApprovalDecided { .. } => Self::ApprovalDecided,
            EventData::ApprovalRevoked { .. } => Self::Revoked,
            EventData::GrantUsed { .. } => Self::ApprovalDecided,
            EventData::InputRequested(_) => Self::Question,
            EventData::InputAnswered { .. } => Self::Answer,
            EventData::Error { .. }
            | EventData::Retry { .. }
            | EventData::MaxTurnsReached { .. }
            | EventData::BudgetReached(_)
            | EventData::MaxTurnsPromptInjected { .. }
            | EventData::LoopWarning { .. }
            | EventData::Cancelled { .. } => Self::Problem,
            _ => Self::Other,
        }
    }
}

/// One row of the timeline: what it draws, and its event packed for the detail view.
#[derive(Debug, Clone)]
pub(super) struct Row {
    pub kind: Kind,
    /// The run (request id) the row belongs to: its bar is drawn on that run's axis.
    pub run: Arc<str>,
    /// Where the whole event is kept (`store`), for the detail view.
    pub payload: Option<Payload>,
    pub symbol: &'static str,
    pub tone: Tone,
    /// One line, no control characters.
    pub name: Box<str>,
    /// Unix ms.
    pub start: u64,
    /// Unix ms; equal to `start` for instants.
    pub end: u64,
    /// A tool call still waiting for its result: its bar runs to the end of the axis.
    pub pending: bool,
    /// For a tool call: the row of its result, once it arrived.
    pub link: Option<u32>,
    /// For a tool call that ended: how long it ran, by the run model (its span also covers
    /// its waits for approval or a slot, drawn as such).
    pub took: Option<u32>,
    /// Nesting level of the work (0: the top-level agent), from the `parent` chain.
    pub depth: u16,
    /// For a tool call: when it waited for approval (the end once decided).
    pub wait: Option<(u64, Option<u64>)>,
    /// For the first row of a run: how long nothing ran since the run before.
    pub idle_before: Option<u64>,
}

impl Row {
    /// The row for a trace event; `None` for deltas and stack events, which the timeline
    /// leaves out (the stack pane shows frames; deltas end up in `llm_call`).
    pub(super) fn from_event(event: &Event, pricing: &Pricing, run: &RunModel) -> Option<Self> {
        let at = event.timestamp;
        let mut start = at;
        let mut pending = false;
        let (symbol, tone, name) = match &event.data {
            EventData::Delta { .. }
            | EventData::LlmProgress(_)
            | EventData::ToolOutput { .. }
            | EventData::Listed(_)
            | EventData::StackPush(_)
            | EventData::StackPop(_)
            // An external agent's usage: the status line's gauge and cost.
            | EventData::UsageReported(_) => {
                return None;
            }
            // A checkpoint that was taken is the call's; one that failed is worth a row.
            EventData::Checkpoint(cp) => match &cp.error {
                None => return None,
                Some(error) => (
                    "◇",
                    Tone::Warn,
                    format!("no checkpoint: {}", one_line(error)),
                ),
            },
            EventData::FilesChanged(changed) => ("✎", Tone::Tool, changed.headline()),
            // Its payload view shows the references (name, size, hash), never the bytes.
            EventData::ImagesAttached { images } => {
                let chips: Vec<String> = images.iter().map(crate::images::Image::label).collect();
                ("🖼", Tone::Text, one_line(&chips.join(", ")))
            }
            EventData::ModeChanged { mode } => ("◐", Tone::Dim, format!("mode: {}", mode.name())),
            EventData::Hook(hook) => {
                start = at.saturating_sub(hook.duration_ms);
                hook_label(hook)
            }
            EventData::Rewound(rewound) => ("⟲", Tone::Warn, rewound_label(rewound)),
            // The user's `!` command: one row when it ends.
            EventData::UserShell(shell) if shell.is_running() => return None,
            EventData::UserShell(shell) => {
                let how = match (shell.state, shell.exit_code) {
                    (crate::event::UserShellState::Exited, Some(code)) => format!("exit {code}"),
                    (state, _) => format!("{state:?}").to_lowercase(),
                };
                let tone = match shell.exit_code {
                    Some(0) => Tone::Tool,
                    _ => Tone::Warn,
                };
                (
                    "!",
                    tone,
                    format!("user ran {} · {how}", one_line(&shell.command)),
                )
            }
            EventData::ModelSwitched(chosen) => (
                "⇄",
                Tone::Llm,
                format!(
                    "switched to {} · {}",
                    one_line(&chosen.provider),
                    one_line(&chosen.model)
                ),
            ),
            EventData::InputRequested(request) => {
                let asks = match (request.kind, request.parameter.as_deref()) {
                    (InputKind::Parameter, Some(parameter)) => format!("asks for {parameter}"),
                    (InputKind::DepthLimit, _) => match request.depth {
                        Some(depth) => format!("depth limit {depth}: continue?"),
                        None => "depth limit: continue?".to_string(),
                    },
                    (InputKind::Submit, _) => "send the form?".to_string(),
                    (InputKind::Plan, _) => "approve the plan?".to_string(),
                    (InputKind::Form, _) => match &request.form {
                        Some(form) => format!("a form of {} fields", form.fields.len()),
                        None => "a form".to_string(),
                    },
                    _ => format!("asks: {}", request.prompt),
                };
                ("?", Tone::Warn, titled(&request.tool, &asks))
            }
            EventData::WorkflowAbandoned(abandoned) => (
                "⊘",
                Tone::Warn,
                format!(
                    "workflow abandoned: new request · {}",
                    one_line(&abandoned.tool)
                ),
            ),
            EventData::InputAnswered { value, form, .. } => match (value, form) {
                (_, Some(crate::tools::AskReply::Accept(content))) => (
                    "✎",
                    Tone::Text,
                    format!("form sent: {} fields", content.len()),
                ),
                (_, Some(crate::tools::AskReply::Decline)) => {
                    ("⊘", Tone::Warn, "form declined".to_string())
                }
                (_, Some(crate::tools::AskReply::Cancel)) => {
                    ("⊘", Tone::Warn, "form cancelled".to_string())
                }
                (Some(value), None) => ("✎", Tone::Text, titled("answered", value)),
                (None, None) => ("⊘", Tone::Warn, "declined".to_string()),
            },
            EventData::RunStarted {
                prompt,
                provider,
                model,
                ..
            } => (
                "▶",
                Tone::Text,
                format!("run · {provider}/{model} · {}", one_line(prompt)),
            ),
            EventData::LlmStarted(started) => {
                pending = true;
                let name = match run.llm().get(&event.request_id, started.call) {
                    Some(node) => model_row::live_name(node, run),
                    None => model_row::who(
                        started.purpose,
                        started.turn,
                        started.parent.as_deref(),
                        run,
                    ),
                };
                (model_row::LIVE, Tone::Llm, name)
            }
            EventData::LlmCall(call) => {
                let (symbol, tone, name, from) =
                    model_row::answered(call, at, &event.request_id, pricing, run);
                start = from;
                (symbol, tone, name)
            }
            EventData::LlmFailed(failed) => {
                let (symbol, tone, name, from) =
                    model_row::failed(failed, at, &event.request_id, run);
                start = from;
                (symbol, tone, name)
            }
            EventData::ToolCall {
                name,
                arguments,
                sandbox,
                ..
            } => {
                pending = true;
                let rest = crate::todo::call_summary(name, arguments)
                    .unwrap_or_else(|| summary(arguments));
                let name = sandboxed(&crate::mcp::names::display(name), *sandbox);
                ("→", Tone::Tool, titled(&name, &rest))
            }
            EventData::ToolResult {
                id,
                name,
                ok,
                status,
                result,
                error,
                duration_ms,
                ..
            } => {
                let name = &*crate::mcp::names::display(name);
                // The run model folded this result first: its status and its clock are the
                // ones every pane shows (a call it never saw falls back to the event).
                let node = run.call(id);
                let status = (node.and_then(|c| c.state.status()))
                    .unwrap_or_else(|| ToolStatus::of(*status, *ok, result.as_ref()));
                start = match node.and_then(|c| c.duration_ms) {
                    Some(took) => at.saturating_sub(took),
                    None => at.saturating_sub(*duration_ms),
                };
                super::ended::label(name, status, error.as_deref(), node)
            }
            EventData::ApprovalRequested {
                name,
                arguments,
                position,
                of,
                sandbox,
                ..
            } => approval_asked(name, arguments, (*position, *of), *sandbox),
            EventData::ApprovalDecided {
                name,
                decision,
                scope,
                reason,
                prefix,
                ..
            } => approval_decided(name, *decision, *scope, reason.as_deref(), prefix.clone()),
            EventData::ToolProgress {
                progress,
                total,
                message,
                ..
            } => {
                let mut text = match total {
                    Some(total) => format!("progress {progress}/{total}"),
                    None => format!("progress {progress}"),
                };
                if let Some(message) = message {
                    text.push_str(&format!(" · {}", one_line(message)));
                }
                ("⋯", Tone::Tool, text)
            }
            EventData::Retry {
                attempt,
                max,
                reason,
                delay_ms,
            } => (
                "↻",
                Tone::Warn,
                format!(
                    "retry {attempt}/{max} in {} · {}",
                    crate::tui::theme::duration(*delay_ms),
                    one_line(reason)
                ),
            ),
            EventData::LoopWarning { name, times, .. } => (
                "⚠",
                Tone::Warn,
                format!(
                    "repeated call: {} ×{times}, same arguments",
                    one_line(&crate::mcp::names::display(name))
                ),
            ),
            EventData::ApprovalRevoked { grant } => {
                ("⊘", Tone::Warn, format!("revoked {}", grant_label(grant)))
            }
            EventData::GrantUsed { grant, .. } => (
                "✔",
                Tone::Ok,
                format!("allowed {} (grant)", grant_label(grant)),
            ),
            EventData::Compacted(c) => match &c.error {
                None => {
                    start = at.saturating_sub(c.duration_ms);
                    (
                        "⇊",
                        Tone::Llm,
                        format!(
                            "compacted {} → {} tokens · {} messages summarised",
                            c.before_tokens, c.after_tokens, c.summarized
                        ),
                    )
                }
                Some(error) => (
                    "⇊",
                    Tone::Warn,
                    format!("not compacted: {}", one_line(error)),
                ),
            },
            EventData::MaxTurnsReached { turns } => {
                ("⚠", Tone::Warn, format!("max turns reached ({turns})"))
            }
            EventData::BudgetReached(b) => (
                "$",
                Tone::Warn,
                format!(
                    "cost budget reached: {} spent of {} · next call ≥ {} ({}) not sent",
                    crate::config::pricing::dollars(b.spent),
                    crate::config::pricing::dollars(b.max_cost),
                    crate::config::pricing::dollars(b.next_call),
                    one_line(&b.model)
                ),
            ),
            EventData::MaxTurnsPromptInjected { turns } => (
                "⚠",
                Tone::Warn,
                format!("answer-now prompt injected after {turns} turns"),
            ),
            EventData::Final {
                turns,
                usage,
                content,
            } => (
                "●",
                Tone::Ok,
                format!(
                    "final · {turns} turns · {} in / {} out · {}",
                    usage.input_tokens,
                    usage.output_tokens,
                    one_line(content)
                ),
            ),
            EventData::Error { kind, message } => (
                "✗",
                Tone::Error,
                format!("error {}: {}", one_line(kind), one_line(message)),
            ),
            EventData::Cancelled { running } => {
                ("■", Tone::Dim, format!("cancelled {}", one_line(running)))
            }
        };
        Some(Self {
            kind: Kind::of(&event.data),
            run: event.request_id.clone(),
            payload: None,
            symbol,
            tone,
            name: name.into_boxed_str(),
            start: start.min(at),
            end: at,
            pending,
            link: None,
            took: None,
            depth: 0,
            wait: None,
            idle_before: None,
        })
    }

    /// A tool call ended at `at` after running `took` ms, by the run model: the span ends
    /// there.
    pub(super) fn end_call(&mut self, at: u64, took: Option<u64>) {
        self.pending = false;
        self.end = at.max(self.start);
        // 49 days of running fit; a row stays small (there is one per event).
        self.took = took.map(|ms| u32::try_from(ms).unwrap_or(u32::MAX));
    }

    /// How long the row lasted; `None` for instants and for calls still running.
    pub(super) fn duration_ms(&self) -> Option<u64> {
        match &self.kind {
            Kind::ToolResult { .. } | Kind::Compacted | Kind::LlmFailed | Kind::Hook { .. } => {
                Some(self.end - self.start)
            }
            Kind::Llm if !self.pending => Some(self.end - self.start),
            Kind::ToolCall if !self.pending => {
                Some(self.took.map_or(self.end - self.start, u64::from))
            }
            _ if self.is_wait() => Some(self.end - self.start),
            _ => None,
        }
    }

    /// Whether the row is an answer whose span is the wait for it (from the question or
    /// the approval request, when seen).
    pub(super) fn is_wait(&self) -> bool {
        matches!(self.kind, Kind::ApprovalDecided | Kind::Answer) && self.end > self.start
    }

    /// Whether the row passes `filter`.
    pub(super) fn matches(&self, filter: Filter) -> bool {
        let kind = &self.kind;
        match filter {
            Filter::All => true,
            Filter::Llm => matches!(kind, Kind::Llm | Kind::LlmFailed | Kind::Compacted),
            Filter::Tools => matches!(
                kind,
                Kind::ToolCall | Kind::ToolResult { .. } | Kind::Progress | Kind::Hook { .. }
            ),
            Filter::Asks => matches!(
                kind,
                Kind::ApprovalAsked
                    | Kind::Revoked
                    | Kind::ApprovalDecided
                    | Kind::Question
                    | Kind::Answer
            ),
            Filter::Problems => matches!(
                kind,
                Kind::Problem
                    | Kind::LlmFailed
                    | Kind::ToolResult { ok: false }
                    | Kind::Hook { ok: false }
            ),
        }
    }
}
