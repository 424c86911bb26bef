//! `taco exec` in text mode says what each tool call did, one line on stderr when it ends
//! (issue 27.5): `→ shell cargo test · exit 3 · 2.1 s`, denials, sandbox refusals. The run
//! model decides how it ended and how long it ran, as for every pane of the TUI.

use crate::event::{Event, EventData, ToolStatus};
use crate::run_model::RunModel;
use crate::text::{duration, plain, summarize};

/// Follows the stream and words each ended call.
#[derive(Debug, Default)]
pub(super) struct CallLines {
    run: RunModel,
}

impl CallLines {
    /// Takes one event; returns the line for a call it ended.
    pub(super) fn line(&mut self, event: &Event) -> Option<String> {
        self.run.apply(event);
        match &event.data {
            EventData::ToolResult { id, name, .. } => {
                let call = self.run.call(id)?;
                let summary = &call.summary;
                let status = call.state.status()?;
                let end = match status {
                    ToolStatus::SandboxDenied => "refused by the sandbox".to_string(),
                    _ => call.end_label().unwrap_or_default(),
                };
                let nested = if call.parent.is_some() { "  " } else { "" };
                let took = match (status, call.duration_ms) {
                    (ToolStatus::Denied | ToolStatus::Invalid | ToolStatus::Unknown, _) => {
                        String::new()
                    }
                    (_, Some(ms)) => format!(" · {}", duration(ms)),
                    (_, None) => String::new(),
                };
                // A model may name a tool with a megabyte: the line stays one short line.
                let head = summarize(&format!("{name} {summary}"), 120);
                Some(format!("{nested}→ {} · {end}{took}", plain(&head)))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Arc;

    fn at(ts: u64, data: EventData) -> Event {
        Event {
            timestamp: ts,
            request_id: Arc::from("r"),
            data,
        }
    }

    fn call(id: &str, name: &str, arguments: serde_json::Value) -> EventData {
        EventData::ToolCall {
            turn: 1,
            id: id.into(),
            name: name.into(),
            arguments,
            parent: None,
            sandbox: None,
        }
    }

    fn result(
        id: &str,
        name: &str,
        status: ToolStatus,
        result: Option<serde_json::Value>,
    ) -> EventData {
        EventData::ToolResult {
            id: id.into(),
            name: name.into(),
            ok: status == ToolStatus::Ok,
            status: Some(status),
            denied_by: None,
            result,
            error: None,
            duration_ms: 1,
        }
    }

    #[test]
    fn each_ended_call_is_one_line_with_how_it_ended_and_how_long_it_ran() {
        let mut lines = CallLines::default();
        assert_eq!(
            lines.line(&at(0, call("a", "shell", json!({"command": "cargo test"})))),
            None
        );
        let exit = result(
            "a",
            "shell",
            ToolStatus::ExitNonzero,
            Some(json!({"exit_code": 3})),
        );
        assert_eq!(
            lines.line(&at(2_100, exit)).as_deref(),
            Some("→ shell command=cargo test · exit 3 · 2.1 s")
        );
        lines.line(&at(3_000, call("b", "read_file", json!({"path": "a.txt"}))));
        let ok = result("b", "read_file", ToolStatus::Ok, Some(json!("hi")));
        assert_eq!(
            lines.line(&at(3_012, ok)).as_deref(),
            Some("→ read_file path=a.txt · ok · 12 ms")
        );
        lines.line(&at(
            4_000,
            call("c", "shell", json!({"command": "rm -rf v"})),
        ));
        let denied = result("c", "shell", ToolStatus::Denied, None);
        assert_eq!(
            lines.line(&at(4_001, denied)).as_deref(),
            Some("→ shell command=rm -rf v · denied")
        );
        lines.line(&at(
            5_000,
            call("d", "shell", json!({"command": "touch /etc/x"})),
        ));
        let refused = result(
            "d",
            "shell",
            ToolStatus::SandboxDenied,
            Some(json!({"exit_code": 1})),
        );
        assert_eq!(
            lines.line(&at(5_004, refused)).as_deref(),
            Some("→ shell command=touch /etc/x · refused by the sandbox · 4 ms")
        );
    }

    #[test]
    fn a_huge_tool_name_makes_one_short_line() {
        let mut lines = CallLines::default();
        let name = "x".repeat(1 << 20);
        lines.line(&at(0, call("a", &name, json!({"path": "p"}))));
        let line = lines
            .line(&at(1, result("a", &name, ToolStatus::Unknown, None)))
            .unwrap_or_default();
        assert!(line.chars().count() < 160, "{} chars", line.len());
    }

    #[test]
    fn control_characters_in_a_name_or_an_argument_are_inert() {
        let mut lines = CallLines::default();
        lines.line(&at(
            0,
            call("a", "shell", json!({"command": "echo \u{1b}]0;pwned\u{7}"})),
        ));
        let line = lines
            .line(&at(1, result("a", "shell", ToolStatus::Ok, None)))
            .unwrap_or_default();
        assert!(
            !line.contains('\u{1b}') && !line.contains('\u{7}'),
            "{line:?}"
        );
    }
}
