//! taco: a terminal cockpit for tool-using LLM agents. The library holds the core (providers,
//! orchestrator, tools, config, session, exec), the TUI, and `wiring`, which puts them
//! together for each command; the binary only parses the command line.

/// Like `eprintln!`, but a closed or broken stderr (a closed terminal, `2>&-` on a pipe) is
/// ignored instead of panicking: diagnostics must never be what brings taco down.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let line = format!($($arg)*);
        let _ = writeln!(std::io::stderr(), "{}", $crate::text::plain(&line));
    }};
}

pub mod acp;
pub mod audit;
pub mod checkpoint;
pub mod clock;
pub mod config;
pub mod conversation;
pub mod custom_commands;
pub mod engine;
pub mod event;
pub mod exec;
pub mod form;
pub mod history;
pub mod hooks;
pub mod images;
pub mod instructions;
pub mod logging;
pub mod mcp;
pub mod orchestrator;
pub mod otel;
pub mod private;
pub mod provider;
pub mod reaper;
pub mod recorder;
pub mod rewind;
pub mod run_model;
pub mod sandbox;
pub mod secrets;
pub mod session;
pub mod signals;
pub mod startup;
pub mod text;
pub mod todo;
pub mod tools;
pub mod tui;
pub mod vault;
pub mod wiring;
