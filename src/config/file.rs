//! The config file: its shape, where it is, reading it safely and checking it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use super::presets::{PRESETS, unknown_provider};
use super::{ConfigError, Overrides};
use crate::tools::builtin::AllowPrivate;
use crate::tools::{Policy, ToolRegistry};

mod ui;

pub use ui::{NotifyChoice, ThemeChoice, TuiConfig};

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
    /// The model's context window in tokens (default: known for the presets' common models;
    /// Ollama: asked of the server). Ollama is also sent it as `num_ctx`.
    pub context_window: Option<Spanned<u64>>,
    /// Demo provider: pause between streamed pieces, in milliseconds.
    pub pace_ms: Option<u64>,
    /// Whether the provider's models take images (default: known for the common vision
    /// models; any other is taken not to).
    pub vision: Option<bool>,
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
    /// More models the `/model` picker offers for it (besides `model` and what its server lists).
    #[serde(default)]
    pub models: Vec<String>,
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
    /// Command prefixes (as words) that run without asking, e.g. `["git status", "cargo test"]`.
    #[serde(default)]
    pub allow: Vec<String>,
    /// Command prefixes that are always asked about, even under an `allow` prefix.
    #[serde(default)]
    pub ask: Vec<String>,
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
    /// Most `shell` commands running at once in a session (default 8); the rest are queued.
    pub max_parallel: Option<usize>,
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

/// `[context]`: how the conversation is kept within the model's context window.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContextConfig {
    /// Compact when a request would fill more than this percentage of the window (10 – 99;
    /// default 85).
    pub compact_at_percent: Option<Spanned<u64>>,
}

/// `[instructions]`: project instruction files (`AGENTS.md`) added to the system prompt.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstructionsConfig {
    /// Whether they are read at all (default true).
    pub enabled: Option<bool>,
    /// The names looked for in each directory, in order of preference (the first found in a
    /// directory wins; default `["AGENTS.md", "CLAUDE.md"]`).
    pub files: Option<Vec<Spanned<String>>>,
}

impl InstructionsConfig {
    /// The names to look for; none when turned off.
    pub fn names(&self) -> Vec<String> {
        if self.enabled == Some(false) {
            return Vec::new();
        }
        match &self.files {
            // A name given twice is looked for once.
            Some(files) => files.iter().fold(Vec::new(), |mut names, f| {
                if !names.contains(f.get_ref()) {
                    names.push(f.get_ref().clone());
                }
                names
            }),
            None => crate::instructions::DEFAULT_NAMES
                .iter()
                .map(|n| n.to_string())
                .collect(),
        }
    }
}

/// The config file as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// Provider to use when `-p` is not given.
    pub provider: Option<Spanned<String>>,
    /// Turn limit.
    pub max_turns: Option<u32>,
    /// The session's cost budget in US dollars (`--max-cost` wins).
    pub max_cost: Option<Spanned<f64>>,
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
    /// Terminal UI settings: `[ui]`, or `[tui]` as files written before it was renamed say.
    #[serde(default, rename = "ui", alias = "tui")]
    pub tui: TuiConfig,
    /// MCP servers whose tools are offered.
    #[serde(default)]
    pub mcp: crate::mcp::McpConfig,
    /// Project instruction files.
    #[serde(default)]
    pub instructions: InstructionsConfig,
    /// The context window and compaction.
    #[serde(default)]
    pub context: ContextConfig,
    /// Prices per million tokens by model id (`[pricing."gpt-4.1"] input = 2.0 …`).
    #[serde(default)]
    pub pricing: BTreeMap<String, Spanned<super::pricing::Price>>,
    /// The sandbox of shell commands.
    #[serde(default)]
    pub sandbox: super::sandbox::SandboxConfig,
    /// `[checkpoints]`: the shadow store of the workspace's files (rewind).
    #[serde(default)]
    pub checkpoints: crate::checkpoint::CheckpointConfig,
    /// `[hooks]`: the user's commands at points of a session (issue 30.1).
    #[serde(default)]
    pub hooks: crate::hooks::HooksConfig,
    /// `[otel]`: OpenTelemetry export (issue 31).
    #[serde(default)]
    pub otel: crate::otel::OtelConfig,
    /// `[agents.NAME]`: external agents driven over ACP (`taco --agent NAME`).
    #[serde(default)]
    pub agents: BTreeMap<String, super::agents::AgentEntry>,
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

/// A smaller window cannot hold a system prompt and the tool definitions.
const MIN_CONTEXT_WINDOW: u64 = 1024;

/// Parses and checks config text; errors name the file and line.
pub fn parse_config(path: &Path, text: &str) -> Result<ConfigFile, ConfigError> {
    let file: ConfigFile = toml::from_str(text).map_err(|e| {
        let line = e
            .span()
            .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
        // serde names fields as Markdown code spans; an error line quotes them plainly.
        let message = crate::text::plain(e.message().trim()).into_owned();
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
                    "provider '{name}' needs a 'kind' (\"openai\", \"anthropic\" or \"ollama\"): it is not a preset"
                ),
            ));
        }
        if let Some(url) = &entry.base_url {
            check_url(url.get_ref()).map_err(|m| ConfigError::at(path, text, url.span(), m))?;
        }
        if let Some(window) = entry.options.context_window.as_ref()
            && *window.get_ref() < MIN_CONTEXT_WINDOW
        {
            return Err(ConfigError::at(
                path,
                text,
                window.span(),
                format!(
                    "provider '{name}': context_window is in tokens and must be at least {MIN_CONTEXT_WINDOW}"
                ),
            ));
        }
    }
    if let Some(percent) = &file.context.compact_at_percent
        && !(10..=99).contains(percent.get_ref())
    {
        return Err(ConfigError::at(
            path,
            text,
            percent.span(),
            "[context] compact_at_percent must be between 10 and 99",
        ));
    }
    for (name, agent) in &file.agents {
        super::agents::check(name, agent)
            .map_err(|m| ConfigError(format!("{}: {m}", path.display())))?;
    }
    if let Some(max_cost) = &file.max_cost {
        crate::orchestrator::budget::checked(*max_cost.get_ref())
            .map_err(|m| ConfigError::at(path, text, max_cost.span(), format!("max_cost: {m}")))?;
    }
    for (model, price) in &file.pricing {
        if !price.get_ref().is_valid() {
            return Err(ConfigError::at(
                path,
                text,
                price.span(),
                format!(
                    "[pricing.\"{model}\"]: prices are US dollars per million tokens, not negative"
                ),
            ));
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
    let home = super::sandbox::home();
    if let Err((span, m)) = file.sandbox.writable_paths(Path::new("/"), home.as_deref()) {
        return Err(ConfigError::at(path, text, span, m));
    }
    for name in file.instructions.files.iter().flatten() {
        check_file_name(name.get_ref()).map_err(|m| ConfigError::at(path, text, name.span(), m))?;
    }
    let builtins = ToolRegistry::builtins();
    for name in file.tools.policy.keys() {
        // MCP tools are known only once their server has started.
        if builtins.get(name.get_ref()).is_none() && !name.get_ref().starts_with("mcp__") {
            let all = builtins.all();
            let known: Vec<&str> = all.iter().map(|t| t.name()).collect();
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

/// An instruction file name is looked for in every directory, so it is one plain name.
fn check_file_name(name: &str) -> Result<(), String> {
    let plain = !name.is_empty() && !name.contains(['/', '\0']) && name != "." && name != "..";
    if plain {
        return Ok(());
    }
    Err(format!(
        "[instructions] files: {name:?} is not a file name; give plain names such as \"AGENTS.md\", looked for in each directory"
    ))
}

/// A `base_url` taco can call: http or https.
pub(super) fn check_url(url: &str) -> Result<(), String> {
    match reqwest::Url::parse(url) {
        Ok(u) if matches!(u.scheme(), "http" | "https") => Ok(()),
        Ok(u) => Err(format!(
            "base_url '{url}' must be http or https, not {}",
            u.scheme()
        )),
        Err(e) => Err(format!("base_url '{url}' is not a URL: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tui_takes_slow_and_quiet_thresholds() {
        let text =
            "[tui]\nslow_after_secs = { shell = 120, web_fetch = 20 }\nquiet_after_secs = 45\n";
        let file = parse_config(Path::new("c.toml"), text).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(file.tui.slow_after_secs.get("shell"), Some(&120));
        assert_eq!(file.tui.slow_after_secs.len(), 2);
        assert_eq!(file.tui.quiet_after_secs, Some(45));
        let empty = parse_config(Path::new("c.toml"), "").unwrap_or_else(|e| panic!("{e:?}"));
        assert!(empty.tui.slow_after_secs.is_empty() && empty.tui.quiet_after_secs.is_none());
        assert!(parse_config(Path::new("c.toml"), "[tui]\nslow_after_secs = 3\n").is_err());
    }

    #[test]
    fn ui_is_the_section_and_tui_still_loads() {
        let parse = |text: &str| parse_config(Path::new("c.toml"), text);
        let file = parse("[ui]\nmouse = false\ntheme = \"light\"\nquiet_after_secs = 5\n")
            .unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(file.tui.mouse, Some(false));
        assert_eq!(file.tui.theme, Some(ThemeChoice::Light));
        assert_eq!(file.tui.quiet_after_secs, Some(5));
        let old = parse("[tui]\ntheme = \"dark\"\n").unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(old.tui.theme, Some(ThemeChoice::Dark));
        let auto = parse("[ui]\ntheme = \"auto\"\n").unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(auto.tui.theme, Some(ThemeChoice::Auto));
        assert!(
            parse("[ui]\ntheme = \"blue\"\n").is_err(),
            "only the three names"
        );
        assert!(parse("[ui]\nmouse = \"no\"\n").is_err());
    }

    #[test]
    fn ui_notify_takes_its_three_words() {
        let parse = |text: &str| parse_config(Path::new("c.toml"), text);
        for (word, choice) in [
            ("auto", NotifyChoice::Auto),
            ("bell", NotifyChoice::Bell),
            ("off", NotifyChoice::Off),
        ] {
            let file =
                parse(&format!("[ui]\nnotify = \"{word}\"\n")).unwrap_or_else(|e| panic!("{e:?}"));
            assert_eq!(file.tui.notify, Some(choice));
        }
        let empty = parse("").unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(empty.tui.notify.unwrap_or_default(), NotifyChoice::Auto);
        assert!(parse("[ui]\nnotify = \"loud\"\n").is_err());
        assert!(parse("[ui]\nnotify = true\n").is_err());
    }
}
