//! The agent's terminals as calls: each is a `terminal` frame (under the agent's call in
//! progress, the one it runs for) from its start to its exit, its last lines shown while it
//! runs and its output in the payload. ACP links a terminal to its call only after it starts
//! (a `terminal` content block), so the parent is the agent's newest call still open.

use serde_json::json;

use super::{Call, Translator};
use crate::acp::client::terminals::{News, Started};
use crate::event::{EventData, FrameState, ToolStatus};

/// The name of a terminal's calls.
pub const NAME: &str = "terminal";

impl Translator {
    /// Terminal `started` began at `now`: its call and frame.
    pub fn terminal_started(&mut self, started: &Started, now: u64) -> Vec<EventData> {
        let mut out = self.close_span(now);
        let parent = self
            .calls
            .iter()
            .filter(|(_, c)| !c.ended && c.name != NAME)
            .max_by_key(|(_, c)| c.seq)
            .map(|(id, _)| id.clone());
        let mut id = format!("{NAME}-{}", started.id);
        while self.calls.contains_key(&id) {
            id.push('\'');
        }
        let arguments = json!({ "command": started.command, "cwd": started.cwd });
        let call = Call {
            name: NAME.to_string(),
            arguments: arguments.clone(),
            title: crate::text::summarize(&started.command, 120),
            parent: parent.clone(),
            state: FrameState::Running,
            started: now,
            seq: self.calls.len(),
            content: Vec::new(),
            locations: Vec::new(),
            raw_output: None,
            updates: Default::default(),
            dropped_updates: 0,
            ended: false,
        };
        out.push(EventData::ToolCall {
            turn: self.turn.max(1),
            id: id.clone(),
            name: NAME.to_string(),
            arguments,
            parent,
            sandbox: None,
        });
        out.push(EventData::StackPush(super::frame(
            &id,
            &call,
            FrameState::Running,
        )));
        self.calls.insert(id.clone(), call);
        self.terminals.insert(started.id.clone(), id);
        out
    }

    /// What a terminal did: its last lines, or its end.
    pub fn terminal(&mut self, news: News, now: u64) -> Vec<EventData> {
        match news {
            News::Output { id, tail } => match self.open_terminal(&id) {
                Some(call) => vec![EventData::ToolOutput { id: call, tail }],
                None => Vec::new(),
            },
            News::Ended {
                id,
                exit,
                output,
                truncated,
            } => {
                let Some(call) = self.open_terminal(&id) else {
                    return Vec::new();
                };
                let ok = exit.exit_code == Some(0);
                let error = (!ok).then(|| match (&exit.exit_code, &exit.signal) {
                    (Some(code), _) => format!("the command exited with code {code}"),
                    (None, Some(signal)) => format!("the command was killed ({signal})"),
                    (None, None) => "the command ended abnormally".to_string(),
                });
                // The agent reads up to 1 MiB; the payload (session file, timeline) keeps the
                // last part, as bounded as a call's content.
                let from = tail_start(&output, super::MAX_CONTENT);
                let mut result = json!({
                    "exit_code": exit.exit_code,
                    "signal": exit.signal,
                    "output": &output[from..],
                    "truncated": truncated || from > 0,
                });
                if from > 0 {
                    result["output_omitted"] = json!(from);
                }
                let status = if ok {
                    ToolStatus::Ok
                } else {
                    ToolStatus::Failed
                };
                self.end_terminal(&call, status, result, error, now)
            }
        }
    }

    /// The turn ends: terminals still running are killed by the engine; their calls end
    /// cancelled here, so no frame outlives its run.
    pub(super) fn end_terminals(&mut self, now: u64) -> Vec<EventData> {
        let open: Vec<String> = self
            .terminals
            .values()
            .filter(|call| self.calls.get(*call).is_some_and(|c| !c.ended))
            .cloned()
            .collect();
        let mut out = Vec::new();
        for call in open {
            let error = "the turn ended; taco killed the command".to_string();
            out.extend(self.end_terminal(
                &call,
                ToolStatus::Cancelled,
                json!({ "killed": true }),
                Some(error),
                now,
            ));
        }
        out
    }

    /// The call of terminal `id`, while it is open.
    fn open_terminal(&self, id: &str) -> Option<String> {
        let call = self.terminals.get(id)?;
        self.calls
            .get(call)
            .is_some_and(|c| !c.ended)
            .then(|| call.clone())
    }

    fn end_terminal(
        &mut self,
        id: &str,
        status: ToolStatus,
        result: serde_json::Value,
        error: Option<String>,
        now: u64,
    ) -> Vec<EventData> {
        let Some(call) = self.calls.get_mut(id) else {
            return Vec::new();
        };
        call.ended = true;
        call.state = match status {
            ToolStatus::Ok => FrameState::Done,
            ToolStatus::Cancelled => FrameState::Cancelled,
            _ => FrameState::Failed,
        };
        vec![
            EventData::ToolResult {
                id: id.to_string(),
                name: NAME.to_string(),
                ok: status == ToolStatus::Ok,
                status: Some(status),
                denied_by: None,
                result: Some(result),
                error,
                duration_ms: now.saturating_sub(call.started),
            },
            EventData::StackPop(super::frame(id, call, call.state)),
        ]
    }
}

/// Where the last `max` bytes of `text` start, at a character.
fn tail_start(text: &str, max: usize) -> usize {
    let cut = text.len().saturating_sub(max);
    (cut..=text.len())
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(text.len())
}
