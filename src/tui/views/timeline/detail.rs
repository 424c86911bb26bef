//! The detail view: the full payload of one timeline row, wrapped and scrollable.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use serde_json::Value;
use unicode_width::UnicodeWidthChar;

use super::row::{Row, Tone, one_line, scope_label};

mod compacted;
mod copy;
use super::{clip, offset_label};
use crate::conversation::{Message, Role, ToolCall};
use crate::event::{EventData, InputKind, InputRequest, LlmCall};
use crate::tui::highlight::{self, MAX_JSON_BYTES, Paint};
use crate::tui::safe::escape;
use crate::tui::theme::{Theme, duration};

/// Bytes of JSON highlighted in one detail view; past that, payloads are drawn plain, so
/// opening a call with many large messages stays quick.
const JSON_BUDGET: usize = MAX_JSON_BYTES;

/// One logical line; the first `label` bytes are drawn dim (field names). Wrapped parts
/// all start `indent` cells in, so nested payloads stay readable when they wrap. Highlighted
/// code and diffs carry `(end byte, paint)` runs; other lines are all in their tone.
#[derive(Debug, Clone)]
pub(super) struct Line {
    pub text: String,
    pub tone: Tone,
    pub label: usize,
    pub indent: u16,
    pub runs: Vec<(usize, Paint)>,
}

impl Line {
    /// The indent actually used at `width`: dropped when it would leave too little room.
    fn indent_at(&self, width: u16) -> u16 {
        if self.indent <= width / 2 {
            self.indent
        } else {
            0
        }
    }
}

/// The detail view of one row. Its lines are built once when it opens, so new events never
/// move it. It shows over the timeline pane as an overlay (its keys: `overlay/detail.rs`).
#[derive(Debug)]
pub struct Detail {
    pub(super) lines: Vec<Line>,
    /// Closed by a key: the overlay stack drops it.
    pub(crate) closed: bool,
    /// Wrapped segments `(line, start byte, end byte)` for `wrapped_for`.
    segments: Vec<(usize, usize, usize)>,
    wrapped_for: u16,
    scroll: usize,
    /// Updated by render; bounds scrolling from keys.
    max_scroll: usize,
    page: usize,
}

impl Detail {
    /// The detail of `rows[row]`, with times relative to `origin`.
    pub(super) fn new(rows: &[Row], row: usize, origin: u64, conversation: &[Message]) -> Self {
        let mut doc = Doc {
            lines: Vec::new(),
            indent: 0,
            budget: JSON_BUDGET,
        };
        if let Some(r) = rows.get(row) {
            describe(&mut doc, rows, r, origin, conversation);
        }
        let max_scroll = doc.lines.len();
        Self {
            lines: doc.lines,
            closed: false,
            segments: Vec::new(),
            wrapped_for: 0,
            scroll: 0,
            max_scroll,
            page: 10,
        }
    }

    /// Scrolls by `delta` lines (clamped).
    pub(crate) fn scroll_by(&mut self, delta: isize) {
        let target = self.scroll.saturating_add_signed(delta);
        self.scroll = target.min(self.max_scroll);
    }

    /// Scrolls to the top (`false`) or the bottom (`true`).
    pub(crate) fn scroll_to(&mut self, bottom: bool) {
        self.scroll = if bottom { self.max_scroll } else { 0 };
    }

    /// Lines a page key moves.
    pub(crate) fn page(&self) -> isize {
        self.page.max(1) as isize
    }

    /// Draws the visible part of the payload and a one-line key hint at the bottom.
    pub(crate) fn draw(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        if area.width == 0 || area.height == 0 {
            return;
        }
        if self.wrapped_for != area.width {
            self.rewrap(area.width);
        }
        let hint = area.height >= 3;
        let height = usize::from(area.height) - usize::from(hint);
        self.page = height.saturating_sub(1).max(1);
        self.max_scroll = self.segments.len().saturating_sub(height);
        self.scroll = self.scroll.min(self.max_scroll);
        let visible = self.segments.iter().skip(self.scroll).take(height);
        for (y, &(index, start, end)) in (area.y..).zip(visible) {
            let Some(line) = self.lines.get(index) else {
                continue;
            };
            let split = line.label.clamp(start, end);
            let indent = line.indent_at(area.width);
            let room = usize::from(area.width - indent);
            let x = area.x + indent;
            let (mut after, _) = buf.set_stringn(x, y, &line.text[start..split], room, theme.dim);
            for (from, to, paint) in highlight::pieces(&line.runs, split, end) {
                let style = paint.map_or(line.tone.style(theme), |p| p.style(theme));
                let left = room.saturating_sub(usize::from(after - x));
                (after, _) = buf.set_stringn(after, y, &line.text[from..to], left, style);
            }
        }
        if hint {
            let y = area.bottom() - 1;
            let last = (self.scroll + height).min(self.segments.len());
            let position = format!(" {last}/{}", self.segments.len());
            let room = usize::from(area.width).saturating_sub(position.len());
            buf.set_stringn(area.x, y, clip(copy::keys(room), room), room, theme.dim);
            let x = area.right().saturating_sub(position.len() as u16);
            buf.set_stringn(
                x.max(area.x),
                y,
                &position,
                usize::from(area.width),
                theme.dim,
            );
        }
    }

    fn rewrap(&mut self, width: u16) {
        self.segments.clear();
        for (index, line) in self.lines.iter().enumerate() {
            let room = usize::from(width - line.indent_at(width));
            for (start, end) in wrap(&line.text, room) {
                self.segments.push((index, start, end));
            }
        }
        self.wrapped_for = width;
    }
}

/// Byte ranges of `text` that each fit `width` cells, breaking after a space when one is
/// on the line and hard otherwise. Always at least one range; never an empty range for a
/// non-empty text, so every character is shown once.
pub(super) fn wrap(text: &str, width: usize) -> Vec<(usize, usize)> {
    let width = width.max(1);
    let mut out = Vec::new();
    let mut start = 0;
    let mut used = 0;
    let mut after_space = None;
    for (i, ch) in text.char_indices() {
        let w = ch.width().unwrap_or(0);
        if used + w > width && i > start {
            let cut = after_space.filter(|&b| b > start && b <= i).unwrap_or(i);
            out.push((start, cut));
            start = cut;
            used = text[start..i].chars().map(|c| c.width().unwrap_or(0)).sum();
            after_space = None;
        }
        used += w;
        if ch == ' ' {
            after_space = Some(i + 1);
        }
    }
    out.push((start, text.len()));
    out
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

fn describe(doc: &mut Doc, rows: &[Row], row: &Row, origin: u64, conversation: &[Message]) {
    let event = &row.event;
    doc.push(format!("{} {}", row.symbol, event.kind()), row.tone, 0);
    let mut when = format!("at {}", offset_label(row.start.saturating_sub(origin)));
    match row.duration_ms() {
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
            if let Some(result) = row.link.and_then(|i| rows.get(i)) {
                doc.heading("result");
                tool_result(doc, &result.event.data);
            }
        }
        EventData::ToolResult { .. } => tool_result(doc, &event.data),
        EventData::InputRequested(request) => question(doc, request),
        EventData::InputAnswered { id, value } => {
            doc.field("question", id);
            match value {
                Some(value) => doc.field("answer", value),
                None => doc.text(
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
            doc.field("scope", scope_label(*scope));
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

#[cfg(test)]
mod tests;
