//! Provider presets, choosing a provider (named or auto-selected) and building it.

use std::sync::Arc;
use std::time::Duration;

use super::{ConfigError, ConfigFile, ProviderKind, ProviderOptions};
use crate::provider::anthropic::{AnthropicConfig, AnthropicProvider};
use crate::provider::demo::DemoProvider;
use crate::provider::ollama::{OllamaConfig, OllamaProvider};
use crate::provider::openai::{OpenAiConfig, OpenAiProvider};
use crate::provider::{Provider, Secret};

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
    /// More models the config names for it (`models`), for the `/model` picker.
    pub models: Vec<String>,
    /// Env var holding the key, if any.
    pub api_key_env: Option<String>,
    /// The key, read from that env var.
    pub api_key: Option<Secret>,
    /// Options.
    pub options: ProviderOptions,
    /// Why this provider was picked when nobody named one (shown in the status line).
    pub auto_reason: Option<String>,
}

pub(super) struct Preset {
    pub(super) name: &'static str,
    pub(super) kind: ProviderKind,
    pub(super) base_url: &'static str,
    pub(super) model: &'static str,
    pub(super) key_env: Option<&'static str>,
    pub(super) send_reasoning_content: bool,
}

pub(super) const PRESETS: &[Preset] = &[
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

/// The provider called `name`: a config table, a preset, or a table overriding a preset.
pub(super) fn choose(
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
        models: entry.models.clone(),
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
pub(super) async fn auto_select<F, Fut>(
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
    let client = crate::vault::with_proxies(reqwest::Client::builder())
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
            .map_err(|e| ConfigError(format!("provider '{}': {e}", choice.name)))?
            .with_vision(options.vision);
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
            // The window taco plans for is the one the server runs the model with: Ollama's
            // own default is often far smaller than what the model was trained for.
            let num_ctx = options.context_window.as_ref().map(|w| *w.get_ref());
            if let Some(n) = num_ctx {
                let opts = extra_body
                    .entry("options")
                    .or_insert_with(|| serde_json::json!({}));
                if let Some(map) = opts.as_object_mut() {
                    map.entry("num_ctx").or_insert(n.into());
                }
            }
            let provider = OllamaProvider::new(OllamaConfig {
                name: choice.name.clone(),
                base_url: choice.base_url.clone(),
                model: choice.model.clone(),
                api_key: choice.api_key.clone(),
                api_key_env: choice.api_key_env.clone(),
                think: options.think,
                num_ctx,
                extra_body,
                connect_timeout: connect_timeout(options),
                idle_timeout: idle_timeout(options),
            })
            .map_err(|e| ConfigError(format!("provider '{}': {e}", choice.name)))?
            .with_vision(options.vision);
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
            .map_err(|e| ConfigError(format!("provider '{}': {e}", choice.name)))?
            .with_vision(options.vision);
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

/// Retry settings of a provider choice.
pub fn retry_policy(choice: &ProviderChoice) -> crate::orchestrator::retry::RetryPolicy {
    let mut policy = crate::orchestrator::retry::RetryPolicy::default();
    if let Some(n) = choice.options.max_attempts {
        policy.max_attempts = n.max(1);
    }
    policy
}

/// A provider name that is neither a preset nor in the file, and the names that are.
pub(super) fn unknown_provider(name: &str, file: &ConfigFile) -> String {
    let mut names: Vec<&str> = preset_names().collect();
    names.extend(file.providers.keys().map(String::as_str));
    format!("unknown provider '{name}'; known: {}", names.join(", "))
}
