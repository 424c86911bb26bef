//! Path confinement to the workspace.
//!
//! File tools take paths from the model. Every such path is resolved here against the
//! workspace root (`ToolContext::workdir`, canonical) and refused when it would leave it:
//! through `..`, as an absolute path elsewhere, or through a symlink pointing outside.
//! The check is made on canonical paths, so symlinks are judged by where they really lead.

use std::io;
use std::path::{Component, Path, PathBuf};

use super::ToolError;

/// Resolves `path` (relative to `workdir`, or absolute inside it) to an existing file or
/// directory inside the workspace; the result is canonical.
pub fn resolve_existing(workdir: &Path, path: &str) -> Result<PathBuf, ToolError> {
    let resolved = resolve_for_write(workdir, path)?;
    // `resolve_for_write` canonicalized the whole path if it exists; otherwise the tail
    // was re-appended and the target is missing.
    match std::fs::symlink_metadata(&resolved) {
        Ok(_) => Ok(resolved),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err(ToolError::failed(format!(
            "path '{path}' does not exist in the workspace {}",
            workdir.display()
        ))),
        Err(e) => Err(ToolError::failed(format!("cannot access '{path}': {e}"))),
    }
}

/// Resolves `path` to a location inside the workspace that may not exist yet: the nearest
/// existing ancestor is canonicalized and checked, the missing components are re-appended.
pub fn resolve_for_write(workdir: &Path, path: &str) -> Result<PathBuf, ToolError> {
    let joined = join(workdir, path);
    let components: Vec<Component<'_>> = joined.components().collect();
    for split in (1..=components.len()).rev() {
        let prefix: PathBuf = components[..split].iter().collect();
        match std::fs::symlink_metadata(&prefix) {
            Ok(_) => {}
            // ENOENT and ENOTDIR both mean "this prefix does not exist"; keep climbing.
            Err(_) => continue,
        }
        let base = std::fs::canonicalize(&prefix).map_err(|e| {
            ToolError::failed(format!(
                "cannot resolve '{path}': {} ({e}); a broken symlink is not followed",
                prefix.display()
            ))
        })?;
        if !base.starts_with(workdir) {
            return Err(outside(workdir, path));
        }
        return append_missing(base, &components[split..], workdir, path);
    }
    // Only reachable when not even the root exists, which would be a broken system.
    Err(outside(workdir, path))
}

/// Shows `path` relative to the workspace root for results ("." for the root itself).
pub fn display_relative(workdir: &Path, path: &Path) -> String {
    match path.strip_prefix(workdir) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
        Ok(rel) => rel.to_string_lossy().into_owned(),
        Err(_) => path.to_string_lossy().into_owned(),
    }
}

/// The path as given, anchored at the workspace when relative; "" means the workspace.
fn join(workdir: &Path, path: &str) -> PathBuf {
    let given = Path::new(path);
    if given.is_absolute() {
        given.to_path_buf()
    } else {
        workdir.join(given)
    }
}

/// Re-appends components that do not exist yet. They cannot be symlinks, but `..` among
/// them could still climb out, so it is refused rather than interpreted.
fn append_missing(
    mut base: PathBuf,
    rest: &[Component<'_>],
    workdir: &Path,
    path: &str,
) -> Result<PathBuf, ToolError> {
    for component in rest {
        match component {
            Component::Normal(name) => base.push(name),
            Component::CurDir => {}
            Component::ParentDir => {
                return Err(ToolError::failed(format!(
                    "path '{path}' uses '..' after a directory that does not exist; \
                     give a path inside the workspace {}",
                    workdir.display()
                )));
            }
            Component::RootDir | Component::Prefix(_) => return Err(outside(workdir, path)),
        }
    }
    Ok(base)
}

fn outside(workdir: &Path, path: &str) -> ToolError {
    ToolError::failed(format!(
        "path '{path}' is outside the workspace {}",
        workdir.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn setup() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap().join("ws");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/a.txt"), "a").unwrap();
        (dir, root)
    }

    fn is_outside(r: Result<PathBuf, ToolError>) -> bool {
        matches!(r, Err(ToolError::Failed(m)) if m.contains("outside the workspace"))
    }

    #[test]
    fn relative_absolute_and_dot() {
        let (_d, root) = setup();
        assert_eq!(resolve_existing(&root, "").unwrap(), root);
        assert_eq!(resolve_existing(&root, ".").unwrap(), root);
        assert_eq!(
            resolve_existing(&root, "sub/a.txt").unwrap(),
            root.join("sub/a.txt")
        );
        assert_eq!(
            resolve_existing(&root, "./sub/../sub/a.txt").unwrap(),
            root.join("sub/a.txt")
        );
        let abs = root.join("sub/a.txt");
        assert_eq!(resolve_existing(&root, abs.to_str().unwrap()).unwrap(), abs);
    }

    #[test]
    fn refuses_escapes() {
        let (_d, root) = setup();
        assert!(is_outside(resolve_existing(&root, "..")));
        assert!(is_outside(resolve_existing(&root, "../x")));
        assert!(is_outside(resolve_existing(&root, "sub/../../x")));
        assert!(is_outside(resolve_existing(&root, "/etc/passwd")));
        assert!(is_outside(resolve_for_write(&root, "../new/file")));
        assert!(is_outside(resolve_for_write(&root, "/tmp/taco-new-file")));
        let err = resolve_existing(&root, "../x").unwrap_err().to_string();
        assert!(err.contains(&root.display().to_string()), "{err}");
    }

    #[test]
    fn missing_inside_is_not_found() {
        let (_d, root) = setup();
        let err = resolve_existing(&root, "nope.txt").unwrap_err().to_string();
        assert!(err.contains("does not exist"), "{err}");
    }

    #[test]
    fn write_targets_may_not_exist() {
        let (_d, root) = setup();
        assert_eq!(
            resolve_for_write(&root, "x/y/z.txt").unwrap(),
            root.join("x/y/z.txt")
        );
        assert_eq!(
            resolve_for_write(&root, "sub/./n.txt").unwrap(),
            root.join("sub/n.txt")
        );
        let err = resolve_for_write(&root, "new/../x")
            .unwrap_err()
            .to_string();
        assert!(err.contains("'..'"), "{err}");
    }

    #[test]
    fn symlinks_are_judged_by_their_target() {
        let (dir, root) = setup();
        let outside_dir = dir.path().canonicalize().unwrap().join("outside");
        std::fs::create_dir_all(&outside_dir).unwrap();
        std::fs::write(outside_dir.join("secret"), "s").unwrap();
        symlink(&outside_dir, root.join("out")).unwrap();
        symlink(root.join("sub"), root.join("in")).unwrap();
        symlink(outside_dir.join("missing"), root.join("dangling")).unwrap();
        assert!(is_outside(resolve_existing(&root, "out/secret")));
        assert!(is_outside(resolve_for_write(&root, "out/new.txt")));
        assert!(is_outside(resolve_for_write(&root, "out")));
        assert!(resolve_for_write(&root, "dangling").is_err());
        assert_eq!(
            resolve_existing(&root, "in/a.txt").unwrap(),
            root.join("sub/a.txt")
        );
    }

    #[test]
    fn display_is_relative() {
        let root = Path::new("/w");
        assert_eq!(display_relative(root, Path::new("/w")), ".");
        assert_eq!(display_relative(root, Path::new("/w/a/b")), "a/b");
        assert_eq!(display_relative(root, Path::new("/x")), "/x");
    }
}
