//! `read_file`: a text file in the workspace, whole or by line range.

use std::io::{BufRead, BufReader};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{blocking, looks_binary};
use crate::tools::budget;
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
        "Read big files in pieces with offset and limit (lines); when the result is truncated, continue with offset set to its next_offset. Use search_files first to find the lines that matter.",
    );
    const DESCRIPTION: &'static str = "Read a text file in the workspace. Returns the content \
        of lines offset..offset+limit (1-based) that fit the output cap, with start_line, \
        end_line, total_lines and next_offset (null at the end of the file); read large files \
        in pieces with offset and limit.";

    async fn run(&self, params: ReadFileParams, ctx: &ToolContext) -> Result<Value, ToolError> {
        let workdir = ctx.workdir.clone();
        let cap = ctx.settings.max_output_bytes;
        let buffers = &ctx.settings.buffers;
        if buffers.0.is_none() {
            return blocking(move || {
                let opened = Workspace::new(&workdir)?.open(&params.path)?;
                read(opened, &params, cap)
            })
            .await;
        }
        // An editor's copy is asked for only once the file is found inside the workspace,
        // under its real path; the disk answers when the editor does not.
        let path = params.path.clone();
        let opened = blocking(move || Workspace::new(&workdir)?.open(&path)).await?;
        if matches!(opened.entry, Entry::File(_))
            && let Some(text) = buffers.read(&ctx.workdir.join(&opened.rel)).await
        {
            let shown = opened.shown();
            return read_text(&shown, &text, &params, cap);
        }
        blocking(move || read(opened, &params, cap)).await
    }
}

/// [`read`] of the editor's text of a file.
fn read_text(
    shown_path: &str,
    text: &str,
    params: &ReadFileParams,
    cap: usize,
) -> Result<Value, ToolError> {
    if looks_binary(text.as_bytes()) {
        return Err(ToolError::failed(format!(
            "'{shown_path}' is a binary file ({} bytes); read_file only shows text",
            text.len()
        )));
    }
    let first = params.offset.unwrap_or(1).max(1);
    let limit = params.limit.unwrap_or(usize::MAX);
    let window = Window::collect(&mut text.as_bytes(), first, limit, cap)
        .map_err(|e| ToolError::failed(format!("cannot read '{shown_path}': {e}")))?;
    Ok(budget::fit(cap, |room| {
        window.result(shown_path, room, cap)
    }))
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
    Ok(budget::fit(cap, |room| {
        window.result(&shown_path, room, cap)
    }))
}

/// The requested lines of a file, read once, plus what the model needs to read on.
struct Window {
    /// The first line asked for (1-based).
    first: usize,
    /// The most lines asked for.
    limit: usize,
    /// The lines from `first` on that fit in the cap (or the start of one longer line).
    content: String,
    /// Per line in `content`: where it ends and the JSON cost of `content` up to there.
    ends: Vec<(usize, usize)>,
    /// Lines in the file.
    total: usize,
    /// The byte length of the first line when it was too long to keep whole.
    long_line: Option<usize>,
}

impl Window {
    /// Streams the file once: keeps lines `first..first+limit` while their JSON cost fits in
    /// `cap`, and counts all lines without keeping them.
    fn collect(
        reader: &mut impl BufRead,
        first: usize,
        limit: usize,
        cap: usize,
    ) -> std::io::Result<Self> {
        let mut window = Window {
            first,
            limit,
            content: String::new(),
            ends: Vec::new(),
            total: 0,
            long_line: None,
        };
        let mut line = Vec::new();
        let mut cost = 0;
        let mut done = false;
        loop {
            if window.total + 1 < first || done {
                if reader.skip_until(b'\n')? == 0 {
                    break;
                }
                window.total += 1;
                continue;
            }
            if window.ends.len() >= limit {
                done = true;
                continue;
            }
            // One byte more than can fit tells that a line does not fit.
            let len = read_line_capped(reader, cap.saturating_add(1), &mut line)?;
            if len == 0 {
                break;
            }
            window.total += 1;
            let text = String::from_utf8_lossy(&line);
            let line_cost = budget::str_cost(&text);
            if len == line.len() && cost + line_cost <= cap {
                window.content.push_str(&text);
                cost += line_cost;
                window.ends.push((window.content.len(), cost));
                continue;
            }
            done = true;
            if window.ends.is_empty() {
                // A line longer than the whole cap is shown cut, so the model sees something.
                window.long_line = Some(len);
                let mut kept = line.clone();
                budget::trim_partial_char(&mut kept);
                let text = String::from_utf8_lossy(&kept);
                let (prefix, prefix_cost) = budget::prefix_within(&text, cap);
                window.content.push_str(prefix);
                window.ends.push((window.content.len(), prefix_cost));
            }
        }
        Ok(window)
    }

    /// The tool's result with at most `room` bytes of JSON cost of content.
    fn result(&self, path: &str, room: usize, cap: usize) -> (Value, usize) {
        let whole = self.ends.partition_point(|&(_, cost)| cost <= room);
        let first_len = self.ends.first().map_or(0, |&(end, _)| end);
        // (content, its cost, lines shown, the full length of a line shown cut)
        let (content, used, shown, cut) = match (whole, self.ends.is_empty()) {
            (_, true) => ("", 0, 0, None),
            (0, false) => {
                let (prefix, used) = budget::prefix_within(&self.content[..first_len], room);
                let full = self.long_line.unwrap_or(first_len);
                (prefix, used, 1, Some(full))
            }
            (k, false) => {
                let (end, used) = self.ends[k - 1];
                (&self.content[..end], used, k, self.long_line)
            }
        };
        let last = self.first + shown - 1;
        let next = (last < self.total).then_some(last + 1);
        let read_on = match next {
            Some(next) => format!("; call read_file with offset={next} to read on"),
            None => String::new(),
        };
        let note = if let Some(full) = cut {
            Some(format!(
                "line {last} is {full} bytes long and was cut to its first {} bytes (output \
                 capped at {cap} bytes){read_on}",
                content.len()
            ))
        } else if next.is_some() {
            let why = if shown >= self.limit {
                "line limit reached".to_string()
            } else {
                format!("output capped at {cap} bytes")
            };
            Some(format!(
                "{why}; {shown} of {} lines shown{read_on}",
                self.total
            ))
        } else if self.first > self.total && self.total > 0 {
            Some(format!(
                "offset {} is past the end; the file has {} lines",
                self.first, self.total
            ))
        } else {
            None
        };
        let mut result = json!({
            "path": path,
            "content": content,
            "start_line": (shown > 0).then_some(self.first),
            "end_line": (shown > 0).then_some(last),
            "total_lines": self.total,
            "truncated": next.is_some() || cut.is_some(),
            "next_offset": next,
        });
        if let Some(note) = note {
            result["note"] = json!(note);
        }
        (result, used)
    }
}

/// Reads one line (through its newline) into `line`, keeping at most `keep` bytes of it;
/// the rest is skipped. Returns the line's full length, 0 at the end of the file.
fn read_line_capped(
    reader: &mut impl BufRead,
    keep: usize,
    line: &mut Vec<u8>,
) -> std::io::Result<usize> {
    line.clear();
    let mut len = 0;
    loop {
        let available = reader.fill_buf()?;
        if available.is_empty() {
            return Ok(len);
        }
        let look = &available[..available.len().min(keep - line.len())];
        if let Some(at) = look.iter().position(|&b| b == b'\n') {
            line.extend_from_slice(&look[..=at]);
            reader.consume(at + 1);
            return Ok(len + at + 1);
        }
        let taken = look.len();
        line.extend_from_slice(look);
        reader.consume(taken);
        len += taken;
        if line.len() >= keep {
            return Ok(len + reader.skip_until(b'\n')?);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(text: &str, first: usize, limit: usize, cap: usize) -> Window {
        Window::collect(&mut text.as_bytes(), first, limit, cap).unwrap()
    }

    fn result(text: &str, first: usize, limit: usize, cap: usize) -> Value {
        let window = window(text, first, limit, cap);
        budget::fit(cap, |room| window.result("f", room, cap))
    }

    #[test]
    fn counts_lines_like_editors() {
        assert_eq!(window("", 1, 10, 100).total, 0);
        assert_eq!(window("a\nb", 1, 10, 100).total, 2);
        assert_eq!(window("a\nb\n", 1, 10, 100).total, 2);
        assert_eq!(window("a\nb\nc\n", 3, 0, 100).total, 3);
    }

    #[test]
    fn windows_limits_and_offsets() {
        let r = result("1\n2\n3\n4\n", 2, 2, 1000);
        assert_eq!(r["content"], "2\n3\n");
        assert_eq!((&r["start_line"], &r["end_line"]), (&json!(2), &json!(3)));
        assert_eq!(
            (&r["next_offset"], &r["truncated"]),
            (&json!(4), &json!(true))
        );
        assert!(r["note"].as_str().unwrap().contains("line limit"), "{r}");
        let r = result("1\n2\n3\n4\n", 3, usize::MAX, 1000);
        assert_eq!(r["content"], "3\n4\n");
        assert_eq!(
            (&r["next_offset"], &r["truncated"]),
            (&json!(null), &json!(false))
        );
        assert_eq!(r.get("note"), None);
        let r = result("1\n2\n", 5, usize::MAX, 1000);
        assert_eq!(
            (&r["content"], &r["start_line"]),
            (&json!(""), &json!(null))
        );
        assert!(r["note"].as_str().unwrap().contains("past the end"), "{r}");
    }

    #[test]
    fn the_whole_result_fits_the_cap_with_escapes() {
        // Each line costs 4 bytes of text but 12 of JSON.
        let text = "\"\"\"\n".repeat(1000);
        let r = result(&text, 1, usize::MAX, 1024);
        assert!(budget::json_len(&r) <= 1024, "{}", budget::json_len(&r));
        let end = r["end_line"].as_u64().unwrap();
        assert!(end > 50, "{r}");
        assert_eq!(r["next_offset"], json!(end + 1));
        assert_eq!(r["content"].as_str().unwrap().len() as u64, end * 4);
    }

    #[test]
    fn a_line_longer_than_the_cap_is_cut_and_skipped() {
        let text = format!("{}\nnext\n", "é".repeat(5000));
        let r = result(&text, 1, usize::MAX, 1024);
        assert!(budget::json_len(&r) <= 1024, "{r}");
        let content = r["content"].as_str().unwrap();
        assert!(
            content.len() > 500 && content.chars().all(|c| c == 'é'),
            "{r}"
        );
        assert_eq!((&r["end_line"], &r["next_offset"]), (&json!(1), &json!(2)));
        assert!(r["note"].as_str().unwrap().contains("10001 bytes"), "{r}");
        assert_eq!(r["total_lines"], 2);
    }
}
