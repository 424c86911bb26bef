//! The events of rewind (issue 29): a checkpoint taken before calls that may change the
//! workspace (`checkpoint`), what a run changed (`files_changed`), a rewind (`rewound`), and
//! what a rewind or a diff view asked to see (`listed`, live only).

use serde::{Deserialize, Serialize};

use crate::checkpoint::{ChangeKind, FileChange};

/// Most skipped paths an event names (the rest are counted).
pub const MAX_NAMED: usize = 20;
/// Most files a `files_changed` event or a preview lists (the rest are counted; the totals
/// count them all).
pub const MAX_FILES: usize = 1000;

/// `checkpoint`: the workspace's files were recorded before `calls` ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckpointTaken {
    /// The checkpoint's id (a commit in the store); `None` when none could be taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The calls (frame ids) it stands before; empty at a run's end.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<String>,
    /// Whether it is new (false: the workspace was as the previous one has it).
    pub changed: bool,
    /// Paths it left out (too large, over the total, another repository), the first
    /// [`MAX_NAMED`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
    /// How many paths it left out in all.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub skipped_count: usize,
    /// Why no checkpoint was taken (the calls ran without one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// How a file changed, as events say it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// Created.
    Added,
    /// Changed.
    Modified,
    /// Deleted.
    Deleted,
}

/// One file's change, as events carry it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangedFile {
    /// Workspace-relative (lossy UTF-8).
    pub path: String,
    /// Created, changed or deleted.
    pub change: Change,
    /// Lines added.
    pub added: u64,
    /// Lines removed.
    pub removed: u64,
    /// No line counts: a binary file.
    #[serde(default, skip_serializing_if = "is_false")]
    pub binary: bool,
}

impl From<&FileChange> for ChangedFile {
    fn from(c: &FileChange) -> Self {
        Self {
            path: c.path.to_string_lossy().into_owned(),
            change: match c.kind {
                ChangeKind::Added => Change::Added,
                ChangeKind::Modified => Change::Modified,
                ChangeKind::Deleted => Change::Deleted,
            },
            added: c.added,
            removed: c.removed,
            binary: c.binary,
        }
    }
}

/// `files_changed`: what a run changed in the workspace, from the checkpoint before its
/// first change to the one at its end (shell commands' changes included).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FilesChanged {
    /// The checkpoint before the run's first call that could change files.
    pub from: String,
    /// The checkpoint at the run's end.
    pub to: String,
    /// Per file, by path.
    pub files: Vec<ChangedFile>,
    /// Lines added in all.
    pub added: u64,
    /// Lines removed in all.
    pub removed: u64,
    /// Files changed beyond the [`MAX_FILES`] listed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub omitted: usize,
}

impl FilesChanged {
    /// The event between two checkpoints, from the store's changes.
    pub fn new(from: String, to: String, changes: &[FileChange]) -> Self {
        Self {
            added: changes.iter().map(|f| f.added).sum(),
            removed: changes.iter().map(|f| f.removed).sum(),
            from,
            to,
            files: changes
                .iter()
                .take(MAX_FILES)
                .map(ChangedFile::from)
                .collect(),
            omitted: changes.len().saturating_sub(MAX_FILES),
        }
    }

    /// Files changed in all, listed or not.
    pub fn count(&self) -> usize {
        self.files.len() + self.omitted
    }

    /// `3 files changed (+40 −12)`.
    pub fn headline(&self) -> String {
        let n = self.count();
        format!(
            "{n} file{} changed (+{} −{})",
            if n == 1 { "" } else { "s" },
            self.added,
            self.removed
        )
    }
}

/// Where a rewind goes back to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "to", rename_all = "snake_case")]
pub enum RewindPoint {
    /// Just before a run (a user request): its first change, its prompt.
    Run {
        /// The run's request id.
        request_id: String,
    },
    /// Just before a call (by its frame id) of a run.
    Call {
        /// The run's request id.
        request_id: String,
        /// The call's frame id.
        call: String,
    },
    /// A checkpoint by id (the undo of a rewind).
    Checkpoint {
        /// Its id.
        id: String,
    },
}

impl RewindPoint {
    /// The run it names, if any (a checkpoint names none: no conversation goes with it).
    pub fn request_id(&self) -> Option<&str> {
        match self {
            Self::Run { request_id } | Self::Call { request_id, .. } => Some(request_id),
            Self::Checkpoint { .. } => None,
        }
    }
}

/// What a rewind takes back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RewindScope {
    /// The workspace's files.
    Files,
    /// The conversation (a fork of the session).
    Conversation,
    /// Both.
    Both,
}

impl RewindScope {
    /// Whether the files go back.
    pub fn files(self) -> bool {
        matches!(self, Self::Files | Self::Both)
    }

    /// Whether the conversation goes back.
    pub fn conversation(self) -> bool {
        matches!(self, Self::Conversation | Self::Both)
    }
}

/// A conversation fork: the session went on in a new file holding what came before.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fork {
    /// The session the later part stays in.
    pub from_session: String,
    /// The new session, holding the conversation up to the rewind point.
    pub session: String,
    /// The run the conversation went back to before (its prompt, shortened).
    pub prompt: String,
}

/// `rewound`: files and/or the conversation went back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rewound {
    /// Where to.
    pub point: RewindPoint,
    /// The checkpoint the files went back to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<String>,
    /// Files written or deleted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub restored: Vec<String>,
    /// Files changed by hand since taco's last checkpoint, kept as they are.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kept: Vec<String>,
    /// Files that could not be restored, with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<String>,
    /// The checkpoint taken just before: rewinding to it undoes this rewind's files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undo: Option<String>,
    /// The conversation's fork, when it went back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fork: Option<Fork>,
}

/// What a rewind would do, for the overlay (live only).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RewindPreview {
    /// The point asked about.
    pub point: RewindPoint,
    /// The files' side: `Err` says why they cannot go back (no checkpoint, checkpoints off).
    pub files: Result<FilesPreview, String>,
    /// The conversation's side: `Err` says why it cannot go back.
    pub conversation: Result<ConversationPreview, String>,
}

/// The files a rewind would restore.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FilesPreview {
    /// The checkpoint they go back to.
    pub checkpoint: String,
    /// Per file, from now to the checkpoint, with its diff (the first [`MAX_FILES`]).
    pub files: Vec<FileDiffView>,
    /// Files that would change beyond those listed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub omitted: usize,
    /// Files changed by hand since taco's last checkpoint (kept unless overwritten).
    pub hand_edits: Vec<String>,
}

/// One file of a preview or a diff view: its change and its unified diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileDiffView {
    /// The change.
    pub file: ChangedFile,
    /// The diff (cut; empty when not loaded: too many files).
    pub diff: String,
    /// The diff was cut.
    #[serde(default, skip_serializing_if = "is_false")]
    pub truncated: bool,
}

/// The conversation a rewind would go back to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConversationPreview {
    /// The prompt of the run it goes back to before (shortened).
    pub prompt: String,
    /// Runs that leave the conversation (they stay in the old session file).
    pub runs_dropped: usize,
}

/// A run's changes with their diffs (Ctrl-O on `✎ N files changed`), live only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangesView {
    /// From this checkpoint.
    pub from: String,
    /// To this one.
    pub to: String,
    /// Per file, with its diff; `Err` says why they could not be read.
    pub files: Result<Vec<FileDiffView>, String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

fn is_false(b: &bool) -> bool {
    !*b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_headline_counts_files_and_lines() {
        let f = |path: &str, added, removed| ChangedFile {
            path: path.into(),
            change: Change::Modified,
            added,
            removed,
            binary: false,
        };
        let event = FilesChanged {
            from: "a".into(),
            to: "b".into(),
            added: 40,
            removed: 12,
            files: vec![f("x", 30, 2), f("y", 10, 10), f("z", 0, 0)],
            omitted: 0,
        };
        assert_eq!(event.headline(), "3 files changed (+40 −12)");
        let one = FilesChanged {
            files: vec![f("x", 1, 0)],
            ..event.clone()
        };
        assert_eq!(one.headline(), "1 file changed (+40 −12)");
        let many = FilesChanged {
            omitted: 1200,
            ..event
        };
        assert_eq!(many.headline(), "1203 files changed (+40 −12)");
    }

    #[test]
    fn points_and_scopes_have_a_stable_shape() {
        let point = RewindPoint::Call {
            request_id: "r".into(),
            call: "c".into(),
        };
        assert_eq!(
            serde_json::to_value(&point).unwrap(),
            serde_json::json!({"to": "call", "request_id": "r", "call": "c"})
        );
        assert_eq!(point.request_id(), Some("r"));
        assert!(RewindScope::Both.files() && RewindScope::Both.conversation());
        assert!(!RewindScope::Files.conversation());
        assert!(!RewindScope::Conversation.files());
        assert_eq!(
            RewindPoint::Checkpoint { id: "x".into() }.request_id(),
            None
        );
    }
}
