//! The file listing: what it leaves out and where it stops.

use super::*;

fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for path in [
        "b.rs",
        "a/c.rs",
        "a/d.rs",
        ".hidden/e.rs",
        "node_modules/x.js",
    ] {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "x").unwrap();
    }
    #[cfg(unix)]
    std::os::unix::fs::symlink("b.rs", dir.path().join("link.rs")).unwrap();
    dir
}

#[test]
fn symlinks_hidden_and_skipped_directories_are_left_out() {
    let dir = tree();
    let listing = walk(dir.path(), MAX_FILES, MAX_WALK);
    assert_eq!(listing.paths, ["a/c.rs", "a/d.rs", "b.rs"]);
    assert_eq!(listing.cut, None);
}

#[test]
fn a_walk_stops_at_its_file_and_time_bounds() {
    let dir = tree();
    let listing = walk(dir.path(), 2, MAX_WALK);
    assert_eq!(listing.paths, ["a/c.rs", "a/d.rs"]);
    assert_eq!(listing.cut, Some(Cut::Files));
    let listing = walk(dir.path(), MAX_FILES, Duration::ZERO);
    assert_eq!((listing.paths.len(), listing.cut), (0, Some(Cut::Time)));
}

#[test]
fn no_workspace_lists_nothing_and_a_missing_one_lists_empty() {
    let mut none = FileIndex::new(None);
    none.refresh();
    assert!(!none.is_walking() && none.listing().is_none() && !none.has_root());
    let mut missing = FileIndex::new(Some("/nonexistent/taco/workspace".into()));
    missing.refresh();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !missing.poll() {
        assert!(Instant::now() < deadline, "the walk never ended");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(missing.listing(), Some(&Listing::default()));
    assert_eq!(missing.generation(), 1);
}
