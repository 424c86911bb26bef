//! `taco exec`: the prompt, the agent, one request on a current-thread runtime.

use std::io::Read;
use std::path::PathBuf;
use std::sync::Arc;

use super::{Ready, Start, runtime, setup};
use crate::exec::{self, EXIT_USAGE, ExecOptions};
use crate::orchestrator::request::RequestOptions;
use crate::reaper;
use crate::session::SessionKind;

/// What `taco exec` was asked.
#[derive(Debug, Clone, Default)]
pub struct ExecRequest {
    /// The request; `-` reads it from stdin.
    pub prompt: String,
    /// Every event as JSONL on stdout.
    pub json: bool,
    /// `--approve all`; otherwise every call that asks is denied.
    pub approve_all: bool,
    /// `--trace FILE`.
    pub trace: Option<PathBuf>,
    /// `--mode`: the permission mode of the run.
    pub mode: crate::event::Mode,
}

/// Runs one request headless; tools' processes that escape their group end with it.
pub fn exec(start: &Start, request: ExecRequest) -> i32 {
    let _reaper = reaper::Reaper::start();
    run(start, request)
}

fn run(start: &Start, request: ExecRequest) -> i32 {
    let prompt = if request.prompt == "-" {
        let mut text = String::new();
        if let Err(e) = std::io::stdin().read_to_string(&mut text) {
            crate::say!("taco: cannot read the prompt from stdin: {e}");
            return EXIT_USAGE;
        }
        text
    } else {
        request.prompt
    };
    if prompt.trim().is_empty() {
        crate::say!("taco: the prompt is empty");
        return EXIT_USAGE;
    }
    // A current-thread runtime is enough for one request and keeps exec small (DESIGN §10).
    let runtime = match runtime(false) {
        Ok(runtime) => runtime,
        Err(code) => return code,
    };
    runtime.block_on(async {
        let announce = |resolved: &crate::config::Resolved| {
            if let Some(reason) = &resolved.provider.auto_reason {
                crate::say!(
                    "taco: using provider {} (model {}): {reason}",
                    resolved.provider.name,
                    resolved.provider.model
                );
            }
        };
        let Ready {
            resolved,
            mut orchestrator,
            opened,
            mcp,
            mut notices,
        } = match setup(start, SessionKind::Exec, announce).await {
            Ok(ready) => ready,
            Err(code) => return code,
        };
        for note in resolved.instructions.notes.iter().chain(&opened.notes) {
            crate::say!("taco: {note}");
        }
        if let Some(notice) = resolved.tools.sandbox.fallback_notice() {
            crate::say!("taco: {notice}");
        }
        // One request: its first model call gets every MCP tool that could be started (each
        // server is bounded by its startup time); a server that failed is said once.
        mcp.settled().await;
        let reporter = tokio::spawn(async move {
            while let Some(notice) = notices.recv().await {
                // A server that needs a login is said and skipped: exec never waits for one.
                if let Some(message) = notice.status.report() {
                    crate::say!("taco: {message}");
                }
            }
        });
        tokio::task::yield_now().await;
        // `/server:prompt args…` runs that server's prompt; its messages are the request.
        let prompt = match prompt_of(&mcp, prompt).await {
            Ok(prompt) => prompt,
            Err(message) => {
                crate::say!("taco: {message}");
                mcp.shutdown();
                reporter.abort();
                return EXIT_USAGE;
            }
        };
        // `/init` and the custom commands (`/review-pr 123`) make the request as in the TUI.
        let (prompt, asked) = command_of(&resolved, &mcp, prompt);
        let switched = match asked.model.as_deref() {
            None => None,
            Some(model) => {
                use crate::orchestrator::switch::Providers;
                match resolved.catalog.switch(&resolved.provider.name, Some(model)) {
                    Ok(switched) => Some(switched),
                    Err(why) => {
                        crate::say!(
                            "taco: the model {model} the command asks for cannot be used ({why}); using {}",
                            resolved.provider.model
                        );
                        None
                    }
                }
            }
        };
        let options = ExecOptions {
            json: request.json,
            approve_all: request.approve_all,
            trace: request.trace,
            secrets: Arc::clone(&resolved.tools.secrets),
            request: asked,
        };
        orchestrator.mode().set(request.mode);
        let code = exec::run(
            &mut orchestrator,
            &prompt,
            &options,
            opened.recorder,
            switched,
        )
        .await;
        mcp.shutdown();
        reporter.abort();
        code
    })
}

/// The request: `prompt` as given, or, when it is `/server:prompt args…` naming a configured
/// server, that prompt's messages (`mcp/catalog.rs`); what the user should know is said.
async fn prompt_of(mcp: &crate::mcp::McpHub, prompt: String) -> Result<String, String> {
    let Some((server, _, _)) = crate::mcp::prompt_args::parse_line(&prompt) else {
        return Ok(prompt);
    };
    if !mcp.view().iter().any(|s| s.name == server) {
        return Ok(prompt);
    }
    let bound = crate::mcp::catalog_pages::LIST_TIMEOUT * 2;
    let _ = tokio::time::timeout(bound, mcp.catalog_settled()).await;
    let got = mcp.run_prompt(&prompt).await.map_err(|e| e.to_string())?;
    for note in &got.notes {
        crate::say!("taco: {note}");
    }
    Ok(got.text)
}

/// The request a prompt makes: `/init`'s, a custom command's (with its options), or the
/// prompt itself. Files that are not commands are said when the prompt names a command.
fn command_of(
    resolved: &crate::config::Resolved,
    mcp: &crate::mcp::McpHub,
    prompt: String,
) -> (String, RequestOptions) {
    if !prompt.trim_start().starts_with('/') {
        return (prompt, RequestOptions::default());
    }
    if prompt.trim() == "/init" {
        return (
            crate::custom_commands::INIT_PROMPT.to_string(),
            RequestOptions::default(),
        );
    }
    let servers: Vec<String> = mcp.view().into_iter().map(|s| s.name).collect();
    let user = crate::custom_commands::user_dir();
    let found = crate::custom_commands::load(
        &resolved.workdir,
        user.as_deref(),
        &crate::tui::commands::is_builtin,
        &servers,
    );
    match found.resolve(&prompt) {
        Some((command, args)) => {
            crate::say!(
                "taco: running the {} command {} ({})",
                command.source.label(),
                command.command(),
                command.path.display()
            );
            command.request(args)
        }
        None => {
            for skipped in &found.skipped {
                crate::say!(
                    "taco: {} is not a command: {}",
                    skipped.path.display(),
                    skipped.why
                );
            }
            (prompt, RequestOptions::default())
        }
    }
}
