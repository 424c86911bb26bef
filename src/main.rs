//! The `taco` binary: the command line (DESIGN §6).

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, Parser, Subcommand, ValueEnum};
use taco::config::{self, Overrides};
use taco::exec::{self, EXIT_USAGE, ExecOptions};
use taco::orchestrator::{Orchestrator, Settings};
use taco::tools::{Policy, ToolRegistry};
use taco::tui::app::AppInfo;
use taco::tui::commands::ToolInfo;

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
    /// Provider name: a preset (openai, deepseek, openrouter, groq, ollama, demo) or a [providers.NAME] table.
    #[arg(short = 'p', long, global = true, value_name = "NAME")]
    provider: Option<String>,
    /// Model id (overrides the provider's).
    #[arg(short = 'm', long, global = true, value_name = "NAME")]
    model: Option<String>,
    /// API root of an OpenAI-compatible server, including /v1.
    #[arg(long, global = true, value_name = "URL")]
    base_url: Option<String>,
    /// Most model turns per request (default 10).
    #[arg(long, global = true, value_name = "N")]
    max_turns: Option<u32>,
    /// Workspace directory (default: the current directory).
    #[arg(short = 'C', long, global = true, value_name = "DIR")]
    workdir: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run one request headless: the final answer on stdout.
    Exec(ExecArgs),
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
    let launched = std::time::Instant::now();
    let cli = Cli::parse();
    let code = match cli.command {
        Some(Command::Exec(args)) => run_exec(&cli.global, args),
        None => run_tui(&cli.global, launched),
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

/// Resolves the config and builds the orchestrator; on failure says why and gives exit code 2.
async fn setup(global: &GlobalArgs) -> Result<(config::Resolved, Orchestrator), i32> {
    let env = |name: &str| std::env::var(name).ok();
    let resolved = config::resolve(&overrides(global), &env, config::probe_ollama)
        .await
        .map_err(|e| {
            eprintln!("taco: {e}");
            EXIT_USAGE
        })?;
    let provider = config::build_provider(&resolved.provider).map_err(|e| {
        eprintln!("taco: {e}");
        EXIT_USAGE
    })?;
    let settings = Settings {
        max_turns: resolved.max_turns,
        system_prompt: resolved.system_prompt.clone(),
        workdir: resolved.workdir.clone(),
        tools: Arc::new(resolved.tools.clone()),
        policies: resolved.policies.clone(),
        retry: config::retry_policy(&resolved.provider),
        depth_limit: resolved.depth_limit,
        history_limit: resolved.history_limit,
    };
    let orchestrator = Orchestrator::new(provider, Arc::new(ToolRegistry::builtins()), settings);
    Ok((resolved, orchestrator))
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
        eprintln!("taco: cannot start the async runtime: {e}");
        exec::EXIT_RUN_ERROR
    })
}

fn run_exec(global: &GlobalArgs, args: ExecArgs) -> i32 {
    let prompt = if args.prompt == "-" {
        let mut text = String::new();
        if let Err(e) = std::io::stdin().read_to_string(&mut text) {
            eprintln!("taco: cannot read the prompt from stdin: {e}");
            return EXIT_USAGE;
        }
        text
    } else {
        args.prompt.clone()
    };
    if prompt.trim().is_empty() {
        eprintln!("taco: the prompt is empty");
        return EXIT_USAGE;
    }
    // A current-thread runtime is enough for one request and keeps exec small (DESIGN §10).
    let runtime = match runtime(false) {
        Ok(runtime) => runtime,
        Err(code) => return code,
    };
    runtime.block_on(async {
        let (resolved, mut orchestrator) = match setup(global).await {
            Ok(ready) => ready,
            Err(code) => return code,
        };
        if let Some(reason) = &resolved.provider.auto_reason {
            eprintln!(
                "taco: using provider {} (model {}): {reason}",
                resolved.provider.name, resolved.provider.model
            );
        }
        let options = ExecOptions {
            json: args.json,
            approve_all: args.approve == Approve::All,
            trace: args.trace.clone(),
        };
        exec::run(&mut orchestrator, &prompt, &options).await
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
        let (resolved, orchestrator) = match setup(global).await {
            Ok(ready) => ready,
            Err(code) => return code,
        };
        let info = tui_info(&resolved, &orchestrator);
        tracing::info!(provider = %info.provider, model = %info.model, "tui started");
        match taco::tui::run(info, orchestrator, launched).await {
            Ok(()) => exec::EXIT_OK,
            Err(e) => {
                tracing::error!("tui failed: {e}");
                eprintln!("taco: the terminal failed: {e}");
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
    }
}

fn policy_word(policy: Policy) -> &'static str {
    match policy {
        Policy::Allow => "allow",
        Policy::Ask => "ask",
        Policy::Deny => "deny",
    }
}
