//! The approval vocabulary of events: what the user decided, how far it reaches, and the
//! grants that outlive one call.

use serde::{Deserialize, Serialize};

use crate::tools::builtin::ShellGrant;

/// The user's answer to an approval request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Run it.
    Approved,
    /// Do not run it; the model is told.
    Denied,
}

/// How far an approval reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// This call only.
    Once,
    /// Every call of this batch, decided together (`Y`, `N`); no grant comes of it.
    Batch,
    /// Every call of this tool until the current request is answered.
    Turn,
    /// Every call of this tool for the rest of the session.
    Session,
}

impl Scope {
    /// The word a person reads for it: `once`, `batch`, `turn`, `session`.
    pub fn word(self) -> &'static str {
        match self {
            Self::Once => "once",
            Self::Batch => "batch",
            Self::Turn => "turn",
            Self::Session => "session",
        }
    }
}

/// A permission the user gave from the approval dialog, beyond one call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Grant {
    /// A tool allowed for the turn or the session (`t`, `a`).
    Tool(String),
    /// Shell commands of one program, subcommand and argument shape, for the session (`p`);
    /// read from older files, where it was a string of words, as a grant covering nothing.
    ShellPrefix(ShellGrant),
}

impl Grant {
    /// How the user names it in `/revoke`: the tool's name, or the shell grant's words.
    pub fn name(&self) -> String {
        match self {
            Self::Tool(name) => name.clone(),
            Self::ShellPrefix(grant) => grant.name(),
        }
    }
}
