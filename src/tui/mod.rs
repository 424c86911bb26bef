//! The full-screen TUI (DESIGN §1, §7): chat, tool stack and trace timeline side by side.
//! It drives the same orchestrator task as everything else and never blocks on it.

pub mod markdown;
pub mod theme;
pub mod views;
