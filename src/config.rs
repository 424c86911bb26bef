//! Configuration: the TOML file, provider presets, CLI overrides and auto-selection (DESIGN §6, §8).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use crate::orchestrator::Limits;
use crate::provider::anthropic::{AnthropicConfig, AnthropicProvider};
use crate::provider::demo::DemoProvider;
use crate::provider::ollama::{OllamaConfig, OllamaProvider};
use crate::provider::openai::{OpenAiConfig, OpenAiProvider};
use crate::provider::{Provider, Secret};
use crate::tools::builtin::AllowPrivate;
use crate::tools::{Policy, ToolRegistry, ToolSettings};

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

/// How a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    /// OpenAI Chat Completions and compatibles (DeepSeek, OpenRouter, Groq, vLLM, llama.cpp, …).
    Openai,
    /// Anthropic Messages.
    Anthropic,
    /// Native Ollama (`/api/chat`).
    Ollama,
    /// The built-in offline demo.
    Demo,
}

/// `[providers.NAME.options]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderOptions {
    /// Send the assistant's `reasoning_content` back during a tool loop (DeepSeek thinking).
    pub send_reasoning_content: Option<bool>,
    /// Connect timeout in seconds.
    pub connect_timeout_secs: Option<u64>,
    /// Longest silence inside a stream, in seconds.
    pub idle_timeout_secs: Option<u64>,
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// Cap on output tokens (Anthropic requires one; default 8192 there).
    pub max_tokens: Option<u64>,
    /// Anthropic extended thinking: the token budget (turns thinking on).
    pub thinking_budget: Option<u64>,
    /// Ollama: ask a reasoning model to think (`think`).
    pub think: Option<bool>,
    /// Attempts per model call, the first included (default 4; 1 never retries).
    pub max_attempts: Option<u32>,
    /// Longest one model call may take in all, in seconds (default 900).
    pub call_timeout_secs: Option<u64>,
    /// Most bytes of text, reasoning and tool arguments one reply may carry (default 16 MiB).
    pub max_reply_bytes: Option<usize>,
    /// Demo provider: pause between streamed pieces, in milliseconds.
    pub pace_ms: Option<u64>,
    /// Extra fields merged into every request body.
    #[serde(default)]
    pub extra_body: toml::Table,
}

/// `[providers.NAME]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderEntry {
    /// Wire protocol; defaults to the preset of the same name.
    pub kind: Option<ProviderKind>,
    /// API root (OpenAI-style: including `/v1`).
    pub base_url: Option<Spanned<String>>,
    /// Model id.
    pub model: Option<String>,
    /// Name of the environment variable that holds the API key.
    pub api_key_env: Option<String>,
    /// Provider options.
    #[serde(default)]
    pub options: ProviderOptions,
}

/// `[tools.shell]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShellConfig {
    /// Default timeout of a command, in seconds.
    pub timeout_secs: Option<u64>,
    /// Secret-looking variables that tool processes may inherit all the same, by name.
    #[serde(default)]
    pub env_passthrough: Vec<String>,
}

/// `[tools.web_fetch]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebFetchConfig {
    /// Hosts fetched without asking (subdomains included).
    #[serde(default)]
    pub allow_hosts: Vec<String>,
    /// Download cap in bytes.
    pub max_bytes: Option<usize>,
    /// Redirects one fetch follows at most.
    pub max_redirects: Option<usize>,
    /// Loopback/private/link-local hosts, addresses or ranges that may be fetched.
    #[serde(default)]
    pub allow_private: Vec<Spanned<String>>,
}

/// `[tools]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolsConfig {
    /// Longest any tool call may run, in seconds.
    pub timeout_secs: Option<u64>,
    /// Cap on one tool result, in bytes.
    pub max_output_bytes: Option<usize>,
    /// How deeply tool calls may nest (sub-agents, needed calls) before the user is asked.
    pub depth_limit: Option<usize>,
    /// Per-tool policy: `allow`, `ask` or `deny`.
    #[serde(default)]
    pub policy: BTreeMap<Spanned<String>, Policy>,
    /// Shell settings.
    #[serde(default)]
    pub shell: ShellConfig,
    /// Web fetch settings.
    #[serde(default)]
    pub web_fetch: WebFetchConfig,
}

/// `[tui]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TuiConfig {
    /// How long a new dialog ignores answer keys, in milliseconds (0: no guard).
    pub dialog_guard_ms: Option<u64>,
}

/// The config file as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// Provider to use when `-p` is not given.
    pub provider: Option<Spanned<String>>,
    /// Turn limit.
    pub max_turns: Option<u32>,
    /// Replaces the default system prompt.
    pub system_prompt: Option<String>,
    /// Most messages of history sent to the model (default 50; cut at turn boundaries).
    pub history_messages: Option<usize>,
    /// Model calls one request may make, sub-agents included (default 200).
    pub max_model_calls: Option<u32>,
    /// How deeply sub-agents may nest (default 3).
    pub max_subagent_depth: Option<u32>,
    /// Named providers (also override presets of the same name).
    #[serde(default)]
    pub providers: BTreeMap<String, ProviderEntry>,
    /// Tool settings and policies.
    #[serde(default)]
    pub tools: ToolsConfig,
    /// Terminal UI settings.
    #[serde(default)]
    pub tui: TuiConfig,
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
    /// `-C/--workdir`.
    pub workdir: Option<PathBuf>,
}

/// The provider a run will use, fully resolved.
#[derive(Debug, Clone)]
pub struct ProviderChoice {
    /// Provider name (preset or config table name).
    pub name: String,
    /// Wire protocol.
    pub kind: ProviderKind,
    /// API root.
    pub base_url: String,
    /// Model id.
    pub model: String,
    /// Env var holding the key, if any.
    pub api_key_env: Option<String>,
    /// The key, read from that env var.
    pub api_key: Option<Secret>,
    /// Options.
    pub options: ProviderOptions,
    /// Why this provider was picked when nobody named one (shown in the status line).
    pub auto_reason: Option<String>,
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
    /// System prompt with the workdir filled in.
    pub system_prompt: String,
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
    /// How long a new TUI dialog ignores answer keys (type-ahead never answers it).
    pub dialog_guard: Duration,
}

struct Preset {
    name: &'static str,
    kind: ProviderKind,
    base_url: &'static str,
    model: &'static str,
    key_env: Option<&'static str>,
    send_reasoning_content: bool,
}

const PRESETS: &[Preset] = &[
    Preset {
        name: "openai",
        kind: ProviderKind::Openai,
        base_url: "https://api.openai.com/v1",
        model: "gpt-4.1-mini",
        key_env: Some("OPENAI_API_KEY"),
        send_reasoning_content: false,
    },
    Preset {
        name: "anthropic",
        kind: ProviderKind::Anthropic,
        base_url: "https://api.anthropic.com",
        model: "claude-sonnet-4-5",
        key_env: Some("ANTHROPIC_API_KEY"),
        send_reasoning_content: false,
    },
    Preset {
        name: "deepseek",
        kind: ProviderKind::Openai,
        base_url: "https://api.deepseek.com/v1",
        model: "deepseek-chat",
        key_env: Some("DEEPSEEK_API_KEY"),
        send_reasoning_content: true,
    },
    Preset {
        name: "openrouter",
        kind: ProviderKind::Openai,
        base_url: "https://openrouter.ai/api/v1",
        model: "openai/gpt-4.1-mini",
        key_env: Some("OPENROUTER_API_KEY"),
        send_reasoning_content: false,
    },
    Preset {
        name: "groq",
        kind: ProviderKind::Openai,
        base_url: "https://api.groq.com/openai/v1",
        model: "llama-3.3-70b-versatile",
        key_env: Some("GROQ_API_KEY"),
        send_reasoning_content: false,
    },
    Preset {
        name: "ollama",
        kind: ProviderKind::Ollama,
        base_url: "http://127.0.0.1:11434",
        model: "llama3.2",
        key_env: None,
        send_reasoning_content: false,
    },
    Preset {
        name: "demo",
        kind: ProviderKind::Demo,
        base_url: "",
        model: "demo",
        key_env: None,
        send_reasoning_content: false,
    },
];

/// Names of the built-in provider presets.
pub fn preset_names() -> impl Iterator<Item = &'static str> {
    PRESETS.iter().map(|p| p.name)
}

/// `<config dir>/taco/config.toml`.
pub fn default_config_path() -> Option<PathBuf> {
    directories::BaseDirs::new().map(|d| d.config_dir().join("taco").join("config.toml"))
}

/// Reads the config file chosen by `-c`, then `TACO_CONFIG`, then the default path.
/// A named file that is missing is an error; a missing default file is no config.
pub fn read_config(
    overrides: &Overrides,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(Option<PathBuf>, ConfigFile), ConfigError> {
    let named = overrides.config.clone().or_else(|| {
        env("TACO_CONFIG")
            .filter(|s| !s.is_empty())
            .map(PathBuf::from)
    });
    let path = match named {
        Some(path) => {
            config_file_exists(&path, true)?;
            path
        }
        None => match default_config_path() {
            Some(path) if config_file_exists(&path, false)? => path,
            _ => return Ok((None, ConfigFile::default())),
        },
    };
    let text = read_capped(&path)?;
    let file = parse_config(&path, &text)?;
    Ok((Some(path), file))
}

/// A config file larger than this is refused: it is a mistake (or `/dev/zero`), not a config.
const MAX_CONFIG_BYTES: u64 = 4 << 20;

/// Whether a config file is at `path`. Something else there (a directory, a FIFO, a device),
/// a config directory that is a file, or a file taco may not read is an error, never
/// silently no config. A missing file is an error only when it was named (`-c`, `TACO_CONFIG`).
fn config_file_exists(path: &Path, named: bool) -> Result<bool, ConfigError> {
    let shown = path.display();
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => Ok(true),
        Ok(meta) if meta.is_dir() => Err(ConfigError(format!(
            "{shown}: is a directory, not a config file"
        ))),
        Ok(_) => Err(ConfigError(format!(
            "{shown}: is not a regular file (a FIFO, socket or device); give a TOML file"
        ))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !named => Ok(false),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(ConfigError(format!("{shown}: config file not found")))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => {
            let parent = path
                .parent()
                .map(|p| p.display().to_string())
                .unwrap_or_default();
            Err(ConfigError(format!(
                "{shown}: the config directory {parent} (or a folder above it) is a file, not a directory"
            )))
        }
        Err(e) => Err(ConfigError(format!(
            "{shown}: cannot read the config file: {e}"
        ))),
    }
}

/// The file's text, refused when it is over [`MAX_CONFIG_BYTES`] or not UTF-8.
fn read_capped(path: &Path) -> Result<String, ConfigError> {
    use std::io::Read;
    let fail = |e: &dyn std::fmt::Display| {
        ConfigError(format!(
            "{}: cannot read the config file: {e}",
            path.display()
        ))
    };
    let file = std::fs::File::open(path).map_err(|e| fail(&e))?;
    let mut bytes = Vec::new();
    file.take(MAX_CONFIG_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| fail(&e))?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(fail(&format_args!(
            "it is larger than {} MiB",
            MAX_CONFIG_BYTES >> 20
        )));
    }
    String::from_utf8(bytes).map_err(|_| fail(&"it is not UTF-8 text"))
}

/// Parses and checks config text; errors name the file and line.
pub fn parse_config(path: &Path, text: &str) -> Result<ConfigFile, ConfigError> {
    let file: ConfigFile = toml::from_str(text).map_err(|e| {
        let line = e
            .span()
            .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
        let message = e.message().trim().to_string();
        match line {
            Some(line) => ConfigError(format!("{}:{line}: {message}", path.display())),
            None => ConfigError(format!("{}: {message}", path.display())),
        }
    })?;
    if let Some(provider) = &file.provider {
        let name = provider.get_ref();
        if !file.providers.contains_key(name) && !PRESETS.iter().any(|p| p.name == name) {
            return Err(ConfigError::at(
                path,
                text,
                provider.span(),
                unknown_provider(name, &file),
            ));
        }
    }
    for (name, entry) in &file.providers {
        if entry.kind.is_none() && !PRESETS.iter().any(|p| p.name == name) {
            let span = entry.base_url.as_ref().map(|u| u.span()).unwrap_or(0..0);
            return Err(ConfigError::at(
                path,
                text,
                span,
                format!(
                    "provider '{name}' needs a `kind` (\"openai\", \"anthropic\" or \"ollama\"): it is not a preset"
                ),
            ));
        }
        if let Some(url) = &entry.base_url {
            check_url(url.get_ref()).map_err(|m| ConfigError::at(path, text, url.span(), m))?;
        }
    }
    for entry in &file.tools.web_fetch.allow_private {
        AllowPrivate::parse(std::slice::from_ref(entry.get_ref())).map_err(|m| {
            ConfigError::at(
                path,
                text,
                entry.span(),
                format!("[tools.web_fetch] allow_private: {m}"),
            )
        })?;
    }
    let builtins = ToolRegistry::builtins();
    for name in file.tools.policy.keys() {
        if builtins.get(name.get_ref()).is_none() {
            let known: Vec<&str> = builtins.iter().map(|t| t.name()).collect();
            return Err(ConfigError::at(
                path,
                text,
                name.span(),
                format!(
                    "[tools.policy] names an unknown tool '{}'; tools: {}",
                    name.get_ref(),
                    known.join(", ")
                ),
            ));
        }
    }
    Ok(file)
}

fn unknown_provider(name: &str, file: &ConfigFile) -> String {
    let mut names: Vec<&str> = preset_names().collect();
    names.extend(file.providers.keys().map(String::as_str));
    format!("unknown provider '{name}'; known: {}", names.join(", "))
}

fn check_url(url: &str) -> Result<(), String> {
    match reqwest::Url::parse(url) {
        Ok(u) if matches!(u.scheme(), "http" | "https") => Ok(()),
        Ok(u) => Err(format!(
            "base_url '{url}' must be http or https, not {}",
            u.scheme()
        )),
        Err(e) => Err(format!("base_url '{url}' is not a URL: {e}")),
    }
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
    // The hosted APIs cannot work without a key: say so now rather than after a 401.
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
    let mut tools = tool_settings(&file.tools);
    tools.secret_vars = key_vars(&file);
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
    Ok(Resolved {
        config_path,
        provider,
        max_turns: overrides.max_turns.or(file.max_turns).unwrap_or(10).max(1),
        system_prompt: prompt.replace("{workdir}", &workdir.display().to_string()),
        workdir,
        tools,
        policies,
        depth_limit: file.tools.depth_limit.unwrap_or(20).max(1),
        history_limit: file.history_messages.unwrap_or(50).max(2),
        limits,
        dialog_guard: Duration::from_millis(file.tui.dialog_guard_ms.unwrap_or(400)),
    })
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

fn tool_settings(tools: &ToolsConfig) -> ToolSettings {
    let mut settings = ToolSettings::default();
    if let Some(secs) = tools.timeout_secs {
        settings.timeout = Duration::from_secs(secs.max(1));
    }
    if let Some(bytes) = tools.max_output_bytes {
        settings.max_output_bytes = bytes.max(1024);
    }
    if let Some(secs) = tools.shell.timeout_secs {
        settings.shell_timeout = Duration::from_secs(secs.max(1));
    }
    if let Some(bytes) = tools.web_fetch.max_bytes {
        settings.fetch_max_bytes = bytes.max(1024);
    }
    settings.allow_hosts = tools.web_fetch.allow_hosts.clone();
    settings.env_passthrough = tools.shell.env_passthrough.clone();
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

/// The provider called `name`: a config table, a preset, or a table overriding a preset.
fn choose(
    name: &str,
    file: &ConfigFile,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<ProviderChoice, ConfigError> {
    let preset = PRESETS.iter().find(|p| p.name == name);
    let entry = file.providers.get(name);
    if preset.is_none() && entry.is_none() {
        return Err(ConfigError(unknown_provider(name, file)));
    }
    let entry = entry.cloned().unwrap_or_default();
    let kind = entry
        .kind
        .or(preset.map(|p| p.kind))
        .unwrap_or(ProviderKind::Openai);
    let mut base_url = entry
        .base_url
        .as_ref()
        .map(|u| u.get_ref().clone())
        .or_else(|| preset.map(|p| p.base_url.to_string()))
        .unwrap_or_default();
    if entry.base_url.is_none() {
        // The conventional env overrides of the presets.
        match name {
            "openai" => {
                base_url = env("OPENAI_BASE_URL")
                    .filter(|s| !s.is_empty())
                    .unwrap_or(base_url)
            }
            "anthropic" => {
                base_url = env("ANTHROPIC_BASE_URL")
                    .filter(|s| !s.is_empty())
                    .unwrap_or(base_url)
            }
            "ollama" => {
                if let Some(host) = env("OLLAMA_HOST").filter(|s| !s.is_empty()) {
                    base_url = ollama_root(&host);
                }
            }
            _ => {}
        }
    }
    let api_key_env = entry
        .api_key_env
        .clone()
        .or_else(|| preset.and_then(|p| p.key_env).map(String::from));
    let api_key = api_key_env
        .as_deref()
        .and_then(env)
        .filter(|k| !k.is_empty())
        .map(Secret::new);
    let mut options = entry.options.clone();
    if options.send_reasoning_content.is_none() {
        options.send_reasoning_content = preset.map(|p| p.send_reasoning_content);
    }
    Ok(ProviderChoice {
        name: name.to_string(),
        kind,
        base_url: base_url.trim_end_matches('/').to_string(),
        model: entry
            .model
            .clone()
            .or_else(|| preset.map(|p| p.model.to_string()))
            .unwrap_or_default(),
        api_key_env,
        api_key,
        options,
        auto_reason: None,
    })
}

/// `OLLAMA_HOST` may be `host:port` or a URL; the API root has a scheme and no trailing slash.
pub fn ollama_root(host: &str) -> String {
    let host = host.trim_end_matches('/');
    if host.starts_with("http://") || host.starts_with("https://") {
        host.to_string()
    } else {
        format!("http://{host}")
    }
}

/// DESIGN §6: a provider whose key is set, else a local Ollama that answers, else the demo.
async fn auto_select<F, Fut>(
    file: &ConfigFile,
    env: &dyn Fn(&str) -> Option<String>,
    probe_ollama: F,
) -> Result<ProviderChoice, ConfigError>
where
    F: FnOnce(String) -> Fut,
    Fut: Future<Output = Option<String>>,
{
    for preset in PRESETS {
        if let Some(var) = preset.key_env
            && env(var).is_some_and(|k| !k.is_empty())
        {
            let mut choice = choose(preset.name, file, env)?;
            choice.auto_reason = Some(format!("{var} is set"));
            return Ok(choice);
        }
    }
    let host = env("OLLAMA_HOST")
        .filter(|s| !s.is_empty())
        .map(|h| ollama_root(&h))
        .unwrap_or_else(|| "http://127.0.0.1:11434".to_string());
    if let Some(model) = probe_ollama(host.clone()).await {
        let mut choice = choose("ollama", file, env)?;
        if file
            .providers
            .get("ollama")
            .and_then(|e| e.model.as_ref())
            .is_none()
        {
            choice.model = model;
        }
        choice.auto_reason = Some(format!("Ollama answers at {host}"));
        return Ok(choice);
    }
    let mut choice = choose("demo", file, env)?;
    choice.auto_reason = Some("no API key in the environment and no local Ollama".to_string());
    Ok(choice)
}

/// Asks a local Ollama for its models; the first one, if it answers within a moment.
pub async fn probe_ollama(host: String) -> Option<String> {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_millis(400))
        .build()
        .ok()?;
    let body: serde_json::Value = client
        .get(format!("{host}/api/tags"))
        .send()
        .await
        .ok()?
        .json()
        .await
        .ok()?;
    body.get("models")?
        .as_array()?
        .first()?
        .get("name")?
        .as_str()
        .map(String::from)
}

/// Builds the provider a choice describes.
pub fn build_provider(choice: &ProviderChoice) -> Result<Arc<dyn Provider>, ConfigError> {
    let options = &choice.options;
    match choice.kind {
        ProviderKind::Demo => Ok(Arc::new(DemoProvider::new(Duration::from_millis(
            options.pace_ms.unwrap_or(12),
        )))),
        ProviderKind::Anthropic => {
            let extra_body = extra_body(choice, false)?;
            let provider = AnthropicProvider::new(AnthropicConfig {
                name: choice.name.clone(),
                base_url: choice.base_url.clone(),
                model: choice.model.clone(),
                api_key: choice.api_key.clone(),
                api_key_env: choice.api_key_env.clone(),
                max_tokens: options.max_tokens.unwrap_or(8192),
                thinking_budget: options.thinking_budget,
                extra_body,
                connect_timeout: connect_timeout(options),
                idle_timeout: idle_timeout(options),
            })
            .map_err(|e| ConfigError(format!("provider '{}': {e}", choice.name)))?;
            Ok(Arc::new(provider))
        }
        ProviderKind::Ollama => {
            let mut extra_body = extra_body(choice, false)?;
            if let Some(n) = options.max_tokens {
                // Ollama's name for the output cap, inside its `options` object.
                let opts = extra_body
                    .entry("options")
                    .or_insert_with(|| serde_json::json!({}));
                if let Some(map) = opts.as_object_mut() {
                    map.insert("num_predict".into(), n.into());
                }
            }
            let provider = OllamaProvider::new(OllamaConfig {
                name: choice.name.clone(),
                base_url: choice.base_url.clone(),
                model: choice.model.clone(),
                api_key: choice.api_key.clone(),
                api_key_env: choice.api_key_env.clone(),
                think: options.think,
                extra_body,
                connect_timeout: connect_timeout(options),
                idle_timeout: idle_timeout(options),
            })
            .map_err(|e| ConfigError(format!("provider '{}': {e}", choice.name)))?;
            Ok(Arc::new(provider))
        }
        ProviderKind::Openai => {
            let extra_body = extra_body(choice, true)?;
            let provider = OpenAiProvider::new(OpenAiConfig {
                name: choice.name.clone(),
                base_url: choice.base_url.clone(),
                model: choice.model.clone(),
                api_key: choice.api_key.clone(),
                api_key_env: choice.api_key_env.clone(),
                send_reasoning_content: options.send_reasoning_content.unwrap_or(false),
                extra_body,
                connect_timeout: connect_timeout(options),
                idle_timeout: idle_timeout(options),
            })
            .map_err(|e| ConfigError(format!("provider '{}': {e}", choice.name)))?;
            Ok(Arc::new(provider))
        }
    }
}

fn connect_timeout(options: &ProviderOptions) -> Duration {
    Duration::from_secs(options.connect_timeout_secs.unwrap_or(10).max(1))
}

fn idle_timeout(options: &ProviderOptions) -> Duration {
    Duration::from_secs(options.idle_timeout_secs.unwrap_or(120).max(1))
}

/// `extra_body` plus `temperature` (and `max_tokens` where the wire has that field).
fn extra_body(
    choice: &ProviderChoice,
    with_max_tokens: bool,
) -> Result<serde_json::Map<String, serde_json::Value>, ConfigError> {
    let options = &choice.options;
    let mut extra = serde_json::Map::new();
    for (key, value) in &options.extra_body {
        let value = serde_json::to_value(value).map_err(|e| {
            ConfigError(format!("provider '{}': extra_body.{key}: {e}", choice.name))
        })?;
        extra.insert(key.clone(), value);
    }
    if let Some(t) = options.temperature {
        extra.insert("temperature".into(), t.into());
    }
    if let (true, Some(n)) = (with_max_tokens, options.max_tokens) {
        extra.insert("max_tokens".into(), n.into());
    }
    Ok(extra)
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

/// Retry settings of a provider choice.
pub fn retry_policy(choice: &ProviderChoice) -> crate::orchestrator::retry::RetryPolicy {
    let mut policy = crate::orchestrator::retry::RetryPolicy::default();
    if let Some(n) = choice.options.max_attempts {
        policy.max_attempts = n.max(1);
    }
    policy
}
