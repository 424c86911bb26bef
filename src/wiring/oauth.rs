//! `taco mcp login NAME` and `taco mcp logout NAME`: the OAuth login of one MCP server
//! without the TUI (a headless way: the URL is printed, taco waits for the browser's
//! redirect, saves the tokens, then starts the server once to show its tools).

use std::io::Write;
use std::sync::Arc;

use super::{Start, reaper_guarded, runtime, usage};
use crate::config;
use crate::exec::{EXIT_OK, EXIT_RUN_ERROR};
use crate::mcp::{McpHub, ServerSpec, StartContext, Status, oauth};
use crate::tools::ToolSettings;

/// The enabled server `name` of the config, or the exit code after saying why not.
fn server(start: &Start, name: &str) -> Result<(config::McpSetup, ServerSpec), i32> {
    let setup = config::mcp_servers(&start.overrides, &crate::vault::var).map_err(usage)?;
    let Some(spec) = setup.servers.iter().find(|s| s.name == name).cloned() else {
        let names: Vec<&str> = setup.servers.iter().map(|s| s.name.as_str()).collect();
        crate::say!(
            "taco: no enabled MCP server is named {name:?} (configured: {})",
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        );
        return Err(EXIT_RUN_ERROR);
    };
    Ok((setup, spec))
}

/// `taco mcp login NAME`.
pub fn mcp_login(start: &Start, name: &str) -> i32 {
    let runtime = match runtime(false) {
        Ok(runtime) => runtime,
        Err(code) => return code,
    };
    let (setup, spec) = match server(start, name) {
        Ok(found) => found,
        Err(code) => return code,
    };
    reaper_guarded(|| {
        runtime.block_on(async {
            let shown = |url: &str| {
                let minutes = oauth::LOGIN_WAIT.as_secs() / 60;
                let mut out = std::io::stdout().lock();
                // The URL alone on its line, to copy; the authorization server chose it.
                let _ = writeln!(
                    out,
                    "To log in to MCP server {name}, open this URL in a browser:\n\n{}\n\nWaiting up to {minutes} minutes for the browser to come back…",
                    crate::text::safe::terminal(url)
                );
                let _ = out.flush();
                oauth::browser::open(url);
            };
            let path = match oauth::login(&spec, shown).await {
                Ok(path) => path,
                Err(e) => {
                    crate::say!("taco: the login to MCP server {name} failed: {e}");
                    return EXIT_RUN_ERROR;
                }
            };
            println!(
                "Logged in to MCP server {name}; its tokens are saved in {} (readable by you only).",
                path.display()
            );
            // The proof: the server with its new tokens, and its tools.
            let hub = McpHub::start(
                vec![spec],
                StartContext {
                    workdir: setup.workdir,
                    settings: Arc::new(ToolSettings {
                        secrets: Arc::new(crate::vault::secrets(&ToolSettings::default().secret_vars)),
                        ..ToolSettings::default()
                    }),
                    notices: None,
                    max_tools: setup.max_tools,
                },
            );
            hub.settled().await;
            let view = hub.view();
            hub.shutdown();
            let text = crate::text::plain(&crate::mcp::describe_servers(&view)).into_owned();
            print!("{text}");
            let _ = std::io::stdout().flush();
            if view.iter().all(|s| s.status == Status::Ready) {
                EXIT_OK
            } else {
                EXIT_RUN_ERROR
            }
        })
    })
}

/// `taco mcp logout NAME`: removes the server's saved tokens.
pub fn mcp_logout(start: &Start, name: &str) -> i32 {
    let (_, spec) = match server(start, name) {
        Ok(found) => found,
        Err(code) => return code,
    };
    match oauth::logout(&spec) {
        Ok(true) => {
            println!("Logged out of MCP server {name}: its saved tokens are removed.");
            EXIT_OK
        }
        Ok(false) => {
            println!("MCP server {name} has no saved tokens.");
            EXIT_OK
        }
        Err(e) => {
            crate::say!("taco: {e}");
            EXIT_RUN_ERROR
        }
    }
}
