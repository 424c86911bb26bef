//! Private files against a symlink planted where one goes: refused, the target untouched.

use std::io::Write as _;
use std::os::unix::fs::{PermissionsExt, symlink};

use super::*;

/// A file elsewhere with content and a mode a chmod would change.
fn target(dir: &Path) -> PathBuf {
    let path = dir.join("victim");
    std::fs::write(&path, "precious\n").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    path
}

fn unchanged(path: &Path) {
    assert_eq!(std::fs::read_to_string(path).unwrap(), "precious\n");
    let mode = std::fs::metadata(path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o644, "the target was not chmodded");
}

#[test]
fn a_symlinked_file_is_refused_and_its_target_untouched() {
    let temp = tempfile::tempdir().unwrap();
    let victim = target(temp.path());
    let dir = temp.path().join("state");
    std::fs::create_dir(&dir).unwrap();
    symlink(&victim, dir.join("taco.log")).unwrap();
    let error = append(&dir.join("taco.log")).unwrap_err();
    assert!(error.to_string().contains("is a symlink"), "{error}");
    let private = PrivateDir::open(&dir).unwrap();
    for opened in [
        private.append("taco.log"),
        private.read_append("taco.log"),
        private.read("taco.log"),
        private.create_new("taco.log", true),
    ] {
        assert!(opened.is_err());
    }
    unchanged(&victim);
    // A dangling one is not created through either.
    symlink(temp.path().join("made"), dir.join("new.log")).unwrap();
    assert!(append(&dir.join("new.log")).is_err());
    assert!(!temp.path().join("made").exists());
}

#[test]
fn a_symlinked_directory_is_refused() {
    let temp = tempfile::tempdir().unwrap();
    let elsewhere = temp.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let victim = target(&elsewhere);
    std::fs::rename(&victim, elsewhere.join("taco.log")).unwrap();
    symlink(&elsewhere, temp.path().join("taco")).unwrap();
    let error = append(&temp.path().join("taco").join("taco.log")).unwrap_err();
    assert!(error.to_string().contains("is a symlink"), "{error}");
    unchanged(&elsewhere.join("taco.log"));
}

#[test]
fn a_fifo_is_refused_without_blocking() {
    let temp = tempfile::tempdir().unwrap();
    let fifo = temp.path().join("pipe");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        FileType::Fifo,
        Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let error = append(&fifo).unwrap_err();
    assert!(error.to_string().contains("not a regular file"), "{error}");
}

#[test]
fn a_wider_file_is_narrowed_and_renames_stay_in_the_directory() {
    let temp = tempfile::tempdir().unwrap();
    let path = temp.path().join("history.jsonl");
    std::fs::write(&path, "a\n").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    append(&path).unwrap().write_all(b"b\n").unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "a\nb\n");
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    // A symlink at the destination of a rename is replaced, its target left alone.
    let victim = target(temp.path());
    let dir = PrivateDir::create(temp.path()).unwrap();
    symlink(&victim, temp.path().join("journal")).unwrap();
    dir.create_new("journal.tmp", false)
        .unwrap()
        .write_all(b"new")
        .unwrap();
    dir.rename("journal.tmp", "journal").unwrap();
    assert_eq!(
        std::fs::read_to_string(temp.path().join("journal")).unwrap(),
        "new"
    );
    unchanged(&victim);
    // A new directory is private.
    let made = temp.path().join("a/b");
    PrivateDir::create(&made).unwrap();
    let mode = std::fs::metadata(&made).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700);
}
