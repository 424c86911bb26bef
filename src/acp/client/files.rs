//! The agent's file-system requests (`fs/read_text_file`, `fs/write_text_file`), answered
//! within the workspace's rules: a path reaches a file only through taco's [`Workspace`]
//! (inside the workdir, symlinks that lead out refused, writes renamed into place) and a file
//! read or written has a size bound.

use std::path::Path;

use crate::tools::workspace::{Entry, Workspace, read_text_head};

/// The largest file the agent may read or write through taco: 8 MiB (a message has to fit
/// in one line of at most `lines::MAX_LINE`).
pub const MAX_FILE: usize = 8 << 20;

/// Why a request was refused, in words for the agent (and the log).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Refused(pub String);

/// The text of `path` (absolute, inside `root`), from line `line` (1-based) for `limit`
/// lines when given.
pub fn read(
    root: &Path,
    path: &Path,
    line: Option<u32>,
    limit: Option<u32>,
) -> Result<String, Refused> {
    let workspace = Workspace::new(root).map_err(|e| Refused(e.to_string()))?;
    let opened = workspace
        .open(&path.to_string_lossy())
        .map_err(|e| Refused(e.to_string()))?;
    let Entry::File(file) = opened.entry else {
        return Err(Refused(format!("{} is not a regular file", path.display())));
    };
    let head = read_text_head(file, MAX_FILE).map_err(|e| Refused(e.to_string()))?;
    if head.cut {
        return Err(Refused(format!(
            "{} is {} bytes; taco lets an agent read files of at most {} MiB",
            path.display(),
            head.size,
            MAX_FILE >> 20
        )));
    }
    Ok(lines(&head.text, line, limit))
}

/// Writes `content` to `path` (absolute, inside `root`), creating it and its parents.
pub fn write(root: &Path, path: &Path, content: &str) -> Result<(), Refused> {
    if content.len() > MAX_FILE {
        return Err(Refused(format!(
            "{} bytes is too much: taco lets an agent write files of at most {} MiB",
            content.len(),
            MAX_FILE >> 20
        )));
    }
    let workspace = Workspace::new(root).map_err(|e| Refused(e.to_string()))?;
    workspace
        .write(&path.to_string_lossy(), content.as_bytes())
        .map(|_| ())
        .map_err(|e| Refused(e.to_string()))
}

/// Lines `line..line + limit` (1-based) of `text`, with their newlines.
fn lines(text: &str, line: Option<u32>, limit: Option<u32>) -> String {
    if line.is_none() && limit.is_none() {
        return text.to_string();
    }
    let skip = line.map_or(0, |l| l.saturating_sub(1) as usize);
    let take = limit.map_or(usize::MAX, |l| l as usize);
    text.split_inclusive('\n').skip(skip).take(take).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_inside_the_workspace_only() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        write(&root, &root.join("a/b.txt"), "one\ntwo\nthree\n").unwrap();
        assert_eq!(
            read(&root, &root.join("a/b.txt"), None, None).unwrap(),
            "one\ntwo\nthree\n"
        );
        assert_eq!(
            read(&root, &root.join("a/b.txt"), Some(2), Some(1)).unwrap(),
            "two\n"
        );
        let outside = dir.path().parent().unwrap().join("escaped.txt");
        assert!(write(&root, &outside, "x").is_err());
        assert!(!outside.exists());
        assert!(read(&root, Path::new("/etc/passwd"), None, None).is_err());
        assert!(read(&root, &root.join("../x"), None, None).is_err());
    }

    #[test]
    fn sizes_are_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let big = "x".repeat(MAX_FILE + 1);
        let refused = write(&root, &root.join("big"), &big).unwrap_err();
        assert!(refused.0.contains("at most 8 MiB"), "{refused}");
        std::fs::write(root.join("big"), &big).unwrap();
        let refused = read(&root, &root.join("big"), None, None).unwrap_err();
        assert!(refused.0.contains("at most 8 MiB"), "{refused}");
    }
}
