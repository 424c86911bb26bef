//! The tool-stack pane.
