//! The ACP connection to an external agent: taco as the client. What the agent sends goes
//! to the engine over one bounded channel: `session/update`s straight from taco's line stream
//! (`client.rs`: the crate queues what it reads without a bound, so updates are taken before
//! it, and the agent's output is not read while the engine is behind), requests from the
//! callbacks here, which run in the connection's dispatch loop and wait only for room in the
//! channel. No callback waits on the agent (that would stall the loop): file requests are
//! answered off it.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AuthMethod, AuthenticateRequest, ClientCapabilities, CreateTerminalRequest,
    CreateTerminalResponse, FileSystemCapabilities, Implementation, InitializeRequest,
    KillTerminalRequest, KillTerminalResponse, NewSessionRequest, PromptResponse,
    ReadTextFileRequest, ReadTextFileResponse, ReleaseTerminalRequest, ReleaseTerminalResponse,
    RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse, SessionId,
    SessionUpdate, TerminalOutputRequest, TerminalOutputResponse, WaitForTerminalExitRequest,
    WaitForTerminalExitResponse, WriteTextFileRequest, WriteTextFileResponse,
};
use agent_client_protocol::{Agent, Client, ConnectTo, Responder, V1};
use serde_json::Value;
use tokio::sync::mpsc::Sender;
use tokio_util::sync::CancellationToken;

use super::files;
use super::terminals::{News, Terminals};

/// What the agent sent, or what became of the connection, for the engine.
pub enum Incoming {
    /// Initialized, with a session: prompts may go.
    Ready {
        /// The connection, to send on.
        cx: ConnectionTo<Agent>,
        /// The session taco opened.
        session: SessionId,
        /// The agent's name and version, as it gave them.
        info: Option<String>,
    },
    /// A `session/update`, with its JSON (the payload view shows it).
    Update {
        /// The update.
        update: Box<SessionUpdate>,
        /// As JSON.
        raw: Value,
    },
    /// A `session/request_permission`, answered when the user decides.
    Permission {
        /// What is asked.
        request: Box<RequestPermissionRequest>,
        /// As JSON.
        raw: Value,
        /// Where the answer goes.
        responder: Responder<RequestPermissionResponse, V1>,
    },
    /// A `terminal/create`: the engine starts it if a turn is in progress.
    CreateTerminal {
        /// What to run.
        request: Box<CreateTerminalRequest>,
        /// Where the answer goes.
        responder: Responder<CreateTerminalResponse, V1>,
    },
    /// News of a terminal taco runs for the agent.
    Terminal(News),
    /// The answer to prompt number `prompt` (or why there is none).
    Answered {
        /// The engine's number for the prompt.
        prompt: u64,
        /// The agent's response, or what went wrong.
        result: Result<PromptResponse, String>,
    },
    /// Something the agent did that taco refused or dropped (a malformed line, a file
    /// outside the workspace), to be said.
    Problem(String),
    /// The connection ended; why, when it failed.
    Ended(Option<String>),
    /// The agent's process exited, with this status.
    Exited(String),
}

/// Runs the client side of the connection over `transport` in `workdir` until `stop` (or the
/// agent goes). Initialize and the new session each have `init_wait` to answer.
pub async fn run(
    transport: impl ConnectTo<Client> + 'static,
    workdir: PathBuf,
    tx: Sender<Incoming>,
    stop: CancellationToken,
    (init_wait, auth): (Duration, Option<String>),
    terminals: Option<Arc<Terminals>>,
) {
    let root = workdir.clone();
    let offers_terminals = terminals.is_some();
    let result = Client
        .v1()
        .name("taco")
        .on_receive_request(
            {
                let tx = tx.clone();
                async move |request: RequestPermissionRequest,
                            responder: Responder<RequestPermissionResponse, V1>,
                            _cx| {
                    let raw = serde_json::to_value(&request).unwrap_or(Value::Null);
                    let asked = Incoming::Permission {
                        request: Box::new(request),
                        raw,
                        responder,
                    };
                    // No engine to ask: the request is cancelled, as the protocol says.
                    if let Err(unsent) = tx.send(asked).await
                        && let Incoming::Permission { responder, .. } = unsent.0
                    {
                        return responder.respond(RequestPermissionResponse::new(
                            RequestPermissionOutcome::Cancelled,
                        ));
                    }
                    Ok(())
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let (tx, root) = (tx.clone(), root.clone());
                async move |request: ReadTextFileRequest,
                            responder: Responder<ReadTextFileResponse, V1>,
                            _cx| {
                    let (tx, root) = (tx.clone(), root.clone());
                    tokio::spawn(async move {
                        let path = request.path.clone();
                        let read = tokio::task::spawn_blocking(move || {
                            files::read(&root, &request.path, request.line, request.limit)
                        })
                        .await;
                        let _ = match read {
                            Ok(Ok(content)) => {
                                responder.respond(ReadTextFileResponse::new(content))
                            }
                            Ok(Err(refused)) => {
                                refuse(&tx, "read", &path, &refused.0).await;
                                responder.respond_with_error(refusal(refused.0))
                            }
                            Err(e) => responder.respond_with_error(refusal(e.to_string())),
                        };
                    });
                    Ok(())
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let (tx, root) = (tx.clone(), root.clone());
                async move |request: WriteTextFileRequest,
                            responder: Responder<WriteTextFileResponse, V1>,
                            _cx| {
                    let (tx, root) = (tx.clone(), root.clone());
                    tokio::spawn(async move {
                        let path = request.path.clone();
                        let written = tokio::task::spawn_blocking(move || {
                            files::write(&root, &request.path, &request.content)
                        })
                        .await;
                        let _ = match written {
                            Ok(Ok(())) => {
                                tracing::info!(path = %path.display(), "acp agent wrote a file");
                                responder.respond(WriteTextFileResponse::new())
                            }
                            Ok(Err(refused)) => {
                                refuse(&tx, "write", &path, &refused.0).await;
                                responder.respond_with_error(refusal(refused.0))
                            }
                            Err(e) => responder.respond_with_error(refusal(e.to_string())),
                        };
                    });
                    Ok(())
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let tx = tx.clone();
                async move |request: CreateTerminalRequest,
                            responder: Responder<CreateTerminalResponse, V1>,
                            _cx| {
                    let asked = Incoming::CreateTerminal {
                        request: Box::new(request),
                        responder,
                    };
                    if let Err(unsent) = tx.send(asked).await
                        && let Incoming::CreateTerminal { responder, .. } = unsent.0
                    {
                        return responder.respond_with_error(refusal("taco is done with this session".into()));
                    }
                    Ok(())
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let terminals = terminals.clone();
                async move |request: TerminalOutputRequest,
                            responder: Responder<TerminalOutputResponse, V1>,
                            _cx| {
                    answer(responder, held(terminals.as_deref())
                        .and_then(|t| t.output(&request.terminal_id.0)))
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let terminals = terminals.clone();
                async move |request: WaitForTerminalExitRequest,
                            responder: Responder<WaitForTerminalExitResponse, V1>,
                            _cx| {
                    let terminals = terminals.clone();
                    // Off the dispatch loop: a command may run for minutes.
                    tokio::spawn(async move {
                        let exit = match held(terminals.as_deref()) {
                            Ok(t) => t.wait(&request.terminal_id.0).await,
                            Err(refused) => Err(refused),
                        };
                        let _ = answer(responder, exit.map(WaitForTerminalExitResponse::new));
                    });
                    Ok(())
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let terminals = terminals.clone();
                async move |request: KillTerminalRequest,
                            responder: Responder<KillTerminalResponse, V1>,
                            _cx| {
                    answer(responder, held(terminals.as_deref())
                        .and_then(|t| t.kill(&request.terminal_id.0))
                        .map(|()| KillTerminalResponse::new()))
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let terminals = terminals.clone();
                async move |request: ReleaseTerminalRequest,
                            responder: Responder<ReleaseTerminalResponse, V1>,
                            _cx| {
                    answer(responder, held(terminals.as_deref())
                        .and_then(|t| t.release(&request.terminal_id.0))
                        .map(|()| ReleaseTerminalResponse::new()))
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(transport, {
            let tx = tx.clone();
            async move |cx: ConnectionTo<Agent>| {
                let secs = init_wait.as_secs_f64();
                let init = InitializeRequest::new(ProtocolVersion::V1)
                    .client_capabilities(
                        ClientCapabilities::new()
                            .fs(FileSystemCapabilities::new()
                                .read_text_file(true)
                                .write_text_file(true))
                            .terminal(offers_terminals),
                    )
                    .client_info(Implementation::new("taco", env!("CARGO_PKG_VERSION")));
                let initialized =
                    tokio::time::timeout(init_wait, cx.send_request(init).block_task())
                        .await
                        .map_err(|_| {
                            failure(format!(
                                "the agent did not answer initialize within {secs} s"
                            ))
                        })??;
                let methods = auth_methods(&initialized.auth_methods);
                let info = initialized
                    .agent_info
                    .map(|i| format!("{} {}", i.name, i.version));
                if let Some(method) = auth {
                    if !initialized.auth_methods.iter().any(|m| *m.id().0 == *method) {
                        return Err(failure(format!(
                            "the agent offers no authentication method `{method}` (auth in its [agents] entry); it offers: {methods}"
                        )));
                    }
                    tokio::time::timeout(
                        init_wait,
                        cx.send_request(AuthenticateRequest::new(method)).block_task(),
                    )
                    .await
                    .map_err(|_| failure(format!("the agent did not authenticate within {secs} s")))??;
                }
                let opened = tokio::time::timeout(
                    init_wait,
                    cx.send_request(NewSessionRequest::new(workdir))
                        .block_task(),
                )
                .await
                .map_err(|_| {
                    failure(format!("the agent did not open a session within {secs} s"))
                })?
                .map_err(|e| {
                    if e.code == agent_client_protocol::ErrorCode::AUTH_REQUIRED && !methods.is_empty() {
                        failure(format!(
                            "the agent needs you to authenticate: set auth in its [agents] entry to one of: {methods}"
                        ))
                    } else {
                        e
                    }
                })?;
                let ready = Incoming::Ready {
                    cx: cx.clone(),
                    session: opened.session_id,
                    info,
                };
                if tx.send(ready).await.is_ok() {
                    stop.cancelled().await;
                }
                Ok(())
            }
        })
        .await;
    let why = result.err().map(|e| plain(&e));
    let _ = tx.send(Incoming::Ended(why)).await;
}

/// The agent's authentication methods, for the user to pick one: `id (name)`, comma-separated.
fn auth_methods(methods: &[AuthMethod]) -> String {
    methods
        .iter()
        .map(|m| format!("{} ({})", m.id().0, m.name()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The session's terminals, when taco offered them.
fn held(terminals: Option<&Terminals>) -> Result<&Terminals, files::Refused> {
    terminals.ok_or_else(|| files::Refused("taco did not offer terminals".into()))
}

/// Answers a request with `result`, or its refusal.
fn answer<T: agent_client_protocol::JsonRpcResponse>(
    responder: Responder<T, V1>,
    result: Result<T, files::Refused>,
) -> Result<(), agent_client_protocol::Error> {
    match result {
        Ok(response) => responder.respond(response),
        Err(refused) => responder.respond_with_error(refusal(refused.0)),
    }
}

/// An error of taco's own, as the connection reports it.
fn failure(message: String) -> agent_client_protocol::Error {
    agent_client_protocol::Error::new(-32603, message)
}

/// A refused file request, for the agent.
fn refusal(message: String) -> agent_client_protocol::Error {
    agent_client_protocol::Error::new(-32602, message)
}

/// Says a refused file request (the agent gets the reason too).
async fn refuse(tx: &Sender<Incoming>, what: &str, path: &std::path::Path, why: &str) {
    tracing::warn!(path = %path.display(), "acp agent's {what} refused: {why}");
    let _ = tx
        .send(Incoming::Problem(format!(
            "the agent's {what} of {} was refused: {why}",
            path.display()
        )))
        .await;
}

/// An error as words: its message, and its data when it says more.
pub fn plain(e: &agent_client_protocol::Error) -> String {
    match &e.data {
        Some(Value::String(data)) if !data.is_empty() => format!("{} ({data})", e.message),
        Some(data) if !data.is_null() => {
            let data = crate::text::summarize(&data.to_string(), 300);
            format!("{} ({data})", e.message)
        }
        _ => e.message.clone(),
    }
}
