//! Custom commands and `/init` from the composer (issue 30.4): `/name args` of a command
//! file (`crate::custom_commands`) sends its text as the user's message, with its front
//! matter's tools and model for that request alone; `/init` sends the built-in prompt that
//! has the model write `AGENTS.md`. The chat shows the line as typed (Ctrl-O: the text sent).

use std::time::Instant;

use super::{App, Command};
use crate::custom_commands::{self, CustomCommands, INIT_PROMPT};
use crate::orchestrator::request::RequestOptions;
use crate::orchestrator::task::Op;
use crate::tui::views::chat::NoticeKind;
use crate::tui::views::composer::PromptEntry;

impl App {
    /// Reads the command files again (they may have changed since) and gives the popup
    /// the commands found.
    pub(super) fn reload_custom(&mut self) {
        let found = match &self.info.workdir {
            dir if dir.is_empty() => CustomCommands::default(),
            dir => {
                let servers: Vec<String> = (self.info.mcp.iter())
                    .flat_map(|hub| hub.view())
                    .map(|s| s.name)
                    .collect();
                custom_commands::load(
                    std::path::Path::new(dir),
                    self.info.user_commands.as_deref(),
                    &crate::tui::commands::is_builtin,
                    &servers,
                )
            }
        };
        if found != self.custom {
            let entries = (found.commands.iter())
                .map(|c| PromptEntry {
                    name: c.command(),
                    args: c.argument_hint.clone().unwrap_or_default(),
                    about: format!("({}) {}", c.source.label(), c.description),
                    takes_args: c.argument_hint.is_some(),
                })
                .collect();
            self.composer.set_custom(entries);
            self.custom = found;
        }
    }

    /// The custom commands and the skipped files as `/help` lists them: (key, what).
    pub(super) fn custom_help(&self) -> Vec<(String, String)> {
        let mut rows: Vec<(String, String)> = (self.custom.commands.iter())
            .map(|c| {
                let hint = c
                    .argument_hint
                    .as_deref()
                    .map_or(String::new(), |h| format!(" {h}"));
                (
                    format!("/{}{hint}", c.name),
                    format!(
                        "{} · {} ({})",
                        c.source.label(),
                        c.description,
                        c.path.display()
                    ),
                )
            })
            .collect();
        rows.extend(self.custom.skipped.iter().map(|s| {
            (
                "✗ skipped".to_string(),
                format!("{} · {}: {}", s.source.label(), s.path.display(), s.why),
            )
        }));
        rows
    }

    /// `/name args…` when `name` is a custom command: its request is sent (`None`: it is not).
    pub(super) fn run_custom(&mut self, line: &str, now: Instant) -> Option<Vec<Command>> {
        self.reload_custom();
        let (command, args) = self.custom.resolve(line)?;
        let (prompt, options) = command.request(args);
        let name = command.command();
        let unknown: Vec<String> = match &options.tools {
            Some(names) => {
                let tools = self.tool_infos();
                (names.iter())
                    .filter(|n| !tools.iter().any(|t| &t.name == *n))
                    .cloned()
                    .collect()
            }
            None => Vec::new(),
        };
        let commands = self.send_request(prompt, line.trim(), options.clone(), now);
        if commands.is_empty() {
            return Some(commands);
        }
        if !unknown.is_empty() {
            self.chat.push_notice(
                NoticeKind::Warn,
                format!(
                    "{name}: allowed-tools names tools taco does not have: {}",
                    unknown.join(", ")
                ),
            );
        }
        if let Some(model) = &options.model {
            self.chat.push_notice(
                NoticeKind::Info,
                format!(
                    "`{name}` asks for model `{model}`: this request uses it; the next ones use `{}` again (`/model` changes that).",
                    self.info.model
                ),
            );
        }
        Some(commands)
    }

    /// `/init`: the model looks at the workspace and writes (or improves) `AGENTS.md`.
    pub(super) fn run_init(&mut self, now: Instant) -> Vec<Command> {
        self.send_request(
            INIT_PROMPT.to_string(),
            "/init",
            RequestOptions::default(),
            now,
        )
    }

    /// Sends a request made from a command line: the chat shows `line` (Ctrl-O the text
    /// sent). Not while a request runs (its options would be lost in the queue): the line
    /// goes back into the editor.
    fn send_request(
        &mut self,
        prompt: String,
        line: &str,
        options: RequestOptions,
        now: Instant,
    ) -> Vec<Command> {
        if self.read_only {
            self.flash("read-only: this is a saved trace, nothing is sent", now);
            return Vec::new();
        }
        if self.busy {
            if self.composer.is_empty() {
                self.composer.set_text(line);
            }
            self.flash(
                "commands are sent when nothing runs: send it when the running request ends; it is back in the editor",
                now,
            );
            return Vec::new();
        }
        self.chat.push_user_shown(&prompt, Some(line.to_string()));
        self.chat.scroll_to_bottom();
        self.original_request = Some(line.to_string());
        self.busy = true;
        self.sync_activity(now);
        let op = if options.is_plain() {
            Op::Submit(prompt)
        } else {
            Op::SubmitWith(prompt, options)
        };
        vec![Command::Op(op)]
    }
}
