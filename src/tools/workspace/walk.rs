//! The resolver: walks a path one component at a time from the workspace's directory handle.
//!
//! Each step is an `openat` relative to a directory already held, with `O_NOFOLLOW`, so a
//! name swapped for a symlink between two steps is seen as a symlink, never followed by the
//! kernel. A symlink is read (`readlinkat`) and its target spliced into the rest of the
//! path, judged by the same rules: absolute targets must lie under the root, and `..` pops
//! the stack of held directories but never past the root.

use std::ffi::{OsStr, OsString};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStringExt;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, Stat};
use rustix::io::Errno;

/// How many symlinks one resolution may follow (Linux's own limit).
const MAX_LINKS: u32 = 40;
/// How often a step is retried when its entry changes type between two system calls.
const MAX_RETRIES: u32 = 100;

/// Directories passed through are opened for lookup only: no read permission is needed.
#[cfg(any(target_os = "linux", target_os = "android"))]
const PASS: OFlags = OFlags::PATH;
#[cfg(not(any(target_os = "linux", target_os = "android")))]
const PASS: OFlags = OFlags::RDONLY;

/// Why a walk stopped short; paths in it are relative to the workspace root.
#[derive(Debug)]
pub(super) enum Stop {
    /// The path leads out of the workspace, through the named symlink if one was followed.
    Outside { via: Option<PathBuf> },
    /// An entry on the path does not exist.
    Missing,
    /// `..` follows a directory that does not exist yet (writes only).
    UpAfterMissing,
    /// An entry before the last is not a directory.
    NotDir(PathBuf),
    /// A symlink where none may be followed.
    Symlink(PathBuf),
    /// The path names a directory where a file was expected (writes only).
    IsDir(PathBuf),
    /// More than [`MAX_LINKS`] symlinks.
    TooManyLinks,
    /// An entry kept changing type while it was looked at.
    Unstable,
    /// Any other failure of a system call on the named entry.
    Io(PathBuf, std::io::Error),
}

/// An existing entry reached for reading.
pub(super) struct Reached {
    /// Opened for reading when it is a regular file or a directory.
    pub fd: Option<OwnedFd>,
    /// What it is (from the opened handle when there is one).
    pub kind: FileType,
    /// Where it really is, relative to the root.
    pub rel: PathBuf,
}

/// Where a write goes: a name in a directory held open, and what the name holds now.
pub(super) struct Slot {
    /// The directory that holds (or will hold) the file.
    pub dir: OwnedFd,
    /// The file's name in it.
    pub name: OsString,
    /// What the name holds now (not followed), `None` when nothing.
    pub existing: Option<Stat>,
    /// The file's real path relative to the root.
    pub rel: PathBuf,
}

#[derive(Debug)]
enum Part {
    Up,
    Name(OsString),
}

/// One resolution in progress.
pub(super) struct Walk<'a> {
    root: &'a Path,
    root_fd: BorrowedFd<'a>,
    /// The directories below the root that the walk is in, with their names.
    held: Vec<(OwnedFd, OsString)>,
    /// The components still to walk, last first.
    pending: Vec<Part>,
    follow: bool,
    links: u32,
    retries: u32,
    /// The last symlink followed, and how many components were pending before its target's
    /// were added: a `..` among those is the link's doing, one below them the path's own.
    last_link: Option<(PathBuf, usize)>,
}

impl<'a> Walk<'a> {
    /// Starts at the root; `rel` must be relative. Symlinks are followed (while they stay
    /// inside) only when `follow` is set; otherwise any symlink on the path is refused.
    pub fn new(root: &'a Path, root_fd: BorrowedFd<'a>, rel: &Path, follow: bool) -> Self {
        let mut walk = Walk {
            root,
            root_fd,
            held: Vec::new(),
            pending: Vec::new(),
            follow,
            links: 0,
            retries: 0,
            last_link: None,
        };
        walk.push(rel);
        walk
    }

    /// Walks to an existing entry and opens it (without blocking on a FIFO or device).
    pub fn open(mut self) -> Result<Reached, Stop> {
        loop {
            match self.pending.pop() {
                None => return self.open_here(),
                Some(Part::Up) => self.up()?,
                Some(Part::Name(name)) if self.pending.is_empty() => {
                    if let Some(reached) = self.open_last(&name)? {
                        return Ok(reached);
                    }
                }
                Some(Part::Name(name)) => {
                    if !self.enter(&name)? {
                        return Err(Stop::Missing);
                    }
                }
            }
        }
    }

    /// Walks to the directory that will hold the file, creating missing directories; the
    /// last component is not opened, and a symlink there is followed like any other.
    pub fn slot(mut self) -> Result<Slot, Stop> {
        loop {
            match self.pending.pop() {
                None => return Err(Stop::IsDir(self.rel())),
                Some(Part::Up) => self.up()?,
                Some(Part::Name(name)) if self.pending.is_empty() => {
                    if let Some(slot) = self.slot_last(name)? {
                        return Ok(slot);
                    }
                }
                Some(Part::Name(name)) => self.enter_or_create(&name)?,
            }
        }
    }

    /// The directory the walk is in.
    fn cur(&self) -> BorrowedFd<'_> {
        self.held.last().map_or(self.root_fd, |(fd, _)| fd.as_fd())
    }

    /// Where the walk is, relative to the root.
    fn rel(&self) -> PathBuf {
        self.held.iter().map(|(_, name)| name.as_os_str()).collect()
    }

    fn rel_with(&self, name: &OsStr) -> PathBuf {
        self.rel().join(name)
    }

    fn push(&mut self, path: &Path) {
        for part in path.components().rev() {
            match part {
                Component::Normal(name) => self.pending.push(Part::Name(name.to_owned())),
                Component::ParentDir => self.pending.push(Part::Up),
                // The caller strips the root from absolute paths; `.` changes nothing.
                Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
            }
        }
    }

    fn up(&mut self) -> Result<(), Stop> {
        match self.held.pop() {
            Some(_) => Ok(()),
            None => Err(Stop::Outside {
                via: self
                    .last_link
                    .as_ref()
                    .filter(|(_, mark)| self.pending.len() >= *mark)
                    .map(|(link, _)| link.clone()),
            }),
        }
    }

    fn retry(&mut self) -> Result<(), Stop> {
        self.retries += 1;
        if self.retries > MAX_RETRIES {
            return Err(Stop::Unstable);
        }
        Ok(())
    }

    fn io(&self, name: &OsStr, errno: Errno) -> Stop {
        Stop::Io(self.rel_with(name), errno.into())
    }

    /// Steps into the directory `name`, or follows it when it is a symlink; false when it
    /// does not exist.
    fn enter(&mut self, name: &OsStr) -> Result<bool, Stop> {
        loop {
            let flags = PASS | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let errno = match rustix::fs::openat(self.cur(), name, flags, Mode::empty()) {
                Ok(fd) => {
                    self.held.push((fd, name.to_owned()));
                    return Ok(true);
                }
                Err(Errno::NOENT) => return Ok(false),
                Err(e) => e,
            };
            // ELOOP (EMLINK on FreeBSD) for a symlink; ENOTDIR for a symlink under O_PATH,
            // or for a file.
            if ![Errno::LOOP, Errno::MLINK, Errno::NOTDIR].contains(&errno) {
                return Err(self.io(name, errno));
            }
            if let Some(target) = self.read_link(name)? {
                self.follow_link(name, &target)?;
                return Ok(true);
            }
            match self.kind(name)? {
                None => return Ok(false),
                // It changed between the two calls; look again.
                Some(FileType::Directory | FileType::Symlink) => self.retry()?,
                Some(_) => return Err(Stop::NotDir(self.rel_with(name))),
            }
        }
    }

    /// Like [`Self::enter`], creating the directory when it is missing.
    fn enter_or_create(&mut self, name: &OsStr) -> Result<(), Stop> {
        while !self.enter(name)? {
            // Nothing is created for a path that would then climb out of what it created.
            if self.pending.iter().any(|p| matches!(p, Part::Up)) {
                return Err(Stop::UpAfterMissing);
            }
            match rustix::fs::mkdirat(self.cur(), name, Mode::from_raw_mode(0o777)) {
                Ok(()) | Err(Errno::EXIST) => {}
                Err(e) => return Err(self.io(name, e)),
            }
            self.retry()?;
        }
        Ok(())
    }

    /// The target of the symlink `name`, or `None` when it is not (or no longer) one.
    fn read_link(&self, name: &OsStr) -> Result<Option<PathBuf>, Stop> {
        match rustix::fs::readlinkat(self.cur(), name, Vec::new()) {
            Ok(target) => Ok(Some(PathBuf::from(OsString::from_vec(target.into_bytes())))),
            Err(Errno::INVAL | Errno::NOENT) => Ok(None),
            Err(e) => Err(self.io(name, e)),
        }
    }

    /// The type of `name` itself (a symlink is not followed), `None` when it is missing.
    fn kind(&self, name: &OsStr) -> Result<Option<FileType>, Stop> {
        self.stat(name)
            .map(|stat| stat.map(|s| FileType::from_raw_mode(s.st_mode)))
    }

    fn stat(&self, name: &OsStr) -> Result<Option<Stat>, Stop> {
        match rustix::fs::statat(self.cur(), name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => Ok(Some(stat)),
            Err(Errno::NOENT) => Ok(None),
            Err(e) => Err(self.io(name, e)),
        }
    }

    /// Continues the walk at the target of the symlink `name` (in the current directory).
    fn follow_link(&mut self, name: &OsStr, target: &Path) -> Result<(), Stop> {
        let link = self.rel_with(name);
        if !self.follow {
            return Err(Stop::Symlink(link));
        }
        self.links += 1;
        if self.links > MAX_LINKS {
            return Err(Stop::TooManyLinks);
        }
        let rest = if target.is_absolute() {
            // An absolute target counts when it points under the root; it is then walked
            // from the root handle like any relative path.
            let Ok(rest) = target.strip_prefix(self.root) else {
                return Err(Stop::Outside { via: Some(link) });
            };
            self.held.clear();
            rest
        } else {
            target
        };
        let mark = self.pending.len();
        self.push(rest);
        self.last_link = Some((link, mark));
        Ok(())
    }

    /// The path ended on the directory the walk is in ("", ".", "a/..").
    fn open_here(&self) -> Result<Reached, Stop> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(self.cur(), ".", flags, Mode::empty())
            .map_err(|e| Stop::Io(self.rel(), e.into()))?;
        Ok(Reached {
            fd: Some(fd),
            kind: FileType::Directory,
            rel: self.rel(),
        })
    }

    /// Opens the last component, or follows it (`None`) when it is a symlink.
    fn open_last(&mut self, name: &OsStr) -> Result<Option<Reached>, Stop> {
        loop {
            let Some(kind) = self.kind(name)? else {
                return Err(Stop::Missing);
            };
            match kind {
                FileType::Symlink => match self.read_link(name)? {
                    Some(target) => {
                        self.follow_link(name, &target)?;
                        return Ok(None);
                    }
                    None => self.retry()?,
                },
                FileType::RegularFile | FileType::Directory => {
                    // Non-blocking, in case it was swapped for a FIFO meanwhile (the caller
                    // checks the type of what was opened).
                    let flags = OFlags::RDONLY
                        | OFlags::NOFOLLOW
                        | OFlags::NONBLOCK
                        | OFlags::NOCTTY
                        | OFlags::CLOEXEC;
                    match rustix::fs::openat(self.cur(), name, flags, Mode::empty()) {
                        Ok(fd) => {
                            let stat = rustix::fs::fstat(&fd).map_err(|e| self.io(name, e))?;
                            return Ok(Some(Reached {
                                fd: Some(fd),
                                kind: FileType::from_raw_mode(stat.st_mode),
                                rel: self.rel_with(name),
                            }));
                        }
                        // It became a symlink or vanished meanwhile; look again.
                        Err(Errno::LOOP | Errno::MLINK | Errno::NOENT) => self.retry()?,
                        Err(e) => return Err(self.io(name, e)),
                    }
                }
                // FIFOs, sockets and devices are not opened: that could block or act.
                _ => {
                    return Ok(Some(Reached {
                        fd: None,
                        kind,
                        rel: self.rel_with(name),
                    }));
                }
            }
        }
    }

    /// The write slot for the last component, or `None` after following a symlink there.
    fn slot_last(&mut self, name: OsString) -> Result<Option<Slot>, Stop> {
        loop {
            let existing = self.stat(&name)?;
            if existing.is_some_and(|s| FileType::from_raw_mode(s.st_mode) == FileType::Symlink) {
                match self.read_link(&name)? {
                    Some(target) => {
                        self.follow_link(&name, &target)?;
                        return Ok(None);
                    }
                    None => {
                        self.retry()?;
                        continue;
                    }
                }
            }
            let rel = self.rel_with(&name);
            let dir = match self.held.pop() {
                Some((fd, _)) => fd,
                None => self
                    .root_fd
                    .try_clone_to_owned()
                    .map_err(|e| Stop::Io(PathBuf::new(), e))?,
            };
            return Ok(Some(Slot {
                dir,
                name,
                existing,
                rel,
            }));
        }
    }
}
