//! What a session file says about rewinding: its runs, their calls, and the checkpoint taken
//! before each change, so a point (a run, a call, a checkpoint) names the files' state.

use crate::event::{CheckpointTaken, EventData, FilesChanged, RewindPoint, Rewound};
use crate::session::{Entry, Loaded};

/// One call of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct CallPoint {
    /// Its frame id.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// A short line of its arguments.
    pub summary: String,
    /// Where its `tool_call` is among the session's events.
    at: usize,
}

/// One run (user request) of the session.
#[derive(Debug, Clone, PartialEq)]
pub struct RunPoint {
    /// Its request id.
    pub request_id: String,
    /// Its prompt (shortened).
    pub prompt: String,
    /// When it started (Unix ms).
    pub started: u64,
    /// Its calls, in order.
    pub calls: Vec<CallPoint>,
    /// What it changed, when it reported that.
    pub changed: Option<FilesChanged>,
    /// Rewinds made during it (a rewind is its own request).
    pub rewinds: Vec<Rewound>,
    at: usize,
}

/// The runs and checkpoints of one session, in order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct History {
    /// The runs, oldest first.
    pub runs: Vec<RunPoint>,
    /// Checkpoint events by position.
    checkpoints: Vec<(usize, CheckpointTaken)>,
    /// Events folded so far (the next one's position).
    seen: usize,
}

impl History {
    /// Reads what matters for rewinding from a loaded session.
    pub fn of(loaded: &Loaded) -> Self {
        let mut history = Self::default();
        for entry in &loaded.entries {
            if let Entry::Event(event) = entry {
                history.take(event);
            }
        }
        history
    }

    /// Reads a session file's history, one event at a time.
    pub fn read(path: &std::path::Path) -> Result<Self, crate::session::SessionError> {
        let mut history = Self::default();
        crate::session::each_event(path, |event| history.take(&event))?;
        Ok(history)
    }

    /// Folds in the next event.
    fn take(&mut self, event: &crate::event::Event) {
        let at = self.seen;
        self.seen += 1;
        match &event.data {
            EventData::RunStarted { prompt, .. } => self.runs.push(RunPoint {
                request_id: event.request_id.to_string(),
                prompt: prompt.clone(),
                started: event.timestamp,
                calls: Vec::new(),
                changed: None,
                rewinds: Vec::new(),
                at,
            }),
            EventData::ToolCall {
                id,
                name,
                arguments,
                ..
            } => {
                if let Some(run) = self.run_mut(&event.request_id) {
                    run.calls.push(CallPoint {
                        id: id.clone(),
                        name: name.clone(),
                        summary: crate::orchestrator::stack::argument_summary(arguments),
                        at,
                    });
                }
            }
            EventData::Checkpoint(cp) => self.checkpoints.push((at, cp.clone())),
            EventData::FilesChanged(changed) => {
                if let Some(run) = self.run_mut(&event.request_id) {
                    run.changed = Some((**changed).clone());
                }
            }
            EventData::Rewound(rewound) => {
                // A rewind is not part of a run: it goes with the newest one.
                if let Some(run) = self.runs.last_mut() {
                    run.rewinds.push((**rewound).clone());
                }
            }
            _ => {}
        }
    }

    fn run_mut(&mut self, request_id: &str) -> Option<&mut RunPoint> {
        self.runs
            .iter_mut()
            .rev()
            .find(|r| r.request_id == request_id)
    }

    /// The run `request_id`.
    pub fn run(&self, request_id: &str) -> Option<&RunPoint> {
        self.runs.iter().rev().find(|r| r.request_id == request_id)
    }

    /// The run and call of a call id (a frame id, or the model's call id of a top-level
    /// call, which is its frame id).
    pub fn call(&self, id: &str) -> Option<(&RunPoint, &CallPoint)> {
        self.runs
            .iter()
            .rev()
            .find_map(|r| r.calls.iter().find(|c| c.id == id).map(|c| (r, c)))
    }

    /// Every checkpoint id the session names (taken, or the undo of a rewind), oldest first.
    pub fn checkpoint_ids(&self) -> impl Iterator<Item = &str> {
        let taken = self
            .checkpoints
            .iter()
            .filter_map(|(_, cp)| cp.id.as_deref());
        let undos = (self.runs.iter())
            .flat_map(|r| &r.rewinds)
            .filter_map(|r| r.undo.as_deref());
        taken.chain(undos)
    }

    /// The checkpoint taken before a call, if one was.
    pub fn checkpoint_before(&self, call: &str) -> Option<&str> {
        self.checkpoints
            .iter()
            .find(|(_, cp)| cp.calls.iter().any(|c| c == call))
            .and_then(|(_, cp)| cp.id.as_deref())
    }

    /// The point an id names: a call, a run, or a checkpoint (a unique prefix of one the
    /// session names, at least 8 digits).
    pub fn point(&self, id: &str) -> Result<RewindPoint, String> {
        if let Some((run, call)) = self.call(id) {
            return Ok(RewindPoint::Call {
                request_id: run.request_id.clone(),
                call: call.id.clone(),
            });
        }
        if let Some(run) = self.run(id) {
            return Ok(RewindPoint::Run {
                request_id: run.request_id.clone(),
            });
        }
        let mut ids: Vec<&str> = self
            .checkpoint_ids()
            .filter(|c| id.len() >= 8 && c.starts_with(id))
            .collect();
        ids.sort_unstable();
        ids.dedup();
        match ids[..] {
            [one] => Ok(RewindPoint::Checkpoint {
                id: one.to_string(),
            }),
            [] => Err(format!(
                "'{id}' is no call, run or checkpoint of this session ('taco rewind --list' lists them)"
            )),
            _ => Err(format!(
                "'{id}' matches several checkpoints; give more of it"
            )),
        }
    }

    /// The checkpoint a point's files go back to: the one taken before the call (or before
    /// the first change after the run's start); `Err` says why there is none.
    pub fn files_target(&self, point: &RewindPoint) -> Result<String, String> {
        match point {
            RewindPoint::Checkpoint { id } => Ok(id.clone()),
            RewindPoint::Call { request_id, call } => {
                let (_, found) = self
                    .call(call)
                    .filter(|(run, _)| &run.request_id == request_id)
                    .ok_or_else(|| format!("no call {call} in this session"))?;
                // Its own checkpoint, when it could change files; else the next one.
                let own = self
                    .checkpoints
                    .iter()
                    .find(|(_, cp)| cp.calls.iter().any(|c| c == call));
                match own {
                    Some((_, cp)) => id_of(cp),
                    None => self.next_after(found.at),
                }
            }
            RewindPoint::Run { request_id } => {
                let run = self
                    .run(request_id)
                    .ok_or_else(|| format!("no run {request_id} in this session"))?;
                self.next_after(run.at)
            }
        }
    }

    /// The first checkpoint after position `at`: nothing changed the files between.
    fn next_after(&self, at: usize) -> Result<String, String> {
        match self.checkpoints.iter().find(|(pos, _)| *pos > at) {
            Some((_, cp)) => id_of(cp),
            None => Err("taco changed no files after this point".to_string()),
        }
    }
}

fn id_of(cp: &CheckpointTaken) -> Result<String, String> {
    match (&cp.id, &cp.error) {
        (Some(id), _) => Ok(id.clone()),
        (None, Some(error)) => Err(format!("no checkpoint was taken then: {error}")),
        (None, None) => Err("no checkpoint was taken then".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Event;
    use std::sync::Arc;

    fn ev(request: &str, data: EventData) -> Entry {
        Entry::Event(Event {
            timestamp: 1,
            request_id: Arc::from(request),
            data,
        })
    }

    fn started(r: &str) -> Entry {
        ev(
            r,
            EventData::RunStarted {
                prompt: format!("prompt {r}"),
                provider: "p".into(),
                model: "m".into(),
                max_turns: 3,
                trace_parent: None,
            },
        )
    }

    fn call(r: &str, id: &str, name: &str) -> Entry {
        ev(
            r,
            EventData::ToolCall {
                turn: 1,
                id: id.into(),
                name: name.into(),
                arguments: serde_json::json!({"path": "a"}),
                parent: None,
                sandbox: None,
            },
        )
    }

    fn cp(r: &str, id: Option<&str>, calls: &[&str]) -> Entry {
        ev(
            r,
            EventData::Checkpoint(CheckpointTaken {
                id: id.map(String::from),
                calls: calls.iter().map(|c| c.to_string()).collect(),
                changed: true,
                skipped: Vec::new(),
                skipped_count: 0,
                error: id.is_none().then(|| "busy".to_string()),
            }),
        )
    }

    #[test]
    fn points_name_the_checkpoint_before_the_change() {
        let loaded = Loaded {
            header: None,
            entries: vec![
                started("r1"),
                call("r1", "c1", "read_file"),
                call("r1", "c2", "write_file"),
                cp("r1", Some("A"), &["c2"]),
                cp("r1", Some("B"), &[]),
                started("r2"),
                call("r2", "c3", "shell"),
                cp("r2", None, &["c3"]),
                started("r3"),
            ],
            warnings: Vec::new(),
        };
        let h = History::of(&loaded);
        assert_eq!(h.runs.len(), 3);
        assert_eq!(h.runs[0].calls.len(), 2);
        let at = |p: RewindPoint| h.files_target(&p);
        let call = |r: &str, c: &str| RewindPoint::Call {
            request_id: r.into(),
            call: c.into(),
        };
        let run = |r: &str| RewindPoint::Run {
            request_id: r.into(),
        };
        assert_eq!(at(call("r1", "c2")), Ok("A".into()));
        // A read before the write: the write's checkpoint is the state then.
        assert_eq!(at(call("r1", "c1")), Ok("A".into()));
        assert_eq!(at(run("r1")), Ok("A".into()));
        // The shell call's checkpoint failed: no later one stands in for it.
        assert!(at(call("r2", "c3")).unwrap_err().contains("busy"));
        assert!(at(run("r3")).unwrap_err().contains("no files"));
        assert!(at(call("r1", "c3")).is_err());
        assert!(at(run("zz")).is_err());
        assert_eq!(
            at(RewindPoint::Checkpoint { id: "Z".into() }),
            Ok("Z".into())
        );
    }
}
