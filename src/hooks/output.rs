//! What a hook's exit code and output mean: exit 2 blocks with stderr as the reason; exit 0
//! may print JSON (`decision`, `reason`, `additional_context`, or Claude Code's
//! `hookSpecificOutput.permissionDecision` …); anything else is the hook failing, which is
//! reported and changes nothing.

use serde_json::Value;

use super::HookEvent;
use crate::event::HookDecision;

/// Longest reason or context kept from a hook.
pub const MAX_TEXT: usize = 8 * 1024;

/// What a hook said.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verdict {
    /// Its decision, if it made one.
    pub decision: Option<HookDecision>,
    /// Why.
    pub reason: Option<String>,
    /// Context for the model.
    pub context: Option<String>,
}

/// Reads a hook's end: its exit code (`None`: killed by a signal) and output.
pub fn parse(
    event: HookEvent,
    exit: Option<i32>,
    stdout: &str,
    stderr: &str,
) -> Result<Verdict, String> {
    let text = |s: &str| {
        let s = s.trim();
        (!s.is_empty()).then(|| cut(s, MAX_TEXT))
    };
    match exit {
        Some(0) => {}
        Some(2) => {
            return Ok(Verdict {
                decision: Some(HookDecision::Deny),
                reason: Some(text(stderr).unwrap_or_else(|| "blocked by a hook".to_string())),
                context: None,
            });
        }
        Some(code) => {
            let said = text(stderr).map(|s| format!(": {s}")).unwrap_or_default();
            return Err(format!("it exited {code}{said}"));
        }
        None => return Err("it was killed by a signal".to_string()),
    }
    let out = stdout.trim();
    if !out.starts_with('{') {
        // Plain output is context where the model is about to read a request.
        let context = match event {
            HookEvent::SessionStart | HookEvent::UserPromptSubmit => text(out),
            _ => None,
        };
        return Ok(Verdict {
            context,
            ..Verdict::default()
        });
    }
    let json: Value =
        serde_json::from_str(out).map_err(|e| format!("its output is not valid JSON: {e}"))?;
    let specific = &json["hookSpecificOutput"];
    let field = |keys: &[&str]| {
        keys.iter().find_map(|k| {
            json[*k]
                .as_str()
                .or_else(|| specific[*k].as_str())
                .and_then(text)
        })
    };
    let decision = match field(&["decision", "permissionDecision"]).as_deref() {
        None => None,
        Some("allow" | "approve") => Some(HookDecision::Allow),
        Some("deny" | "block") => Some(HookDecision::Deny),
        Some("ask") => Some(HookDecision::Ask),
        Some(other) => {
            return Err(format!(
                "its decision '{}' is none of allow, deny, ask",
                crate::text::summarize(other, 40)
            ));
        }
    };
    let mut verdict = Verdict {
        decision,
        reason: field(&["reason", "permissionDecisionReason"]),
        context: field(&["additional_context", "additionalContext"]),
    };
    // `"continue": false` stops what the hook guards.
    if json["continue"] == Value::Bool(false) {
        verdict.decision = Some(HookDecision::Deny);
        if verdict.reason.is_none() {
            verdict.reason = field(&["stopReason"]);
        }
    }
    Ok(verdict)
}

/// `s` cut to `max` bytes on a character boundary, marked when cut (lines kept).
fn cut(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_and_the_json_contract() {
        let p = |exit, out: &str, err: &str| parse(HookEvent::PreToolUse, exit, out, err);
        let v = p(Some(2), "", "no rm here\n").unwrap();
        assert_eq!(v.decision, Some(HookDecision::Deny));
        assert_eq!(v.reason.as_deref(), Some("no rm here"));
        assert_eq!(
            p(Some(2), "", "").unwrap().reason.as_deref(),
            Some("blocked by a hook")
        );
        assert!(
            p(Some(1), "", "oops")
                .unwrap_err()
                .contains("exited 1: oops")
        );
        assert!(p(None, "", "").unwrap_err().contains("signal"));
        assert_eq!(p(Some(0), "", "").unwrap(), Verdict::default());
        assert_eq!(p(Some(0), "just words", "").unwrap(), Verdict::default());
        let v = p(Some(0), r#"{"decision":"deny","reason":"not on main"}"#, "").unwrap();
        assert_eq!(
            (v.decision, v.reason.as_deref()),
            (Some(HookDecision::Deny), Some("not on main"))
        );
        let v = p(
            Some(0),
            r#"{"hookSpecificOutput":{"permissionDecision":"ask","permissionDecisionReason":"big","additionalContext":"ctx"}}"#,
            "",
        )
        .unwrap();
        assert_eq!(v.decision, Some(HookDecision::Ask));
        assert_eq!(v.reason.as_deref(), Some("big"));
        assert_eq!(v.context.as_deref(), Some("ctx"));
        assert_eq!(
            p(Some(0), r#"{"decision":"approve"}"#, "")
                .unwrap()
                .decision,
            Some(HookDecision::Allow)
        );
        let v = p(Some(0), r#"{"continue":false,"stopReason":"halt"}"#, "").unwrap();
        assert_eq!(
            (v.decision, v.reason.as_deref()),
            (Some(HookDecision::Deny), Some("halt"))
        );
        assert!(
            p(Some(0), r#"{"decision":"maybe"}"#, "")
                .unwrap_err()
                .contains("none of")
        );
        assert!(
            p(Some(0), "{broken", "")
                .unwrap_err()
                .contains("not valid JSON")
        );
        // Plain output is context for a prompt, not for a tool call.
        let v = parse(HookEvent::UserPromptSubmit, Some(0), "branch: main\n", "").unwrap();
        assert_eq!(v.context.as_deref(), Some("branch: main"));
        let huge = "x".repeat(100_000);
        let v = p(Some(2), "", &huge).unwrap();
        assert!(v.reason.unwrap().len() <= MAX_TEXT + 8);
    }
}
