//! Native Ollama /api/chat provider.
