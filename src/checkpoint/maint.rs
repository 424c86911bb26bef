//! Keeping the store in bounds: the list of checkpoints, the store's size, and pruning by age
//! (refs dropped, then `git gc` lets go of the objects only they held).

use std::path::Path;

use super::git::{Call, Git};
use super::{CP_PREFIX, CheckpointError, CheckpointId, HEAD_REF, Store};

/// One checkpoint kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointInfo {
    /// Its id.
    pub id: CheckpointId,
    /// When it was taken (Unix seconds).
    pub unix_secs: u64,
    /// Its label.
    pub label: String,
}

/// What a prune did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PruneReport {
    /// Checkpoints dropped.
    pub removed: usize,
    /// Checkpoints kept.
    pub kept: usize,
    /// The store's size before, in bytes.
    pub bytes_before: u64,
    /// And after.
    pub bytes_after: u64,
}

/// The checkpoints, oldest first.
pub fn list(git: &Git) -> Result<Vec<CheckpointInfo>, CheckpointError> {
    let out = git.run(Call::new([
        "for-each-ref",
        "--format=%(objectname)%00%(committerdate:unix)%00%(subject)",
        CP_PREFIX,
    ]))?;
    let mut list: Vec<CheckpointInfo> = String::from_utf8_lossy(&out)
        .lines()
        .filter_map(|line| {
            let mut fields = line.splitn(3, '\0');
            let id = CheckpointId::parse(fields.next()?).ok()?;
            let unix_secs = fields.next()?.parse().ok()?;
            let label = fields.next().unwrap_or("").to_string();
            Some(CheckpointInfo {
                id,
                unix_secs,
                label,
            })
        })
        .collect();
    list.sort_by(|a, b| (a.unix_secs, &a.id).cmp(&(b.unix_secs, &b.id)));
    Ok(list)
}

/// Drops checkpoints older than `keep_days` before `now_secs`, never the newest.
pub fn prune(store: &Store, now_secs: u64, keep_days: u64) -> Result<PruneReport, CheckpointError> {
    let git = &store.git;
    let bytes_before = dir_size(&store.dir);
    let newest = git.run_status(Call::new(["rev-parse", "--verify", "--quiet", HEAD_REF]))?;
    let newest = String::from_utf8_lossy(&newest.stdout).trim().to_string();
    let cutoff = now_secs.saturating_sub(keep_days.saturating_mul(86_400));
    let all = list(git)?;
    let (old, kept): (Vec<_>, Vec<_>) = all
        .into_iter()
        .partition(|cp| cp.unix_secs < cutoff && cp.id.as_str() != newest);
    if !old.is_empty() {
        let commands: String = old
            .iter()
            .map(|cp| format!("delete {CP_PREFIX}{id} {id}\n", id = cp.id.as_str()))
            .collect();
        git.run(Call::new(["update-ref", "--stdin"]).stdin(commands.into_bytes()))?;
        git.run(Call::new(["gc", "--quiet", "--prune=now"]).bulk())?;
    }
    Ok(PruneReport {
        removed: old.len(),
        kept: kept.len(),
        bytes_before,
        bytes_after: dir_size(&store.dir),
    })
}

/// Bytes of the files under `dir` (symlinks not followed).
pub fn dir_size(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            match entry.metadata() {
                Ok(meta) if meta.is_dir() => stack.push(entry.path()),
                Ok(meta) => total += meta.len(),
                Err(_) => {}
            }
        }
    }
    total
}
