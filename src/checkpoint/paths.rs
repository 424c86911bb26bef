//! Writing back into the workspace: paths from the store are checked (relative, no `..`, no
//! `.git`), and no directory on the way is a symlink, so nothing is written or deleted
//! outside the workspace or inside a `.git`. Files are written to a temporary name beside
//! them and renamed into place; a symlink is restored as a symlink, never followed.

use std::ffi::OsStr;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};

use super::CheckpointError;
use super::changes::FileMode;

/// Checks a workspace-relative path from the store.
pub fn check(path: &Path) -> Result<(), CheckpointError> {
    let refuse = |why| CheckpointError::BadPath {
        path: path.to_string_lossy().into_owned(),
        why,
    };
    if path.as_os_str().is_empty() {
        return Err(refuse("empty"));
    }
    for component in path.components() {
        match component {
            Component::Normal(name) => {
                if name.as_bytes().eq_ignore_ascii_case(b".git") {
                    return Err(refuse("inside a .git directory"));
                }
            }
            Component::RootDir | Component::Prefix(_) => return Err(refuse("absolute")),
            Component::ParentDir => return Err(refuse("goes up with '..'")),
            Component::CurDir => return Err(refuse("has a '.' component")),
        }
    }
    Ok(())
}

/// Makes the directories above `rel` (inside `root`), refusing a symlink or a file on the way.
fn make_parents(root: &Path, rel: &Path) -> Result<PathBuf, CheckpointError> {
    let mut dir = root.to_path_buf();
    let Some(parent) = rel.parent() else {
        return Ok(dir);
    };
    for component in parent.components() {
        dir.push(component);
        match std::fs::symlink_metadata(&dir) {
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(bad(rel, "a directory on its way is a symbolic link"));
            }
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => return Err(bad(rel, "a directory on its way is a file")),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                std::fs::create_dir(&dir).map_err(|e| io_err(rel, e))?;
            }
            Err(e) => return Err(io_err(rel, e)),
        }
    }
    Ok(dir)
}

/// Checks that no directory above `rel` is a symlink (before deleting through it).
fn parents_plain(root: &Path, rel: &Path) -> Result<(), CheckpointError> {
    let mut dir = root.to_path_buf();
    for component in rel.parent().into_iter().flat_map(Path::components) {
        dir.push(component);
        if let Ok(meta) = std::fs::symlink_metadata(&dir)
            && !meta.is_dir()
        {
            return Err(bad(rel, "a directory on its way is not a directory"));
        }
    }
    Ok(())
}

/// Writes `content` at `rel` with `mode` (a symlink's content is its target).
pub fn write(
    root: &Path,
    rel: &Path,
    mode: FileMode,
    content: &[u8],
) -> Result<(), CheckpointError> {
    check(rel)?;
    let dir = make_parents(root, rel)?;
    let name = rel.file_name().ok_or_else(|| bad(rel, "no file name"))?;
    let target = dir.join(name);
    let mut temp_name = b".".to_vec();
    temp_name.extend_from_slice(name.as_bytes());
    temp_name.extend_from_slice(format!(".taco-restore-{:08x}", fastrand::u32(..)).as_bytes());
    let temp = dir.join(OsStr::from_bytes(&temp_name));
    match mode {
        FileMode::Symlink => std::os::unix::fs::symlink(OsStr::from_bytes(content), &temp)
            .map_err(|e| io_err(rel, e))?,
        FileMode::Regular | FileMode::Executable => {
            // As git checks out: 0666 or 0777, less the umask.
            let bits = if mode == FileMode::Executable {
                0o777
            } else {
                0o666
            };
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(bits)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&temp)
                .map_err(|e| io_err(rel, e))?;
            if let Err(e) = file.write_all(content).and_then(|()| file.sync_data()) {
                let _ = std::fs::remove_file(&temp);
                return Err(io_err(rel, e));
            }
        }
        FileMode::Gitlink => return Err(bad(rel, "a nested repository is not restored")),
    }
    // An empty directory left where the file goes (its files were deleted first) yields.
    if let Ok(meta) = std::fs::symlink_metadata(&target)
        && meta.is_dir()
    {
        let _ = std::fs::remove_dir(&target);
    }
    std::fs::rename(&temp, &target).map_err(|e| {
        let _ = std::fs::remove_file(&temp);
        io_err(rel, e)
    })
}

/// Deletes the file or symlink at `rel` (never a directory), then the directories it leaves
/// empty, up to the workspace.
pub fn delete(root: &Path, rel: &Path) -> Result<(), CheckpointError> {
    check(rel)?;
    parents_plain(root, rel)?;
    let target = root.join(rel);
    match std::fs::symlink_metadata(&target) {
        Ok(meta) if meta.is_dir() => return Err(bad(rel, "is now a directory")),
        Ok(_) => std::fs::remove_file(&target).map_err(|e| io_err(rel, e))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io_err(rel, e)),
    }
    let mut parent = rel.parent();
    while let Some(dir) = parent.filter(|d| !d.as_os_str().is_empty()) {
        if std::fs::remove_dir(root.join(dir)).is_err() {
            break;
        }
        parent = dir.parent();
    }
    Ok(())
}

fn bad(rel: &Path, why: &'static str) -> CheckpointError {
    CheckpointError::BadPath {
        path: rel.to_string_lossy().into_owned(),
        why,
    }
}

fn io_err(rel: &Path, e: std::io::Error) -> CheckpointError {
    CheckpointError::Store {
        path: rel.to_path_buf(),
        source: e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_relative_paths_pass() {
        assert!(check(Path::new("src/main.rs")).is_ok());
        assert!(check(Path::new("a b/ü.txt")).is_ok());
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../../x",
            "./a",
            "a/.git/config",
            ".GIT/HEAD",
        ] {
            assert!(check(Path::new(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_symlinked_directory_is_never_written_through() {
        let ws = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), ws.path().join("link")).unwrap();
        let err = write(ws.path(), Path::new("link/f"), FileMode::Regular, b"x").unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert!(delete(ws.path(), Path::new("link/f")).is_err());
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
        // A symlink at the file itself is replaced, not written through.
        std::fs::write(outside.path().join("victim"), b"keep").unwrap();
        std::os::unix::fs::symlink(outside.path().join("victim"), ws.path().join("f")).unwrap();
        write(ws.path(), Path::new("f"), FileMode::Regular, b"new").unwrap();
        assert_eq!(
            std::fs::read(outside.path().join("victim")).unwrap(),
            b"keep"
        );
        assert_eq!(std::fs::read(ws.path().join("f")).unwrap(), b"new");
    }
}
