//! MCP prompts and resources from the composer (issue 28.5): `/server:prompt args…` and a
//! message that mentions `@server:uri` are fetched off the UI thread (the event loop runs
//! [`McpFetch::run`]) and come back through [`App::on_mcp_fetched`] as the user's message,
//! sent like a typed one. While one is fetched the app is busy, so what is typed meanwhile
//! queues behind it; a failure is said and the line goes back into the editor; Esc (Ctrl-C,
//! `/cancel`) drops what it brings.

use std::time::Instant;

use super::{App, Command};
use crate::event::{InputKind, InputRequest};
use crate::mcp::McpHub;
use crate::mcp::catalog::CatalogError;
use crate::mcp::prompt_args::ArgsError;
use crate::mcp::prompts::PromptText;
use crate::tools::AskReply;
use crate::tui::overlay::FormDialog;
use crate::tui::views::chat::NoticeKind;
use crate::tui::views::composer::{MAX_FILE, McpEntries, Outgoing, Read};

/// The id of a form that asks a prompt's missing arguments: this, then the line as typed.
/// Its answer never goes to the orchestrator ([`App::on_prompt_form`]).
pub const PROMPT_FORM: &str = "prompt-arguments:";

/// What the event loop fetches from the MCP servers for the app.
#[derive(Debug, Clone, PartialEq)]
pub enum McpFetch {
    /// `/server:prompt args…`: the line as typed.
    Prompt(String),
    /// A message that mentions MCP resources ([`Outgoing::wanted`]).
    Resources(Outgoing),
}

/// What a fetch gave.
#[derive(Debug)]
pub enum McpFetched {
    /// A prompt's messages, or why not.
    Prompt {
        /// The line as typed.
        line: String,
        /// Its messages as one user message.
        result: Result<PromptText, CatalogError>,
    },
    /// The resources a message mentions, read.
    Resources {
        /// The message.
        message: Outgoing,
        /// Each resource's parts, or why not.
        read: Vec<Read>,
    },
    /// The fetch itself was lost (its task panicked), in words.
    Lost(String),
}

impl McpFetch {
    /// Asks `hub` (each request bounded by its server's `tool_timeout_secs`); each resource
    /// keeps at most [`MAX_FILE`] bytes of text, as a file would.
    pub async fn run(self, hub: &McpHub) -> McpFetched {
        match self {
            Self::Prompt(line) => McpFetched::Prompt {
                result: hub.run_prompt(&line).await,
                line,
            },
            Self::Resources(message) => {
                let mut read = Vec::new();
                for key in message.wanted() {
                    let (server, uri) = key.split_once(':').unwrap_or((key, ""));
                    let parts = hub.read_resource(server, uri, MAX_FILE).await;
                    read.push((key.clone(), parts.map_err(|e| e.to_string())));
                }
                McpFetched::Resources { message, read }
            }
        }
    }
}

impl App {
    /// The MCP servers the app asks (none when viewing a saved trace).
    pub fn mcp_hub(&self) -> Option<std::sync::Arc<McpHub>> {
        self.info.mcp.clone()
    }

    /// Gives the composer the servers' prompts and resources when they changed.
    pub(super) fn sync_mcp(&mut self) {
        let Some(hub) = &self.info.mcp else {
            return;
        };
        let generation = hub.catalog_generation();
        if self.mcp_seen != Some(generation) {
            self.mcp_seen = Some(generation);
            self.composer.set_mcp(McpEntries::from_hub(hub));
        }
    }

    /// Starts `fetch`; busy until it comes back. `Outgoing` messages typed while a request
    /// runs are put back (their resources are read when they are sent).
    pub(super) fn start_fetch(&mut self, fetch: McpFetch, now: Instant) -> Vec<Command> {
        if self.busy {
            let back = match &fetch {
                McpFetch::Prompt(line) => {
                    self.composer.is_empty() && {
                        self.composer.set_text(line);
                        true
                    }
                }
                McpFetch::Resources(message) => self.composer.put_back(message),
            };
            let what = if back {
                "; it is back in the editor"
            } else {
                ""
            };
            self.flash(
                format!("MCP prompts and resources are fetched when sent: send it when the running request ends{what}"),
                now,
            );
            return Vec::new();
        }
        if self.read_only {
            self.flash("read-only: this is a saved trace, nothing is sent", now);
            return Vec::new();
        }
        let what = match &fetch {
            McpFetch::Prompt(line) => line.split_whitespace().next().unwrap_or("").to_string(),
            McpFetch::Resources(message) => message.wanted().join(", "),
        };
        self.flash(format!("asking the MCP server for {what}…"), now);
        self.fetching = Some(what);
        self.busy = true;
        self.sync_activity(now);
        vec![Command::Mcp(fetch)]
    }

    /// Esc, Ctrl-C or `/cancel` while a fetch runs: what it brings is dropped and the app is
    /// free again (queued messages go on); `None` when no fetch runs.
    pub(super) fn drop_fetch(&mut self, now: Instant) -> Option<Vec<Command>> {
        let what = self.fetching.take()?;
        self.chat
            .push_notice(NoticeKind::Info, format!("Cancelled: {what} is not sent."));
        Some(self.end_run(now))
    }

    /// Takes what a fetch gave: the user's message is sent, or why not is said.
    pub fn on_mcp_fetched(&mut self, fetched: McpFetched, now: Instant) -> Vec<Command> {
        if self.fetching.take().is_none() {
            // Cancelled (or `/clear`ed) while on the way: nothing is sent.
            tracing::info!("an MCP fetch came back after it was cancelled; dropped");
            return Vec::new();
        }
        self.flash = None;
        match fetched {
            McpFetched::Prompt {
                line,
                result: Ok(prompt),
            } => {
                let commands = self.submit(prompt.text, now);
                for note in prompt.notes {
                    self.chat
                        .push_notice(NoticeKind::Warn, format!("{line}: {note}."));
                }
                commands
            }
            McpFetched::Prompt {
                line,
                result: Err(error),
            } => {
                // The run's dialogs close with it: the form opens after.
                let commands = self.end_run(now);
                if let CatalogError::Args(ArgsError::Missing { names, form, .. }) = &error
                    && self.ask_prompt_arguments(&line, names, form)
                {
                    // The gate learns of the form now: it waits for Tab like any other.
                    self.sync_guard(now);
                    return commands;
                }
                self.chat
                    .push_notice(NoticeKind::Error, format!("`{line}`: {error}."));
                if self.composer.is_empty() {
                    self.composer.set_text(&line);
                }
                commands
            }
            McpFetched::Resources { message, read } => {
                let message = self.composer.finish_message(message, &read);
                let commands = self.submit(message.text.clone(), now);
                for note in message.notes {
                    self.chat.push_notice(NoticeKind::Warn, note);
                }
                commands
            }
            McpFetched::Lost(why) => {
                self.chat.push_notice(
                    NoticeKind::Error,
                    format!("Asking the MCP server failed: {why}."),
                );
                self.end_run(now)
            }
        }
    }

    /// Opens the form dialog for a prompt's missing arguments (the same form as a server's
    /// elicitation, its fields in the prompt's order); `false` when the form cannot be shown.
    fn ask_prompt_arguments(
        &mut self,
        line: &str,
        names: &[String],
        form: &serde_json::Value,
    ) -> bool {
        let spec = match crate::form::FormSpec::parse(form, names) {
            Ok(spec) => spec,
            Err(why) => {
                tracing::info!(%why, "a prompt's arguments cannot be asked in a form");
                return false;
            }
        };
        let command = line.split_whitespace().next().unwrap_or(line).to_string();
        let request = InputRequest {
            id: format!("{PROMPT_FORM}{line}"),
            kind: InputKind::Form,
            frame: String::new(),
            tool: command.clone(),
            prompt: format!("{command} needs {}", names.join(", ")),
            parameter: None,
            description: None,
            value_type: None,
            depth: None,
            form: Some(spec),
        };
        let mut opened = false;
        self.overlays
            .upsert(FormDialog::new, |dialog| opened = dialog.push(request));
        opened
    }

    /// The answer to a prompt's arguments form: the line with them added, fetched again; a
    /// decline or a cancel puts the line back in the editor.
    pub(super) fn on_prompt_form(
        &mut self,
        line: &str,
        answer: AskReply,
        now: Instant,
    ) -> Vec<Command> {
        match answer {
            AskReply::Accept(values) => {
                let mut full = line.to_string();
                for (name, value) in values {
                    let text = match value {
                        serde_json::Value::String(text) => text,
                        other => other.to_string(),
                    };
                    let quoted = text.replace('\\', "\\\\").replace('"', "\\\"");
                    full.push_str(&format!(" {name}=\"{quoted}\""));
                }
                self.start_fetch(McpFetch::Prompt(full), now)
            }
            AskReply::Decline | AskReply::Cancel => {
                self.chat.push_notice(
                    NoticeKind::Info,
                    format!("`{line}` was not sent: its arguments were not given."),
                );
                if self.composer.is_empty() {
                    self.composer.set_text(line);
                }
                Vec::new()
            }
        }
    }
}
