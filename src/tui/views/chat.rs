//! The chat pane.
