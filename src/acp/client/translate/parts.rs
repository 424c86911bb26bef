//! The pieces of the translation: a call's frame and state, its name, parent and payload
//! (content, diffs, locations, the raw updates), read from ACP's types.

use serde_json::{Value, json};

use agent_client_protocol::v1::schema::{
    ContentBlock, ToolCall, ToolCallContent, ToolCallStatus, ToolCallUpdate, ToolKind, UsageUpdate,
};

use super::{Call, MAX_CONTENT};
use crate::event::{EventData, FrameState, StackFrame, UsageReported};

/// The frame of a call in `state`.
pub(super) fn frame(id: &str, call: &Call, state: FrameState) -> StackFrame {
    StackFrame {
        id: id.to_string(),
        parent: call.parent.clone(),
        name: call.name.clone(),
        summary: call.title.clone(),
        state,
    }
}

pub(super) fn is_end(state: FrameState) -> bool {
    matches!(
        state,
        FrameState::Done | FrameState::Failed | FrameState::Denied | FrameState::Cancelled
    )
}

/// A call's state as the stack shows it: pending (not started, or waiting for its input to
/// stream) is queued.
pub(super) fn frame_state(status: ToolCallStatus) -> FrameState {
    match status {
        ToolCallStatus::InProgress => FrameState::Running,
        ToolCallStatus::Completed => FrameState::Done,
        ToolCallStatus::Failed => FrameState::Failed,
        _ => FrameState::Queued,
    }
}

/// The word for a call the agent names only by its kind.
pub fn kind_name(kind: ToolKind) -> &'static str {
    match kind {
        ToolKind::Read => "read",
        ToolKind::Edit => "edit",
        ToolKind::Delete => "delete",
        ToolKind::Move => "move",
        ToolKind::Search => "search",
        ToolKind::Execute => "execute",
        ToolKind::Think => "think",
        ToolKind::Fetch => "fetch",
        ToolKind::SwitchMode => "switch_mode",
        _ => "tool",
    }
}

pub(super) fn title_of(title: &str, name: &str) -> String {
    let title = crate::text::summarize(title.trim(), 120);
    if title.is_empty() {
        name.to_string()
    } else {
        title
    }
}

/// The frame a call runs under, where the agent says (ACP has no field for it: agents put
/// it in `_meta`, as `parentToolCallId` or Claude Code's `claudeCode.parentToolUseId`).
pub(super) fn parent_of(meta: Option<&serde_json::Map<String, Value>>) -> Option<String> {
    let meta = meta?;
    let direct = ["parentToolCallId", "parent_tool_call_id", "parentToolUseId"]
        .iter()
        .find_map(|key| meta.get(*key)?.as_str());
    let nested = || {
        meta.values()
            .filter_map(Value::as_object)
            .find_map(|inner| inner.get("parentToolUseId")?.as_str())
    };
    direct.or_else(nested).map(String::from)
}

pub(super) fn locations(
    found: &[agent_client_protocol::v1::schema::ToolCallLocation],
) -> Vec<Value> {
    found
        .iter()
        .map(|l| match l.line {
            Some(line) => json!({"path": l.path, "line": line}),
            None => json!({"path": l.path}),
        })
        .collect()
}

pub(super) fn fields_of(
    call: &ToolCall,
) -> agent_client_protocol::v1::schema::ToolCallUpdateFields {
    let mut fields = agent_client_protocol::v1::schema::ToolCallUpdateFields::new()
        .kind(call.kind)
        .status(call.status)
        .title(call.title.clone())
        .name(call.name.clone())
        .content(call.content.clone())
        .locations(call.locations.clone());
    if let Some(input) = &call.raw_input {
        fields = fields.raw_input(input.clone());
    }
    if let Some(output) = &call.raw_output {
        fields = fields.raw_output(output.clone());
    }
    fields
}

/// A call announced by its first update (or a permission request) alone.
pub(super) fn announced(update: &ToolCallUpdate) -> ToolCall {
    let fields = &update.fields;
    let mut call = ToolCall::new(
        update.tool_call_id.clone(),
        fields.title.clone().unwrap_or_default(),
    )
    .kind(fields.kind.unwrap_or_default())
    .status(fields.status.unwrap_or_default())
    .content(fields.content.clone().unwrap_or_default())
    .locations(fields.locations.clone().unwrap_or_default());
    if let Some(input) = &fields.raw_input {
        call = call.raw_input(input.clone());
    }
    if let Some(output) = &fields.raw_output {
        call = call.raw_output(output.clone());
    }
    call.name.clone_from(&fields.name);
    call.meta.clone_from(&update.meta);
    call
}

/// A call's result as the timeline's payload shows it: its content (diffs rendered), its
/// locations, its raw output and the ACP updates it got.
pub(super) fn payload(call: &Call, workdir: &std::path::Path) -> Value {
    let mut out = serde_json::Map::new();
    let text = content_text(&call.content);
    if !text.is_empty() {
        out.insert("content".into(), Value::String(text));
    }
    if let Some(diff) = diff_of(&call.content, workdir) {
        out.insert("diff".into(), Value::String(diff));
    }
    if !call.locations.is_empty() {
        out.insert("locations".into(), Value::Array(call.locations.clone()));
    }
    if let Some(output) = &call.raw_output {
        out.insert("raw_output".into(), output.clone());
    }
    if !call.updates.is_empty() {
        out.insert(
            "updates".into(),
            Value::Array(call.updates.iter().cloned().collect()),
        );
    }
    if call.dropped_updates > 0 {
        out.insert("updates_dropped".into(), json!(call.dropped_updates));
    }
    Value::Object(out)
}

/// The text of a call's content blocks (not its diffs), bounded.
pub(super) fn content_text(content: &[ToolCallContent]) -> String {
    let mut parts = Vec::new();
    for item in content {
        match item {
            ToolCallContent::Content(c) => match &c.content {
                ContentBlock::Text(text) => parts.push(text.text.clone()),
                ContentBlock::ResourceLink(link) => parts.push(link.uri.clone()),
                _ => {}
            },
            ToolCallContent::Terminal(t) => parts.push(format!("[terminal {}]", t.terminal_id.0)),
            _ => {}
        }
    }
    let text = parts.join("\n");
    if text.len() > MAX_CONTENT {
        crate::text::shorten_end(&text, MAX_CONTENT)
    } else {
        text
    }
}

/// The call's file changes as one diff (a summary line, then unified diffs; paths relative
/// to the workspace), if it has any.
pub(super) fn diff_of(content: &[ToolCallContent], workdir: &std::path::Path) -> Option<String> {
    let diffs: Vec<String> = content
        .iter()
        .filter_map(|item| match item {
            ToolCallContent::Diff(d) => Some(crate::tools::diff::render(
                &crate::tools::workspace::display_relative(workdir, &d.path),
                d.old_text.as_deref(),
                &d.new_text,
            )),
            _ => None,
        })
        .collect();
    (!diffs.is_empty()).then(|| diffs.join("\n"))
}

pub(super) fn usage_reported(usage: &UsageUpdate) -> EventData {
    EventData::UsageReported(UsageReported {
        used: usage.used,
        size: usage.size,
        cost: usage.cost.as_ref().map(|c| c.amount),
        currency: usage.cost.as_ref().map(|c| c.currency.clone()),
    })
}
