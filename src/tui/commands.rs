//! Slash commands: parsing, completion, and the text of the informational ones.

use std::fmt::Write;

use serde_json::Value;

use crate::event::{FrameState, StackFrame};
use crate::instructions::{Cut, Instructions};

/// A slash command as Tab, the command popup and `/help` list it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandInfo {
    /// What is typed, `/` included.
    pub name: &'static str,
    /// Its arguments as shown after the name (empty: none); a command that needs them
    /// completes with a space after its name.
    pub args: &'static str,
    /// What it does, in one line.
    pub about: &'static str,
}

impl CommandInfo {
    const fn new(name: &'static str, args: &'static str, about: &'static str) -> Self {
        Self { name, args, about }
    }

    /// Whether it is used with an argument (`/tool NAME`): completing it adds a space.
    pub fn takes_args(&self) -> bool {
        !self.args.is_empty() && !self.args.starts_with('[')
    }

    /// What completing it puts in the composer.
    pub fn completion(&self) -> String {
        if self.takes_args() {
            format!("{} ", self.name)
        } else {
            self.name.to_string()
        }
    }
}

/// The slash commands: the one table completion, suggestions, the popup and `/help` read.
pub const COMMANDS: &[CommandInfo] = &[
    CommandInfo::new("/help", "", "every key and command"),
    CommandInfo::new(
        "/tools",
        "",
        "grants (r revokes one), configured rules, tools",
    ),
    CommandInfo::new("/revoke", "NAME", "take a grant back (all: every one)"),
    CommandInfo::new(
        "/tool",
        "NAME",
        "a tool's description, usage, schema and calls",
    ),
    CommandInfo::new(
        "/mcp",
        "",
        "MCP servers, tools, last error; /mcp restart NAME",
    ),
    CommandInfo::new(
        "/status",
        "",
        "the stack as a tree, the request, turn and depth",
    ),
    CommandInfo::new("/cancel", "", "cancel the running request"),
    CommandInfo::new("/clear", "", "start a new conversation"),
    CommandInfo::new("/compact", "", "summarise older messages to free context"),
    CommandInfo::new(
        "/init",
        "",
        "ask the model to write AGENTS.md for this workspace",
    ),
    CommandInfo::new(
        "/model",
        "[NAME]",
        "pick a provider's model; the next request uses it",
    ),
    CommandInfo::new(
        "/provider",
        "[NAME]",
        "pick a provider (NAME MODEL: that model of it)",
    ),
    CommandInfo::new(
        "/resume",
        "[ID]",
        "pick a saved session and continue it here",
    ),
    CommandInfo::new(
        "/agent",
        "[NAME]",
        "drive an external ACP agent of [agents] here, or taco's own loop (taco)",
    ),
    CommandInfo::new(
        "/rewind",
        "",
        "take files and/or the conversation back to before a run or call",
    ),
    CommandInfo::new(
        "/trust",
        "",
        "let this project's .taco/config.toml hooks run",
    ),
    CommandInfo::new("/quit", "", "leave taco"),
];

/// The command named exactly `name` (`/` included).
pub fn find(name: &str) -> Option<&'static CommandInfo> {
    COMMANDS.iter().find(|c| c.name == name)
}

/// A parsed slash command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlashCommand {
    /// `/help`.
    Help,
    /// `/tools`.
    Tools,
    /// `/revoke NAME|PREFIX|all` (or `/tools revoke …`): take a grant back.
    Revoke(String),
    /// `/tool NAME` (empty name: asks for one).
    Tool(String),
    /// `/status`.
    Status,
    /// `/mcp`.
    Mcp,
    /// `/mcp login NAME`: log in to a server with OAuth (an empty name: asks for one).
    McpLogin(String),
    /// `/mcp restart NAME`: start that server again.
    McpRestart(String),
    /// `/cancel`.
    Cancel,
    /// `/clear`.
    Clear,
    /// `/compact`.
    Compact,
    /// `/init`: the model writes (or improves) the workspace's `AGENTS.md`.
    Init,
    /// `/model [NAME]`: the model picker, or this model of the running provider.
    Model(String),
    /// `/provider [NAME [MODEL]]`: the provider picker, or this provider (and model).
    Provider(String),
    /// `/resume [ID]`: the session picker, or this saved session.
    Resume(String),
    /// `/rewind`: the picker of runs and calls to go back to.
    Rewind,
    /// `/agent [NAME]`: the agents there are, or drive this one (`taco`: taco's own loop).
    Agent(String),
    /// `/trust`: trust the project's `.taco/config.toml` as it is now (its hooks run).
    Trust,
    /// `/quit` (also `/exit`).
    Quit,
    /// `/server:prompt args…`: an MCP server's prompt (the whole line).
    McpPrompt(String),
    /// Anything else, with a hint.
    Unknown(String),
}

/// Parses text that starts with `/`.
pub fn parse(text: &str) -> SlashCommand {
    let text = text.trim();
    let (name, rest) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
    match name {
        "/help" | "/?" => SlashCommand::Help,
        "/tools" => match rest.trim().split_once(char::is_whitespace) {
            Some(("revoke", what)) => SlashCommand::Revoke(what.trim().to_string()),
            None if rest.trim() == "revoke" => SlashCommand::Revoke(String::new()),
            _ => SlashCommand::Tools,
        },
        "/revoke" => SlashCommand::Revoke(rest.trim().to_string()),
        "/tool" => SlashCommand::Tool(rest.trim().to_string()),
        "/status" => SlashCommand::Status,
        "/mcp" => match rest.trim().split_once(char::is_whitespace) {
            Some(("login", name)) => SlashCommand::McpLogin(name.trim().to_string()),
            None if rest.trim() == "login" => SlashCommand::McpLogin(String::new()),
            Some(("restart", name)) => SlashCommand::McpRestart(name.trim().to_string()),
            None if rest.trim() == "restart" => SlashCommand::McpRestart(String::new()),
            _ => SlashCommand::Mcp,
        },
        "/cancel" => SlashCommand::Cancel,
        "/clear" | "/new" => SlashCommand::Clear,
        "/compact" => SlashCommand::Compact,
        "/init" => SlashCommand::Init,
        "/model" | "/models" => SlashCommand::Model(rest.trim().to_string()),
        "/provider" | "/providers" => SlashCommand::Provider(rest.trim().to_string()),
        "/resume" | "/sessions" => SlashCommand::Resume(rest.trim().to_string()),
        "/rewind" => SlashCommand::Rewind,
        "/agent" | "/agents" => SlashCommand::Agent(rest.trim().to_string()),
        "/trust" => SlashCommand::Trust,
        "/quit" | "/exit" | "/q" => SlashCommand::Quit,
        _ if crate::mcp::prompt_args::parse_line(text).is_some() => {
            SlashCommand::McpPrompt(text.to_string())
        }
        other => SlashCommand::Unknown(other.to_string()),
    }
}

/// Whether `name` (without `/`) is a built-in command or one of its aliases: a custom
/// command of that name is not used.
pub fn is_builtin(name: &str) -> bool {
    !matches!(
        parse(&format!("/{name}")),
        SlashCommand::Unknown(_) | SlashCommand::McpPrompt(_)
    )
}

/// What Tab does to a partly typed command: the completed text, or the candidates.
pub fn complete(text: &str) -> Result<String, Vec<&'static str>> {
    let matches: Vec<&'static str> = COMMANDS
        .iter()
        .map(|c| c.name)
        .filter(|c| c.starts_with(text))
        .collect();
    match matches.as_slice() {
        [] => Err(Vec::new()),
        [one] => Ok(find(one).map_or_else(|| (*one).to_string(), CommandInfo::completion)),
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
        .map(|c| c.name)
        .filter(|c| {
            name.len() > 1
                && (name.get(..2).is_some_and(|head| c.starts_with(head))
                    || c.contains(name.trim_start_matches('/')))
        })
        .collect();
    match close.first() {
        Some(guess) => {
            format!("unknown command '{name}'. Did you mean '{guess}'? '/help' lists them all.")
        }
        None => format!("unknown command '{name}'. '/help' lists the commands."),
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

/// The project instructions in words, for the welcome line and `/status`: which files are
/// in the system prompt (and how much of each), and the ones that could not be used.
pub fn instructions_text(found: &Instructions) -> String {
    let mut out = String::from("Project instructions: ");
    if !found.files.is_empty() {
        let files: Vec<String> = found
            .files
            .iter()
            .map(|file| match file.cut {
                Cut::Whole => format!("`{}`", file.shown),
                Cut::Truncated { kept } => format!(
                    "`{}` (cut to {} of {})",
                    file.shown,
                    kib(kept as u64),
                    kib(file.size)
                ),
                Cut::LeftOut => format!("`{}` (left out: over the total size)", file.shown),
            })
            .collect();
        let _ = write!(out, "{}.", files.join(", "));
    } else if found.names.is_empty() {
        out.push_str("off.");
    } else {
        let names: Vec<String> = found.names.iter().map(|n| format!("`{n}`")).collect();
        let _ = write!(
            out,
            "none found (looked for {} from the workspace up to the repository root).",
            names.join(" or ")
        );
    }
    for note in &found.notes {
        let _ = write!(out, " {note}.");
    }
    out
}

/// A size in KiB, one decimal.
fn kib(bytes: u64) -> String {
    format!("{:.1} KiB", bytes as f64 / 1024.0)
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
    /// The project instructions in the system prompt.
    pub instructions: &'a Instructions,
    /// The agent's checklist.
    pub todos: &'a crate::todo::TodoList,
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
                crate::text::summarize(request, 200)
            );
        }
        None => out.push_str("No request yet.\n\n"),
    }
    out.push_str(&instructions_text(view.instructions));
    out.push_str("\n\n");
    todos_text(&mut out, view.todos);
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
    // The innermost frame: one that waits for the user if any (that is what holds the work
    // up), else the deepest; `max_by_key` keeps the last of equals, the newest in tree order.
    let innermost = view
        .frames
        .iter()
        .max_by_key(|(level, frame, _)| {
            let waits = matches!(
                frame.state,
                FrameState::AwaitingApproval | FrameState::AwaitingInput
            );
            (waits, *level)
        })
        .map(|(_, frame, _)| frame);
    if let Some(frame) = innermost {
        let waits = match frame.state {
            FrameState::AwaitingApproval => "waits for your approval".to_string(),
            FrameState::AwaitingInput => match view.question {
                Some(question) => format!(
                    "waits for your answer: “{}”",
                    crate::text::summarize(question, 200)
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

/// The checklist as a Markdown list, each item with its state (`[~]`: in progress).
fn todos_text(out: &mut String, todos: &crate::todo::TodoList) {
    if todos.is_empty() {
        return;
    }
    let _ = writeln!(out, "Todo ({}):\n", todos.headline());
    out.push_str(&todos.markdown());
    out.push('\n');
}

/// A frame state in words.
pub fn state_label(state: FrameState) -> &'static str {
    match state {
        FrameState::AwaitingApproval => "awaiting approval",
        FrameState::Running => "running",
        FrameState::Queued => "queued",
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
        assert_eq!(parse("/agent  codex "), SlashCommand::Agent("codex".into()));
        assert_eq!(parse("/agents"), SlashCommand::Agent(String::new()));
        assert_eq!(parse("/nope x"), SlashCommand::Unknown("/nope".into()));
        assert_eq!(
            parse("/fx:greet name=Bob "),
            SlashCommand::McpPrompt("/fx:greet name=Bob".into())
        );
        assert_eq!(parse("/mcp"), SlashCommand::Mcp);
        assert_eq!(
            parse("/mcp login  web "),
            SlashCommand::McpLogin("web".into())
        );
        assert_eq!(parse("/mcp login"), SlashCommand::McpLogin(String::new()));
        assert_eq!(
            parse("/mcp restart  github "),
            SlashCommand::McpRestart("github".into())
        );
        assert_eq!(
            parse("/mcp restart"),
            SlashCommand::McpRestart(String::new())
        );
    }

    #[test]
    fn tab_completes_unique_prefixes_and_lists_ambiguous_ones() {
        assert_eq!(complete("/he"), Ok("/help".into()));
        assert_eq!(complete("/st"), Ok("/status".into()));
        assert_eq!(complete("/too"), Ok("/tool".into()));
        assert_eq!(complete("/tool"), Err(vec!["/tools", "/tool"]));
        assert_eq!(complete("/c"), Err(vec!["/cancel", "/clear", "/compact"]));
        assert_eq!(complete("/co"), Ok("/compact".into()));
        assert_eq!(complete("/cl"), Ok("/clear".into()));
        assert_eq!(complete("/x"), Err(vec![]));
    }

    fn frame(id: &str, name: &str, state: FrameState) -> StackFrame {
        StackFrame {
            id: id.into(),
            parent: None,
            name: name.into(),
            summary: format!("of {id}"),
            state,
        }
    }

    #[test]
    fn status_shows_the_tree_the_depth_and_what_the_innermost_frame_waits_for() {
        let frames = [
            (0, frame("d", "delegate", FrameState::Running), 2100),
            (1, frame("r", "read_file", FrameState::Running), 300),
            (0, frame("e", "edit_file", FrameState::Running), 2000),
            (1, frame("w", "write_file", FrameState::Running), 900),
            (
                2,
                frame("c", "collect_tool_parameters", FrameState::AwaitingInput),
                40,
            ),
        ];
        let none = Instructions::default();
        let no_todos = crate::todo::TodoList::default();
        let view = StatusView {
            instructions: &none,
            todos: &no_todos,
            frames: &frames,
            request: Some("fix the\nreadme"),
            turn: 2,
            max_turns: 10,
            activity: "awaiting input",
            depth: 3,
            question: Some("write_file needs `path`."),
        };
        let text = status_text(&view);
        assert!(text.starts_with("**Status**: awaiting input · turn 2/10 · nesting depth 3"));
        assert!(text.contains("Tool stack (5 frames, depth 3):"), "{text}");
        assert!(
            text.contains("\n- `delegate` of d · running · 2.1 s\n"),
            "{text}"
        );
        assert!(
            text.contains("\n  - `read_file` of r · running · 300 ms\n"),
            "{text}"
        );
        assert!(
            text.contains("\n    - `collect_tool_parameters` of c · awaiting input · 40 ms\n"),
            "{text}"
        );
        assert!(
            text.ends_with("Innermost: `collect_tool_parameters` waits for your answer: “write_file needs `path`.”."),
            "{text}"
        );
        // Nothing waits: the deepest, newest frame runs.
        let running = &frames[..4];
        let text = status_text(&StatusView {
            frames: running,
            question: None,
            ..view.clone()
        });
        assert!(
            text.ends_with("Innermost: `write_file` is running (nothing to answer)."),
            "{text}"
        );
        let empty = status_text(&StatusView {
            frames: &[],
            request: None,
            ..view.clone()
        });
        assert!(empty.contains("No request yet.") && empty.ends_with("Tool stack: empty."));
        assert!(
            empty.contains("\n\nProject instructions: off.\n\n"),
            "{empty}"
        );
        let todos = crate::todo::TodoList::from_result(&serde_json::json!({"todos": [
            {"content": "Read", "status": "completed"},
            {"content": "Fix", "status": "in_progress", "activeForm": "Fixing"},
            {"content": "Ship", "status": "pending"},
        ]}))
        .unwrap();
        let with = status_text(&StatusView {
            todos: &todos,
            ..view
        });
        assert!(
            with.contains(
                "off.\n\nTodo (1/3 done · Fixing):\n\n- [x] Read\n- [~] Fixing\n- [ ] Ship\n\nTool stack"
            ),
            "{with}"
        );
    }

    #[test]
    fn instructions_are_listed_with_their_cuts_and_notes() {
        use crate::instructions::InstructionFile;
        let file = |shown: &str, size: u64, cut: Cut| InstructionFile {
            shown: shown.into(),
            scope: ".".into(),
            text: "x".into(),
            size,
            cut,
        };
        let names = vec!["AGENTS.md".to_string(), "CLAUDE.md".to_string()];
        let found = Instructions {
            names: names.clone(),
            files: vec![
                file("../../AGENTS.md", 900, Cut::LeftOut),
                file(
                    "../CLAUDE.md",
                    40 * 1024,
                    Cut::Truncated { kept: 32 * 1024 },
                ),
                file("AGENTS.md", 10, Cut::Whole),
            ],
            notes: vec!["`x/AGENTS.md` was not read: it is not UTF-8 text".into()],
        };
        assert_eq!(
            instructions_text(&found),
            "Project instructions: `../../AGENTS.md` (left out: over the total size), \
             `../CLAUDE.md` (cut to 32.0 KiB of 40.0 KiB), `AGENTS.md`. \
             `x/AGENTS.md` was not read: it is not UTF-8 text."
        );
        let none = Instructions {
            names,
            ..Instructions::default()
        };
        assert_eq!(
            instructions_text(&none),
            "Project instructions: none found (looked for `AGENTS.md` or `CLAUDE.md` from the workspace up to the repository root)."
        );
    }

    #[test]
    fn tool_text_shows_usage_when_the_tool_has_some() {
        let mut tool = ToolInfo {
            name: "read_file".into(),
            description: "Read a file.".into(),
            schema: serde_json::json!({"type": "object"}),
            policy: "allow".into(),
            usage: Some("  Read before you write.  ".into()),
        };
        let text = tool_text(&tool, &[]);
        assert!(
            text.contains("**Usage**\n\nRead before you write.\n"),
            "{text}"
        );
        assert!(
            text.find("Usage") < text.find("```json"),
            "usage before the schema"
        );
        tool.usage = Some("   ".into());
        assert!(!tool_text(&tool, &[]).contains("Usage"));
    }

    #[test]
    fn tool_text_schema_is_highlighted_json_when_rendered() {
        let tool = ToolInfo {
            name: "read_file".into(),
            description: "Read a file.".into(),
            schema: serde_json::json!({"type": "object", "required": ["path"]}),
            policy: "allow".into(),
            usage: None,
        };
        let theme = crate::tui::theme::Theme::default();
        let lines = crate::tui::markdown::render(&tool_text(&tool, &[]), 60, &theme);
        let fg = |needle: &str| {
            lines
                .iter()
                .flat_map(|l| l.spans.iter())
                .find(|s| s.content.contains(needle))
                .and_then(|s| s.style.fg)
        };
        assert_eq!(fg("\"type\""), theme.syntax.key.fg);
        assert_eq!(fg("\"object\""), theme.syntax.string.fg);
        assert_eq!(fg("["), theme.code.fg);
    }

    #[test]
    fn unknown_commands_get_a_hint() {
        // A command that starts with a wide character is not cut inside it.
        assert!(unknown_hint("/é").contains("unknown command"));
        assert!(unknown_hint("/stat").contains("/status"));
        assert!(unknown_hint("/zzz").contains("/help"));
    }
}
