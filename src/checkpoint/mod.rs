//! Checkpoints of the workspace's files (issue 29): a shadow store outside the workspace, one
//! git repository per workspace under taco's state dir, driven by the `git` binary with its
//! own index and a scrubbed environment. The user's own `.git` is never opened: git is told
//! where the store is (`GIT_DIR`), where the files are (`GIT_WORK_TREE`) and which index to
//! use (`GIT_INDEX_FILE`), and it never writes or descends into a directory named `.git`.
//!
//! A checkpoint is a root commit (no parent, so pruning by age frees space) kept alive by
//! `refs/taco/cp/<id>`; `refs/taco/head` names the newest. Its tree holds what the
//! workspace's `.gitignore` files keep, within [`Limits`]; what was left out is listed in the
//! checkpoint and in its commit message. Unchanged files cost a `stat` (git's index), and a
//! checkpoint that finds nothing changed writes no object. See docs/ARCHITECTURE.md.

mod changes;
mod config;
mod error;
mod git;
mod maint;
mod paths;
mod restore;
mod snapshot;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, TryLockError};

pub use changes::{ChangeKind, FileChange, FileDiff, FileMode};
pub use config::{
    CheckpointConfig, DEFAULT_KEEP_DAYS, DEFAULT_MAX_FILE_MB, DEFAULT_MAX_TOTAL_MB, Limits,
};
pub use error::CheckpointError;
pub use maint::{CheckpointInfo, PruneReport};
pub use restore::{Action, HandEdit, HandEditKind, RestorePlan, RestoreReport};
pub use snapshot::{Checkpoint, SkipReason, Skipped};

use crate::clock::Clock;
use git::Git;
use snapshot::Head;

/// The ref naming the newest checkpoint.
const HEAD_REF: &str = "refs/taco/head";
/// Each checkpoint's own ref is this prefix and its id.
const CP_PREFIX: &str = "refs/taco/cp/";

/// A checkpoint's id: the hex id of its commit in the store.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CheckpointId(String);

impl CheckpointId {
    /// An id from text (a session file, a command line): 40 or 64 lowercase hex digits.
    pub fn parse(text: &str) -> Result<Self, CheckpointError> {
        if is_object_id(text) {
            Ok(Self(text.to_string()))
        } else {
            Err(CheckpointError::UnknownCheckpoint(
                text.chars().take(80).collect(),
            ))
        }
    }

    /// The hex id.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The first 8 digits, for display.
    pub fn short(&self) -> &str {
        self.0.get(..8).unwrap_or(&self.0)
    }
}

impl std::fmt::Display for CheckpointId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A tree in the store: the files of a checkpoint, or of the workspace at some moment.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TreeId(String);

impl TreeId {
    /// The hex id.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// One side of a comparison.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Point {
    /// A checkpoint.
    Checkpoint(CheckpointId),
    /// A tree already in the store ([`RestorePlan::now`]).
    Tree(TreeId),
    /// The workspace as it is now (its files are staged in the store, without a checkpoint).
    Workspace,
}

/// The checkpoint store of one workspace.
#[derive(Debug)]
pub struct Store {
    git: Git,
    workspace: PathBuf,
    dir: PathBuf,
    limits: Limits,
    clock: Arc<dyn Clock>,
    /// The newest checkpoint as last read or made (`None` until read); held while the
    /// store's index is in use, so one operation at a time.
    head: Mutex<Option<Option<Head>>>,
    /// The tree last written and the index it was written from: when nothing is to be
    /// staged and the index is the same file, the tree is too (no `write-tree`).
    staged: Mutex<Option<(snapshot::IndexStamp, TreeId)>>,
}

impl Store {
    /// The store of `workspace` under taco's state dir (`<state>/checkpoints/<hash>`).
    pub fn open(
        workspace: &Path,
        limits: Limits,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, CheckpointError> {
        let state = crate::audit::state_dir().ok_or(CheckpointError::NoStateDir)?;
        // Each level is made and checked before the next: a state dir that is a symlink
        // gets nothing written through it.
        crate::private::PrivateDir::create(&state).map_err(|source| CheckpointError::Store {
            path: state.clone(),
            source,
        })?;
        Self::open_in(&state.join("checkpoints"), workspace, limits, clock)
    }

    /// The store of `workspace` under `root` (tests, and a state dir chosen by the caller).
    pub fn open_in(
        root: &Path,
        workspace: &Path,
        limits: Limits,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, CheckpointError> {
        let bin = Git::locate(std::env::var_os("PATH"))?;
        let workspace =
            std::fs::canonicalize(workspace).map_err(|source| CheckpointError::Workspace {
                path: workspace.to_path_buf(),
                source,
            })?;
        if !workspace.is_dir() {
            return Err(CheckpointError::Workspace {
                path: workspace,
                source: std::io::Error::other("not a directory"),
            });
        }
        let dir = root.join(workspace_key(&workspace));
        crate::private::PrivateDir::create(root).map_err(|source| CheckpointError::Store {
            path: root.to_path_buf(),
            source,
        })?;
        let store_err = |source| CheckpointError::Store {
            path: dir.clone(),
            source,
        };
        let private = crate::private::PrivateDir::create(&dir).map_err(store_err)?;
        let git = Git::new(
            bin,
            dir.join("repo.git"),
            workspace.clone(),
            dir.join("index"),
        );
        snapshot::init(&git, &private).map_err(|e| match e {
            snapshot::InitError::Io(source) => store_err(source),
            snapshot::InitError::Git(e) => e,
        })?;
        Ok(Self {
            git,
            workspace,
            dir,
            limits,
            clock,
            head: Mutex::new(None),
            staged: Mutex::new(None),
        })
    }

    /// Stops what runs in the store now (the first snapshot in the background) and refuses
    /// what comes later: taco is quitting.
    pub fn close(&self) {
        self.git.close();
    }

    /// The workspace (canonical).
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// The store's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The caps in force.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Records the workspace's files; nothing changed → the newest checkpoint, `changed`
    /// false, no new object. Blocks while another operation on this store runs.
    pub fn checkpoint(&self, label: &str) -> Result<Checkpoint, CheckpointError> {
        let mut head = self.lock();
        snapshot::checkpoint(self, &mut head, label)
    }

    /// Like [`Store::checkpoint`], but [`CheckpointError::Busy`] at once while another
    /// operation runs (the first snapshot of a large workspace, in the background).
    pub fn try_checkpoint(&self, label: &str) -> Result<Checkpoint, CheckpointError> {
        let mut head = match self.head.try_lock() {
            Ok(guard) => guard,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => return Err(CheckpointError::Busy),
        };
        snapshot::checkpoint(self, &mut head, label)
    }

    /// Takes a checkpoint on a blocking thread: the first snapshot of a large workspace
    /// (every file hashed) runs there while the caller goes on; later calls that must not
    /// wait use [`Store::try_checkpoint`].
    pub fn spawn_checkpoint(
        self: &Arc<Self>,
        label: String,
    ) -> tokio::task::JoinHandle<Result<Checkpoint, CheckpointError>> {
        let store = Arc::clone(self);
        tokio::task::spawn_blocking(move || store.checkpoint(&label))
    }

    /// Per file, what changed from `from` to `to` (lines added and removed, binary flagged).
    pub fn changes(&self, from: &Point, to: &Point) -> Result<Vec<FileChange>, CheckpointError> {
        let _one_at_a_time = self.lock();
        let a = self.resolve(from)?;
        let b = self.resolve(to)?;
        changes::between(&self.git, &a, &b)
    }

    /// The unified diff of one file from `from` to `to`, cut at `max_bytes`.
    pub fn file_diff(
        &self,
        from: &Point,
        to: &Point,
        path: &Path,
        max_bytes: usize,
    ) -> Result<FileDiff, CheckpointError> {
        let _one_at_a_time = self.lock();
        let a = self.resolve(from)?;
        let b = self.resolve(to)?;
        changes::file_diff(&self.git, &a, &b, path, max_bytes)
    }

    /// What rewinding to `target` would change, and the files edited by hand since
    /// `last_known` (taco's newest checkpoint) that it would overwrite.
    pub fn plan_restore(
        &self,
        target: &CheckpointId,
        last_known: &CheckpointId,
    ) -> Result<RestorePlan, CheckpointError> {
        let _one_at_a_time = self.lock();
        restore::plan(self, target, last_known)
    }

    /// Carries out a plan: a checkpoint first (the undo), then the files written and deleted;
    /// hand-edited files are kept unless `overwrite_hand_edits`.
    pub fn restore(
        &self,
        plan: &RestorePlan,
        overwrite_hand_edits: bool,
    ) -> Result<RestoreReport, CheckpointError> {
        let mut head = self.lock();
        restore::run(self, &mut head, plan, overwrite_hand_edits)
    }

    /// The newest checkpoint (taco's last record of the workspace), if any.
    pub fn newest(&self) -> Result<Option<CheckpointId>, CheckpointError> {
        let mut head = self.lock();
        snapshot::newest(self, &mut head)
    }

    /// The checkpoints kept, oldest first.
    pub fn list(&self) -> Result<Vec<CheckpointInfo>, CheckpointError> {
        let _head = self.lock();
        maint::list(&self.git)
    }

    /// Bytes the store takes on disk.
    pub fn size(&self) -> u64 {
        maint::dir_size(&self.dir)
    }

    /// Drops checkpoints older than `keep_days` (never the newest), then the objects only
    /// they held.
    pub fn prune(&self, keep_days: u64) -> Result<PruneReport, CheckpointError> {
        let mut head = self.lock();
        let now_secs = self.clock.unix_ms() / 1000;
        let report = maint::prune(self, now_secs, keep_days)?;
        *head = None;
        Ok(report)
    }

    fn lock(&self) -> MutexGuard<'_, Option<Option<Head>>> {
        self.head.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The tree of a point (the store's lock held: staging uses the index).
    fn resolve(&self, point: &Point) -> Result<TreeId, CheckpointError> {
        match point {
            Point::Checkpoint(id) => snapshot::tree_of(&self.git, id),
            Point::Tree(tree) => Ok(tree.clone()),
            Point::Workspace => Ok(snapshot::stage(self)?.tree),
        }
    }
}

/// The store's directory name for a workspace: a hash of its canonical path.
fn workspace_key(workspace: &Path) -> String {
    use sha2::Digest;
    use std::os::unix::ffi::OsStrExt;
    let digest = sha2::Sha256::digest(workspace.as_os_str().as_bytes());
    digest.iter().take(16).map(|b| format!("{b:02x}")).collect()
}

/// 40 (SHA-1) or 64 (SHA-256) lowercase hex digits.
fn is_object_id(text: &str) -> bool {
    matches!(text.len(), 40 | 64) && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}
