//! The `taco` binary: the command line (DESIGN §6).

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, Parser, Subcommand, ValueEnum};
use taco::config::{self, Overrides};
use taco::exec::{self, EXIT_USAGE, ExecOptions};
use taco::orchestrator::{Orchestrator, Settings};
use taco::tools::ToolRegistry;

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
    let cli = Cli::parse();
    let code = match cli.command {
        Some(Command::Exec(args)) => run_exec(&cli.global, args),
        None => {
            eprintln!(
                "taco: the full-screen TUI is not built yet; use `taco exec \"your request\"` (see --help)."
            );
            EXIT_USAGE
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
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("taco: cannot start the async runtime: {e}");
            return exec::EXIT_RUN_ERROR;
        }
    };
    runtime.block_on(async {
        let env = |name: &str| std::env::var(name).ok();
        let resolved = match config::resolve(&overrides(global), &env, config::probe_ollama).await {
            Ok(resolved) => resolved,
            Err(e) => {
                eprintln!("taco: {e}");
                return EXIT_USAGE;
            }
        };
        let provider = match config::build_provider(&resolved.provider) {
            Ok(provider) => provider,
            Err(e) => {
                eprintln!("taco: {e}");
                return EXIT_USAGE;
            }
        };
        if let Some(reason) = &resolved.provider.auto_reason {
            eprintln!(
                "taco: using provider {} (model {}): {reason}",
                resolved.provider.name, resolved.provider.model
            );
        }
        let settings = Settings {
            max_turns: resolved.max_turns,
            system_prompt: resolved.system_prompt.clone(),
            workdir: resolved.workdir.clone(),
            tools: Arc::new(resolved.tools.clone()),
            policies: resolved.policies.clone(),
        };
        let mut orchestrator =
            Orchestrator::new(provider, Arc::new(ToolRegistry::builtins()), settings);
        let options = ExecOptions {
            json: args.json,
            approve_all: args.approve == Approve::All,
            trace: args.trace.clone(),
        };
        exec::run(&mut orchestrator, &prompt, &options).await
    })
}
