//! The `taco` binary: the command line (DESIGN §6), parsed and handed to [`taco::wiring`].

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};
use taco::config::Overrides;
use taco::sandbox::SandboxMode;
use taco::wiring::{self, ExecRequest, RewindRequest, Start};

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
    /// Stop a run before the model call that would take the session's cost past DOLLARS (at
    /// [pricing] or built-in prices; the model must have one). Exit code 3 in exec.
    #[arg(long, global = true, value_name = "DOLLARS", allow_negative_numbers = true,
          value_parser = taco::orchestrator::budget::parse_dollars)]
    max_cost: Option<f64>,
    /// Workspace directory (default: the current directory).
    #[arg(short = 'C', long, global = true, value_name = "DIR")]
    workdir: Option<PathBuf>,
    /// Sandbox of shell commands (default from [sandbox] mode, else workspace-write).
    #[arg(long, global = true, value_enum, value_name = "MODE")]
    sandbox: Option<SandboxArg>,
    /// Continue a saved session: its id (or a unique prefix), or your last conversation in this
    /// workdir (the newest you had in the TUI, or that ended with an answer).
    #[arg(long, global = true, value_name = "ID", num_args = 0..=1, default_missing_value = "")]
    resume: Option<String>,
    /// Drive an external agent from taco's screen instead of taco's own loop: one of the
    /// config's [agents.NAME] (an ACP agent such as codex-acp or claude-agent-acp).
    #[arg(long, global = true, value_name = "NAME")]
    agent: Option<String>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run one request headless: the answer streamed to stdout, a line at a time; a line per
    /// tool call on stderr (`→ shell cargo test · exit 3 · 2.1 s`).
    Exec(ExecArgs),
    /// List saved sessions, newest activity first: kind, turns, outcome.
    Sessions,
    /// Open a session file or an `exec --trace` file read-only in the TUI.
    Trace {
        /// The file.
        file: PathBuf,
        /// Write its spans to stdout as OTLP JSON (the spans an `[otel]` export sends)
        /// instead of opening it.
        #[arg(long)]
        otlp_json: bool,
    },
    /// Rewind the workspace's files and/or the conversation to just before a call or run of
    /// the workdir's latest session (`--list` shows them); a file edited by hand since is
    /// kept and named unless --force.
    Rewind(RewindArgs),
    /// Trust this workspace's .taco/config.toml as it is now, so its hooks run (a changed
    /// file must be trusted again).
    Trust,
    /// Serve taco's agent over the Agent Client Protocol on stdin/stdout, for Zed and other
    /// ACP clients (sessions are saved and listed as the TUI's are).
    Acp,
    /// MCP servers of the config.
    Mcp {
        #[command(subcommand)]
        command: McpCommand,
    },
}

#[derive(Debug, Subcommand)]
enum McpCommand {
    /// Start each configured server, list its state and tools, stop it (exit 0 even when a
    /// server failed; the failure is shown).
    List,
    /// Log in to a server with OAuth: prints the URL to open in a browser, waits for the
    /// browser to come back (at most 5 minutes), saves the tokens, lists the server's tools.
    Login {
        /// The server's name in the config.
        name: String,
    },
    /// Remove a server's saved OAuth tokens.
    Logout {
        /// The server's name in the config.
        name: String,
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
    /// Permission mode: ask (as configured), auto-edit (file edits approved), plan (only
    /// read-only tools run; the answer is a plan).
    #[arg(long, value_enum, default_value_t = ModeArg::Ask)]
    mode: ModeArg,
    /// The request; "-" reads it from stdin.
    prompt: String,
}

#[derive(Debug, Args)]
struct RewindArgs {
    /// List the session's runs and calls with their checkpoints; change nothing.
    #[arg(long, conflicts_with = "id")]
    list: bool,
    /// Only the files.
    #[arg(long, conflicts_with = "conversation")]
    files: bool,
    /// Only the conversation (a fork: the later part stays in the old session file).
    #[arg(long)]
    conversation: bool,
    /// Another session than the workdir's latest (an id or a unique prefix).
    #[arg(long, value_name = "ID")]
    session: Option<String>,
    /// Also overwrite files edited by hand since taco's last checkpoint.
    #[arg(long)]
    force: bool,
    /// The call, run or checkpoint to go back to.
    #[arg(required_unless_present = "list")]
    id: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ModeArg {
    /// As configured: policies, grants, --approve.
    Ask,
    /// write_file and edit_file in the workspace are approved; the rest as configured.
    AutoEdit,
    /// Only read-only tools run; the model answers with a plan.
    Plan,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum SandboxArg {
    /// Read anything; write only the workspace, the temp dir and [sandbox] writable.
    WorkspaceWrite,
    /// Read anything, write nothing.
    ReadOnly,
    /// No sandbox: commands run with your full rights.
    Off,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Approve {
    /// Approve every call that asks.
    All,
    /// Deny every call that asks; the model is told why.
    None,
}

fn main() -> ExitCode {
    // First of all, while taco has one thread: the secrets of the environment move into
    // memory and out of what any child or reader of /proc/PID/environ can see, and taco
    // becomes non-dumpable (ARCHITECTURE §11).
    // SAFETY: no other thread exists yet.
    unsafe { taco::vault::seal(&[]) };
    // The HTML converter web_fetch runs as a child process it can kill (see html_helper).
    if std::env::args_os()
        .nth(1)
        .is_some_and(|arg| arg == taco::tools::builtin::HTML_HELPER_ARG)
    {
        return taco::tools::builtin::html_helper_main();
    }
    let launched = std::time::Instant::now();
    let cli = Cli::parse();
    let agent = cli.global.agent.clone();
    let start = start(cli.global);
    // The config may name key variables outside the classes (`api_key_env = "MY_LLM"`):
    // withheld too, still before any thread (the runtime starts below).
    let named = taco::config::named_secrets(&start.overrides, &taco::vault::var);
    // SAFETY: still no other thread: argument parsing and reading the config start none.
    unsafe { taco::vault::seal(&named) };
    let code = match (cli.command, agent) {
        (None, Some(agent)) => wiring::agent_tui(&start, &agent, launched),
        (Some(_), Some(_)) => {
            taco::say!(
                "taco: --agent drives an external agent in the TUI: use it without a command (taco --agent NAME)"
            );
            2
        }
        (command, None) => dispatch(command, &start, launched),
    };
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

/// Runs `command` (the TUI when there is none); its exit code.
fn dispatch(command: Option<Command>, start: &Start, launched: std::time::Instant) -> i32 {
    match command {
        Some(Command::Exec(args)) => wiring::exec(start, exec_request(args)),
        Some(Command::Sessions) => wiring::sessions(),
        Some(Command::Trust) => wiring::trust(start),
        Some(Command::Acp) => wiring::acp(start),
        Some(Command::Rewind(args)) => wiring::rewind(start, rewind_request(args)),
        Some(Command::Trace {
            file,
            otlp_json: true,
        }) => wiring::otlp_json(start, &file),
        Some(Command::Trace { file, .. }) => wiring::trace(&file, launched),
        Some(Command::Mcp {
            command: McpCommand::List,
        }) => wiring::mcp_list(start),
        Some(Command::Mcp {
            command: McpCommand::Login { name },
        }) => wiring::mcp_login(start, &name),
        Some(Command::Mcp {
            command: McpCommand::Logout { name },
        }) => wiring::mcp_logout(start, &name),
        None => wiring::tui(start, launched),
    }
}

fn start(global: GlobalArgs) -> Start {
    Start {
        overrides: Overrides {
            config: global.config,
            provider: global.provider,
            model: global.model,
            base_url: global.base_url,
            max_turns: global.max_turns,
            max_cost: global.max_cost,
            workdir: global.workdir,
            sandbox: global.sandbox.map(|mode| match mode {
                SandboxArg::WorkspaceWrite => SandboxMode::WorkspaceWrite,
                SandboxArg::ReadOnly => SandboxMode::ReadOnly,
                SandboxArg::Off => SandboxMode::Off,
            }),
        },
        resume: global.resume,
        extra_mcp: Vec::new(),
        buffers: Default::default(),
    }
}

fn rewind_request(args: RewindArgs) -> RewindRequest {
    use taco::event::RewindScope;
    RewindRequest {
        list: args.list,
        id: args.id,
        scope: match (args.files, args.conversation) {
            (true, false) => RewindScope::Files,
            (false, true) => RewindScope::Conversation,
            _ => RewindScope::Both,
        },
        session: args.session,
        force: args.force,
    }
}

fn exec_request(args: ExecArgs) -> ExecRequest {
    ExecRequest {
        prompt: args.prompt,
        json: args.json,
        approve_all: args.approve == Approve::All,
        trace: args.trace,
        mode: match args.mode {
            ModeArg::Ask => taco::event::Mode::Ask,
            ModeArg::AutoEdit => taco::event::Mode::AutoEdit,
            ModeArg::Plan => taco::event::Mode::Plan,
        },
    }
}
