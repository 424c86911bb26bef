//! `write_file`: creates or overwrites a file in the workspace.

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::blocking;
use crate::tools::workspace::{display_relative, resolve_for_write};
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

    async fn run(&self, params: WriteFileParams, ctx: &ToolContext) -> Result<Value, ToolError> {
        let path = resolve_for_write(&ctx.workdir, &params.path)?;
        let workdir = ctx.workdir.clone();
        blocking(move || write(&workdir, path, &params.content)).await
    }
}

fn write(workdir: &Path, path: PathBuf, content: &str) -> Result<Value, ToolError> {
    let shown = display_relative(workdir, &path);
    let existed = match std::fs::symlink_metadata(&path) {
        Ok(meta) if meta.is_dir() => {
            return Err(ToolError::failed(format!("'{shown}' is a directory")));
        }
        // Writing to a FIFO or a device could block forever.
        Ok(meta) if !meta.is_file() => {
            return Err(ToolError::failed(format!(
                "'{shown}' is not a regular file"
            )));
        }
        Ok(_) => true,
        Err(_) => false,
    };
    if let Some(parent) = path.parent() {
        // `resolve_for_write` checked the nearest existing ancestor; what is created below
        // it is plain directories, so they stay inside the workspace.
        std::fs::create_dir_all(parent).map_err(|e| {
            ToolError::failed(format!("cannot create the directories of '{shown}': {e}"))
        })?;
    }
    std::fs::write(&path, content)
        .map_err(|e| ToolError::failed(format!("cannot write '{shown}': {e}")))?;
    Ok(json!({
        "path": shown,
        "bytes_written": content.len(),
        "action": if existed { "overwrote" } else { "created" },
    }))
}
