//! taco as an MCP client: what it tells servers about itself, and what it does with what they
//! send unasked (a changed tool list, log messages, progress, questions for the user).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::ClientHandler;
#[allow(deprecated)]
use rmcp::model::LoggingMessageNotificationParam;
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationCapability, ErrorData, FormElicitationCapability, Implementation,
    ProgressNotificationParam, ProgressToken, ProtocolVersion,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use tokio::sync::Notify;

use crate::tools::{AskReply, ToolContext};

/// Where a call's progress notifications go: its progress token → the reporting context of
/// the call that sent it.
pub type ProgressRoutes = Arc<Mutex<HashMap<ProgressToken, ToolContext>>>;

/// The client side of one server's connection.
#[derive(Clone)]
pub struct Handler {
    server: Arc<str>,
    /// Woken when the server says its tool list changed.
    pub list_changed: Arc<Notify>,
    /// The calls in flight that listen for progress.
    pub routes: ProgressRoutes,
    /// How many of its log messages reach taco's log.
    log: Arc<super::log_gate::LogGate>,
    /// Woken when the server says its prompts or resources changed (`catalog.rs`).
    pub catalog: Arc<super::catalog::Changed>,
}

impl Handler {
    /// A handler for the server called `server`.
    pub fn new(server: &str) -> Self {
        Self {
            server: Arc::from(server),
            list_changed: Arc::new(Notify::new()),
            routes: ProgressRoutes::default(),
            log: Arc::default(),
            catalog: Arc::default(),
        }
    }
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        // The newest version with an `initialize` handshake: on later ones a server may not
        // ask the user anything and sends list changes only on a `listen` stream.
        let mut capabilities = ClientCapabilities::default();
        let mut elicitation = ElicitationCapability::new();
        // Forms only: taco fills them in its form overlay; it opens no URLs for a server.
        elicitation.form = Some(FormElicitationCapability::new());
        capabilities.elicitation = Some(elicitation);
        ClientConfig::new(
            capabilities,
            Implementation::new("taco", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.notify_one();
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.catalog.prompts.notify_one();
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.catalog.resources.notify_one();
    }

    // Deprecated by the protocol (SEP-2577), still sent by servers in use today.
    #[allow(deprecated)]
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        // Log messages go to the log only: a server must not write on the user's screen, nor
        // fill the disk.
        if !self.log.allows(&self.server, "log") {
            return;
        }
        let data = params.data.to_string();
        let data: String = data.chars().take(1_000).collect();
        tracing::info!(server = &*self.server, level = ?params.level, data, "mcp log");
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let route = self
            .routes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&params.progress_token)
            .cloned();
        match route {
            // A server's number could be anything: only finite values are shown.
            Some(ctx) if params.progress.is_finite() => ctx.report(
                params.progress,
                params.total.filter(|t| t.is_finite()),
                params.message,
            ),
            // Late (the call ended) or unknown: nothing is waiting for it.
            _ => tracing::debug!(server = &*self.server, "mcp progress for no call"),
        }
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } = request
        else {
            // A URL to open is not something taco does on a server's word.
            tracing::info!(server = &*self.server, "mcp url elicitation declined");
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        // The form belongs to the server's call in flight (stdio carries no link to it).
        let ctx = self
            .routes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .next()
            .cloned();
        let Some(ctx) = ctx else {
            tracing::info!(
                server = &*self.server,
                "mcp elicitation outside a call declined"
            );
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        // The server's order of fields (a `serde_json` map would sort them).
        let order = (requested_schema.property_order.clone())
            .unwrap_or_else(|| requested_schema.properties.keys().cloned().collect());
        let schema = serde_json::to_value(&requested_schema).unwrap_or_default();
        let server = format!("MCP server {}", self.server);
        Ok(match ctx.ask(&server, &message, schema, order).await {
            AskReply::Accept(content) => ElicitResult::new(ElicitationAction::Accept)
                .with_content(serde_json::Value::Object(content)),
            AskReply::Decline => ElicitResult::new(ElicitationAction::Decline),
            AskReply::Cancel => ElicitResult::new(ElicitationAction::Cancel),
        })
    }
}
