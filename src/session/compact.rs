//! Each fact once in a session file (issue 9.6): a tool call's arguments are written with
//! the `llm_call` that made the call — the first line that carries them, so a crash cannot
//! lose them — and every later line that repeats them (`tool_call`, `approval_requested`,
//! the assistant `message`, a sub-agent's `new_messages`) says `"arguments_from":
//! "llm_call"` instead. A top-level `llm_call` leaves out `new_messages`: they are the
//! `message` lines written just before it (`"new_messages_from": "message_lines"`).
//!
//! The writer ([`Compactor`]) elides only what it can prove the reader ([`Expander`]) will
//! restore: the arguments are elided only when they equal, by a hash of their JSON, the ones
//! the latest `llm_call` gave that call id.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use serde_json::{Map, Value};

/// The marker that replaces elided arguments.
const ARGUMENTS_FROM: &str = "arguments_from";
/// The marker that replaces a top-level `llm_call`'s `new_messages`.
const NEW_MESSAGES_FROM: &str = "new_messages_from";

/// The frame id of a call made in a conversation under `parent` (as the orchestrator names
/// its stack frames).
fn frame_id(parent: Option<&str>, id: &str) -> String {
    match parent {
        Some(parent) => format!("{parent}/{id}"),
        None => id.to_string(),
    }
}

/// The calls an `llm_call`'s data made: (frame id, arguments).
fn made_calls<'a>(
    data: &'a Map<String, Value>,
    parent: Option<&'a str>,
) -> impl Iterator<Item = (String, &'a Value)> {
    data.get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(move |call| {
            let id = call.get("id").and_then(Value::as_str)?;
            Some((frame_id(parent, id), call.get("arguments")?))
        })
}

/// Calls `f` with the frame id and the object of each tool call in a message.
fn for_each_call(
    message: &mut Value,
    parent: Option<&str>,
    mut f: impl FnMut(&str, &mut Map<String, Value>),
) {
    for call in message
        .get_mut("tool_calls")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        let id = call.get("id").and_then(Value::as_str).map(String::from);
        if let (Some(id), Some(call)) = (id, call.as_object_mut()) {
            f(&frame_id(parent, &id), call);
        }
    }
}

fn digest(value: &Value) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    value.to_string().hash(&mut hasher);
    hasher.finish()
}

/// The writer's side: remembers which arguments each call id was given.
#[derive(Debug, Default)]
pub struct Compactor {
    /// Frame id → digest of the arguments its latest `llm_call` gave it.
    calls: HashMap<String, u64>,
    /// Digests of the `message` lines written since the last top-level `llm_call`.
    messages: Vec<u64>,
}

impl Compactor {
    /// Whether lines of this type may be rewritten (the others are written as they are).
    pub fn touches(kind: &str) -> bool {
        matches!(
            kind,
            "llm_call" | "tool_call" | "approval_requested" | "message"
        )
    }

    /// Rewrites the `data` of one line of type `kind` (an event, or `message`) in place.
    pub fn compact(&mut self, kind: &str, data: &mut Value) {
        match kind {
            "llm_call" => {
                let Some(data) = data.as_object_mut() else {
                    return;
                };
                let parent = data.get("parent").and_then(Value::as_str).map(String::from);
                for (frame, arguments) in made_calls(data, parent.as_deref()) {
                    self.calls.insert(frame, digest(arguments));
                }
                match parent {
                    // The user's conversation: its new messages are usually exactly the
                    // `message` lines written since the last call (not after a resume).
                    None => {
                        let written = std::mem::take(&mut self.messages);
                        let same = data
                            .get("new_messages")
                            .and_then(Value::as_array)
                            .is_some_and(|new| {
                                new.len() == written.len() && new.iter().map(digest).eq(written)
                            });
                        if same {
                            data.remove("new_messages");
                            data.insert(NEW_MESSAGES_FROM.into(), "message_lines".into());
                        }
                    }
                    Some(parent) => {
                        for message in data
                            .get_mut("new_messages")
                            .and_then(Value::as_array_mut)
                            .into_iter()
                            .flatten()
                        {
                            self.elide_message(Some(&parent), message);
                        }
                    }
                }
            }
            "tool_call" | "approval_requested" => {
                if let Some(data) = data.as_object_mut() {
                    elide_new_file_diff(data);
                    let id = data.get("id").and_then(Value::as_str).map(String::from);
                    if let Some(id) = id {
                        self.elide(&id, data);
                    }
                }
            }
            "message" => {
                self.messages.push(digest(data));
                self.elide_message(None, data);
            }
            _ => {}
        }
    }

    fn elide_message(&self, parent: Option<&str>, message: &mut Value) {
        for_each_call(message, parent, |frame, call| self.elide(frame, call));
    }

    /// Drops `arguments` from `object` when the latest `llm_call` gave `frame` the same ones.
    fn elide(&self, frame: &str, object: &mut Map<String, Value>) {
        let same = match (self.calls.get(frame), object.get("arguments")) {
            (Some(known), Some(arguments)) => *known == digest(arguments),
            _ => false,
        };
        if same {
            object.remove("arguments");
            object.insert(ARGUMENTS_FROM.into(), "llm_call".into());
        }
    }
}

/// A new file's diff is its content with `+` before each line: rebuilt from the arguments
/// (stored once) instead of stored twice.
const DIFF_FROM: &str = "diff_from";

/// The `path` and `content` of a `write_file`-shaped call.
fn new_file(data: &Map<String, Value>) -> Option<(&str, &str)> {
    let arguments = data.get("arguments")?;
    Some((
        arguments.get("path")?.as_str()?,
        arguments.get("content")?.as_str()?,
    ))
}

fn elide_new_file_diff(data: &mut Map<String, Value>) {
    let same = match (new_file(data), data.get("diff").and_then(Value::as_str)) {
        (Some((path, content)), Some(diff)) => {
            diff == crate::tools::diff::render(path, None, content)
        }
        _ => false,
    };
    if same {
        data.remove("diff");
        data.insert(DIFF_FROM.into(), "new_file".into());
    }
}

fn restore_new_file_diff(data: &mut Map<String, Value>) {
    if data.remove(DIFF_FROM).is_none() {
        return;
    }
    if let Some((path, content)) = new_file(data) {
        let diff = crate::tools::diff::render(path, None, content);
        data.insert("diff".into(), Value::String(diff));
    }
}

/// The reader's side: puts back what the writer elided, line by line in file order.
#[derive(Debug, Default)]
pub struct Expander {
    /// Frame id → the arguments its latest `llm_call` gave it.
    calls: HashMap<String, Value>,
    /// `message` lines since the last top-level `llm_call`: its `new_messages`.
    messages: Vec<Value>,
    /// Elided arguments that could not be restored (their `llm_call` line was lost).
    pub lost: usize,
}

impl Expander {
    /// Restores one line's JSON in place.
    pub fn expand(&mut self, line: &mut Value) {
        let kind = line
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let Some(data) = line.get_mut("data") else {
            return;
        };
        match kind.as_str() {
            "llm_call" => {
                let Some(data) = data.as_object_mut() else {
                    return;
                };
                let parent = data.get("parent").and_then(Value::as_str).map(String::from);
                for (frame, arguments) in made_calls(data, parent.as_deref()) {
                    self.calls.insert(frame, arguments.clone());
                }
                if parent.is_none() {
                    let messages = std::mem::take(&mut self.messages);
                    if data.remove(NEW_MESSAGES_FROM).is_some() {
                        data.insert("new_messages".into(), Value::Array(messages));
                    }
                } else {
                    for message in data
                        .get_mut("new_messages")
                        .and_then(Value::as_array_mut)
                        .into_iter()
                        .flatten()
                    {
                        self.restore_message(parent.as_deref(), message);
                    }
                }
            }
            "tool_call" | "approval_requested" => {
                if let Some(data) = data.as_object_mut() {
                    let id = data.get("id").and_then(Value::as_str).map(String::from);
                    if let Some(id) = id {
                        self.restore(&id, data);
                    }
                    restore_new_file_diff(data);
                }
            }
            "message" => {
                self.restore_message(None, data);
                self.messages.push(data.clone());
            }
            _ => {}
        }
    }

    fn restore_message(&mut self, parent: Option<&str>, message: &mut Value) {
        for_each_call(message, parent, |frame, call| self.restore(frame, call));
    }

    fn restore(&mut self, frame: &str, object: &mut Map<String, Value>) {
        if object.remove(ARGUMENTS_FROM).is_none() {
            return;
        }
        let arguments = match self.calls.get(frame) {
            Some(arguments) => arguments.clone(),
            None => {
                self.lost += 1;
                Value::Null
            }
        };
        object.insert("arguments".into(), arguments);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn roundtrip(lines: &[Value]) -> (Vec<Value>, Vec<Value>, usize) {
        let mut compactor = Compactor::default();
        let mut expander = Expander::default();
        let mut written = Vec::new();
        let mut read = Vec::new();
        for line in lines {
            let mut line = line.clone();
            let kind = line["type"].as_str().unwrap().to_string();
            compactor.compact(&kind, &mut line["data"]);
            written.push(line.clone());
            expander.expand(&mut line);
            read.push(line);
        }
        (written, read, expander.lost)
    }

    #[test]
    fn arguments_are_written_once_and_read_back_whole() {
        let args = json!({"command": "rm -rf build", "timeout_secs": 5});
        let call = json!({"id": "c1", "name": "shell", "arguments": args});
        let lines = vec![
            json!({"type": "message", "data": {"role": "user", "content": "go"}}),
            json!({"type": "llm_call", "data": {"parent": null, "tool_calls": [call], "new_messages": [{"role": "user", "content": "go"}]}}),
            json!({"type": "tool_call", "data": {"id": "c1", "name": "shell", "arguments": args, "parent": null}}),
            json!({"type": "approval_requested", "data": {"id": "c1", "name": "shell", "arguments": args}}),
            json!({"type": "message", "data": {"role": "assistant", "tool_calls": [call]}}),
            json!({"type": "llm_call", "data": {"parent": "c9", "tool_calls": [{"id": "k", "name": "t", "arguments": {"x": 1}}], "new_messages": [{"role": "assistant", "tool_calls": [{"id": "k", "name": "t", "arguments": {"x": 1}}]}]}}),
            json!({"type": "tool_call", "data": {"id": "c9/k", "name": "t", "arguments": {"x": 1}, "parent": "c9"}}),
        ];
        let (written, read, lost) = roundtrip(&lines);
        let text: String = written.iter().map(Value::to_string).collect();
        assert_eq!(text.matches("rm -rf build").count(), 1, "{text}");
        assert_eq!(text.matches("\"x\":1").count(), 1, "{text}");
        assert_eq!(lost, 0);
        assert_eq!(read[2], lines[2]);
        assert_eq!(read[3], lines[3]);
        assert_eq!(read[4], lines[4]);
        assert_eq!(read[5], lines[5]);
        assert_eq!(read[6], lines[6]);
        // The top-level llm_call's new messages come back from the message lines.
        assert_eq!(read[1], lines[1]);
    }

    #[test]
    fn a_new_files_diff_is_rebuilt_from_its_arguments_and_an_edits_is_kept() {
        let args = json!({"path": "n.txt", "content": "first line of a long note\n"});
        let call = json!({"id": "w", "name": "write_file", "arguments": args});
        let diff = crate::tools::diff::render("n.txt", None, "first line of a long note\n");
        let edit = crate::tools::diff::render("a", Some("x\n"), "y\n");
        let lines = vec![
            json!({"type": "llm_call", "data": {"parent": null, "tool_calls": [call]}}),
            json!({"type": "approval_requested", "data": {"id": "w", "name": "write_file", "arguments": args, "diff": diff}}),
            json!({"type": "approval_requested", "data": {"id": "e", "name": "edit_file", "arguments": {"path": "a"}, "diff": edit}}),
        ];
        let (written, read, lost) = roundtrip(&lines);
        let text: String = written.iter().map(Value::to_string).collect();
        assert_eq!(
            text.matches("first line of a long note").count(),
            1,
            "{text}"
        );
        assert_eq!(lost, 0);
        assert_eq!(read[1], lines[1]);
        assert_eq!(
            written[2], lines[2],
            "an edit's diff is no copy of anything"
        );
    }

    #[test]
    fn different_or_unknown_arguments_are_kept() {
        let lines = vec![
            json!({"type": "llm_call", "data": {"parent": null, "tool_calls": [{"id": "c1", "name": "t", "arguments": {"a": 1}}]}}),
            // A reused id with other arguments, and a call no llm_call made (a needed call).
            json!({"type": "tool_call", "data": {"id": "c1", "arguments": {"a": 2}}}),
            json!({"type": "tool_call", "data": {"id": "n1", "arguments": {"b": 1}}}),
        ];
        let (written, read, _) = roundtrip(&lines);
        assert_eq!(written[1], lines[1]);
        assert_eq!(written[2], lines[2]);
        assert_eq!(read, lines);
    }

    #[test]
    fn new_messages_that_are_not_the_message_lines_are_kept() {
        let lines = vec![
            json!({"type": "message", "data": {"role": "user", "content": "new"}}),
            // After a resume the first call also carries the history of an earlier process.
            json!({"type": "llm_call", "data": {"parent": null, "tool_calls": [], "new_messages": [{"role": "user", "content": "old"}, {"role": "user", "content": "new"}]}}),
        ];
        let (written, read, _) = roundtrip(&lines);
        assert_eq!(written[1], lines[1]);
        assert_eq!(read, lines);
    }

    #[test]
    fn a_lost_llm_call_is_counted_not_invented() {
        let mut expander = Expander::default();
        let mut line =
            json!({"type": "tool_call", "data": {"id": "c1", "arguments_from": "llm_call"}});
        expander.expand(&mut line);
        assert_eq!(line["data"]["arguments"], Value::Null);
        assert_eq!(expander.lost, 1);
    }
}
