//! `write_file`: creates or overwrites a file in the workspace. An overwritten file keeps
//! its mode and owner; a write approved with its diff applies only if the file is still what
//! that diff was computed from (or still absent, for a new file).

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use std::path::Path;

use super::blocking;
use super::edit_file::read_text;
use crate::tools::diff::{self, Preview};
use crate::tools::seen::{Seen, Since};
use crate::tools::workspace::Workspace;
use crate::tools::{Policy, ToolContext, ToolError, ToolSettings, TypedTool};

/// Writes a whole file, creating missing parent directories inside the workspace.
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteFile;

/// Arguments of `write_file`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct WriteFileParams {
    /// File to write, relative to the workspace root; missing parent directories are created.
    pub path: String,
    /// The complete new content of the file.
    pub content: String,
}

impl TypedTool for WriteFile {
    type Params = WriteFileParams;
    const NAME: &'static str = "write_file";
    const CHANGES_WORKSPACE: bool = true;
    const EDITS_FILES: bool = true;
    const POLICY_NOTE: &'static str = "ask";
    const USAGE: Option<&'static str> = Some(
        "It replaces the whole file: read the file first and send its complete new content. Missing parent directories are created. The user may deny the write; then do not retry it.",
    );
    const DESCRIPTION: &'static str = "Write a text file in the workspace, replacing its whole \
        content (or creating it, with any missing parent directories). Returns the bytes \
        written and whether the file was created or overwritten.";

    fn default_policy(&self, _params: &WriteFileParams, _settings: &ToolSettings) -> Policy {
        Policy::Ask
    }

    fn preview(&self, params: &WriteFileParams, workdir: &Path) -> Option<Preview> {
        match read_text(workdir, &params.path) {
            Ok(read) => Some(Preview {
                diff: diff::render(&read.shown, Some(&read.text), &params.content),
                seen: read.seen(),
            }),
            // A missing file is a new one; anything else (binary, a directory) the write
            // itself will report.
            Err(_) if !Workspace::new(workdir).ok()?.exists(&params.path) => Some(Preview {
                diff: diff::render(&params.path, None, &params.content),
                seen: Seen::Absent,
            }),
            Err(_) => None,
        }
    }

    async fn run(&self, params: WriteFileParams, ctx: &ToolContext) -> Result<Value, ToolError> {
        let workdir = ctx.workdir.clone();
        let approved = ctx.seen.clone();
        blocking(move || {
            let replaced_lines = read_text(&workdir, &params.path)
                .ok()
                .map(|read| read.text.lines().count());
            let workspace = Workspace::new(&workdir)?;
            let content = params.content.as_bytes();
            let written = match &approved {
                // What the user saw in the diff is what gets replaced, or nothing is.
                Some(seen) => workspace.write_over(&params.path, content, seen, Since::Diff)?,
                None => workspace.write(&params.path, content)?,
            };
            let action = match (written.replaced, replaced_lines) {
                (false, _) => "created".to_string(),
                (true, Some(1)) => "overwrote 1 line".to_string(),
                (true, Some(lines)) => format!("overwrote {lines} lines"),
                (true, None) => "overwrote".to_string(),
            };
            Ok(json!({
                "path": written.shown,
                "bytes_written": params.content.len(),
                "action": action,
            }))
        })
        .await
    }
}
