//! The file written is the file the user saw (issue 26.4), and a replaced file keeps its mode
//! and owner (26.8): on real files in a temp dir.

use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::path::{Path, PathBuf};

use super::*;
use crate::tools::workspace::Workspace;
use crate::tools::workspace::walk::Walk;

fn setup() -> (tempfile::TempDir, PathBuf, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("a.txt"), "one\n").unwrap();
    let ws = Workspace::new(&root).unwrap();
    (dir, root, ws)
}

fn seen(root: &Path, name: &str) -> Seen {
    Seen::file(name.into(), &std::fs::read(root.join(name)).unwrap())
}

/// The names in `dir` (no temp file may be left behind).
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn over(ws: &Workspace, path: &str, seen: &Seen) -> Result<bool, String> {
    ws.write_over(path, b"new\n", seen, Since::Diff)
        .map(|w| w.replaced)
        .map_err(|e| e.to_string())
}

#[test]
fn an_unchanged_file_is_written() {
    let (_d, root, ws) = setup();
    let before = seen(&root, "a.txt");
    assert_eq!(over(&ws, "a.txt", &before), Ok(true));
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "new\n"
    );
    // The same content under a new inode (an editor's save by rename) is what was seen.
    std::fs::write(root.join("b.tmp"), "new\n").unwrap();
    std::fs::rename(root.join("b.tmp"), root.join("a.txt")).unwrap();
    let again = Seen::file("a.txt".into(), b"new\n");
    assert_eq!(
        ws.write_over("a.txt", b"third\n", &again, Since::Diff)
            .map(|w| w.replaced),
        Ok(true)
    );
    assert_eq!(names(&root), ["a.txt"]);
}

#[test]
fn a_file_changed_since_its_diff_is_not_written() {
    let (_d, root, ws) = setup();
    let before = seen(&root, "a.txt");
    std::fs::write(root.join("a.txt"), "the user's edit\n").unwrap();
    let error = over(&ws, "a.txt", &before).unwrap_err();
    assert_eq!(
        error,
        "'a.txt' changed after its diff was shown; nothing was written; read it again and \
         make the change on what it holds now"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "the user's edit\n"
    );
    // Same size, other bytes: the hash tells.
    std::fs::write(root.join("a.txt"), "two\n").unwrap();
    let same_size = Seen::file("a.txt".into(), b"one\n");
    assert!(
        over(&ws, "a.txt", &same_size)
            .unwrap_err()
            .contains("changed")
    );
    assert_eq!(names(&root), ["a.txt"], "no temp file is left");
}

#[test]
fn a_file_created_where_none_was_is_not_replaced() {
    let (_d, root, ws) = setup();
    let error = over(&ws, "n.txt", &Seen::Absent);
    assert_eq!(error, Ok(false), "still absent: created");
    std::fs::remove_file(root.join("n.txt")).unwrap();
    std::fs::write(root.join("n.txt"), "made meanwhile\n").unwrap();
    let error = over(&ws, "n.txt", &Seen::Absent).unwrap_err();
    assert!(
        error.starts_with("'n.txt' was created after its diff was shown (the diff was for a new file); nothing was written"),
        "{error}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("n.txt")).unwrap(),
        "made meanwhile\n"
    );
    // A directory or a symlink made there counts as well.
    std::fs::create_dir(root.join("d")).unwrap();
    assert!(
        over(&ws, "d", &Seen::Absent)
            .unwrap_err()
            .contains("was created")
    );
    symlink("a.txt", root.join("l")).unwrap();
    assert!(
        over(&ws, "l", &Seen::Absent)
            .unwrap_err()
            .contains("was created")
    );
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "one\n"
    );
    assert_eq!(names(&root), ["a.txt", "d", "l", "n.txt"]);
}

#[test]
fn a_deleted_file_is_not_made_again() {
    let (_d, root, ws) = setup();
    let before = seen(&root, "a.txt");
    std::fs::remove_file(root.join("a.txt")).unwrap();
    let error = over(&ws, "a.txt", &before).unwrap_err();
    assert!(
        error.starts_with("'a.txt' was deleted after its diff was shown; nothing was written"),
        "{error}"
    );
    assert!(names(&root).is_empty());
}

#[test]
fn a_file_replaced_by_a_symlink_is_not_written_through_it() {
    let (_d, root, ws) = setup();
    let before = seen(&root, "a.txt");
    // The same content, reached through a symlink: another file.
    std::fs::write(root.join("b.txt"), "one\n").unwrap();
    std::fs::remove_file(root.join("a.txt")).unwrap();
    symlink("b.txt", root.join("a.txt")).unwrap();
    let error = over(&ws, "a.txt", &before).unwrap_err();
    assert!(error.starts_with("'a.txt' was replaced"), "{error}");
    assert_eq!(
        std::fs::read_to_string(root.join("b.txt")).unwrap(),
        "one\n"
    );
    assert!(root.join("a.txt").is_symlink());
    // And the other way: a symlink the diff was shown through, now a plain file.
    let through = seen(&root, "b.txt");
    let via_link = Seen::file("b.txt".into(), b"one\n");
    assert_eq!(through, via_link);
    std::fs::remove_file(root.join("a.txt")).unwrap();
    std::fs::write(root.join("a.txt"), "one\n").unwrap();
    assert!(
        over(&ws, "a.txt", &via_link)
            .unwrap_err()
            .contains("replaced")
    );
    // Something that is not a regular file.
    std::fs::remove_file(root.join("a.txt")).unwrap();
    std::fs::create_dir(root.join("a.txt")).unwrap();
    assert!(
        over(&ws, "a.txt", &before)
            .unwrap_err()
            .contains("replaced")
    );
}

/// A change that lands during the write itself, after the file was opened and read and
/// before the rename: the last look at the name sees it (what a rename-based save or an
/// in-place write leaves), and nothing is renamed over it.
#[test]
fn a_change_during_the_write_is_seen_before_the_rename() {
    let (_d, root, ws) = setup();
    let before = seen(&root, "a.txt");
    let slot = Walk::new(&root, ws.fd.as_fd(), Path::new("a.txt"), true)
        .slot()
        .map_err(|_| "slot")
        .unwrap();
    let stat = slot.existing.unwrap();
    // In place: the content read is the new one, and the size changed.
    let (file, now) = open_same(slot.dir.as_fd(), &slot, &stat).ok().unwrap();
    std::fs::write(root.join("a.txt"), "written meanwhile\n").unwrap();
    let result = still_same(slot.dir.as_fd(), &slot, file, &now, &before);
    assert_eq!(result, Err(Changed::Modified));
    // By rename, after the content was read: another inode at the name.
    std::fs::write(root.join("a.txt"), "one\n").unwrap();
    let stat = rustix::fs::statat(slot.dir.as_fd(), "a.txt", AtFlags::SYMLINK_NOFOLLOW).unwrap();
    let (file, now) = open_same(slot.dir.as_fd(), &slot, &stat).ok().unwrap();
    std::fs::write(root.join("x.tmp"), "one\n").unwrap();
    std::fs::rename(root.join("x.tmp"), root.join("a.txt")).unwrap();
    let result = still_same(slot.dir.as_fd(), &slot, file, &now, &before);
    assert_eq!(result, Err(Changed::Replaced));
    // Unchanged: it holds.
    let stat = rustix::fs::statat(slot.dir.as_fd(), "a.txt", AtFlags::SYMLINK_NOFOLLOW).unwrap();
    let (file, now) = open_same(slot.dir.as_fd(), &slot, &stat).ok().unwrap();
    assert_eq!(
        still_same(slot.dir.as_fd(), &slot, file, &now, &before),
        Ok(())
    );
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// A file owned by another user, setuid and setgid: overwritten and edited, it keeps its
/// owner, group and every mode bit (the old code made it root's, 0755).
#[test]
fn a_replaced_file_keeps_its_owner_group_and_mode_bits() {
    if !is_root() {
        eprintln!("skipped: giving a file to another user needs root");
        return;
    }
    let (_d, root, ws) = setup();
    for (name, mode) in [("suid", 0o6755), ("sticky", 0o1644), ("private", 0o600)] {
        let path = root.join(name);
        std::fs::write(&path, "one\n").unwrap();
        std::os::unix::fs::chown(&path, Some(65534), Some(65534)).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().mode() & 0o7777, mode);
        ws.write(name, b"two\n").unwrap();
        let before = seen(&root, name);
        ws.write_over(name, b"three\n", &before, Since::Diff)
            .unwrap();
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "three\n");
        assert_eq!(
            (meta.uid(), meta.gid(), meta.mode() & 0o7777),
            (65534, 65534, mode),
            "{name}"
        );
    }
    // A file of taco's own user keeps its mode too; a new file gets 0644 (less the umask).
    std::fs::set_permissions(root.join("a.txt"), std::fs::Permissions::from_mode(0o640)).unwrap();
    ws.write("a.txt", b"x").unwrap();
    let meta = std::fs::metadata(root.join("a.txt")).unwrap();
    assert_eq!((meta.uid(), meta.mode() & 0o7777), (0, 0o640));
}

/// Not root: replacing a file of another user would hand it to taco's user, so nothing is
/// written. Run as uid 65534 in a child (the test binary again, this test alone).
#[test]
fn without_the_right_to_keep_the_owner_nothing_is_written() {
    if !is_root() {
        eprintln!("skipped: starting a child as another user needs root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o777)).unwrap();
    std::fs::write(root.join("root.txt"), "root's\n").unwrap();
    // The test binary, where uid 65534 can reach it (the checkout may be under /root).
    let bin = tempfile::tempdir().unwrap();
    std::fs::set_permissions(bin.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let exe = bin.path().join("tests");
    let own = std::env::current_exe().unwrap();
    if std::fs::hard_link(&own, &exe).is_err() {
        std::fs::copy(&own, &exe).unwrap();
    }
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut child = std::process::Command::new(&exe);
    child
        .args([
            "--exact",
            "tools::workspace::write::tests::as_nobody",
            "--ignored",
            "--nocapture",
        ])
        .env("TACO_TEST_AS_NOBODY", &root)
        .current_dir(&root);
    // SAFETY: only async-signal-safe system calls between fork and exec.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut child, || {
            if libc::setgroups(0, std::ptr::null()) != 0
                || libc::setgid(65534) != 0
                || libc::setuid(65534) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = child.output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && text.contains("1 passed"),
        "the child failed:\n{text}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("root.txt")).unwrap(),
        "root's\n"
    );
    let meta = std::fs::metadata(root.join("root.txt")).unwrap();
    assert_eq!(meta.uid(), 0, "still root's");
    assert_eq!(
        names(&root),
        ["own.txt", "root.txt"],
        "no temp file is left"
    );
}

/// The child of the test above (ignored unless run by it, as uid 65534).
#[test]
#[ignore = "run as another user by without_the_right_to_keep_the_owner_nothing_is_written"]
fn as_nobody() {
    let root = PathBuf::from(std::env::var_os("TACO_TEST_AS_NOBODY").unwrap());
    // SAFETY: geteuid has no preconditions.
    assert_eq!(unsafe { libc::geteuid() }, 65534);
    let ws = Workspace::new(&root).unwrap();
    let error = ws.write("root.txt", b"nobody's\n").unwrap_err().to_string();
    assert!(
        error.starts_with(
            "'root.txt' belongs to uid 0 and gid 0, and taco (uid 65534) may not give a file \
             that owner"
        ) && error.contains("nothing was written"),
        "{error}"
    );
    // Its own files it writes as before.
    ws.write("own.txt", b"a\n").unwrap();
    ws.write("own.txt", b"b\n").unwrap();
    assert_eq!(
        std::fs::read_to_string(root.join("own.txt")).unwrap(),
        "b\n"
    );
}
