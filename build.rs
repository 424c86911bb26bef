//! Release link options (DESIGN §10): the hot functions first, the symbol table stripped.
//!
//! A process's resident code is not what it runs but every 64 KiB window of the binary that
//! holds a function it runs (the kernel maps a fault's neighbours too). Scattered through 23 MiB
//! of code, the 1.7 MiB `taco exec` runs touched 149 windows (8.7 MiB resident), so the
//! functions `exec` and the TUI ran in a profile go first (`layout/hot-functions.txt`, made by
//! `benches/layout_profile.sh`). A name the list has that the build lacks (another toolchain,
//! a dependency updated) is skipped: the layout degrades to the linker's own, nothing fails.
//!
//! Relative relocations are packed (`-z pack-relative-relocs`, DT_RELR) where the C library
//! the build runs on reads them (glibc 2.36): the loader read 1.3 MiB of them at every start,
//! a resident 1.3 MiB of `exec`'s 10; packed they are a few KiB.
//!
//! The symbol table is stripped here rather than by the profile's `strip = "symbols"`, which
//! would change every symbol's hash: the profile needs a build with symbols whose names are
//! the shipped build's (`TACO_KEEP_SYMBOLS=1` keeps them).

use std::env;
use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=layout/hot-functions.txt");
    println!("cargo:rerun-if-changed=Cargo.lock");
    println!("cargo:rerun-if-env-changed=TACO_KEEP_SYMBOLS");
    println!("cargo:rerun-if-env-changed=TACO_LINK_ORDER");
    if env::var("PROFILE").map_or(true, |p| p != "release") {
        return;
    }
    let version = rustc_version();
    let mut args = Vec::new();
    // Only rustc's own x86-64 Linux linker (LLD, the default since Rust 1.90) is known to take
    // these options; with an older rustc, another target or a linker of the user's choosing
    // (GNU ld refuses them) the linker's own layout stays.
    let lld_target = env::var("TARGET").is_ok_and(|t| t == "x86_64-unknown-linux-gnu")
        && rustc_minor(&version).is_some_and(|minor| minor >= 90)
        && !linker_chosen();
    let ordered = env::var("TACO_LINK_ORDER").map_or(true, |v| v != "0");
    if let Ok(root) = env::var("CARGO_MANIFEST_DIR") {
        let list = Path::new(&root).join("layout/hot-functions.txt");
        if lld_target && ordered && list.is_file() {
            args.push(format!("--symbol-ordering-file={}", list.display()));
            args.push("--no-warn-symbol-ordering".to_owned());
            warn_if_stale(Path::new(&root), &list, &version);
        }
    }
    if lld_target && native() && glibc_reads_relr() {
        args.push("-z".to_owned());
        args.push("pack-relative-relocs".to_owned());
    }
    let linux = env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    if linux && env::var("TACO_KEEP_SYMBOLS").map_or(true, |v| v != "1") {
        args.push("--strip-all".to_owned());
    }
    // -Xlinker passes the next argument whole: a path may hold a comma.
    for arg in args {
        println!("cargo:rustc-link-arg-bin=taco=-Xlinker");
        println!("cargo:rustc-link-arg-bin=taco={arg}");
    }
}

/// What `rustc -vV` says of the rustc building taco (empty if it cannot be asked).
fn rustc_version() -> Vec<u8> {
    let Ok(rustc) = env::var("RUSTC") else {
        return Vec::new();
    };
    let out = std::process::Command::new(rustc).arg("-vV").output();
    out.map(|out| out.stdout).unwrap_or_default()
}

/// The minor version (`1.N.x`) in `rustc -vV`'s answer.
fn rustc_minor(version: &[u8]) -> Option<u32> {
    let text = std::str::from_utf8(version).ok()?;
    let release = text.lines().find_map(|l| l.strip_prefix("release: "))?;
    release.split('.').nth(1)?.parse().ok()
}

/// Whether the user picked a linker (`target.<triple>.linker`, or linker flags in RUSTFLAGS).
fn linker_chosen() -> bool {
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
    println!("cargo:rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
    let flags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    env::var_os("RUSTC_LINKER").is_some() || flags.contains("linker") || flags.contains("fuse-ld")
}

/// Whether the build is for the machine it runs on (so its C library is the one that loads it).
fn native() -> bool {
    matches!((env::var("TARGET"), env::var("HOST")), (Ok(t), Ok(h)) if t == h)
}

/// Whether this machine's glibc loads packed relocations (2.36 and later): a binary that has
/// them requires it, and an older loader refuses to start it.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn glibc_reads_relr() -> bool {
    // SAFETY: gnu_get_libc_version returns a static NUL-terminated string.
    let version = unsafe { std::ffi::CStr::from_ptr(libc::gnu_get_libc_version()) };
    let mut parts = version.to_str().unwrap_or("").split('.');
    let major = parts.next().and_then(|p| p.parse::<u32>().ok());
    let minor = parts.next().and_then(|p| p.parse::<u32>().ok());
    matches!((major, minor), (Some(m), Some(n)) if (m, n) >= (2, 36))
}

/// Not glibc: no packed relocations.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn glibc_reads_relr() -> bool {
    false
}

/// Says so at the build when the list was made for another toolchain, `Cargo.toml` or
/// `Cargo.lock`: the names it holds carry hashes of those, so most would be skipped and the
/// hot code scattered again (`exec` ~6 MiB more resident) with nothing failing.
fn warn_if_stale(root: &Path, list: &Path, version: &[u8]) {
    let made_for = std::fs::read_to_string(list).ok().and_then(|text| {
        text.lines()
            .find_map(|line| line.strip_prefix("# made for: "))
            .map(|rest| rest.split_whitespace().next().unwrap_or("").to_owned())
    });
    let now = inputs_hash(root, version);
    if made_for.is_none() || made_for != now {
        println!(
            "cargo:warning=layout/hot-functions.txt was made for another toolchain, Cargo.toml \
             or Cargo.lock: the release binary's hot code is not packed; run \
             benches/layout_profile.sh"
        );
    }
}

/// FNV-1a (64 bits) of `rustc -vV`, `Cargo.toml` and `Cargo.lock`, as hex: what the list's
/// `# made for:` line records (`benches/layout_profile.sh` computes the same).
fn inputs_hash(root: &Path, version: &[u8]) -> Option<String> {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let manifest = std::fs::read(root.join("Cargo.toml")).ok()?;
    let lock = std::fs::read(root.join("Cargo.lock")).ok()?;
    for part in [version, &manifest, &lock] {
        for byte in part {
            hash ^= u64::from(*byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    Some(format!("{hash:016x}"))
}
