//! What changed between two trees of the store: per file its kind, mode and line counts
//! (`git diff-tree --raw` and `--numstat`, both `-z`), and a unified diff of one file on
//! demand, cut at a size.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::git::{self, Call, Git};
use super::{CheckpointError, TreeId};

/// How a file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    /// Not in `from`.
    Added,
    /// In both, different (content, mode, or file ↔ symlink).
    Modified,
    /// Not in `to`.
    Deleted,
}

/// What git keeps of a file's mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileMode {
    /// 100644.
    Regular,
    /// 100755 (any execute bit).
    Executable,
    /// 120000: the link's target is the content.
    Symlink,
    /// 160000: another repository (never stored by taco; skipped if met).
    Gitlink,
}

impl FileMode {
    /// From git's octal text.
    pub fn parse(text: &[u8]) -> Option<Self> {
        match text {
            b"100644" | b"100664" => Some(Self::Regular),
            b"100755" => Some(Self::Executable),
            b"120000" => Some(Self::Symlink),
            b"160000" => Some(Self::Gitlink),
            _ => None,
        }
    }
}

/// One file's change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// Workspace-relative.
    pub path: PathBuf,
    /// Added, modified or deleted.
    pub kind: ChangeKind,
    /// Mode before (`None` when added).
    pub old_mode: Option<FileMode>,
    /// Mode after (`None` when deleted).
    pub new_mode: Option<FileMode>,
    /// Lines added (0 for a binary file).
    pub added: u64,
    /// Lines removed (0 for a binary file).
    pub removed: u64,
    /// git found it binary: no line counts.
    pub binary: bool,
}

/// One file's unified diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    /// The diff (lossy UTF-8; git's own headers included).
    pub text: String,
    /// Cut at the size asked for.
    pub truncated: bool,
}

/// Per file, what changed from tree `a` to tree `b`, by path.
pub fn between(git: &Git, a: &TreeId, b: &TreeId) -> Result<Vec<FileChange>, CheckpointError> {
    if a == b {
        return Ok(Vec::new());
    }
    let raw = git.run(Call::new([
        "diff-tree",
        "-r",
        "-z",
        "--no-renames",
        "--raw",
        a.as_str(),
        b.as_str(),
    ]))?;
    let numstat = git.run(Call::new([
        "diff-tree",
        "-r",
        "-z",
        "--no-renames",
        "--numstat",
        "--no-textconv",
        "--no-ext-diff",
        a.as_str(),
        b.as_str(),
    ]))?;
    let mut changes = parse_raw(&raw)?;
    let counts = parse_numstat(&numstat);
    for change in &mut changes {
        let key = change.path.as_os_str().as_bytes();
        if let Ok(i) = counts.binary_search_by(|(p, _)| p.as_slice().cmp(key)) {
            match counts[i].1 {
                Some((added, removed)) => (change.added, change.removed) = (added, removed),
                None => change.binary = true,
            }
        }
    }
    Ok(changes)
}

/// The raw records: `:old new oldid newid S\0path\0`.
pub fn parse_raw(bytes: &[u8]) -> Result<Vec<FileChange>, CheckpointError> {
    let bad = |detail: String| CheckpointError::Parse {
        command: "git diff-tree --raw",
        detail,
    };
    let mut records = git::split_z(bytes);
    let mut changes = Vec::new();
    while let Some(meta) = records.next() {
        let path = records
            .next()
            .ok_or_else(|| bad("a record without a path".into()))?;
        let fields: Vec<&[u8]> = meta
            .strip_prefix(b":")
            .ok_or_else(|| bad("no leading colon".into()))?
            .split(|b| *b == b' ')
            .collect();
        let [old_mode, new_mode, _, _, status] = fields[..] else {
            return Err(bad(format!("{} fields", fields.len())));
        };
        let kind = match status.first() {
            Some(b'A') => ChangeKind::Added,
            Some(b'D') => ChangeKind::Deleted,
            Some(b'M' | b'T') => ChangeKind::Modified,
            _ => return Err(bad(String::from_utf8_lossy(status).into_owned())),
        };
        changes.push(FileChange {
            path: PathBuf::from(OsStr::from_bytes(path)),
            kind,
            old_mode: FileMode::parse(old_mode),
            new_mode: FileMode::parse(new_mode),
            added: 0,
            removed: 0,
            binary: false,
        });
    }
    Ok(changes)
}

/// A path and its lines added and removed (`None`: binary).
type Numstat = (Vec<u8>, Option<(u64, u64)>);

/// `added\tremoved\tpath\0` per file, `-\t-` for binary; sorted by path.
fn parse_numstat(bytes: &[u8]) -> Vec<Numstat> {
    let mut out: Vec<_> = git::split_z(bytes)
        .filter_map(|rec| {
            let mut parts = rec.splitn(3, |b| *b == b'\t');
            let (added, removed, path) = (parts.next()?, parts.next()?, parts.next()?);
            let number = |t: &[u8]| std::str::from_utf8(t).ok()?.parse::<u64>().ok();
            let counts = number(added).zip(number(removed));
            Some((path.to_vec(), counts))
        })
        .collect();
    out.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    out
}

/// The unified diff of `path` from `a` to `b`, at most `max_bytes`.
pub fn file_diff(
    git: &Git,
    a: &TreeId,
    b: &TreeId,
    path: &Path,
    max_bytes: usize,
) -> Result<FileDiff, CheckpointError> {
    let args: Vec<OsString> = [
        "diff-tree",
        "-p",
        "-r",
        "--no-renames",
        "--no-textconv",
        "--no-ext-diff",
        "--no-color",
        "-U3",
        a.as_str(),
        b.as_str(),
        "--",
    ]
    .into_iter()
    .map(OsString::from)
    .chain([path.as_os_str().to_owned()])
    .collect();
    let mut call = Call::new(args);
    call.cap = max_bytes;
    call.truncate = true;
    let out = git.run_status(call)?;
    if out.code != Some(0) {
        return Err(CheckpointError::Git {
            command: "git diff-tree -p".into(),
            message: out.stderr,
        });
    }
    let truncated = out.stdout.len() >= max_bytes;
    Ok(FileDiff {
        text: String::from_utf8_lossy(&out.stdout).into_owned(),
        truncated,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_and_numstat_records_parse() {
        let z = "0".repeat(40);
        let raw = format!(
            ":000000 100755 {z} {z} A\0bin/run x\0:100644 000000 {z} {z} D\0old\0:100644 120000 {z} {z} T\0link\0"
        );
        let changes = parse_raw(raw.as_bytes()).unwrap();
        assert_eq!(changes.len(), 3);
        assert_eq!(changes[0].path, Path::new("bin/run x"));
        assert_eq!(changes[0].kind, ChangeKind::Added);
        assert_eq!(changes[0].new_mode, Some(FileMode::Executable));
        assert_eq!(changes[1].kind, ChangeKind::Deleted);
        assert_eq!(changes[2].new_mode, Some(FileMode::Symlink));
        assert!(parse_raw(b":100644 100644 a b\0").is_err());
        let counts = parse_numstat(b"3\t1\tb\0-\t-\ta\0");
        assert_eq!(counts[0], (b"a".to_vec(), None));
        assert_eq!(counts[1], (b"b".to_vec(), Some((3, 1))));
    }
}
