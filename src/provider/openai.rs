//! OpenAI-compatible Chat Completions provider.
