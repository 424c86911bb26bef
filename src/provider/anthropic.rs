//! Anthropic Messages provider.
