//! The binary's commands, wired: config → provider → tool registry → orchestrator → session
//! recorder → the front end (`exec`, or the TUI through an [`Engine`](crate::engine::Engine)).
//! The one library module besides `tui` that knows both sides; `main.rs` only parses
//! arguments and picks a command. Every function returns the process exit code.

use std::sync::Arc;

use crate::config::{self, Overrides};
use crate::exec::{EXIT_OK, EXIT_RUN_ERROR, EXIT_USAGE};
use crate::mcp::{McpHub, Notice, StartContext};
use crate::orchestrator::{Orchestrator, Settings};
use crate::session::{self, SessionKind};
use crate::startup::{self, Opened, Resuming};
use crate::tools::{ToolRegistry, ToolSettings, ToolSource};
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

mod acp;
mod agent;
mod checkpoints;
mod headless;
mod oauth;
mod otlp;
mod rewind;
mod screen;
mod trust;

pub use acp::acp;
pub use agent::agent_tui;
pub use headless::{ExecRequest, exec};
pub use oauth::{mcp_login, mcp_logout};
pub use otlp::otlp_json;
pub use rewind::{RewindRequest, rewind};
pub use screen::{trace, tui};
pub use trust::trust;

/// What every command that runs the agent starts from: the command line's choices.
#[derive(Debug, Clone, Default)]
pub struct Start {
    /// `-c`, `-p`, `-m`, `--base-url`, `--max-turns`, `-C`.
    pub overrides: Overrides,
    /// `--resume` (an empty id: the newest session of the workdir).
    pub resume: Option<String>,
    /// MCP servers besides the config's (an ACP client's, for its session).
    pub extra_mcp: Vec<crate::mcp::ServerSpec>,
    /// The editor's copy of files `read_file` reads first (an ACP client's).
    pub buffers: crate::tools::buffers::EditorBuffers,
}

/// The agent, ready to run: its resolved config, the orchestrator, the session it writes and
/// the MCP servers starting in the background.
struct Ready {
    resolved: config::Resolved,
    orchestrator: Orchestrator,
    opened: Opened,
    mcp: Arc<McpHub>,
    notices: UnboundedReceiver<Notice>,
}

/// Resolves the config (after `--resume` found its session), builds the orchestrator and
/// opens its session (a new one's header says it was started in `kind`); on failure says why
/// and gives exit code 2. `announce` runs between the two, so `exec` can say which provider was picked before anything else is said.
async fn setup(
    start: &Start,
    kind: SessionKind,
    announce: impl FnOnce(&config::Resolved),
) -> Result<Ready, i32> {
    prepare(start, kind, announce).await.map_err(usage)
}

/// [`setup`], with what went wrong as a message (the TUI's `/resume` says it on screen).
async fn prepare(
    start: &Start,
    kind: SessionKind,
    announce: impl FnOnce(&config::Resolved),
) -> Result<Ready, String> {
    let (resolved, mut orchestrator, resuming) = build(start).await?;
    announce(&resolved);
    let mut opened = startup::open_session(&resolved, &mut orchestrator, resuming, kind)?;
    let mut orchestrator = checkpoints::attach(&resolved, orchestrator, &mut opened.notes);
    opened.notes.extend(resolved.hooks.notes.iter().cloned());
    // Servers start now, in the background: nothing waits for them here.
    let (sender, notices) = unbounded_channel();
    let mut servers = resolved.mcp.clone();
    // A server the config names keeps the config's settings.
    for extra in &start.extra_mcp {
        if servers.iter().any(|s| s.name == extra.name) {
            opened.notes.push(format!(
                "MCP server {}: the config has one of that name; it is kept",
                extra.name
            ));
        } else {
            servers.push(extra.clone());
        }
    }
    let mcp = McpHub::start(
        servers,
        StartContext {
            workdir: resolved.workdir.clone(),
            settings: Arc::clone(&orchestrator.settings().tools),
            notices: Some(sender),
            max_tools: resolved.mcp_max_tools,
        },
    );
    orchestrator.add_tool_source(Arc::clone(&mcp) as Arc<dyn ToolSource>);
    Ok(Ready {
        resolved,
        orchestrator,
        opened,
        mcp,
        notices,
    })
}

/// Config → provider → registry → orchestrator.
async fn build(
    start: &Start,
) -> Result<(config::Resolved, Orchestrator, Option<Resuming>), String> {
    // Secrets come from the store the environment's were moved to (`vault`).
    let env = crate::vault::var;
    let (chosen, resuming) =
        startup::resume_overrides(start.overrides.clone(), start.resume.as_deref())?;
    let mut resolved = config::resolve(&chosen, &env, config::probe_ollama)
        .await
        .map_err(|e| e.to_string())?;
    resolved.tools.secrets = Arc::new(crate::vault::secrets(&resolved.tools.secret_vars));
    resolved.tools.buffers = start.buffers.clone();
    let provider = config::build_provider(&resolved.provider).map_err(|e| e.to_string())?;
    let settings = settings(&resolved);
    let orchestrator = Orchestrator::new(provider, Arc::new(ToolRegistry::builtins()), settings);
    Ok((resolved, orchestrator, resuming))
}

/// The orchestrator's settings from the resolved config.
fn settings(resolved: &config::Resolved) -> Settings {
    // A key value written into a prompt or an instruction file never reaches the provider.
    let secrets = &resolved.tools.secrets;
    let instructions = resolved.instructions.prompt_block().unwrap_or_default();
    Settings {
        max_turns: resolved.max_turns,
        system_prompt: secrets.redact(&resolved.system_prompt).into_owned(),
        instructions: secrets.redact(&instructions).into_owned(),
        workdir: resolved.workdir.clone(),
        tools: Arc::new(ToolSettings {
            html_helper: std::env::current_exe().ok(),
            ..resolved.tools.clone()
        }),
        policies: resolved.policies.clone(),
        retry: config::retry_policy(&resolved.provider),
        depth_limit: resolved.depth_limit,
        history_limit: resolved.history_limit,
        context: resolved.context,
        limits: resolved.limits,
        hooks: std::sync::Arc::clone(&resolved.hooks.hooks),
        budget: resolved
            .max_cost
            .map(|max_cost| crate::orchestrator::budget::CostBudget {
                max_cost,
                pricing: resolved.pricing.clone(),
            }),
    }
}

/// Says what is wrong with the command line or the config; exit code 2.
fn usage(problem: impl std::fmt::Display) -> i32 {
    crate::say!("taco: {problem}");
    EXIT_USAGE
}

/// The async runtime: one thread for `exec` and `taco trace`, two workers for the TUI.
fn runtime(multi_thread: bool) -> Result<tokio::runtime::Runtime, i32> {
    let mut builder = if multi_thread {
        let mut b = tokio::runtime::Builder::new_multi_thread();
        b.worker_threads(2);
        b
    } else {
        tokio::runtime::Builder::new_current_thread()
    };
    builder.enable_all().build().map_err(|e| {
        crate::say!("taco: cannot start the async runtime: {e}");
        EXIT_RUN_ERROR
    })
}

/// `taco mcp list`: starts every configured MCP server, waits until each is ready or has
/// failed (within its startup time), prints them with their tools, and stops them.
pub fn mcp_list(start: &Start) -> i32 {
    let runtime = match runtime(false) {
        Ok(runtime) => runtime,
        Err(code) => return code,
    };
    reaper_guarded(|| {
        runtime.block_on(async {
            let env = crate::vault::var;
            let setup = match config::mcp_servers(&start.overrides, &env) {
                Ok(found) => found,
                Err(e) => return usage(e),
            };
            let hub = McpHub::start(
                setup.servers,
                StartContext {
                    workdir: setup.workdir,
                    settings: Arc::new(ToolSettings {
                        sandbox: setup.sandbox,
                        secrets: Arc::new(crate::vault::secrets(
                            &ToolSettings::default().secret_vars,
                        )),
                        ..ToolSettings::default()
                    }),
                    notices: None,
                    max_tools: setup.max_tools,
                },
            );
            hub.settled().await;
            // Written for the chat's Markdown; on a plain terminal a code span is only quoted.
            let text = crate::text::plain(&crate::mcp::describe_servers(&hub.view())).into_owned();
            hub.shutdown();
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
                Ok(()) => EXIT_OK,
                Err(e) => {
                    crate::say!("taco: cannot write to stdout: {e}");
                    EXIT_RUN_ERROR
                }
            }
        })
    })
}

/// Runs `f` as a subreaper: whatever it starts ends with it.
fn reaper_guarded(f: impl FnOnce() -> i32) -> i32 {
    let _reaper = crate::reaper::Reaper::start();
    f()
}

/// `taco sessions`: saved sessions, newest activity first, and the files that could not be
/// listed.
pub fn sessions() -> i32 {
    let Some(dir) = session::sessions_dir() else {
        crate::say!("taco: there is no data directory, so there are no sessions");
        return EXIT_RUN_ERROR;
    };
    use std::io::Write;
    let (sessions, problems) = session::list_with_problems(&dir);
    for problem in &problems {
        crate::say!("taco: {problem}");
    }
    // Empty sessions are greyed out on a terminal, unless NO_COLOR asks for none.
    use std::io::IsTerminal;
    let look = if std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none() {
        session::Look::Terminal
    } else {
        session::Look::Plain
    };
    let text = session::format_list(&sessions, crate::event::unix_ms(), look);
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => EXIT_OK,
        Err(e) => {
            crate::say!("taco: cannot write to stdout: {e}");
            EXIT_RUN_ERROR
        }
    }
}
