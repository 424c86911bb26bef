//! What every process taco starts for a tool (a shell command, an MCP stdio server, the HTML
//! converter) does between `fork` and `exec`, sandboxed or not: it drops the capabilities
//! that can read another process's memory, and marks every inherited file descriptor but
//! 0–2 close-on-exec. A sandboxed one first enters the metadata guard (a mount namespace or
//! a seccomp filter) and the Landlock domain.
//!
//! Everything that allocates is prepared in the parent; the child only makes syscalls, which
//! is what may run after `fork` in a multi-threaded program.

use landlock::{RulesetCreated, RulesetStatus};

use super::namespace::MountPlan;

/// Capabilities a tool process never keeps, from any set (bounding, effective, permitted,
/// inheritable, ambient): each one reads another process's memory or leaves the sandbox.
///
/// - `CAP_SYS_PTRACE`: ptrace, `/proc/PID/{mem,environ,fd}`, `process_vm_readv` of any
///   process, non-dumpable ones included: the one that would read taco's key as root.
/// - `CAP_SYS_ADMIN`: BPF and perf on older kernels, `setns`, and undoing the sandbox's
///   read-only mounts (`mount_setattr`, `umount`).
/// - `CAP_BPF`, `CAP_PERFMON`: BPF programs that read user memory, perf sampling of it.
/// - `CAP_SYS_MODULE`, `CAP_SYS_RAWIO`: a kernel module, `/dev/mem`, `/proc/kcore`: all memory.
/// - `CAP_DAC_READ_SEARCH`: `open_by_handle_at`, which opens a file through a writable mount
///   whatever its path, past the read-only binds (root keeps reading everything through
///   `CAP_DAC_OVERRIDE`).
/// - `CAP_CHECKPOINT_RESTORE`: `/proc/PID/map_files` of other processes.
pub const DROPPED: [u32; 8] = [
    CAP_DAC_READ_SEARCH,
    CAP_SYS_MODULE,
    CAP_SYS_RAWIO,
    CAP_SYS_PTRACE,
    CAP_SYS_ADMIN,
    CAP_PERFMON,
    CAP_BPF,
    CAP_CHECKPOINT_RESTORE,
];

/// The kernel's capability numbers (`linux/capability.h`; the libc crate has none).
const CAP_DAC_READ_SEARCH: u32 = 2;
const CAP_SYS_MODULE: u32 = 16;
const CAP_SYS_RAWIO: u32 = 17;
const CAP_SYS_PTRACE: u32 = 19;
const CAP_SYS_ADMIN: u32 = 21;
const CAP_PERFMON: u32 = 38;
const CAP_BPF: u32 = 39;
const CAP_CHECKPOINT_RESTORE: u32 = 40;
const CAP_SETPCAP: u32 = 8;
/// `_LINUX_CAPABILITY_VERSION_3`: two 32-bit words per set.
const CAP_VERSION_3: u32 = 0x2008_0522;
/// `close_range` flag: mark instead of close.
const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
/// Where the close-on-exec loop stops on a kernel without `close_range` (before 5.11).
const FD_LOOP_LIMIT: libc::c_int = 65_536;

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// What one child does before `exec`, in this order: enter the mount namespace, the seccomp
/// filter and the Landlock domain (when sandboxed), drop the capabilities, mark the fds.
#[derive(Default)]
pub(super) struct Plan {
    /// The read-only tree with writable binds (namespace mode).
    pub mounts: Option<MountPlan>,
    /// The filter refusing metadata calls (seccomp mode).
    pub filter: Option<seccompiler::BpfProgram>,
    /// The Landlock domain.
    pub ruleset: Option<RulesetCreated>,
}

impl Plan {
    /// Makes `command`'s child carry out the plan just before it executes.
    pub fn install(self, command: &mut tokio::process::Command) {
        let mut plan = self;
        let run = move || plan.run().map_err(std::io::Error::from_raw_os_error);
        // SAFETY: the closure runs in the forked child before exec. It only makes syscalls
        // (unshare, mount calls, open/write/close of /proc/self files, prctl, seccomp,
        // landlock_restrict_self, capget/capset, close_range, fcntl) on memory prepared
        // before the fork; it allocates nothing and takes no lock.
        unsafe {
            command.pre_exec(run);
        }
    }

    /// The steps, in the child; `Err` is the errno that stopped it (the child is then not
    /// started, and spawn reports it).
    fn run(&mut self) -> Result<(), i32> {
        if let Some(mounts) = &mut self.mounts {
            mounts.enter()?;
        }
        if let Some(filter) = &self.filter {
            seccompiler::apply_filter(filter).map_err(|_| errno())?;
        }
        if let Some(ruleset) = self.ruleset.take() {
            // No allocation on any path: the errors are plain errno values.
            match ruleset.restrict_self() {
                Ok(status)
                    if status.no_new_privs && status.ruleset != RulesetStatus::NotEnforced => {}
                Ok(_) => return Err(libc::EPERM),
                Err(_) => return Err(errno()),
            }
        }
        drop_capabilities()?;
        close_inherited_fds();
        Ok(())
    }
}

/// A plan for a process that runs unsandboxed: capabilities and fds only.
pub fn harden(command: &mut tokio::process::Command) {
    Plan::default().install(command);
}

fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EPERM)
}

/// Drops [`DROPPED`] from every capability set of the calling process.
fn drop_capabilities() -> Result<(), i32> {
    let mut header = CapHeader {
        version: CAP_VERSION_3,
        pid: 0,
    };
    let mut data = [CapData::default(); 2];
    // SAFETY: capget writes two CapData words for version 3, which `data` holds.
    if unsafe { libc::syscall(libc::SYS_capget, &mut header, data.as_mut_ptr()) } != 0 {
        return Err(errno());
    }
    let has = |cap: u32, set: u32| set & (1 << (cap % 32)) != 0;
    // Only a process with CAP_SETPCAP can shrink its bounding set; one without it (any
    // unprivileged user) gains none of these at exec unless a file grants them (which
    // PR_SET_NO_NEW_PRIVS, set in the sandbox, forbids).
    if has(CAP_SETPCAP, data[0].effective) {
        for cap in DROPPED {
            // SAFETY: PR_CAPBSET_DROP takes a capability number and touches no memory.
            let done =
                unsafe { libc::prctl(libc::PR_CAPBSET_DROP, libc::c_ulong::from(cap), 0, 0, 0) };
            // EINVAL: a capability this kernel does not know, so nothing can hold it.
            if done != 0 && errno() != libc::EINVAL {
                return Err(errno());
            }
        }
    }
    // SAFETY: clearing the ambient set takes no pointer. EINVAL: no ambient set (< 4.3).
    let done = unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        )
    };
    if done != 0 && errno() != libc::EINVAL {
        return Err(errno());
    }
    for cap in DROPPED {
        let word = &mut data[(cap / 32) as usize];
        let bit = !(1u32 << (cap % 32));
        word.effective &= bit;
        word.permitted &= bit;
        word.inheritable &= bit;
    }
    // SAFETY: capset reads the header and two CapData words; lowering sets is always allowed.
    if unsafe { libc::syscall(libc::SYS_capset, &mut header, data.as_ptr()) } != 0 {
        return Err(errno());
    }
    Ok(())
}

/// Marks every descriptor from 3 up close-on-exec: the command inherits only stdin, stdout
/// and stderr, never something taco's parent left open (a file, a socket) nor one of taco's.
/// std's own exec-error pipe is close-on-exec already, so marking it changes nothing.
fn close_inherited_fds() {
    // SAFETY: close_range with the CLOEXEC flag only changes descriptor flags.
    let done = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            3_u32,
            libc::c_uint::MAX,
            CLOSE_RANGE_CLOEXEC,
        )
    };
    if done == 0 {
        return;
    }
    // Before Linux 5.11: one fcntl per possible descriptor, up to a bound.
    for fd in 3..FD_LOOP_LIMIT {
        // SAFETY: F_SETFD on any number is harmless; EBADF for one that is not open.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dropped_set_holds_what_reads_memory() {
        for cap in [CAP_SYS_PTRACE, CAP_SYS_ADMIN, CAP_BPF, CAP_PERFMON] {
            assert!(DROPPED.contains(&cap), "{cap}");
        }
        assert!(
            DROPPED.iter().all(|&c| c < 64),
            "two 32-bit words hold them"
        );
    }
}
