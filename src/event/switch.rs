//! The events of switching without restarting: which provider and model are in use
//! (`model_switched`), and what `/model` and `/resume` asked to have listed (`listed`, live
//! only).

use serde::{Deserialize, Serialize};

/// A provider and one of its models.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelChoice {
    /// Provider name.
    pub provider: String,
    /// Model id.
    pub model: String,
}

/// What was listed for a picker; never in files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "list", rename_all = "snake_case")]
pub enum Listed {
    /// A provider's models, as its server lists them (`/model`).
    Models {
        /// Provider name.
        provider: String,
        /// The models the server lists (empty on failure).
        models: Vec<String>,
        /// Why they could not be listed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// The saved sessions, newest activity first (`/resume`).
    Sessions {
        /// One row per session.
        sessions: Vec<crate::session::Summary>,
        /// Files that could not be listed, one line each.
        problems: Vec<String>,
        /// The id of the session this TUI is writing, if its file exists yet.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        open: Option<String>,
    },
    /// What a rewind would change (the rewind overlay).
    Rewind(Box<super::RewindPreview>),
    /// A run's changes with their diffs (Ctrl-O on `✎ N files changed`).
    Changes(Box<super::ChangesView>),
}
