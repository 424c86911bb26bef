//! taco as an ACP client (issue 32): `taco --agent NAME` starts an external agent
//! (`[agents.NAME]`) and drives it from taco's cockpit. [`AcpEngine`] is the TUI's engine
//! over it, as the orchestrator task is over taco's own loop: prompts, cancels and approvals
//! go to the agent; its `session/update`s become taco's events (`translate`), so the chat,
//! the tool stack, the timeline, the checklist and the status line work unchanged, and the
//! session file and `taco trace` too. The agent's file requests are answered inside the
//! workspace (`files`), its terminals run in taco's sandbox (`terminals`).

pub mod choice;
mod connection;
mod engine;
pub mod files;
pub mod process;
pub mod terminals;
pub mod translate;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use agent_client_protocol::Lines;
use agent_client_protocol::v1::schema::{SessionNotification, SessionUpdate};
use futures_util::StreamExt;
use serde_json::Value;
use tokio::sync::mpsc::Sender;

pub use connection::Incoming;
pub use engine::{AcpEngine, Process, SHOWN_MAX_TURNS, Wiring};

use super::lines;
use crate::recorder::Recorder;

/// How long the agent may take to answer `initialize`, and then `session/new`.
pub const INIT_WAIT: Duration = Duration::from_secs(30);
/// How long the agent may take to end its turn after a cancel before taco ends it.
pub const CANCEL_WAIT: Duration = Duration::from_secs(5);

/// What a connection is given besides its pipes.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// How long `initialize`, `authenticate` and `session/new` may each take.
    pub init_wait: Duration,
    /// The authentication method to use before the session opens.
    pub auth: Option<String>,
    /// How the agent's terminals run (sandbox, environment, secrets); none: not offered.
    pub terminals: Option<Arc<crate::tools::ToolSettings>>,
}

/// Starts the agent `command` in `workdir` and an engine over it, recording into `recorder`;
/// its terminals run with `settings`.
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
    let options = Options {
        init_wait,
        auth: command.auth.clone(),
        terminals: Some(Arc::new(settings.clone())),
    };
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
        options.terminals.clone(),
        move |wiring| serve(wiring, root, stdout, stdin, options),
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
    options: Options,
) -> AcpEngine
where
    R: tokio::io::AsyncRead + Send + Unpin + 'static,
    W: tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    let root = workdir.clone();
    let terminals = options.terminals.clone();
    AcpEngine::start(name, &root, recorder, None, terminals, move |wiring| {
        serve(wiring, workdir, reader, writer, options);
    })
}

/// The connection over the agent's lines, bounded: long lines and lines that are not JSON
/// are dropped and said.
fn serve<R, W>(wiring: Wiring, workdir: PathBuf, reader: R, writer: W, options: Options)
where
    R: tokio::io::AsyncRead + Send + Unpin + 'static,
    W: tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    let said = wiring.incoming.clone();
    let problems: lines::Problems = Arc::new(move |problem| {
        report(&said, problem.to_string());
    });
    let tx = wiring.incoming.clone();
    let incoming = lines::incoming(reader, lines::MAX_LINE, problems).filter_map(move |line| {
        let tx = tx.clone();
        async move {
            match line {
                Ok(line) => sort(&tx, line).await.map(Ok),
                Err(e) => Some(Err(e)),
            }
        }
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
        (options.init_wait, options.auth),
        wiring.terminals,
    ));
}

/// Says a problem with the agent's output without waiting: a flood of bad lines is not
/// buffered (the log has each).
fn report(to: &Sender<Incoming>, problem: String) {
    tracing::warn!("acp agent: {problem}");
    let _ = to.try_send(Incoming::Problem(problem));
}

/// What one of the agent's lines is, as far as taco sorts them before the crate sees them.
enum Line {
    /// Blank: no message, no problem.
    Blank,
    /// Not JSON: skipped and said.
    NotJson,
    /// A `session/update`: read here.
    Update(Box<SessionUpdate>, Value),
    /// A `session/update` taco cannot read: skipped and said.
    BadUpdate(String),
    /// Anything else (responses, requests): the crate's.
    Other,
}

fn classify(line: &str) -> Line {
    if line.trim().is_empty() {
        return Line::Blank;
    }
    let Ok(mut message) = serde_json::from_str::<Value>(line) else {
        return Line::NotJson;
    };
    if message.get("method").and_then(Value::as_str) != Some("session/update")
        || message.get("id").is_some()
    {
        return Line::Other;
    }
    let params = message
        .get_mut("params")
        .map(Value::take)
        .unwrap_or(Value::Null);
    match serde_json::from_value::<SessionNotification>(params.clone()) {
        Ok(notification) => {
            let raw = params.get("update").cloned().unwrap_or(Value::Null);
            Line::Update(Box::new(notification.update), raw)
        }
        Err(e) => Line::BadUpdate(e.to_string()),
    }
}

/// Sorts one line: `session/update`s go to the engine here, over its bounded channel (awaiting
/// room, so while the engine is behind the agent's output is not read and its writes wait:
/// the crate queues what it reads without a bound); the rest goes on to the crate. An update
/// reaches the engine before any later line reaches the crate, so a prompt's answer never
/// overtakes the updates before it.
async fn sort(tx: &Sender<Incoming>, line: String) -> Option<String> {
    match classify(&line) {
        Line::Blank => None,
        Line::NotJson => {
            report(tx, not_json(&line));
            None
        }
        Line::Update(update, raw) => {
            let _ = tx.send(Incoming::Update { update, raw }).await;
            None
        }
        Line::BadUpdate(why) => {
            report(
                tx,
                format!("the agent sent an update taco cannot read; it was skipped: {why}"),
            );
            None
        }
        Line::Other => Some(line),
    }
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
    fn lines_are_sorted_before_the_crate_sees_them() {
        assert!(matches!(classify(""), Line::Blank));
        assert!(matches!(classify("Loading model…"), Line::NotJson));
        assert!(matches!(classify(r#"{"jsonrpc":"2.0","#), Line::NotJson));
        assert!(matches!(
            classify(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            Line::Other
        ));
        let update = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}"#;
        let Line::Update(_, raw) = classify(update) else {
            panic!("an update")
        };
        assert_eq!(raw["content"]["text"], "hi");
        let bad = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":42}}}"#;
        assert!(matches!(classify(bad), Line::BadUpdate(_)));
        assert!(not_json("Loading model").contains("not JSON"));
    }
}
