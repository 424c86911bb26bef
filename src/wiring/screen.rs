//! The full-screen commands: the TUI over a running agent, and `taco trace` over a saved
//! file. This is where the orchestrator task starts and becomes the TUI's
//! [`Engine`](crate::engine::Engine).

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{Ready, Start, runtime, setup};
use crate::config;
use crate::event::{Event, EventData};
use crate::exec::{EXIT_OK, EXIT_RUN_ERROR, EXIT_USAGE};
use crate::history::PromptLog;
use crate::mcp::Status;
use crate::orchestrator::{Orchestrator, task};
use crate::session::{self, Entry};
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
    let _log = logging::init();
    runtime.block_on(async {
        let Ready {
            resolved,
            orchestrator,
            opened,
            mcp,
            mut notices,
        } = match setup(start, |_| {}).await {
            Ok(ready) => ready,
            Err(code) => return code,
        };
        let mut info = tui_info(&resolved, &orchestrator);
        info.mcp = Some(Arc::clone(&mcp));
        tracing::info!(provider = %info.provider, model = %info.model, "tui started");
        // The task records the session (file, audit log) behind the events it sends.
        let engine = task::spawn_recording(orchestrator, opened.recorder);
        // A server that fails is said in the chat, as an error outside any request.
        let outside = engine.outside();
        let reporter = tokio::spawn(async move {
            while let Some(notice) = notices.recv().await {
                let (Status::Failed(message), Some(events)) = (notice.status, outside.upgrade())
                else {
                    continue;
                };
                let data = EventData::Error {
                    kind: "mcp".to_string(),
                    message,
                };
                let _ = events.send(Event::now(&Arc::from(""), data));
            }
        });
        let launch = Launch {
            info,
            engine: Some(Box::new(engine)),
            history: opened.history,
            viewing: None,
            notice: (!opened.notes.is_empty()).then(|| opened.notes.join("\n\n")),
            launched,
            // Prompts are kept redacted, as the session file keeps them.
            prompts: PromptLog::in_state_dir(Arc::clone(&resolved.tools.secrets)),
            ui: resolved.ui,
        };
        let ended = tui::run(launch).await;
        mcp.shutdown();
        reporter.abort();
        match ended {
            Ok(Ended::Quit) => EXIT_OK,
            Ok(Ended::Signal(stop)) => stop.exit_code(),
            Err(e) => {
                tracing::error!("tui failed: {e}");
                crate::say!("taco: the terminal failed: {e}");
                EXIT_RUN_ERROR
            }
        }
    })
}

/// `taco trace FILE`: a saved session or trace, read-only in the TUI.
pub fn trace(file: &Path, launched: Instant) -> i32 {
    // What is wrong with the file is said first: it is worth knowing in any terminal.
    let loaded = match session::load(file) {
        Ok(loaded) => loaded,
        Err(e) => {
            crate::say!("taco: {e}");
            return EXIT_USAGE;
        }
    };
    if let Err(code) = need_terminal() {
        return code;
    }
    let runtime = match runtime(false) {
        Ok(runtime) => runtime,
        Err(code) => return code,
    };
    let _log = logging::init();
    let info = trace_info(&loaded);
    let notes = loaded.warnings.join("\n\n");
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
            Ok(Ended::Quit) => EXIT_OK,
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
    }
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
fn need_terminal() -> Result<(), i32> {
    use std::io::IsTerminal;
    if std::io::stdin().is_terminal() && std::io::stdout().is_terminal() {
        return Ok(());
    }
    crate::say!(
        "taco: the full-screen UI needs a terminal (stdin and stdout); in scripts and pipes use taco exec \"your request\" (taco exec --help)"
    );
    Err(EXIT_USAGE)
}
