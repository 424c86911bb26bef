//! Tools the model can call: the [`Tool`] trait, typed tools with schemars schemas, the
//! registry, the concurrent runner and the built-ins.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::conversation::ToolSpec;
use crate::sandbox::Confinement;
use crate::secrets::Secrets;

pub(crate) mod budget;
pub mod buffers;
pub mod builtin;
mod context;
pub use context::{Ask, AskReply, Generate, Progress, ToolContext};
pub mod diff;
pub mod outcome;
pub mod runner;
pub mod seen;
pub mod workspace;

/// What happens when the model calls a tool (DESIGN §4.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Policy {
    /// Run without asking.
    Allow,
    /// Ask the user first.
    Ask,
    /// Never run; the model is told it was denied.
    Deny,
}

/// Limits and settings every tool call sees.
#[derive(Debug, Clone)]
pub struct ToolSettings {
    /// Longest a single tool call may run (the runner's timeout).
    pub timeout: Duration,
    /// Default timeout of a `shell` command when the model gives none.
    pub shell_timeout: Duration,
    /// Cap on a tool's output text (shell output, file reads, fetched pages).
    pub max_output_bytes: usize,
    /// Cap on the bytes `web_fetch` downloads.
    pub fetch_max_bytes: usize,
    /// Hosts `web_fetch` may GET without asking.
    pub allow_hosts: Vec<String>,
    /// Variables holding provider keys (never inherited by tool processes).
    pub secret_vars: Vec<String>,
    /// Secret-looking variables tool processes may inherit all the same.
    pub env_passthrough: Vec<String>,
    /// Shell command prefixes that run without asking (`[tools.shell] allow`).
    pub shell_allow: Vec<String>,
    /// Shell command prefixes that are always asked about, over `shell_allow`.
    pub shell_ask: Vec<String>,
    /// Known key values, redacted from every tool result.
    pub secrets: Arc<Secrets>,
    /// Redirects one `web_fetch` follows at most.
    pub max_redirects: usize,
    /// Loopback, private and other special addresses `web_fetch` may connect to (hosts,
    /// addresses or ranges, optionally with a port); all others of those are refused.
    pub allow_private: Vec<String>,
    /// The program that converts HTML in a child process (the taco binary, run with
    /// `builtin::HTML_HELPER_ARG`); `None` converts on a thread of this process.
    pub html_helper: Option<PathBuf>,
    /// The sandbox shell commands (and MCP servers that ask) run in.
    pub sandbox: crate::sandbox::Sandbox,
    /// Most calls of process-starting tools (`shell`) running at once in a session
    /// (`[tools] max_parallel`); the rest are queued.
    pub max_parallel: usize,
    /// The trace taco runs in; whether tool processes get a `TRACEPARENT` (issue 31).
    pub trace: crate::otel::TraceSetup,
    /// The editor's copy of files `read_file` reads first (an ACP client's), if any.
    pub buffers: buffers::EditorBuffers,
}

impl Default for ToolSettings {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(300),
            shell_timeout: Duration::from_secs(120),
            max_output_bytes: 64 * 1024,
            fetch_max_bytes: 2 * 1024 * 1024,
            allow_hosts: Vec::new(),
            secret_vars: Vec::new(),
            env_passthrough: Vec::new(),
            shell_allow: Vec::new(),
            shell_ask: Vec::new(),
            secrets: Arc::default(),
            max_redirects: 5,
            allow_private: Vec::new(),
            html_helper: None,
            sandbox: Default::default(),
            max_parallel: runner::DEFAULT_MAX_PARALLEL,
            trace: Default::default(),
            buffers: Default::default(),
        }
    }
}

impl ToolSettings {
    /// Sets the environment of a tool process: taco's, which holds no withheld secret
    /// (`vault`), less any secret variable still in it (one a library user never sealed),
    /// plus the `env_passthrough` variables with their values. A provider key variable is
    /// never passed through: no process taco starts holds a provider key.
    pub fn child_env(&self, command: &mut tokio::process::Command) {
        let passthrough: Vec<String> = (self.env_passthrough.iter())
            .filter(|name| !self.secret_vars.contains(name))
            .cloned()
            .collect();
        let vars: Vec<(std::ffi::OsString, std::ffi::OsString)> = std::env::vars_os().collect();
        let pairs = vars.iter().map(|(n, v)| (n.as_os_str(), v.as_os_str()));
        for name in crate::secrets::scrubbed_names(pairs, &self.secret_vars, &passthrough) {
            command.env_remove(name);
        }
        for name in &passthrough {
            if let Some(value) = crate::vault::withheld_value(name) {
                command.env(name, value);
            }
        }
    }
}

/// Why a tool call failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ToolError {
    /// The arguments do not match the tool's schema; the model gets guidance and may retry.
    #[error("invalid arguments: {0}")]
    InvalidArguments(String),
    /// The tool ran and failed (or refused, e.g. a path outside the workspace).
    #[error("{0}")]
    Failed(String),
    /// A sandboxed command failed the way the sandbox makes commands fail: its result, with
    /// a note on how the model may ask to run it outside the sandbox.
    #[error("the sandbox refused what the command tried")]
    SandboxDenied(Box<Value>),
    /// A command ran to its end and exited non-zero (or was killed by a signal): its whole
    /// result, which the model gets as it would a success.
    #[error("the command exited non-zero")]
    ExitNonzero(Box<Value>),
}

impl ToolError {
    /// Shorthand for a failure with a message.
    pub fn failed(message: impl Into<String>) -> Self {
        Self::Failed(message.into())
    }
}

/// What a tool call produced.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolReply {
    /// The result.
    Done(Value),
    /// Make these calls first (they are pushed above this tool on the stack, approved and run),
    /// then resume with `then` and their results (spec/004: `save_file` after `create_code`).
    NeedsFirst {
        /// The calls, run as one batch.
        calls: Vec<NeededCall>,
        /// Whatever the tool wants back when it resumes.
        then: Value,
    },
}

/// A call a tool needs made before it can finish.
#[derive(Debug, Clone, PartialEq)]
pub struct NeededCall {
    /// Tool name.
    pub name: String,
    /// Arguments.
    pub arguments: Value,
}

/// A tool the model can call.
pub trait Tool: Send + Sync {
    /// The name the model calls it by.
    fn name(&self) -> &str;
    /// What it does, for the model and for `/tool NAME`.
    fn description(&self) -> &str;
    /// JSON Schema of its arguments object.
    fn parameters(&self) -> Value;
    /// Checks arguments against the schema before the call; `Err` explains what is wrong.
    fn validate(&self, arguments: &Value) -> Result<(), String>;
    /// Policy when the config says nothing about this tool.
    fn default_policy(&self, _arguments: &Value, _settings: &ToolSettings) -> Policy {
        Policy::Allow
    }
    /// The default policy in words, for `/tools` (e.g. "ask", "allow for allow_hosts, else ask").
    fn policy_note(&self) -> &str {
        "allow"
    }
    /// A line for the approval dialog besides the arguments (where the tool comes from, what
    /// it claims about itself).
    fn approval_note(&self) -> Option<String> {
        None
    }
    /// Whether and how the call would run in the sandbox; `None` for tools that start no
    /// process the sandbox covers. An unsandboxed or unconfinable call is asked about every
    /// time (see `approval::Policies::policy_for`).
    fn confinement(&self, _arguments: &Value, _settings: &ToolSettings) -> Option<Confinement> {
        None
    }
    /// What the call would change, as a diff (see `tools::diff`) with the state of the file
    /// it was computed from, before it is approved; `None` when the tool changes no file or
    /// the change cannot be previewed. The batch hands the state back to the call
    /// (`ToolContext::seen`), which then changes the file only if it is still in that state.
    fn preview(&self, _arguments: &Value, _workdir: &std::path::Path) -> Option<diff::Preview> {
        None
    }
    /// How to use the tool well (spec/004 `get_usage_instructions`): shown by `/tool NAME` and
    /// given to the model the first time the tool is used in a conversation.
    fn usage_instructions(&self) -> Option<&str> {
        None
    }
    /// Whether a call starts a process of its own (`shell`): it then takes one of the
    /// session's `[tools] max_parallel` slots, or waits queued for one.
    fn runs_process(&self) -> bool {
        false
    }
    /// Whether a call may change the workspace's files: a checkpoint is taken before it
    /// (rewind). Tools that only read say no; a tool that cannot know says yes.
    fn changes_workspace(&self, _arguments: &Value) -> bool {
        false
    }
    /// Whether it edits files inside the workspace and nothing else (`write_file`,
    /// `edit_file`): auto-edit mode approves it.
    fn edits_files(&self) -> bool {
        false
    }
    /// Runs the tool. The result is sent to the model as JSON; a tool that needs other calls
    /// made first says so and is resumed with their results.
    fn call<'a>(
        &'a self,
        arguments: Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolReply, ToolError>>;

    /// Goes on after the calls a [`ToolReply::NeedsFirst`] asked for, with their results in
    /// order (`Err` holds a failed call's message). Only tools that ask need this.
    fn resume<'a>(
        &'a self,
        _then: Value,
        _results: Vec<Result<Value, String>>,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolReply, ToolError>> {
        let name = self.name().to_string();
        async move { Err(ToolError::Failed(format!("{name} cannot be resumed"))) }.boxed()
    }

    /// The tool as offered to the model.
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name().to_string(),
            description: self.description().to_string(),
            parameters: self.parameters(),
        }
    }
}

/// A tool whose parameters are a Rust type; its schema and validation come from that type.
pub trait TypedTool: Send + Sync + 'static {
    /// The arguments, deserialized from the model's JSON.
    type Params: DeserializeOwned + JsonSchema + Send + 'static;
    /// Tool name.
    const NAME: &'static str;
    /// What it does.
    const DESCRIPTION: &'static str;
    /// [`TypedTool::default_policy`] in words, for `/tools`.
    const POLICY_NOTE: &'static str = "allow";
    /// See [`Tool::usage_instructions`].
    const USAGE: Option<&'static str> = None;
    /// See [`Tool::runs_process`].
    const RUNS_PROCESS: bool = false;
    /// See [`Tool::changes_workspace`].
    const CHANGES_WORKSPACE: bool = false;
    /// See [`Tool::edits_files`].
    const EDITS_FILES: bool = false;
    /// Policy when the config says nothing (DESIGN §4.6).
    fn default_policy(&self, _params: &Self::Params, _settings: &ToolSettings) -> Policy {
        Policy::Allow
    }
    /// See [`Tool::preview`].
    fn preview(&self, _params: &Self::Params, _workdir: &std::path::Path) -> Option<diff::Preview> {
        None
    }
    /// See [`Tool::confinement`].
    fn confinement(&self, _params: &Self::Params, _settings: &ToolSettings) -> Option<Confinement> {
        None
    }
    /// Runs the tool.
    fn run(
        &self,
        params: Self::Params,
        ctx: &ToolContext,
    ) -> impl Future<Output = Result<Value, ToolError>> + Send;
}

impl<T: TypedTool> Tool for T {
    fn name(&self) -> &str {
        T::NAME
    }

    fn description(&self) -> &str {
        T::DESCRIPTION
    }

    fn parameters(&self) -> Value {
        schema_of::<T::Params>()
    }

    fn validate(&self, arguments: &Value) -> Result<(), String> {
        parse_params::<T::Params>(arguments).map(drop)
    }

    fn default_policy(&self, arguments: &Value, settings: &ToolSettings) -> Policy {
        match parse_params::<T::Params>(arguments) {
            Ok(params) => TypedTool::default_policy(self, &params, settings),
            Err(_) => Policy::Allow,
        }
    }

    fn policy_note(&self) -> &str {
        T::POLICY_NOTE
    }

    fn preview(&self, arguments: &Value, workdir: &std::path::Path) -> Option<diff::Preview> {
        let params = parse_params::<T::Params>(arguments).ok()?;
        TypedTool::preview(self, &params, workdir)
    }

    fn usage_instructions(&self) -> Option<&str> {
        T::USAGE
    }

    fn runs_process(&self) -> bool {
        T::RUNS_PROCESS
    }

    fn changes_workspace(&self, _arguments: &Value) -> bool {
        T::CHANGES_WORKSPACE
    }

    fn edits_files(&self) -> bool {
        T::EDITS_FILES
    }

    fn confinement(&self, arguments: &Value, settings: &ToolSettings) -> Option<Confinement> {
        let params = parse_params::<T::Params>(arguments).ok()?;
        TypedTool::confinement(self, &params, settings)
    }

    fn call<'a>(
        &'a self,
        arguments: Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolReply, ToolError>> {
        async move {
            let params =
                parse_params::<T::Params>(&arguments).map_err(ToolError::InvalidArguments)?;
            self.run(params, ctx).await.map(ToolReply::Done)
        }
        .boxed()
    }
}

/// Deserializes arguments into a parameter type, with a message fit for the model.
pub(crate) fn parse_params<P: DeserializeOwned>(arguments: &Value) -> Result<P, String> {
    match arguments {
        Value::String(raw) => Err(format!("the arguments are not valid JSON: {raw:?}")),
        Value::Object(_) => P::deserialize(arguments).map_err(|e| e.to_string()),
        // Some models send `null` for "no arguments"; treat it as an empty object.
        Value::Null => {
            P::deserialize(&Value::Object(Default::default())).map_err(|e| e.to_string())
        }
        other => Err(format!("the arguments must be a JSON object, got {other}")),
    }
}

/// The JSON Schema of a parameter type, inlined (no `$defs`) and without meta keys.
pub fn schema_of<P: JsonSchema>() -> Value {
    let generator = schemars::generate::SchemaSettings::draft07()
        .with(|s| s.inline_subschemas = true)
        .into_generator();
    let schema = generator.into_root_schema_for::<P>();
    let mut value = schema.to_value();
    if let Value::Object(map) = &mut value {
        map.remove("$schema");
        map.remove("title");
        map.entry("properties")
            .or_insert_with(|| Value::Object(Default::default()));
    }
    value
}

/// Tools that come and go while taco runs (an MCP server's, once it has started).
pub trait ToolSource: Send + Sync {
    /// The tools available now, in a stable order.
    fn tools(&self) -> Vec<Arc<dyn Tool>>;
}

/// The tools of a run, by name: the registered ones in registration order, then those of
/// each source as they are now (a registered name wins over a source's).
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: Vec<Arc<dyn Tool>>,
    by_name: HashMap<String, usize>,
    sources: Vec<Arc<dyn ToolSource>>,
}

impl ToolRegistry {
    /// An empty registry (the model is offered no tools).
    pub fn new() -> Self {
        Self::default()
    }

    /// The built-in tools (DESIGN §2 `tools/builtin`).
    pub fn builtins() -> Self {
        let mut registry = Self::new();
        for tool in builtin::all() {
            registry.register(tool);
        }
        registry
    }

    /// Adds a tool; a tool with the same name is replaced.
    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        let name = tool.name().to_string();
        match self.by_name.get(&name) {
            Some(&i) => self.tools[i] = tool,
            None => {
                self.by_name.insert(name, self.tools.len());
                self.tools.push(tool);
            }
        }
    }

    /// Adds a source of tools that change while taco runs.
    pub fn add_source(&mut self, source: Arc<dyn ToolSource>) {
        self.sources.push(source);
    }

    /// Looks a tool up by name.
    pub fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        if let Some(&i) = self.by_name.get(name) {
            return Some(Arc::clone(&self.tools[i]));
        }
        self.sources
            .iter()
            .flat_map(|s| s.tools())
            .find(|t| t.name() == name)
    }

    /// All tools now, registered ones first.
    pub fn all(&self) -> Vec<Arc<dyn Tool>> {
        let mut all = self.tools.clone();
        for tool in self.sources.iter().flat_map(|s| s.tools()) {
            if !self.by_name.contains_key(tool.name()) {
                all.push(tool);
            }
        }
        all
    }

    /// Whether no tool is available now.
    pub fn is_empty(&self) -> bool {
        self.all().is_empty()
    }

    /// The specs offered to the model.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.all().iter().map(|t| t.spec()).collect()
    }
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let all = self.all();
        f.debug_list()
            .entries(all.iter().map(|t| t.name()))
            .finish()
    }
}
