//! `taco acp`: taco as an ACP agent. Each ACP session is an orchestrator task, the same one
//! the TUI drives (`Op`s in, `Event`s out, recorded into the session file, the audit log and
//! OTel on the way); a pump per session turns its events into `session/update`s and its
//! approval requests into `session/request_permission`s. The dispatch loop never waits on a
//! run: a prompt's response is sent by the pump when the run ends.

mod files;
pub mod modes;
pub mod permission;
mod pump;
pub mod updates;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, CancelNotification, ContentBlock, EmbeddedResourceResource, Implementation,
    InitializeRequest, InitializeResponse, ListSessionsRequest, ListSessionsResponse,
    LoadSessionRequest, LoadSessionResponse, McpCapabilities, McpServer, NewSessionRequest,
    NewSessionResponse, PromptCapabilities, PromptRequest, PromptResponse, SessionCapabilities,
    SessionId, SessionInfo, SessionListCapabilities, SetSessionModeRequest, SetSessionModeResponse,
    StopReason,
};
use agent_client_protocol::{Agent, Client, ConnectTo, Responder, V1};
use futures_util::future::BoxFuture;

use crate::orchestrator::task::{Op, OrchestratorTask};
use crate::session::Entry;

/// What `taco acp` needs from the rest of taco (`wiring` gives it): sessions opened and
/// listed.
pub trait Host: Send + Sync + 'static {
    /// Opens a new session in `open.cwd`, or loads `open.load`.
    fn open(&self, open: Open) -> BoxFuture<'static, Result<Session, String>>;
    /// taco's saved sessions (of `cwd`, when given), newest first.
    fn list(&self, cwd: Option<PathBuf>) -> Vec<SessionInfo>;
}

/// A session to open.
#[derive(Debug, Clone)]
pub struct Open {
    /// Its workspace.
    pub cwd: PathBuf,
    /// MCP servers the client adds to it.
    pub mcp_servers: Vec<McpServer>,
    /// The saved session to load (`session/load`).
    pub load: Option<String>,
    /// The client's copy of files, when it offers one (`fs/read_text_file`).
    pub buffers: crate::tools::buffers::EditorBuffers,
    /// Where the session's id goes once it is known (the client's reads name it).
    pub named: Arc<std::sync::OnceLock<SessionId>>,
}

/// A session, running.
pub struct Session {
    /// Its id: the session file's (a session that cannot be saved gets one of its own).
    pub id: String,
    /// The orchestrator task behind it.
    pub task: OrchestratorTask,
    /// A loaded session's newest entries, replayed to the client.
    pub history: Vec<Entry>,
    /// Its workspace.
    pub workdir: PathBuf,
    /// The prices its usage is costed at.
    pub pricing: crate::config::pricing::Pricing,
    /// The permission mode it starts in.
    pub mode: crate::event::Mode,
    /// Ends when its MCP servers have started or failed (each within its startup time): a
    /// prompt waits for it, so the first request gets the client's servers' tools.
    pub ready: Ready,
    /// Runs when the session ends (its MCP servers stop).
    pub on_close: Box<dyn FnOnce() + Send>,
}

/// A session's servers settled.
pub type Ready = futures_util::future::Shared<BoxFuture<'static, ()>>;

/// One prompt's answer waits here until its run ends.
type Waiting = Arc<Mutex<Option<Responder<PromptResponse, V1>>>>;

/// A session the connection knows.
struct Live {
    ops: tokio::sync::mpsc::UnboundedSender<Op>,
    waiting: Waiting,
    ready: Ready,
    pump: tokio::task::JoinHandle<()>,
}

type Sessions = Arc<Mutex<HashMap<String, Live>>>;

/// Most sessions one connection keeps open (each is a task, its MCP servers and a file): a
/// client opening more is refused, not obeyed without end.
pub const MAX_SESSIONS: usize = 32;

/// Serves ACP over `transport` until the client goes; every session's run is cancelled then.
pub async fn serve(
    host: Arc<dyn Host>,
    transport: impl ConnectTo<Agent> + 'static,
) -> Result<(), agent_client_protocol::Error> {
    let sessions: Sessions = Arc::default();
    // Whether the client reads files for taco (said in `initialize`).
    let reads = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let result = Agent
        .v1()
        .name("taco")
        .on_receive_request(
            {
                let reads = Arc::clone(&reads);
                async move |init: InitializeRequest,
                            responder: Responder<InitializeResponse, V1>,
                            _cx| {
                    let offered = init.client_capabilities.fs.read_text_file;
                    reads.store(offered, std::sync::atomic::Ordering::Relaxed);
                    responder.respond(initialized(init))
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let (host, sessions) = (Arc::clone(&host), Arc::clone(&sessions));
                let reads = Arc::clone(&reads);
                async move |request: NewSessionRequest,
                            responder: Responder<NewSessionResponse, V1>,
                            cx: ConnectionTo<Client>| {
                    let open = opening(&cx, &reads, request.cwd, request.mcp_servers, None);
                    let (host, sessions) = (Arc::clone(&host), Arc::clone(&sessions));
                    // Opening reads config and starts servers: off the dispatch loop.
                    tokio::spawn(async move {
                        match start(&*host, &sessions, &cx, open).await {
                            Ok((id, mode)) => responder
                                .respond(NewSessionResponse::new(id).modes(modes::state(mode))),
                            Err(why) => responder.respond_with_error(problem(why)),
                        }
                    });
                    Ok(())
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let (host, sessions) = (Arc::clone(&host), Arc::clone(&sessions));
                let reads = Arc::clone(&reads);
                async move |request: LoadSessionRequest,
                            responder: Responder<LoadSessionResponse, V1>,
                            cx: ConnectionTo<Client>| {
                    let load = Some(request.session_id.0.to_string());
                    let open = opening(&cx, &reads, request.cwd, request.mcp_servers, load);
                    let (host, sessions) = (Arc::clone(&host), Arc::clone(&sessions));
                    tokio::spawn(async move {
                        match start(&*host, &sessions, &cx, open).await {
                            Ok((_, mode)) => responder
                                .respond(LoadSessionResponse::new().modes(modes::state(mode))),
                            Err(why) => responder.respond_with_error(problem(why)),
                        }
                    });
                    Ok(())
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let host = Arc::clone(&host);
                async move |request: ListSessionsRequest,
                            responder: Responder<ListSessionsResponse, V1>,
                            _cx| {
                    let host = Arc::clone(&host);
                    tokio::spawn(async move {
                        let cwd = request.cwd;
                        let listed = tokio::task::spawn_blocking(move || host.list(cwd)).await;
                        match listed {
                            Ok(sessions) => responder.respond(ListSessionsResponse::new(sessions)),
                            Err(_) => responder.respond_with_error(problem(
                                "the session list could not be read".to_string(),
                            )),
                        }
                    });
                    Ok(())
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let sessions = Arc::clone(&sessions);
                async move |request: PromptRequest,
                            responder: Responder<PromptResponse, V1>,
                            _cx| { prompt(&sessions, request, responder) }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let sessions = Arc::clone(&sessions);
                async move |request: SetSessionModeRequest,
                            responder: Responder<SetSessionModeResponse, V1>,
                            _cx| {
                    let mode = modes::parse(&request.mode_id.0);
                    let sessions = lock(&sessions);
                    match (sessions.get(&*request.session_id.0), mode) {
                        (Some(live), Some(mode)) => {
                            let _ = live.ops.send(Op::SetMode(mode));
                            responder.respond(SetSessionModeResponse::new())
                        }
                        _ => responder.respond_with_error(
                            agent_client_protocol::Error::invalid_params()
                                .data("no such session or mode (ask, auto-edit, plan)"),
                        ),
                    }
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            {
                let sessions = Arc::clone(&sessions);
                async move |cancel: CancelNotification, _cx| {
                    if let Some(live) = lock(&sessions).get(&*cancel.session_id.0) {
                        let _ = live.ops.send(Op::Cancel);
                    }
                    Ok(())
                }
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_to(transport)
        .await;
    // The client is gone: every run stops, its last lines are recorded.
    let live: Vec<Live> = lock(&sessions).drain().map(|(_, live)| live).collect();
    let ending = live.into_iter().map(|session| {
        let _ = session.ops.send(Op::Shutdown);
        session.pump
    });
    // All at once, within one bound: a tool slow to cancel must not keep taco open.
    let _ = tokio::time::timeout(
        std::time::Duration::from_secs(3),
        futures_util::future::join_all(ending),
    )
    .await;
    result
}

/// A session to open; its reads go through the client when the client offered them.
fn opening(
    cx: &ConnectionTo<Client>,
    reads: &std::sync::atomic::AtomicBool,
    cwd: PathBuf,
    mcp_servers: Vec<McpServer>,
    load: Option<String>,
) -> Open {
    let named = Arc::new(std::sync::OnceLock::new());
    let buffers = reads.load(std::sync::atomic::Ordering::Relaxed).then(|| {
        Arc::new(files::ClientFiles::new(cx.clone(), Arc::clone(&named)))
            as Arc<dyn crate::tools::buffers::Buffers>
    });
    Open {
        cwd,
        mcp_servers,
        load,
        buffers: crate::tools::buffers::EditorBuffers(buffers),
        named,
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// What taco can do, said honestly: sessions load and list; prompts take text and embedded
/// text resources (no images or audio over ACP yet); MCP servers over stdio and HTTP.
fn initialized(init: InitializeRequest) -> InitializeResponse {
    let capabilities = AgentCapabilities::new()
        .load_session(true)
        .prompt_capabilities(PromptCapabilities::new().embedded_context(true))
        .mcp_capabilities(McpCapabilities::new().http(true))
        .session_capabilities(SessionCapabilities::new().list(SessionListCapabilities::new()));
    InitializeResponse::new(init.protocol_version)
        .agent_capabilities(capabilities)
        .agent_info(Implementation::new("taco", env!("CARGO_PKG_VERSION")).title("taco"))
}

fn problem(why: String) -> agent_client_protocol::Error {
    agent_client_protocol::Error::new(-32603, why)
}

/// Opens a session and starts its pump; its id and mode.
async fn start(
    host: &dyn Host,
    sessions: &Sessions,
    cx: &ConnectionTo<Client>,
    open: Open,
) -> Result<(String, crate::event::Mode), String> {
    if !open.cwd.is_absolute() {
        return Err(format!(
            "cwd must be an absolute path, got {}",
            open.cwd.display()
        ));
    }
    let loaded = open.load.clone();
    let full = {
        let open_now = lock(sessions);
        open_now.len() >= MAX_SESSIONS && !loaded.is_some_and(|id| open_now.contains_key(&id))
    };
    if full {
        return Err(format!(
            "this connection has {MAX_SESSIONS} sessions open, the most taco keeps; start another `taco acp` for more"
        ));
    }
    let named = Arc::clone(&open.named);
    let session = host.open(open).await?;
    let id = session.id.clone();
    let _ = named.set(SessionId::new(id.clone()));
    if let Some(old) = lock(sessions).remove(&id) {
        // Loaded again: the earlier copy stops first, so one task writes the file.
        let _ = old.ops.send(Op::Shutdown);
        old.pump.abort();
    }
    let waiting: Waiting = Arc::default();
    let mode = session.mode;
    let ops = session.task.ops.clone();
    let ready = session.ready.clone();
    // A loaded session's history reaches the client before the load's response.
    pump::replay(cx, &SessionId::new(id.clone()), &session);
    let pump = tokio::spawn(pump::run(session, cx.clone(), Arc::clone(&waiting)));
    lock(sessions).insert(
        id.clone(),
        Live {
            ops,
            waiting,
            ready,
            pump,
        },
    );
    Ok((id, mode))
}

/// Starts a prompt's run; its response waits for the run's end.
fn prompt(
    sessions: &Sessions,
    request: PromptRequest,
    responder: Responder<PromptResponse, V1>,
) -> Result<(), agent_client_protocol::Error> {
    let sessions = lock(sessions);
    let Some(live) = sessions.get(&*request.session_id.0) else {
        return responder
            .respond_with_error(agent_client_protocol::Error::invalid_params().data(
                serde_json::json!({"sessionId": "no such session: create or load it first"}),
            ));
    };
    let text = prompt_text(&request.prompt);
    if text.trim().is_empty() {
        return responder.respond(PromptResponse::new(StopReason::EndTurn));
    }
    let mut waiting = lock(&live.waiting);
    if waiting.is_some() {
        drop(waiting);
        return responder.respond_with_error(problem(
            "a prompt is already running in this session; cancel it or wait for its end"
                .to_string(),
        ));
    }
    *waiting = Some(responder);
    drop(waiting);
    let (ops, waiting, ready) = (
        live.ops.clone(),
        Arc::clone(&live.waiting),
        live.ready.clone(),
    );
    tokio::spawn(async move {
        ready.await;
        if ops.send(Op::Submit(text)).is_err()
            && let Some(responder) = lock(&waiting).take()
        {
            let _ = responder.respond_with_error(problem("the session has ended".to_string()));
        }
    });
    Ok(())
}

/// The prompt as the text taco's request is: text blocks as they are, an embedded text
/// resource in a fence under its URI, a link as its URI (the model can read it with its
/// tools).
pub fn prompt_text(blocks: &[ContentBlock]) -> String {
    let mut parts = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::Text(text) => parts.push(text.text.clone()),
            ContentBlock::ResourceLink(link) => parts.push(link.uri.clone()),
            ContentBlock::Resource(resource) => {
                if let EmbeddedResourceResource::TextResourceContents(text) = &resource.resource {
                    parts.push(format!("{}:\n```\n{}\n```", text.uri, text.text));
                }
            }
            _ => {}
        }
    }
    parts.join("\n\n")
}
