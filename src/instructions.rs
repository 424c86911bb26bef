//! Project instructions (issue 13): `AGENTS.md`, the cross-tool convention (else `CLAUDE.md`,
//! or the names `[instructions] files` gives), from the workspace and each directory above
//! it up to the repository root, read with size caps and appended to the system prompt.
//!
//! Files are read through a [`Workspace`] handle of the search root (the repository root, or
//! the workspace when it is in no repository), the file tools' confinement: a symlink is
//! followed only while it stays inside that root, and only a regular file is read. So a
//! cloned repository cannot point `AGENTS.md` at `~/.ssh/id_rsa` and have it sent to the
//! provider. A file that cannot be used is skipped with a note; nothing here fails a launch.

use std::fmt::Write as _;
use std::path::Path;

use crate::tools::workspace::{Entry, Workspace, read_text_head};

/// The names looked for in each directory, in order of preference.
pub const DEFAULT_NAMES: [&str; 2] = ["AGENTS.md", "CLAUDE.md"];

/// Most bytes of one file that reach the prompt.
pub const FILE_CAP: usize = 32 * 1024;

/// Most bytes of all files together that reach the prompt.
pub const TOTAL_CAP: usize = 64 * 1024;

/// How much of the files may reach the prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    /// Most bytes of one file.
    pub per_file: usize,
    /// Most bytes of all files together.
    pub total: usize,
}

impl Default for Caps {
    fn default() -> Self {
        Self {
            per_file: FILE_CAP,
            total: TOTAL_CAP,
        }
    }
}

/// How much of a file reached the prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cut {
    /// All of it.
    Whole,
    /// Its first `kept` bytes (a cap was reached).
    Truncated {
        /// Bytes kept.
        kept: usize,
    },
    /// None of it: nearer files used up the total.
    LeftOut,
}

/// One instruction file that was found and read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstructionFile {
    /// Its path relative to the workspace (`AGENTS.md`, `../../AGENTS.md`).
    pub shown: String,
    /// The directory it applies to, relative to the workspace (`.`, `../..`).
    pub scope: String,
    /// What reaches the prompt.
    pub text: String,
    /// Its size on disk, in bytes.
    pub size: u64,
    /// Whether it was cut.
    pub cut: Cut,
}

/// The project instructions of a workspace.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Instructions {
    /// The names looked for, in order of preference; empty when instructions are off.
    pub names: Vec<String>,
    /// The files read, outermost first (the nearest comes last and wins).
    pub files: Vec<InstructionFile>,
    /// Files that were found but not used, and why (for the user, not the model).
    pub notes: Vec<String>,
}

/// The nearest directory at or above `workdir` that holds `.git` (a directory, or the file
/// of a worktree or submodule).
pub fn repository_root(workdir: &Path) -> Option<&Path> {
    workdir
        .ancestors()
        .find(|dir| dir.join(".git").symlink_metadata().is_ok())
}

/// The directories searched, nearest first: the workspace and each parent up to the
/// repository root; only the workspace when it is in no repository.
pub fn search_dirs(workdir: &Path) -> Vec<&Path> {
    let root = repository_root(workdir).unwrap_or(workdir);
    let mut dirs = Vec::new();
    for dir in workdir.ancestors() {
        dirs.push(dir);
        if dir == root {
            break;
        }
    }
    dirs
}

/// Loads the instructions of `workdir` (canonical) with the default caps.
pub fn load(workdir: &Path, names: &[String]) -> Instructions {
    load_capped(workdir, names, Caps::default())
}

/// Loads the instructions of `workdir` (canonical): in each searched directory the first of
/// `names` that can be read wins. The nearest files are budgeted first, so when the total
/// runs out it is the outermost, most general ones that are cut.
pub fn load_capped(workdir: &Path, names: &[String], caps: Caps) -> Instructions {
    let mut out = Instructions {
        names: names.to_vec(),
        ..Instructions::default()
    };
    if names.is_empty() {
        return out;
    }
    let dirs = search_dirs(workdir);
    let root = dirs.last().copied().unwrap_or(workdir);
    let in_repo = repository_root(workdir).is_some();
    let workspace = match Workspace::new(root) {
        Ok(workspace) => workspace,
        Err(e) => {
            out.notes
                .push(format!("project instructions were not read: {e}"));
            return out;
        }
    };
    let mut budget = caps.total;
    for (up, dir) in dirs.iter().enumerate() {
        let scope = if up == 0 {
            ".".to_string()
        } else {
            vec![".."; up].join("/")
        };
        let Ok(rel_dir) = dir.strip_prefix(root) else {
            continue;
        };
        for name in names {
            let shown = if up == 0 {
                name.clone()
            } else {
                format!("{scope}/{name}")
            };
            // Absent (or in a directory the user cannot search): quietly the next name.
            if dir.join(name).symlink_metadata().is_err() {
                continue;
            }
            let read = leads_inside(&dir.join(name), root, in_repo)
                .and_then(|()| read_one(&workspace, &rel_dir.join(name), caps.per_file));
            let raw = match read {
                Ok(raw) => raw,
                Err(why) => {
                    out.notes.push(format!("`{shown}` was not read: {why}"));
                    continue;
                }
            };
            if !raw.text.trim().is_empty() {
                out.files.push(budgeted(raw, shown, scope, &mut budget));
            }
            break;
        }
    }
    out.files.reverse();
    out
}

/// What was read of one file.
struct Raw {
    text: String,
    size: u64,
    truncated: bool,
}

/// Refuses a symlink that leads outside the search root or nowhere, with a clear reason; the
/// walk in [`read_one`] enforces the same without races, but says it in the tools' words.
fn leads_inside(path: &Path, root: &Path, in_repo: bool) -> Result<(), String> {
    let target = std::fs::canonicalize(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => "it is a symlink to nothing".to_string(),
        _ => e.to_string(),
    })?;
    if target.starts_with(root) {
        return Ok(());
    }
    let what = if in_repo { "repository" } else { "workspace" };
    Err(format!(
        "it is a symlink that leads outside the {what} (to {}); instructions are read only from inside it",
        target.display()
    ))
}

/// Reads at most `cap` bytes of one file, refusing anything but regular UTF-8 text.
fn read_one(workspace: &Workspace, rel: &Path, cap: usize) -> Result<Raw, String> {
    let opened = workspace
        .open(&rel.to_string_lossy())
        .map_err(|e| e.to_string())?;
    let file = match opened.entry {
        Entry::File(file) => file,
        Entry::Dir(_) => return Err("it is a directory".into()),
        Entry::Other => return Err("it is not a regular file (a FIFO, socket or device)".into()),
    };
    let head = read_text_head(file, cap).map_err(|e| e.to_string())?;
    let (text, size, truncated) = (head.text, head.size, head.cut);
    let text = match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_string(),
        None => text,
    };
    Ok(Raw {
        text,
        size,
        truncated,
    })
}

/// The file as it reaches the prompt, within what is left of the total.
fn budgeted(raw: Raw, shown: String, scope: String, budget: &mut usize) -> InstructionFile {
    let Raw {
        mut text,
        size,
        mut truncated,
    } = raw;
    let limit = (*budget).min(text.len());
    if truncated || limit < text.len() {
        text.truncate(cut_point(&text, limit));
        truncated = true;
    }
    *budget -= text.len();
    let cut = match (text.is_empty(), truncated) {
        (true, _) => Cut::LeftOut,
        (false, true) => Cut::Truncated { kept: text.len() },
        (false, false) => Cut::Whole,
    };
    InstructionFile {
        shown,
        scope,
        text,
        size,
        cut,
    }
}

/// Where to cut `text` to at most `limit` bytes: after the last line break in the second
/// half of that, else at the last character boundary.
fn cut_point(text: &str, limit: usize) -> usize {
    let end = text.floor_char_boundary(limit);
    match text[..end].rfind('\n') {
        Some(newline) if newline + 1 >= end / 2 => newline + 1,
        _ => end,
    }
}

impl Instructions {
    /// Whether nothing reaches the prompt and there is nothing to tell the user.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty() && self.notes.is_empty()
    }

    /// The block appended to the system prompt, `None` when no file was read.
    pub fn prompt_block(&self) -> Option<String> {
        if self.files.is_empty() {
            return None;
        }
        let mut out = String::from(
            "# Project instructions\n\n\
             These files in the project tell agents how to work in it. Follow them. Each one \
             applies to its directory and everything below it; they are listed outermost \
             first, and where two disagree the later (nearer) one wins. Paths are relative to \
             the workspace. The user's own requests in this conversation come first.\n",
        );
        for file in &self.files {
            match file.cut {
                Cut::LeftOut => {
                    let _ = write!(
                        out,
                        "\n({} was left out: nearer instruction files used up the {} KiB allowed for instructions.)\n",
                        file.shown,
                        TOTAL_CAP / 1024
                    );
                    continue;
                }
                Cut::Whole | Cut::Truncated { .. } => {}
            }
            let _ = write!(
                out,
                "\n<instructions file=\"{}\" applies_to=\"{}\">\n{}",
                file.shown,
                file.scope,
                file.text.trim_end()
            );
            if let Cut::Truncated { kept } = file.cut {
                let _ = write!(
                    out,
                    "\n[… cut here: the file has {} bytes; only its first {kept} are included.]",
                    file.size
                );
            }
            out.push_str("\n</instructions>\n");
        }
        Some(out)
    }

    /// `prompt` with the instructions appended.
    pub fn append_to(&self, prompt: &str) -> String {
        match self.prompt_block() {
            Some(block) => format!("{}\n\n{block}", prompt.trim_end()),
            None => prompt.to_string(),
        }
    }
}

#[cfg(test)]
mod tests;
