//! Path confinement to the workspace, without races.
//!
//! File tools take paths from the model. They reach files only through [`Workspace`], a
//! directory handle of the workspace root (`ToolContext::workdir`, canonical): a path is
//! walked from that handle one component at a time (`openat` with `O_NOFOLLOW`), and
//! whatever is found is used through the handle that was opened, never re-opened by path.
//! A symlink swapped in between a check and a use therefore cannot lead out.
//!
//! Rules: relative paths and absolute paths under the root are accepted; `..` may move
//! within the workspace but not above the root; symlinks are followed while their targets
//! (absolute ones included) stay inside, and refused when they lead out. The kernel's
//! `openat2(RESOLVE_BENEATH)` (and `cap-std`, which uses it) is not used because it refuses
//! every absolute symlink, including those that point back inside the workspace.
//!
//! Writes go to a temp file in the target's directory that is renamed over the target, with
//! the target's mode and owner; a file with several hard links is not written. A write may be
//! bound to the state of the file a change was computed from (`write_over`). A NUL byte in a
//! path has its own error.

mod walk;
mod write;

use std::fs::File;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

use self::walk::{Stop, Walk};
use super::ToolError;
use super::seen::{Seen, Since};

/// The workspace root, opened; every file tool reaches files through it.
#[derive(Debug)]
pub struct Workspace {
    root: PathBuf,
    fd: OwnedFd,
}

/// An existing entry of the workspace, opened.
#[derive(Debug)]
pub struct Opened {
    /// Where it really is, relative to the root (symlinks resolved); empty for the root.
    pub rel: PathBuf,
    /// What it is.
    pub entry: Entry,
}

/// What an opened entry is.
#[derive(Debug)]
pub enum Entry {
    /// A regular file, open for reading.
    File(File),
    /// A directory, open for reading its entries (see [`list`]).
    Dir(OwnedFd),
    /// A FIFO, socket or device: not opened, since that could block.
    Other,
}

/// What a write did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The file's path relative to the root, for results.
    pub shown: String,
    /// Whether an existing file was replaced (else it was created).
    pub replaced: bool,
}

/// One entry of a listed directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// The entry's name.
    pub name: String,
    /// Its type; symlinks are not followed.
    pub kind: ListedKind,
    /// Its size in bytes, for anything but directories and symlinks.
    pub size: Option<u64>,
}

/// The type of a listed entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListedKind {
    /// A directory.
    Dir,
    /// A symlink (never followed when listing).
    Symlink,
    /// Anything else: regular files, and FIFOs, sockets and devices.
    File,
}

impl Opened {
    /// The path for results: relative to the root, "." for the root itself.
    pub fn shown(&self) -> String {
        shown(&self.rel)
    }
}

impl Workspace {
    /// Opens the workspace root (canonical, as `ToolContext::workdir` is).
    pub fn new(root: &Path) -> Result<Self, ToolError> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(rustix::fs::CWD, root, flags, Mode::empty()).map_err(|e| {
            ToolError::failed(format!(
                "cannot open the workspace {}: {}",
                root.display(),
                std::io::Error::from(e)
            ))
        })?;
        Ok(Self {
            root: root.to_path_buf(),
            fd,
        })
    }

    /// The workspace root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Opens an existing entry named by the model: relative to the root, or absolute under
    /// it; symlinks are followed while they stay inside.
    pub fn open(&self, given: &str) -> Result<Opened, ToolError> {
        let rel = self.relative(given)?;
        let reached = Walk::new(&self.root, self.fd.as_fd(), &rel, true)
            .open()
            .map_err(|stop| self.refusal(given, stop))?;
        Ok(opened(reached))
    }

    /// Whether `given` names an existing entry of the workspace (an error reaching it counts
    /// as existing: only a plain "not there" is a new file).
    pub fn exists(&self, given: &str) -> bool {
        let Ok(rel) = self.relative(given) else {
            return true;
        };
        let walk = Walk::new(&self.root, self.fd.as_fd(), &rel, true).open();
        !matches!(walk, Err(Stop::Missing))
    }

    /// Opens an existing entry by its real path relative to the root, refusing any symlink
    /// on the way (for walkers, which already know where entries really are).
    pub fn open_exact(&self, rel: &Path) -> Result<Opened, ToolError> {
        let given = rel.to_string_lossy();
        if rel.is_absolute() {
            return Err(self.refusal(&given, Stop::Outside { via: None }));
        }
        let reached = Walk::new(&self.root, self.fd.as_fd(), rel, false)
            .open()
            .map_err(|stop| self.refusal(&given, stop))?;
        Ok(opened(reached))
    }

    /// Writes a whole file named by the model, creating missing parent directories: the
    /// content goes to a temp file beside it that is then renamed over it. A symlink inside
    /// the workspace is written through: its target is replaced and the link kept.
    pub fn write(&self, given: &str, content: &[u8]) -> Result<Written, ToolError> {
        self.write_with(given, content, None)
    }

    /// Like [`Workspace::write`], but only over the file in the state `seen` (the same file,
    /// with the same content; or no file, for a new one), checked through the handle the
    /// write uses just before the rename. Otherwise nothing is written and the error says
    /// what changed since `since`.
    pub fn write_over(
        &self,
        given: &str,
        content: &[u8],
        seen: &Seen,
        since: Since,
    ) -> Result<Written, ToolError> {
        self.write_with(given, content, Some(write::Expect { seen, since, given }))
    }

    fn write_with(
        &self,
        given: &str,
        content: &[u8],
        expect: Option<write::Expect<'_>>,
    ) -> Result<Written, ToolError> {
        let rel = self.relative(given)?;
        let slot = Walk::new(&self.root, self.fd.as_fd(), &rel, true)
            .slot()
            .map_err(|stop| self.refusal(given, stop))?;
        let shown = shown(&slot.rel);
        let replaced = write::replace(&slot, &shown, content, expect)?;
        Ok(Written { shown, replaced })
    }

    /// The path given by the model, relative to the root.
    fn relative(&self, given: &str) -> Result<PathBuf, ToolError> {
        if given.contains('\0') {
            return Err(ToolError::failed(format!(
                "path contains a NUL byte: {given:?}; file names cannot contain one"
            )));
        }
        let path = Path::new(given);
        if !path.is_absolute() {
            return Ok(path.to_path_buf());
        }
        match path.strip_prefix(&self.root) {
            Ok(rel) => Ok(rel.to_path_buf()),
            Err(_) => Err(self.refusal(given, Stop::Outside { via: None })),
        }
    }

    /// The error for a walk that stopped, naming the path as the model gave it.
    fn refusal(&self, given: &str, stop: Stop) -> ToolError {
        let root = self.root.display();
        ToolError::failed(match stop {
            Stop::Outside { via: None } => {
                format!("path '{given}' is outside the workspace {root}")
            }
            Stop::Outside { via: Some(link) } => format!(
                "path '{given}' is outside the workspace {root}: the symlink '{}' leads out of it",
                link.display()
            ),
            Stop::Missing => format!("path '{given}' does not exist in the workspace {root}"),
            Stop::UpAfterMissing => format!(
                "path '{given}' uses '..' after a directory that does not exist; \
                 give a path inside the workspace {root}"
            ),
            Stop::NotDir(at) => format!(
                "cannot resolve '{given}': '{}' is not a directory",
                shown(&at)
            ),
            Stop::Symlink(at) => format!(
                "cannot open '{given}': '{}' is a symlink, not followed here",
                shown(&at)
            ),
            Stop::IsDir(at) => format!("'{}' is a directory", shown(&at)),
            Stop::TooManyLinks => {
                format!("cannot resolve '{given}': too many levels of symbolic links")
            }
            Stop::Unstable => format!(
                "cannot resolve '{given}': it kept changing while it was looked up; try again"
            ),
            Stop::Io(at, e) => format!("cannot access '{}': {e}", shown(&at)),
        })
    }
}

/// The entries of an opened directory ("." and ".." left out), unsorted.
pub fn list(dir: &OwnedFd) -> std::io::Result<Vec<Listed>> {
    let mut entries = Vec::new();
    for item in rustix::fs::Dir::read_from(dir)? {
        // An entry that vanished or cannot be read is skipped, not fatal.
        let Ok(item) = item else { continue };
        let name = item.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        let name = String::from_utf8_lossy(name).into_owned();
        let stat = || rustix::fs::statat(dir, item.file_name(), AtFlags::SYMLINK_NOFOLLOW).ok();
        let kind = match item.file_type() {
            // Some file systems do not tell the type in the directory entry.
            FileType::Unknown => match stat() {
                Some(s) => FileType::from_raw_mode(s.st_mode),
                None => continue,
            },
            kind => kind,
        };
        let (kind, size) = match kind {
            FileType::Directory => (ListedKind::Dir, None),
            FileType::Symlink => (ListedKind::Symlink, None),
            _ => (
                ListedKind::File,
                stat().and_then(|s| u64::try_from(s.st_size).ok()),
            ),
        };
        entries.push(Listed { name, kind, size });
    }
    Ok(entries)
}

/// The start of a file as text: at most the cap's bytes of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextHead {
    /// The text read (a char the cap split in two is left out).
    pub text: String,
    /// The whole file's size in bytes.
    pub size: u64,
    /// Whether the file has more than was read.
    pub cut: bool,
}

/// Why the start of a file could not be read as text.
#[derive(Debug, thiserror::Error)]
pub enum NotText {
    /// Reading failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The bytes are not UTF-8 text.
    #[error("it is not UTF-8 text")]
    NotUtf8 {
        /// The whole file's size in bytes.
        size: u64,
    },
}

/// Reads at most `cap` bytes of an opened file as UTF-8 text.
pub fn read_text_head(file: File, cap: usize) -> Result<TextHead, NotText> {
    use std::io::Read;
    let size = file.metadata()?.len();
    let mut bytes = Vec::with_capacity(cap.min(usize::try_from(size).unwrap_or(cap)) + 1);
    file.take(cap as u64 + 1).read_to_end(&mut bytes)?;
    let cut = bytes.len() > cap;
    bytes.truncate(cap);
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        // The cap fell inside a character: keep what precedes it.
        Err(e) if cut && e.utf8_error().error_len().is_none() => {
            let valid = e.utf8_error().valid_up_to();
            let mut bytes = e.into_bytes();
            bytes.truncate(valid);
            String::from_utf8(bytes).map_err(|_| NotText::NotUtf8 { size })?
        }
        Err(_) => return Err(NotText::NotUtf8 { size }),
    };
    Ok(TextHead { text, size, cut })
}

/// Shows `path` relative to the workspace root for results ("." for the root itself).
pub fn display_relative(workdir: &Path, path: &Path) -> String {
    match path.strip_prefix(workdir) {
        Ok(rel) => shown(rel),
        Err(_) => path.to_string_lossy().into_owned(),
    }
}

fn shown(rel: &Path) -> String {
    if rel.as_os_str().is_empty() {
        ".".to_string()
    } else {
        rel.to_string_lossy().into_owned()
    }
}

fn opened(reached: walk::Reached) -> Opened {
    let entry = match (reached.kind, reached.fd) {
        (FileType::RegularFile, Some(fd)) => Entry::File(fd.into()),
        (FileType::Directory, Some(fd)) => Entry::Dir(fd),
        _ => Entry::Other,
    };
    Opened {
        rel: reached.rel,
        entry,
    }
}

#[cfg(test)]
mod tests;
