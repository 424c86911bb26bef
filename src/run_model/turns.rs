//! The session's runs as a rewind sees them (issue 29): each run's prompt, its calls (and
//! which had a checkpoint taken before them), what it changed in the workspace, and whether a
//! conversation fork left it behind. Unlike the call tree, this outlives a run: `/rewind`
//! lists every run of the session. Bounded: the newest [`MAX_TURNS`] runs, the first
//! [`MAX_CALLS`] calls of each.

use std::collections::VecDeque;

use crate::event::{Event, EventData};
use crate::orchestrator::stack::argument_summary;

/// Most runs kept (the oldest go first).
pub const MAX_TURNS: usize = 500;
/// Most calls kept per run.
pub const MAX_CALLS: usize = 200;

/// One call of a run, as the rewind picker lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnCall {
    /// Its frame id.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Short arguments.
    pub summary: String,
    /// Nesting level (0: the top-level agent's).
    pub depth: usize,
    /// A checkpoint was taken just before it: rewinding to it restores exactly that state.
    pub checkpoint: bool,
}

/// What a run changed in the workspace (its `files_changed`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnChanges {
    /// `3 files changed (+40 −12)`.
    pub headline: String,
    /// The checkpoint before its first change.
    pub from: String,
    /// The checkpoint at its end.
    pub to: String,
}

/// One run of the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Turn {
    /// Its request id.
    pub request_id: String,
    /// Its prompt (shortened, as `run_started` has it).
    pub prompt: String,
    /// When it started (Unix ms).
    pub at: u64,
    /// Its calls, in the order they were made.
    pub calls: Vec<TurnCall>,
    /// What it changed, once its end said.
    pub changes: Option<TurnChanges>,
    /// A conversation rewind went back to before it (or an earlier run): it stays in the
    /// old session file, no longer in the conversation.
    pub left_behind: bool,
}

/// The session's runs, oldest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Turns {
    turns: VecDeque<Turn>,
}

impl Turns {
    /// Folds one event in.
    pub fn apply(&mut self, event: &Event) {
        match &event.data {
            EventData::RunStarted { prompt, .. } => {
                if self.turns.len() >= MAX_TURNS {
                    self.turns.pop_front();
                }
                self.turns.push_back(Turn {
                    request_id: event.request_id.to_string(),
                    prompt: prompt.clone(),
                    at: event.timestamp,
                    calls: Vec::new(),
                    changes: None,
                    left_behind: false,
                });
            }
            EventData::ToolCall {
                id,
                name,
                arguments,
                parent,
                ..
            } => {
                let Some(turn) = self.turn_mut(&event.request_id) else {
                    return;
                };
                if turn.calls.len() >= MAX_CALLS || turn.calls.iter().any(|c| c.id == *id) {
                    return;
                }
                let depth = match parent {
                    Some(p) => turn
                        .calls
                        .iter()
                        .find(|c| c.id == *p)
                        .map_or(1, |c| c.depth.saturating_add(1)),
                    None => 0,
                };
                turn.calls.push(TurnCall {
                    id: id.clone(),
                    name: name.clone(),
                    summary: argument_summary(arguments),
                    depth,
                    checkpoint: false,
                });
            }
            // A checkpoint is taken after its calls are announced, before they run.
            EventData::Checkpoint(cp) if cp.id.is_some() && !cp.calls.is_empty() => {
                if let Some(turn) = self.turn_mut(&event.request_id) {
                    for call in turn.calls.iter_mut().filter(|c| cp.calls.contains(&c.id)) {
                        call.checkpoint = true;
                    }
                }
            }
            EventData::FilesChanged(changed) => {
                if let Some(turn) = self.turn_mut(&event.request_id) {
                    turn.changes = Some(TurnChanges {
                        headline: changed.headline(),
                        from: changed.from.clone(),
                        to: changed.to.clone(),
                    });
                }
            }
            EventData::Rewound(rewound) => {
                if rewound.fork.is_none() {
                    return;
                }
                let Some(from) = rewound.point.request_id() else {
                    return;
                };
                if let Some(at) = self.turns.iter().position(|t| t.request_id == from) {
                    for turn in self.turns.iter_mut().skip(at) {
                        turn.left_behind = true;
                    }
                }
            }
            _ => {}
        }
    }

    /// The run `request_id`, newest first (a run's events come while it is the newest).
    fn turn_mut(&mut self, request_id: &str) -> Option<&mut Turn> {
        self.turns
            .iter_mut()
            .rev()
            .find(|t| t.request_id == request_id)
    }

    /// The runs, oldest first.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &Turn> {
        self.turns.iter()
    }

    /// How many runs are kept.
    pub fn len(&self) -> usize {
        self.turns.len()
    }

    /// Whether no run was seen.
    pub fn is_empty(&self) -> bool {
        self.turns.is_empty()
    }

    /// Whether call `id` of run `request_id` had a checkpoint taken before it.
    pub fn has_checkpoint(&self, request_id: &str, id: &str) -> bool {
        self.turns.iter().rev().any(|t| {
            t.request_id == request_id && t.calls.iter().any(|c| c.id == id && c.checkpoint)
        })
    }
}
