//! Replacing a file: a temp file in the same directory, renamed over the target.
//!
//! Readers see the old content or the new, never a mix; the rename replaces the name, so
//! nothing is ever written through a symlink or into another name of a hard-linked file.

use std::io::Write;
use std::os::fd::{AsFd, BorrowedFd};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, RawMode};
use rustix::io::Errno;

use super::walk::Slot;
use crate::tools::ToolError;

/// Mode of a new file (before the umask), as editors create them.
const NEW_FILE_MODE: RawMode = 0o644;
/// Tries at a temp file name nobody else holds.
const TEMP_TRIES: usize = 16;

/// Writes `content` to the slot's name; true when it replaced an existing file.
pub(super) fn replace(slot: &Slot, shown: &str, content: &[u8]) -> Result<bool, ToolError> {
    let mode = match &slot.existing {
        None => None,
        Some(stat) => match FileType::from_raw_mode(stat.st_mode) {
            FileType::Directory => {
                return Err(ToolError::failed(format!("'{shown}' is a directory")));
            }
            // Replacing would split the file from its other names, and writing in place
            // would change files elsewhere, maybe outside the workspace.
            FileType::RegularFile if stat.st_nlink > 1 => {
                return Err(ToolError::failed(format!(
                    "'{shown}' has {} hard links; taco does not write through hard links \
                     (another name of the same file may be outside the workspace); \
                     write a new file instead",
                    stat.st_nlink
                )));
            }
            FileType::RegularFile => Some(stat.st_mode & 0o777),
            // Writing to a FIFO or a device could block forever.
            _ => {
                return Err(ToolError::failed(format!(
                    "'{shown}' is not a regular file"
                )));
            }
        },
    };
    let failed = |e: std::io::Error| ToolError::failed(format!("cannot write '{shown}': {e}"));
    let dir = slot.dir.as_fd();
    let mut temp = Temp::create(dir, mode.is_some()).map_err(failed)?;
    temp.file.write_all(content).map_err(failed)?;
    if let Some(mode) = mode {
        // The temp file was created private; the result keeps the original's permissions.
        rustix::fs::fchmod(&temp.file, Mode::from_raw_mode(mode)).map_err(|e| failed(e.into()))?;
    }
    rustix::fs::renameat(dir, temp.name.as_str(), dir, slot.name.as_os_str())
        .map_err(|e| failed(e.into()))?;
    temp.renamed = true;
    Ok(mode.is_some())
}

/// A temp file in the target's directory, removed again unless it was renamed into place.
struct Temp<'d> {
    dir: BorrowedFd<'d>,
    name: String,
    file: std::fs::File,
    renamed: bool,
}

impl<'d> Temp<'d> {
    /// Creates a fresh file (`O_EXCL`): private when it replaces a file (whose mode is then
    /// copied), else with the mode of a new file.
    fn create(dir: BorrowedFd<'d>, replaces: bool) -> std::io::Result<Self> {
        let mode = if replaces { 0o600 } else { NEW_FILE_MODE };
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let mut last = Errno::EXIST;
        for _ in 0..TEMP_TRIES {
            let name = format!(".taco-write-{:016x}.tmp", fastrand::u64(..));
            match rustix::fs::openat(dir, name.as_str(), flags, Mode::from_raw_mode(mode)) {
                Ok(fd) => {
                    return Ok(Temp {
                        dir,
                        name,
                        file: fd.into(),
                        renamed: false,
                    });
                }
                Err(Errno::EXIST) => last = Errno::EXIST,
                Err(e) => return Err(e.into()),
            }
        }
        Err(last.into())
    }
}

impl Drop for Temp<'_> {
    fn drop(&mut self) {
        if !self.renamed {
            // Best effort: the write already failed, and that error is what gets reported.
            let _ = rustix::fs::unlinkat(self.dir, self.name.as_str(), AtFlags::empty());
        }
    }
}
