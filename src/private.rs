//! taco's private files (session files and their index journal, the prompt history and its
//! lock, the diagnostic log, the audit log, their temp files): never opened through a
//! symlink, made private on the opened file (never `chmod` by name), and renamed within the
//! directory that was opened. A symlink planted where one of them goes (`taco.log` →
//! `~/.bashrc`) is refused with a clear error instead of being appended to or narrowed to
//! 0600; so is a symlink in place of the directory that holds them (its last component: the
//! directories above it are the user's to arrange).

use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

/// The mode of every private file.
const FILE_MODE: u32 = 0o600;
/// The mode of a directory taco creates for them.
const DIR_MODE: u32 = 0o700;

/// A directory of private files, opened once; files are opened relative to it.
#[derive(Debug)]
pub struct PrivateDir {
    fd: OwnedFd,
    path: PathBuf,
}

impl PrivateDir {
    /// Creates `path` and its missing parents (0700) and opens it; a symlink in its place
    /// is refused.
    pub fn create(path: &Path) -> io::Result<Self> {
        let mut builder = std::fs::DirBuilder::new();
        std::os::unix::fs::DirBuilderExt::mode(builder.recursive(true), DIR_MODE);
        builder.create(path)?;
        Self::open(path)
    }

    /// Opens the existing directory `path`; a symlink in its place is refused.
    pub fn open(path: &Path) -> io::Result<Self> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rustix::fs::open(path, flags, Mode::empty())
            .map_err(|e| refused(path, e.into(), "directory"))?;
        Ok(Self {
            fd,
            path: path.to_path_buf(),
        })
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Opens `name` for appending, created 0600 and narrowed to 0600 if it was wider.
    pub fn append(&self, name: &str) -> io::Result<File> {
        let flags = OFlags::WRONLY | OFlags::APPEND | OFlags::CREATE;
        self.open_file(name, flags)
    }

    /// Opens `name` for reading and appending (a session resumed), narrowed to 0600.
    pub fn read_append(&self, name: &str) -> io::Result<File> {
        let flags = OFlags::RDWR | OFlags::APPEND;
        self.open_file(name, flags)
    }

    /// Creates `name`, which must not exist (a new session, a temp file), 0600, for writing
    /// (appending when `append`).
    pub fn create_new(&self, name: &str, append: bool) -> io::Result<File> {
        let mut flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL;
        if append {
            flags |= OFlags::APPEND;
        }
        self.open_file(name, flags)
    }

    /// Opens `name` for reading; a symlink, FIFO or device there is refused.
    pub fn read(&self, name: &str) -> io::Result<File> {
        self.open_file(name, OFlags::RDONLY)
    }

    /// Renames `from` to `to`, both in this directory (a symlink at `to` is replaced, never
    /// followed).
    pub fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        rustix::fs::renameat(&self.fd, from, &self.fd, to).map_err(io::Error::from)
    }

    /// Removes `name` from this directory (a symlink itself, never its target).
    pub fn remove(&self, name: &str) -> io::Result<()> {
        rustix::fs::unlinkat(&self.fd, name, AtFlags::empty()).map_err(io::Error::from)
    }

    /// The device and inode at `name` (a symlink's own), to tell whether an open file is
    /// still the one the name points to.
    pub fn identity(&self, name: &str) -> io::Result<(u64, u64)> {
        let stat = rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW)?;
        Ok((stat.st_dev, stat.st_ino))
    }

    fn open_file(&self, name: &str, flags: OFlags) -> io::Result<File> {
        // NONBLOCK: a FIFO put there must not hang the open; it is refused below.
        let flags = flags | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
        let path = self.path.join(name);
        let fd = rustix::fs::openat(&self.fd, name, flags, Mode::from_raw_mode(FILE_MODE))
            .map_err(|e| refused(&path, e.into(), "file"))?;
        let stat = rustix::fs::fstat(&fd).map_err(io::Error::from)?;
        if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} is not a regular file; taco leaves it alone",
                    path.display()
                ),
            ));
        }
        // Back to blocking, as every caller expects of a file.
        if let Ok(now) = rustix::fs::fcntl_getfl(&fd) {
            let _ = rustix::fs::fcntl_setfl(&fd, now.difference(OFlags::NONBLOCK));
        }
        let file = File::from(fd);
        // `mode` applies only on creation: a file left by an older version may be wider. On
        // the file opened, never by name. Not fatal: it may belong to someone else.
        if stat.st_mode & 0o777 != FILE_MODE {
            let _ = file.set_permissions(std::fs::Permissions::from_mode(FILE_MODE));
        }
        Ok(file)
    }
}

/// The error for an open that failed, clear when it was a symlink (`ELOOP` from
/// `O_NOFOLLOW`, `ENOTDIR` for a symlink to a file in place of a directory).
fn refused(path: &Path, error: io::Error, what: &str) -> io::Error {
    let kind = path.symlink_metadata().map(|m| m.file_type());
    if what == "file"
        && kind
            .as_ref()
            .is_ok_and(|k| !k.is_file() && !k.is_dir() && !k.is_symlink())
    {
        // A FIFO without a reader, a socket or a device (ENXIO, EOPNOTSUPP …).
        return io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} is not a regular file; taco leaves it alone",
                path.display()
            ),
        );
    }
    if kind.is_ok_and(|k| k.is_symlink()) {
        return io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} is a symlink; taco does not follow symlinks to its private {what}s (remove it and taco makes a new one)",
                path.display()
            ),
        );
    }
    io::Error::new(error.kind(), format!("{}: {error}", path.display()))
}

/// Opens `path` for appending as a private file: its directory created (0700) and opened
/// without following a symlink, the file created 0600 or narrowed to it.
pub fn append(path: &Path) -> io::Result<File> {
    let (dir, name) = split(path)?;
    PrivateDir::create(dir)?.append(name)
}

/// The directory and file name of `path`.
pub fn split(path: &Path) -> io::Result<(&Path, &str)> {
    let name = path.file_name().and_then(|n| n.to_str());
    match (path.parent(), name) {
        (Some(dir), Some(name)) if dir.as_os_str().is_empty() => Ok((Path::new("."), name)),
        (Some(dir), Some(name)) => Ok((dir, name)),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a file path", path.display()),
        )),
    }
}

#[cfg(test)]
mod tests;
