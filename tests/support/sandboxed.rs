//! Helpers for tests of the sandbox and of what tool processes can reach: a tool context on
//! a given sandbox, and the taco binary run as another user.

use std::path::Path;
use std::sync::Arc;

use taco::sandbox::Sandbox;
use taco::tools::{ToolContext, ToolSettings};
use tokio_util::sync::CancellationToken;

/// A tool context in `ws` with default settings but `sandbox`.
pub fn context(ws: &Path, sandbox: Sandbox) -> ToolContext {
    ToolContext {
        workdir: ws.to_path_buf(),
        settings: Arc::new(ToolSettings {
            sandbox,
            ..ToolSettings::default()
        }),
        cancel: CancellationToken::new(),
        call: String::new(),
        progress: None,
        seen: None,
        trace: None,
    }
}

/// The taco binary, run as `uid` (through `setpriv`, groups cleared) when given.
pub fn taco_as(uid: Option<u32>) -> std::process::Command {
    match uid {
        Some(uid) => {
            let mut c = std::process::Command::new("setpriv");
            c.arg(format!("--reuid={uid}"))
                .arg(format!("--regid={uid}"))
                .arg("--clear-groups")
                .arg(env!("CARGO_BIN_EXE_taco"));
            c
        }
        None => std::process::Command::new(env!("CARGO_BIN_EXE_taco")),
    }
}
