//! Replacing a file: a temp file in the same directory, renamed over the target.
//!
//! Readers see the old content or the new, never a mix; the rename replaces the name, so
//! nothing is ever written through a symlink or into another name of a hard-linked file.
//! The new file keeps the old one's mode (setuid, setgid and sticky bits included) and its
//! owner and group: the temp file is chowned, then chmodded (a chown clears setuid and setgid
//! bits), before the rename. Where taco may not give it that owner, nothing is written.
//!
//! A write that must replace a given state (`Expect`: the file a diff was shown for, or the
//! file an edit read) checks it through the directory handle it writes with, after the temp
//! file is written and just before the rename: the same file (device and inode, no symlink),
//! the same size and content (SHA-256), and, once more, that the name still holds it,
//! unchanged. A new file is renamed into place with `RENAME_NOREPLACE`, so one created
//! meanwhile is never replaced.

use std::io::{Read, Write};
use std::os::fd::{AsFd, BorrowedFd};

use rustix::fs::{AtFlags, FileType, Gid, Mode, OFlags, RawMode, RenameFlags, Stat, Uid};
use rustix::io::Errno;

use super::walk::Slot;
use crate::tools::ToolError;
use crate::tools::seen::{Changed, Digest, Seen, Since};

/// Mode of a new file (before the umask), as editors create them.
const NEW_FILE_MODE: RawMode = 0o644;
/// Tries at a temp file name nobody else holds.
const TEMP_TRIES: usize = 16;
/// The mode bits a replaced file keeps: permissions, setuid, setgid, sticky.
const KEPT_BITS: RawMode = 0o7777;

/// The state a write must replace, and since when it had to hold.
#[derive(Debug, Clone, Copy)]
pub(super) struct Expect<'a> {
    /// The state.
    pub seen: &'a Seen,
    /// For the message when it does not hold.
    pub since: Since,
    /// The path as the model gave it, for that message (a symlink swapped in would have
    /// the message name its target).
    pub given: &'a str,
}

impl Expect<'_> {
    fn changed(&self, changed: Changed) -> ToolError {
        ToolError::Failed(changed.message(self.given, self.since))
    }
}

/// Writes `content` to the slot's name; true when it replaced an existing file. With
/// `expect`, only over that state of the file.
pub(super) fn replace(
    slot: &Slot,
    shown: &str,
    content: &[u8],
    expect: Option<Expect<'_>>,
) -> Result<bool, ToolError> {
    let failed = |e: std::io::Error| ToolError::failed(format!("cannot write '{shown}': {e}"));
    let dir = slot.dir.as_fd();
    // What is there now, opened when its content must be checked.
    let mut original = None;
    let existing = match (expect, &slot.existing) {
        (Some(expect), Some(_)) if *expect.seen == Seen::Absent => {
            return Err(expect.changed(Changed::Created));
        }
        (Some(expect), None) if *expect.seen != Seen::Absent => {
            return Err(expect.changed(Changed::Deleted));
        }
        (
            Some(
                expect @ Expect {
                    seen: Seen::File { rel, .. },
                    ..
                },
            ),
            Some(stat),
        ) => {
            if *rel != slot.rel || FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
                return Err(expect.changed(Changed::Replaced));
            }
            let (file, now) = open_same(dir, slot, stat).map_err(|e| match e {
                Opened::Other => expect.changed(Changed::Replaced),
                Opened::Io(e) => failed(e),
            })?;
            original = Some(file);
            Some(now)
        }
        (_, existing) => *existing,
    };
    let attrs = match &existing {
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
            FileType::RegularFile => Some(*stat),
            // Writing to a FIFO or a device could block forever.
            _ => {
                return Err(ToolError::failed(format!(
                    "'{shown}' is not a regular file"
                )));
            }
        },
    };
    let mut temp = Temp::create(dir, attrs.is_some()).map_err(failed)?;
    temp.file.write_all(content).map_err(failed)?;
    if let Some(stat) = &attrs {
        keep_owner(&temp.file, stat, shown)?;
        // The temp file was created private; the result keeps the original's mode, set
        // after the owner since a chown clears the setuid and setgid bits.
        rustix::fs::fchmod(&temp.file, Mode::from_raw_mode(stat.st_mode & KEPT_BITS))
            .map_err(|e| failed(e.into()))?;
    }
    if let (Some(expect), Some(file), Some(stat)) = (expect, original, &attrs) {
        still_same(dir, slot, file, stat, expect.seen)
            .map_err(|changed| expect.changed(changed))?;
    }
    match expect {
        Some(expect) if *expect.seen == Seen::Absent => {
            rename_new(dir, &temp.name, slot).map_err(|e| match e {
                Errno::EXIST => expect.changed(Changed::Created),
                e => failed(e.into()),
            })?;
        }
        _ => rustix::fs::renameat(dir, temp.name.as_str(), dir, slot.name.as_os_str())
            .map_err(|e| failed(e.into()))?,
    }
    temp.renamed = true;
    Ok(attrs.is_some())
}

/// Why the file at the slot could not be opened as the one stat'ed.
enum Opened {
    /// Something else is there now (a symlink, another file, not a regular file).
    Other,
    /// Opening or reading failed.
    Io(std::io::Error),
}

/// Opens the regular file at the slot's name without following a symlink; it must be the
/// file `stat` describes (else it was swapped since). Returns it with its fresh stat.
fn open_same(
    dir: BorrowedFd<'_>,
    slot: &Slot,
    stat: &Stat,
) -> Result<(std::fs::File, Stat), Opened> {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let fd = match rustix::fs::openat(dir, slot.name.as_os_str(), flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::LOOP | Errno::NOENT) => return Err(Opened::Other),
        Err(e) => return Err(Opened::Io(e.into())),
    };
    let now = rustix::fs::fstat(&fd).map_err(|e| Opened::Io(e.into()))?;
    let same = (now.st_dev, now.st_ino) == (stat.st_dev, stat.st_ino)
        && FileType::from_raw_mode(now.st_mode) == FileType::RegularFile;
    if !same {
        return Err(Opened::Other);
    }
    Ok((fd.into(), now))
}

/// Whether the file opened at the start still holds what was seen and is still at its name,
/// unchanged since `stat`: the last check before the rename.
fn still_same(
    dir: BorrowedFd<'_>,
    slot: &Slot,
    mut file: std::fs::File,
    stat: &Stat,
    seen: &Seen,
) -> Result<(), Changed> {
    let Seen::File { len, digest, .. } = seen else {
        return Err(Changed::Created);
    };
    if u64::try_from(stat.st_size).ok() != Some(*len) {
        return Err(Changed::Modified);
    }
    let mut bytes = Vec::new();
    let read = (&mut file)
        .take(len.saturating_add(1))
        .read_to_end(&mut bytes);
    if read.is_err() || Digest::of(&bytes) != *digest {
        return Err(Changed::Modified);
    }
    // Written to while it was read, or its name given to another file since it was opened.
    let now = rustix::fs::statat(dir, slot.name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW)
        .map_err(|_| Changed::Deleted)?;
    if (now.st_dev, now.st_ino) != (stat.st_dev, stat.st_ino) {
        return Err(Changed::Replaced);
    }
    let times = |s: &Stat| (s.st_size, s.st_mtime, s.st_mtime_nsec);
    if times(&now) != times(stat) {
        return Err(Changed::Modified);
    }
    Ok(())
}

/// Renames a new file into place only if the name is still free (`RENAME_NOREPLACE`); where
/// the file system lacks it, checks just before a plain rename.
fn rename_new(dir: BorrowedFd<'_>, temp: &str, slot: &Slot) -> Result<(), Errno> {
    let name = slot.name.as_os_str();
    match rustix::fs::renameat_with(dir, temp, dir, name, RenameFlags::NOREPLACE) {
        Err(Errno::INVAL | Errno::NOSYS) => {
            match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
                Err(Errno::NOENT) => rustix::fs::renameat(dir, temp, dir, name),
                Ok(_) => Err(Errno::EXIST),
                Err(e) => Err(e),
            }
        }
        other => other,
    }
}

/// Gives the temp file the owner and group of the file it replaces. Only root (or a holder
/// of CAP_CHOWN) may give a file to another user, and others only to their own groups:
/// when that is refused, nothing is written, since replacing the file would hand it to taco's
/// user (its owner could lose access to it, or others gain it through the group).
fn keep_owner(temp: &std::fs::File, stat: &Stat, shown: &str) -> Result<(), ToolError> {
    let mine = rustix::fs::fstat(temp)
        .map_err(|e| ToolError::failed(format!("cannot write '{shown}': {e}")))?;
    let owner = (mine.st_uid != stat.st_uid).then(|| Uid::from_raw(stat.st_uid));
    let group = (mine.st_gid != stat.st_gid).then(|| Gid::from_raw(stat.st_gid));
    if owner.is_none() && group.is_none() {
        return Ok(());
    }
    match rustix::fs::fchown(temp, owner, group) {
        Ok(()) => Ok(()),
        Err(Errno::PERM) => Err(ToolError::failed(format!(
            "'{shown}' belongs to uid {} and gid {}, and taco (uid {}) may not give a file \
             that owner, so it would change hands if replaced; nothing was written. Ask the \
             user to change it, or to run taco as its owner",
            stat.st_uid, stat.st_gid, mine.st_uid
        ))),
        Err(e) => Err(ToolError::failed(format!(
            "cannot write '{shown}': cannot keep its owner: {}",
            std::io::Error::from(e)
        ))),
    }
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

#[cfg(test)]
mod tests;
