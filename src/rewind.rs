//! Rewind (issue 29): taking the workspace's files back to a checkpoint and/or the
//! conversation back to before a run. What a point means comes from the session file
//! (`history`); the files from the checkpoint store; the conversation's fork is a new session
//! file (`session::fork`). Blocking: callers run these on a blocking thread. The TUI's
//! overlay, `taco rewind` and the orchestrator task all come through here.

mod history;

use std::path::{Path, PathBuf};

pub use history::{CallPoint, History, RunPoint};

use crate::checkpoint::{CheckpointId, FileChange, Point, RestorePlan, Store};
use crate::event::{
    ChangedFile, ConversationPreview, FileDiffView, FilesPreview, Fork, MAX_FILES, RewindPoint,
    RewindPreview, RewindScope, Rewound,
};
use crate::session::{self, SessionWriter};

/// Most files whose diffs a preview loads (the rest are listed without).
pub const MAX_DIFFS: usize = 50;
/// Most bytes of one file's diff shown.
pub const MAX_DIFF_BYTES: usize = 32 << 10;
/// Most bytes of diffs one preview holds.
const MAX_PREVIEW_BYTES: usize = 1 << 20;

/// Where a rewind looks: the store (or why there is none) and the session file.
#[derive(Clone, Copy)]
pub struct Sources<'a> {
    /// The workspace's checkpoint store, or why checkpoints are off.
    pub store: Result<&'a Store, &'a str>,
    /// The session file the points come from.
    pub session: Option<&'a Path>,
}

/// A rewind carried out.
#[derive(Debug)]
pub struct Applied {
    /// The event that says what was done.
    pub rewound: Rewound,
    /// The new session file, when the conversation forked.
    pub fork: Option<SessionWriter>,
}

impl Sources<'_> {
    /// The session's history (empty without a session file).
    pub fn history(&self) -> Result<History, String> {
        match self.session {
            Some(path) => History::read(path).map_err(|e| e.to_string()),
            None => Ok(History::default()),
        }
    }

    /// What rewinding to `point` would change, for the overlay.
    pub fn preview(&self, point: &RewindPoint) -> RewindPreview {
        let history = self.history();
        let files = history
            .as_ref()
            .map_err(Clone::clone)
            .and_then(|h| self.files_plan(h, point))
            .and_then(|(store, plan)| files_preview(store, &plan));
        RewindPreview {
            point: point.clone(),
            files,
            conversation: self
                .conversation(point)
                .map(|(_, run)| ConversationPreview {
                    prompt: run.prompt,
                    runs_dropped: run.runs_from,
                }),
        }
    }

    /// Carries out a rewind. Both sides are checked before anything is touched; hand
    /// edits are kept unless `overwrite`.
    pub fn apply(
        &self,
        point: &RewindPoint,
        scope: RewindScope,
        overwrite: bool,
    ) -> Result<Applied, String> {
        let plan = match scope.files() {
            true => {
                let history = self.history()?;
                Some(self.files_plan(&history, point)?)
            }
            false => None,
        };
        let run = match scope.conversation() {
            true => Some(self.conversation(point)?),
            false => None,
        };
        let mut rewound = Rewound {
            point: point.clone(),
            checkpoint: None,
            restored: Vec::new(),
            kept: Vec::new(),
            failed: Vec::new(),
            undo: None,
            fork: None,
        };
        if let Some((store, plan)) = plan {
            let report = store.restore(&plan, overwrite).map_err(|e| e.to_string())?;
            let lossy = |p: &PathBuf| p.to_string_lossy().into_owned();
            rewound.checkpoint = Some(plan.target.to_string());
            rewound.restored = report
                .written
                .iter()
                .chain(&report.deleted)
                .map(lossy)
                .collect();
            rewound.restored.sort();
            rewound.kept = report.kept.iter().map(lossy).collect();
            rewound.failed = (report.failed.iter())
                .map(|(p, why)| format!("{}: {why}", p.display()))
                .collect();
            rewound.undo = Some(report.undo.to_string());
        }
        let mut fork = None;
        if let Some((path, run)) = run {
            let writer = session::fork(&path, run.offset).map_err(|e| e.to_string())?;
            let from_session = session::header_of(&path).map(|h| h.id).unwrap_or_default();
            rewound.fork = Some(Fork {
                from_session,
                session: writer.id().to_string(),
                prompt: run.prompt,
            });
            fork = Some(writer);
        }
        Ok(Applied { rewound, fork })
    }

    /// The store and the plan for a point's files.
    fn files_plan<'s>(
        &'s self,
        history: &History,
        point: &RewindPoint,
    ) -> Result<(&'s Store, RestorePlan), String> {
        let store = self.store.map_err(String::from)?;
        let target = history.files_target(point)?;
        let target = CheckpointId::parse(&target).map_err(|e| e.to_string())?;
        let newest = store
            .newest()
            .map_err(|e| e.to_string())?
            .unwrap_or_else(|| target.clone());
        let plan = store
            .plan_restore(&target, &newest)
            .map_err(|e| e.to_string())?;
        Ok((store, plan))
    }

    /// The session file and where the point's run starts in it.
    fn conversation(&self, point: &RewindPoint) -> Result<(PathBuf, session::RunStart), String> {
        let request_id = point
            .request_id()
            .ok_or("a checkpoint alone names no point of the conversation")?;
        let path = self.session.ok_or("this session is not saved")?;
        match session::find_run(path, request_id) {
            Ok(Some(run)) => Ok((path.to_path_buf(), run)),
            Ok(None) => Err(format!(
                "the run {request_id} is not in the session file (it was rewound away, or is in another session)"
            )),
            Err(e) => Err(e.to_string()),
        }
    }
}

/// The files of a plan with their diffs (from now to the checkpoint), within the bounds.
fn files_preview(store: &Store, plan: &RestorePlan) -> Result<FilesPreview, String> {
    let (now, target) = (
        Point::Tree(plan.now.clone()),
        Point::Tree(plan.target_tree.clone()),
    );
    Ok(FilesPreview {
        checkpoint: plan.target.to_string(),
        files: diff_views(store, &now, &target, &plan.changes),
        omitted: plan.changes.len().saturating_sub(MAX_FILES),
        hand_edits: (plan.hand_edits.iter())
            .map(|h| h.path.to_string_lossy().into_owned())
            .collect(),
    })
}

/// A run's changes between two checkpoints with their diffs (Ctrl-O on `✎`).
pub fn changes_view(store: &Store, from: &str, to: &str) -> Result<Vec<FileDiffView>, String> {
    let parse = |id: &str| CheckpointId::parse(id).map_err(|e| e.to_string());
    let (a, b) = (
        Point::Checkpoint(parse(from)?),
        Point::Checkpoint(parse(to)?),
    );
    let changes = store.changes(&a, &b).map_err(|e| e.to_string())?;
    Ok(diff_views(store, &a, &b, &changes))
}

/// The first [`MAX_FILES`] changes from `a` to `b`, the first [`MAX_DIFFS`] with their diffs
/// (each cut at [`MAX_DIFF_BYTES`], [`MAX_PREVIEW_BYTES`] in all); a diff that cannot be
/// read says why in its place.
fn diff_views(store: &Store, a: &Point, b: &Point, changes: &[FileChange]) -> Vec<FileDiffView> {
    let mut budget = MAX_PREVIEW_BYTES;
    let mut files = Vec::new();
    for (i, change) in changes.iter().take(MAX_FILES).enumerate() {
        let mut view = FileDiffView {
            file: ChangedFile::from(change),
            diff: String::new(),
            truncated: false,
        };
        if i < MAX_DIFFS && budget > 0 {
            match store.file_diff(a, b, &change.path, MAX_DIFF_BYTES.min(budget)) {
                Ok(diff) => {
                    budget = budget.saturating_sub(diff.text.len());
                    view.diff = diff.text;
                    view.truncated = diff.truncated;
                }
                Err(e) => view.diff = format!("(no diff: {e})"),
            }
        }
        files.push(view);
    }
    files
}
