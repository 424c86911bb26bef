//! Runs a turn's tool calls.
