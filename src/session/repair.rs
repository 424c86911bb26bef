//! A resumed conversation the APIs accept (issue 10.3): a lost line (a crash, a full disk)
//! must not leave a tool call without its result, or a result without its call, for good.

use crate::conversation::{Message, Role};

/// The content given to a call whose result line was lost.
const LOST: &str =
    r#"{"error":"the result of this call was lost (its line is missing from the session file)"}"#;

/// Gives every tool call of an assistant message a result (a synthetic "result lost" one,
/// placed with the other results of its turn) and drops results whose call is not right
/// before them. Returns the repaired messages and what was repaired, ready to show.
pub fn repair(messages: Vec<Message>) -> (Vec<Message>, Vec<String>) {
    let mut out: Vec<Message> = Vec::with_capacity(messages.len());
    let mut lost = 0usize;
    let mut orphans = 0usize;
    // The calls of the latest assistant message that still wait for their results.
    let mut waiting: Vec<(String, String)> = Vec::new();
    for message in messages {
        if message.role == Role::Tool {
            let id = message.tool_call_id.as_deref().unwrap_or("");
            if let Some(i) = waiting.iter().position(|(w, _)| w == id) {
                waiting.remove(i);
                out.push(message);
            } else {
                orphans += 1;
            }
            continue;
        }
        lost += close(&mut out, &mut waiting);
        if message.role == Role::Assistant {
            waiting = message
                .tool_calls
                .iter()
                .map(|c| (c.id.clone(), c.name.clone()))
                .collect();
        }
        out.push(message);
    }
    lost += close(&mut out, &mut waiting);
    let mut notes = Vec::new();
    if lost > 0 {
        notes.push(format!(
            "{lost} tool calls had lost their results (missing lines); the model is told they were lost"
        ));
    }
    if orphans > 0 {
        notes.push(format!(
            "{orphans} tool results had lost their calls (missing lines) and were left out"
        ));
    }
    (out, notes)
}

/// Adds a "lost" result for every call still waiting; returns how many.
fn close(out: &mut Vec<Message>, waiting: &mut Vec<(String, String)>) -> usize {
    let n = waiting.len();
    for (id, name) in waiting.drain(..) {
        out.push(Message::tool(id, name, LOST.to_string()));
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::ToolCall;

    fn asks(ids: &[&str]) -> Message {
        let calls = ids
            .iter()
            .map(|id| ToolCall {
                id: (*id).into(),
                name: "shell".into(),
                arguments: serde_json::json!({}),
            })
            .collect();
        Message::assistant(None, None, calls)
    }

    fn result(id: &str) -> Message {
        Message::tool(id.to_string(), "shell", "{}".into())
    }

    #[test]
    fn a_whole_conversation_is_left_alone() {
        let messages = vec![
            Message::system("s"),
            Message::user("q"),
            asks(&["a", "b"]),
            result("a"),
            result("b"),
            Message::assistant(Some("done".into()), None, Vec::new()),
        ];
        let (out, notes) = repair(messages.clone());
        assert_eq!(out, messages);
        assert!(notes.is_empty());
    }

    #[test]
    fn a_lost_result_is_replaced_in_its_turn_and_an_orphan_dropped() {
        let messages = vec![
            Message::user("q"),
            asks(&["a", "b"]),
            result("b"),
            Message::assistant(Some("next".into()), None, Vec::new()),
            result("z"),
            Message::user("again"),
            asks(&["c"]),
        ];
        let (out, notes) = repair(messages);
        let roles: Vec<(Role, Option<&str>)> = out
            .iter()
            .map(|m| (m.role, m.tool_call_id.as_deref()))
            .collect();
        assert_eq!(
            roles,
            vec![
                (Role::User, None),
                (Role::Assistant, None),
                (Role::Tool, Some("b")),
                (Role::Tool, Some("a")),
                (Role::Assistant, None),
                (Role::User, None),
                (Role::Assistant, None),
                (Role::Tool, Some("c")),
            ]
        );
        assert!(out[3].content.as_deref().unwrap().contains("lost"));
        assert_eq!(notes.len(), 2, "{notes:?}");
    }
}
