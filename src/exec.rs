//! `taco exec`: one request, headless (DESIGN §6). The final answer goes to stdout (or every
//! event as JSONL with `--json`), diagnostics to stderr; the exit code says how it ended.

use std::borrow::Cow;
use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use crate::event::{Decision, DeltaKind, Event, EventData};
use crate::orchestrator::approval::FixedApprover;
use crate::orchestrator::recorded::{ProblemSink, Recorded};
use crate::orchestrator::{EventSink, Orchestrator, Outcome};
use crate::recorder::Recorder;
use crate::secrets::Secrets;
use crate::signals::{Signals, Stop};
use crate::text::plain;
use crate::text::safe::{self, Escaper};

mod calls;

/// Exit code: the run produced a final answer.
pub const EXIT_OK: i32 = 0;
/// Exit code: the run failed.
pub const EXIT_RUN_ERROR: i32 = 1;
/// Exit code: bad usage or config.
pub const EXIT_USAGE: i32 = 2;
/// Exit code: stopped by the cost budget (`--max-cost`) before a model call.
pub const EXIT_BUDGET: i32 = 3;
/// Exit code: interrupted (Ctrl-C).
pub const EXIT_INTERRUPTED: i32 = 130;

/// How `exec` reports.
#[derive(Debug, Clone, Default)]
pub struct ExecOptions {
    /// Every event as JSONL on stdout instead of the final answer.
    pub json: bool,
    /// Approve every `ask` call (`--approve all`); otherwise deny them.
    pub approve_all: bool,
    /// Also write trace events (no deltas) to this file.
    pub trace: Option<PathBuf>,
    /// Key values that never reach stdout or the trace file.
    pub secrets: Arc<Secrets>,
    /// What the request asks of its own (a custom command's tools and model).
    pub request: crate::orchestrator::request::RequestOptions,
}

/// Deltas are flushed at most this often, so a live reader sees text without a write per token.
const DELTA_FLUSH_EVERY: Duration = Duration::from_millis(50);

/// Plain mode holds at most this much of a line before writing it anyway.
const MAX_HELD_LINE: usize = 64 * 1024;

/// Writes events where `exec` was asked to.
struct ExecSink<W: Write, E: Write> {
    json: bool,
    out: BufWriter<W>,
    err: E,
    trace: Option<BufWriter<File>>,
    last_flush: Instant,
    /// Why stdout stopped taking output (a closed pipe, a full disk): reported at the end.
    out_error: Option<io::Error>,
    secrets: Arc<Secrets>,
    /// Scratch buffer for one serialized event.
    line: Vec<u8>,
    /// Plain mode streams the answer: the model's text since the last whole line.
    pending: String,
    /// Whether the current attempt has written lines (a retry then says it starts over).
    attempt_printed: bool,
    /// Stdout is a terminal: flush every line (else the buffer fills in blocks), and what
    /// is written there is made inert (`text::safe`): the model's text must not retitle the
    /// window or write the clipboard. A pipe or a file gets the bytes as they are.
    tty: bool,
    /// Makes the streamed answer inert on a terminal, however it was cut.
    escaper: Escaper,
    /// Scratch buffer for escaped text.
    escaped: String,
    /// Words each ended tool call on stderr in text mode.
    calls: calls::CallLines,
}

impl<W: Write + Send, E: Write + Send> ProblemSink for ExecSink<W, E> {
    fn problem(&mut self, problem: String) {
        let _ = writeln!(self.err, "taco: {}", plain(&problem));
    }
}

impl<W: Write + Send, E: Write + Send> EventSink for ExecSink<W, E> {
    fn emit(&mut self, event: Event) {
        let wanted =
            (self.json && self.out_error.is_none()) || (self.trace.is_some() && event.is_trace());
        // Serializing an event cannot fail in practice; if it did, only the outputs skip it.
        let serialized = wanted && serialize(&mut self.line, &event, &self.secrets).is_ok();
        if let Some(trace) = &mut self.trace
            && serialized
            && event.is_trace()
            && trace.write_all(&self.line).is_err()
        {
            let _ = writeln!(self.err, "taco: cannot write the trace file; trace stopped");
            self.trace = None;
        }
        if !self.json
            && let Some(line) = self.calls.line(&event)
        {
            // The line quotes the model's arguments: a key it wrote there is masked.
            let _ = writeln!(self.err, "{}", self.secrets.redact(&line));
        }
        match &event.data {
            EventData::Error { message, .. } => {
                let _ = writeln!(self.err, "taco: error: {}", plain(message));
            }
            EventData::ApprovalDecided {
                name,
                decision: Decision::Denied,
                ..
            } if !self.json => {
                let _ = writeln!(
                    self.err,
                    "taco: {} needs approval; denied (run with --approve all to allow it)",
                    plain(name)
                );
            }
            // Nobody can answer in exec: a tool's question (an MCP server's form) is declined.
            EventData::InputRequested(request) => {
                let why = match request.kind {
                    crate::event::InputKind::Form => {
                        "taco exec cannot ask, so the form goes back declined"
                    }
                    _ => "taco exec has nobody to ask",
                };
                let _ = writeln!(
                    self.err,
                    "taco: {}; declined ({why})",
                    plain(&crate::text::summarize(&request.prompt, 300))
                );
            }
            EventData::Retry {
                attempt,
                max,
                reason,
                delay_ms,
            } => {
                let secs = *delay_ms as f64 / 1000.0;
                let _ = writeln!(
                    self.err,
                    "taco: retrying {attempt}/{max} in {secs:.1} s: {}",
                    plain(reason)
                );
                if !self.json {
                    self.retried();
                }
            }
            EventData::Delta {
                kind: DeltaKind::Text,
                text,
            } if !self.json => self.stream(text),
            EventData::LlmCall(call) if !self.json && call.parent.is_none() => {
                self.turn_done(!call.tool_calls.is_empty());
            }
            EventData::FilesChanged(changed) if !self.json && !changed.files.is_empty() => {
                let _ = writeln!(self.err, "✎ {} · taco rewind --list", changed.headline());
            }
            EventData::Checkpoint(cp) if !self.json => {
                if let Some(error) = &cp.error {
                    let _ = writeln!(self.err, "taco: no checkpoint before this change: {error}");
                }
            }
            EventData::Compacted(c) if c.parent.is_none() => {
                let _ = match &c.error {
                    None => writeln!(
                        self.err,
                        "taco: context compacted: {} → {} tokens ({} messages summarised)",
                        c.before_tokens, c.after_tokens, c.summarized
                    ),
                    Some(error) => writeln!(self.err, "taco: not compacted: {}", plain(error)),
                };
            }
            _ => {}
        }
        if serialized && self.json && self.out_error.is_none() {
            let is_delta = !event.is_trace();
            // serde_json leaves C1 controls and bidi overrides raw; a terminal gets them as
            // `\u` escapes, which read back the same.
            let line = if self.tty {
                safe::json(&self.line)
            } else {
                Cow::Borrowed(&self.line[..])
            };
            let mut result = self.out.write_all(&line);
            if result.is_ok() && (!is_delta || self.last_flush.elapsed() >= DELTA_FLUSH_EVERY) {
                result = self.out.flush();
                self.last_flush = Instant::now();
            }
            // Nothing more goes to stdout once it fails; the run goes on (its session is
            // still saved) and the exit code says stdout failed.
            self.out_error = result.err();
        }
    }
}

impl<W: Write, E: Write> ExecSink<W, E> {
    /// Plain mode: the answer's text as it arrives, a whole line at a time (a retry can still
    /// take back a partial line; a key is never cut in two by a write).
    fn stream(&mut self, text: &str) {
        let before = self.pending.len();
        self.pending.push_str(text);
        // Only the new text is searched: a reply without newlines stays linear.
        let end = match text.rfind('\n') {
            Some(at) => before + at + 1,
            // A line that never ends still goes out, in pieces.
            None if self.pending.len() >= MAX_HELD_LINE => self.pending.len(),
            None => return,
        };
        let lines: String = self.pending.drain(..end).collect();
        self.write_text(&lines);
        self.attempt_printed = true;
    }

    /// A model call ended: the rest of its text goes out, and a blank line parts the text
    /// said before tool calls from what comes next.
    fn turn_done(&mut self, more: bool) {
        let rest = std::mem::take(&mut self.pending);
        let said = self.attempt_printed || !rest.is_empty();
        self.write_text(&rest);
        if said && !rest.is_empty() && !rest.ends_with('\n') {
            self.write_text("\n");
        }
        if said && more {
            self.write_text("\n");
        }
        self.attempt_printed = false;
    }

    /// The attempt failed and is tried again: its partial line is dropped; lines already
    /// out cannot be, so stderr says the text starts over.
    fn retried(&mut self) {
        self.pending.clear();
        if std::mem::take(&mut self.attempt_printed) {
            self.write_text("\n");
            let _ = writeln!(
                self.err,
                "taco: the reply above was cut off; it starts again below"
            );
        }
    }

    /// The end: what is left of an interrupted reply stays, ended by a newline.
    fn finish_text(&mut self) {
        let rest = std::mem::take(&mut self.pending);
        self.write_text(&rest);
        if self.tty {
            let mut held = String::new();
            self.escaper.finish(&mut held);
            self.write_raw(&held);
        }
        if !rest.is_empty() && !rest.ends_with('\n') {
            self.write_text("\n");
        }
    }

    fn write_text(&mut self, text: &str) {
        if text.is_empty() || self.out_error.is_some() {
            return;
        }
        let clean = self.secrets.redact(text);
        if !self.tty {
            return self.write_raw(&clean);
        }
        let mut escaped = std::mem::take(&mut self.escaped);
        escaped.clear();
        self.escaper.push(&clean, &mut escaped);
        self.write_raw(&escaped);
        self.escaped = escaped;
    }

    fn write_raw(&mut self, clean: &str) {
        if clean.is_empty() || self.out_error.is_some() {
            return;
        }
        let mut result = self.out.write_all(clean.as_bytes());
        if result.is_ok() && self.tty {
            result = self.out.flush();
        }
        self.out_error = result.err();
    }
}

/// One event as a JSON line in `line`, with known key values redacted.
fn serialize(line: &mut Vec<u8>, event: &Event, secrets: &Secrets) -> io::Result<()> {
    line.clear();
    serde_json::to_writer(&mut *line, event).map_err(io::Error::other)?;
    line.push(b'\n');
    if let Cow::Owned(clean) = secrets.redact_bytes(line) {
        *line = clean;
    }
    Ok(())
}

/// Runs one request to the end and returns the process exit code; `recorder` keeps the
/// session file and the audit log.
pub async fn run(
    orchestrator: &mut Orchestrator,
    prompt: &str,
    options: &ExecOptions,
    recorder: Recorder,
    switched: Option<crate::orchestrator::switch::Switched>,
) -> i32 {
    let trace = match &options.trace {
        None => None,
        // Traces hold the conversation: readable by their owner only, like session files.
        Some(path) => match std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(path)
        {
            // `mode` applies only when the file is created; an existing file is narrowed too.
            Ok(file) => match file.set_permissions(std::fs::Permissions::from_mode(0o600)) {
                Ok(()) => Some(BufWriter::new(file)),
                Err(e) => {
                    crate::say!(
                        "taco: cannot make the trace file {} private: {e}",
                        path.display()
                    );
                    return EXIT_USAGE;
                }
            },
            Err(e) => {
                crate::say!("taco: cannot create the trace file {}: {e}", path.display());
                return EXIT_USAGE;
            }
        },
    };
    let sink = ExecSink {
        json: options.json,
        out: BufWriter::with_capacity(64 * 1024, io::stdout()),
        err: io::stderr(),
        trace,
        last_flush: Instant::now(),
        out_error: None,
        secrets: Arc::clone(&options.secrets),
        line: Vec::new(),
        pending: String::new(),
        attempt_printed: false,
        tty: io::stdout().is_terminal(),
        escaper: Escaper::default(),
        escaped: String::new(),
        calls: calls::CallLines::default(),
    };
    let mut recorded = Recorded::new(sink, recorder);
    let mut approver = if options.approve_all {
        FixedApprover::all()
    } else {
        FixedApprover::none()
    };
    let cancel = CancellationToken::new();
    let on_signal = cancel.clone();
    // SIGINT, SIGTERM, SIGHUP and SIGQUIT all cancel the run: tools are killed, the session
    // and trace files end whole, and the exit code says which signal it was.
    let watcher = match Signals::install() {
        Ok(mut signals) => Some(tokio::spawn(async move {
            let stop = signals.recv().await;
            on_signal.cancel();
            stop
        })),
        Err(e) => {
            crate::say!("taco: cannot watch for signals ({e}); Ctrl-C will end taco abruptly");
            None
        }
    };
    let outcome = orchestrator
        .run_with(
            prompt,
            &options.request,
            switched,
            &mut recorded,
            &mut approver,
            &cancel,
        )
        .await;
    // The spans still queued go before taco ends (within a bound); a collector that failed
    // them is said once.
    if let Some(problem) =
        (recorded.recorder_mut()).finish_otel(crate::otel::export::SHUTDOWN_TIMEOUT)
    {
        recorded.inner_mut().problem(problem);
    }
    let sink = recorded.inner_mut();
    let stop = match watcher {
        Some(watcher) if watcher.is_finished() => watcher.await.ok(),
        Some(watcher) => {
            watcher.abort();
            None
        }
        None => None,
    };
    if !options.json {
        // The answer was streamed as it came; only an unfinished line is left.
        sink.finish_text();
    }
    let code = match &outcome {
        Outcome::Final { error, .. } => {
            if error.is_some() {
                EXIT_RUN_ERROR
            } else {
                EXIT_OK
            }
        }
        Outcome::Failed(_) => EXIT_RUN_ERROR,
        // Its message went to stderr with the run's `error` event.
        Outcome::OverBudget { .. } => EXIT_BUDGET,
        Outcome::Cancelled => match stop {
            Some(stop) if stop != Stop::Interrupt => {
                let _ = writeln!(sink.err, "taco: stopped by {}", stop.name());
                stop.exit_code()
            }
            _ => {
                let _ = writeln!(sink.err, "taco: interrupted");
                EXIT_INTERRUPTED
            }
        },
    };
    if sink.out_error.is_none()
        && let Err(e) = sink.out.flush()
    {
        sink.out_error = Some(e);
    }
    let mut code = code;
    if let Some(e) = &sink.out_error {
        crate::say!("taco: cannot write to stdout: {e}");
        if code == EXIT_OK {
            code = EXIT_RUN_ERROR;
        }
    }
    if let Some(trace) = &mut sink.trace
        && let Err(e) = trace.flush()
    {
        crate::say!("taco: cannot write the trace file: {e}");
        if code == EXIT_OK {
            code = EXIT_RUN_ERROR;
        }
    }
    code
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sink() -> ExecSink<Vec<u8>, Vec<u8>> {
        ExecSink {
            json: false,
            out: BufWriter::new(Vec::new()),
            err: Vec::new(),
            trace: None,
            last_flush: Instant::now(),
            out_error: None,
            secrets: Arc::new(Secrets::default()),
            line: Vec::new(),
            pending: String::new(),
            attempt_printed: false,
            tty: false,
            escaper: Escaper::default(),
            escaped: String::new(),
            calls: calls::CallLines::default(),
        }
    }

    fn out(sink: &mut ExecSink<Vec<u8>, Vec<u8>>) -> String {
        sink.out.flush().unwrap();
        String::from_utf8(sink.out.get_ref().clone()).unwrap()
    }

    #[test]
    fn whole_lines_go_out_as_they_come_and_turns_are_parted() {
        let mut s = sink();
        s.stream("Let me ");
        assert_eq!(out(&mut s), "", "a partial line waits");
        s.stream("look.\nAt the ");
        assert_eq!(out(&mut s), "Let me look.\n");
        s.turn_done(true);
        assert_eq!(out(&mut s), "Let me look.\nAt the \n\n");
        s.stream("Answer: 42.");
        s.turn_done(false);
        s.finish_text();
        assert_eq!(out(&mut s), "Let me look.\nAt the \n\nAnswer: 42.\n");
    }

    #[test]
    fn a_retry_drops_the_partial_line_and_says_when_lines_were_out() {
        let mut s = sink();
        s.stream("Partial ans");
        s.retried();
        s.stream("Full answer.");
        s.turn_done(false);
        assert_eq!(out(&mut s), "Full answer.\n");
        assert!(s.err.is_empty());
        let mut s = sink();
        s.stream("line one\nline t");
        s.retried();
        s.stream("line one\nline two");
        s.turn_done(false);
        assert_eq!(out(&mut s), "line one\n\nline one\nline two\n");
        assert!(String::from_utf8_lossy(&s.err).contains("starts again below"));
    }

    #[test]
    fn an_endless_line_goes_out_in_bounded_pieces() {
        let mut s = sink();
        for _ in 0..100 {
            s.stream(&"x".repeat(1000));
        }
        assert!(s.pending.len() < MAX_HELD_LINE);
        assert_eq!(out(&mut s).len() + s.pending.len(), 100_000);
        s.finish_text();
        assert_eq!(out(&mut s).len(), 100_001);
    }

    #[test]
    fn on_a_terminal_the_answer_and_json_lines_are_inert_and_a_pipe_gets_the_bytes() {
        let hostile =
            "title\x1b]0;pwned\x07 clip\x1b]52;c;aGk=\x07 c1\u{9d}0;x\u{9c} bidi\u{202e}\n";
        let mut s = sink();
        s.tty = true;
        // Cut inside the sequences, as deltas may be.
        for piece in [
            "title\x1b",
            "]0;pwned\x07 clip\x1b]5",
            "2;c;aGk=\x07 c1\u{9d}0;x\u{9c} bidi\u{202e}\n",
        ] {
            s.stream(piece);
        }
        s.turn_done(false);
        s.finish_text();
        let shown = out(&mut s);
        assert!(
            !shown.contains('\x1b') && !shown.contains('\x07'),
            "{shown:?}"
        );
        assert!(
            !shown.chars().any(|c| c != '\n' && safe::is_unsafe(c)),
            "{shown:?}"
        );
        assert!(shown.contains("^[]0;pwned^G"), "{shown:?}");
        let mut s = sink();
        s.stream(hostile);
        s.turn_done(false);
        assert_eq!(out(&mut s), hostile, "a pipe gets the answer as it is");
        // --json on a terminal: C1 and bidi as \u escapes.
        let mut s = sink();
        s.tty = true;
        s.json = true;
        s.emit(Event {
            timestamp: 0,
            request_id: Arc::from("r"),
            data: EventData::Delta {
                kind: DeltaKind::Text,
                text: hostile.into(),
            },
        });
        let line = out(&mut s);
        assert!(
            !line.chars().any(|c| c != '\n' && safe::is_unsafe(c)),
            "{line:?}"
        );
        let back: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(back["data"]["text"], hostile);
    }

    #[test]
    fn stderr_notices_are_inert() {
        let mut s = sink();
        s.emit(Event {
            timestamp: 0,
            request_id: Arc::from("r"),
            data: EventData::Error {
                kind: "provider".into(),
                message: "bad\x1b]0;pwned\x07 \u{9b}2J".into(),
            },
        });
        let err = String::from_utf8(s.err.clone()).unwrap();
        assert!(
            !err.chars().any(|c| c != '\n' && safe::is_unsafe(c)),
            "{err:?}"
        );
        assert!(err.contains("^[]0;pwned^G"));
    }

    #[test]
    fn a_key_in_the_answer_is_masked_in_the_stream() {
        let mut s = sink();
        s.secrets = Arc::new(Secrets::new(["sk-abcdefghijklmnop1234".to_string()]));
        s.stream("the key is sk-abcdefg");
        s.stream("hijklmnop1234 ok\n");
        assert!(
            !out(&mut s).contains("sk-abcdefghijklmnop1234"),
            "{}",
            out(&mut s)
        );
    }
}
