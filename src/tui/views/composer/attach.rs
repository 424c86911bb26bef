//! Files named with `@path` in a message, attached when it is sent. Each file the workspace
//! has is read through the tools' confinement (`tools::workspace`: no `..` or symlink out of
//! it), capped, and appended to the message as a delimited block (path, size, fenced
//! content); the chat shows a chip (`[@src/main.rs · 4.2 KB]`) where the mention was, as
//! it shows a big paste's. The blocks can be read back, so a resumed session shows the chips
//! too. Known key values are redacted with the rest of the prompt by the orchestrator.
//! An MCP server's resource mentioned as `@server:uri` (read beforehand, `mcp.rs`) is
//! attached the same way, under the same bounds, its binary parts named and never inlined.

use std::fmt::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};

use crate::tools::builtin::looks_binary;
use crate::tools::workspace::{Entry, NotText, TextHead, Workspace, read_text_head};

/// Most bytes attached from one file.
pub const MAX_FILE: usize = 64 * 1024;
/// Most bytes attached to one message.
pub const MAX_TOTAL: usize = 256 * 1024;
/// Punctuation that may follow a mention without being part of the path (`see @a.rs, then`).
const TRAILING: &[char] = &[',', '.', ';', ':', '!', '?', ')', ']', '}', '\'', '"'];
/// How a block starts (after the blank line that ends the message).
const OPEN: &str = "<file path=\"";
const CLOSE: &str = "</file>";

/// An MCP resource read for a message: `server:uri`, and its parts or why it could not be.
pub type Read = (String, Result<Vec<crate::mcp::resources::Part>, String>);

/// A message with its files attached.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Attached {
    /// What is sent: the message as typed (pastes in place), then a block per file.
    pub text: String,
    /// How the chat shows it, each attached mention as a chip; `None` when nothing was.
    pub shown: Option<String>,
    /// What the user should know: files refused or cut (plain text).
    pub notes: Vec<String>,
}

/// A file as its block and its chip describe it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Described {
    path: String,
    size: u64,
    /// Bytes attached when it was cut.
    kept: Option<u64>,
}

impl Described {
    fn chip(&self) -> String {
        match self.kept {
            Some(kept) => format!(
                "[@{} · {} · cut to {}]",
                self.path,
                size(self.size),
                size(kept)
            ),
            None => format!("[@{} · {}]", self.path, size(self.size)),
        }
    }
}

/// Attaches the files `typed` mentions (`@path` at its start or after a blank) to `full`
/// (the text to send), and the MCP resources in `fetched`; mentions of paths the workspace
/// does not have (and of resources not read) stay plain text.
pub fn attach(typed: &str, full: &str, root: Option<&Path>, fetched: &[Read]) -> Attached {
    let plain = Attached {
        text: full.to_string(),
        ..Attached::default()
    };
    let found = mentions(typed);
    if found.is_empty() || (root.is_none() && fetched.is_empty()) {
        return plain;
    }
    // Without a workspace only MCP resources are attached.
    let workspace = root.and_then(|root| {
        Workspace::new(root)
            .map_err(|e| tracing::warn!("no file attachments: {e}"))
            .ok()
    });
    let mut blocks = String::new();
    let mut notes = Vec::new();
    let mut total = 0usize;
    let mut attached: Vec<(PathBuf, String)> = Vec::new();
    // (byte range in `typed`, chip) for each mention shown as a chip.
    let mut chips: Vec<(Range<usize>, String)> = Vec::new();
    for (range, path) in found {
        let resolved = match &workspace {
            Some(workspace) => resolve(workspace, path),
            None => Resolved::Missing,
        };
        // An image file goes as image content: the orchestrator reads it (`crate::images`),
        // wherever it is. An MCP resource named like one is still attached here.
        let file = matches!(resolved, Resolved::File(..) | Resolved::Refused(..));
        if file && crate::images::find::looks_like_image(path) {
            continue;
        }
        let (path, opened) = match resolved {
            Resolved::Missing => {
                let bare = path.trim_end_matches(TRAILING);
                let Some((key, result)) = (fetched.iter())
                    .find(|(key, _)| key == path)
                    .or_else(|| fetched.iter().find(|(key, _)| key == bare))
                else {
                    continue;
                };
                let range = range.start..range.start + 1 + key.len();
                if let Some((_, chip)) =
                    attached.iter().find(|(k, _)| k.as_os_str() == key.as_str())
                {
                    chips.push((range, chip.clone()));
                    continue;
                }
                let parts = match result {
                    Ok(parts) => parts,
                    Err(why) => {
                        notes.push(format!("@{key} was not attached: {why}."));
                        continue;
                    }
                };
                let budget = MAX_FILE.min(MAX_TOTAL - total);
                if budget == 0 {
                    notes.push(format!(
                        "@{key} was not attached: the message already carries {} of files.",
                        size(MAX_TOTAL as u64)
                    ));
                    continue;
                }
                let (text, whole, cut, binary) = super::mcp::resource_text(parts, budget);
                let described = Described {
                    path: key.clone(),
                    size: whole,
                    kept: cut.then_some(text.len() as u64),
                };
                if let Some(kept) = described.kept {
                    notes.push(format!(
                        "@{key} is {}: only its first {} are attached.",
                        size(whole),
                        size(kept)
                    ));
                }
                for what in binary {
                    notes.push(format!(
                        "@{key} has binary content ({what}): named, not attached."
                    ));
                }
                total += text.len();
                blocks.push_str("\n\n");
                blocks.push_str(&block(&described, &text));
                let chip = described.chip();
                attached.push((PathBuf::from(key), chip.clone()));
                chips.push((range, chip));
                continue;
            }
            Resolved::Refused(path, why) => {
                notes.push(format!("@{path} was not attached: {why}."));
                continue;
            }
            Resolved::File(path, opened) => (path, opened),
        };
        let range = range.start..range.start + 1 + path.len();
        if let Some((_, chip)) = attached.iter().find(|(rel, _)| *rel == opened.rel) {
            chips.push((range, chip.clone()));
            continue;
        }
        let budget = MAX_FILE.min(MAX_TOTAL - total);
        if budget == 0 {
            notes.push(format!(
                "@{path} was not attached: the message already carries {} of files.",
                size(MAX_TOTAL as u64)
            ));
            continue;
        }
        let read = match read(opened.file, budget) {
            Ok(read) => read,
            Err(why) => {
                notes.push(format!("@{path} was not attached: {why}."));
                continue;
            }
        };
        let described = Described {
            path: path.to_string(),
            size: read.size,
            kept: read.cut.then_some(read.text.len() as u64),
        };
        if let Some(kept) = described.kept {
            notes.push(format!(
                "@{path} is {}: only its first {} are attached.",
                size(read.size),
                size(kept)
            ));
        }
        total += read.text.len();
        blocks.push_str("\n\n");
        blocks.push_str(&block(&described, &read.text));
        let chip = described.chip();
        attached.push((opened.rel, chip.clone()));
        chips.push((range, chip));
    }
    if chips.is_empty() {
        return Attached { notes, ..plain };
    }
    Attached {
        text: format!("{}{blocks}", full.trim_end()),
        shown: Some(replace(typed, &chips)),
        notes,
    }
}

/// How a message that was sent with files attached shows (its chips instead of the blocks);
/// `None` when it has no blocks. For a resumed session, which keeps only what was sent.
pub fn shown_from_sent(text: &str) -> Option<String> {
    for (at, _) in text.match_indices("\n\n<file path=\"") {
        let Some(files) = parse_blocks(&text[at + 2..]) else {
            continue;
        };
        let head = &text[..at];
        let mut chips = Vec::new();
        for (range, path) in mentions(head) {
            let bare = path.trim_end_matches(TRAILING);
            if let Some(file) = files.iter().find(|f| f.path == path || f.path == bare) {
                let range = range.start..range.start + 1 + file.path.len();
                chips.push((range, file.chip()));
            }
        }
        return Some(replace(head, &chips));
    }
    None
}

/// A size as people read it: `812 B`, `4.2 KB`, `1.3 MB` (1024-based).
pub fn size(bytes: u64) -> String {
    const KB: f64 = 1024.0;
    let b = bytes as f64;
    if bytes < 1024 {
        format!("{bytes} B")
    } else if b < KB * KB {
        format!("{:.1} KB", b / KB)
    } else {
        format!("{:.1} MB", b / (KB * KB))
    }
}

/// Each `@path` in `text` at its start or after whitespace: its byte range and the path.
fn mentions(text: &str) -> Vec<(Range<usize>, &str)> {
    let mut found = Vec::new();
    let mut start = None;
    let ends = text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')));
    for (i, c) in ends {
        if c.is_whitespace() {
            if let Some(s) = start.take() {
                let token = &text[s..i];
                if let Some(path) = token.strip_prefix('@').filter(|p| !p.is_empty()) {
                    found.push((s..i, path));
                }
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    found
}

/// A regular file, opened inside the workspace.
struct OpenedFile {
    rel: PathBuf,
    file: std::fs::File,
}

/// What a mention names: `Missing` when not a path the workspace has (it stays plain text).
enum Resolved<'a> {
    Missing,
    Refused(&'a str, String),
    File(&'a str, OpenedFile),
}

/// Finds the path a mention names: as typed, else without trailing punctuation.
fn resolve<'a>(workspace: &Workspace, path: &'a str) -> Resolved<'a> {
    let bare = path.trim_end_matches(TRAILING);
    let tries = if bare != path && !bare.is_empty() {
        vec![path, bare]
    } else {
        vec![path]
    };
    for path in tries {
        if !workspace.exists(path) {
            continue;
        }
        return match workspace.open(path) {
            Err(e) => Resolved::Refused(path, e.to_string()),
            Ok(opened) => match opened.entry {
                Entry::File(file) => Resolved::File(
                    path,
                    OpenedFile {
                        rel: opened.rel,
                        file,
                    },
                ),
                Entry::Dir(_) => {
                    Resolved::Refused(path, "it is a directory; only files are attached".into())
                }
                Entry::Other => Resolved::Refused(path, "it is not a regular file".into()),
            },
        };
    }
    Resolved::Missing
}

fn read(file: std::fs::File, budget: usize) -> Result<TextHead, String> {
    let binary = |size| {
        format!(
            "it is a binary file ({}); only text is attached",
            self::size(size)
        )
    };
    let head = read_text_head(file, budget).map_err(|e| match e {
        NotText::NotUtf8 { size } => binary(size),
        NotText::Io(e) => format!("it cannot be read ({e})"),
    })?;
    // A NUL byte is UTF-8 but says binary, as git and ripgrep decide.
    if looks_binary(head.text.as_bytes()) {
        return Err(binary(head.size));
    }
    Ok(head)
}

/// A file's block: path and size, then the content in a fence longer than any run of
/// backticks in it.
fn block(file: &Described, text: &str) -> String {
    let longest = (text.split(|c| c != '`')).map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let lang = Path::new(&file.path)
        .extension()
        .and_then(|e| e.to_str())
        .filter(|e| e.chars().all(|c| c.is_ascii_alphanumeric()))
        .unwrap_or("");
    let mut out = format!(
        "{OPEN}{}\" size=\"{}\"",
        escape(&file.path),
        size(file.size)
    );
    if let Some(kept) = file.kept {
        let _ = write!(out, " cut=\"{}\"", size(kept));
    }
    let _ = write!(out, ">\n{fence}{lang}\n{text}");
    if !text.is_empty() && !text.ends_with('\n') {
        out.push('\n');
    }
    let _ = writeln!(out, "{fence}");
    if let Some(kept) = file.kept {
        let _ = writeln!(
            out,
            "(cut: only the first {} of {} are attached)",
            size(kept),
            size(file.size)
        );
    }
    out.push_str(CLOSE);
    out
}

/// The files of blocks that make up all of `text`; `None` unless it is nothing but blocks.
fn parse_blocks(mut text: &str) -> Option<Vec<Described>> {
    let mut files = Vec::new();
    loop {
        let (file, rest) = parse_block(text)?;
        files.push(file);
        if rest.is_empty() {
            return Some(files);
        }
        text = rest.strip_prefix("\n\n")?;
    }
}

/// One block at the start of `text`, and what follows it.
fn parse_block(text: &str) -> Option<(Described, &str)> {
    let text = text.strip_prefix(OPEN)?;
    let (head, body) = text.split_once('\n')?;
    let head = head.strip_suffix('>')?;
    let (path, attrs) = head.split_once('"')?;
    let attr = |name: &str| {
        let key = format!("{name}=\"");
        let from = attrs.find(&key)? + key.len();
        attrs[from..].split('"').next()
    };
    let file = Described {
        path: unescape(path),
        size: parse_size(attr("size")?)?,
        kept: match attr("cut") {
            Some(kept) => Some(parse_size(kept)?),
            None => None,
        },
    };
    let fence_len = body.chars().take_while(|&c| c == '`').count();
    if fence_len < 3 {
        return None;
    }
    let fence = &body[..fence_len];
    let close = [format!("\n{fence}\n{CLOSE}"), format!("\n{fence}\n(cut: ")];
    let end = (close.iter()).filter_map(|c| body.find(c.as_str())).min()?;
    let after = &body[end..];
    let close_at = after.find(CLOSE)? + CLOSE.len();
    Some((file, &after[close_at..]))
}

/// A size written by [`size`], back in bytes (close enough to write the same again).
fn parse_size(text: &str) -> Option<u64> {
    let (number, unit) = text.split_once(' ')?;
    let number: f64 = number.parse().ok()?;
    let scale = match unit {
        "B" => 1.0,
        "KB" => 1024.0,
        "MB" => 1024.0 * 1024.0,
        _ => return None,
    };
    Some((number * scale).round() as u64)
}

fn escape(path: &str) -> String {
    path.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
}

fn unescape(path: &str) -> String {
    path.replace("&lt;", "<")
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
}

/// `text` with each range replaced (ranges ascending, not overlapping).
fn replace(text: &str, chips: &[(Range<usize>, String)]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for (range, chip) in chips {
        out.push_str(&text[from..range.start]);
        out.push_str(chip);
        from = range.end;
    }
    out.push_str(&text[from..]);
    out
}

#[cfg(test)]
mod tests;
