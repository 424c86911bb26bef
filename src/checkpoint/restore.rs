//! Rewinding the files: a plan (what a restore to a checkpoint would write and delete, and
//! which of those files were changed by hand since taco's newest checkpoint), then the
//! restore itself, after a checkpoint that undoes it.

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use super::changes::{self, FileChange, FileMode};
use super::git::{self, Call, Git};
use super::snapshot::{self, Head};
use super::{CheckpointError, CheckpointId, Store, TreeId, paths};

/// Most bytes of file contents read from the store in one `git cat-file` call.
const BATCH_BYTES: u64 = 64 << 20;

/// What a restore does to one path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Write the checkpoint's version (created if absent).
    Write {
        /// Workspace-relative.
        path: PathBuf,
        /// Its mode in the checkpoint.
        mode: FileMode,
        /// Its blob in the store.
        blob: String,
    },
    /// Delete it: the checkpoint does not have it.
    Delete {
        /// Workspace-relative.
        path: PathBuf,
    },
}

impl Action {
    /// The path it acts on.
    pub fn path(&self) -> &std::path::Path {
        match self {
            Self::Write { path, .. } | Self::Delete { path } => path,
        }
    }
}

/// Why a file a restore would overwrite counts as the user's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandEditKind {
    /// Changed since taco's newest checkpoint (by hand, or by anything not taco's).
    Edited,
    /// Its current version is in no checkpoint (over a cap): overwriting it would lose it.
    NotCheckpointed,
}

/// A file a restore would overwrite or delete that holds changes taco did not record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandEdit {
    /// Workspace-relative.
    pub path: PathBuf,
    /// Why it is the user's.
    pub kind: HandEditKind,
}

/// What a rewind to a checkpoint would change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestorePlan {
    /// The checkpoint to go back to.
    pub target: CheckpointId,
    /// The workspace when the plan was made (for diffs: `Point::Tree(plan.now)`).
    pub now: TreeId,
    /// The checkpoint's files.
    pub target_tree: TreeId,
    /// Per file, from the workspace now to the checkpoint (for the overlay).
    pub changes: Vec<FileChange>,
    /// What the restore does, deletions first.
    pub actions: Vec<Action>,
    /// Files among `actions` changed by hand: kept unless overwriting is asked.
    pub hand_edits: Vec<HandEdit>,
}

/// What a restore did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestoreReport {
    /// The checkpoint taken before anything was touched: restoring it undoes the rewind.
    pub undo: CheckpointId,
    /// The checkpoint of the files after the restore (taco's newest).
    pub after: CheckpointId,
    /// Files written.
    pub written: Vec<PathBuf>,
    /// Files deleted.
    pub deleted: Vec<PathBuf>,
    /// Hand-edited files left as they were.
    pub kept: Vec<PathBuf>,
    /// Files that could not be restored, and why.
    pub failed: Vec<(PathBuf, String)>,
}

/// Plans a restore to `target` (the store's lock held).
pub fn plan(
    store: &Store,
    target: &CheckpointId,
    last_known: &CheckpointId,
) -> Result<RestorePlan, CheckpointError> {
    let (target_tree, target_skipped) = snapshot::read_commit(&store.git, target)?;
    let known_tree = snapshot::tree_of(&store.git, last_known)?;
    let staged = snapshot::stage(store)?;
    let now = staged.tree;
    let changes = changes::between(&store.git, &now, &target_tree)?;
    let mut actions = Vec::new();
    for entry in raw_entries(&store.git, &now, &target_tree)? {
        let RawEntry { path, mode, blob } = entry;
        match mode {
            Some(FileMode::Gitlink) => {}
            Some(mode) => actions.push(Action::Write { path, mode, blob }),
            // The checkpoint skipped it: what it held then is unknown, so it stays.
            None if snapshot::is_skipped(&target_skipped, &path) => {}
            None => actions.push(Action::Delete { path }),
        }
    }
    actions.sort_by_key(|a| (matches!(a, Action::Write { .. }), a.path().to_path_buf()));
    let edited = changed_paths(&store.git, &known_tree, &now)?;
    let hand_edits = actions
        .iter()
        .filter_map(|action| {
            let path = action.path();
            let kind = if edited.contains(path) {
                HandEditKind::Edited
            } else if snapshot::is_skipped(&staged.skipped, path) {
                HandEditKind::NotCheckpointed
            } else {
                return None;
            };
            Some(HandEdit {
                path: path.to_path_buf(),
                kind,
            })
        })
        .collect();
    Ok(RestorePlan {
        target: target.clone(),
        now,
        target_tree,
        changes,
        actions,
        hand_edits,
    })
}

/// Carries out `plan` (the store's lock held).
pub fn run(
    store: &Store,
    head: &mut Option<Option<Head>>,
    plan: &RestorePlan,
    overwrite_hand_edits: bool,
) -> Result<RestoreReport, CheckpointError> {
    let undo = snapshot::checkpoint(
        store,
        head,
        &format!("before rewind to {}", plan.target.short()),
    )?;
    // Files changed between the plan and now are the user's too.
    let drifted = if undo.tree == plan.now {
        BTreeSet::new()
    } else {
        changed_paths(&store.git, &plan.now, &undo.tree)?
    };
    let keep: BTreeSet<PathBuf> = if overwrite_hand_edits {
        BTreeSet::new()
    } else {
        plan.hand_edits
            .iter()
            .map(|h| h.path.clone())
            .chain(drifted)
            .collect()
    };
    let mut report = RestoreReport {
        undo: undo.id,
        after: plan.target.clone(),
        written: Vec::new(),
        deleted: Vec::new(),
        kept: Vec::new(),
        failed: Vec::new(),
    };
    let mut writes = Vec::new();
    for action in &plan.actions {
        if keep.contains(action.path()) {
            report.kept.push(action.path().to_path_buf());
            continue;
        }
        match action {
            Action::Delete { path } => match paths::delete(&store.workspace, path) {
                Ok(()) => report.deleted.push(path.clone()),
                Err(e) => report.failed.push((path.clone(), e.to_string())),
            },
            Action::Write { path, mode, blob } => writes.push((path, *mode, blob.as_str())),
        }
    }
    for batch in batches(&store.git, &writes)? {
        let blobs: Vec<&str> = batch.iter().map(|(_, _, blob)| *blob).collect();
        let contents = read_blobs(&store.git, &blobs)?;
        for ((path, mode, _), content) in batch.iter().zip(contents) {
            match paths::write(&store.workspace, path, *mode, &content) {
                Ok(()) => report.written.push((*path).clone()),
                Err(e) => report.failed.push(((*path).clone(), e.to_string())),
            }
        }
    }
    let after = snapshot::checkpoint(store, head, &format!("rewound to {}", plan.target.short()))?;
    report.after = after.id;
    Ok(report)
}

/// One path of `diff-tree --raw a b`: its mode and blob in `b` (`None`: not in `b`).
struct RawEntry {
    path: PathBuf,
    mode: Option<FileMode>,
    blob: String,
}

fn raw_entries(git: &Git, a: &TreeId, b: &TreeId) -> Result<Vec<RawEntry>, CheckpointError> {
    if a == b {
        return Ok(Vec::new());
    }
    let out = git.run(Call::new([
        "diff-tree",
        "-r",
        "-z",
        "--no-renames",
        "--raw",
        a.as_str(),
        b.as_str(),
    ]))?;
    let mut records = git::split_z(&out);
    let mut entries = Vec::new();
    while let (Some(meta), Some(path)) = (records.next(), records.next()) {
        let fields: Vec<&[u8]> = meta.split(|b| *b == b' ').collect();
        let (Some(mode), Some(blob)) = (fields.get(1), fields.get(3)) else {
            return Err(CheckpointError::Parse {
                command: "git diff-tree --raw",
                detail: "short record".into(),
            });
        };
        let path = PathBuf::from(OsStr::from_bytes(path));
        paths::check(&path)?;
        entries.push(RawEntry {
            path,
            mode: FileMode::parse(mode),
            blob: String::from_utf8_lossy(blob).into_owned(),
        });
    }
    Ok(entries)
}

/// The paths that differ between two trees.
fn changed_paths(git: &Git, a: &TreeId, b: &TreeId) -> Result<BTreeSet<PathBuf>, CheckpointError> {
    if a == b {
        return Ok(BTreeSet::new());
    }
    let out = git.run(Call::new([
        "diff-tree",
        "-r",
        "-z",
        "--no-renames",
        "--name-only",
        a.as_str(),
        b.as_str(),
    ]))?;
    Ok(git::split_z(&out)
        .map(|p| PathBuf::from(OsStr::from_bytes(p)))
        .collect())
}

type Write<'a> = (&'a PathBuf, FileMode, &'a str);

/// The writes in groups whose contents fit [`BATCH_BYTES`] (a bigger file goes alone).
fn batches<'a>(git: &Git, writes: &[Write<'a>]) -> Result<Vec<Vec<Write<'a>>>, CheckpointError> {
    if writes.is_empty() {
        return Ok(Vec::new());
    }
    let input: String = writes
        .iter()
        .map(|(_, _, blob)| format!("{blob}\n"))
        .collect();
    let out = git.run(
        Call::new(["cat-file", "--batch-check=%(objectsize)"])
            .stdin(input.into_bytes())
            .bulk(),
    )?;
    let sizes: Vec<u64> = String::from_utf8_lossy(&out)
        .lines()
        .map(|l| l.trim().parse().unwrap_or(u64::MAX))
        .collect();
    let mut groups: Vec<Vec<Write<'a>>> = vec![Vec::new()];
    let mut used = 0u64;
    for (write, size) in writes.iter().zip(sizes) {
        if used > 0 && used.saturating_add(size) > BATCH_BYTES {
            groups.push(Vec::new());
            used = 0;
        }
        used = used.saturating_add(size);
        if let Some(last) = groups.last_mut() {
            last.push(*write);
        }
    }
    Ok(groups)
}

/// The contents of `blobs`, in order (`git cat-file --batch`: `<id> blob <size>\n<bytes>\n`).
fn read_blobs(git: &Git, blobs: &[&str]) -> Result<Vec<Vec<u8>>, CheckpointError> {
    let input: String = blobs.iter().map(|b| format!("{b}\n")).collect();
    let mut call = Call::new(["cat-file", "--batch"])
        .stdin(input.into_bytes())
        .bulk();
    call.cap = usize::MAX / 2;
    let out = git.run(call)?;
    let bad = |detail: &str| CheckpointError::Parse {
        command: "git cat-file --batch",
        detail: detail.to_string(),
    };
    let mut rest = out.as_slice();
    let mut contents = Vec::with_capacity(blobs.len());
    for _ in blobs {
        let end = rest
            .iter()
            .position(|b| *b == b'\n')
            .ok_or_else(|| bad("no header"))?;
        let header = String::from_utf8_lossy(&rest[..end]).into_owned();
        let size: usize = header
            .rsplit(' ')
            .next()
            .and_then(|s| s.parse().ok())
            .filter(|_| header.contains(" blob "))
            .ok_or_else(|| bad(&header))?;
        let body = rest
            .get(end + 1..end + 1 + size)
            .ok_or_else(|| bad("short body"))?;
        contents.push(body.to_vec());
        rest = rest.get(end + 2 + size..).unwrap_or(&[]);
    }
    Ok(contents)
}
