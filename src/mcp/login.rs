//! `/mcp login NAME` in the TUI: the hub logs in to one of its servers in the background
//! (`oauth::login`), shows the browser URL as the server's status (the chat says it, `/mcp`
//! lists it), tries to open a browser, and has its supervisor start the server again once the
//! tokens are saved.

use std::sync::Arc;

use super::config::Transport;
use super::{McpHub, Status, lock};

impl McpHub {
    /// Whether server `name` can be logged in to now; `Err` says why not.
    pub fn can_login(&self, name: &str) -> Result<(), String> {
        self.login_target(name).map(drop)
    }

    fn login_target(&self, name: &str) -> Result<usize, String> {
        let slots = lock(&self.slots);
        let Some(index) = slots.iter().position(|slot| slot.spec.name == name) else {
            let names: Vec<&str> = slots.iter().map(|s| s.spec.name.as_str()).collect();
            return Err(if names.is_empty() {
                "No MCP servers are configured.".to_string()
            } else {
                format!(
                    "No MCP server is named {name:?}; servers: {}.",
                    names.join(", ")
                )
            });
        };
        let slot = &slots[index];
        if !matches!(slot.spec.transport, Transport::Http { .. }) || slot.spec.oauth.off {
            return Err(format!(
                "MCP server {name} does not log in with OAuth (only a url server without a bearer token does)."
            ));
        }
        match slot.status {
            Status::Starting => Err(format!("MCP server {name} is starting; wait for it.")),
            Status::Authorizing(_) => Err(format!(
                "A login to MCP server {name} is waiting for the browser already (/mcp shows its URL)."
            )),
            Status::Ready => Err(format!("MCP server {name} is ready; it needs no login.")),
            Status::Failed(_) | Status::NeedsLogin(_) | Status::Withdrawn(_) | Status::Stopped => {
                Ok(index)
            }
        }
    }

    /// Logs in to server `name` in the background: its status shows the URL while the
    /// login waits, then the server starts again with its new tokens (or says why the login
    /// failed). `Err` says why no login was started.
    pub fn login(self: &Arc<Self>, name: &str) -> Result<(), String> {
        let index = self.login_target(name)?;
        let context = self.context.clone();
        let spec = lock(&self.slots)
            .get(index)
            .map(|slot| slot.spec.clone())
            .ok_or("the server is gone")?;
        let runtime = tokio::runtime::Handle::try_current().map_err(|e| e.to_string())?;
        self.set(index, Status::Starting, Vec::new(), &context);
        let hub = Arc::clone(self);
        runtime.spawn(async move {
            let shown = |url: &str| {
                hub.set(
                    index,
                    Status::Authorizing(url.to_string()),
                    Vec::new(),
                    &context,
                );
                super::oauth::browser::open(url);
            };
            let outcome = tokio::select! {
                _ = hub.stop.cancelled() => return,
                outcome = super::oauth::login(&spec, shown) => outcome,
            };
            match outcome {
                Ok(_) => {
                    tracing::info!(server = spec.name, "mcp oauth login done");
                    // Its supervisor waits for this: the server starts with its new tokens.
                    if let Err(why) = hub.restart(&spec.name) {
                        tracing::warn!(server = spec.name, why, "mcp restart after login");
                    }
                }
                Err(e) => {
                    let why = format!(
                        "MCP server {} ({}): the login failed: {e}. Try again with /mcp login {}.",
                        spec.name,
                        spec.describe(),
                        spec.name
                    );
                    hub.set(index, Status::NeedsLogin(why), Vec::new(), &context);
                }
            }
        });
        Ok(())
    }
}
