//! Context windows of the models people commonly use with the presets, so the context gauge
//! and compaction work without configuration. `context_window` in the config wins; an Ollama
//! model's window is asked of the server instead (it depends on how the server runs it).

/// Model id prefix → context window in tokens. The longest matching prefix wins.
const KNOWN: &[(&str, u64)] = &[
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-5", 400_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
    ("claude-", 200_000),
    ("deepseek-chat", 128_000),
    ("deepseek-reasoner", 128_000),
    ("gemini-1.5", 1_048_576),
    ("gemini-2", 1_048_576),
    ("llama-3.1", 131_072),
    ("llama-3.3", 131_072),
    ("llama-4", 131_072),
    ("mistral-large", 131_072),
    ("qwen-2.5", 131_072),
    ("moonshotai/kimi-k2", 131_072),
];

/// The known window of `model`, matched without a router's vendor prefix (`openai/gpt-4.1`).
pub fn known_window(model: &str) -> Option<u64> {
    let model = model.to_ascii_lowercase();
    let candidates = [model.as_str(), model.rsplit('/').next().unwrap_or(&model)];
    KNOWN
        .iter()
        .filter(|(prefix, _)| candidates.iter().any(|m| m.starts_with(prefix)))
        .max_by_key(|(prefix, _)| prefix.len())
        .map(|(_, window)| *window)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_default_models_have_windows() {
        assert_eq!(known_window("gpt-4.1-mini"), Some(1_047_576));
        assert_eq!(known_window("claude-sonnet-4-5"), Some(200_000));
        assert_eq!(known_window("deepseek-chat"), Some(128_000));
        assert_eq!(known_window("openai/gpt-4.1-mini"), Some(1_047_576));
        assert_eq!(known_window("llama-3.3-70b-versatile"), Some(131_072));
        assert_eq!(known_window("GPT-4o-2024-08-06"), Some(128_000));
        assert_eq!(known_window("my-local-finetune"), None);
        assert_eq!(known_window(""), None);
    }
}
