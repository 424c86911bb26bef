//! `list_dir`: the entries of a directory in the workspace.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::blocking;
use crate::tools::budget;
use crate::tools::workspace::{Entry, ListedKind, Workspace, list};
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

struct Item {
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
        let workdir = ctx.workdir.clone();
        let cap = ctx.settings.max_output_bytes;
        blocking(move || list_dir(&Workspace::new(&workdir)?, &given, cap)).await
    }
}

fn list_dir(ws: &Workspace, given: &str, cap: usize) -> Result<Value, ToolError> {
    let opened = ws.open(given)?;
    let path = opened.shown();
    let Entry::Dir(dir) = opened.entry else {
        return Err(ToolError::failed(format!(
            "'{given}' is not a directory; use read_file to read a file"
        )));
    };
    let listed =
        list(&dir).map_err(|e| ToolError::failed(format!("cannot list '{given}': {e}")))?;
    let mut entries: Vec<Item> = listed
        .into_iter()
        .map(|e| Item {
            name: e.name,
            kind: match e.kind {
                ListedKind::Dir => "dir",
                ListedKind::Symlink => "symlink",
                ListedKind::File => "file",
            },
            size: e.size,
        })
        .collect();
    entries.sort_by(|a, b| (a.kind != "dir", &a.name).cmp(&(b.kind != "dir", &b.name)));
    let total = entries.len();
    // Each entry with the JSON bytes of the list up to it (escapes and commas included).
    let mut upto = 0;
    let shown: Vec<(Value, usize)> = entries
        .iter()
        .take(MAX_ENTRIES)
        .map(|e| {
            let entry = match e.size {
                Some(size) => json!({"name": e.name, "type": e.kind, "size": size}),
                None => json!({"name": e.name, "type": e.kind}),
            };
            upto += budget::json_len(&entry) + 1;
            (entry, upto)
        })
        .collect();
    Ok(budget::fit(cap, |room| {
        let kept = shown.partition_point(|&(_, upto)| upto <= room);
        let used = kept.checked_sub(1).map_or(0, |last| shown[last].1);
        let list: Vec<Value> = shown[..kept].iter().map(|(e, _)| e.clone()).collect();
        let mut result = json!({
            "path": path,
            "entries": list,
            "total": total,
        });
        if kept < total {
            let why = if kept < shown.len() {
                format!("output capped at {cap} bytes")
            } else {
                format!("at most {MAX_ENTRIES} entries are listed")
            };
            result["truncated"] = json!(true);
            result["note"] = json!(format!(
                "showing the first {kept} of {total} entries ({why}); \
                 list a subdirectory or use search_files to narrow down"
            ));
        }
        (result, used)
    }))
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
        let result = list_dir(&Workspace::new(&root).unwrap(), ".", 65536).unwrap();
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
