//! The checkpoint store (issue 29.1) on real temporary workspaces, with and without a git
//! repository of their own: checkpoints between a write, an edit and a shell command, then a
//! rewind to each point (files byte for byte, exec bit and symlinks too), the user's `.git`
//! untouched, hand edits named and kept, a rewind undone, caps and nested repositories
//! listed, and a checkpoint that finds nothing changed writes no object.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use taco::checkpoint::{
    Action, ChangeKind, CheckpointId, HandEditKind, Limits, Point, SkipReason, Store,
};
use taco::clock::{Clock, ManualClock, SystemClock};

/// A file as the rewind must bring it back: its kind, exec bit and bytes (a link's target).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Entry {
    File { exec: bool, bytes: Vec<u8> },
    Link(PathBuf),
}

/// Everything under `dir` but its `.git` and what the fixture's `.gitignore` ignores.
fn files(dir: &Path) -> BTreeMap<PathBuf, Entry> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(dir).unwrap().to_path_buf();
            let ignored = rel.starts_with("target") || rel.extension().is_some_and(|e| e == "log");
            if rel == Path::new(".git") || ignored {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.file_type().is_symlink() {
                out.insert(rel, Entry::Link(std::fs::read_link(&path).unwrap()));
            } else if meta.is_dir() {
                stack.push(path);
            } else {
                let exec = meta.permissions().mode() & 0o111 != 0;
                out.insert(
                    rel,
                    Entry::File {
                        exec,
                        bytes: std::fs::read(&path).unwrap(),
                    },
                );
            }
        }
    }
    out
}

/// Every file of a `.git` directory with its bytes and mode: "untouched" means all equal.
fn dot_git(dir: &Path) -> BTreeMap<PathBuf, (u32, Vec<u8>)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.join(".git")];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap();
                out.insert(path, (meta.permissions().mode(), bytes));
            }
        }
    }
    out
}

/// Runs the user's git in `dir`, with no user config.
fn user_git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args([
            "-c",
            "user.name=u",
            "-c",
            "user.email=u@x",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

fn sh(dir: &Path, script: &str) {
    let status = Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .status()
        .unwrap();
    assert!(status.success(), "{script}");
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

struct Fixture {
    _tmp: tempfile::TempDir,
    ws: PathBuf,
    state: PathBuf,
}

/// A workspace whose path has a space and non-ASCII letters, and a state dir beside it.
fn fixture(own_repo: bool) -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("my work ü 工作");
    let state = tmp.path().join("state");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join(".gitignore"), "target/\n*.log\n").unwrap();
    std::fs::write(ws.join("a.txt"), "one\ntwo\nthree\n").unwrap();
    std::fs::write(ws.join("run.sh"), "#!/bin/sh\necho hi\n").unwrap();
    chmod(&ws.join("run.sh"), 0o755);
    std::fs::write(ws.join("blob.bin"), [0u8, 159, 146, 150, 0, 1, 2]).unwrap();
    std::os::unix::fs::symlink("a.txt", ws.join("link")).unwrap();
    std::fs::create_dir_all(ws.join("target")).unwrap();
    std::fs::write(ws.join("target/out.o"), "ignored").unwrap();
    std::fs::write(ws.join("debug.log"), "ignored").unwrap();
    if own_repo {
        user_git(&ws, &["init", "-q"]);
        user_git(&ws, &["add", "-A"]);
        user_git(&ws, &["commit", "-q", "-m", "user's own"]);
    }
    Fixture {
        _tmp: tmp,
        ws,
        state,
    }
}

fn open(f: &Fixture, limits: Limits) -> Store {
    Store::open_in(&f.state, &f.ws, limits, Arc::new(SystemClock)).unwrap()
}

fn object_count(store: &Store) -> usize {
    let objects = store.dir().join("repo.git/objects");
    let mut n = 0;
    for dir in std::fs::read_dir(objects).unwrap() {
        let dir = dir.unwrap().path();
        if dir.is_dir() {
            n += std::fs::read_dir(dir).unwrap().count();
        }
    }
    n
}

fn rewind_to_each_point(own_repo: bool) {
    let f = fixture(own_repo);
    let git_before = own_repo.then(|| dot_git(&f.ws));
    let store = open(&f, Limits::default());
    let mut points = Vec::new();
    let start = store.checkpoint("start").unwrap();
    assert!(start.changed && start.skipped.is_empty(), "{start:?}");
    points.push((start.id.clone(), files(&f.ws)));
    // write_file: a new file.
    std::fs::write(f.ws.join("new.txt"), "fresh\n").unwrap();
    points.push((store.checkpoint("write").unwrap().id, files(&f.ws)));
    // edit_file: a change inside a file.
    std::fs::write(f.ws.join("a.txt"), "one\nTWO\nthree\nfour\n").unwrap();
    points.push((store.checkpoint("edit").unwrap().id, files(&f.ws)));
    // A shell command: creates, modifies (and drops the exec bit), deletes, relinks.
    sh(
        &f.ws,
        "mkdir -p 'sub dir' && printf 'made\\n' > 'sub dir/made.txt' && echo more >> run.sh \
         && chmod -x run.sh && rm blob.bin && ln -sf new.txt link && echo x > build.log",
    );
    let last = store.checkpoint("shell").unwrap();
    points.push((last.id.clone(), files(&f.ws)));
    let ids: Vec<&CheckpointId> = points.iter().map(|p| &p.0).collect();
    assert_eq!(ids.len(), 4);
    assert!(
        ids.windows(2).all(|w| w[0] != w[1]),
        "each step is a new checkpoint"
    );

    let mut newest = last.id;
    for i in [1, 0, 3, 2, 0] {
        let (target, expected) = &points[i];
        let plan = store.plan_restore(target, &newest).unwrap();
        assert!(
            plan.hand_edits.is_empty(),
            "point {i}: {:?}",
            plan.hand_edits
        );
        let report = store.restore(&plan, false).unwrap();
        assert!(report.failed.is_empty(), "{:?}", report.failed);
        assert_eq!(&files(&f.ws), expected, "files at point {i}");
        newest = report.after;
    }
    // Ignored files were never touched, though every rewind went past them.
    assert_eq!(
        std::fs::read(f.ws.join("target/out.o")).unwrap(),
        b"ignored"
    );
    assert_eq!(std::fs::read(f.ws.join("debug.log")).unwrap(), b"ignored");
    assert_eq!(std::fs::read(f.ws.join("build.log")).unwrap(), b"x\n");
    if let Some(before) = git_before {
        assert_eq!(
            dot_git(&f.ws),
            before,
            "the user's .git is byte for byte as it was"
        );
    }
}

#[test]
fn rewinds_to_each_point_without_a_repository() {
    rewind_to_each_point(false);
}

#[test]
fn rewinds_to_each_point_in_a_repository_leaving_its_git_alone() {
    rewind_to_each_point(true);
}

#[test]
fn a_hand_edit_is_named_kept_then_overwritten_only_when_asked_and_a_rewind_is_undone() {
    let f = fixture(true);
    let store = open(&f, Limits::default());
    let first = store.checkpoint("start").unwrap();
    std::fs::write(f.ws.join("a.txt"), "agent\n").unwrap();
    std::fs::write(f.ws.join("b.txt"), "agent's new file\n").unwrap();
    let second = store.checkpoint("agent").unwrap();
    // By hand, after taco's newest checkpoint.
    std::fs::write(f.ws.join("a.txt"), "mine\n").unwrap();
    let plan = store.plan_restore(&first.id, &second.id).unwrap();
    let edits: Vec<_> = plan
        .hand_edits
        .iter()
        .map(|h| (h.path.clone(), h.kind))
        .collect();
    assert_eq!(edits, [(PathBuf::from("a.txt"), HandEditKind::Edited)]);
    assert!(plan.actions.contains(&Action::Delete {
        path: "b.txt".into()
    }));
    let a = plan
        .changes
        .iter()
        .find(|c| c.path == Path::new("a.txt"))
        .unwrap();
    assert_eq!((a.kind, a.added, a.removed), (ChangeKind::Modified, 3, 1));
    let before_rewind = files(&f.ws);
    let report = store.restore(&plan, false).unwrap();
    assert_eq!(report.kept, [PathBuf::from("a.txt")]);
    assert_eq!(std::fs::read(f.ws.join("a.txt")).unwrap(), b"mine\n");
    assert!(!f.ws.join("b.txt").exists());
    // Undo: the checkpoint the restore took holds the hand edit and b.txt.
    let undo = store.plan_restore(&report.undo, &report.after).unwrap();
    assert!(undo.hand_edits.is_empty());
    let undone = store.restore(&undo, false).unwrap();
    assert_eq!(files(&f.ws), before_rewind);
    // Overwriting, asked for.
    let plan = store.plan_restore(&first.id, &undone.after).unwrap();
    std::fs::write(f.ws.join("a.txt"), "mine again\n").unwrap();
    let report = store.restore(&plan, true).unwrap();
    assert!(report.kept.is_empty());
    assert_eq!(
        std::fs::read(f.ws.join("a.txt")).unwrap(),
        b"one\ntwo\nthree\n"
    );
    // The edit made between plan and restore is in the undo checkpoint all the same.
    let back = store.plan_restore(&report.undo, &report.after).unwrap();
    store.restore(&back, false).unwrap();
    assert_eq!(std::fs::read(f.ws.join("a.txt")).unwrap(), b"mine again\n");
}

#[test]
fn large_files_and_nested_repositories_are_skipped_listed_and_never_deleted() {
    let f = fixture(false);
    let limits = Limits {
        max_file_bytes: 1000,
        max_total_bytes: 1500,
    };
    std::fs::write(f.ws.join("big.dat"), vec![7u8; 2000]).unwrap();
    std::fs::create_dir_all(f.ws.join("vendor/lib")).unwrap();
    user_git(&f.ws.join("vendor/lib"), &["init", "-q"]);
    std::fs::write(f.ws.join("vendor/lib/code.rs"), "fn x() {}").unwrap();
    std::fs::write(f.ws.join("grows.txt"), "small\n").unwrap();
    let store = open(&f, limits);
    let first = store.checkpoint("start").unwrap();
    let reasons: Vec<_> = first
        .skipped
        .iter()
        .map(|s| (s.path.clone(), s.reason))
        .collect();
    assert_eq!(
        reasons,
        [
            (
                PathBuf::from("big.dat"),
                SkipReason::TooLarge { bytes: 2000 }
            ),
            (PathBuf::from("vendor/lib"), SkipReason::NestedRepository),
        ]
    );
    // Past the total: the first file in path order fits, the next does not.
    std::fs::write(f.ws.join("p1.txt"), vec![b'a'; 900]).unwrap();
    std::fs::write(f.ws.join("p2.txt"), vec![b'b'; 900]).unwrap();
    std::fs::write(f.ws.join("grows.txt"), vec![b'g'; 1200]).unwrap();
    let second = store.checkpoint("more").unwrap();
    let over: Vec<_> = second
        .skipped
        .iter()
        .map(|s| (s.path.clone(), s.reason))
        .collect();
    assert!(
        over.contains(&("grows.txt".into(), SkipReason::TooLarge { bytes: 1200 })),
        "{over:?}"
    );
    assert!(
        over.contains(&("p2.txt".into(), SkipReason::OverTotal { bytes: 900 })),
        "{over:?}"
    );
    let changes = store
        .changes(
            &Point::Checkpoint(first.id.clone()),
            &Point::Checkpoint(second.id.clone()),
        )
        .unwrap();
    let paths: Vec<_> = changes.iter().map(|c| (c.path.clone(), c.kind)).collect();
    assert_eq!(
        paths,
        [
            ("grows.txt".into(), ChangeKind::Deleted),
            ("p1.txt".into(), ChangeKind::Added)
        ]
    );
    // Back to the start: grows.txt's current version is in no checkpoint, so it is kept;
    // p2 (staged now that the total has room) is in no checkpoint of taco's either; the big
    // file and the nested repository were never in one, so they stay.
    let plan = store.plan_restore(&first.id, &second.id).unwrap();
    let edits: Vec<_> = plan
        .hand_edits
        .iter()
        .map(|h| (h.path.clone(), h.kind))
        .collect();
    assert_eq!(
        edits,
        [
            ("p2.txt".into(), HandEditKind::Edited),
            ("grows.txt".into(), HandEditKind::NotCheckpointed)
        ]
    );
    let report = store.restore(&plan, false).unwrap();
    assert_eq!(
        std::fs::read(f.ws.join("grows.txt")).unwrap(),
        vec![b'g'; 1200]
    );
    assert!(!f.ws.join("p1.txt").exists());
    assert_eq!(
        std::fs::read(f.ws.join("p2.txt")).unwrap(),
        vec![b'b'; 900],
        "kept"
    );
    assert_eq!(std::fs::read(f.ws.join("big.dat")).unwrap().len(), 2000);
    assert_eq!(
        std::fs::read(f.ws.join("vendor/lib/code.rs")).unwrap(),
        b"fn x() {}"
    );
    assert!(f.ws.join("vendor/lib/.git/HEAD").exists());
    assert!(report.failed.is_empty(), "{:?}", report.failed);
}

#[test]
fn nothing_changed_costs_no_object_even_after_a_touch() {
    let f = fixture(false);
    let store = open(&f, Limits::default());
    let first = store.checkpoint("one").unwrap();
    let objects = object_count(&store);
    let again = store.checkpoint("two").unwrap();
    assert_eq!((again.id.clone(), again.changed), (first.id.clone(), false));
    // Same bytes, new mtime: git hashes it again and finds the same blob.
    std::thread::sleep(Duration::from_millis(20));
    std::fs::write(f.ws.join("a.txt"), "one\ntwo\nthree\n").unwrap();
    let touched = store.checkpoint("three").unwrap();
    assert_eq!((touched.id, touched.changed), (first.id.clone(), false));
    assert_eq!(object_count(&store), objects, "no new object");
    // One byte changed: one blob, one tree, one commit.
    std::fs::write(f.ws.join("a.txt"), "one\ntwo\nthree!\n").unwrap();
    let changed = store.checkpoint("four").unwrap();
    assert!(changed.changed);
    assert_eq!(object_count(&store), objects + 3);
    // A second Store on the same workspace finds the same store and newest checkpoint.
    let other = open(&f, Limits::default());
    assert_eq!(other.dir(), store.dir());
    assert_eq!(other.checkpoint("five").unwrap().id, changed.id);
}

#[test]
fn changes_count_lines_flag_binary_and_diff_one_file_within_a_bound() {
    let f = fixture(false);
    let store = open(&f, Limits::default());
    let first = store.checkpoint("one").unwrap();
    std::fs::write(f.ws.join("a.txt"), "one\n2\nthree\n").unwrap();
    std::fs::write(f.ws.join("blob.bin"), [0u8, 1, 2, 3]).unwrap();
    chmod(&f.ws.join("run.sh"), 0o644);
    let from = Point::Checkpoint(first.id.clone());
    let now = store.changes(&from, &Point::Workspace).unwrap();
    let summary: Vec<_> = now
        .iter()
        .map(|c| {
            (
                c.path.to_str().unwrap(),
                c.kind,
                c.added,
                c.removed,
                c.binary,
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("a.txt", ChangeKind::Modified, 1, 1, false),
            ("blob.bin", ChangeKind::Modified, 0, 0, true),
            ("run.sh", ChangeKind::Modified, 0, 0, false),
        ]
    );
    assert_ne!(now[2].old_mode, now[2].new_mode);
    // Looking did not make a checkpoint.
    assert_eq!(store.list().unwrap().len(), 1);
    let diff = store
        .file_diff(&from, &Point::Workspace, Path::new("a.txt"), 10_000)
        .unwrap();
    assert!(diff.text.contains("-two\n+2\n"), "{}", diff.text);
    assert!(!diff.truncated);
    let cut = store
        .file_diff(&from, &Point::Workspace, Path::new("a.txt"), 20)
        .unwrap();
    assert!(cut.truncated && cut.text.len() == 20);
    let unknown = CheckpointId::parse(&"0".repeat(40)).unwrap();
    let err = store
        .changes(&Point::Checkpoint(unknown), &from)
        .unwrap_err();
    assert!(err.to_string().contains("no checkpoint"), "{err}");
}

#[test]
fn prune_drops_old_checkpoints_and_their_objects_but_never_the_newest() {
    let f = fixture(false);
    let clock = ManualClock::at(1_700_000_000_000);
    let store = Store::open_in(
        &f.state,
        &f.ws,
        Limits::default(),
        Arc::new(clock.clone()) as Arc<dyn Clock>,
    )
    .unwrap();
    std::fs::write(f.ws.join("old.bin"), vec![9u8; 300_000]).unwrap();
    let old = store.checkpoint("old").unwrap();
    std::fs::remove_file(f.ws.join("old.bin")).unwrap();
    clock.advance(Duration::from_secs(20 * 86_400));
    let new = store.checkpoint("new").unwrap();
    let report = store.prune(14).unwrap();
    assert_eq!((report.removed, report.kept), (1, 1));
    let ids: Vec<_> = store.list().unwrap().into_iter().map(|c| c.id).collect();
    assert_eq!(ids, std::slice::from_ref(&new.id));
    assert!(
        store
            .changes(&Point::Checkpoint(old.id), &Point::Workspace)
            .is_err()
    );
    clock.advance(Duration::from_secs(30 * 86_400));
    assert_eq!(
        store.prune(14).unwrap().removed,
        0,
        "the newest stays, however old"
    );
    assert!(store.size() > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_snapshot_runs_in_the_background() {
    let f = fixture(false);
    for i in 0..200 {
        std::fs::write(f.ws.join(format!("f{i}.txt")), format!("{i}\n")).unwrap();
    }
    let store = Arc::new(open(&f, Limits::default()));
    let task = store.spawn_checkpoint("first".into());
    let first = task.await.unwrap().unwrap();
    assert!(first.changed);
    assert_eq!(store.try_checkpoint("next").unwrap().id, first.id);
}
