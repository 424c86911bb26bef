//! Which models take images. A provider's `vision = true|false` option decides for all its
//! models; without it, the common vision models of the presets' providers are known by
//! name, and any other model is taken not to (an image is then refused before anything is
//! sent, with the option named, rather than sent to a server that may fail or silently
//! drop it).

use crate::provider::models::Api;

/// Name prefixes of models that take images, per wire (matched on the lower-cased name after
/// any `vendor/` prefix, as OpenRouter and Groq write them).
const OPENAI: &[&str] = &[
    "gpt-4o",
    "chatgpt-4o",
    "gpt-4.1",
    "gpt-4-turbo",
    "gpt-4-vision",
    "gpt-5",
    "o1-2024",
    "o3-2025",
    "o4-mini",
    "claude-3",
    "claude-opus-4",
    "claude-sonnet-4",
    "claude-haiku-4",
    "claude-3-5",
    "claude-3.5",
    "claude-3.7",
    "gemini",
    "gemma-3",
    "grok-2-vision",
    "grok-4",
    "pixtral",
    "llava",
    "llama-3.2-11b-vision",
    "llama-3.2-90b-vision",
    "llama-4",
    "qwen-vl",
    "qwen2-vl",
    "qwen2.5-vl",
    "qwen3-vl",
    "mistral-small-3.1",
    "mistral-small-3.2",
    "mistral-medium",
];

/// Exact names (a prefix would take in `o1-mini`, `o3-mini`).
const OPENAI_EXACT: &[&str] = &["o1", "o3", "gpt-4-turbo"];

/// Ollama model names (before the `:tag`).
const OLLAMA: &[&str] = &[
    "llava",
    "bakllava",
    "llama3.2-vision",
    "llama4",
    "gemma3",
    "qwen2.5vl",
    "qwen3-vl",
    "minicpm-v",
    "moondream",
    "granite3.2-vision",
    "mistral-small3.1",
    "mistral-small3.2",
];

/// Whether `model` takes images: `configured` when the provider's options say, else what is
/// known of the model.
pub fn accepts(api: Api, model: &str, configured: Option<bool>) -> bool {
    configured.unwrap_or_else(|| known(api, model))
}

/// What is known of a model by its name.
pub fn known(api: Api, model: &str) -> bool {
    let lower = model.to_ascii_lowercase();
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    match api {
        // Every Claude model from Claude 3 on takes images; Claude 2 and Instant did not.
        Api::Anthropic => {
            name.starts_with("claude")
                && !name.starts_with("claude-2")
                && !name.starts_with("claude-instant")
        }
        Api::OpenAi => OPENAI_EXACT.contains(&name) || OPENAI.iter().any(|p| name.starts_with(p)),
        Api::Ollama => {
            let base = name.split(':').next().unwrap_or(name);
            OLLAMA.iter().any(|p| base.starts_with(p))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_common_vision_models_are_known_and_the_rest_refused() {
        assert!(known(Api::OpenAi, "gpt-4.1-mini"));
        assert!(known(Api::OpenAi, "openai/gpt-4o"));
        assert!(known(Api::OpenAi, "o3"));
        assert!(!known(Api::OpenAi, "o3-mini"));
        assert!(!known(Api::OpenAi, "deepseek-chat"));
        assert!(!known(Api::OpenAi, "llama-3.3-70b-versatile"));
        assert!(known(Api::Anthropic, "claude-sonnet-4-5"));
        assert!(!known(Api::Anthropic, "claude-2.1"));
        assert!(known(Api::Ollama, "llava:13b"));
        assert!(known(Api::Ollama, "gemma3"));
        assert!(!known(Api::Ollama, "llama3.2"));
        assert!(accepts(Api::Ollama, "llama3.2", Some(true)));
        assert!(!accepts(Api::Anthropic, "claude-sonnet-4-5", Some(false)));
    }
}
