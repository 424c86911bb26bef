//! Custom slash commands (issue 30.4): Markdown files in the workspace's `.taco/commands/`
//! and the user's `<config dir>/taco/commands/` become `/name` commands whose text is sent
//! as the user's prompt, `$ARGUMENTS` (and `$1`, `$2` …) replaced by what follows the name.
//! Optional front matter (`front.rs`) gives a description, an argument hint, the tools that
//! request may use (only narrows what is offered: policies and approvals stay) and the model
//! it uses. Loading is bounded (`load.rs`); a file that cannot be a command is listed with
//! why and skipped. The TUI and `exec` both read them from here.

use std::path::PathBuf;

use crate::orchestrator::request::RequestOptions;

mod args;
mod front;
mod load;

pub use args::expand;
pub use load::{MAX_COMMANDS, MAX_DEPTH, MAX_FILE, load, user_dir};

/// Where a command comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The workspace's `.taco/commands/`.
    Project,
    /// The user's `<config dir>/taco/commands/`.
    User,
}

impl Source {
    /// In words, as the popup and `/help` mark a command.
    pub fn label(self) -> &'static str {
        match self {
            Self::Project => "project",
            Self::User => "user",
        }
    }
}

/// One command, read from its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomCommand {
    /// Its name without the `/`: the file's stem, after its folders joined with `:`
    /// (`frontend/test.md` is `frontend:test`).
    pub name: String,
    /// Where it comes from.
    pub source: Source,
    /// Its file.
    pub path: PathBuf,
    /// `description:` (else the body's first line, shortened).
    pub description: String,
    /// `argument-hint:` (`[pr-number]`).
    pub argument_hint: Option<String>,
    /// `allowed-tools:`: only these tools are offered for its request.
    pub allowed_tools: Option<Vec<String>>,
    /// `model:`: its request uses this model of the running provider.
    pub model: Option<String>,
    /// The prompt text, front matter removed.
    pub body: String,
}

impl CustomCommand {
    /// `/name`.
    pub fn command(&self) -> String {
        format!("/{}", self.name)
    }

    /// The request it makes with `args` (what followed its name): the prompt and its options.
    pub fn request(&self, args: &str) -> (String, RequestOptions) {
        let options = RequestOptions {
            tools: self.allowed_tools.clone(),
            model: self.model.clone(),
        };
        (expand(&self.body, args), options)
    }
}

/// A file that is not a command, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The file (or folder).
    pub path: PathBuf,
    /// Where it was found.
    pub source: Source,
    /// Why it is not a command.
    pub why: String,
}

/// The commands found, with the files that were not used.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CustomCommands {
    /// The commands, by name (a project's command wins over the user's of the same name).
    pub commands: Vec<CustomCommand>,
    /// Files that are not commands, and why.
    pub skipped: Vec<Skipped>,
}

impl CustomCommands {
    /// The command named `name` (without `/`).
    pub fn get(&self, name: &str) -> Option<&CustomCommand> {
        self.commands.iter().find(|c| c.name == name)
    }

    /// The command a line typed starts with (`/name args…`) and its arguments.
    pub fn resolve<'a>(&self, line: &'a str) -> Option<(&CustomCommand, &'a str)> {
        let line = line.trim_start().strip_prefix('/')?;
        let (name, args) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        self.get(name).map(|c| (c, args.trim()))
    }

    /// The commands and the skipped files in words (`/help`, the welcome note), as Markdown.
    pub fn describe(&self) -> String {
        let mut out = String::new();
        for c in &self.commands {
            let hint = c
                .argument_hint
                .as_deref()
                .map_or(String::new(), |h| format!(" {h}"));
            out.push_str(&format!(
                "- `/{}{hint}` ({}) {}\n",
                c.name,
                c.source.label(),
                c.description
            ));
        }
        for s in &self.skipped {
            out.push_str(&format!(
                "- skipped ({}) `{}`: {}\n",
                s.source.label(),
                s.path.display(),
                s.why
            ));
        }
        out
    }
}

/// The prompt `/init` sends: the model looks at the workspace with read-only tools, then
/// writes (or improves) `AGENTS.md` with `write_file`, which the user approves like any write.
pub const INIT_PROMPT: &str = "Write an AGENTS.md file for this workspace: the instructions \
a coding agent needs to work in it well.\n\n\
First look at the project with read-only tools (list_dir, read_file, search_files): its \
layout, languages, build and test commands (from files such as Cargo.toml, package.json, \
Makefile, pyproject.toml, CI configuration), its conventions (style, naming, error \
handling, tests) and any existing AGENTS.md, CLAUDE.md, README or contributing guide. Do \
not run commands that change anything.\n\n\
Then write AGENTS.md at the workspace root with write_file. If one already exists, improve \
it: keep what is right, fix what is stale, add what is missing. Keep it short and concrete \
(about 20 to 60 lines of Markdown): how to build, test and lint; the layout in a few lines; \
the conventions to follow; anything surprising. Say only what you found in the project, \
not generic advice.";

#[cfg(test)]
mod tests;
