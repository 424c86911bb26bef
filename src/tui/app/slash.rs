//! Slash commands and sending what the composer holds.

use std::time::Instant;

use super::{App, Command};
use crate::orchestrator::task::Op;
use crate::tui::commands::{self, SlashCommand};
use crate::tui::layout::Focus;
use crate::tui::overlay::Place;
use crate::tui::views::chat::NoticeKind;
use crate::tui::views::help::Help;

impl App {
    pub(super) fn send_composer(&mut self, now: Instant) -> Vec<Command> {
        if self.composer.text().trim().is_empty() {
            return Vec::new();
        }
        let message = self.composer.take_message();
        if let Some(command) = message.text.strip_prefix('!') {
            return self.run_bang(command, now);
        }
        if message.text.starts_with('/') {
            return self.run_command(&message.text, now);
        }
        if !message.wanted().is_empty() {
            return self.start_fetch(super::McpFetch::Resources(message), now);
        }
        if self.read_only {
            self.flash("read-only: this is a saved trace, nothing is sent", now);
            return Vec::new();
        }
        let commands = if self.busy {
            self.composer.queue(&message);
            self.flash("queued: it is sent when the running request ends", now);
            Vec::new()
        } else {
            self.submit(message.text.clone(), now)
        };
        // Files refused or cut: said under the message.
        for note in message.notes {
            self.chat.push_notice(NoticeKind::Warn, note);
        }
        commands
    }

    /// `/mcp login NAME`: checked here, started by the loop ([`Command::McpLogin`]); the URL
    /// arrives in the chat as the server's status.
    fn mcp_login(&mut self, name: &str) -> Vec<Command> {
        let checked = match &self.info.mcp {
            _ if name.is_empty() => {
                Err("Which server? /mcp login NAME (/mcp lists them).".to_string())
            }
            Some(hub) => hub.can_login(name),
            None => Err("No MCP servers are configured.".to_string()),
        };
        match checked {
            Ok(()) => {
                self.chat.push_notice(
                    NoticeKind::Info,
                    format!(
                        "Logging in to MCP server **{name}**: finding its authorization server…"
                    ),
                );
                vec![Command::McpLogin(name.to_string())]
            }
            Err(why) => {
                self.chat.push_notice(NoticeKind::Warn, why);
                Vec::new()
            }
        }
    }

    /// `/trust`: the project's hooks are trusted as the file is now and run from the next
    /// request on.
    fn trust_project(&mut self) -> Vec<Command> {
        let workdir = std::path::Path::new(&self.info.workdir);
        match crate::hooks::trust_project(workdir) {
            Ok(said) => {
                self.chat.push_notice(NoticeKind::Info, format!("{said}."));
                vec![Command::Op(Op::ReloadHooks)]
            }
            Err(why) => {
                self.chat.push_notice(NoticeKind::Warn, format!("{why}."));
                Vec::new()
            }
        }
    }

    pub(super) fn run_command(&mut self, text: &str, now: Instant) -> Vec<Command> {
        let parsed = commands::parse(text);
        // Built-ins win; then the custom commands (an MCP server's name is never a command
        // folder's: those are skipped when read), then MCP prompts.
        if matches!(
            parsed,
            SlashCommand::Unknown(_) | SlashCommand::McpPrompt(_)
        ) && let Some(commands) = self.run_custom(text, now)
        {
            return commands;
        }
        match parsed {
            SlashCommand::Help => self.open_help(),
            SlashCommand::Tools => self.open_tools(now),
            SlashCommand::Revoke(what) => return self.revoke_command(&what, now),
            SlashCommand::Mcp => {
                let servers = self
                    .info
                    .mcp
                    .as_ref()
                    .map(|hub| hub.view())
                    .unwrap_or_default();
                let mut text = format!(
                    "**MCP servers**\n\n{}",
                    crate::mcp::describe_servers(&servers)
                );
                // Their prompts (`/server:prompt`) and resources (`@server:uri`).
                let catalog = (self.info.mcp.as_ref()).map(|hub| hub.describe_catalog());
                if let Some(catalog) = catalog.filter(|c| !c.is_empty()) {
                    text.push_str(&format!("\n**Prompts and resources**\n\n{catalog}"));
                }
                self.chat.push_notice(NoticeKind::Info, text);
            }
            SlashCommand::McpLogin(name) => return self.mcp_login(&name),
            SlashCommand::McpPrompt(line) => {
                return self.start_fetch(super::McpFetch::Prompt(line), now);
            }
            SlashCommand::McpRestart(name) => {
                let asked = match (&self.info.mcp, name.is_empty()) {
                    (_, true) => {
                        Err("which server? `/mcp restart NAME` (`/mcp` lists them)".into())
                    }
                    (Some(hub), false) => hub.restart(&name),
                    (None, false) => Err("no MCP servers are configured".into()),
                };
                match asked {
                    Ok(()) => self.chat.push_notice(
                        NoticeKind::Info,
                        format!("Restarting MCP server {name}; `/mcp` shows how it goes."),
                    ),
                    Err(why) => self.chat.push_notice(NoticeKind::Warn, why),
                }
            }
            SlashCommand::Tool(name) => {
                let tools = self.tool_infos();
                let text = match tools.iter().find(|t| t.name == name) {
                    Some(tool) => commands::tool_text(tool, &self.calls),
                    None => {
                        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
                        let what = if name.is_empty() {
                            "which tool?".to_string()
                        } else {
                            format!("no tool named `{name}`.")
                        };
                        format!("{what} Tools: {}", names.join(", "))
                    }
                };
                self.chat.push_notice(NoticeKind::Info, text);
            }
            SlashCommand::Status => {
                let frames: Vec<_> = (self.stack.live_tree().into_iter())
                    .map(|(level, f)| (level, f.clone(), self.stack.elapsed_ms(&f.id, now)))
                    .collect();
                let text = commands::status_text(&commands::StatusView {
                    frames: &frames,
                    request: self.original_request.as_deref(),
                    turn: self.run.turn(),
                    max_turns: self.info.max_turns,
                    activity: self.activity.label(),
                    depth: self.run.live_depth(),
                    question: self.question().map(|q| q.prompt.as_str()),
                    instructions: &self.info.instructions,
                    todos: self.run.todos(),
                });
                let mut text = format!("{text}\n\n{}", context_line(self.run.context()));
                if let Some(sandbox) = &self.info.sandbox {
                    let workdir = std::path::Path::new(&self.info.workdir);
                    text.push_str(&format!("\n\nSandbox: {}.", sandbox.describe(workdir)));
                }
                if let Some(otel) = &self.info.otel {
                    text.push_str(&format!("\n\nOpenTelemetry: {otel}."));
                }
                if !self.info.environment.is_empty() {
                    text.push_str(&format!("\n\nEnvironment: {}.", self.info.environment));
                }
                let (checkpoints, measure) = self.checkpoints_status();
                text.push_str(&checkpoints);
                self.chat.push_notice(NoticeKind::Info, text);
                return measure.into_iter().collect();
            }
            SlashCommand::Cancel => {
                if let Some(commands) = self.drop_fetch(now) {
                    return commands;
                }
                if self.busy {
                    self.flash("cancelling…", now);
                    return vec![Command::Op(Op::Cancel)];
                }
                self.chat
                    .push_notice(NoticeKind::Info, "Nothing is running.");
            }
            SlashCommand::Clear => {
                self.chat.clear();
                self.timeline.clear();
                // Its detail shows an event the timeline no longer has.
                self.overlays.close(Place::Pane(Focus::Timeline));
                self.stack.clear();
                self.composer.clear_queue();
                self.original_request = None;
                // A new conversation starts its own counts (the status line's turn and tokens).
                self.run.cleared();
                self.chat.push_notice(NoticeKind::Info, "New conversation.");
                let mut commands = Vec::new();
                // A prompt or resources on the way belong to the old conversation.
                self.fetching = None;
                if self.busy {
                    commands.push(Command::Op(Op::Cancel));
                }
                commands.push(Command::Op(Op::Clear));
                return commands;
            }
            SlashCommand::Compact if self.read_only => {
                self.flash("read-only: this is a saved trace, nothing is sent", now);
            }
            SlashCommand::Compact if self.busy => {
                self.compact_after = true;
                self.chat.push_notice(
                    NoticeKind::Info,
                    "The conversation is compacted when the running request ends.",
                );
            }
            SlashCommand::Compact => return self.start_compaction(now),
            SlashCommand::Init => return self.run_init(now),
            SlashCommand::Model(name) => return self.model_command(&name, now),
            SlashCommand::Provider(name) => return self.provider_command(&name, now),
            SlashCommand::Resume(id) => return self.resume_command(&id, now),
            SlashCommand::Rewind => return self.rewind_command(now),
            SlashCommand::Agent(name) => return self.agent_command(&name, now),
            SlashCommand::Trust => return self.trust_project(),
            SlashCommand::Quit => {
                self.quit = true;
                return vec![Command::Quit];
            }
            SlashCommand::Unknown(name) => self
                .chat
                .push_notice(NoticeKind::Warn, commands::unknown_hint(&name)),
        }
        Vec::new()
    }

    /// Opens the help page (afresh, scrolled to the top).
    pub(super) fn open_help(&mut self) {
        self.reload_custom();
        self.overlays.remove::<Help>();
        self.overlays.push(Box::new(Help {
            custom: self.custom_help(),
            ..Help::default()
        }));
    }

    /// Every tool now: the built-ins, then the MCP servers' (which come and go).
    pub(super) fn tool_infos(&self) -> Vec<commands::ToolInfo> {
        let mut tools = self.info.tools.clone();
        if let Some(hub) = &self.info.mcp {
            use crate::tools::ToolSource;
            for tool in hub.tools() {
                tools.push(commands::ToolInfo {
                    name: tool.name().to_string(),
                    description: tool.description().to_string(),
                    schema: tool.parameters(),
                    policy: tool.policy_note().to_string(),
                    usage: None,
                });
            }
        }
        tools
    }
}

/// `/status`'s line about the context window.
fn context_line(gauge: Option<crate::run_model::ContextGauge>) -> String {
    match gauge {
        None => "Context: nothing measured yet.".to_string(),
        Some(g) => match (g.window, g.percent()) {
            (Some(window), Some(percent)) => format!(
                "Context: {} of {window} tokens ({percent}%); older messages are compacted \
                 near the limit (`/compact` does it now).",
                g.used
            ),
            _ => format!(
                "Context: {} tokens; the model's window is unknown (set `context_window` in \
                 its provider options to compact in time).",
                g.used
            ),
        },
    }
}
