//! `list_dir`: the entries of a directory in the workspace.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::blocking;
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
        blocking(move || list_dir(&Workspace::new(&workdir)?, &given)).await
    }
}

fn list_dir(ws: &Workspace, given: &str) -> Result<Value, ToolError> {
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
    let shown: Vec<Value> = entries
        .iter()
        .take(MAX_ENTRIES)
        .map(|e| match e.size {
            Some(size) => json!({"name": e.name, "type": e.kind, "size": size}),
            None => json!({"name": e.name, "type": e.kind}),
        })
        .collect();
    let mut result = json!({
        "path": path,
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
        let result = list_dir(&Workspace::new(&root).unwrap(), ".").unwrap();
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
