//! `read_file`: a text file in the workspace, whole or by line range.

use std::io::{BufRead, BufReader};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{blocking, looks_binary, truncate_str};
use crate::tools::workspace::{Entry, Opened, Workspace};
use crate::tools::{ToolContext, ToolError, TypedTool};

/// Reads a text file, optionally a window of lines, capped at `max_output_bytes`.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadFile;

/// Arguments of `read_file`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReadFileParams {
    /// File to read, relative to the workspace root.
    pub path: String,
    /// First line to return, 1-based (default 1).
    #[serde(default)]
    pub offset: Option<usize>,
    /// How many lines to return (default: to the end of the file, within the size cap).
    #[serde(default)]
    pub limit: Option<usize>,
}

impl TypedTool for ReadFile {
    type Params = ReadFileParams;
    const NAME: &'static str = "read_file";
    const USAGE: Option<&'static str> = Some(
        "Read big files in pieces with offset and limit (lines); when the result says it was truncated, continue from the offset it gives. Use search_files first to find the lines that matter.",
    );
    const DESCRIPTION: &'static str = "Read a text file in the workspace. Returns the content \
        of lines offset..offset+limit (1-based), the file's total line count and whether the \
        content was truncated; read large files in pieces with offset and limit.";

    async fn run(&self, params: ReadFileParams, ctx: &ToolContext) -> Result<Value, ToolError> {
        let workdir = ctx.workdir.clone();
        let cap = ctx.settings.max_output_bytes;
        blocking(move || {
            let opened = Workspace::new(&workdir)?.open(&params.path)?;
            read(opened, &params, cap)
        })
        .await
    }
}

fn read(opened: Opened, params: &ReadFileParams, cap: usize) -> Result<Value, ToolError> {
    let shown_path = opened.shown();
    let file = match opened.entry {
        Entry::File(file) => file,
        Entry::Dir(_) => {
            return Err(ToolError::failed(format!(
                "'{shown_path}' is a directory; use list_dir to list it"
            )));
        }
        // A FIFO or a device could block forever or never end; it was not even opened.
        Entry::Other => {
            return Err(ToolError::failed(format!(
                "'{shown_path}' is not a regular file"
            )));
        }
    };
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut reader = BufReader::new(file);
    let head = reader
        .fill_buf()
        .map_err(|e| ToolError::failed(format!("cannot read '{shown_path}': {e}")))?;
    if looks_binary(head) {
        return Err(ToolError::failed(format!(
            "'{shown_path}' is a binary file ({size} bytes); read_file only shows text"
        )));
    }

    // 0 is read as 1: models mix up 0- and 1-based offsets, and line 0 does not exist.
    let first = params.offset.unwrap_or(1).max(1);
    let limit = params.limit.unwrap_or(usize::MAX);
    let window = Window::collect(&mut reader, first, limit, cap)
        .map_err(|e| ToolError::failed(format!("cannot read '{shown_path}': {e}")))?;

    let mut result = json!({
        "path": shown_path,
        "content": window.content,
        "total_lines": window.total,
        "truncated": window.truncated,
    });
    if window.shown > 0 {
        result["start_line"] = json!(first);
        result["end_line"] = json!(first + window.shown - 1);
    }
    if window.truncated {
        let next = first + window.shown;
        let why = if window.cut_by_size {
            format!("output capped at {cap} bytes")
        } else {
            "line limit reached".to_string()
        };
        result["note"] = json!(format!(
            "{why}; {} of {} lines shown; call read_file with offset={next} to read more",
            window.shown, window.total
        ));
    } else if first > window.total && window.total > 0 {
        result["note"] = json!(format!(
            "offset {first} is past the end; the file has {} lines",
            window.total
        ));
    }
    Ok(result)
}

/// The requested lines of a file, plus what the model needs to read on.
struct Window {
    content: String,
    total: usize,
    shown: usize,
    truncated: bool,
    cut_by_size: bool,
}

impl Window {
    /// Streams the file once: keeps lines `first..first+limit` within `cap` bytes, counts all.
    fn collect(
        reader: &mut impl BufRead,
        first: usize,
        limit: usize,
        cap: usize,
    ) -> std::io::Result<Self> {
        let mut window = Window {
            content: String::new(),
            total: 0,
            shown: 0,
            truncated: false,
            cut_by_size: false,
        };
        let mut line = Vec::new();
        let mut full = false;
        loop {
            line.clear();
            if reader.read_until(b'\n', &mut line)? == 0 {
                break;
            }
            window.total += 1;
            if window.total < first || full {
                continue;
            }
            if window.shown >= limit {
                full = true;
                window.truncated = true;
                continue;
            }
            let text = String::from_utf8_lossy(&line);
            let room = cap.saturating_sub(window.content.len());
            if text.len() > room {
                // A line longer than the whole cap is shown cut, so the model sees something.
                if window.shown == 0 {
                    window.content.push_str(truncate_str(&text, room));
                    window.shown = 1;
                }
                full = true;
                window.truncated = true;
                window.cut_by_size = true;
                continue;
            }
            window.content.push_str(&text);
            window.shown += 1;
        }
        Ok(window)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(text: &str, first: usize, limit: usize, cap: usize) -> Window {
        Window::collect(&mut text.as_bytes(), first, limit, cap).unwrap()
    }

    #[test]
    fn counts_lines_like_editors() {
        assert_eq!(window("", 1, 10, 100).total, 0);
        assert_eq!(window("a\nb", 1, 10, 100).total, 2);
        assert_eq!(window("a\nb\n", 1, 10, 100).total, 2);
    }

    #[test]
    fn windows_and_caps() {
        let w = window("1\n2\n3\n4\n", 2, 2, 100);
        assert_eq!(
            (w.content.as_str(), w.shown, w.truncated),
            ("2\n3\n", 2, true)
        );
        let w = window("1\n2\n3\n4\n", 3, 10, 100);
        assert_eq!((w.content.as_str(), w.truncated), ("3\n4\n", false));
        let w = window("aaaa\nbbbb\n", 1, 10, 7);
        assert_eq!((w.content.as_str(), w.cut_by_size), ("aaaa\n", true));
        let w = window("aaaaaaaaaa\n", 1, 10, 4);
        assert_eq!(
            (w.content.as_str(), w.shown, w.truncated),
            ("aaaa", 1, true)
        );
    }
}
