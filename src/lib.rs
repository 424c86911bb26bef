//! taco: a terminal cockpit for tool-using LLM agents. The library holds the core (providers,
//! orchestrator, tools, config, exec); the binary adds the CLI.

pub mod audit;
pub mod config;
pub mod conversation;
pub mod event;
pub mod exec;
pub mod orchestrator;
pub mod provider;
pub mod reaper;
pub mod recorder;
pub mod secrets;
pub mod session;
pub mod signals;
pub mod tools;
pub mod tui;
