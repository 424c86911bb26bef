//! taco as an ACP client (issue 32): `taco --agent NAME` starts an external agent
//! (`[agents.NAME]`) and drives it from taco's cockpit. [`AcpEngine`] is the TUI's engine
//! over it, as the orchestrator task is over taco's own loop: prompts, cancels and approvals
//! go to the agent; its `session/update`s become taco's events (`translate`), so the chat,
//! the tool stack, the timeline, the checklist and the status line work unchanged, and the
//! session file and `taco trace` too. The agent's file requests are answered inside the
//! workspace (`files`); terminals are not offered.

pub mod choice;
mod connection;
mod engine;
pub mod files;
pub mod process;
pub mod translate;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use agent_client_protocol::Lines;
use futures_util::StreamExt;
use tokio::sync::mpsc::Sender;

pub use connection::Incoming;
pub use engine::{AcpEngine, Process, SHOWN_MAX_TURNS, Wiring};

use super::lines;
use crate::recorder::Recorder;

/// How long the agent may take to answer `initialize`, and then `session/new`.
pub const INIT_WAIT: Duration = Duration::from_secs(30);
/// How long the agent may take to end its turn after a cancel before taco ends it.
pub const CANCEL_WAIT: Duration = Duration::from_secs(5);

/// Starts the agent `command` in `workdir` and an engine over it, recording into `recorder`.
pub fn launch(
    command: &process::Command,
    workdir: &Path,
    settings: &crate::tools::ToolSettings,
    env: &dyn Fn(&str) -> Option<String>,
    recorder: Recorder,
    init_wait: Duration,
) -> Result<AcpEngine, String> {
    let running = process::spawn(
        command,
        workdir,
        settings,
        env,
        Arc::clone(&settings.secrets),
    )?;
    let process::Running {
        child,
        stdin,
        stdout,
        stderr,
        group,
    } = running;
    let root = workdir.to_path_buf();
    let process = Process {
        child,
        group,
        stderr,
    };
    Ok(AcpEngine::start(
        &command.name,
        workdir,
        recorder,
        Some(process),
        move |wiring| serve(wiring, root, stdout, stdin, init_wait),
    ))
}

/// An engine over an agent that reads `writer` and writes `reader` (in memory, for tests;
/// nothing to kill).
pub fn connect<R, W>(
    name: &str,
    workdir: PathBuf,
    reader: R,
    writer: W,
    recorder: Recorder,
    init_wait: Duration,
) -> AcpEngine
where
    R: tokio::io::AsyncRead + Send + Unpin + 'static,
    W: tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    let root = workdir.clone();
    AcpEngine::start(name, &root, recorder, None, move |wiring| {
        serve(wiring, workdir, reader, writer, init_wait);
    })
}

/// The connection over the agent's lines, bounded: long lines and lines that are not JSON
/// are dropped and said.
fn serve<R, W>(wiring: Wiring, workdir: PathBuf, reader: R, writer: W, init_wait: Duration)
where
    R: tokio::io::AsyncRead + Send + Unpin + 'static,
    W: tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    let said = wiring.incoming.clone();
    let problems: lines::Problems = Arc::new(move |problem| {
        report(&said, problem.to_string());
    });
    let said = wiring.incoming.clone();
    let incoming = lines::incoming(reader, lines::MAX_LINE, problems).filter_map(move |line| {
        let kept = match line {
            // Blank lines between messages are no message and no problem.
            Ok(line) if line.trim().is_empty() => None,
            Ok(line) if is_json(&line) => Some(Ok(line)),
            Ok(line) => {
                report(&said, not_json(&line));
                None
            }
            Err(e) => Some(Err(e)),
        };
        std::future::ready(kept)
    });
    // The agent's output ended (it closed stdout, or died): the engine hears it now, not at
    // its next request.
    let closed = wiring.incoming.clone();
    let end = futures_util::stream::once(async move {
        let _ = closed.send(Incoming::Ended(None)).await;
        None
    })
    .filter_map(std::future::ready);
    let incoming = incoming.chain(end);
    let transport = Lines::new(lines::outgoing(writer, lines::WRITE_WAIT), incoming);
    tokio::spawn(connection::run(
        transport,
        workdir,
        wiring.incoming,
        wiring.stop,
        init_wait,
    ));
}

/// Says a problem with the agent's output without waiting: a flood of bad lines is not
/// buffered (the log has each).
fn report(to: &Sender<Incoming>, problem: String) {
    tracing::warn!("acp agent: {problem}");
    let _ = to.try_send(Incoming::Problem(problem));
}

/// Whether a line holds one JSON value.
fn is_json(line: &str) -> bool {
    serde_json::from_str::<serde::de::IgnoredAny>(line).is_ok()
}

fn not_json(line: &str) -> String {
    format!(
        "the agent sent a line that is not JSON; it was skipped: {}",
        crate::text::summarize(line, 80)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_json_lines_pass() {
        assert!(is_json(r#"{"jsonrpc":"2.0","method":"x"}"#));
        assert!(!is_json("Loading model…"));
        assert!(!is_json(r#"{"jsonrpc":"2.0","#));
        assert!(not_json("Loading model").contains("not JSON"));
    }
}
