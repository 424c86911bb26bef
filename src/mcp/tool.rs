//! One MCP server tool as a taco tool: offered under its qualified name with the server's
//! description and input schema, its arguments checked against that schema before the call,
//! its result converted for the model (`result.rs`), its policy from the config.

use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use std::sync::{Arc, PoisonError};

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientRequest,
    ProgressToken, RequestId, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient};
use serde_json::Value;

use super::client::ProgressRoutes;
use super::config::ServerSpec;
use super::result::convert;
use crate::sandbox::Confinement;
use crate::tools::{Policy, Tool, ToolContext, ToolError, ToolReply, ToolSettings};

/// A tool whose input schema is larger than this is not offered: it would go with every
/// request to the model.
pub const MAX_SCHEMA_BYTES: usize = 64 * 1024;
/// Nesting deeper than this in an input schema: not offered (validators and providers
/// recurse on it).
pub const MAX_SCHEMA_DEPTH: usize = 32;
/// A description longer than this is cut (it goes with every request).
const MAX_DESCRIPTION: usize = 4_000;
/// Validation messages shown to the model at most.
const MAX_PROBLEMS: usize = 5;

/// What the server says about a tool's effects: hints, never trusted by default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Hints {
    /// `readOnlyHint`.
    pub read_only: Option<bool>,
    /// `destructiveHint`.
    pub destructive: Option<bool>,
}

/// A tool of an MCP server.
pub struct McpTool {
    name: String,
    remote: String,
    server: String,
    description: String,
    schema: Value,
    /// Compiled on the first call: a server may list thousands of tools never called.
    validator: std::sync::OnceLock<Option<jsonschema::Validator>>,
    /// Why it is not offered, when its schema passes a bound.
    unfit: Option<String>,
    policy: Policy,
    policy_note: String,
    hints: Hints,
    timeout: Duration,
    peer: Peer<RoleClient>,
    routes: ProgressRoutes,
    /// Its server runs in the sandbox (`sandbox = true`).
    sandboxed: bool,
}

impl McpTool {
    /// The tool `listed` (its `tools/list` entry as JSON) of `spec`'s server, offered as `name`.
    pub fn new(
        name: String,
        listed: &Value,
        spec: &ServerSpec,
        peer: Peer<RoleClient>,
        routes: ProgressRoutes,
    ) -> Self {
        let remote = listed["name"].as_str().unwrap_or_default().to_string();
        let mut schema = listed
            .get("inputSchema")
            .cloned()
            .filter(Value::is_object)
            .unwrap_or_else(|| serde_json::json!({"type": "object"}));
        if let Value::Object(map) = &mut schema {
            // Providers reject a few meta keys; the validator does not need them.
            map.remove("$schema");
            map.entry("properties")
                .or_insert_with(|| Value::Object(Default::default()));
        }
        let annotations = &listed["annotations"];
        let hints = Hints {
            read_only: annotations["readOnlyHint"].as_bool(),
            destructive: annotations["destructiveHint"].as_bool(),
        };
        let (policy, why) = match spec.tool_policies.get(&remote) {
            Some(policy) => (*policy, "tool_policies"),
            None if spec.trust_annotations && hints.read_only == Some(true) => {
                (Policy::Allow, "readOnlyHint, trusted")
            }
            None => (spec.policy, "server policy"),
        };
        // A tool its own server calls destructive never runs unasked, whatever allowed it.
        let (policy, why) = if hints.destructive == Some(true) && policy == Policy::Allow {
            (Policy::Ask, "destructiveHint: always asks")
        } else {
            (policy, why)
        };
        let word = match policy {
            Policy::Allow => "allow",
            Policy::Ask => "ask",
            Policy::Deny => "deny",
        };
        let description = listed["description"].as_str().unwrap_or("");
        let description = match description.char_indices().nth(MAX_DESCRIPTION) {
            Some((cut, _)) => format!("{}…", &description[..cut]),
            None => description.to_string(),
        };
        let unfit = unfit(&schema);
        Self {
            unfit,
            name,
            remote,
            server: spec.name.clone(),
            description,
            schema,
            validator: std::sync::OnceLock::new(),
            policy,
            policy_note: format!("{word} (MCP server {}, {why})", spec.name),
            hints,
            timeout: spec.tool_timeout,
            peer,
            routes,
            sandboxed: spec.sandbox,
        }
    }

    /// Why the tool cannot be offered (its schema is too large or too deep), if so.
    pub fn unfit(&self) -> Option<String> {
        self.unfit.clone()
    }

    /// The server it belongs to.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// The tool's name on its server.
    pub fn remote_name(&self) -> &str {
        &self.remote
    }

    /// The server's hints about the tool.
    pub fn hints(&self) -> Hints {
        self.hints
    }

    /// Whether its server's connection is still open (a crashed server's tools are gone
    /// at once, before the hub has heard how it ended).
    pub fn is_live(&self) -> bool {
        !self.peer.is_transport_closed()
    }
}

impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> Value {
        self.schema.clone()
    }

    fn validate(&self, arguments: &Value) -> Result<(), String> {
        let arguments = match arguments {
            Value::Null => &Value::Object(Default::default()),
            Value::Object(_) => arguments,
            Value::String(raw) => return Err(format!("the arguments are not valid JSON: {raw:?}")),
            other => return Err(format!("the arguments must be a JSON object, got {other}")),
        };
        let compiled = self
            .validator
            .get_or_init(|| jsonschema::validator_for(&self.schema).ok());
        let Some(validator) = compiled else {
            return Ok(());
        };
        let problems: Vec<String> = validator
            .iter_errors(arguments)
            .take(MAX_PROBLEMS)
            .map(|e| {
                let at = e.instance_path().to_string();
                if at.is_empty() {
                    e.to_string()
                } else {
                    format!("{at}: {e}")
                }
            })
            .collect();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("; "))
        }
    }

    fn default_policy(&self, _arguments: &Value, _settings: &ToolSettings) -> Policy {
        self.policy
    }

    fn policy_note(&self) -> &str {
        &self.policy_note
    }

    fn confinement(&self, _arguments: &Value, settings: &ToolSettings) -> Option<Confinement> {
        // The call runs in its server's process, confined as the server was started.
        self.sandboxed.then(|| settings.sandbox.confinement(false))
    }

    fn changes_workspace(&self, _arguments: &Value) -> bool {
        // A checkpoint costs little when nothing changed; only a tool marked read-only
        // goes without one.
        self.hints.read_only != Some(true)
    }

    fn approval_note(&self) -> Option<String> {
        let mut said = Vec::new();
        match self.hints.read_only {
            Some(true) => said.push("read-only"),
            Some(false) => said.push("may change things"),
            None => {}
        }
        if self.hints.destructive == Some(true) {
            said.push("destructive");
        }
        let hints = if said.is_empty() {
            String::new()
        } else {
            format!(
                " · the server says: {} (a hint, not checked)",
                said.join(", ")
            )
        };
        Some(format!(
            "MCP server {} · its tool '{}'{hints}",
            self.server, self.remote
        ))
    }

    fn call<'a>(
        &'a self,
        arguments: Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolReply, ToolError>> {
        async move {
            let mut params = CallToolRequestParams::new(self.remote.clone());
            params.arguments = match arguments {
                Value::Object(map) => Some(map),
                _ => None,
            };
            let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
            let handle = self
                .peer
                .send_cancellable_request(request, PeerRequestOptions::no_options())
                .await
                .map_err(|e| self.failed(&e))?;
            // Until it ends, its progress reaches the stack, and dropping it (a cancel, the
            // runner's timeout) tells the server `notifications/cancelled`.
            let mut guard =
                InFlight::new(self, handle.id.clone(), handle.progress_token.clone(), ctx);
            let answered = tokio::time::timeout(self.timeout, handle.await_response()).await;
            let result = match answered {
                Err(_) => {
                    return Err(ToolError::failed(format!(
                        "the MCP server {} did not answer within {} s (tool_timeout_secs)",
                        self.server,
                        self.timeout.as_secs()
                    )));
                }
                Ok(Err(error)) => return Err(self.failed(&error)),
                Ok(Ok(result)) => result,
            };
            guard.done();
            let ServerResult::CallToolResult(result) = result else {
                return Err(ToolError::failed(format!(
                    "the MCP server {} answered with something other than a tool result",
                    self.server
                )));
            };
            let json = serde_json::to_value(&result).map_err(|e| {
                ToolError::failed(format!(
                    "the MCP server {} sent a result taco cannot read: {e}",
                    self.server
                ))
            })?;
            convert(&json)
                .map(ToolReply::Done)
                .map_err(ToolError::Failed)
        }
        .boxed()
    }
}

impl McpTool {
    fn failed(&self, error: &dyn std::fmt::Display) -> ToolError {
        ToolError::failed(format!(
            "the MCP server {} failed the call: {error}",
            self.server
        ))
    }
}

/// Why a tool with this input schema is not offered, if so.
fn unfit(schema: &Value) -> Option<String> {
    let bytes = schema.to_string().len();
    if bytes > MAX_SCHEMA_BYTES {
        return Some(format!(
            "not offered: its input schema is {} KB (at most {} KB)",
            bytes / 1024,
            MAX_SCHEMA_BYTES / 1024
        ));
    }
    (depth(schema) > MAX_SCHEMA_DEPTH).then(|| {
        format!("not offered: its input schema nests deeper than {MAX_SCHEMA_DEPTH} levels")
    })
}

/// How deep `value` nests (a scalar is 0), without recursion: a hostile schema cannot
/// overflow the stack.
fn depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut pending = vec![(value, 0usize)];
    while let Some((value, at)) = pending.pop() {
        deepest = deepest.max(at);
        match value {
            Value::Array(items) => pending.extend(items.iter().map(|v| (v, at + 1))),
            Value::Object(map) => pending.extend(map.values().map(|v| (v, at + 1))),
            _ => {}
        }
    }
    deepest
}

/// A call in flight: its progress route, and the cancel notification if it is abandoned.
struct InFlight {
    peer: Peer<RoleClient>,
    routes: ProgressRoutes,
    token: ProgressToken,
    id: Option<RequestId>,
}

impl InFlight {
    fn new(tool: &McpTool, id: RequestId, token: ProgressToken, ctx: &ToolContext) -> Self {
        tool.routes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(token.clone(), ctx.clone());
        Self {
            peer: tool.peer.clone(),
            routes: Arc::clone(&tool.routes),
            token,
            id: Some(id),
        }
    }

    /// It was answered: nothing to cancel.
    fn done(&mut self) {
        self.id = None;
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.routes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.token);
        let Some(id) = self.id.take() else {
            return;
        };
        let peer = self.peer.clone();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let reason = Some("cancelled by the user".to_string());
                let _ = peer
                    .notify_cancelled(CancelledNotificationParam::new(Some(id), reason))
                    .await;
            });
        }
    }
}
