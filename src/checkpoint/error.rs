//! What can go wrong with checkpoints, said so the caller can show it and go on without them.

use std::path::PathBuf;
use std::time::Duration;

/// A checkpoint store's failure.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// No `git` binary: the caller turns checkpoints off and says why.
    #[error(
        "checkpoints are off: the `git` program was not found on PATH (taco keeps checkpoints \
         in a git repository of its own; install git to be able to rewind)"
    )]
    GitMissing,
    /// No state directory to keep the store in.
    #[error("checkpoints are off: no state directory (HOME is not set)")]
    NoStateDir,
    /// The workspace is not a directory that can be opened.
    #[error("checkpoints are off: the workspace {path} cannot be used: {source}")]
    Workspace {
        /// The workspace as given.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The store's directory could not be made or opened.
    #[error("checkpoint store {path}: {source}")]
    Store {
        /// The store's directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// `git` could not be started or its pipes failed.
    #[error("could not run git: {0}")]
    Spawn(std::io::Error),
    /// A git command failed.
    #[error("{command} failed: {message}")]
    Git {
        /// The command (its first words).
        command: String,
        /// git's own message.
        message: String,
    },
    /// A git command ran past its time bound and was killed.
    #[error("{command} took longer than {after:?} and was stopped")]
    Timeout {
        /// The command.
        command: String,
        /// Its bound.
        after: Duration,
    },
    /// A git command printed more than its bound.
    #[error("{command} printed more than {cap} bytes and was stopped")]
    OutputTooLong {
        /// The command.
        command: String,
        /// Its bound.
        cap: usize,
    },
    /// git printed something that is not what was asked for.
    #[error("unexpected output from {command}: {detail}")]
    Parse {
        /// The command.
        command: &'static str,
        /// What was wrong.
        detail: String,
    },
    /// An id that names no checkpoint of this store.
    #[error("no checkpoint {0} in this workspace's store")]
    UnknownCheckpoint(String),
    /// A path that is not a plain workspace-relative path.
    #[error("refused path {path:?}: {why}")]
    BadPath {
        /// The path as found.
        path: String,
        /// Why it is refused.
        why: &'static str,
    },
    /// Another checkpoint of this workspace is being taken (the first snapshot, say).
    #[error("a checkpoint of this workspace is being taken")]
    Busy,
    /// taco is closing the store: what ran was stopped.
    #[error("the checkpoint store was closed (taco is quitting)")]
    Closed,
    /// A background task ended without an answer (it panicked or was cancelled).
    #[error("background checkpoint did not finish: {0}")]
    Background(String),
}
