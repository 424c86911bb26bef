//! `!command` in the composer: the user's own shell command, run between requests by the
//! orchestrator task with the `shell` tool's machinery (the same sandbox, scrubbed
//! environment, timeout, output cap and process-group kill), never asked about (the user
//! typed it). Its `user_shell` events are recorded like any (session file, audit log as a
//! user command). Its output is kept for the user's next message, which carries it once,
//! marked as the output of a command the user ran.

use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{EventSink, Orchestrator};
use crate::event::{Event, EventData, UserShell, UserShellState};
use crate::tools::builtin::Shell;
use crate::tools::builtin::shell::ShellParams;
use crate::tools::{ToolContext, ToolError, TypedTool};

/// Most bytes of a command's output kept for the chat and the next message (its end).
pub const MAX_OUTPUT: usize = 16 * 1024;

/// Runs `command` for the user; events go to `sink`. Returns the context the next message
/// carries (`None` when it was cancelled).
pub async fn run(
    orchestrator: &Orchestrator,
    command: &str,
    sink: &mut dyn EventSink,
    cancel: &CancellationToken,
) -> Option<String> {
    let settings = &orchestrator.settings;
    let secrets = &settings.tools.secrets;
    let request_id: Arc<str> = Arc::from(uuid::Uuid::new_v4().to_string());
    let id = format!("user-shell-{}", &request_id[..8]);
    let mut shell = UserShell {
        id: id.clone(),
        command: secrets.redact(command).into_owned(),
        state: UserShellState::Running,
        exit_code: None,
        output: String::new(),
        error: None,
        duration_ms: 0,
        sandbox: Some(settings.tools.sandbox.confinement(false)),
    };
    let clock = &orchestrator.clock;
    let emit = |sink: &mut dyn EventSink, shell: &UserShell| {
        sink.emit(Event {
            timestamp: clock.unix_ms(),
            request_id: Arc::clone(&request_id),
            data: EventData::UserShell(Box::new(shell.clone())),
        });
    };
    emit(sink, &shell);
    let ctx = ToolContext {
        workdir: settings.workdir.clone(),
        settings: Arc::clone(&settings.tools),
        cancel: cancel.clone(),
        call: id,
        progress: None,
        seen: None,
        trace: None,
    };
    let params = ShellParams {
        command: command.to_string(),
        timeout_secs: None,
        unsandboxed: false,
    };
    let started = Instant::now();
    let result = Shell.run(params, &ctx).await;
    shell.duration_ms = started.elapsed().as_millis() as u64;
    let exit_code = |value: &Value| {
        value["exit_code"]
            .as_i64()
            .and_then(|c| i32::try_from(c).ok())
    };
    match result {
        Ok(value) => {
            shell.state = UserShellState::Exited;
            shell.exit_code = exit_code(&value);
            shell.output = output_of(&value);
        }
        Err(ToolError::ExitNonzero(value)) => {
            shell.state = UserShellState::Exited;
            shell.exit_code = exit_code(&value);
            shell.output = output_of(&value);
        }
        Err(ToolError::SandboxDenied(value)) => {
            shell.state = UserShellState::Exited;
            shell.exit_code = exit_code(&value);
            shell.output = output_of(&value);
            shell.error = value["note"].as_str().map(String::from);
        }
        Err(_) if cancel.is_cancelled() => shell.state = UserShellState::Cancelled,
        Err(error) => {
            let message = error.to_string();
            shell.state = if message.contains("timed out") {
                UserShellState::TimedOut
            } else {
                UserShellState::Failed
            };
            shell.error = Some(message);
        }
    }
    shell.output = tail(&secrets.redact(&shell.output), MAX_OUTPUT);
    if let Some(error) = &shell.error {
        shell.error = Some(secrets.redact(error).into_owned());
    }
    emit(sink, &shell);
    (shell.state != UserShellState::Cancelled).then(|| context(&shell))
}

/// The message of the user's next request, with the output of the commands they ran since
/// the last one after it.
pub fn with_context(prompt: &str, outputs: &[String]) -> String {
    if outputs.is_empty() {
        return prompt.to_string();
    }
    format!("{prompt}\n\n{}", outputs.join("\n\n"))
}

/// How a command's output reaches the model: marked as the user's, not the model's doing.
fn context(shell: &UserShell) -> String {
    let how = match (shell.state, shell.exit_code) {
        (UserShellState::Exited, Some(code)) => format!("exit code {code}"),
        (UserShellState::TimedOut, _) => "timed out".to_string(),
        (UserShellState::Failed, _) => "could not be run".to_string(),
        _ => "ended".to_string(),
    };
    let mut body = shell.output.clone();
    if let Some(error) = &shell.error {
        body.push_str(&format!("\n{error}"));
    }
    let fence = if body.contains("```") { "~~~~" } else { "```" };
    format!(
        "[The user ran this command in their terminal (not a tool call of yours): `{}` ({how}). Its output, for context:]\n{fence}\n{}\n{fence}",
        shell.command,
        body.trim_end()
    )
}

/// The text a command printed: stdout, then stderr under a mark.
fn output_of(value: &Value) -> String {
    let stdout = value["stdout"].as_str().unwrap_or_default();
    let stderr = value["stderr"].as_str().unwrap_or_default();
    match (stdout.is_empty(), stderr.is_empty()) {
        (_, true) => stdout.to_string(),
        (true, false) => stderr.to_string(),
        (false, false) => format!("{}\n[stderr]\n{stderr}", stdout.trim_end()),
    }
}

/// The last `max` bytes of `text` (at a char boundary), said when cut.
fn tail(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("[… {start} bytes cut]\n{}", &text[start..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_is_marked_and_carried_after_the_message() {
        let shell = UserShell {
            id: "u".into(),
            command: "ls".into(),
            state: UserShellState::Exited,
            exit_code: Some(0),
            output: "a.txt\nb.txt\n".into(),
            error: None,
            duration_ms: 3,
            sandbox: None,
        };
        let text = with_context("what are these?", &[context(&shell)]);
        assert!(text.starts_with("what are these?\n\n[The user ran this command"));
        assert!(text.contains("`ls` (exit code 0)"));
        assert!(text.ends_with("```\na.txt\nb.txt\n```"), "{text}");
        assert_eq!(with_context("x", &[]), "x");
        assert_eq!(tail("héllo", 4), "[… 3 bytes cut]\nllo");
    }
}
