//! What the running kernel's Landlock can enforce, asked once at startup.

use super::Support;

/// The environment variable that makes Landlock look absent, so tests reach the fallback on
/// any kernel. Only tests set it.
pub const TEST_SWITCH: &str = "TACO_TEST_NO_LANDLOCK";

/// The environment variable that makes mount namespaces look unavailable, so tests reach
/// the seccomp guard on any machine. Only tests set it.
pub const NAMESPACE_SWITCH: &str = "TACO_TEST_NO_NAMESPACE";

/// The first ABI that controls truncation: before it, a sandboxed command could empty any
/// file it may open, so the filesystem promise could not be kept.
const FS_ABI: u32 = 3;
/// The first ABI with TCP bind and connect rules.
const NET_ABI: u32 = 4;

/// Whether the kernel can enforce the sandbox; `network`: TCP stays allowed, so the TCP
/// rules are not needed.
pub fn kernel_support(network: bool, env: &dyn Fn(&str) -> Option<String>) -> Support {
    if env(TEST_SWITCH).is_some_and(|v| !v.is_empty() && v != "0") {
        return Support::Unavailable(format!(
            "Landlock is treated as absent ({TEST_SWITCH} is set)"
        ));
    }
    judge(kernel_abi(), network)
}

/// The kernel's answer, judged against what the sandbox needs.
fn judge(abi: Result<u32, i32>, network: bool) -> Support {
    match abi {
        Err(libc::EOPNOTSUPP) => Support::Unavailable(
            "Landlock is built into this kernel but turned off (add landlock to the lsm= boot parameter)"
                .to_string(),
        ),
        Err(_) => Support::Unavailable(
            "this kernel has no Landlock (Linux 5.13 or later built with it is needed)".to_string(),
        ),
        Ok(abi) if abi < FS_ABI => Support::Unavailable(format!(
            "this kernel's Landlock (ABI {abi}) cannot stop a command from truncating files; ABI {FS_ABI} (Linux 6.2) is needed"
        )),
        Ok(abi) if abi < NET_ABI && !network => Support::Unavailable(format!(
            "this kernel's Landlock (ABI {abi}) cannot refuse TCP connections; ABI {NET_ABI} (Linux 6.7) is needed, or allow the network with [sandbox] network = true"
        )),
        Ok(abi) => Support::Available { abi },
    }
}

/// The kernel's Landlock ABI version, or the errno that says why there is none.
fn kernel_abi() -> Result<u32, i32> {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with a null attribute pointer, size 0 and the VERSION flag, the syscall reads
    // no memory and returns the ABI version or -1 with errno (ENOSYS, EOPNOTSUPP).
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    if version < 0 {
        return Err(std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::ENOSYS));
    }
    u32::try_from(version).map_err(|_| libc::ENOSYS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_missing_feature_is_named() {
        let unavailable = |s: Support| match s {
            Support::Unavailable(reason) => reason,
            Support::Available { abi } => panic!("available with ABI {abi}"),
        };
        assert!(unavailable(judge(Err(libc::ENOSYS), true)).contains("no Landlock"));
        assert!(unavailable(judge(Err(libc::EOPNOTSUPP), true)).contains("lsm="));
        assert!(unavailable(judge(Ok(2), true)).contains("truncating"));
        let tcp = unavailable(judge(Ok(3), false));
        assert!(
            tcp.contains("TCP") && tcp.contains("network = true"),
            "{tcp}"
        );
        assert_eq!(judge(Ok(3), true), Support::Available { abi: 3 });
        assert_eq!(judge(Ok(7), false), Support::Available { abi: 7 });
    }

    #[test]
    fn the_test_switch_makes_landlock_absent() {
        let on = |name: &str| (name == TEST_SWITCH).then(|| "1".to_string());
        assert!(matches!(
            kernel_support(false, &on),
            Support::Unavailable(reason) if reason.contains(TEST_SWITCH)
        ));
        let zero = |name: &str| (name == TEST_SWITCH).then(|| "0".to_string());
        assert_eq!(
            kernel_support(false, &zero),
            judge(kernel_abi(), false),
            "0 leaves it alone"
        );
    }
}
