use std::os::unix::fs::symlink;

use super::*;

fn setup() -> (tempfile::TempDir, PathBuf, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("ws");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::write(root.join("sub/a.txt"), "a").unwrap();
    let ws = Workspace::new(&root).unwrap();
    (dir, root, ws)
}

fn rel(ws: &Workspace, path: &str) -> String {
    ws.open(path).unwrap().shown()
}

fn error<T: std::fmt::Debug>(result: Result<T, ToolError>) -> String {
    result.unwrap_err().to_string()
}

fn is_outside<T: std::fmt::Debug>(result: Result<T, ToolError>) -> bool {
    error(result).contains("outside the workspace")
}

#[test]
fn relative_absolute_and_dot() {
    let (_d, root, ws) = setup();
    assert_eq!(rel(&ws, ""), ".");
    assert_eq!(rel(&ws, "."), ".");
    assert_eq!(rel(&ws, "sub/.."), ".");
    assert_eq!(rel(&ws, "sub/a.txt"), "sub/a.txt");
    assert_eq!(rel(&ws, "./sub/../sub/a.txt"), "sub/a.txt");
    assert_eq!(
        rel(&ws, root.join("sub/a.txt").to_str().unwrap()),
        "sub/a.txt"
    );
    assert_eq!(rel(&ws, root.to_str().unwrap()), ".");
    assert!(matches!(ws.open("sub").unwrap().entry, Entry::Dir(_)));
    assert!(matches!(
        ws.open("sub/a.txt").unwrap().entry,
        Entry::File(_)
    ));
}

#[test]
fn refuses_escapes() {
    let (_d, root, ws) = setup();
    assert!(is_outside(ws.open("..")));
    assert!(is_outside(ws.open("../x")));
    assert!(is_outside(ws.open("sub/../../x")));
    assert!(is_outside(ws.open("/etc/passwd")));
    assert!(is_outside(ws.write("../new/file", b"")));
    assert!(is_outside(ws.write("/tmp/taco-new-file", b"")));
    let err = error(ws.open("../x"));
    assert!(err.contains(&root.display().to_string()), "{err}");
    assert!(err.contains("'../x'"), "{err}");
}

#[test]
fn missing_inside_is_not_found() {
    let (_d, _root, ws) = setup();
    for path in ["nope.txt", "nope/a.txt", "sub/nope/../a.txt"] {
        let err = error(ws.open(path));
        assert!(err.contains("does not exist"), "{path}: {err}");
    }
    let err = error(ws.open("sub/a.txt/x"));
    assert!(err.contains("'sub/a.txt' is not a directory"), "{err}");
}

#[test]
fn writes_create_directories_but_not_above_missing_ones() {
    let (_d, root, ws) = setup();
    let written = ws.write("x/y/z.txt", b"z").unwrap();
    assert_eq!(
        (written.shown.as_str(), written.replaced),
        ("x/y/z.txt", false)
    );
    assert_eq!(
        std::fs::read_to_string(root.join("x/y/z.txt")).unwrap(),
        "z"
    );
    assert_eq!(ws.write("sub/./n.txt", b"").unwrap().shown, "sub/n.txt");
    assert!(ws.write("sub/n.txt", b"n").unwrap().replaced);
    let err = error(ws.write("new/../x", b""));
    assert!(err.contains("'..'"), "{err}");
    assert!(
        !root.join("new").exists(),
        "a directory was created before the refusal"
    );
    assert_eq!(error(ws.write("sub/..", b"")), "'.' is a directory");
    assert_eq!(error(ws.write("sub", b"")), "'sub' is a directory");
}

#[test]
fn symlinks_are_judged_by_their_target() {
    let (dir, root, ws) = setup();
    let outside_dir = dir.path().canonicalize().unwrap().join("outside");
    std::fs::create_dir_all(&outside_dir).unwrap();
    std::fs::write(outside_dir.join("secret"), "s").unwrap();
    symlink(&outside_dir, root.join("out")).unwrap();
    symlink(root.join("sub"), root.join("in")).unwrap();
    symlink("../..", root.join("sub/up")).unwrap();
    symlink(outside_dir.join("missing"), root.join("dangling")).unwrap();
    assert!(is_outside(ws.open("out/secret")));
    assert!(is_outside(ws.open("sub/up")));
    assert!(is_outside(ws.write("out/new.txt", b"")));
    assert!(is_outside(ws.write("out", b"")));
    assert!(is_outside(ws.write("dangling", b"")));
    let err = error(ws.open("out/secret"));
    assert!(err.contains("the symlink 'out' leads out"), "{err}");
    let err = error(ws.open("sub/up/x"));
    assert!(err.contains("the symlink 'sub/up' leads out"), "{err}");
    // Here the path's own '..' leaves, after a link that stayed inside.
    let err = error(ws.open("in/../../x"));
    assert!(
        is_outside(ws.open("in/../../x")) && !err.contains("symlink"),
        "{err}"
    );
    assert_eq!(rel(&ws, "in/a.txt"), "sub/a.txt");
    symlink("..", root.join("sub/back")).unwrap();
    assert_eq!(rel(&ws, "in/back/in/back/sub/a.txt"), "sub/a.txt");
    assert_eq!(ws.write("in/new.txt", b"n").unwrap().shown, "sub/new.txt");
    assert!(std::fs::read_dir(&outside_dir).unwrap().count() == 1);
}

#[test]
fn a_failed_rename_removes_the_temp_file() {
    let (_d, root, _ws) = setup();
    std::fs::create_dir(root.join("sub/d")).unwrap();
    std::fs::write(root.join("sub/d/inner"), "").unwrap();
    // As if `d` had become a directory after the walk looked at it: the temp file is
    // written, then the rename over the directory fails.
    let slot = walk::Slot {
        dir: File::open(root.join("sub")).unwrap().into(),
        name: "d".into(),
        existing: None,
        rel: PathBuf::from("sub/d"),
    };
    let err = error(write::replace(&slot, "sub/d", b"x", None));
    assert!(err.starts_with("cannot write 'sub/d'"), "{err}");
    let mut names: Vec<_> = std::fs::read_dir(root.join("sub"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    assert_eq!(names, ["a.txt", "d"]);
}

#[test]
fn symlink_loops_end() {
    let (_d, root, ws) = setup();
    symlink("b", root.join("a")).unwrap();
    symlink("a", root.join("b")).unwrap();
    assert!(error(ws.open("a")).contains("too many levels"));
    assert!(error(ws.write("a/x", b"")).contains("too many levels"));
}

#[test]
fn exact_opens_refuse_every_symlink() {
    let (_d, root, ws) = setup();
    symlink("sub", root.join("in")).unwrap();
    symlink("a.txt", root.join("sub/link")).unwrap();
    assert!(matches!(
        ws.open_exact(Path::new("sub/a.txt")).unwrap().entry,
        Entry::File(_)
    ));
    for path in ["in/a.txt", "sub/link"] {
        let err = error(ws.open_exact(Path::new(path)));
        assert!(err.contains("is a symlink"), "{path}: {err}");
    }
    assert!(is_outside(ws.open_exact(Path::new("/etc/passwd"))));
    assert!(is_outside(ws.open_exact(Path::new("../ws/sub/a.txt"))));
}

#[test]
fn nul_bytes_have_their_own_error() {
    let (_d, _root, ws) = setup();
    assert!(error(ws.open("sub/\0")).starts_with("path contains a NUL byte"));
    assert!(error(ws.write("a\0b", b"")).starts_with("path contains a NUL byte"));
}

#[test]
fn lists_without_following_symlinks() {
    let (_d, root, ws) = setup();
    std::fs::create_dir(root.join("sub/d")).unwrap();
    symlink("/etc", root.join("sub/l")).unwrap();
    let Entry::Dir(dir) = ws.open("sub").unwrap().entry else {
        panic!("not a directory");
    };
    let mut entries = list(&dir).unwrap();
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    let listed = |name: &str, kind, size| Listed {
        name: name.to_string(),
        kind,
        size,
    };
    assert_eq!(
        entries,
        [
            listed("a.txt", ListedKind::File, Some(1)),
            listed("d", ListedKind::Dir, None),
            listed("l", ListedKind::Symlink, None),
        ]
    );
}

#[test]
fn display_is_relative() {
    let root = Path::new("/w");
    assert_eq!(display_relative(root, Path::new("/w")), ".");
    assert_eq!(display_relative(root, Path::new("/w/a/b")), "a/b");
    assert_eq!(display_relative(root, Path::new("/x")), "/x");
}
