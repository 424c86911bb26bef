//! `edit_file`: exact-string replacements in one file, applied in order, all or nothing.
//! The file keeps its line endings and permissions and is replaced atomically (temp file +
//! rename, see `workspace/write.rs`), so a failed edit or a crash never leaves half a file.

use std::io::Read;
use std::path::Path;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{blocking, looks_binary};
use crate::tools::diff;
use crate::tools::workspace::{Entry, Workspace};
use crate::tools::{Policy, ToolContext, ToolError, ToolSettings, TypedTool};

/// Largest file `edit_file` edits (bigger ones are rewritten with `write_file` or `shell`).
const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;
/// Line numbers listed at most when `old_string` matches more than once.
const MAX_LINES_LISTED: usize = 10;

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
    const POLICY_NOTE: &'static str = "ask";
    const USAGE: Option<&'static str> = Some(
        "Read the file first and copy old_string exactly, with enough surrounding lines to match once. Edits apply in order; if one fails nothing is written and the error says why (how many matches, on which lines).",
    );
    const DESCRIPTION: &'static str = "Edit a text file in the workspace by exact-string \
        replacement: each edit replaces old_string (which must occur exactly once, unless \
        replace_all) with new_string, in order. All edits apply or none. Keeps the file's line \
        endings and permissions.";

    fn default_policy(&self, _params: &EditFileParams, _settings: &ToolSettings) -> Policy {
        Policy::Ask
    }

    fn preview(&self, params: &EditFileParams, workdir: &Path) -> Option<String> {
        let (shown, before) = read_text(workdir, &params.path).ok()?;
        let after = apply(&before, &params.edits).ok()?;
        Some(diff::render(&shown, Some(&before), &after))
    }

    async fn run(&self, params: EditFileParams, ctx: &ToolContext) -> Result<Value, ToolError> {
        let workdir = ctx.workdir.clone();
        blocking(move || {
            let (shown, before) = read_text(&workdir, &params.path)?;
            let after = apply(&before, &params.edits).map_err(ToolError::Failed)?;
            Workspace::new(&workdir)?.write(&params.path, after.as_bytes())?;
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

/// The file's text (UTF-8, not binary, not too large) and its path as shown.
pub(super) fn read_text(workdir: &Path, path: &str) -> Result<(String, String), ToolError> {
    let opened = Workspace::new(workdir)?.open(path)?;
    let shown = opened.shown();
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
    if size > MAX_FILE_BYTES {
        return Err(ToolError::failed(format!(
            "'{shown}' is {size} bytes; edit_file edits files up to {MAX_FILE_BYTES} bytes"
        )));
    }
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
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
    Ok((shown, text))
}

/// `text` with `edits` applied in order; `Err` says which edit failed and why. A file with
/// CRLF line endings is matched and written with CRLF, whichever the model sent.
pub fn apply(text: &str, edits: &[Edit]) -> Result<String, String> {
    if edits.is_empty() {
        return Err("no edits given: send at least one {old_string, new_string}".into());
    }
    let crlf = text.contains("\r\n");
    let unify = |s: &str| {
        if crlf {
            s.replace("\r\n", "\n")
        } else {
            s.to_string()
        }
    };
    let mut current = unify(text);
    for (i, edit) in edits.iter().enumerate() {
        let n = i + 1;
        let old = unify(&edit.old_string);
        let new = unify(&edit.new_string);
        if old.is_empty() {
            return Err(format!(
                "edit {n}: old_string is empty; quote the text to replace"
            ));
        }
        if old == new {
            return Err(format!("edit {n}: old_string and new_string are the same"));
        }
        let starts: Vec<usize> = current.match_indices(&old).map(|(at, _)| at).collect();
        match starts.len() {
            0 => {
                return Err(format!(
                    "edit {n}: old_string was not found{}; read the file again and copy the text exactly (whitespace included)",
                    if n > 1 {
                        " (after the edits before it)"
                    } else {
                        ""
                    }
                ));
            }
            1 => current = current.replacen(&old, &new, 1),
            _ if edit.replace_all => current = current.replace(&old, &new),
            many => {
                let lines: Vec<String> = starts
                    .iter()
                    .take(MAX_LINES_LISTED)
                    .map(|&at| (current[..at].matches('\n').count() + 1).to_string())
                    .collect();
                return Err(format!(
                    "edit {n}: old_string matches {many} times (lines {}{}); add surrounding lines so it matches once, or set replace_all",
                    lines.join(", "),
                    if many > MAX_LINES_LISTED { ", …" } else { "" }
                ));
            }
        }
    }
    Ok(if crlf {
        current.replace('\n', "\r\n")
    } else {
        current
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(old: &str, new: &str) -> Edit {
        Edit {
            old_string: old.into(),
            new_string: new.into(),
            replace_all: false,
        }
    }

    #[test]
    fn edits_apply_in_order_each_exactly_once() {
        let text = "fn a() {}\nfn b() {}\n";
        let out = apply(
            text,
            &[
                edit("fn a", "fn alpha"),
                edit("alpha() {}", "alpha() { 1 }"),
            ],
        );
        assert_eq!(out.unwrap(), "fn alpha() { 1 }\nfn b() {}\n");
    }

    #[test]
    fn ambiguous_and_missing_text_say_where_and_change_nothing() {
        let text = "x = 1\ny = 2\nx = 1\n";
        let many = apply(text, &[edit("x = 1", "x = 3")]).unwrap_err();
        assert!(many.contains("matches 2 times (lines 1, 3)"), "{many}");
        let missing = apply(text, &[edit("y = 2", "y = 5"), edit("z", "w")]).unwrap_err();
        assert!(
            missing.starts_with("edit 2: old_string was not found (after"),
            "{missing}"
        );
        let all = Edit {
            replace_all: true,
            ..edit("x = 1", "x = 3")
        };
        assert_eq!(apply(text, &[all]).unwrap(), "x = 3\ny = 2\nx = 3\n");
        assert!(apply(text, &[edit("", "a")]).unwrap_err().contains("empty"));
        assert!(apply(text, &[]).unwrap_err().contains("no edits"));
    }

    #[test]
    fn crlf_files_stay_crlf_whatever_the_model_sends() {
        let text = "one\r\ntwo\r\nthree\r\n";
        let out = apply(text, &[edit("one\ntwo\n", "1\n2\n")]).unwrap();
        assert_eq!(out, "1\r\n2\r\nthree\r\n");
    }
}
