//! `list_dir`: the entries of a directory in the workspace.

use std::path::Path;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::blocking;
use crate::tools::workspace::{display_relative, resolve_existing};
use crate::tools::{ToolContext, ToolError, TypedTool};

/// At most this many entries are returned; a bigger directory gets a note.
const MAX_ENTRIES: usize = 1000;

/// Lists a directory: directories first, then files and symlinks, each group by name.
#[derive(Debug, Clone, Copy, Default)]
pub struct ListDir;

/// Arguments of `list_dir`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListDirParams {
    /// Directory to list, relative to the workspace root (default ".", the root itself).
    #[serde(default)]
    pub path: Option<String>,
}

struct Entry {
    name: String,
    kind: &'static str,
    size: Option<u64>,
}

impl TypedTool for ListDir {
    type Params = ListDirParams;
    const NAME: &'static str = "list_dir";
    const DESCRIPTION: &'static str = "List the entries of a directory in the workspace \
        (directories first, then files, each sorted by name) with their type and file sizes.";

    async fn run(&self, params: ListDirParams, ctx: &ToolContext) -> Result<Value, ToolError> {
        let given = params.path.unwrap_or_else(|| ".".to_string());
        let dir = resolve_existing(&ctx.workdir, &given)?;
        let workdir = ctx.workdir.clone();
        blocking(move || list(&workdir, &dir, &given)).await
    }
}

fn list(workdir: &Path, dir: &Path, given: &str) -> Result<Value, ToolError> {
    if !dir.is_dir() {
        return Err(ToolError::failed(format!(
            "'{given}' is not a directory; use read_file to read a file"
        )));
    }
    let reader = std::fs::read_dir(dir)
        .map_err(|e| ToolError::failed(format!("cannot list '{given}': {e}")))?;
    let mut entries = Vec::new();
    for item in reader {
        // An entry that vanished or cannot be read is skipped, not fatal.
        let Ok(item) = item else { continue };
        let Ok(file_type) = item.file_type() else {
            continue;
        };
        let (kind, size) = if file_type.is_symlink() {
            ("symlink", None)
        } else if file_type.is_dir() {
            ("dir", None)
        } else {
            ("file", item.metadata().ok().map(|m| m.len()))
        };
        let name = item.file_name().to_string_lossy().into_owned();
        entries.push(Entry { name, kind, size });
    }
    entries.sort_by(|a, b| (a.kind != "dir", &a.name).cmp(&(b.kind != "dir", &b.name)));
    let total = entries.len();
    let shown: Vec<Value> = entries
        .iter()
        .take(MAX_ENTRIES)
        .map(|e| match e.size {
            Some(size) => json!({"name": e.name, "type": e.kind, "size": size}),
            None => json!({"name": e.name, "type": e.kind}),
        })
        .collect();
    let mut result = json!({
        "path": display_relative(workdir, dir),
        "entries": shown,
        "total": total,
    });
    if total > MAX_ENTRIES {
        result["truncated"] = json!(true);
        result["note"] = json!(format!(
            "showing the first {MAX_ENTRIES} of {total} entries; \
             list a subdirectory or use search_files to narrow down"
        ));
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dirs_first_then_names() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("zdir")).unwrap();
        std::fs::write(root.join("a.txt"), "12345").unwrap();
        std::fs::write(root.join("B.txt"), "").unwrap();
        let result = list(&root, &root, ".").unwrap();
        let names: Vec<&str> = result["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["zdir", "B.txt", "a.txt"]);
        assert_eq!(result["entries"][2]["size"], 5);
        assert_eq!(result["path"], ".");
    }
}
