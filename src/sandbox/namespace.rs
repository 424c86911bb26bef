//! The metadata guard in namespace mode: a sandboxed process gets its own mount namespace in
//! which the whole tree is read-only and only the writable directories are writable. Landlock
//! decides who may write file *contents*; it does not cover chmod, chown, utime or xattr
//! changes, which the kernel refuses on a read-only mount (`EROFS`) whoever asks.
//!
//! In the child, before Landlock (which forbids mount changes once enforced):
//! 1. `unshare(CLONE_NEWNS)` as root, `CLONE_NEWUSER | CLONE_NEWNS` otherwise. The user
//!    namespace gets no uid or gid map: writing one (`/proc/self/uid_map`) needs the child
//!    to be dumpable, and until `exec` the child is a copy of taco's memory, keys included,
//!    which another process of the user could open in that moment. The kernel still checks
//!    the real ids, so the command's rights are the user's; only what it *sees* changes:
//!    every uid and gid shows as the overflow id (65534, `nobody`);
//! 2. `/` made private, recursively, so nothing done here propagates back;
//! 3. each writable directory cloned as it is (`open_tree`, recursive: its mounts keep their
//!    flags);
//! 4. the whole tree made read-only (`mount_setattr`, `AT_RECURSIVE`);
//! 5. each clone attached back on its directory (`move_mount`), outermost first;
//! 6. the working directory entered again by path, so it is the writable clone.
//!
//! After `exec` the command holds no capability that could undo this: root's are dropped
//! (`child::DROPPED` has `CAP_SYS_ADMIN`), a user's in the new namespace end at `exec`, and
//! Landlock refuses mount changes to a sandboxed process anyway.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

const OPEN_TREE_CLONE: libc::c_uint = 1;
const AT_RECURSIVE: libc::c_uint = 0x8000;
const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 0x4;
const MOUNT_ATTR_RDONLY: u64 = 0x1;

/// `struct mount_attr` (the first version, 32 bytes).
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// What the child does to build its namespace, prepared in the parent.
#[derive(Debug, Clone)]
pub(super) struct MountPlan {
    /// The writable directories that exist, outermost first.
    writable: Vec<CString>,
    /// One descriptor slot per writable directory, filled in the child.
    clones: Vec<libc::c_int>,
    /// Whether a user namespace is needed (taco is not privileged).
    user: bool,
}

impl MountPlan {
    /// The plan for these writable directories; `None` when one of them is `/` (nothing is
    /// read-only then).
    pub fn new(dirs: &[PathBuf]) -> Option<Self> {
        let mut dirs: Vec<PathBuf> = (dirs.iter())
            .filter_map(|d| d.canonicalize().ok())
            .filter(|d| d.is_dir())
            .collect();
        if dirs.iter().any(|d| d == Path::new("/")) {
            return None;
        }
        dirs.sort_by_key(|d| d.components().count());
        dirs.dedup();
        let writable: Vec<CString> = (dirs.iter())
            .filter_map(|d| CString::new(d.as_os_str().as_bytes()).ok())
            .collect();
        let clones = vec![-1; writable.len()];
        Some(Self {
            writable,
            clones,
            user: !privileged(),
        })
    }

    /// Whether a user namespace is part of it.
    pub fn with_user_namespace(&self) -> bool {
        self.user
    }

    /// In the child: builds the namespace. Only syscalls; `Err` is the errno.
    pub fn enter(&mut self) -> Result<(), i32> {
        let flags = if self.user {
            libc::CLONE_NEWUSER | libc::CLONE_NEWNS
        } else {
            libc::CLONE_NEWNS
        };
        // SAFETY: unshare takes flags only.
        check(unsafe { libc::unshare(flags) })?;
        // SAFETY: the strings are NUL-terminated literals; the other arguments are null.
        check(unsafe {
            libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            )
        })?;
        for (path, slot) in self.writable.iter().zip(self.clones.iter_mut()) {
            // SAFETY: `path` is a NUL-terminated path prepared in the parent.
            let fd = unsafe {
                libc::syscall(
                    libc::SYS_open_tree,
                    libc::AT_FDCWD,
                    path.as_ptr(),
                    OPEN_TREE_CLONE | AT_RECURSIVE | libc::O_CLOEXEC as libc::c_uint,
                )
            };
            *slot = libc::c_int::try_from(fd).map_err(|_| last_errno())?;
        }
        let readonly = MountAttr {
            attr_set: MOUNT_ATTR_RDONLY,
            attr_clr: 0,
            propagation: 0,
            userns_fd: 0,
        };
        // SAFETY: `readonly` is a valid mount_attr of the size given.
        check_long(unsafe {
            libc::syscall(
                libc::SYS_mount_setattr,
                libc::AT_FDCWD,
                c"/".as_ptr(),
                AT_RECURSIVE,
                &readonly as *const MountAttr,
                std::mem::size_of::<MountAttr>(),
            )
        })?;
        for (path, fd) in self.writable.iter().zip(self.clones.iter()) {
            // SAFETY: `fd` is the detached clone made above, `path` a prepared path.
            check_long(unsafe {
                libc::syscall(
                    libc::SYS_move_mount,
                    *fd,
                    c"".as_ptr(),
                    libc::AT_FDCWD,
                    path.as_ptr(),
                    MOVE_MOUNT_F_EMPTY_PATH,
                )
            })?;
            // SAFETY: closing the descriptor opened above.
            unsafe { libc::close(*fd) };
        }
        reenter_cwd()
    }
}

/// Whether taco may build a mount namespace without a user namespace (it holds
/// `CAP_SYS_ADMIN`).
fn privileged() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// The working directory was set before the namespace existed, on the mount now read-only:
/// entering it again by path lands on the writable clone when it is one.
fn reenter_cwd() -> Result<(), i32> {
    let mut buf = [0 as libc::c_char; libc::PATH_MAX as usize];
    // SAFETY: `buf` is PATH_MAX bytes, as getcwd is told.
    let cwd = unsafe { libc::getcwd(buf.as_mut_ptr(), buf.len()) };
    if cwd.is_null() {
        // A directory that is not reachable by path (deleted): nothing to re-enter.
        return Ok(());
    }
    // SAFETY: getcwd wrote a NUL-terminated path into `buf`.
    check(unsafe { libc::chdir(buf.as_ptr()) })
}

fn last_errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EPERM)
}

fn check(result: libc::c_int) -> Result<(), i32> {
    if result < 0 {
        Err(last_errno())
    } else {
        Ok(())
    }
}

fn check_long(result: libc::c_long) -> Result<(), i32> {
    if result < 0 {
        Err(last_errno())
    } else {
        Ok(())
    }
}

/// Whether this kernel (and whatever confines taco: a container, an LSM that restricts user
/// namespaces) lets a child build the namespace: a forked child tries the real plan and
/// exits with the errno. `Err` says why not.
pub(super) fn probe(plan: &MountPlan) -> Result<(), String> {
    let mut plan = plan.clone();
    // SAFETY: the child only makes syscalls (`enter`) and `_exit`s; it never returns into
    // Rust code that could take a lock another thread held at the fork.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!(
            "cannot fork to try it: {}",
            std::io::Error::last_os_error()
        ));
    }
    if pid == 0 {
        let code = match plan.enter() {
            Ok(()) => 0,
            Err(errno) => errno.clamp(1, 255),
        };
        // SAFETY: _exit ends the child without running anything of the parent's.
        unsafe { libc::_exit(code) };
    }
    let mut status = 0;
    loop {
        // SAFETY: waiting for the child forked above; `status` is a valid int.
        let waited = unsafe { libc::waitpid(pid, &mut status, 0) };
        if waited == pid {
            break;
        }
        if last_errno() != libc::EINTR {
            return Err("lost the child that tried it".to_string());
        }
    }
    match (libc::WIFEXITED(status), libc::WEXITSTATUS(status)) {
        (true, 0) => Ok(()),
        (true, errno) => Err(std::io::Error::from_raw_os_error(errno).to_string()),
        _ => Err("the child that tried it was killed".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writable_dirs_are_attached_outermost_first_and_slash_means_no_plan() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let inner = base.join("a/b");
        std::fs::create_dir_all(&inner).unwrap();
        let plan = MountPlan::new(&[inner.clone(), base.clone(), base.join("missing")]).unwrap();
        let paths: Vec<&std::ffi::CStr> = plan.writable.iter().map(|c| c.as_c_str()).collect();
        let expected = [
            CString::new(base.as_os_str().as_bytes()).unwrap(),
            CString::new(inner.as_os_str().as_bytes()).unwrap(),
        ];
        assert_eq!(paths, [expected[0].as_c_str(), expected[1].as_c_str()]);
        assert_eq!(plan.clones.len(), 2);
        assert!(MountPlan::new(&[PathBuf::from("/"), base]).is_none());
    }
}
