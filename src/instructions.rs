//! Project instructions (issue 13): `AGENTS.md`, the cross-tool convention (else `CLAUDE.md`,
//! or the names `[instructions] files` gives), from the workspace and each directory above
//! it up to the repository root, read with size caps and appended to the system prompt.
//!
//! Files are read through a [`Workspace`] handle of the search root (the repository root, or
//! the workspace when it is in no repository), the file tools' confinement: a symlink is
//! followed only while it stays inside that root, and only a regular file is read. So a
//! cloned repository cannot point `AGENTS.md` at `~/.ssh/id_rsa` and have it sent to the
//! provider. A file that cannot be used is skipped with a note; nothing here fails a launch.
//!
//! Only the user's (or root's) files count: the walk up to the repository root goes through
//! directories they own and stops at one of another user, a `.git` of another user does not
//! make a repository, and an instruction file of another user is skipped (issue 26), so a
//! `.git` and an `AGENTS.md` planted in a shared directory cannot steer the agent.

use std::fmt::Write as _;
use std::os::unix::fs::MetadataExt;
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
/// of a worktree or submodule), found walking up only through directories the user or root
/// owns, and only when that `.git` is theirs too (see [`search`]).
pub fn repository_root(workdir: &Path) -> Option<&Path> {
    search(workdir).root
}

/// The directories searched, nearest first: the workspace and each parent up to the
/// repository root; only the workspace when it is in no repository (see [`search`]).
pub fn search_dirs(workdir: &Path) -> Vec<&Path> {
    search(workdir).dirs
}

/// Where instructions are looked for, and why the search stopped short.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Search<'a> {
    /// The directories searched, nearest first.
    pub dirs: Vec<&'a Path>,
    /// The repository root, when a trusted one was found.
    pub root: Option<&'a Path>,
    /// Why a directory or a `.git` was not trusted, for the user.
    pub note: Option<String>,
}

/// Whether a file or directory owned by `uid` may give instructions: the user's own (taco's
/// effective user) or root's. A `.git` or an `AGENTS.md` planted by another user in a
/// shared directory (`/tmp`, a group-writable checkout) must not steer the agent.
pub fn trusted_owner(uid: u32) -> bool {
    uid == 0 || uid == rustix::process::geteuid().as_raw()
}

/// Walks up from `workdir` (canonical) to its repository root. The walk goes only through
/// directories the user or root owns, and a `.git` counts only when they own it too: one
/// owned by another user is not trusted (the workspace is then treated as in no repository),
/// and a directory of another user ends the walk below it; either is said in `note`.
pub fn search(workdir: &Path) -> Search<'_> {
    let alone = |note: Option<String>| Search {
        dirs: owned_by_trusted(workdir)
            .then_some(workdir)
            .into_iter()
            .collect(),
        root: None,
        note,
    };
    let mut dirs = Vec::new();
    for dir in workdir.ancestors() {
        let Ok(meta) = dir.symlink_metadata() else {
            return alone(None);
        };
        if !trusted_owner(meta.uid()) {
            let note = format!(
                "'{}' belongs to another user (uid {}): project instructions are not read from it{}",
                dir.display(),
                meta.uid(),
                if dir == workdir { "" } else { " or above it" }
            );
            return alone(Some(note));
        }
        dirs.push(dir);
        let git = dir.join(".git");
        let Ok(git_meta) = git.symlink_metadata() else {
            continue;
        };
        if !trusted_owner(git_meta.uid()) {
            let note = format!(
                "'{}' belongs to another user (uid {}): it is not trusted to mark a repository, so only the workspace's own instructions are read",
                git.display(),
                git_meta.uid()
            );
            return alone(Some(note));
        }
        return Search {
            dirs,
            root: Some(dir),
            note: None,
        };
    }
    alone(None)
}

/// Whether `path` is owned by the user or root.
fn owned_by_trusted(path: &Path) -> bool {
    path.symlink_metadata()
        .is_ok_and(|meta| trusted_owner(meta.uid()))
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
    let found = search(workdir);
    out.notes.extend(found.note);
    let dirs = found.dirs;
    let root = dirs.last().copied().unwrap_or(workdir);
    let in_repo = found.root.is_some();
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
            let read = owned(&dir.join(name))
                .and_then(|()| leads_inside(&dir.join(name), root, in_repo))
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

/// Refuses a name (the file, or a symlink in its place) that another user owns.
fn owned(path: &Path) -> Result<(), String> {
    let meta = path.symlink_metadata().map_err(|e| e.to_string())?;
    if trusted_owner(meta.uid()) {
        return Ok(());
    }
    Err(not_theirs(meta.uid()))
}

fn not_theirs(uid: u32) -> String {
    format!(
        "it belongs to another user (uid {uid}); instructions are read only from files of the user or root"
    )
}

/// Reads at most `cap` bytes of one file, refusing anything but regular UTF-8 text.
fn read_one(workspace: &Workspace, rel: &Path, cap: usize) -> Result<Raw, String> {
    let opened = workspace
        .open(&rel.to_string_lossy())
        .map_err(|e| e.to_string())?;
    let file = match opened.entry {
        // The file itself, after any symlink inside the repository, is checked too.
        Entry::File(file) => {
            let uid = file.metadata().map_err(|e| e.to_string())?.uid();
            if !trusted_owner(uid) {
                return Err(not_theirs(uid));
            }
            file
        }
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
