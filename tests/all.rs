//! Every integration test, in one binary (issue 27.8, as codex and helix do): one link
//! instead of one per file, and one pool of test threads for all of them. Each file under
//! `tests/` is a module here; `support` is the shared harness (the TUI's included), `meter`
//! counts allocations (one global allocator for the binary), `mutate` makes hostile input.
//! Cargo finds no other test target (`autotests = false`): a file left out of this list would
//! never run, so `every_test_file_is_a_module` fails when one is.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

mod meter;
mod mutate;
mod support;

mod acp_agent;
mod acp_client;
mod acp_client_e2e;
mod acp_client_terminals;
mod anthropic_wire;
mod audit;
mod batch_approval;
mod cancel_call;
mod changed_while_open;
mod checkpoint;
mod commands;
mod commands_e2e;
mod compaction;
mod config;
mod confinement;
mod consent_e2e;
mod context_e2e;
mod context_window;
mod cost_budget;
mod create_code;
mod create_code_e2e;
mod decoder_limits;
mod exec;
mod exec_tty;
mod exit_visible;
mod forms_e2e;
mod fuzz_decoders;
mod fuzz_loaders;
mod honest_errors;
mod hooks;
mod hooks_tui;
mod hostile_stream;
mod images;
mod key_chain;
mod limits;
mod live_spans_e2e;
mod loops;
mod mcp;
mod mcp_everything;
mod mcp_fixture;
mod mcp_forms;
mod mcp_hostile;
mod mcp_oauth;
mod mcp_progress_e2e;
mod mcp_prompts;
mod mcp_restart;
mod models_list;
mod ollama_wire;
mod openai_wire;
mod orchestrator;
mod otel;
mod panes_agree;
mod plain_text;
mod plan_mode;
mod private_files;
mod resume_last;
mod resume_repair;
mod resume_tail;
mod revoke;
mod rewind;
mod rewind_task;
mod rewind_tmux;
mod rewind_tui;
mod run_model;
mod sandbox;
mod sandbox_exec;
mod sandbox_metadata;
mod secrets;
mod session;
mod session_once;
mod sessions;
mod shell_grants;
mod signals;
mod switch;
mod terminal_safe;
mod todo;
mod tool_caps;
mod tool_process;
mod tool_stack;
mod tools_builtin;
mod truncation;
mod tui_app;
mod tui_batch;
mod tui_composer;
mod tui_e2e;
mod tui_fuzz;
mod tui_guard;
mod tui_history;
mod tui_instruments;
mod tui_mouse;
mod tui_narrow;
mod tui_sandbox;
mod tui_stack;
mod tui_switch;
mod tui_switch_e2e;
mod tui_terminal;
mod tui_trim;
mod web_fetch;

/// A file under `tests/` that is not declared above would silently never run.
#[test]
fn every_test_file_is_a_module() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let listed = include_str!("all.rs");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        if path.extension().is_some_and(|e| e == "rs")
            && stem != "all"
            && !listed.lines().any(|l| l == format!("mod {stem};"))
        {
            missing.push(stem.to_string());
        }
    }
    assert!(
        missing.is_empty(),
        "add `mod NAME;` to tests/all.rs for: {missing:?}"
    );
}
