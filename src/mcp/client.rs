//! taco as an MCP client: what it tells servers about itself, and what it does with what they
//! send unasked (a changed tool list, log messages, progress, questions for the user).

use std::sync::Arc;

use rmcp::ClientHandler;
#[allow(deprecated)]
use rmcp::model::LoggingMessageNotificationParam;
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    ErrorData, Implementation, ProgressNotificationParam, ProtocolVersion,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use tokio::sync::Notify;

/// The client side of one server's connection.
#[derive(Clone)]
pub struct Handler {
    server: Arc<str>,
    /// Woken when the server says its tool list changed.
    pub list_changed: Arc<Notify>,
}

impl Handler {
    /// A handler for the server called `server`.
    pub fn new(server: &str) -> Self {
        Self {
            server: Arc::from(server),
            list_changed: Arc::new(Notify::new()),
        }
    }
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        // The newest version with an `initialize` handshake: on later ones a server may not
        // ask the user anything and sends list changes only on a `listen` stream.
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("taco", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.notify_one();
    }

    // Deprecated by the protocol (SEP-2577), still sent by servers in use today.
    #[allow(deprecated)]
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        // Log messages go to the log only: a server must not write on the user's screen.
        let data = params.data.to_string();
        let data: String = data.chars().take(1_000).collect();
        tracing::info!(server = &*self.server, level = ?params.level, data, "mcp log");
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        tracing::debug!(
            server = &*self.server,
            progress = params.progress,
            "mcp progress"
        );
    }

    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        tracing::info!(server = &*self.server, "mcp elicitation declined");
        Ok(ElicitResult::new(ElicitationAction::Decline))
    }
}
