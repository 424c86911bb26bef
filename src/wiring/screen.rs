//! The full-screen commands: the TUI over a running agent, and `taco trace` over a saved
//! file. This is where the orchestrator task starts and becomes the TUI's
//! [`Engine`](crate::engine::Engine).

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{Ready, Start, prepare, runtime, setup};
use crate::config;
use crate::event::{Event, EventData};
use crate::exec::{EXIT_OK, EXIT_RUN_ERROR, EXIT_USAGE};
use crate::history::PromptLog;
use crate::mcp::Status;
use crate::orchestrator::switch::Providers;
use crate::orchestrator::{Orchestrator, task};
use crate::session::{self, Entry, SessionKind};
use crate::tools::Policy;
use crate::tui::app::AppInfo;
use crate::tui::commands::ToolInfo;
use crate::tui::{self, Ended, Launch};
use crate::{logging, reaper};

/// The TUI, on two worker threads so a busy tool never stalls the screen; tools' processes
/// that escape their group come back to taco and end with it.
pub fn tui(start: &Start, launched: Instant) -> i32 {
    if let Err(code) = need_terminal() {
        return code;
    }
    let _reaper = reaper::Reaper::start();
    run_tui(start, launched)
}

fn run_tui(start: &Start, launched: Instant) -> i32 {
    let runtime = match runtime(true) {
        Ok(runtime) => runtime,
        Err(code) => return code,
    };
    // No log is no reason to stop: the first screen says why.
    let (_log, said) = match logging::init() {
        Ok(guard) => (guard, None),
        Err(why) => (None, Some(why)),
    };
    runtime.block_on(taco_loop(start, launched, said))
}

/// taco's own loop in the TUI, from `start`, until the user quits (`/resume` and `/agent`
/// reopen the screen in place); the exit code.
pub(super) async fn taco_loop(start: &Start, launched: Instant, mut said: Option<String>) -> i32 {
    let mut ready = match setup(start, SessionKind::Tui, |_| {}).await {
        Ok(ready) => ready,
        Err(code) => return code,
    };
    let launched_provider = ready.resolved.provider.name.clone();
    let mut current = start.clone();
    loop {
        let ended = session(ready, launched, said.take()).await;
        let next = match ended {
            Ok(Ended::Quit | Ended::Agent(None)) => return EXIT_OK,
            Ok(Ended::Signal(stop)) => return stop.exit_code(),
            Ok(Ended::Resume(id)) => {
                // `/resume`: the same command line, on the chosen session (its provider,
                // model and workdir, as `--resume ID` would take them).
                tracing::info!(session = %id, "resuming in place");
                Some((resumed(&current, &id, &launched_provider), id))
            }
            // `/agent NAME`: that agent drives the screen until `/agent taco` brings taco's
            // loop back, on a new conversation.
            Ok(Ended::Agent(Some(name))) => {
                match super::agent::drive(&current, &name, launched).await {
                    super::agent::Next::Taco(note) => {
                        said = note;
                        current.resume = None;
                        None
                    }
                    super::agent::Next::Exit(code) => return code,
                }
            }
            Err(e) => {
                tracing::error!("tui failed: {e}");
                crate::say!("taco: the terminal failed: {e}");
                return EXIT_RUN_ERROR;
            }
        };
        ready = match next {
            Some((next, id)) => match prepare(&next, SessionKind::Tui, |_| {}).await {
                Ok(ready) => {
                    current = next;
                    ready
                }
                // The session on screen before is saved: it comes back (or, if it was a new
                // one, a new conversation starts), saying why.
                Err(why) => {
                    said = Some(format!("Could not resume session `{id}`: {why}"));
                    match prepare(&current, SessionKind::Tui, |_| {}).await {
                        Ok(ready) => ready,
                        Err(again) => {
                            tui::terminal::restore();
                            crate::say!("taco: {why}");
                            crate::say!("taco: {again}");
                            return EXIT_USAGE;
                        }
                    }
                }
            },
            None => match prepare(&current, SessionKind::Tui, |_| {}).await {
                Ok(ready) => ready,
                Err(why) => {
                    tui::terminal::restore();
                    crate::say!("taco: {why}");
                    return EXIT_USAGE;
                }
            },
        };
    }
}

/// `start` resuming the session `id`: its provider, model and workdir are taken from it, so
/// the ones of the command line go; `--base-url` stays only for the provider it was given for.
fn resumed(start: &Start, id: &str, launched_provider: &str) -> Start {
    let mut overrides = start.overrides.clone();
    overrides.provider = None;
    overrides.model = None;
    overrides.workdir = None;
    let used = session::sessions_dir()
        .and_then(|dir| session::find(&dir, Some(id), Path::new(".")).ok())
        .and_then(|path| session::header_of(&path));
    if used.is_none_or(|header| header.provider != launched_provider) {
        overrides.base_url = None;
    }
    Start {
        overrides,
        resume: Some(id.to_string()),
        extra_mcp: start.extra_mcp.clone(),
        buffers: start.buffers.clone(),
    }
}

/// One TUI over `ready`'s agent, until it ends; `said` is shown after the greeting.
async fn session(ready: Ready, launched: Instant, said: Option<String>) -> std::io::Result<Ended> {
    let Ready {
        resolved,
        orchestrator,
        opened,
        mcp,
        mut notices,
    } = ready;
    let mut info = tui_info(&resolved, &orchestrator);
    info.mcp = Some(Arc::clone(&mcp));
    info.providers = resolved.catalog.catalog();
    info.earlier_usage = opened.earlier_usage.clone();
    info.earlier = opened.earlier.clone();
    info.session = Some(opened.recorder.locator());
    tracing::info!(provider = %info.provider, model = %info.model, "tui started");
    // The task records the session (file, audit log) behind the events it sends, and
    // switches among the configured providers.
    let providers: Arc<dyn Providers> = Arc::new(resolved.catalog.clone());
    let engine = task::spawn_switching(orchestrator, opened.recorder, Some(providers));
    // A server that fails is said in the chat, as an error outside any request.
    let outside = engine.outside();
    let reporter = tokio::spawn(async move {
        while let Some(notice) = notices.recv().await {
            let Some(events) = outside.upgrade() else {
                continue;
            };
            let messages = match (&notice.status, notice.status.report()) {
                // The URL alone in its own message, so selecting it and `y` copy just it.
                (Status::Authorizing(url), _) => vec![
                    format!(
                        "MCP server {}: to log in, open the URL below in a browser (select it, y copies it; /mcp shows it again). taco waits {} minutes for the browser to come back.",
                        notice.server,
                        crate::mcp::oauth::LOGIN_WAIT.as_secs() / 60
                    ),
                    url.clone(),
                ],
                (_, Some(message)) => vec![message.to_string()],
                (_, None) => continue,
            };
            for message in messages {
                let data = EventData::Error {
                    kind: "mcp".to_string(),
                    message,
                };
                let _ = events.send(Event::now(&Arc::from(""), data));
            }
        }
    });
    let mut notes = opened.notes;
    // A sandbox the kernel cannot give is said once, at the start (and stays in the status
    // line and /status).
    notes.extend(resolved.tools.sandbox.fallback_notice());
    notes.extend(said);
    // Only a resumed session's end was read: say where the rest is.
    if let Some(earlier) = &opened.earlier {
        notes.push(format!(
            "The newest runs are shown; the earlier ones stay in the session file and are read when you scroll back to the top ('taco trace {}' shows them all).",
            earlier.path.display()
        ));
    }
    // Prompts are kept redacted, as the session file keeps them.
    let prompts = PromptLog::in_state_dir(Arc::clone(&resolved.tools.secrets));
    notes.extend(prompts.as_ref().and_then(PromptLog::problem));
    let launch = Launch {
        info,
        engine: Some(Box::new(engine)),
        history: opened.history,
        viewing: None,
        notice: (!notes.is_empty()).then(|| notes.join("\n\n")),
        launched,
        prompts,
        ui: resolved.ui,
    };
    let ended = tui::run(launch).await;
    mcp.shutdown();
    reporter.abort();
    ended
}

/// `taco trace FILE`: a saved session or trace, read-only in the TUI.
pub fn trace(file: &Path, launched: Instant) -> i32 {
    // Only the end is read, as for a resume: the screen reads earlier runs when scrolled
    // back to its top, so a long trace opens in the time its end takes.
    let size = std::fs::metadata(file).map_or(0, |m| m.len());
    let (loaded, earlier) = match session::earlier(file, size, crate::startup::RESUME_ENTRIES) {
        Ok(tail) if !tail.loaded.entries.is_empty() => {
            let earlier = tail.has_earlier().then(|| crate::startup::Earlier {
                path: file.to_path_buf(),
                before: tail.from,
            });
            (tail.loaded, earlier)
        }
        // Nothing readable at its end: a whole read says what is wrong with the file, first,
        // as it is worth knowing in any terminal.
        _ => match session::load(file) {
            Ok(loaded) => (loaded, None),
            Err(e) => {
                crate::say!("taco: {e}");
                return EXIT_USAGE;
            }
        },
    };
    if let Err(code) = need_terminal() {
        return code;
    }
    let runtime = match runtime(false) {
        Ok(runtime) => runtime,
        Err(code) => return code,
    };
    let (_log, log_problem) = match logging::init() {
        Ok(guard) => (guard, None),
        Err(why) => (None, Some(why)),
    };
    let mut info = trace_info(&loaded);
    let mut notes = loaded.warnings.clone();
    notes.extend(log_problem);
    if earlier.is_some() {
        notes.push(
            "The newest runs are shown; scroll back to the top to read the earlier ones.".into(),
        );
    }
    info.earlier = earlier;
    let notes = notes.join("\n\n");
    let launch = Launch {
        info,
        engine: None,
        history: loaded.entries,
        viewing: Some(format!("`{}`", file.display())),
        notice: (!notes.is_empty()).then_some(notes),
        launched,
        // A saved trace sends nothing: no history to recall or keep.
        prompts: None,
        // No config is read for a saved trace: the mouse on, colours from the terminal.
        ui: Default::default(),
    };
    runtime.block_on(async {
        match tui::run(launch).await {
            // A saved trace offers no sessions to resume and drives no agent.
            Ok(Ended::Quit | Ended::Resume(_) | Ended::Agent(_)) => EXIT_OK,
            Ok(Ended::Signal(stop)) => stop.exit_code(),
            Err(e) => {
                crate::say!("taco: the terminal failed: {e}");
                EXIT_RUN_ERROR
            }
        }
    })
}

/// What a saved file says about its run: provider and model from its header (or its first
/// `run_started`), the turn limit from its first `run_started`.
fn trace_info(loaded: &session::Loaded) -> AppInfo {
    let started = || {
        loaded.entries.iter().find_map(|e| match e {
            Entry::Event(Event {
                data:
                    EventData::RunStarted {
                        provider,
                        model,
                        max_turns,
                        ..
                    },
                ..
            }) => Some((provider, model, *max_turns)),
            _ => None,
        })
    };
    let (provider, model) = match &loaded.header {
        Some(h) => (h.provider.clone(), h.model.clone()),
        None => started()
            .map(|(provider, model, _)| (provider.clone(), model.clone()))
            .unwrap_or_else(|| ("?".to_string(), "?".to_string())),
    };
    AppInfo {
        provider,
        model,
        auto_reason: None,
        max_turns: started().map_or(10, |(_, _, max_turns)| max_turns),
        workdir: loaded
            .header
            .as_ref()
            .map(|h| h.workdir.display().to_string())
            .unwrap_or_default(),
        tools: Vec::new(),
        // A saved trace asks nothing.
        dialog_guard: Duration::ZERO,
        mcp: None,
        instructions: Default::default(),
        pricing: Default::default(),
        stack_flags: Default::default(),
        secrets: Default::default(),
        providers: Vec::new(),
        earlier_usage: Default::default(),
        earlier: None,
        sandbox: None,
        rules: Vec::new(),
        environment: String::new(),
        otel: None,
        checkpoints: None,
        user_commands: None,
        agents: Vec::new(),
        driving: None,
        session: None,
    }
}

/// What the TUI shows about the setup: provider, model, tools and their policies.
fn tui_info(resolved: &config::Resolved, orchestrator: &Orchestrator) -> AppInfo {
    let policies = orchestrator.policies();
    let tools = orchestrator
        .registry()
        .all()
        .iter()
        .map(|tool| ToolInfo {
            name: tool.name().to_string(),
            description: tool.description().to_string(),
            schema: tool.parameters(),
            policy: match policies.override_for(tool.name()) {
                Some(policy) => format!("{} (config)", policy_word(policy)),
                None => tool.policy_note().to_string(),
            },
            usage: tool.usage_instructions().map(String::from),
        })
        .collect();
    AppInfo {
        provider: resolved.provider.name.clone(),
        model: resolved.provider.model.clone(),
        auto_reason: resolved.provider.auto_reason.clone(),
        max_turns: resolved.max_turns,
        workdir: resolved.workdir.display().to_string(),
        tools,
        dialog_guard: resolved.dialog_guard,
        mcp: None,
        instructions: resolved.instructions.clone(),
        pricing: resolved.pricing.clone(),
        stack_flags: crate::tui::views::stack::FlagSettings {
            slow_after: resolved.slow_after.clone(),
            quiet_after: resolved.quiet_after,
        },
        secrets: Arc::clone(&resolved.tools.secrets),
        providers: Vec::new(),
        earlier_usage: Default::default(),
        earlier: None,
        sandbox: Some(resolved.tools.sandbox.clone()),
        rules: approval_rules(orchestrator),
        environment: crate::vault::describe(
            &resolved.tools.env_passthrough,
            &resolved.tools.secret_vars,
        ),
        otel: resolved.otel.as_ref().map(crate::otel::Exporting::describe),
        checkpoints: Some(match orchestrator.checkpoints() {
            Some(store) => Ok(Arc::clone(store)),
            None => Err(orchestrator.checkpoints_off().to_string()),
        }),
        user_commands: crate::custom_commands::user_dir(),
        agents: resolved.agents.clone(),
        driving: None,
        session: None,
    }
}

/// The approval rules the config sets, one line each, for `/tools`: tool policies, shell
/// command prefixes, hosts `web_fetch` may fetch without asking.
fn approval_rules(orchestrator: &Orchestrator) -> Vec<String> {
    let mut overrides: Vec<(&str, Policy)> = orchestrator.policies().overrides().collect();
    overrides.sort_unstable_by_key(|(name, _)| *name);
    let mut rules: Vec<String> = (overrides.into_iter())
        .map(|(name, policy)| format!("[tools.policy] {name} = {}", policy_word(policy)))
        .collect();
    let tools = &orchestrator.settings().tools;
    let lists = [
        ("[tools.shell] allow", &tools.shell_allow),
        ("[tools.shell] ask", &tools.shell_ask),
        ("[tools.web_fetch] allow_hosts", &tools.allow_hosts),
    ];
    for (what, list) in lists {
        if !list.is_empty() {
            rules.push(format!("{what}: {}", list.join(", ")));
        }
    }
    rules
}

fn policy_word(policy: Policy) -> &'static str {
    match policy {
        Policy::Allow => "allow",
        Policy::Ask => "ask",
        Policy::Deny => "deny",
    }
}

/// The TUI draws on a terminal and reads keys from one: in a pipe or a script it would only
/// garble the output, so it says what to use instead.
pub(super) fn need_terminal() -> Result<(), i32> {
    use std::io::IsTerminal;
    if std::io::stdin().is_terminal() && std::io::stdout().is_terminal() {
        return Ok(());
    }
    crate::say!(
        "taco: the full-screen UI needs a terminal (stdin and stdout); in scripts and pipes use taco exec \"your request\" (taco exec --help)"
    );
    Err(EXIT_USAGE)
}
