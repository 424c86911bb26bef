//! `edit_file`: exact-string replacements in one file, applied in order, all or nothing.
//! The file keeps its line endings (per line, see `apply.rs`), its mode and owner, and is
//! replaced atomically (temp file + rename, see `workspace/write.rs`), so a failed edit or a
//! crash never leaves half a file. It is written only if it is still what the edit was
//! computed from: what the approval's diff showed, and what this call read.

use std::io::Read;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{blocking, looks_binary};
use crate::tools::diff::{self, Preview};
use crate::tools::seen::{Changed, Seen, Since};
use crate::tools::workspace::{Entry, Workspace};
use crate::tools::{Policy, ToolContext, ToolError, ToolSettings, TypedTool};

mod apply;
pub use apply::apply;

/// Largest file `edit_file` edits or makes (bigger ones are written with `write_file` or
/// `shell`).
pub const MAX_FILE_BYTES: usize = 8 * 1024 * 1024;

/// Exact-string edits of one file.
#[derive(Debug, Clone, Copy, Default)]
pub struct EditFile;

/// One replacement.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct Edit {
    /// The exact text to replace (whitespace and indentation included); it must occur exactly
    /// once unless `replace_all` is set.
    pub old_string: String,
    /// The text to put in its place.
    pub new_string: String,
    /// Replace every occurrence instead of requiring exactly one.
    #[serde(default)]
    pub replace_all: bool,
}

/// Arguments of `edit_file`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct EditFileParams {
    /// File to edit, relative to the workspace root.
    pub path: String,
    /// The replacements, applied in order, each to the result of the ones before.
    pub edits: Vec<Edit>,
}

impl TypedTool for EditFile {
    type Params = EditFileParams;
    const NAME: &'static str = "edit_file";
    const CHANGES_WORKSPACE: bool = true;
    const EDITS_FILES: bool = true;
    const POLICY_NOTE: &'static str = "ask";
    const USAGE: Option<&'static str> = Some(
        "Read the file first and copy old_string exactly, with enough surrounding lines to match once. Edits apply in order; if one fails nothing is written and the error says why (how many matches, on which lines).",
    );
    const DESCRIPTION: &'static str = "Edit a text file in the workspace by exact-string \
        replacement: each edit replaces old_string (which must occur exactly once, unless \
        replace_all) with new_string, in order. All edits apply or none. Keeps the file's line \
        endings (per line), permissions and owner.";

    fn default_policy(&self, _params: &EditFileParams, _settings: &ToolSettings) -> Policy {
        Policy::Ask
    }

    fn preview(&self, params: &EditFileParams, workdir: &Path) -> Option<Preview> {
        let read = read_text(workdir, &params.path).ok()?;
        let after = apply(&read.text, &params.edits, MAX_FILE_BYTES).ok()?;
        Some(Preview {
            diff: diff::render(&read.shown, Some(&read.text), &after),
            seen: read.seen(),
        })
    }

    async fn run(&self, params: EditFileParams, ctx: &ToolContext) -> Result<Value, ToolError> {
        let workdir = ctx.workdir.clone();
        let approved = ctx.seen.clone();
        blocking(move || {
            let read = read_text(&workdir, &params.path).map_err(|error| match &approved {
                Some(_) => gone(&workdir, &params.path, error),
                None => error,
            })?;
            let now = read.seen();
            // The edits apply to what the user saw in the diff, or not at all.
            if let Some(changed) = approved.as_ref().and_then(|seen| seen.compare(&now)) {
                return Err(ToolError::Failed(
                    changed.message(&params.path, Since::Diff),
                ));
            }
            let (shown, before) = (read.shown, read.text);
            let after = apply(&before, &params.edits, MAX_FILE_BYTES).map_err(ToolError::Failed)?;
            // Written only over what was read here: a change made meanwhile is not lost.
            Workspace::new(&workdir)?.write_over(
                &params.path,
                after.as_bytes(),
                &now,
                Since::Read,
            )?;
            let rendered = diff::render(&shown, Some(&before), &after);
            Ok(json!({
                "path": shown,
                "edits": params.edits.len(),
                "change": diff::summary(&rendered),
            }))
        })
        .await
    }
}

/// The error for a file approved with its diff that can no longer be read as text: it was
/// deleted, or it changed into something `edit_file` does not edit.
fn gone(workdir: &Path, path: &str, error: ToolError) -> ToolError {
    let exists = Workspace::new(workdir).is_ok_and(|ws| ws.exists(path));
    let changed = if exists {
        Changed::Modified
    } else {
        Changed::Deleted
    };
    let message = changed.message(path, Since::Diff);
    ToolError::Failed(if exists {
        format!("{message} (now: {error})")
    } else {
        message
    })
}

/// A text file as read for a change.
pub(super) struct ReadText {
    /// Its path for results.
    pub shown: String,
    /// Its real path relative to the root.
    pub rel: PathBuf,
    /// Its content.
    pub text: String,
}

impl ReadText {
    /// The state it was read in.
    pub fn seen(&self) -> Seen {
        Seen::file(self.rel.clone(), self.text.as_bytes())
    }
}

/// The file's text (UTF-8, not binary, not too large) and where it is.
pub(super) fn read_text(workdir: &Path, path: &str) -> Result<ReadText, ToolError> {
    let opened = Workspace::new(workdir)?.open(path)?;
    let shown = opened.shown();
    let rel = opened.rel.clone();
    let file = match opened.entry {
        Entry::File(file) => file,
        Entry::Dir(_) => return Err(ToolError::failed(format!("'{shown}' is a directory"))),
        Entry::Other => {
            return Err(ToolError::failed(format!(
                "'{shown}' is not a regular file"
            )));
        }
    };
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    if size > MAX_FILE_BYTES as u64 {
        return Err(ToolError::failed(format!(
            "'{shown}' is {size} bytes; edit_file edits files up to {MAX_FILE_BYTES} bytes"
        )));
    }
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| ToolError::failed(format!("cannot read '{shown}': {e}")))?;
    if looks_binary(&bytes) {
        return Err(ToolError::failed(format!(
            "'{shown}' is a binary file; edit_file only edits text"
        )));
    }
    let text = String::from_utf8(bytes).map_err(|_| {
        ToolError::failed(format!(
            "'{shown}' is not UTF-8 text; edit_file only edits text"
        ))
    })?;
    Ok(ReadText { shown, rel, text })
}
