//! The audit log (DESIGN §8): what happened (a message received, a tool executed or denied, a
//! message completed or failed) as JSON lines in the state dir. It is fed from the one event
//! schema (DESIGN §3) and keeps only metadata: never message content, tool arguments, tool
//! output or a secret. No free-text field of an event is ever copied; names are checked.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;
use tracing_appender::rolling::{Builder, Rotation};

use crate::event::{Confinement, Decision, DeniedBy, Event, EventData, Grant, ToolStatus};
use crate::run_model::RunModel;

/// Audit files are `audit.jsonl.YYYY-MM-DD` (UTC day, as tracing-appender names them).
const FILE_PREFIX: &str = "audit.jsonl";
/// Daily files kept; older ones are deleted by tracing-appender.
const KEEP_FILES: usize = 30;
/// Runs tracked at once; a run that never ends (an error without `final`) is evicted.
const MAX_RUNS: usize = 16;
/// Longest name (tool, model, kind…) copied as is.
const MAX_NAME: usize = 128;
/// Written in place of a name that does not look like one (it could carry model text).
const NOT_A_NAME: &str = "(invalid)";

/// `<state dir>/taco` (BaseDirs::state_dir, or data_local_dir where there is none).
pub fn state_dir() -> Option<PathBuf> {
    let base = directories::BaseDirs::new()?;
    let dir = base.state_dir().unwrap_or_else(|| base.data_local_dir());
    Some(dir.join("taco"))
}

/// Creates `dir` and its missing parents, private to the user (0700), refusing a symlink in
/// place of `dir` itself (see `private`).
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    crate::private::PrivateDir::create(dir).map(drop)
}

/// Opens `path` for appending, created readable and writable by the user only (0600); an
/// existing file is narrowed to 0600 through the opened file. A symlink (at the file or its
/// directory) is refused, never followed (see `private`).
pub fn open_private(path: &Path) -> io::Result<File> {
    crate::private::append(path)
}

/// The audit log: feed it every event with [`AuditLog::record`]; it writes what is auditable.
pub struct AuditLog {
    out: Box<dyn Write + Send>,
    /// For the rolling files: where they are and the UTC day whose file was made private.
    rolling: Option<Rolling>,
    runs: HashMap<Arc<str>, RunState>,
    /// The call tree (a nested call's record names its parent).
    calls: RunModel,
    /// Numbers runs in arrival order, for evicting the oldest.
    next_seq: u64,
    /// A write failed and the warning was logged; reset by the next successful write.
    failing: bool,
}

struct Rolling {
    dir: PathBuf,
    day: i64,
    /// The day's file could not be opened as a private file (a symlink in its place): the
    /// appender, which opens by name, must not write that day.
    refused: bool,
}

/// What the audit log remembers about a run between its events.
#[derive(Default)]
struct RunState {
    seq: u64,
    /// Timestamp of `run_started`, for `message_complete`'s duration.
    started: Option<u64>,
    /// `finish_reason` of the last top-level `llm_call`.
    stop_reason: Option<String>,
    /// An `error` was recorded: the run is over unless a `final` follows.
    errored: bool,
}

impl std::fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditLog")
            .field("dir", &self.rolling.as_ref().map(|r| &r.dir))
            .field("runs", &self.runs.len())
            .finish_non_exhaustive()
    }
}

impl AuditLog {
    /// Opens the audit log in `dir` (created if missing): `audit.jsonl.YYYY-MM-DD` rotated daily
    /// by tracing-appender, keeping the last 30 files.
    pub fn open(dir: &Path) -> io::Result<Self> {
        create_private_dir(dir)?;
        // tracing-appender creates files with the default mode and by name; creating the
        // day's file first (here, and in `write` for later days) keeps every file private
        // and refuses a symlink in its place before the appender could follow it.
        let day = utc_day();
        open_private(&dir.join(file_name(day)))?;
        let appender = Builder::new()
            .rotation(Rotation::DAILY)
            .filename_prefix(FILE_PREFIX)
            .max_log_files(KEEP_FILES)
            .build(dir)
            .map_err(io::Error::other)?;
        let mut log = Self::to_writer(Box::new(appender));
        log.rolling = Some(Rolling {
            dir: dir.to_path_buf(),
            day,
            refused: false,
        });
        Ok(log)
    }

    /// An audit log writing to any writer (tests, or stderr for debugging).
    pub fn to_writer(writer: Box<dyn Write + Send>) -> Self {
        Self {
            out: writer,
            rolling: None,
            runs: HashMap::new(),
            calls: RunModel::new(),
            next_seq: 0,
            failing: false,
        }
    }

    /// Records what an event says happened, if it is auditable; never content.
    pub fn record(&mut self, event: &Event) {
        self.calls.apply(event);
        let id = &event.request_id;
        let ts = event.timestamp;
        match &event.data {
            EventData::RunStarted {
                provider,
                model,
                max_turns,
                ..
            } => {
                self.run(id).started = Some(ts);
                let fields = Fields::MessageReceived {
                    provider: label(provider),
                    model: label(model),
                    max_turns: *max_turns,
                };
                self.write(ts, id, fields);
            }
            // A sub-agent's calls do not decide why the user's message stopped.
            EventData::LlmCall(call) if call.parent.is_none() => {
                self.run(id).stop_reason = call.finish_reason.clone();
            }
            EventData::ToolResult {
                id: call,
                name,
                ok,
                status,
                denied_by,
                duration_ms,
                ..
            } => {
                let parent = self.calls.parent(call).map(String::from);
                let parent = parent.as_deref().map(label);
                let node = self.calls.call(call);
                let sandbox = node.and_then(|c| c.sandbox);
                let exit_code = node.and_then(|c| c.exit_code);
                // The run model folded this result first: its status is the one everyone shows.
                let status = (node.and_then(|c| c.state.status()))
                    .unwrap_or_else(|| ToolStatus::of(*status, *ok, None));
                let fields = match (status, denied_by) {
                    (ToolStatus::Denied, by) => Fields::ToolDenied {
                        tool: label(name),
                        by: match by {
                            Some(DeniedBy::Headless) => "exec",
                            Some(DeniedBy::Policy) => "policy",
                            Some(DeniedBy::Limit) => "limit",
                            Some(DeniedBy::Hook) => "hook",
                            Some(DeniedBy::Mode) => "mode",
                            Some(DeniedBy::User) | None => "user",
                        },
                        parent,
                    },
                    (status, _) => Fields::ToolExecuted {
                        tool: label(name),
                        ok: status.is_ok(),
                        status,
                        exit_code,
                        duration_ms: *duration_ms,
                        parent,
                        sandbox,
                        sandbox_denied: status == ToolStatus::SandboxDenied,
                    },
                };
                self.write(ts, id, fields);
            }
            // Leaving the sandbox is recorded as its own decision, approved or not.
            EventData::ApprovalDecided {
                id: call,
                name,
                decision,
                ..
            } if self.calls.call(call).and_then(|c| c.sandbox)
                == Some(Confinement::Unsandboxed) =>
            {
                let parent = self.calls.parent(call).map(String::from);
                let fields = Fields::SandboxEscalation {
                    tool: label(name),
                    approved: *decision == Decision::Approved,
                    parent: parent.as_deref().map(label),
                };
                self.write(ts, id, fields);
            }
            // Which grant, never what it allowed (a shell prefix is a command's words).
            EventData::ApprovalRevoked { grant } => {
                let fields = match grant {
                    Grant::Tool(name) => Fields::ApprovalRevoked {
                        tool: label(name),
                        grant: "tool",
                    },
                    Grant::ShellPrefix(_) => Fields::ApprovalRevoked {
                        tool: crate::tools::builtin::SHELL,
                        grant: "shell_prefix",
                    },
                };
                self.write(ts, id, fields);
            }
            EventData::Final { turns, usage, .. } => {
                let run = self.runs.remove(id).unwrap_or_default();
                let fields = Fields::MessageComplete {
                    turns: *turns,
                    usage: UsageRecord {
                        input_tokens: usage.input_tokens,
                        output_tokens: usage.output_tokens,
                    },
                    duration_ms: run.started.map(|started| ts.saturating_sub(started)),
                    stop_reason: run.stop_reason.as_deref().map(label),
                };
                self.write(ts, id, fields);
            }
            EventData::Error { kind, .. } => {
                // Kept, not removed: a `final` may follow (an answer gathered before the error).
                self.run(id).errored = true;
                self.write(ts, id, Fields::MessageError { kind: label(kind) });
            }
            // The user's own command (`!`): how it ended, never the command or its output.
            EventData::UserShell(shell) if !shell.is_running() => {
                let fields = Fields::UserCommand {
                    status: match shell.state {
                        crate::event::UserShellState::Exited => "exited",
                        crate::event::UserShellState::TimedOut => "timed_out",
                        crate::event::UserShellState::Cancelled => "cancelled",
                        crate::event::UserShellState::Failed
                        | crate::event::UserShellState::Running => "failed",
                    },
                    exit_code: shell.exit_code,
                    duration_ms: shell.duration_ms,
                    sandbox: shell.sandbox,
                };
                self.write(ts, id, fields);
            }
            EventData::Cancelled { .. } => {
                self.runs.remove(id);
                self.write(ts, id, Fields::MessageError { kind: "cancelled" });
            }
            _ => {}
        }
    }

    /// The state of a run, created on its first event; makes room first when needed.
    fn run(&mut self, id: &Arc<str>) -> &mut RunState {
        if !self.runs.contains_key(id) {
            // Runs go one at a time: an errored run still here has ended without `final`.
            self.runs.retain(|_, run| !run.errored);
            if self.runs.len() >= MAX_RUNS {
                let oldest = self
                    .runs
                    .iter()
                    .min_by_key(|(_, run)| run.seq)
                    .map(|(key, _)| Arc::clone(key));
                if let Some(oldest) = oldest {
                    self.runs.remove(&oldest);
                }
            }
        }
        let seq = self.next_seq;
        let run = self.runs.entry(Arc::clone(id)).or_insert_with(|| RunState {
            seq,
            ..RunState::default()
        });
        if run.seq == seq {
            self.next_seq += 1;
        }
        run
    }

    /// Writes one line; a failure is logged once (until a write succeeds) and never stops
    /// the caller.
    fn write(&mut self, ts: u64, request_id: &str, fields: Fields<'_>) {
        let line = Line {
            ts,
            event: fields.name(),
            request_id: label(request_id),
            fields,
        };
        let mut bytes = match serde_json::to_vec(&line) {
            Ok(bytes) => bytes,
            Err(error) => return self.failed(&error),
        };
        bytes.push(b'\n');
        if let Some(rolling) = &mut self.rolling {
            let day = utc_day();
            if day != rolling.day {
                rolling.day = day;
                // The appender opens this file on its first write of the day.
                rolling.refused = false;
                if let Err(error) = open_private(&rolling.dir.join(file_name(day))) {
                    tracing::warn!(%error, "audit log: cannot create the day's file privately; not writing it");
                    rolling.refused = true;
                }
            }
            if rolling.refused {
                return self.failed(&"the day's file is not a private file");
            }
        }
        match self.out.write_all(&bytes).and_then(|()| self.out.flush()) {
            Ok(()) => self.failing = false,
            Err(error) => self.failed(&error),
        }
    }

    fn failed(&mut self, error: &dyn std::fmt::Display) {
        if !self.failing {
            self.failing = true;
            tracing::warn!(%error, "audit log: cannot write; audit records are being lost");
        }
    }
}

/// One line: `{"ts", "event", "request_id", …fields}`.
#[derive(Serialize)]
struct Line<'a> {
    ts: u64,
    event: &'static str,
    request_id: &'a str,
    #[serde(flatten)]
    fields: Fields<'a>,
}

/// The fields of each record; every string is a checked name or a constant.
#[derive(Serialize)]
#[serde(untagged)]
enum Fields<'a> {
    MessageReceived {
        provider: &'a str,
        model: &'a str,
        max_turns: u32,
    },
    ToolExecuted {
        tool: &'a str,
        ok: bool,
        /// How it ended (`exit_nonzero`: a command that said it failed).
        status: ToolStatus,
        /// A command's exit code.
        #[serde(skip_serializing_if = "Option::is_none")]
        exit_code: Option<i64>,
        duration_ms: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        parent: Option<&'a str>,
        /// How it ran, for tools the sandbox covers.
        #[serde(skip_serializing_if = "Option::is_none")]
        sandbox: Option<Confinement>,
        #[serde(skip_serializing_if = "is_false")]
        sandbox_denied: bool,
    },
    /// A call asked to run outside the sandbox, and what the user said.
    SandboxEscalation {
        tool: &'a str,
        approved: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        parent: Option<&'a str>,
    },
    ToolDenied {
        tool: &'a str,
        by: &'static str,
        #[serde(skip_serializing_if = "Option::is_none")]
        parent: Option<&'a str>,
    },
    /// The user took a grant back: the tool, and whether it was the tool's grant or a
    /// shell prefix (never the prefix itself).
    ApprovalRevoked {
        tool: &'a str,
        grant: &'static str,
    },
    MessageComplete {
        turns: u32,
        usage: UsageRecord,
        duration_ms: Option<u64>,
        stop_reason: Option<&'a str>,
    },
    MessageError {
        kind: &'a str,
    },
    /// A command the user ran with `!` (not a tool call of the model, never approved).
    UserCommand {
        status: &'static str,
        #[serde(skip_serializing_if = "Option::is_none")]
        exit_code: Option<i32>,
        duration_ms: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        sandbox: Option<Confinement>,
    },
}

impl Fields<'_> {
    fn name(&self) -> &'static str {
        match self {
            Self::MessageReceived { .. } => "message_received",
            Self::ToolExecuted { .. } => "tool_executed",
            Self::ToolDenied { .. } => "tool_denied",
            Self::SandboxEscalation { .. } => "sandbox_escalation",
            Self::ApprovalRevoked { .. } => "approval_revoked",
            Self::MessageComplete { .. } => "message_complete",
            Self::MessageError { .. } => "message_error",
            Self::UserCommand { .. } => "user_command",
        }
    }
}

fn is_false(b: &bool) -> bool {
    !b
}

/// Token counts, spelled out so the record's shape does not follow `Usage`'s changes.
#[derive(Serialize)]
struct UsageRecord {
    input_tokens: u64,
    output_tokens: u64,
}

/// `name` when it looks like a name (tool, model, id, kind); a placeholder otherwise, since
/// some names come from the model and could carry text.
fn label(name: &str) -> &str {
    let is_name = !name.is_empty()
        && name.len() <= MAX_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.:/@+".contains(&b));
    if is_name { name } else { NOT_A_NAME }
}

/// Days since the Unix epoch, now, in UTC (tracing-appender's clock).
fn utc_day() -> i64 {
    (crate::event::unix_ms() / 86_400_000) as i64
}

/// The audit file of a UTC day: `audit.jsonl.YYYY-MM-DD`.
fn file_name(day: i64) -> String {
    let (y, m, d) = crate::session::civil_from_days(day);
    format!("{FILE_PREFIX}.{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_keep_names_and_replace_text() {
        assert_eq!(label("read_file"), "read_file");
        assert_eq!(
            label("meta-llama/Llama-3.1-8B:q4"),
            "meta-llama/Llama-3.1-8B:q4"
        );
        assert_eq!(label("mcp.github.create_issue"), "mcp.github.create_issue");
        assert_eq!(label(""), NOT_A_NAME);
        assert_eq!(label("a tool with spaces"), NOT_A_NAME);
        assert_eq!(label("quote\"s"), NOT_A_NAME);
        assert_eq!(label("é"), NOT_A_NAME);
        assert_eq!(label(&"x".repeat(MAX_NAME + 1)), NOT_A_NAME);
    }

    #[test]
    fn runs_that_never_end_are_evicted() {
        let mut log = AuditLog::to_writer(Box::new(io::sink()));
        for i in 0..(MAX_RUNS * 3) {
            let id: Arc<str> = Arc::from(format!("r{i}"));
            log.run(&id).started = Some(i as u64);
        }
        assert_eq!(log.runs.len(), MAX_RUNS);
        // The newest survive.
        let newest: Arc<str> = Arc::from(format!("r{}", MAX_RUNS * 3 - 1));
        assert!(log.runs.contains_key(&newest));
        assert!(!log.runs.contains_key("r0"));
        // An errored run goes as soon as another run starts.
        log.run(&newest).errored = true;
        log.run(&Arc::from("next"));
        assert!(!log.runs.contains_key(&newest));
    }

    #[test]
    fn write_errors_do_not_panic() {
        struct Broken;
        impl Write for Broken {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::Error::other("disk full"))
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let mut log = AuditLog::to_writer(Box::new(Broken));
        let id: Arc<str> = Arc::from("r");
        for _ in 0..3 {
            log.record(&Event {
                timestamp: 1,
                request_id: Arc::clone(&id),
                data: EventData::Cancelled {
                    running: "x".into(),
                },
            });
        }
        assert!(log.failing);
    }
}
