//! The metadata guard in seccomp mode, where a mount namespace cannot be had: a filter that
//! refuses the calls that change metadata (chmod, chown, utime and xattr families) and
//! `io_uring_setup` (io_uring has its own xattr operations) with `EPERM`. It cannot tell
//! paths apart, so these calls fail inside the workspace too: `chmod +x`, `touch` of an
//! existing file, `cp -p` and `tar` keeping times stop working in the sandbox.
//!
//! Built with `seccompiler` (rust-vmm, Firecracker's): it lays out the jumps and checks the
//! architecture (a process of another ABI, a 32-bit binary on x86_64, is killed rather than
//! let past the filter). x32 calls share x86_64's architecture value with bit 30 set in the
//! number, so those numbers are listed too.

use std::collections::BTreeMap;

use seccompiler::{BpfProgram, SeccompAction, SeccompFilter, SeccompRule, TargetArch};

/// Calls added after the C library's tables: the same number on every architecture.
const SYS_FCHMODAT2: i64 = 452;
const SYS_SETXATTRAT: i64 = 463;
const SYS_REMOVEXATTRAT: i64 = 466;
const SYS_IO_URING_SETUP: i64 = 425;

/// The refused calls of this architecture.
fn refused() -> Vec<i64> {
    // `c_long` is `i64` on the 64-bit architectures seccompiler knows.
    let mut calls: Vec<i64> = vec![
        libc::SYS_fchmod,
        libc::SYS_fchmodat,
        libc::SYS_fchown,
        libc::SYS_fchownat,
        libc::SYS_utimensat,
        libc::SYS_setxattr,
        libc::SYS_lsetxattr,
        libc::SYS_fsetxattr,
        libc::SYS_removexattr,
        libc::SYS_lremovexattr,
        libc::SYS_fremovexattr,
    ];
    calls.extend([
        SYS_FCHMODAT2,
        SYS_SETXATTRAT,
        SYS_REMOVEXATTRAT,
        SYS_IO_URING_SETUP,
    ]);
    #[cfg(target_arch = "x86_64")]
    {
        // The old path-based calls that newer architectures only have as *at variants.
        calls.extend([
            libc::SYS_chmod,
            libc::SYS_chown,
            libc::SYS_lchown,
            libc::SYS_utime,
            libc::SYS_utimes,
            libc::SYS_futimesat,
        ]);
        const X32: i64 = 0x4000_0000;
        let x32: Vec<i64> = calls.iter().map(|n| n | X32).collect();
        calls.extend(x32);
    }
    calls
}

/// The filter for this architecture; `Err` on one seccompiler does not know.
pub(super) fn filter() -> Result<BpfProgram, String> {
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|e| e.to_string())?;
    let rules: BTreeMap<i64, Vec<SeccompRule>> =
        refused().into_iter().map(|n| (n, Vec::new())).collect();
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(|e| e.to_string())?;
    BpfProgram::try_from(filter).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_metadata_family_is_refused_and_the_filter_builds() {
        let calls = refused();
        for call in [
            libc::SYS_fchmodat,
            libc::SYS_fchownat,
            libc::SYS_utimensat,
            libc::SYS_setxattr,
            libc::SYS_removexattr,
        ] {
            assert!(calls.contains(&call), "{call}");
        }
        assert!(calls.contains(&SYS_IO_URING_SETUP));
        assert!(!filter().unwrap().is_empty());
    }
}
