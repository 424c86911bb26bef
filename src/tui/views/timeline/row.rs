//! One timeline row per trace event: its symbol, tone, one-line name and time span.

use ratatui::style::Style;
use serde_json::Value;

use crate::config::pricing::Pricing;
use crate::event::{Decision, Event, EventData, InputKind, Scope};
use crate::tui::theme::Theme;

/// A colour role, resolved against the theme at render time (rows outlive theme changes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Tone {
    Text,
    Dim,
    Heading,
    Code,
    Llm,
    Tool,
    Ok,
    Error,
    Warn,
}

impl Tone {
    /// The theme style of this tone.
    pub(super) fn style(self, theme: &Theme) -> Style {
        match self {
            Self::Text => theme.text,
            Self::Dim => theme.dim,
            Self::Heading => theme.heading,
            Self::Code => theme.code,
            Self::Llm => theme.llm,
            Self::Tool => theme.tool,
            Self::Ok => theme.ok,
            Self::Error => theme.error,
            Self::Warn => theme.warn,
        }
    }
}

/// Which kinds of row the list shows (`f` cycles them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Filter {
    All,
    Llm,
    Tools,
    /// Approvals and questions: everything that waited for the user.
    Asks,
    Problems,
}

impl Filter {
    /// The next filter in the `f` cycle.
    pub(super) fn next(self) -> Self {
        match self {
            Self::All => Self::Llm,
            Self::Llm => Self::Tools,
            Self::Tools => Self::Asks,
            Self::Asks => Self::Problems,
            Self::Problems => Self::All,
        }
    }

    /// The name shown in the pane title.
    pub(super) fn label(self) -> &'static str {
        match self {
            Self::All => "all",
            Self::Llm => "llm",
            Self::Tools => "tools",
            Self::Asks => "asks",
            Self::Problems => "problems",
        }
    }
}

/// One row of the timeline.
#[derive(Debug, Clone)]
pub(super) struct Row {
    /// The whole event, for the detail view.
    pub event: Event,
    pub symbol: &'static str,
    pub tone: Tone,
    /// One line, no control characters.
    pub name: String,
    /// Unix ms.
    pub start: u64,
    /// Unix ms; equal to `start` for instants.
    pub end: u64,
    /// A tool call still waiting for its result: its bar runs to the end of the axis.
    pub pending: bool,
    /// For a tool call: the row of its result, once it arrived.
    pub link: Option<usize>,
    /// Nesting level of the work (0: the top-level agent), from the `parent` chain.
    pub depth: usize,
    /// For a tool call: when it waited for approval (the end once decided).
    pub wait: Option<(u64, Option<u64>)>,
    /// For the first row of a run: how long nothing ran since the run before.
    pub idle_before: Option<u64>,
}

impl Row {
    /// The row for a trace event; `None` for deltas and stack events, which the timeline
    /// leaves out (the stack pane shows frames; deltas end up in `llm_call`).
    pub(super) fn from_event(event: &Event, pricing: &Pricing) -> Option<Self> {
        let at = event.timestamp;
        let mut start = at;
        let mut pending = false;
        let (symbol, tone, name) = match &event.data {
            EventData::Delta { .. }
            | EventData::ToolOutput { .. }
            | EventData::Listed(_)
            | EventData::StackPush(_)
            | EventData::StackPop(_) => {
                return None;
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
                    _ => format!("asks: {}", request.prompt),
                };
                ("?", Tone::Warn, titled(&request.tool, &asks))
            }
            EventData::InputAnswered { value, .. } => match value {
                Some(value) => ("✎", Tone::Text, titled("answered", value)),
                None => ("⊘", Tone::Warn, "declined".to_string()),
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
            EventData::LlmCall(call) => {
                start = at.saturating_sub(call.duration_ms);
                let who = if call.parent.is_some() {
                    "sub-agent"
                } else {
                    "llm"
                };
                // Tokens (and cost) first: the model is in the status line, and a narrow
                // pane cuts the end of the label.
                let cost = pricing.cost(&call.model, &call.usage);
                let spent = spend(&call.usage, cost)
                    .map(|s| format!("{s} · "))
                    .unwrap_or_default();
                let mut name = format!(
                    "{who} turn {} · {spent}{}",
                    call.turn,
                    one_line(&call.model)
                );
                match call.tool_calls.len() {
                    0 => {}
                    1 => name.push_str(" · 1 tool call"),
                    n => name.push_str(&format!(" · {n} tool calls")),
                }
                ("◆", Tone::Llm, name)
            }
            EventData::ToolCall {
                name, arguments, ..
            } => {
                pending = true;
                ("→", Tone::Tool, titled(name, &summary(arguments)))
            }
            EventData::ToolResult {
                name,
                ok,
                error,
                duration_ms,
                ..
            } => {
                start = at.saturating_sub(*duration_ms);
                match (ok, error) {
                    (true, _) => ("✓", Tone::Ok, format!("{} ok", one_line(name))),
                    (false, Some(e)) => ("✗", Tone::Error, titled(name, &format!("failed: {e}"))),
                    (false, None) => ("✗", Tone::Error, format!("{} failed", one_line(name))),
                }
            }
            EventData::ApprovalRequested {
                name,
                arguments,
                position,
                of,
                ..
            } => (
                "?",
                Tone::Warn,
                format!(
                    "approve? ({position}/{of}) {}",
                    titled(name, &summary(arguments))
                ),
            ),
            EventData::ApprovalDecided {
                name,
                decision,
                scope,
                reason,
                ..
            } => {
                let scope = scope_label(*scope);
                match decision {
                    Decision::Approved => (
                        "✔",
                        Tone::Ok,
                        format!("approved {} ({scope})", one_line(name)),
                    ),
                    Decision::Denied => {
                        let mut text = format!("denied {} ({scope})", one_line(name));
                        if let Some(why) = reason {
                            text.push_str(&format!(": {}", one_line(why)));
                        }
                        ("⊘", Tone::Warn, text)
                    }
                }
            }
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
                format!("repeated call: {} ×{times}, same arguments", one_line(name)),
            ),
            EventData::GrantRevoked { grant } => (
                "⊘",
                Tone::Warn,
                match grant {
                    crate::event::Grant::Tool(name) => format!("revoked {}", one_line(name)),
                    crate::event::Grant::ShellPrefix(prefix) => {
                        format!("revoked shell '{}'", one_line(prefix))
                    }
                },
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
            event: event.clone(),
            symbol,
            tone,
            name,
            start: start.min(at),
            end: at,
            pending,
            link: None,
            depth: 0,
            wait: None,
            idle_before: None,
        })
    }

    /// A tool call's result arrived at `at` (its row is `link`): the span ends there.
    pub(super) fn close(&mut self, at: u64, link: usize) {
        self.pending = false;
        self.end = at.max(self.start);
        self.link = Some(link);
    }

    /// How long the row lasted; `None` for instants and for calls still running.
    pub(super) fn duration_ms(&self) -> Option<u64> {
        match &self.event.data {
            EventData::LlmCall(_) | EventData::ToolResult { .. } | EventData::Compacted(_) => {
                Some(self.end - self.start)
            }
            EventData::ToolCall { .. } if !self.pending => Some(self.end - self.start),
            _ if self.is_wait() => Some(self.end - self.start),
            _ => None,
        }
    }

    /// Whether the row is an answer whose span is the wait for it (from the question or
    /// the approval request, when seen).
    pub(super) fn is_wait(&self) -> bool {
        let answer = matches!(
            self.event.data,
            EventData::ApprovalDecided { .. } | EventData::InputAnswered { .. }
        );
        answer && self.end > self.start
    }

    /// Whether the row passes `filter`.
    pub(super) fn matches(&self, filter: Filter) -> bool {
        let data = &self.event.data;
        match filter {
            Filter::All => true,
            Filter::Llm => matches!(data, EventData::LlmCall(_) | EventData::Compacted(_)),
            Filter::Tools => matches!(
                data,
                EventData::ToolCall { .. }
                    | EventData::ToolResult { .. }
                    | EventData::ToolProgress { .. }
            ),
            Filter::Asks => matches!(
                data,
                EventData::ApprovalRequested { .. }
                    | EventData::GrantRevoked { .. }
                    | EventData::ApprovalDecided { .. }
                    | EventData::InputRequested(_)
                    | EventData::InputAnswered { .. }
            ),
            Filter::Problems => matches!(
                data,
                EventData::Error { .. }
                    | EventData::Retry { .. }
                    | EventData::MaxTurnsReached { .. }
                    | EventData::MaxTurnsPromptInjected { .. }
                    | EventData::LoopWarning { .. }
                    | EventData::Cancelled { .. }
                    | EventData::ToolResult { ok: false, .. }
            ),
        }
    }
}

/// `once`, `turn`, `session`.
pub(super) fn scope_label(scope: Scope) -> &'static str {
    match scope {
        Scope::Once => "once",
        Scope::Turn => "turn",
        Scope::Session => "session",
    }
}

/// `name rest` on one line, without a trailing space when `rest` is empty.
fn titled(name: &str, rest: &str) -> String {
    let name = one_line(name);
    let rest = one_line(rest);
    if rest.is_empty() {
        name
    } else {
        format!("{name} {rest}")
    }
}

/// `key=value` pairs of the top-level arguments, at most a few hundred characters (the row
/// is clipped to the pane anyway; this only bounds the work for huge arguments).
fn summary(arguments: &Value) -> String {
    const MAX: usize = 300;
    let mut out = String::new();
    match arguments {
        Value::Object(map) => {
            // The telling keys first, like the stack's summaries.
            const FIRST: [&str; 6] = ["command", "path", "url", "pattern", "task", "query"];
            let mut pairs: Vec<(&String, &Value)> = map.iter().collect();
            pairs.sort_by_key(|(k, _)| FIRST.iter().position(|f| f == k).unwrap_or(FIRST.len()));
            for (key, value) in pairs {
                if out.len() >= MAX {
                    break;
                }
                if !out.is_empty() {
                    out.push(' ');
                }
                out.push_str(key);
                out.push('=');
                match value {
                    Value::String(s) => push_clipped(&mut out, s, MAX),
                    other => push_clipped(&mut out, &other.to_string(), MAX),
                }
            }
        }
        Value::Null => {}
        Value::String(s) => push_clipped(&mut out, s, MAX),
        other => push_clipped(&mut out, &other.to_string(), MAX),
    }
    out
}

fn push_clipped(out: &mut String, text: &str, max: usize) {
    let room = max.saturating_sub(out.len());
    match text.char_indices().nth(room) {
        Some((cut, _)) => {
            out.push_str(&text[..cut]);
            out.push('…');
        }
        None => out.push_str(text),
    }
}

/// Collapses whitespace (newlines included) so a name fits one row; drops control characters.
pub(super) fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(512));
    // Names are clipped to the pane; 2000 characters is more than any pane is wide.
    for word in text.split_whitespace().take(2000) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.extend(word.chars().filter(|c| !c.is_control()));
        if out.len() > 2000 {
            break;
        }
    }
    out
}

/// `1.2k tok $0.004`: the tokens of a call (in and out), and its cost when priced; `None`
/// when the provider reported no tokens.
pub(super) fn spend(usage: &crate::conversation::Usage, cost: Option<f64>) -> Option<String> {
    let tokens = usage.input_tokens.saturating_add(usage.output_tokens);
    if tokens == 0 {
        return None;
    }
    let tokens = if tokens >= 1000 {
        format!("{:.1}k tok", tokens as f64 / 1000.0)
    } else {
        format!("{tokens} tok")
    };
    Some(match cost {
        Some(cost) => format!("{tokens} {}", crate::config::pricing::dollars(cost)),
        None => tokens,
    })
}
