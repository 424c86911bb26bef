//! What a detail view shows: an event's payload turned into lines (fields, headings,
//! pretty JSON, diffs, the messages a model call sent).

use serde_json::Value;

use super::super::Shown;
use super::super::label::one_line;
use super::super::offset_label;
use super::super::row::Tone;
use crate::conversation::{Message, Role, ToolCall};
use crate::event::{EventData, InputKind, InputRequest, LlmCall};
use crate::tui::highlight::{self, MAX_JSON_BYTES, Paint};
use crate::tui::safe::escape;
use crate::tui::theme::duration;

/// Bytes of JSON highlighted in one detail view; past that, payloads are drawn plain, so
/// opening a call with many large messages stays quick.
const JSON_BUDGET: usize = MAX_JSON_BYTES;

mod compacted;

/// One logical line; the first `label` bytes are drawn dim (field names). Wrapped parts
/// all start `indent` cells in, so nested payloads stay readable when they wrap. Highlighted
/// code and diffs carry `(end byte, paint)` runs; other lines are all in their tone.
#[derive(Debug, Clone)]
pub(in crate::tui::views::timeline) struct Line {
    pub text: String,
    pub tone: Tone,
    pub label: usize,
    pub indent: u16,
    pub runs: Vec<(usize, Paint)>,
}

impl Line {
    /// The indent actually used at `width`: dropped when it would leave too little room.
    pub(super) fn indent_at(&self, width: u16) -> u16 {
        if self.indent <= width / 2 {
            self.indent
        } else {
            0
        }
    }
}

/// The lines of a row's detail, with times relative to `origin`.
pub(super) fn build(shown: &Shown, origin: u64, conversation: &[Message]) -> Vec<Line> {
    let mut doc = Doc {
        lines: Vec::new(),
        indent: 0,
        budget: JSON_BUDGET,
    };
    describe(&mut doc, shown, origin, conversation);
    doc.lines
}

/// Builds the lines of a detail view.
struct Doc {
    lines: Vec<Line>,
    /// Indent of the lines added now.
    indent: u16,
    /// JSON bytes that may still be highlighted.
    budget: usize,
}

impl Doc {
    fn push(&mut self, text: String, tone: Tone, label: usize) {
        self.lines.push(Line {
            text,
            tone,
            label,
            indent: self.indent,
            runs: Vec::new(),
        });
    }

    /// A line coloured by `runs` (`tone` past them).
    fn painted(&mut self, text: String, tone: Tone, runs: Vec<(usize, Paint)>) {
        self.push(text, tone, 0);
        if let Some(line) = self.lines.last_mut() {
            line.runs = runs;
        }
    }

    /// Adds `text`, one line per line of it (tabs expanded, control characters shown).
    fn text(&mut self, tone: Tone, text: &str) {
        for raw in text.split('\n') {
            self.push(clean(raw), tone, 0);
        }
    }

    /// `label: value` with the label dim; a multi-line value continues on the next lines.
    fn field(&mut self, label: &str, value: &str) {
        let mut parts = value.split('\n');
        let first = clean(parts.next().unwrap_or_default());
        self.push(format!("{label}: {first}"), Tone::Text, label.len() + 2);
        for rest in parts {
            self.text(Tone::Text, rest);
        }
    }

    fn heading(&mut self, text: &str) {
        self.push(String::new(), Tone::Text, 0);
        self.push(format!("── {}", clean(text)), Tone::Heading, 0);
    }

    /// A JSON value, pretty; a string is shown as its text (newlines and all), not quoted.
    fn json(&mut self, value: &Value) {
        match value {
            Value::String(s) => self.text(Tone::Text, s),
            other => {
                let pretty = serde_json::to_string_pretty(other).unwrap_or_default();
                let lines: Vec<String> = pretty.split('\n').map(clean).collect();
                let mut runs = Vec::new();
                if self.budget > 0 {
                    self.budget = self.budget.saturating_sub(pretty.len());
                    runs = highlight::painted("json", &lines);
                }
                let mut runs = runs.into_iter();
                for text in lines {
                    self.painted(text, Tone::Code, runs.next().unwrap_or_default());
                }
            }
        }
    }

    /// A diff, coloured as the approval dialog colours it.
    fn diff(&mut self, diff: &str) {
        for line in highlight::diff::lines(diff) {
            let runs = line.runs.iter().map(|&(end, p)| (end, Paint::Diff(p)));
            self.painted(line.text, Tone::Code, runs.collect());
        }
    }

    /// `name (id)` and the arguments under it.
    fn tool_call(&mut self, call: &ToolCall) {
        let name = format!("{} ({})", one_line(&call.name), one_line(&call.id));
        self.push(name, Tone::Tool, 0);
        self.indented(|doc| doc.json(&call.arguments));
    }

    /// Runs `add` with the indent two cells deeper.
    fn indented(&mut self, add: impl FnOnce(&mut Self)) {
        self.indent += 2;
        add(self);
        self.indent -= 2;
    }
}

/// One line with tabs expanded and other control characters shown as placeholders (`^[`):
/// a payload that carried an escape sequence should be seen to. The CR of a CRLF line end
/// is only a line end.
fn clean(line: &str) -> String {
    escape(line.strip_suffix('\r').unwrap_or(line)).into_owned()
}

fn describe(doc: &mut Doc, shown: &Shown, origin: u64, conversation: &[Message]) {
    let (row, event) = (shown.row, shown.event);
    doc.push(format!("{} {}", row.symbol, event.kind()), row.tone, 0);
    let mut when = format!("at {}", offset_label(row.start.saturating_sub(origin)));
    match row.duration_ms() {
        Some(ms) if row.is_wait() => when.push_str(&format!(" · waited {}", duration(ms))),
        Some(ms) => when.push_str(&format!(" · took {}", duration(ms))),
        None if row.pending => when.push_str(" · running"),
        None => {}
    }
    doc.text(Tone::Dim, &when);
    doc.text(Tone::Text, &row.name);
    match &event.data {
        EventData::LlmCall(call) => llm_call(doc, call, conversation),
        EventData::ToolCall {
            turn,
            id,
            arguments,
            parent,
            ..
        } => {
            doc.field("turn", &turn.to_string());
            doc.field("id", id);
            doc.field("parent", parent.as_deref().unwrap_or("none"));
            doc.heading("arguments");
            doc.json(arguments);
            if let Some(result) = shown.result {
                doc.heading("result");
                tool_result(doc, &result.data);
            }
        }
        EventData::ToolResult { .. } => tool_result(doc, &event.data),
        EventData::InputRequested(request) => question(doc, request),
        EventData::InputAnswered { id, value, form } => {
            doc.field("question", id);
            match (value, form) {
                (_, Some(crate::tools::AskReply::Accept(content))) => {
                    doc.field("form", "sent");
                    doc.json(&Value::Object(content.clone()));
                }
                (_, Some(crate::tools::AskReply::Decline)) => doc.text(Tone::Warn, "form declined"),
                (_, Some(crate::tools::AskReply::Cancel)) => doc.text(Tone::Warn, "form cancelled"),
                (Some(value), None) => doc.field("answer", value),
                (None, None) => doc.text(
                    Tone::Warn,
                    "declined: the workflow was abandoned or stopped",
                ),
            }
        }
        EventData::ApprovalRequested {
            id,
            arguments,
            position,
            of,
            note,
            diff,
            ..
        } => {
            doc.field("id", id);
            doc.field("batch", &format!("call {position} of {of}"));
            if let Some(note) = note {
                doc.field("note", note);
            }
            if let Some(diff) = diff {
                doc.heading("change");
                doc.diff(diff);
            }
            doc.heading("arguments");
            doc.json(arguments);
        }
        EventData::ApprovalDecided {
            scope,
            reason: Some(reason),
            ..
        } => {
            doc.field("scope", scope.word());
            doc.field("reason", reason);
        }
        EventData::Compacted(c) => compacted::describe(doc, c),
        data => {
            doc.heading("data");
            let value = serde_json::to_value(data).unwrap_or(Value::Null);
            doc.json(value.get("data").unwrap_or(&Value::Null));
        }
    }
}

/// What was asked: the kind, the tool and frame, the parameter, and the question itself.
fn question(doc: &mut Doc, request: &InputRequest) {
    let kind = match request.kind {
        InputKind::Parameter => "missing parameter",
        InputKind::DepthLimit => "depth limit",
        InputKind::Submit => "send a form",
        InputKind::Form => "a server's form",
        InputKind::Plan => "plan review",
    };
    doc.field("kind", kind);
    doc.field("id", &request.id);
    doc.field("tool", &request.tool);
    doc.field("frame", &request.frame);
    if let Some(parameter) = &request.parameter {
        let typed = match &request.value_type {
            Some(kind) => format!("{parameter} ({kind})"),
            None => parameter.clone(),
        };
        doc.field("parameter", &typed);
    }
    if let Some(description) = &request.description {
        doc.field("description", description);
    }
    if let Some(depth) = request.depth {
        doc.field("depth", &depth.to_string());
    }
    doc.heading("question");
    doc.text(Tone::Text, &request.prompt);
}

fn tool_result(doc: &mut Doc, data: &EventData) {
    if let EventData::ToolResult {
        id,
        ok,
        result,
        error,
        duration_ms,
        ..
    } = data
    {
        doc.field("id", id);
        doc.field("ok", if *ok { "yes" } else { "no" });
        doc.field("duration", &duration(*duration_ms));
        if let Some(error) = error {
            doc.field("error", error);
        }
        if let Some(result) = result {
            doc.json(result);
        }
    }
}

fn llm_call(doc: &mut Doc, call: &LlmCall, conversation: &[Message]) {
    doc.field("turn", &call.turn.to_string());
    if let Some(parent) = &call.parent {
        doc.field("sub-agent of", parent);
    }
    doc.field("model", &call.model);
    doc.field("duration", &duration(call.duration_ms));
    let ttft = call.ttft_ms.map(duration).unwrap_or_else(|| "–".into());
    doc.field("ttft", &ttft);
    doc.field("finish", call.finish_reason.as_deref().unwrap_or("–"));
    let usage = format!(
        "{} in · {} out",
        call.usage.input_tokens, call.usage.output_tokens
    );
    doc.field("usage", &usage);
    let tools = if call.tools.is_empty() {
        "none".to_string()
    } else {
        call.tools.join(", ")
    };
    doc.field("tools offered", &tools);
    doc.heading("answer");
    if call.content.is_empty() {
        doc.text(Tone::Dim, "(empty)");
    } else {
        doc.text(Tone::Text, &call.content);
    }
    if let Some(reasoning) = call.reasoning_content.as_deref() {
        doc.heading("reasoning");
        doc.text(Tone::Dim, reasoning);
    }
    if !call.tool_calls.is_empty() {
        doc.heading(&format!("tool calls ({})", call.tool_calls.len()));
        for tc in &call.tool_calls {
            doc.tool_call(tc);
        }
    }
    // Conversations only grow, so what this call sent is the start of the rebuilt one.
    let sent = &conversation[..call.message_count.min(conversation.len())];
    doc.heading(&format!("messages sent ({})", call.message_count));
    if sent.len() < call.message_count {
        doc.text(Tone::Dim, "(earlier messages are not in this trace)");
    }
    for (n, message) in sent.iter().enumerate() {
        self::message(doc, n + 1, message);
    }
}

fn message(doc: &mut Doc, n: usize, message: &Message) {
    let (role, tone) = match message.role {
        Role::System => ("system", Tone::Dim),
        Role::User => ("user", Tone::Heading),
        Role::Assistant => ("assistant", Tone::Llm),
        Role::Tool => ("tool", Tone::Tool),
    };
    let mut head = format!("[{n}] {role}");
    if let Some(name) = &message.name {
        head.push_str(&format!(" {}", one_line(name)));
    }
    if let Some(id) = &message.tool_call_id {
        head.push_str(&format!(" · tool_call_id {}", one_line(id)));
    }
    doc.push(head, tone, 0);
    doc.indented(|doc| {
        if let Some(reasoning) = &message.reasoning_content {
            doc.field("reasoning", reasoning);
        }
        match message.content.as_deref() {
            // Tool results are JSON text: show them pretty when they parse.
            Some(content) if message.role == Role::Tool => {
                match serde_json::from_str::<Value>(content) {
                    Ok(value @ (Value::Object(_) | Value::Array(_))) => doc.json(&value),
                    _ => doc.text(Tone::Text, content),
                }
            }
            Some(content) => doc.text(Tone::Text, content),
            None => {}
        }
        for call in &message.tool_calls {
            doc.tool_call(call);
        }
    });
}
