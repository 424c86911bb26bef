//! taco's events as ACP `session/update`s: pure, so what a client sees is tested without a
//! connection. Live, answers stream as deltas; a replay (`session/load`) has no deltas (they
//! are never in files), so it takes each top-level model call's content instead.

use std::path::Path;

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, Cost, Diff, Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus,
    SessionUpdate, TextContent, ToolCall, ToolCallContent, ToolCallLocation, ToolCallStatus,
    ToolCallUpdate, ToolCallUpdateFields, ToolKind, UsageUpdate,
};
use serde_json::{Value, json};

use crate::config::pricing::Pricing;
use crate::event::{DeltaKind, Event, EventData, FrameState};
use crate::run_model::RunModel;
use crate::todo::{TodoList, TodoStatus};
use crate::tools::outcome::ToolStatus;

/// Most bytes of a tool's result text sent as its content (the whole result is in
/// `rawOutput`'s session file, not on the wire twice).
pub const MAX_RESULT_TEXT: usize = 64 * 1024;

/// Whether the events come as they happen or from a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A run in progress: answers stream as deltas.
    Live,
    /// A saved session read back: answers are in the model calls.
    Replay,
}

/// The updates `event` makes, after `model` has folded it.
pub fn updates(
    event: &Event,
    model: &RunModel,
    source: Source,
    workdir: &Path,
    pricing: &Pricing,
) -> Vec<SessionUpdate> {
    match &event.data {
        EventData::Delta { kind, text } if source == Source::Live => vec![chunk(*kind, text)],
        EventData::LlmCall(call) if source == Source::Replay && call.parent.is_none() => {
            let mut out = Vec::new();
            if let Some(thought) = call.reasoning_content.as_deref().filter(|t| !t.is_empty()) {
                out.push(chunk(DeltaKind::Reasoning, thought));
            }
            if !call.content.is_empty() {
                out.push(chunk(DeltaKind::Text, &call.content));
            }
            out
        }
        EventData::LlmCall(call) if call.parent.is_none() => {
            usage(model, call.context_window, pricing)
                .into_iter()
                .collect()
        }
        EventData::ToolCall {
            id,
            name,
            arguments,
            parent,
            ..
        } => {
            let mut tool = ToolCall::new(id.clone(), title(name, arguments))
                .kind(kind(name))
                .status(ToolCallStatus::Pending)
                .content(diffs(name, arguments, workdir))
                .locations(locations(name, arguments, workdir))
                .raw_input(arguments.clone());
            if let Some(parent) = parent {
                tool = tool.meta(nested(parent));
            }
            vec![SessionUpdate::ToolCall(tool)]
        }
        EventData::StackPush(frame) if frame.state == FrameState::Running => {
            vec![status(&frame.id, ToolCallStatus::InProgress)]
        }
        EventData::ToolResult {
            id,
            name,
            ok,
            status: said,
            result,
            error,
            ..
        } => {
            let ended = ToolStatus::of(*said, *ok, result.as_ref());
            let state = if ended == ToolStatus::Ok {
                ToolCallStatus::Completed
            } else {
                ToolCallStatus::Failed
            };
            let text = match (result, error) {
                (Some(Value::String(s)), _) => s.clone(),
                (Some(value), _) => value.to_string(),
                (None, Some(e)) => e.clone(),
                (None, None) => ended.word().to_string(),
            };
            let fields = ToolCallUpdateFields::new()
                .status(state)
                .content(vec![text_content(&cut(&text, MAX_RESULT_TEXT))])
                .raw_output(json!({"status": ended.word(), "result": result, "error": error}));
            let mut out = vec![SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                id.clone(),
                fields,
            ))];
            let top_level = model.parent(id).is_none();
            if name == crate::tools::builtin::todo_write::NAME
                && top_level
                && ended == ToolStatus::Ok
            {
                out.push(plan(model.todos()));
            }
            out
        }
        EventData::Error { message, .. } if source == Source::Replay => {
            vec![chunk(DeltaKind::Text, &format!("\n\n**Error:** {message}"))]
        }
        _ => Vec::new(),
    }
}

/// The user's message of a saved session, for a replay.
pub fn user_message(text: &str) -> SessionUpdate {
    SessionUpdate::UserMessageChunk(ContentChunk::new(ContentBlock::Text(TextContent::new(
        text,
    ))))
}

fn chunk(kind: DeltaKind, text: &str) -> SessionUpdate {
    let chunk = ContentChunk::new(ContentBlock::Text(TextContent::new(text)));
    match kind {
        DeltaKind::Text => SessionUpdate::AgentMessageChunk(chunk),
        DeltaKind::Reasoning => SessionUpdate::AgentThoughtChunk(chunk),
    }
}

fn text_content(text: &str) -> ToolCallContent {
    ToolCallContent::Content(agent_client_protocol::v1::schema::Content::new(
        ContentBlock::Text(TextContent::new(text)),
    ))
}

fn status(id: &str, status: ToolCallStatus) -> SessionUpdate {
    SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
        id.to_string(),
        ToolCallUpdateFields::new().status(status),
    ))
}

/// A call under another (a sub-agent's, a tool's): ACP has no nesting yet, so taco says the
/// parent in `_meta` and the client may nest it.
fn nested(parent: &str) -> agent_client_protocol::v1::schema::Meta {
    agent_client_protocol::v1::schema::Meta::from_iter([(
        "taco".to_string(),
        json!({ "parent": parent }),
    )])
}

/// The kind of a tool, for the client's icon.
pub fn kind(name: &str) -> ToolKind {
    match name {
        "read_file" | "list_dir" => ToolKind::Read,
        "write_file" | "edit_file" => ToolKind::Edit,
        "search_files" => ToolKind::Search,
        "shell" => ToolKind::Execute,
        "web_fetch" => ToolKind::Fetch,
        "delegate" | "todo_write" => ToolKind::Think,
        _ => ToolKind::Other,
    }
}

fn arg<'a>(arguments: &'a Value, key: &str) -> Option<&'a str> {
    arguments.get(key).and_then(Value::as_str)
}

/// A call's one-line title, the way a person would say it.
pub fn title(name: &str, arguments: &Value) -> String {
    let said = match name {
        "shell" => arg(arguments, "command").map(|c| format!("`{}`", one_line(c))),
        "read_file" => arg(arguments, "path").map(|p| format!("Read {p}")),
        "write_file" => arg(arguments, "path").map(|p| format!("Write {p}")),
        "edit_file" => arg(arguments, "path").map(|p| format!("Edit {p}")),
        "list_dir" => Some(format!("List {}", arg(arguments, "path").unwrap_or("."))),
        "search_files" => arg(arguments, "pattern").map(|p| format!("Search `{}`", one_line(p))),
        "web_fetch" => arg(arguments, "url").map(|u| format!("Fetch {u}")),
        "todo_write" => crate::todo::call_summary(name, arguments),
        _ => None,
    };
    said.unwrap_or_else(|| {
        let summary = crate::orchestrator::stack::argument_summary(arguments);
        if summary.is_empty() {
            name.to_string()
        } else {
            format!("{name} {summary}")
        }
    })
}

/// `text` up to `max` bytes (lines kept), saying so when cut.
fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut at = max;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    format!("{}\n… {} more bytes", &text[..at], text.len() - at)
}

fn one_line(text: &str) -> String {
    crate::text::summarize(text, 200)
}

/// The file a call reads or changes, for the client to follow.
pub fn locations(name: &str, arguments: &Value, workdir: &Path) -> Vec<ToolCallLocation> {
    let path = match name {
        "read_file" | "write_file" | "edit_file" | "list_dir" | "search_files" => {
            arg(arguments, "path")
        }
        _ => None,
    };
    let Some(path) = path else {
        return Vec::new();
    };
    let mut location = ToolCallLocation::new(within(workdir, path));
    if name == "read_file"
        && let Some(offset) = arguments.get("offset").and_then(Value::as_u64)
    {
        location = location.line(u32::try_from(offset).unwrap_or(u32::MAX));
    }
    vec![location]
}

/// `path` of a call's arguments as the absolute path ACP wants (`.` parts dropped).
fn within(workdir: &Path, path: &str) -> std::path::PathBuf {
    workdir.join(path).components().collect()
}

/// What a file-changing call would write, as ACP diffs: `write_file` the whole new text,
/// `edit_file` each replacement (old and new text), the way editors show them.
pub fn diffs(name: &str, arguments: &Value, workdir: &Path) -> Vec<ToolCallContent> {
    let Some(path) = arg(arguments, "path").map(|p| within(workdir, p)) else {
        return Vec::new();
    };
    match name {
        "write_file" => arg(arguments, "content")
            .map(|content| ToolCallContent::Diff(Diff::new(path, content)))
            .into_iter()
            .collect(),
        "edit_file" => arguments
            .get("edits")
            .and_then(Value::as_array)
            .map(|edits| {
                edits
                    .iter()
                    .filter_map(|edit| {
                        let old = arg(edit, "old_string")?;
                        let new = arg(edit, "new_string")?;
                        Some(ToolCallContent::Diff(
                            Diff::new(path.clone(), new).old_text(old.to_string()),
                        ))
                    })
                    .collect()
            })
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// The todo checklist as the client's plan.
pub fn plan(todos: &TodoList) -> SessionUpdate {
    let entries = todos
        .items
        .iter()
        .map(|item| {
            let status = match item.status {
                TodoStatus::Pending => PlanEntryStatus::Pending,
                TodoStatus::InProgress => PlanEntryStatus::InProgress,
                TodoStatus::Completed => PlanEntryStatus::Completed,
            };
            PlanEntry::new(item.content.clone(), PlanEntryPriority::Medium, status)
        })
        .collect();
    SessionUpdate::Plan(Plan::new(entries))
}

/// The context in use and what the session has cost, after a model call.
fn usage(model: &RunModel, window: Option<u64>, pricing: &Pricing) -> Option<SessionUpdate> {
    let gauge = model.context()?;
    let size = window.or(gauge.window)?;
    let mut update = UsageUpdate::new(gauge.used, size);
    if let Some(cost) = model.session_cost(pricing) {
        update = update.cost(Cost::new(cost, "USD"));
    }
    Some(SessionUpdate::UsageUpdate(update))
}

#[cfg(test)]
#[path = "updates_tests.rs"]
mod tests;
