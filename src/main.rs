//! The `taco` binary: the command line (DESIGN §6).

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, Parser, Subcommand, ValueEnum};
use taco::config::{self, Overrides};
use taco::event::{Event, EventData};
use taco::exec::{self, EXIT_USAGE, ExecOptions};
use taco::orchestrator::{Orchestrator, Settings};
use taco::reaper;
use taco::recorder::Recorder;
use taco::secrets::Secrets;
use taco::session::{self, Entry};
use taco::startup;
use taco::tools::{Policy, ToolRegistry, ToolSettings};
use taco::tui::app::AppInfo;
use taco::tui::commands::ToolInfo;
use taco::tui::{Ended, Launch};

mod logging;

/// taco: a terminal cockpit for tool-using LLM agents.
#[derive(Debug, Parser)]
#[command(version, about, long_about = None)]
struct Cli {
    #[command(flatten)]
    global: GlobalArgs,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Args)]
struct GlobalArgs {
    /// Config file (default: <config dir>/taco/config.toml; also TACO_CONFIG).
    #[arg(short = 'c', long, global = true, value_name = "PATH")]
    config: Option<PathBuf>,
    /// Provider name: a preset (openai, anthropic, deepseek, openrouter, groq, ollama, demo) or a [providers.NAME] table.
    #[arg(short = 'p', long, global = true, value_name = "NAME")]
    provider: Option<String>,
    /// Model id (overrides the provider's).
    #[arg(short = 'm', long, global = true, value_name = "NAME")]
    model: Option<String>,
    /// API root of the provider: with /v1 for OpenAI-compatible servers, without for anthropic and ollama.
    #[arg(long, global = true, value_name = "URL")]
    base_url: Option<String>,
    /// Most model turns per request (default 10).
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    max_turns: Option<u32>,
    /// Workspace directory (default: the current directory).
    #[arg(short = 'C', long, global = true, value_name = "DIR")]
    workdir: Option<PathBuf>,
    /// Continue a saved session: its id (or a unique prefix), or the newest for this workdir.
    #[arg(long, global = true, value_name = "ID", num_args = 0..=1, default_missing_value = "")]
    resume: Option<String>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run one request headless: the final answer on stdout.
    Exec(ExecArgs),
    /// List saved sessions, newest first.
    Sessions,
    /// Open a session file or an `exec --trace` file read-only in the TUI.
    Trace {
        /// The file.
        file: PathBuf,
    },
}

#[derive(Debug, Args)]
struct ExecArgs {
    /// Print every event as JSONL on stdout.
    #[arg(long)]
    json: bool,
    /// What to do with calls that need approval.
    #[arg(long, value_enum, default_value_t = Approve::None)]
    approve: Approve,
    /// Also write trace events (JSONL, no deltas) to FILE.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// The request; "-" reads it from stdin.
    prompt: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Approve {
    /// Approve every call that asks.
    All,
    /// Deny every call that asks; the model is told why.
    None,
}

fn main() -> ExitCode {
    // The HTML converter web_fetch runs as a child process it can kill (see html_helper).
    if std::env::args_os()
        .nth(1)
        .is_some_and(|arg| arg == taco::tools::builtin::HTML_HELPER_ARG)
    {
        return taco::tools::builtin::html_helper_main();
    }
    let launched = std::time::Instant::now();
    let cli = Cli::parse();
    let code = match cli.command {
        Some(Command::Exec(args)) => {
            reaper::become_subreaper();
            let code = run_exec(&cli.global, args);
            reaper::end_descendants();
            code
        }
        Some(Command::Sessions) => list_sessions(),
        Some(Command::Trace { file }) => run_trace(&file, launched),
        None => {
            // Tools' processes that escape their group come back to taco and end with it.
            reaper::become_subreaper();
            let code = run_tui(&cli.global, launched);
            reaper::end_descendants();
            code
        }
    };
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

fn overrides(global: &GlobalArgs) -> Overrides {
    Overrides {
        config: global.config.clone(),
        provider: global.provider.clone(),
        model: global.model.clone(),
        base_url: global.base_url.clone(),
        max_turns: global.max_turns,
        workdir: global.workdir.clone(),
    }
}

/// Resolves the config (after `--resume` found its session) and builds the orchestrator; on
/// failure says why and gives exit code 2.
async fn setup(
    global: &GlobalArgs,
) -> Result<(config::Resolved, Orchestrator, Option<startup::Resuming>), i32> {
    let env = |name: &str| std::env::var(name).ok();
    let (chosen, resuming) = startup::resume_overrides(overrides(global), global.resume.as_deref())
        .map_err(|e| {
            taco::say!("taco: {e}");
            EXIT_USAGE
        })?;
    let mut resolved = config::resolve(&chosen, &env, config::probe_ollama)
        .await
        .map_err(|e| {
            taco::say!("taco: {e}");
            EXIT_USAGE
        })?;
    resolved.tools.secrets = Arc::new(Secrets::from_env(
        std::env::vars_os(),
        &resolved.tools.secret_vars,
    ));
    let provider = config::build_provider(&resolved.provider).map_err(|e| {
        taco::say!("taco: {e}");
        EXIT_USAGE
    })?;
    let settings = Settings {
        max_turns: resolved.max_turns,
        system_prompt: resolved.system_prompt.clone(),
        workdir: resolved.workdir.clone(),
        tools: Arc::new(ToolSettings {
            html_helper: std::env::current_exe().ok(),
            ..resolved.tools.clone()
        }),
        policies: resolved.policies.clone(),
        retry: config::retry_policy(&resolved.provider),
        depth_limit: resolved.depth_limit,
        history_limit: resolved.history_limit,
        limits: resolved.limits,
    };
    let orchestrator = Orchestrator::new(provider, Arc::new(ToolRegistry::builtins()), settings);
    Ok((resolved, orchestrator, resuming))
}

fn runtime(multi_thread: bool) -> Result<tokio::runtime::Runtime, i32> {
    let mut builder = if multi_thread {
        let mut b = tokio::runtime::Builder::new_multi_thread();
        b.worker_threads(2);
        b
    } else {
        tokio::runtime::Builder::new_current_thread()
    };
    builder.enable_all().build().map_err(|e| {
        taco::say!("taco: cannot start the async runtime: {e}");
        exec::EXIT_RUN_ERROR
    })
}

fn run_exec(global: &GlobalArgs, args: ExecArgs) -> i32 {
    let prompt = if args.prompt == "-" {
        let mut text = String::new();
        if let Err(e) = std::io::stdin().read_to_string(&mut text) {
            taco::say!("taco: cannot read the prompt from stdin: {e}");
            return EXIT_USAGE;
        }
        text
    } else {
        args.prompt.clone()
    };
    if prompt.trim().is_empty() {
        taco::say!("taco: the prompt is empty");
        return EXIT_USAGE;
    }
    // A current-thread runtime is enough for one request and keeps exec small (DESIGN §10).
    let runtime = match runtime(false) {
        Ok(runtime) => runtime,
        Err(code) => return code,
    };
    runtime.block_on(async {
        let (resolved, mut orchestrator, resuming) = match setup(global).await {
            Ok(ready) => ready,
            Err(code) => return code,
        };
        if let Some(reason) = &resolved.provider.auto_reason {
            taco::say!(
                "taco: using provider {} (model {}): {reason}",
                resolved.provider.name,
                resolved.provider.model
            );
        }
        let opened = match startup::open_session(&resolved, &mut orchestrator, resuming) {
            Ok(opened) => opened,
            Err(e) => {
                taco::say!("taco: {e}");
                return EXIT_USAGE;
            }
        };
        for note in &opened.notes {
            taco::say!("taco: {note}");
        }
        let options = ExecOptions {
            json: args.json,
            approve_all: args.approve == Approve::All,
            trace: args.trace.clone(),
            secrets: Arc::clone(&resolved.tools.secrets),
        };
        exec::run(&mut orchestrator, &prompt, &options, opened.recorder).await
    })
}

/// The full-screen TUI, on two worker threads so a busy tool never stalls the screen.
fn run_tui(global: &GlobalArgs, launched: std::time::Instant) -> i32 {
    let runtime = match runtime(true) {
        Ok(runtime) => runtime,
        Err(code) => return code,
    };
    let _log = logging::init();
    runtime.block_on(async {
        let (resolved, mut orchestrator, resuming) = match setup(global).await {
            Ok(ready) => ready,
            Err(code) => return code,
        };
        let opened = match startup::open_session(&resolved, &mut orchestrator, resuming) {
            Ok(opened) => opened,
            Err(e) => {
                taco::say!("taco: {e}");
                return EXIT_USAGE;
            }
        };
        let info = tui_info(&resolved, &orchestrator);
        tracing::info!(provider = %info.provider, model = %info.model, "tui started");
        let launch = Launch {
            info,
            orchestrator: Some(orchestrator),
            recorder: opened.recorder,
            history: opened.history,
            viewing: None,
            notice: (!opened.notes.is_empty()).then(|| opened.notes.join("\n\n")),
            launched,
        };
        match taco::tui::run(launch).await {
            Ok(Ended::Quit) => exec::EXIT_OK,
            Ok(Ended::Signal(stop)) => stop.exit_code(),
            Err(e) => {
                tracing::error!("tui failed: {e}");
                taco::say!("taco: the terminal failed: {e}");
                exec::EXIT_RUN_ERROR
            }
        }
    })
}

/// `taco sessions`.
fn list_sessions() -> i32 {
    match session::sessions_dir() {
        Some(dir) => {
            use std::io::Write;
            let (sessions, problems) = session::list_with_problems(&dir);
            for problem in &problems {
                taco::say!("taco: {problem}");
            }
            let text = session::format_list(&sessions);
            let mut out = std::io::stdout().lock();
            match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
                Ok(()) => exec::EXIT_OK,
                Err(e) => {
                    taco::say!("taco: cannot write to stdout: {e}");
                    exec::EXIT_RUN_ERROR
                }
            }
        }
        None => {
            taco::say!("taco: there is no data directory, so there are no sessions");
            exec::EXIT_RUN_ERROR
        }
    }
}

/// `taco trace FILE`: a saved session or trace, read-only in the TUI.
fn run_trace(file: &std::path::Path, launched: std::time::Instant) -> i32 {
    let loaded = match session::load(file) {
        Ok(loaded) => loaded,
        Err(e) => {
            taco::say!("taco: {e}");
            return EXIT_USAGE;
        }
    };
    let runtime = match runtime(false) {
        Ok(runtime) => runtime,
        Err(code) => return code,
    };
    let _log = logging::init();
    let (provider, model) = match &loaded.header {
        Some(h) => (h.provider.clone(), h.model.clone()),
        None => loaded
            .entries
            .iter()
            .find_map(|e| match e {
                Entry::Event(Event {
                    data:
                        EventData::RunStarted {
                            provider, model, ..
                        },
                    ..
                }) => Some((provider.clone(), model.clone())),
                _ => None,
            })
            .unwrap_or_else(|| ("?".to_string(), "?".to_string())),
    };
    let max_turns = loaded
        .entries
        .iter()
        .find_map(|e| match e {
            Entry::Event(Event {
                data: EventData::RunStarted { max_turns, .. },
                ..
            }) => Some(*max_turns),
            _ => None,
        })
        .unwrap_or(10);
    let info = AppInfo {
        provider,
        model,
        auto_reason: None,
        max_turns,
        workdir: loaded
            .header
            .as_ref()
            .map(|h| h.workdir.display().to_string())
            .unwrap_or_default(),
        tools: Vec::new(),
        // A saved trace asks nothing.
        dialog_guard: std::time::Duration::ZERO,
    };
    let notes = loaded.warnings.join("\n\n");
    let launch = Launch {
        info,
        orchestrator: None,
        recorder: Recorder::default(),
        history: loaded.entries,
        viewing: Some(format!("`{}`", file.display())),
        notice: (!notes.is_empty()).then_some(notes),
        launched,
    };
    runtime.block_on(async {
        match taco::tui::run(launch).await {
            Ok(Ended::Quit) => exec::EXIT_OK,
            Ok(Ended::Signal(stop)) => stop.exit_code(),
            Err(e) => {
                taco::say!("taco: the terminal failed: {e}");
                exec::EXIT_RUN_ERROR
            }
        }
    })
}

/// What the TUI shows about the setup: provider, model, tools and their policies.
fn tui_info(resolved: &config::Resolved, orchestrator: &Orchestrator) -> AppInfo {
    let policies = orchestrator.policies();
    let tools = orchestrator
        .registry()
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
    }
}

fn policy_word(policy: Policy) -> &'static str {
    match policy {
        Policy::Allow => "allow",
        Policy::Ask => "ask",
        Policy::Deny => "deny",
    }
}
