//! Taking variables out of the process environment for good, and keeping other processes
//! out of taco's memory.
//!
//! `unsetenv` only drops a variable from the `environ` array: its bytes stay in the block the
//! kernel copied onto the stack at `execve`, and `/proc/PID/environ` reads that block
//! (`env_start`..`env_end`), not the array. So the entry is overwritten there too. The
//! alternative, re-executing taco without the variables and handing them over through a pipe
//! or a memfd, costs a second `execve` of a 10+ MB binary (the dynamic loader, relocations,
//! page faults: see ARCHITECTURE §11 for the figures) to reach the same state; overwriting
//! costs a few microseconds.

use std::ffi::{CStr, OsStr};
use std::os::unix::ffi::OsStrExt;

unsafe extern "C" {
    /// The C library's environment array.
    static mut environ: *mut *mut libc::c_char;
}

/// Removes each of `names` from the environment and overwrites its entries (`NAME=value`,
/// every copy) with NUL bytes in the initial environment block.
///
/// # Safety
///
/// No other thread may exist: the environment is changed under any reader's feet.
pub(super) unsafe fn remove(names: &[&OsStr]) {
    let block = initial_block();
    let mut spans: Vec<(*mut u8, usize)> = Vec::new();
    // SAFETY: `environ` is the C library's NULL-terminated array of NUL-terminated strings;
    // with no other thread, nothing changes it while it is read.
    unsafe {
        let mut entry = std::ptr::addr_of!(environ).read();
        while !entry.is_null() && !(*entry).is_null() {
            let text = CStr::from_ptr(*entry).to_bytes();
            let name = text.split(|b| *b == b'=').next().unwrap_or_default();
            let start = *entry as usize;
            // Only what lies in the block the kernel shows is overwritten: a string put in
            // the environment by a preloaded library may live in read-only memory.
            let inside = block.is_some_and(|(from, to)| start >= from && start + text.len() < to);
            if inside && names.iter().any(|n| n.as_bytes() == name) {
                spans.push((*entry as *mut u8, text.len()));
            }
            entry = entry.add(1);
        }
    }
    for name in names {
        // SAFETY: the caller promises no other thread exists.
        unsafe { std::env::remove_var(name) };
    }
    // No longer in the array, so nothing reads these strings any more.
    for (start, len) in spans {
        for i in 0..len {
            // SAFETY: `start..start + len` is a string of the initial environment block
            // (checked against its bounds above), which is writable stack memory.
            unsafe { std::ptr::write_volatile(start.add(i), 0) };
        }
    }
}

/// The bounds of the environment block the kernel shows as `/proc/self/environ`
/// (`env_start` and `env_end`, fields 50 and 51 of `/proc/self/stat`); `None` without /proc,
/// where no other process can read it that way either.
fn initial_block() -> Option<(usize, usize)> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: count after it.
    let after = &stat[stat.rfind(')')? + 1..];
    let mut fields = after.split_whitespace().skip(50 - 3);
    let start = fields.next()?.parse().ok()?;
    let end = fields.next()?.parse().ok()?;
    (start < end).then_some((start, end))
}

/// Makes taco non-dumpable: its `/proc/PID/{mem,environ,fd,maps,…}` become root's, another
/// process of the same user can no longer read them or ptrace it, and no core file is
/// written. The flag is reset for each child at `execve`, so tools are unaffected.
pub(super) fn no_dumps() {
    // SAFETY: PR_SET_DUMPABLE takes an integer argument and touches no memory.
    let done = unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) };
    if done != 0 {
        tracing::warn!(
            "cannot make taco non-dumpable: {}",
            std::io::Error::last_os_error()
        );
    }
}

/// Whether taco is dumpable (for tests and `/status`).
pub fn dumpable() -> bool {
    // SAFETY: PR_GET_DUMPABLE takes no pointer.
    unsafe { libc::prctl(libc::PR_GET_DUMPABLE, 0, 0, 0, 0) != 0 }
}
