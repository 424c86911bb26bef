//! Taking a checkpoint: git lists what changed since the store's index (untracked files the
//! `.gitignore` files keep, tracked files whose `stat` differs), taco caps sizes, git hashes
//! what passed and writes the tree; a commit and refs only when the tree or the skipped list
//! differs from the newest checkpoint's.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::git::{self, Call, Git};
use super::{CP_PREFIX, CheckpointError, CheckpointId, HEAD_REF, Store, TreeId};

/// Attributes of the store, above any `.gitattributes` in the workspace: files are stored
/// byte for byte (no end-of-line conversion, no filter, no ident, no re-encoding).
const ATTRIBUTES: &str = "* -text !eol -filter -ident -working-tree-encoding\n";
/// Marks the skipped list in a checkpoint's commit message.
const SKIPPED_LINE: &str = "taco-skipped ";
/// Longest label kept in a commit message.
const MAX_LABEL: usize = 200;

/// A checkpoint taken (or the newest one, when nothing changed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    /// Its id.
    pub id: CheckpointId,
    /// Its files.
    pub tree: TreeId,
    /// Whether it is new: false when the workspace was as the newest checkpoint has it.
    pub changed: bool,
    /// What it left out.
    pub skipped: Vec<Skipped>,
}

/// A path a checkpoint left out.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Skipped {
    /// Workspace-relative.
    pub path: PathBuf,
    /// Why.
    pub reason: SkipReason,
}

/// Why a path was left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum SkipReason {
    /// Larger than `max_file_bytes`.
    TooLarge {
        /// Its size.
        bytes: u64,
    },
    /// Would have taken the checkpoint past `max_total_bytes`.
    OverTotal {
        /// Its size.
        bytes: u64,
    },
    /// A git repository of its own inside the workspace (its files are its own git's).
    NestedRepository,
    /// Not a file, directory or symlink (a FIFO, a socket, a device).
    Special,
}

impl std::fmt::Display for SkipReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::TooLarge { bytes } => write!(f, "larger than the file cap ({bytes} bytes)"),
            Self::OverTotal { bytes } => {
                write!(f, "past the checkpoint's total cap ({bytes} bytes)")
            }
            Self::NestedRepository => f.write_str("a git repository of its own"),
            Self::Special => f.write_str("not a regular file"),
        }
    }
}

/// The newest checkpoint, as the store knows it.
#[derive(Debug, Clone)]
pub struct Head {
    id: CheckpointId,
    tree: TreeId,
    skipped: Vec<Skipped>,
}

/// The workspace's files, staged in the store's index.
#[derive(Debug)]
pub struct Staged {
    /// Their tree (written to the store; unreferenced until a checkpoint names it).
    pub tree: TreeId,
    /// What was left out.
    pub skipped: Vec<Skipped>,
}

/// Why a store could not be set up.
pub enum InitError {
    /// Its files.
    Io(std::io::Error),
    /// git.
    Git(CheckpointError),
}

/// Creates the store's repository once (no templates: no sample hooks).
pub fn init(git: &Git, dir: &crate::private::PrivateDir) -> Result<(), InitError> {
    let info = git.git_dir().join("info");
    if !git.git_dir().join("HEAD").exists() {
        let mut call = Call::new([
            "init",
            "--quiet",
            "--bare",
            "--template=",
            "--initial-branch=taco",
        ]);
        call.args.push(git.git_dir().as_os_str().to_owned());
        call.bare = true;
        git.run(call).map_err(InitError::Git)?;
        let workspace = git.work_tree().as_os_str().as_bytes().to_vec();
        let mut note = dir
            .create_new("workspace.tmp", false)
            .map_err(InitError::Io)?;
        std::io::Write::write_all(&mut note, &workspace).map_err(InitError::Io)?;
        dir.rename("workspace.tmp", "workspace")
            .map_err(InitError::Io)?;
    }
    std::fs::create_dir_all(&info).map_err(InitError::Io)?;
    let attributes = info.join("attributes");
    if std::fs::read(&attributes).ok().as_deref() != Some(ATTRIBUTES.as_bytes()) {
        std::fs::write(&attributes, ATTRIBUTES).map_err(InitError::Io)?;
    }
    Ok(())
}

/// The newest checkpoint's id (the store's lock held by the caller).
pub fn newest(
    store: &Store,
    cache: &mut Option<Option<Head>>,
) -> Result<Option<CheckpointId>, CheckpointError> {
    Ok(head(store, cache)?.as_ref().map(|h| h.id.clone()))
}

/// The newest checkpoint, read from the store once and then kept.
fn head<'a>(
    store: &Store,
    cache: &'a mut Option<Option<Head>>,
) -> Result<&'a Option<Head>, CheckpointError> {
    if cache.is_none() {
        let out = store
            .git
            .run_status(Call::new(["cat-file", "commit", HEAD_REF]))?;
        let head = if out.code == Some(0) {
            let id = git::first_line(&store.git.run(Call::new([
                "rev-parse",
                "--verify",
                "--quiet",
                HEAD_REF,
            ]))?);
            let (tree, skipped) = parse_commit(&out.stdout)?;
            Some(Head {
                id: CheckpointId::parse(&id)?,
                tree,
                skipped,
            })
        } else {
            None
        };
        *cache = Some(head);
    }
    Ok(cache.as_ref().unwrap_or(&None))
}

/// Takes a checkpoint (the store's lock held by the caller).
pub fn checkpoint(
    store: &Store,
    cache: &mut Option<Option<Head>>,
    label: &str,
) -> Result<Checkpoint, CheckpointError> {
    let staged = stage(store)?;
    if let Some(head) = head(store, cache)?
        && head.tree == staged.tree
        && head.skipped == staged.skipped
    {
        return Ok(Checkpoint {
            id: head.id.clone(),
            tree: head.tree.clone(),
            changed: false,
            skipped: staged.skipped,
        });
    }
    let secs = store.clock.unix_ms() / 1000;
    let date = format!("@{secs} +0000");
    let mut call = Call::new(["commit-tree", staged.tree.as_str()])
        .stdin(commit_message(label, &staged.skipped).into_bytes());
    call.env = vec![
        ("GIT_AUTHOR_DATE", date.clone()),
        ("GIT_COMMITTER_DATE", date),
    ];
    let id = CheckpointId::parse(&git::first_line(&store.git.run(call)?))?;
    for name in [format!("{CP_PREFIX}{id}"), HEAD_REF.to_string()] {
        write_ref(store.git.git_dir(), &name, &id).map_err(|source| CheckpointError::Store {
            path: store.git.git_dir().join(&name),
            source,
        })?;
    }
    *cache = Some(Some(Head {
        id: id.clone(),
        tree: staged.tree.clone(),
        skipped: staged.skipped.clone(),
    }));
    Ok(Checkpoint {
        id,
        tree: staged.tree,
        changed: true,
        skipped: staged.skipped,
    })
}

/// Points a loose ref of the store at `id` as git does (`<ref>.lock` created exclusively,
/// then renamed over): a git process spared per checkpoint. A loose ref wins over a packed
/// one, and git deletes both (`update-ref`, prune).
fn write_ref(git_dir: &Path, name: &str, id: &CheckpointId) -> std::io::Result<()> {
    let path = git_dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut lock_name = path.clone().into_os_string();
    lock_name.push(".lock");
    let lock = PathBuf::from(lock_name);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&lock)?;
    let written = std::io::Write::write_all(&mut file, format!("{id}\n").as_bytes());
    drop(file);
    match written.and_then(|()| std::fs::rename(&lock, &path)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = std::fs::remove_file(&lock);
            Err(e)
        }
    }
}

/// Brings the store's index up to the workspace (within the caps) and writes its tree.
pub fn stage(store: &Store) -> Result<Staged, CheckpointError> {
    let git = &store.git;
    // The two listings (a walk of the directories, a `stat` of every tracked file) run side
    // by side: on two cores that is most of a checkpoint's time halved.
    let (untracked, changed) = std::thread::scope(|scope| {
        let walk = scope.spawn(|| {
            git.run(Call::new([
                "ls-files",
                "-z",
                "--others",
                "--exclude-standard",
            ]))
        });
        let changed = git.run(Call::new([
            "diff-files",
            "-z",
            "--name-only",
            "--no-renames",
        ]));
        let untracked = walk
            .join()
            .unwrap_or_else(|_| Err(CheckpointError::Background("ls-files".into())));
        (untracked, changed)
    });
    let (untracked, changed) = (untracked?, changed?);
    let mut candidates: Vec<(&[u8], bool)> = git::split_z(&untracked)
        .map(|p| (p, false))
        .chain(git::split_z(&changed).map(|p| (p, true)))
        .collect();
    candidates.sort_unstable();
    candidates.dedup_by(|a, b| a.0 == b.0);
    let mut update = Vec::new();
    let mut remove = Vec::new();
    let mut skipped = Vec::new();
    let mut total = 0u64;
    let limits = store.limits;
    for (raw, tracked) in candidates {
        if let Some(dir) = raw.strip_suffix(b"/") {
            skipped.push(skip(dir, SkipReason::NestedRepository));
            continue;
        }
        let full = store.workspace.join(OsStr::from_bytes(raw));
        let push = |list: &mut Vec<u8>| {
            list.extend_from_slice(raw);
            list.push(0);
        };
        let meta = match std::fs::symlink_metadata(&full) {
            Ok(meta) => meta,
            // Gone (or unreadable): git drops it from the index.
            Err(_) => {
                push(&mut update);
                continue;
            }
        };
        let kind = meta.file_type();
        let reason = if kind.is_symlink() {
            None
        } else if kind.is_dir() {
            // A tracked file became a directory: its entry goes, its files come as untracked.
            push(&mut remove);
            continue;
        } else if !kind.is_file() {
            Some(SkipReason::Special)
        } else if meta.len() > limits.max_file_bytes {
            Some(SkipReason::TooLarge { bytes: meta.len() })
        } else if total.saturating_add(meta.len()) > limits.max_total_bytes {
            Some(SkipReason::OverTotal { bytes: meta.len() })
        } else {
            total += meta.len();
            None
        };
        match reason {
            None => push(&mut update),
            Some(reason) => {
                skipped.push(skip(raw, reason));
                if tracked {
                    push(&mut remove);
                }
            }
        }
    }
    for (list, flags) in [
        (&update, ["--add", "--remove"]),
        (&remove, ["--force-remove", "--"]),
    ] {
        if !list.is_empty() {
            let mut args = vec!["update-index", "-z"];
            args.extend(flags.iter().filter(|f| **f != "--"));
            args.push("--stdin");
            git.run(Call::new(args).stdin(list.clone()).bulk())?;
        }
    }
    // Nothing to stage and the index as it was when its tree was last written: same tree.
    let index = index_stamp(store);
    let cached = store.staged.lock().map(|c| c.clone()).unwrap_or(None);
    let tree = match cached {
        Some((stamp, tree)) if update.is_empty() && remove.is_empty() && Some(stamp) == index => {
            tree
        }
        _ => {
            let tree = TreeId(git::first_line(&git.run(Call::new(["write-tree"]).bulk())?));
            if let (Some(stamp), Ok(mut cache)) = (index_stamp(store), store.staged.lock()) {
                *cache = Some((stamp, tree.clone()));
            }
            tree
        }
    };
    skipped.sort();
    Ok(Staged { tree, skipped })
}

/// What identifies a version of the store's index file (it is replaced, never rewritten in
/// place, so a new version has a new inode or mtime).
pub type IndexStamp = (u64, u64, i64, i64);

fn index_stamp(store: &Store) -> Option<IndexStamp> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(store.dir.join("index")).ok()?;
    Some((meta.ino(), meta.size(), meta.mtime(), meta.mtime_nsec()))
}

fn skip(raw: &[u8], reason: SkipReason) -> Skipped {
    Skipped {
        path: PathBuf::from(OsStr::from_bytes(raw)),
        reason,
    }
}

/// The tree of a checkpoint of this store.
pub fn tree_of(git: &Git, id: &CheckpointId) -> Result<TreeId, CheckpointError> {
    Ok(read_commit(git, id)?.0)
}

/// A checkpoint's tree and skipped list.
pub fn read_commit(
    git: &Git,
    id: &CheckpointId,
) -> Result<(TreeId, Vec<Skipped>), CheckpointError> {
    let out = git.run_status(Call::new(["cat-file", "commit", id.as_str()]))?;
    if out.code != Some(0) {
        return Err(CheckpointError::UnknownCheckpoint(id.to_string()));
    }
    parse_commit(&out.stdout)
}

fn parse_commit(bytes: &[u8]) -> Result<(TreeId, Vec<Skipped>), CheckpointError> {
    let bad = |detail: &str| CheckpointError::Parse {
        command: "git cat-file commit",
        detail: detail.to_string(),
    };
    let text = String::from_utf8_lossy(bytes);
    let tree = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("tree "))
        .filter(|t| super::is_object_id(t))
        .ok_or_else(|| bad("no tree"))?;
    let skipped = text
        .lines()
        .filter_map(|l| l.strip_prefix(SKIPPED_LINE))
        .filter_map(parse_skipped)
        .collect();
    Ok((TreeId(tree.to_string()), skipped))
}

/// The commit message: the label, then one line per skipped path (its bytes in hex, so any
/// name survives).
fn commit_message(label: &str, skipped: &[Skipped]) -> String {
    let label: String = label
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(MAX_LABEL)
        .collect();
    let label = if label.trim().is_empty() {
        "checkpoint"
    } else {
        label.trim()
    };
    let mut message = format!("{label}\n");
    if !skipped.is_empty() {
        message.push('\n');
    }
    for s in skipped {
        let (kind, bytes) = match s.reason {
            SkipReason::TooLarge { bytes } => ("too-large", bytes),
            SkipReason::OverTotal { bytes } => ("over-total", bytes),
            SkipReason::NestedRepository => ("nested-repository", 0),
            SkipReason::Special => ("special", 0),
        };
        let hex: String = s
            .path
            .as_os_str()
            .as_bytes()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        message.push_str(&format!("{SKIPPED_LINE}{kind} {bytes} {hex}\n"));
    }
    message
}

fn parse_skipped(line: &str) -> Option<Skipped> {
    let mut words = line.split(' ');
    let (kind, bytes, hex) = (words.next()?, words.next()?, words.next()?);
    let bytes: u64 = bytes.parse().ok()?;
    let reason = match kind {
        "too-large" => SkipReason::TooLarge { bytes },
        "over-total" => SkipReason::OverTotal { bytes },
        "nested-repository" => SkipReason::NestedRepository,
        "special" => SkipReason::Special,
        _ => return None,
    };
    let raw: Option<Vec<u8>> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect();
    Some(skip(&raw?, reason))
}

/// Whether `path` is on a skipped list.
pub fn is_skipped(list: &[Skipped], path: &Path) -> bool {
    list.iter().any(|s| s.path == path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_round_trips_skipped_paths_of_any_bytes() {
        let skipped = vec![
            skip(b"a b/\xff\nodd", SkipReason::TooLarge { bytes: 9 }),
            skip(b"nested", SkipReason::NestedRepository),
        ];
        let message = commit_message("edit\nfile\u{7}", &skipped);
        assert!(
            message.starts_with("edit file\n\ntaco-skipped "),
            "{message}"
        );
        let commit = format!("tree {}\nauthor x\n\n{message}", "a".repeat(40));
        let (tree, back) = parse_commit(commit.as_bytes()).unwrap();
        assert_eq!(tree.as_str(), "a".repeat(40));
        assert_eq!(back, skipped);
    }
}
