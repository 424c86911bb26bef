//! Configuration: the TOML file, provider presets, CLI overrides and auto-selection (DESIGN §6, §8).
//! `file` reads and checks the TOML file, `presets` knows the providers; this module resolves
//! file + command line + environment into what a run needs.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::orchestrator::Limits;
use crate::orchestrator::context::{ContextSettings, DEFAULT_COMPACT_AT};
use crate::tools::{Policy, ToolSettings};

pub mod agents;
mod catalog;
mod file;
mod presets;
pub mod pricing;
mod sandbox;
mod windows;

use file::check_url;
use presets::{PRESETS, auto_select, choose};

/// The default quiet, in ms, after the last typed key before a TUI dialog takes keys by
/// itself: longer than any pause inside ordinary typing (60–1,500 ms between keys).
pub const DIALOG_QUIET_MS: u64 = 2000;

pub use catalog::Catalog;
pub use file::{
    ConfigFile, ContextConfig, InstructionsConfig, NotifyChoice, ProviderEntry, ProviderKind,
    ProviderOptions, ShellConfig, ThemeChoice, ToolsConfig, TuiConfig, WebFetchConfig,
    default_config_path, parse_config, read_config,
};
pub use presets::{
    ProviderChoice, build_provider, ollama_root, preset_names, probe_ollama, retry_policy,
};
pub use sandbox::SandboxConfig;
pub use windows::known_window;

/// The default system prompt; `{workdir}` is replaced by the workspace path.
pub const DEFAULT_SYSTEM_PROMPT: &str = include_str!("../assets/system_prompt.md");

/// A configuration problem: exit code 2, with the file, the line and what is wrong.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

impl ConfigError {
    fn at(
        path: &Path,
        text: &str,
        span: std::ops::Range<usize>,
        message: impl std::fmt::Display,
    ) -> Self {
        let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
        Self(format!("{}:{line}: {message}", path.display()))
    }
}

/// What the command line overrides.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// `-c/--config`.
    pub config: Option<PathBuf>,
    /// `-p/--provider`.
    pub provider: Option<String>,
    /// `-m/--model`.
    pub model: Option<String>,
    /// `--base-url`.
    pub base_url: Option<String>,
    /// `--max-turns`.
    pub max_turns: Option<u32>,
    /// `--max-cost` (checked).
    pub max_cost: Option<f64>,
    /// `-C/--workdir`.
    pub workdir: Option<PathBuf>,
    /// `--sandbox`.
    pub sandbox: Option<crate::sandbox::SandboxMode>,
}

/// How the TUI takes the terminal (`[ui] mouse`, `theme`, `notify`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UiSettings {
    /// Take the mouse (wheel, clicks); `false` leaves the terminal's own selection alone.
    pub mouse: bool,
    /// Which palette, or ask the terminal.
    pub theme: ThemeChoice,
    /// How taco calls you back while you look elsewhere.
    pub notify: NotifyChoice,
}

impl Default for UiSettings {
    fn default() -> Self {
        Self {
            mouse: true,
            theme: ThemeChoice::Auto,
            notify: NotifyChoice::Auto,
        }
    }
}

/// Everything a run needs from configuration.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The config file that was read, if any.
    pub config_path: Option<PathBuf>,
    /// The provider.
    pub provider: ProviderChoice,
    /// Turn limit.
    pub max_turns: u32,
    /// The session's cost budget in US dollars (`--max-cost`, else `max_cost`).
    pub max_cost: Option<f64>,
    /// System prompt with the workdir filled in and the project instructions appended.
    pub system_prompt: String,
    /// The project instructions (`AGENTS.md` …) found for the workspace, already in
    /// `system_prompt`; kept to tell the user and for sub-agents.
    pub instructions: crate::instructions::Instructions,
    /// The workspace (canonical).
    pub workdir: PathBuf,
    /// Tool limits.
    pub tools: ToolSettings,
    /// Per-tool policy overrides.
    pub policies: HashMap<String, Policy>,
    /// Tool stack depth limit (default 20).
    pub depth_limit: usize,
    /// Most messages of history sent to the model.
    pub history_limit: usize,
    /// Bounds on each request and model call.
    pub limits: Limits,
    /// How long the keyboard must be quiet before a TUI dialog takes keys by itself (Tab
    /// moves to it at once; an unsent message keeps it waiting for Tab).
    pub dialog_guard: Duration,
    /// When a running call of a tool counts as slow (`[tui] slow_after_secs`), by tool name.
    pub slow_after: std::collections::HashMap<String, Duration>,
    /// How long a call that streams output may be quiet before it is flagged (zero: never).
    pub quiet_after: Duration,
    /// The MCP servers to start (`[mcp.servers]`, enabled ones).
    pub mcp: Vec<crate::mcp::ServerSpec>,
    /// MCP tools offered at most (`[mcp] max_tools`).
    pub mcp_max_tools: usize,
    /// Checkpoints of the workspace (`[checkpoints]`): on, caps, how long kept.
    pub checkpoints: crate::checkpoint::CheckpointConfig,
    /// The session's hooks: the user's `[hooks]`, then the project's when trusted; and
    /// what the user should know about them.
    pub hooks: crate::hooks::Loaded,
    /// Mouse and colours of the TUI (`[ui]`).
    pub ui: UiSettings,
    /// The context window and when to compact.
    pub context: ContextSettings,
    /// What model calls cost.
    pub pricing: pricing::Pricing,
    /// The providers `/model` and `/provider` can switch to.
    pub catalog: Catalog,
    /// Where spans are exported (`[otel]`, `OTEL_EXPORTER_OTLP_*`); `None`: nowhere.
    pub otel: Option<crate::otel::Exporting>,
    /// The external agents of `[agents]`, by name (`/agent`).
    pub agents: Vec<String>,
}

/// Resolves config file + CLI + environment into what a run needs. `probe_ollama` tells
/// whether a local Ollama answers (and with which first model) for auto-selection.
pub async fn resolve<F, Fut>(
    overrides: &Overrides,
    env: &dyn Fn(&str) -> Option<String>,
    probe_ollama: F,
) -> Result<Resolved, ConfigError>
where
    F: FnOnce(String) -> Fut,
    Fut: Future<Output = Option<String>>,
{
    let (config_path, file) = read_config(overrides, env)?;
    let workdir = resolve_workdir(overrides.workdir.as_deref())?;
    let named = overrides
        .provider
        .clone()
        .or_else(|| file.provider.as_ref().map(|p| p.get_ref().clone()))
        .or_else(|| {
            // One configured provider and nothing else said: that is the one.
            (file.providers.len() == 1)
                .then(|| file.providers.keys().next().cloned())
                .flatten()
        })
        .or_else(|| overrides.base_url.as_ref().map(|_| "openai".to_string()));
    let mut provider = match named {
        Some(name) => choose(&name, &file, env)?,
        None => auto_select(&file, env, probe_ollama).await?,
    };
    if let Some(model) = &overrides.model {
        provider.model = model.clone();
    }
    if let Some(url) = &overrides.base_url {
        check_url(url).map_err(|m| ConfigError(format!("--base-url: {m}")))?;
        provider.base_url = url.trim_end_matches('/').to_string();
    }
    need_key(&provider)?;
    let pricing = pricing::Pricing::new(
        (file.pricing.iter())
            .map(|(model, price)| (model.clone(), *price.get_ref()))
            .collect(),
    );
    let max_cost = overrides
        .max_cost
        .or(file.max_cost.as_ref().map(|m| *m.get_ref()));
    if let Some(max_cost) = max_cost {
        need_price(max_cost, &provider.model, &pricing)?;
    }
    let mut tools = tool_settings(&file.tools);
    tools.secret_vars = key_vars(&file);
    tools.sandbox = sandbox::resolve(&file.sandbox, overrides.sandbox, &workdir, env)?;
    let otel = crate::otel::resolve(&file.otel, env).map_err(ConfigError)?;
    let parent = env("TRACEPARENT")
        .and_then(|value| crate::otel::TraceParent::parse(&value, env("TRACESTATE").as_deref()));
    tools.trace = crate::otel::TraceSetup {
        propagate: parent.is_some() || otel.is_some(),
        parent,
    };
    let policies = file
        .tools
        .policy
        .iter()
        .map(|(k, v)| (k.get_ref().clone(), *v))
        .collect();
    let prompt = file
        .system_prompt
        .clone()
        .unwrap_or_else(|| DEFAULT_SYSTEM_PROMPT.to_string());
    let limits = call_limits(&file, &provider.options);
    let compact_at = file
        .context
        .compact_at_percent
        .as_ref()
        .map_or(DEFAULT_COMPACT_AT, |p| *p.get_ref() as f64 / 100.0);
    let context = context_settings(compact_at, &provider);
    let catalog = Catalog::new(&provider, &file, env, compact_at);
    let instructions = crate::instructions::load(&workdir, &file.instructions.names());
    let prompt =
        instructions.append_to(&prompt.replace("{workdir}", &workdir.display().to_string()));
    let hooks = crate::hooks::load(
        (file.hooks)
            .compile(crate::hooks::Source::User)
            .map_err(|e| ConfigError(format!("config: {e}")))?,
        &workdir,
        crate::audit::state_dir().as_deref(),
    );
    Ok(Resolved {
        config_path,
        provider,
        max_turns: overrides.max_turns.or(file.max_turns).unwrap_or(10).max(1),
        max_cost,
        system_prompt: prompt,
        instructions,
        workdir,
        tools,
        policies,
        depth_limit: file.tools.depth_limit.unwrap_or(20).max(1),
        history_limit: file.history_messages.unwrap_or(50).max(2),
        limits,
        dialog_guard: Duration::from_millis(file.tui.dialog_guard_ms.unwrap_or(DIALOG_QUIET_MS)),
        slow_after: (file.tui.slow_after_secs.iter())
            .map(|(tool, secs)| (tool.clone(), Duration::from_secs(*secs)))
            .collect(),
        quiet_after: Duration::from_secs(file.tui.quiet_after_secs.unwrap_or(30)),
        mcp: crate::mcp::config::servers(&file.mcp).map_err(ConfigError)?,
        mcp_max_tools: file.mcp.max_tools(),
        checkpoints: file.checkpoints.clone(),
        hooks,
        ui: UiSettings {
            mouse: file.tui.mouse.unwrap_or(true),
            theme: file.tui.theme.unwrap_or_default(),
            notify: file.tui.notify.unwrap_or_default(),
        },
        context,
        catalog,
        pricing,
        otel,
        agents: file.agents.keys().cloned().collect(),
    })
}

/// A budget cannot be kept on a model whose price is unknown: said at once, rather than
/// a budget that is silently not kept.
fn need_price(max_cost: f64, model: &str, pricing: &pricing::Pricing) -> Result<(), ConfigError> {
    if pricing.price(model).is_some() {
        return Ok(());
    }
    Err(ConfigError(format!(
        "a cost budget ({}, --max-cost or max_cost) needs the model's price, and taco knows no \
         price for the model {model}: set [pricing.\"{model}\"] input = …, output = … (US \
         dollars per million tokens) in the config, or run without a budget",
        pricing::dollars(max_cost)
    )))
}

/// The hosted APIs cannot work without a key: said at once rather than after a 401.
fn need_key(provider: &ProviderChoice) -> Result<(), ConfigError> {
    let hosted = ["https://api.openai.com", "https://api.anthropic.com"];
    if provider.api_key.is_none() && hosted.iter().any(|h| provider.base_url.starts_with(h)) {
        let var = provider
            .api_key_env
            .clone()
            .unwrap_or_else(|| "OPENAI_API_KEY".into());
        return Err(ConfigError(format!(
            "provider '{}' needs an API key: set {var} in the environment (or pick another provider with -p, e.g. -p demo)",
            provider.name
        )));
    }
    Ok(())
}

/// The window: configured, else known for the model (Ollama's is asked of the server, so
/// none here), and the compaction threshold.
fn context_settings(compact_at: f64, provider: &ProviderChoice) -> ContextSettings {
    let configured = provider
        .options
        .context_window
        .as_ref()
        .map(|w| *w.get_ref());
    let known = match provider.kind {
        ProviderKind::Ollama | ProviderKind::Demo => None,
        _ => known_window(&provider.model),
    };
    ContextSettings {
        window: configured.or(known),
        compact_at,
    }
}

/// The MCP servers of the config and the workspace, for `taco mcp list` (which needs no
/// provider, so a missing key is no reason to refuse).
pub fn mcp_servers(
    overrides: &Overrides,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<McpSetup, ConfigError> {
    let (_, file) = read_config(overrides, env)?;
    let workdir = resolve_workdir(overrides.workdir.as_deref())?;
    let servers = crate::mcp::config::servers(&file.mcp).map_err(ConfigError)?;
    let sandbox = sandbox::resolve(&file.sandbox, overrides.sandbox, &workdir, env)?;
    Ok(McpSetup {
        servers,
        max_tools: file.mcp.max_tools(),
        workdir,
        sandbox,
    })
}

/// The workspace `-C` names (or the current directory), canonical.
pub fn workdir(overrides: &Overrides) -> Result<PathBuf, ConfigError> {
    resolve_workdir(overrides.workdir.as_deref())
}

/// The workspace and `[checkpoints]` (what `taco rewind` needs; no provider is resolved).
pub fn checkpoints(
    overrides: &Overrides,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(PathBuf, crate::checkpoint::CheckpointConfig), ConfigError> {
    let (_, file) = read_config(overrides, env)?;
    let workdir = resolve_workdir(overrides.workdir.as_deref())?;
    Ok((workdir, file.checkpoints))
}

/// What `taco mcp list` starts its servers with.
#[derive(Debug, Clone)]
pub struct McpSetup {
    /// The enabled servers.
    pub servers: Vec<crate::mcp::ServerSpec>,
    /// MCP tools offered at most.
    pub max_tools: usize,
    /// The workspace.
    pub workdir: PathBuf,
    /// The sandbox of servers that ask for it.
    pub sandbox: crate::sandbox::Sandbox,
}

fn resolve_workdir(dir: Option<&Path>) -> Result<PathBuf, ConfigError> {
    let dir = match dir {
        Some(dir) => dir.to_path_buf(),
        None => std::env::current_dir()
            .map_err(|e| ConfigError(format!("cannot read the current directory: {e}")))?,
    };
    let canonical = dir
        .canonicalize()
        .map_err(|e| ConfigError(format!("workdir {}: {e}", dir.display())))?;
    if !canonical.is_dir() {
        return Err(ConfigError(format!(
            "workdir {}: is not a directory (-C takes the workspace directory)",
            dir.display()
        )));
    }
    Ok(canonical)
}

pub(crate) fn tool_settings(tools: &ToolsConfig) -> ToolSettings {
    let mut settings = ToolSettings::default();
    if let Some(secs) = tools.timeout_secs {
        settings.timeout = Duration::from_secs(secs.max(1));
    }
    if let Some(bytes) = tools.max_output_bytes {
        settings.max_output_bytes = bytes.max(1024);
    }
    if let Some(parallel) = tools.max_parallel {
        settings.max_parallel = parallel.max(1);
    }
    if let Some(secs) = tools.shell.timeout_secs {
        settings.shell_timeout = Duration::from_secs(secs.max(1));
    }
    if let Some(bytes) = tools.web_fetch.max_bytes {
        settings.fetch_max_bytes = bytes.max(1024);
    }
    settings.allow_hosts = tools.web_fetch.allow_hosts.clone();
    settings.env_passthrough = tools.shell.env_passthrough.clone();
    settings.shell_allow = tools.shell.allow.clone();
    settings.shell_ask = tools.shell.ask.clone();
    if let Some(hops) = tools.web_fetch.max_redirects {
        settings.max_redirects = hops;
    }
    settings.allow_private = tools
        .web_fetch
        .allow_private
        .iter()
        .map(|entry| entry.get_ref().clone())
        .collect();
    settings
}

/// Every variable that holds a provider key: the presets' and the config's `api_key_env`s.
/// Tools never inherit them and their values are redacted wherever they show up.
pub fn key_vars(file: &ConfigFile) -> Vec<String> {
    let mut vars: Vec<String> = PRESETS
        .iter()
        .filter_map(|p| p.key_env.map(String::from))
        .chain(
            file.providers
                .values()
                .filter_map(|e| e.api_key_env.clone()),
        )
        .collect();
    vars.sort();
    vars.dedup();
    vars
}

/// The variables the config names as holding credentials, whatever their names: every
/// provider's `api_key_env` (the presets' too), each MCP server's `bearer_token_env` and the
/// `${NAME}`s of its headers. `vault::seal` withholds them from the environment. A config
/// that cannot be read names nothing here; resolving it says why later.
pub fn named_secrets(overrides: &Overrides, env: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    let file = read_config(overrides, env)
        .map(|(_, file)| file)
        .unwrap_or_default();
    let mut names = key_vars(&file);
    for server in file.mcp.servers.values() {
        names.extend(server.bearer_token_env.clone());
        names.extend(
            (server.headers.values())
                .filter_map(|v| crate::mcp::config::reference(v))
                .map(String::from),
        );
    }
    // A variable an agent's env names is the agent's: withheld from taco's tools too.
    for agent in file.agents.values() {
        names.extend(
            (agent.env.values())
                .filter_map(|v| crate::mcp::config::reference(v))
                .map(String::from),
        );
    }
    names.extend(
        (file.otel.headers.values())
            .filter_map(|v| crate::mcp::config::reference(v))
            .map(String::from),
    );
    names.sort();
    names.dedup();
    names
}

/// Bounds on requests and model calls: the file's, the provider's options, else defaults.
fn call_limits(file: &ConfigFile, options: &ProviderOptions) -> Limits {
    let mut limits = Limits::default();
    if let Some(n) = file.max_model_calls {
        limits.max_model_calls = n.max(1);
    }
    if let Some(n) = file.max_subagent_depth {
        limits.max_subagent_depth = n;
    }
    if let Some(secs) = options.idle_timeout_secs {
        limits.idle = Duration::from_secs(secs.max(1));
    }
    if let Some(secs) = options.call_timeout_secs {
        limits.call_deadline = Duration::from_secs(secs.max(1));
    }
    if let Some(bytes) = options.max_reply_bytes {
        limits.max_reply_bytes = bytes.max(1024);
    }
    limits
}
