//! Checkpoints for a session (issue 29): the workspace's store is opened at start, its
//! first snapshot and the pruning of old checkpoints run in the background, and the
//! orchestrator takes checkpoints in it; when they cannot be kept, the session says why once
//! and runs without them.

use std::sync::Arc;

use crate::checkpoint::Store;
use crate::clock::SystemClock;
use crate::config::Resolved;
use crate::orchestrator::Orchestrator;

/// Gives `orchestrator` the workspace's checkpoint store, or the reason it has none (also
/// added to `notes` when the user should hear it).
pub(super) fn attach(
    resolved: &Resolved,
    orchestrator: Orchestrator,
    notes: &mut Vec<String>,
) -> Orchestrator {
    let config = &resolved.checkpoints;
    if !config.enabled() {
        return orchestrator.without_checkpoints(
            "checkpoints are off ([checkpoints] enabled = false in the config)".to_string(),
        );
    }
    match Store::open(&resolved.workdir, config.limits(), Arc::new(SystemClock)) {
        Ok(store) => {
            let store = Arc::new(store);
            let background = Arc::clone(&store);
            let keep_days = config.keep_days();
            // The first snapshot hashes every file: it never delays the first call (which
            // goes without a checkpoint while it runs).
            tokio::task::spawn_blocking(move || {
                if let Err(e) = background.checkpoint("session start") {
                    tracing::warn!(error = %e, "the first checkpoint failed");
                }
                if let Err(e) = background.prune(keep_days) {
                    tracing::warn!(error = %e, "old checkpoints could not be pruned");
                }
            });
            orchestrator.with_checkpoints(store)
        }
        Err(e) => {
            let why = e.to_string();
            let why = if why.starts_with("checkpoints are off") {
                why
            } else {
                format!("checkpoints are off: {why}")
            };
            notes.push(why.clone());
            orchestrator.without_checkpoints(why)
        }
    }
}
