//! `search_files`: a regex search over the workspace that honours ignore files.

use std::io::Read;
use std::path::{Path, PathBuf};

use ignore::WalkBuilder;
use ignore::overrides::{Override, OverrideBuilder};
use regex::Regex;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::{blocking, cancelled, looks_binary, truncate_str};
use crate::tools::budget;
use crate::tools::workspace::{Entry, Workspace, display_relative};
use crate::tools::{ToolContext, ToolError, TypedTool};

/// Matches returned when the model gives no `max_results`.
const DEFAULT_RESULTS: usize = 100;
/// Upper bound on `max_results`, whatever the model asks.
const MAX_RESULTS: usize = 1000;
/// A matching line is cut to this many bytes.
const MAX_LINE: usize = 300;
/// Bigger files are skipped: they are almost never source and would be read whole.
const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// Searches file contents line by line with a regex, like ripgrep.
#[derive(Debug, Clone, Copy, Default)]
pub struct SearchFiles;

/// Arguments of `search_files`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchFilesParams {
    /// Regular expression (Rust regex syntax) matched against each line.
    pub pattern: String,
    /// Directory (or file) to search, relative to the workspace root (default: the root).
    #[serde(default)]
    pub path: Option<String>,
    /// Only search files matching this gitignore-style glob, e.g. "*.rs" or "src/**/*.toml".
    #[serde(default)]
    pub glob: Option<String>,
    /// Most matches to return (default 100, at most 1000).
    #[serde(default)]
    pub max_results: Option<usize>,
}

impl TypedTool for SearchFiles {
    type Params = SearchFilesParams;
    const NAME: &'static str = "search_files";
    const USAGE: Option<&'static str> = Some(
        "The pattern is a regular expression (Rust syntax) matched per line; narrow the search with path and glob (for example \"*.rs\"). Results are capped, so prefer specific patterns. Files ignored by .gitignore are skipped.",
    );
    const DESCRIPTION: &'static str = "Search file contents in the workspace with a regular \
        expression, line by line. Honours .gitignore and .ignore files and skips hidden and \
        binary files. Returns matches as {path, line, text}.";

    async fn run(&self, params: SearchFilesParams, ctx: &ToolContext) -> Result<Value, ToolError> {
        let regex = Regex::new(&params.pattern)
            .map_err(|e| ToolError::InvalidArguments(format!("invalid regex: {e}")))?;
        // Cancelled with the turn, and also when this future is dropped (runner timeout),
        // so the blocking walk never outlives the call for long.
        let token = ctx.cancel.child_token();
        let _stop_walk = token.clone().drop_guard();
        let search = Search {
            workdir: ctx.workdir.clone(),
            path: params.path.unwrap_or_else(|| ".".to_string()),
            regex,
            glob: params.glob.filter(|g| !g.is_empty()),
            max_results: params
                .max_results
                .unwrap_or(DEFAULT_RESULTS)
                .clamp(1, MAX_RESULTS),
            max_bytes: ctx.settings.max_output_bytes,
            cancel: token,
        };
        tokio::select! {
            result = blocking(move || search.run()) => result,
            // The walk checks the token too and stops soon after.
            () = ctx.cancel.cancelled() => Err(cancelled()),
        }
    }
}

fn build_glob(root: &Path, glob: &str) -> Result<Override, ToolError> {
    let invalid = |e: ignore::Error| ToolError::InvalidArguments(format!("invalid glob: {e}"));
    let mut builder = OverrideBuilder::new(root);
    builder.add(glob).map_err(invalid)?;
    builder.build().map_err(invalid)
}

struct Search {
    workdir: PathBuf,
    /// The directory or file to search, as the model gave it.
    path: String,
    regex: Regex,
    glob: Option<String>,
    max_results: usize,
    max_bytes: usize,
    cancel: CancellationToken,
}

impl Search {
    fn run(self) -> Result<Value, ToolError> {
        let ws = Workspace::new(&self.workdir)?;
        let start = ws.open(&self.path)?;
        // The walk starts where the path really leads (symlinks resolved), so that each file
        // it finds can be reopened below by its real path, with no symlink on the way.
        let root = self.workdir.join(&start.rel);
        // A glob only makes sense for a directory; a single file is searched as asked.
        let glob = match self.glob.as_deref() {
            Some(glob) if matches!(start.entry, Entry::Dir(_)) => Some(build_glob(&root, glob)?),
            _ => None,
        };
        let walker = WalkBuilder::new(&root)
            // Honour .gitignore even when the workspace is not a git repository.
            .require_git(false)
            .build();
        let mut matches = Vec::new();
        let mut bytes = 0;
        let mut files_searched = 0usize;
        let mut limited = false;
        'walk: for entry in walker {
            if self.cancel.is_cancelled() {
                return Err(cancelled());
            }
            // Unreadable directories or entries are skipped, as ripgrep does.
            let Ok(entry) = entry else { continue };
            // Symlinks are not followed: they could lead out of the workspace.
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            let path = entry.path();
            // The glob filters files only, after the ignore rules (an override would win over them).
            if let Some(glob) = &glob
                && !glob.matched(path, false).is_whitelist()
            {
                continue;
            }
            let Some(text) = path
                .strip_prefix(&self.workdir)
                .ok()
                .and_then(|rel| read_text(&ws, rel))
            else {
                continue;
            };
            files_searched += 1;
            for (index, line) in text.lines().enumerate() {
                if !self.regex.is_match(line) {
                    continue;
                }
                let shown = truncate_str(line.trim(), MAX_LINE);
                let rel = display_relative(&self.workdir, path);
                let found = json!({"path": rel, "line": index + 1, "text": shown});
                // Measured as sent (escapes included), plus the comma between matches.
                let size = budget::json_len(&found) + 1;
                if matches.len() >= self.max_results || bytes + size > self.max_bytes {
                    limited = true;
                    break 'walk;
                }
                bytes += size;
                matches.push((found, bytes));
            }
        }
        Ok(budget::fit(self.max_bytes, |room| {
            let kept = matches.partition_point(|&(_, upto)| upto <= room);
            let used = kept.checked_sub(1).map_or(0, |last| matches[last].1);
            let limited = limited || kept < matches.len();
            let shown: Vec<Value> = matches[..kept].iter().map(|(m, _)| m.clone()).collect();
            let mut result = json!({
                "matches": shown,
                "count": kept,
                "files_searched": files_searched,
                "truncated": limited,
            });
            if limited {
                let (why, hint) = if kept >= self.max_results {
                    ("max_results reached".to_string(), ", or raise max_results")
                } else {
                    (format!("output capped at {} bytes", self.max_bytes), "")
                };
                result["note"] = json!(format!(
                    "stopped after {kept} matches ({why}); narrow the pattern, path or glob{hint}"
                ));
            }
            (result, used)
        }))
    }
}

/// The file as text, or `None` when it is binary, too big, unreadable or reached through a
/// symlink. The walker found it by path; it is reopened through the workspace handle so
/// that a directory swapped for a symlink since cannot lead the read outside.
fn read_text(ws: &Workspace, rel: &Path) -> Option<String> {
    let Entry::File(file) = ws.open_exact(rel).ok()?.entry else {
        return None;
    };
    let len = file.metadata().ok()?.len();
    if len > MAX_FILE_BYTES {
        return None;
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    // Bounded even if the file grows meanwhile.
    file.take(MAX_FILE_BYTES).read_to_end(&mut bytes).ok()?;
    if looks_binary(&bytes) {
        return None;
    }
    Some(match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}
