//! Slash commands: parsing, completion, and the text of the informational ones.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde_json::Value;

use crate::event::{FrameState, Scope, StackFrame};

/// The commands, for completion and suggestions.
pub const COMMANDS: [&str; 7] = [
    "/help", "/tools", "/tool", "/status", "/cancel", "/clear", "/quit",
];

/// A parsed slash command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlashCommand {
    /// `/help`.
    Help,
    /// `/tools`.
    Tools,
    /// `/tool NAME` (empty name: asks for one).
    Tool(String),
    /// `/status`.
    Status,
    /// `/cancel`.
    Cancel,
    /// `/clear`.
    Clear,
    /// `/quit` (also `/exit`).
    Quit,
    /// Anything else, with a hint.
    Unknown(String),
}

/// Parses text that starts with `/`.
pub fn parse(text: &str) -> SlashCommand {
    let text = text.trim();
    let (name, rest) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
    match name {
        "/help" | "/?" => SlashCommand::Help,
        "/tools" => SlashCommand::Tools,
        "/tool" => SlashCommand::Tool(rest.trim().to_string()),
        "/status" => SlashCommand::Status,
        "/cancel" => SlashCommand::Cancel,
        "/clear" | "/new" => SlashCommand::Clear,
        "/quit" | "/exit" | "/q" => SlashCommand::Quit,
        other => SlashCommand::Unknown(other.to_string()),
    }
}

/// What Tab does to a partly typed command: the completed text, or the candidates.
pub fn complete(text: &str) -> Result<String, Vec<&'static str>> {
    let matches: Vec<&'static str> = COMMANDS
        .iter()
        .copied()
        .filter(|c| c.starts_with(text))
        .collect();
    match matches.as_slice() {
        [] => Err(Vec::new()),
        [one] => Ok(if *one == "/tool" {
            "/tool ".to_string()
        } else {
            (*one).to_string()
        }),
        many => {
            // Complete to the longest common prefix; list the candidates when it adds nothing.
            let first = many[0];
            let common = (text.len()..=first.len())
                .rev()
                .find(|&n| many.iter().all(|c| c.get(..n) == first.get(..n)))
                .unwrap_or(text.len());
            if common > text.len() {
                Ok(first[..common].to_string())
            } else {
                Err(matches)
            }
        }
    }
}

/// The hint for an unknown command.
pub fn unknown_hint(name: &str) -> String {
    let close: Vec<&str> = COMMANDS
        .iter()
        .copied()
        .filter(|c| {
            name.len() > 1
                && (c.starts_with(&name[..2]) || c.contains(name.trim_start_matches('/')))
        })
        .collect();
    match close.first() {
        Some(guess) => {
            format!("unknown command `{name}`. Did you mean `{guess}`? `/help` lists them all.")
        }
        None => format!("unknown command `{name}`. `/help` lists the commands."),
    }
}

/// A tool as `/tools` and `/tool` describe it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolInfo {
    /// Name.
    pub name: String,
    /// Description.
    pub description: String,
    /// JSON Schema of its arguments.
    pub schema: Value,
    /// Its policy in words (config override or default).
    pub policy: String,
    /// How to use it well, when the tool says (shown by `/tool NAME`).
    pub usage: Option<String>,
}

/// One finished call, for `/tool NAME`.
#[derive(Debug, Clone, PartialEq)]
pub struct CallRecord {
    /// Tool name.
    pub name: String,
    /// Whether it succeeded.
    pub ok: bool,
    /// How long it ran.
    pub duration_ms: u64,
    /// Short arguments.
    pub summary: String,
}

/// `/tools`: each tool, its policy and this session's grants, as Markdown.
pub fn tools_text(tools: &[ToolInfo], grants: &BTreeMap<String, Scope>) -> String {
    let mut out = String::from("**Tools**\n\n");
    for tool in tools {
        let grant = match grants.get(&tool.name) {
            Some(Scope::Session) => " · **approved for this session**",
            Some(Scope::Turn) => " · approved for this request",
            _ => "",
        };
        let first = tool
            .description
            .split(". ")
            .next()
            .unwrap_or("")
            .trim_end_matches('.');
        let _ = writeln!(out, "- `{}` ({}){grant}: {first}.", tool.name, tool.policy);
    }
    if tools.is_empty() {
        out.push_str("No tools are available.\n");
    }
    out.push_str("\n`/tool NAME` shows a tool's schema and its calls.");
    out
}

/// `/tool NAME`: description, schema and this session's calls, as Markdown.
pub fn tool_text(tool: &ToolInfo, calls: &[CallRecord]) -> String {
    let schema = serde_json::to_string_pretty(&tool.schema).unwrap_or_default();
    let mut out = format!(
        "**{}** ({})\n\n{}\n\n",
        tool.name, tool.policy, tool.description
    );
    if let Some(usage) = tool
        .usage
        .as_deref()
        .map(str::trim)
        .filter(|u| !u.is_empty())
    {
        let _ = write!(out, "**Usage**\n\n{usage}\n\n");
    }
    let _ = writeln!(out, "```json\n{schema}\n```");
    let mine: Vec<&CallRecord> = calls.iter().filter(|c| c.name == tool.name).collect();
    if mine.is_empty() {
        out.push_str("\nNo calls this session.");
    } else {
        let _ = writeln!(out, "\nCalls this session ({}):\n", mine.len());
        for call in mine {
            let mark = if call.ok { "✓" } else { "✗" };
            let _ = writeln!(
                out,
                "- {mark} `{}` · {}",
                call.summary,
                crate::tui::theme::duration(call.duration_ms)
            );
        }
    }
    out
}

/// What `/status` reports.
#[derive(Debug, Clone)]
pub struct StatusView<'a> {
    /// Live frames in tree order: nesting level (0: top level), frame, elapsed ms.
    pub frames: &'a [(usize, StackFrame, u64)],
    /// The request that started the work.
    pub request: Option<&'a str>,
    /// Turn of the current request.
    pub turn: u32,
    /// Turn limit.
    pub max_turns: u32,
    /// What the status line says is happening.
    pub activity: &'a str,
    /// Nesting depth of the stack (`StackState::depth`).
    pub depth: usize,
    /// The open question, if one waits for an answer.
    pub question: Option<&'a str>,
}

/// `/status`: the stack as a tree with states and elapsed times, the original request, the
/// turn, the nesting depth and what the innermost frame waits for.
pub fn status_text(view: &StatusView<'_>) -> String {
    let mut out = format!(
        "**Status**: {} · turn {}/{} · nesting depth {}\n\n",
        view.activity, view.turn, view.max_turns, view.depth
    );
    match view.request {
        Some(request) => {
            let _ = writeln!(
                out,
                "Original request: “{}”\n",
                crate::orchestrator::summarize(request, 200)
            );
        }
        None => out.push_str("No request yet.\n\n"),
    }
    if view.frames.is_empty() {
        out.push_str("Tool stack: empty.");
        return out;
    }
    let plural = if view.frames.len() == 1 { "" } else { "s" };
    let _ = writeln!(
        out,
        "Tool stack ({} frame{plural}, depth {}):\n",
        view.frames.len(),
        view.depth
    );
    for (level, frame, elapsed_ms) in view.frames {
        // Markdown nests a list item two spaces under its parent's.
        let indent = "  ".repeat((*level).min(16));
        let _ = writeln!(
            out,
            "{indent}- `{}` {} · {} · {}",
            frame.name,
            frame.summary,
            state_label(frame.state),
            crate::tui::theme::duration(*elapsed_ms)
        );
    }
    // The innermost frame: the deepest, the newest of equals (tree order puts it last).
    let innermost = view
        .frames
        .iter()
        .rev()
        .max_by_key(|(level, _, _)| *level)
        .map(|(_, frame, _)| frame);
    if let Some(frame) = innermost {
        let waits = match frame.state {
            FrameState::AwaitingApproval => "waits for your approval".to_string(),
            FrameState::AwaitingInput => match view.question {
                Some(question) => format!(
                    "waits for your answer: “{}”",
                    crate::orchestrator::summarize(question, 200)
                ),
                None => "waits for your input".to_string(),
            },
            FrameState::Running => "is running (nothing to answer)".to_string(),
            other => format!("is {}", state_label(other)),
        };
        let _ = write!(out, "\nInnermost: `{}` {waits}.", frame.name);
    }
    out
}

/// A frame state in words.
pub fn state_label(state: FrameState) -> &'static str {
    match state {
        FrameState::AwaitingApproval => "awaiting approval",
        FrameState::Running => "running",
        FrameState::AwaitingInput => "awaiting input",
        FrameState::Done => "done",
        FrameState::Failed => "failed",
        FrameState::Denied => "denied",
        FrameState::Cancelled => "cancelled",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_commands_and_arguments() {
        assert_eq!(parse("/tool  shell "), SlashCommand::Tool("shell".into()));
        assert_eq!(parse("/quit"), SlashCommand::Quit);
        assert_eq!(parse("/nope x"), SlashCommand::Unknown("/nope".into()));
    }

    #[test]
    fn tab_completes_unique_prefixes_and_lists_ambiguous_ones() {
        assert_eq!(complete("/he"), Ok("/help".into()));
        assert_eq!(complete("/st"), Ok("/status".into()));
        assert_eq!(complete("/too"), Ok("/tool".into()));
        assert_eq!(complete("/tool"), Err(vec!["/tools", "/tool"]));
        assert_eq!(complete("/c"), Err(vec!["/cancel", "/clear"]));
        assert_eq!(complete("/cl"), Ok("/clear".into()));
        assert_eq!(complete("/x"), Err(vec![]));
    }

    #[test]
    fn unknown_commands_get_a_hint() {
        assert!(unknown_hint("/stat").contains("/status"));
        assert!(unknown_hint("/zzz").contains("/help"));
    }
}
