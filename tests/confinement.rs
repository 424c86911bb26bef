//! Confinement of the file tools against a concurrently changing workspace, and the
//! write path's guarantees (temp file + rename, hard links, NUL bytes).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use std::os::unix::fs::{MetadataExt, symlink};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use serde_json::{Value, json};
use taco::tools::{Tool, ToolContext, ToolError, ToolReply, ToolSettings, builtin};
use tokio_util::sync::CancellationToken;

const INSIDE_SECRET: &str = "inside secret\n";
const OUTSIDE_SECRET: &str = "OUTSIDE secret\n";

/// A workspace `<tmp>/ws` (with `inside/secret.txt`) next to `<tmp>/outside`.
struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
    ctx: ToolContext,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let (root, outside) = (base.join("ws"), base.join("outside"));
    std::fs::create_dir_all(root.join("inside")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(root.join("inside/secret.txt"), INSIDE_SECRET).unwrap();
    std::fs::write(outside.join("secret.txt"), OUTSIDE_SECRET).unwrap();
    let ctx = ToolContext {
        workdir: root.clone(),
        settings: Arc::new(ToolSettings::default()),
        cancel: CancellationToken::new(),
        call: String::new(),
        progress: None,
        seen: None,
        trace: None,
    };
    Fixture {
        _dir: dir,
        root,
        outside,
        ctx,
    }
}

async fn call(name: &str, args: Value, ctx: &ToolContext) -> Result<Value, ToolError> {
    let tool: Arc<dyn Tool> = builtin::all()
        .into_iter()
        .find(|t| t.name() == name)
        .unwrap();
    tool.validate(&args).map_err(ToolError::InvalidArguments)?;
    match tool.call(args, ctx).await? {
        ToolReply::Done(value) => Ok(value),
        other => panic!("built-in tools finish in one call, got {other:?}"),
    }
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Every entry under `dir`, symlinks not followed.
fn all_names(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            found.extend(all_names(&entry.path()));
        }
        found.push(entry.path());
    }
    found
}

fn message(result: Result<Value, ToolError>) -> String {
    match result {
        Err(ToolError::Failed(message)) => message,
        other => panic!("expected a failure, got {other:?}"),
    }
}

/// How the attacker changes `ws/flip` while the tools run.
#[derive(Clone, Copy, Debug)]
enum Flip {
    /// `flip` is a symlink, replaced (rename over it) by one to `inside` (relative) or to
    /// the outside directory (absolute), in turn.
    Symlinks,
    /// `flip` is a real directory inside and `flip.alt` a symlink to the outside directory;
    /// the two names are swapped atomically (`renameat2(RENAME_EXCHANGE)`), so a path
    /// checked while `flip` was a directory is used while it is a symlink.
    DirectoryAndSymlink,
}

/// Changes `ws/flip` as fast as it can until `stop`; returns how many times it did.
fn flipper(f: &Fixture, how: Flip, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<usize> {
    let (root, outside) = (f.root.clone(), f.outside.clone());
    let (link, alt) = (root.join("flip"), root.join("flip.alt"));
    match how {
        Flip::Symlinks => symlink("inside", &link).unwrap(),
        Flip::DirectoryAndSymlink => {
            std::fs::create_dir(&link).unwrap();
            std::fs::write(link.join("secret.txt"), INSIDE_SECRET).unwrap();
            symlink(&outside, &alt).unwrap();
        }
    }
    std::thread::spawn(move || {
        let targets = [PathBuf::from("inside"), outside];
        let mut flips = 0;
        while !stop.load(Ordering::Relaxed) {
            match how {
                Flip::Symlinks => {
                    let _ = std::fs::remove_file(&alt);
                    symlink(&targets[flips % 2], &alt).unwrap();
                    std::fs::rename(&alt, &link).unwrap();
                }
                Flip::DirectoryAndSymlink => exchange(&link, &alt),
            }
            flips += 1;
        }
        flips
    })
}

/// Atomically swaps two names.
fn exchange(a: &Path, b: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let a = std::ffi::CString::new(a.as_os_str().as_bytes()).unwrap();
    let b = std::ffi::CString::new(b.as_os_str().as_bytes()).unwrap();
    // SAFETY: two valid NUL-terminated paths.
    let rc = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    assert_eq!(rc, 0, "{}", std::io::Error::last_os_error());
}

/// A refusal in the race names the escape, not some other failure.
fn assert_outside(e: &ToolError) {
    assert!(e.to_string().contains("outside the workspace"), "{e}");
}

/// Races 2,000 writes to `flip/x.txt` and 2,000 reads of `flip/secret.txt` against a
/// flipper; asserts that nothing escaped and that the race really happened.
async fn race(how: Flip) {
    const WRITES: usize = 2000;
    const READS: usize = 2000;
    let f = fixture();
    let stop = Arc::new(AtomicBool::new(false));
    let flips = flipper(&f, how, stop.clone());
    let started = Instant::now();

    let (mut written, mut refused_writes, mut escaped_writes) = (0, 0, 0);
    for i in 0..WRITES {
        let args = json!({"path": "flip/x.txt", "content": format!("write {i}\n")});
        match call("write_file", args, &f.ctx).await {
            Ok(_) => written += 1,
            Err(e) => {
                assert_outside(&e);
                refused_writes += 1;
            }
        }
        // Checked after every call so that one escape cannot hide another.
        if f.outside.join("x.txt").exists() {
            escaped_writes += 1;
            std::fs::remove_file(f.outside.join("x.txt")).unwrap();
        }
    }

    let (mut read, mut refused_reads, mut escaped_reads) = (0, 0, 0);
    for _ in 0..READS {
        match call("read_file", json!({"path": "flip/secret.txt"}), &f.ctx).await {
            Ok(r) if r["content"] == OUTSIDE_SECRET => escaped_reads += 1,
            Ok(r) => {
                assert_eq!(r["content"], INSIDE_SECRET);
                read += 1;
            }
            Err(e) => {
                assert_outside(&e);
                refused_reads += 1;
            }
        }
    }

    stop.store(true, Ordering::Relaxed);
    let flips = flips.join().unwrap();
    eprintln!(
        "{how:?}: {flips} flips in {:?}; writes: {written} inside, {refused_writes} refused, \
         {escaped_writes} escaped; reads: {read} inside, {refused_reads} refused, \
         {escaped_reads} escaped",
        started.elapsed()
    );
    // The race must really have been run: the name changed while calls were made, and
    // both honest outcomes (inside, refused) were seen.
    assert!(flips > 100, "only {flips} flips");
    assert!(
        written > 0 && refused_writes > 0,
        "{written}/{refused_writes}"
    );
    assert!(read > 0 && refused_reads > 0, "{read}/{refused_reads}");
    assert_eq!((escaped_writes, escaped_reads), (0, 0), "{how:?}");
    // Every temp file was renamed into place or removed.
    let expected = ["flip", "flip.alt", "inside", "secret.txt", "x.txt"];
    let strays: Vec<PathBuf> = all_names(&f.root)
        .into_iter()
        .filter(|p| !expected.iter().any(|e| p.ends_with(e)))
        .collect();
    assert!(strays.is_empty(), "left behind: {strays:?}");
    assert_eq!(names(&f.outside), ["secret.txt"]);
    assert_eq!(
        std::fs::read_to_string(f.outside.join("secret.txt")).unwrap(),
        OUTSIDE_SECRET
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flipping_symlink_never_lets_a_write_or_read_escape() {
    race(Flip::Symlinks).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_directory_swapped_with_a_symlink_never_lets_a_write_or_read_escape() {
    race(Flip::DirectoryAndSymlink).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_directory_swapped_with_a_symlink_never_lets_a_listing_or_search_escape() {
    const CALLS: usize = 300;
    let f = fixture();
    std::fs::write(f.outside.join("only-outside.txt"), OUTSIDE_SECRET).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let flips = flipper(&f, Flip::DirectoryAndSymlink, stop.clone());
    let (mut listed, mut searched, mut escapes) = (0, 0, Vec::new());
    for _ in 0..CALLS {
        match call("list_dir", json!({"path": "flip"}), &f.ctx).await {
            Ok(r) if r.to_string().contains("only-outside") => escapes.push(r),
            Ok(_) => listed += 1,
            Err(e) => assert_outside(&e),
        }
        // Searching the whole workspace walks into `flip` whatever it is at that moment.
        let r = call("search_files", json!({"pattern": "secret"}), &f.ctx)
            .await
            .unwrap();
        if r.to_string().contains("OUTSIDE") {
            escapes.push(r);
        } else {
            searched += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    let flips = flips.join().unwrap();
    eprintln!("{flips} flips; {listed} listings and {searched} searches stayed inside");
    assert!(
        flips > 100 && listed > 0,
        "{flips} flips, {listed} listings"
    );
    assert!(
        escapes.is_empty(),
        "{} escapes: {:?}",
        escapes.len(),
        escapes.first()
    );
}

#[tokio::test]
async fn writes_replace_the_file_through_a_temp_file() {
    let f = fixture();
    let path = f.root.join("inside/a.txt");
    std::fs::write(&path, "old").unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let before = std::fs::metadata(&path).unwrap().ino();
    let r = call(
        "write_file",
        json!({"path": "inside/a.txt", "content": "new"}),
        &f.ctx,
    )
    .await
    .unwrap();
    assert_eq!(r["action"], "overwrote 1 line");
    let after = std::fs::metadata(&path).unwrap();
    assert_ne!(after.ino(), before, "the file was rewritten in place");
    assert_eq!(after.mode() & 0o777, 0o600, "the mode was not kept");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
    assert_eq!(names(&f.root.join("inside")), ["a.txt", "secret.txt"]);

    call(
        "write_file",
        json!({"path": "inside/fresh.txt", "content": "x"}),
        &f.ctx,
    )
    .await
    .unwrap();
    let mode = std::fs::metadata(f.root.join("inside/fresh.txt"))
        .unwrap()
        .mode();
    assert_eq!(mode & 0o022, 0, "a new file is not group or world writable");
    assert_eq!(mode & 0o600, 0o600);
}

#[tokio::test]
async fn a_failed_write_leaves_no_temp_file() {
    let f = fixture();
    let dir = f.root.join("ro");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("a.txt"), "keep").unwrap();
    // Renaming over a directory fails after the temp file was written.
    std::fs::create_dir(dir.join("d")).unwrap();
    std::fs::write(dir.join("d/inner"), "").unwrap();
    let err = message(
        call(
            "write_file",
            json!({"path": "ro/d", "content": "x"}),
            &f.ctx,
        )
        .await,
    );
    assert!(err.contains("directory"), "{err}");
    assert_eq!(names(&dir), ["a.txt", "d"]);
    // A read-only directory: the temp file cannot even be created.
    std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o500)).unwrap();
    let result = call(
        "write_file",
        json!({"path": "ro/a.txt", "content": "x"}),
        &f.ctx,
    )
    .await;
    std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    // Root ignores directory permissions; then the write simply succeeds.
    if result.is_err() {
        assert_eq!(std::fs::read_to_string(dir.join("a.txt")).unwrap(), "keep");
    }
    assert_eq!(names(&dir), ["a.txt", "d"]);
}

#[tokio::test]
async fn hard_linked_files_are_not_written() {
    let f = fixture();
    std::fs::write(f.root.join("a.txt"), "original").unwrap();
    std::fs::hard_link(f.root.join("a.txt"), f.root.join("b.txt")).unwrap();
    let err = message(
        call(
            "write_file",
            json!({"path": "b.txt", "content": "x"}),
            &f.ctx,
        )
        .await,
    );
    assert!(err.contains("'b.txt' has 2 hard links"), "{err}");
    assert_eq!(
        std::fs::read_to_string(f.root.join("a.txt")).unwrap(),
        "original"
    );
    assert_eq!(names(&f.root), ["a.txt", "b.txt", "inside"]);
}

#[tokio::test]
async fn a_nul_byte_in_a_path_has_its_own_error() {
    let f = fixture();
    let calls = [
        ("read_file", json!({"path": "inside/se\u{0}cret.txt"})),
        ("write_file", json!({"path": "a\u{0}.txt", "content": "x"})),
        ("list_dir", json!({"path": "inside\u{0}"})),
        ("search_files", json!({"pattern": "x", "path": "\u{0}"})),
    ];
    for (name, args) in calls {
        let err = message(call(name, args, &f.ctx).await);
        assert!(err.contains("path contains a NUL byte"), "{name}: {err}");
    }
}

#[tokio::test]
async fn symlinks_inside_the_workspace_still_work() {
    let f = fixture();
    symlink(f.root.join("inside"), f.root.join("abs")).unwrap();
    symlink("inside/../inside", f.root.join("rel")).unwrap();
    symlink("secret.txt", f.root.join("inside/link.txt")).unwrap();
    for path in ["abs/secret.txt", "rel/secret.txt", "inside/link.txt"] {
        let r = call("read_file", json!({"path": path}), &f.ctx)
            .await
            .unwrap();
        assert_eq!(r["content"], INSIDE_SECRET, "{path}");
    }
    let listed = call("list_dir", json!({"path": "abs"}), &f.ctx)
        .await
        .unwrap();
    assert_eq!(listed["path"], "inside");
    // Writing through a link inside the workspace writes its target; the link stays.
    call(
        "write_file",
        json!({"path": "inside/link.txt", "content": "via link\n"}),
        &f.ctx,
    )
    .await
    .unwrap();
    assert!(
        f.root
            .join("inside/link.txt")
            .symlink_metadata()
            .unwrap()
            .is_symlink()
    );
    assert_eq!(
        std::fs::read_to_string(f.root.join("inside/secret.txt")).unwrap(),
        "via link\n"
    );
}

#[tokio::test]
async fn list_and_search_cannot_walk_out_through_a_symlink() {
    let f = fixture();
    symlink(&f.outside, f.root.join("out")).unwrap();
    symlink("../../outside", f.root.join("inside/up")).unwrap();
    symlink(f.outside.join("secret.txt"), f.root.join("file_link.txt")).unwrap();
    for path in ["out", "inside/up", "out/.", "inside/up/../outside"] {
        let err = message(call("list_dir", json!({"path": path}), &f.ctx).await);
        assert!(err.contains("outside the workspace"), "{path}: {err}");
    }
    let r = call("search_files", json!({"pattern": "secret"}), &f.ctx)
        .await
        .unwrap();
    let paths: Vec<&str> = r["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["inside/secret.txt"], "{r}");
    for path in ["out", "inside/up", "file_link.txt"] {
        let err = message(
            call(
                "search_files",
                json!({"pattern": "secret", "path": path}),
                &f.ctx,
            )
            .await,
        );
        assert!(err.contains("outside the workspace"), "{path}: {err}");
    }
}
