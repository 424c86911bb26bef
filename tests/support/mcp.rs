//! MCP servers for tests: the fixture (`examples/mcp_fixture.rs`, built by `cargo test`) and the
//! published filesystem server that `.ci/run` installs from the npm registry.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::{Child, Command};

/// The environment variable `.ci/run` sets to the filesystem server's executable.
pub const FS_SERVER_ENV: &str = "TACO_MCP_FS_SERVER";

/// The fixture server's executable (next to the `taco` binary, under `examples/`).
pub fn fixture() -> PathBuf {
    let taco = Path::new(env!("CARGO_BIN_EXE_taco"));
    let dir = taco.parent().expect("the taco binary has a directory");
    let path = dir
        .join("examples")
        .join(format!("mcp_fixture{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.is_file(),
        "the MCP fixture server is not built at {}: plain `cargo test` builds it; \
         for a targeted run (`cargo test --test NAME` builds no examples), \
         `cargo build --example mcp_fixture` first",
        path.display()
    );
    // A targeted run does not rebuild examples: refuse a binary older than its source.
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/mcp_fixture.rs");
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    if let (Some(built), Some(edited)) = (modified(&path), modified(&source)) {
        assert!(
            built >= edited,
            "the MCP fixture server at {} is older than examples/mcp_fixture.rs: \
             run `cargo build --example mcp_fixture` (plain `cargo test` rebuilds it)",
            path.display()
        );
    }
    path
}

/// Starts `mcp_fixture --http` and returns it with its URL (`http://127.0.0.1:PORT/mcp`).
///
/// The child is killed when dropped; its stdin is held open (EOF on it stops the server).
pub async fn fixture_http() -> (Child, String) {
    fixture_http_with(&[]).await
}

/// Like [`fixture_http`], with extra arguments (e.g. `--hang-init`, `--page-size 2`).
pub async fn fixture_http_with(args: &[&str]) -> (Child, String) {
    let mut child = Command::new(fixture())
        .arg("--http")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn the MCP fixture server");
    let stdout = child.stdout.take().expect("fixture stdout");
    let mut line = String::new();
    let read = tokio::time::timeout(
        Duration::from_secs(10),
        BufReader::new(stdout).read_line(&mut line),
    )
    .await;
    let url = line.trim().to_string();
    if !matches!(read, Ok(Ok(n)) if n > 0) || !url.starts_with("http://127.0.0.1:") {
        let _ = child.start_kill();
        let mut stderr = String::new();
        if let Some(mut pipe) = child.stderr.take() {
            let _ = tokio::time::timeout(Duration::from_secs(2), pipe.read_to_string(&mut stderr))
                .await;
        }
        panic!("the MCP fixture printed no URL within 10 s (got {line:?}); stderr: {stderr}");
    }
    (child, url)
}

/// The published filesystem server's executable: `$TACO_MCP_FS_SERVER`, or where `.ci/run`
/// installs it (`$HOME/.cache/taco-ci/mcp`); `None` when it is not there.
pub fn filesystem_server() -> Option<PathBuf> {
    let path = match std::env::var_os(FS_SERVER_ENV) {
        Some(path) if !path.is_empty() => PathBuf::from(path),
        _ => default_filesystem_server()?,
    };
    path.is_file().then_some(path)
}

/// The filesystem server for a test that needs it. Under CI (`CI` or `TACO_MCP_FS_SERVER` set)
/// a missing server fails the test; elsewhere the test is skipped with a note (`None`).
pub fn require_filesystem_server() -> Option<PathBuf> {
    if let Some(path) = filesystem_server() {
        return Some(path);
    }
    let configured = std::env::var(FS_SERVER_ENV).ok().filter(|v| !v.is_empty());
    let under_ci = super::needs::under_ci();
    let expected = configured.clone().unwrap_or_else(|| {
        default_filesystem_server()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "$HOME/.cache/taco-ci/mcp/node_modules/.bin/...".into())
    });
    assert!(
        configured.is_none() && !under_ci,
        "the MCP filesystem server (@modelcontextprotocol/server-filesystem) is missing at \
         {expected}: `.ci/run` installs it with npm; run it, or point {FS_SERVER_ENV} at \
         mcp-server-filesystem"
    );
    super::needs::skipped(
        "the MCP filesystem server",
        &format!(
            "install @modelcontextprotocol/server-filesystem with npm at {expected}, or point {FS_SERVER_ENV} at it"
        ),
    );
    None
}

fn default_filesystem_server() -> Option<PathBuf> {
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty())?;
    Some(
        PathBuf::from(home)
            .join(".cache/taco-ci/mcp/node_modules/.bin")
            .join("mcp-server-filesystem"),
    )
}

/// The hostile server's executable (`examples/mcp_hostile.rs`), beside the fixture.
pub fn hostile() -> PathBuf {
    let path = fixture().with_file_name(format!("mcp_hostile{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.is_file(),
        "the hostile MCP server is not built at {}: `cargo build --example mcp_hostile`",
        path.display()
    );
    path
}

/// The environment variable `.ci/run` sets to the everything server's executable.
pub const EVERYTHING_SERVER_ENV: &str = "TACO_MCP_EVERYTHING_SERVER";

/// The published everything server (`@modelcontextprotocol/server-everything`, its forms)
/// for a test that needs it: `$TACO_MCP_EVERYTHING_SERVER`, or where `.ci/run` installs it.
/// Under CI (`CI` or the variable set) a missing server fails the test; elsewhere the test is
/// skipped with a note (`None`).
pub fn require_everything_server() -> Option<PathBuf> {
    let configured = std::env::var(EVERYTHING_SERVER_ENV)
        .ok()
        .filter(|v| !v.is_empty());
    let expected = configured.clone().map(PathBuf::from).or_else(|| {
        let home = std::env::var_os("HOME").filter(|h| !h.is_empty())?;
        Some(PathBuf::from(home).join(".cache/taco-ci/mcp/node_modules/.bin/mcp-server-everything"))
    });
    if let Some(path) = expected.as_ref().filter(|p| p.is_file()) {
        return Some(path.clone());
    }
    let under_ci = super::needs::under_ci();
    let shown = expected.map_or_else(
        || "$HOME/.cache/taco-ci/mcp".into(),
        |p| p.display().to_string(),
    );
    assert!(
        configured.is_none() && !under_ci,
        "the MCP everything server (@modelcontextprotocol/server-everything) is missing at \
         {shown}: `.ci/run` installs it with npm; run it, or point {EVERYTHING_SERVER_ENV} at \
         mcp-server-everything"
    );
    super::needs::skipped(
        "the MCP everything server",
        &format!(
            "install @modelcontextprotocol/server-everything with npm at {shown}, or point {EVERYTHING_SERVER_ENV} at it"
        ),
    );
    None
}

/// The hub for `config` (its `[servers.NAME]` tables as `[mcp]` holds them), started in
/// `workdir` with default tool settings, status changes to `notices`; not waited for.
pub fn start_hub(
    config: &str,
    workdir: &Path,
    notices: Option<tokio::sync::mpsc::UnboundedSender<taco::mcp::Notice>>,
) -> std::sync::Arc<taco::mcp::McpHub> {
    let config: taco::mcp::McpConfig = toml::from_str(config).expect("a valid [mcp] config");
    taco::mcp::McpHub::start(
        taco::mcp::config::servers(&config).expect("valid servers"),
        taco::mcp::StartContext {
            workdir: workdir.to_path_buf(),
            settings: std::sync::Arc::new(taco::tools::ToolSettings::default()),
            notices,
            max_tools: taco::mcp::config::DEFAULT_MAX_TOOLS,
        },
    )
}
