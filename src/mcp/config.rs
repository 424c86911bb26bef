//! `[mcp.servers.NAME]`: which MCP servers to start and how far to trust them.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

use crate::tools::Policy;

/// Default time a server has to answer `initialize` and list its tools.
pub const DEFAULT_STARTUP: Duration = Duration::from_secs(10);
/// Default time one tool call may take.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(60);
/// MCP tools offered to the model at most, across servers (each adds its schema to every
/// request; providers cap a request's tools at 128).
pub const DEFAULT_MAX_TOOLS: usize = 100;
/// Times a server that stopped is started again, by default.
pub const DEFAULT_MAX_RESTARTS: u32 = 3;

/// `[mcp]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpConfig {
    /// The servers, by name.
    #[serde(default)]
    pub servers: BTreeMap<String, ServerEntry>,
    /// MCP tools offered to the model at most, across servers in config order (default 100);
    /// the rest are listed in `/mcp` as not offered.
    pub max_tools: Option<usize>,
    /// Let a server's `readOnlyHint` make its tools `allow` (default: hints never approve);
    /// a server's own `trust_annotations` overrides it.
    #[serde(default)]
    pub trust_read_only: bool,
}

impl McpConfig {
    /// MCP tools offered at most.
    pub fn max_tools(&self) -> usize {
        self.max_tools.unwrap_or(DEFAULT_MAX_TOOLS)
    }
}

/// What happens when a server stops on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Restart {
    /// Started again with backoff, `max_restarts` times at most.
    #[default]
    OnFailure,
    /// Left stopped (`/mcp restart NAME` starts it).
    Never,
}

/// `[mcp.servers.NAME]` as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerEntry {
    /// Program to start (stdio transport).
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Environment for it: a value `${NAME}` is taken from taco's environment (keys stay
    /// out of the config file); anything else is literal.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Its working directory (default: the workspace).
    pub cwd: Option<PathBuf>,
    /// Streamable HTTP endpoint (instead of `command`).
    pub url: Option<String>,
    /// HTTP headers; `${NAME}` values come from the environment.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Environment variable holding a bearer token for `url`.
    pub bearer_token_env: Option<String>,
    /// `"oauth"`: log in with OAuth (`taco mcp login NAME`); by default a `url` server that
    /// answers 401 with an OAuth challenge is treated so too.
    pub auth: Option<AuthMode>,
    /// A client id registered with the server's authorization server (default: taco
    /// registers itself dynamically).
    pub client_id: Option<String>,
    /// OAuth scopes to ask for (default: what the server's metadata names).
    pub scopes: Option<Vec<String>>,
    /// `false` keeps the server configured but not started.
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Seconds the server has to start and list its tools (default 10).
    pub startup_timeout_secs: Option<u64>,
    /// Seconds one tool call may take (default 60).
    pub tool_timeout_secs: Option<u64>,
    /// Only these tools are offered (default: all).
    pub enabled_tools: Option<Vec<String>>,
    /// These tools are never offered.
    #[serde(default)]
    pub disabled_tools: Vec<String>,
    /// Approval policy for its tools (default `ask`).
    pub policy: Option<Policy>,
    /// Per-tool policies, by the server's tool name.
    #[serde(default)]
    pub tool_policies: BTreeMap<String, Policy>,
    /// Let the server's `readOnlyHint` make a tool `allow` (default: `[mcp] trust_read_only`).
    pub trust_annotations: Option<bool>,
    /// When it stops on its own: `on-failure` (default) or `never`.
    #[serde(default)]
    pub restart: Restart,
    /// Restarts at most (default 3); `/mcp restart NAME` starts the count again.
    pub max_restarts: Option<u32>,
    /// Start the (stdio) server inside the sandbox shell commands run in (`[sandbox]`).
    #[serde(default)]
    pub sandbox: bool,
}

fn yes() -> bool {
    true
}

impl ServerEntry {
    /// An enabled entry with nothing set (a server another program hands taco, such as an
    /// ACP client's, starts from it).
    pub fn enabled() -> Self {
        Self {
            command: None,
            args: Vec::new(),
            env: BTreeMap::new(),
            cwd: None,
            url: None,
            headers: BTreeMap::new(),
            bearer_token_env: None,
            auth: None,
            client_id: None,
            scopes: None,
            enabled: true,
            startup_timeout_secs: None,
            tool_timeout_secs: None,
            enabled_tools: None,
            disabled_tools: Vec::new(),
            policy: None,
            tool_policies: BTreeMap::new(),
            trust_annotations: None,
            restart: Restart::default(),
            max_restarts: None,
            sandbox: false,
        }
    }
}

/// `auth` of a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AuthMode {
    /// OAuth 2.1 authorization code with PKCE (`crate::mcp::oauth`).
    Oauth,
}

/// How a `url` server is logged in to with OAuth.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OAuthSpec {
    /// `auth = "oauth"`: OAuth from the start, without waiting for a 401.
    pub required: bool,
    /// Off: a bearer token or an `Authorization` header is configured.
    pub off: bool,
    /// A pre-registered client id.
    pub client_id: Option<String>,
    /// Scopes to ask for (empty: the server's choice).
    pub scopes: Vec<String>,
    /// The file its tokens are kept in (`None`: there is no state dir).
    pub tokens: Option<PathBuf>,
}

/// How to reach a server.
#[derive(Debug, Clone, PartialEq)]
pub enum Transport {
    /// A child process speaking over stdin/stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Environment entries as configured (`${NAME}` resolved at start).
        env: BTreeMap<String, String>,
        /// Working directory.
        cwd: Option<PathBuf>,
    },
    /// Streamable HTTP.
    Http {
        /// The endpoint.
        url: String,
        /// Headers as configured (`${NAME}` resolved at start).
        headers: BTreeMap<String, String>,
        /// Variable with a bearer token.
        bearer_token_env: Option<String>,
    },
}

/// One server, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerSpec {
    /// Its name in the config.
    pub name: String,
    /// How to reach it.
    pub transport: Transport,
    /// Time to start and list tools.
    pub startup_timeout: Duration,
    /// Time per tool call.
    pub tool_timeout: Duration,
    /// Only these tools (by the server's names), when set.
    pub enabled_tools: Option<Vec<String>>,
    /// Never these.
    pub disabled_tools: Vec<String>,
    /// Default policy of its tools.
    pub policy: Policy,
    /// Policies by the server's tool name.
    pub tool_policies: BTreeMap<String, Policy>,
    /// Whether `readOnlyHint` may allow a tool.
    pub trust_annotations: bool,
    /// Whether the server process runs in the sandbox.
    pub sandbox: bool,
    /// What happens when it stops on its own.
    pub restart: Restart,
    /// Restarts at most.
    pub max_restarts: u32,
    /// OAuth for a `url` server.
    pub oauth: OAuthSpec,
}

impl ServerSpec {
    /// Whether the server's tool `name` is offered.
    pub fn offers(&self, name: &str) -> bool {
        self.enabled_tools
            .as_ref()
            .is_none_or(|only| only.iter().any(|t| t == name))
            && !self.disabled_tools.iter().any(|t| t == name)
    }

    /// A short description of how it is reached, for `/mcp` and errors.
    pub fn describe(&self) -> String {
        let mut shown = match &self.transport {
            Transport::Stdio { command, args, .. } => {
                let mut line = command.clone();
                for arg in args {
                    line.push(' ');
                    line.push_str(arg);
                }
                format!("stdio: {line}")
            }
            Transport::Http { url, .. } => format!("http: {url}"),
        };
        if self.sandbox {
            shown.push_str(", sandboxed");
        }
        shown
    }
}

/// The enabled servers of the config, checked; `Err` says what is wrong with which one.
pub fn servers(config: &McpConfig) -> Result<Vec<ServerSpec>, String> {
    let mut specs = Vec::new();
    for (name, entry) in &config.servers {
        if !entry.enabled {
            continue;
        }
        let at = format!("[mcp.servers.{name}]");
        if name.trim().is_empty() {
            return Err("[mcp.servers]: a server needs a name".into());
        }
        // A key on a command line is readable by every process of the machine
        // (/proc/PID/cmdline): `${NAME}` is expanded in `env` and `headers` only.
        if let Some(name) = entry.args.iter().find_map(|a| reference(a)) {
            return Err(format!(
                "{at} args: ${{{name}}} is not expanded on a command line, where any process could read it; pass it in env = {{ {name} = \"${{{name}}}\" }} instead"
            ));
        }
        let transport = match (&entry.command, &entry.url) {
            (Some(command), None) if !command.trim().is_empty() => Transport::Stdio {
                command: command.clone(),
                args: entry.args.clone(),
                env: entry.env.clone(),
                cwd: entry.cwd.clone(),
            },
            (None, Some(url)) => {
                match reqwest::Url::parse(url) {
                    Ok(u) if matches!(u.scheme(), "http" | "https") => {}
                    _ => return Err(format!("{at} url must be an http(s) URL, got {url:?}")),
                }
                Transport::Http {
                    url: url.clone(),
                    headers: entry.headers.clone(),
                    bearer_token_env: entry.bearer_token_env.clone(),
                }
            }
            (Some(_), Some(_)) => return Err(format!("{at} has both command and url: pick one")),
            _ => {
                return Err(format!(
                    "{at} needs a command (stdio) or a url (Streamable HTTP)"
                ));
            }
        };
        if entry.sandbox && matches!(transport, Transport::Http { .. }) {
            return Err(format!(
                "{at} sandbox = true applies to servers taco starts (command), not to a url"
            ));
        }
        let oauth = oauth_spec(name, entry, &at)?;
        let secs = |value: Option<u64>, default: Duration| {
            value.map_or(default, |s| Duration::from_secs(s.clamp(1, 86_400)))
        };
        specs.push(ServerSpec {
            name: name.clone(),
            transport,
            startup_timeout: secs(entry.startup_timeout_secs, DEFAULT_STARTUP),
            tool_timeout: secs(entry.tool_timeout_secs, DEFAULT_TOOL_TIMEOUT),
            enabled_tools: entry.enabled_tools.clone(),
            disabled_tools: entry.disabled_tools.clone(),
            policy: entry.policy.unwrap_or(Policy::Ask),
            tool_policies: entry.tool_policies.clone(),
            trust_annotations: entry.trust_annotations.unwrap_or(config.trust_read_only),
            sandbox: entry.sandbox,
            restart: entry.restart,
            max_restarts: entry.max_restarts.unwrap_or(DEFAULT_MAX_RESTARTS).min(100),
            oauth,
        });
    }
    Ok(specs)
}

/// The OAuth settings of `entry`, checked: they belong to a `url` server that has no other
/// credentials.
fn oauth_spec(name: &str, entry: &ServerEntry, at: &str) -> Result<OAuthSpec, String> {
    let required = entry.auth == Some(AuthMode::Oauth);
    let named = required || entry.client_id.is_some() || entry.scopes.is_some();
    if named && entry.url.is_none() {
        return Err(format!(
            "{at} auth, client_id and scopes apply to a url server, not to a command"
        ));
    }
    let bearer = entry.bearer_token_env.is_some()
        || (entry.headers.keys()).any(|k| k.eq_ignore_ascii_case("authorization"));
    if named && bearer {
        return Err(format!(
            "{at} has both OAuth settings and a bearer token (bearer_token_env or an Authorization header): pick one"
        ));
    }
    Ok(OAuthSpec {
        required,
        off: bearer || entry.url.is_none(),
        client_id: entry.client_id.clone(),
        scopes: entry.scopes.clone().unwrap_or_default(),
        tokens: crate::mcp::oauth::token_file(name),
    })
}

/// The variable a configured value `${NAME}` names, if it is one.
pub fn reference(value: &str) -> Option<&str> {
    value.strip_prefix("${").and_then(|v| v.strip_suffix('}'))
}

/// A configured value with `${NAME}` taken from the environment; `Err` names the variable
/// that is not set (never its value).
pub fn expand(value: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    match reference(value) {
        Some(name) => {
            env(name).ok_or_else(|| format!("the environment variable {name} is not set"))
        }
        None => Ok(value.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<ServerSpec>, String> {
        let config: McpConfig = toml::from_str(text).map_err(|e| e.to_string())?;
        servers(&config)
    }

    #[test]
    fn stdio_and_http_servers_with_their_settings() {
        let specs = parse(
            r#"
            [servers.fs]
            command = "npx"
            args = ["-y", "server"]
            env = { TOKEN = "${GH}" }
            tool_timeout_secs = 5
            disabled_tools = ["write_file"]
            tool_policies = { read_file = "allow" }
            [servers.web]
            url = "http://127.0.0.1:9/mcp"
            bearer_token_env = "WEB_TOKEN"
            policy = "deny"
            [servers.off]
            command = "x"
            enabled = false
            "#,
        )
        .unwrap();
        assert_eq!(specs.len(), 2, "a disabled server is not started");
        let fs = &specs[0];
        assert_eq!(fs.describe(), "stdio: npx -y server");
        assert_eq!(fs.tool_timeout, Duration::from_secs(5));
        assert_eq!(fs.startup_timeout, DEFAULT_STARTUP);
        assert_eq!(fs.policy, Policy::Ask);
        assert!(fs.offers("read_file") && !fs.offers("write_file"));
        assert_eq!(specs[1].policy, Policy::Deny);
        assert!(matches!(specs[1].transport, Transport::Http { .. }));
    }

    #[test]
    fn a_server_needs_exactly_one_way_in() {
        for (text, says) in [
            ("[servers.a]\nargs = []", "needs a command"),
            ("[servers.a]\ncommand = \"x\"\nurl = \"http://h\"", "both"),
            ("[servers.a]\nurl = \"file:///etc\"", "http(s)"),
            ("[servers.a]\ncommand = \"x\"\nbogus = 1", "unknown field"),
            (
                "[servers.a]\nurl = \"http://h\"\nsandbox = true",
                "not to a url",
            ),
            (
                "[servers.a]\ncommand = \"x\"\nargs = [\"--token\", \"${GH_TOKEN}\"]",
                "pass it in env = { GH_TOKEN = \"${GH_TOKEN}\" }",
            ),
        ] {
            let error = parse(text).unwrap_err();
            assert!(error.contains(says), "{text}: {error}");
        }
    }

    #[test]
    fn oauth_settings_belong_to_a_url_server_without_another_credential() {
        let specs = parse(
            "[servers.a]\nurl = \"https://h/mcp\"\nauth = \"oauth\"\nclient_id = \"c1\"\nscopes = [\"mcp\"]\n[servers.b]\nurl = \"https://h/mcp\"\n[servers.c]\nurl = \"https://h/mcp\"\nbearer_token_env = \"T\"\n[servers.d]\ncommand = \"x\"",
        )
        .unwrap();
        let a = &specs[0].oauth;
        assert!(a.required && !a.off);
        assert_eq!(
            (a.client_id.as_deref(), a.scopes.as_slice()),
            (Some("c1"), &["mcp".to_string()][..])
        );
        let b = &specs[1].oauth;
        assert!(
            !b.required && !b.off,
            "a url server may turn out to need a login"
        );
        assert!(specs[2].oauth.off && specs[3].oauth.off);
        for (text, says) in [
            (
                "[servers.a]\ncommand = \"x\"\nauth = \"oauth\"",
                "apply to a url server",
            ),
            (
                "[servers.a]\nurl = \"https://h\"\nauth = \"oauth\"\nbearer_token_env = \"T\"",
                "pick one",
            ),
            (
                "[servers.a]\nurl = \"https://h\"\nscopes = [\"s\"]\nheaders = { Authorization = \"x\" }",
                "pick one",
            ),
            (
                "[servers.a]\nurl = \"https://h\"\nauth = \"basic\"",
                "unknown variant",
            ),
        ] {
            let error = parse(text).unwrap_err();
            assert!(error.contains(says), "{text}: {error}");
        }
    }

    #[test]
    fn only_named_variables_come_from_the_environment() {
        let env = |name: &str| (name == "SET").then(|| "v".to_string());
        assert_eq!(expand("${SET}", &env).unwrap(), "v");
        assert_eq!(expand("literal", &env).unwrap(), "literal");
        assert_eq!(expand("$SET", &env).unwrap(), "$SET");
        let error = expand("${UNSET}", &env).unwrap_err();
        assert!(error.contains("UNSET"), "{error}");
    }
}
