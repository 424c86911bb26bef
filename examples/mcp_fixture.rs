//! The MCP fixture server for taco's tests (issue 12), written with rmcp's server side.
//!
//! `mcp_fixture` serves MCP on stdio; `mcp_fixture --http` serves Streamable HTTP on
//! `127.0.0.1:0`, prints `http://127.0.0.1:PORT/mcp` as its only stdout line and serves until
//! killed, stdin reaches EOF or SIGTERM. `--hang-init` never answers `initialize`;
//! `--page-size N` (default 3) sets how many tools one `tools/list` page holds. It writes
//! `fixture: started` to stderr first. The tools and their exact behaviour are the contract in
//! `docs/ARCHITECTURE.md` §9; `tests/mcp_fixture.rs` proves it.

use std::borrow::Cow;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
// MCP logging is deprecated by SEP-2577; the fixture still speaks it (issue 12 sends it to the log).
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ElicitRequestParams,
    ElicitationAction, ElicitationSchema, Implementation, InitializeRequestParams,
    InitializeResult, JsonObject, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ProtocolVersion, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
#[allow(deprecated)]
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam, SetLevelRequestParams};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;

/// A 1×1 transparent PNG (valid signature, chunks and CRCs).
const PNG_1X1: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

/// Command-line options.
#[derive(Debug, Clone, Copy)]
struct Options {
    http: bool,
    hang_init: bool,
    page_size: usize,
}

fn parse_args(args: impl IntoIterator<Item = String>) -> Result<Options, String> {
    let mut options = Options {
        http: false,
        hang_init: false,
        page_size: 3,
    };
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--http" => options.http = true,
            "--hang-init" => options.hang_init = true,
            "--page-size" => {
                let value = args.next().ok_or("--page-size needs a number")?;
                options.page_size =
                    value.parse().ok().filter(|n| *n > 0).ok_or_else(|| {
                        format!("--page-size needs a positive number, not {value:?}")
                    })?;
            }
            other => {
                return Err(format!(
                    "unknown argument {other:?} (usage: mcp_fixture [--http] [--hang-init] [--page-size N])"
                ));
            }
        }
    }
    Ok(options)
}

fn main() -> ExitCode {
    let options = match parse_args(std::env::args().skip(1)) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("fixture: {message}");
            return ExitCode::from(2);
        }
    };
    eprintln!("fixture: started");
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("fixture: no runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async move {
        if options.http {
            serve_http(options).await
        } else if options.hang_init {
            hang_on_stdin().await
        } else {
            serve_stdio(options).await
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("fixture: {error}");
            ExitCode::FAILURE
        }
    }
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Serves one client on stdin/stdout until stdin closes.
async fn serve_stdio(options: Options) -> Result<(), BoxError> {
    let service = Fixture::new(options)
        .serve(rmcp::transport::stdio())
        .await?;
    service.waiting().await?;
    Ok(())
}

/// `--hang-init` on stdio: read (and ignore) everything until EOF, never answer.
async fn hang_on_stdin() -> Result<(), BoxError> {
    let mut sink = Vec::new();
    tokio::io::stdin().read_to_end(&mut sink).await?;
    Ok(())
}

/// Serves Streamable HTTP on a loopback port; stdin EOF ends the process.
async fn serve_http(options: Options) -> Result<(), BoxError> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let address = listener.local_addr()?;
    let service = TowerToHyperService::new(StreamableHttpService::new(
        move || Ok(Fixture::new(options)),
        LocalSessionManager::default().into(),
        StreamableHttpServerConfig::default(),
    ));
    {
        use std::io::Write;
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "http://{address}/mcp")?;
        stdout.flush()?;
    }
    tokio::spawn(async {
        let mut buffer = [0u8; 1024];
        let mut stdin = tokio::io::stdin();
        while matches!(stdin.read(&mut buffer).await, Ok(n) if n > 0) {}
        std::process::exit(0);
    });
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(error) => {
                eprintln!("fixture: accept failed: {error}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let service = service.clone();
        tokio::spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// One client's server: the tool set, with `late` once `add_tool` ran.
#[derive(Clone)]
struct Fixture {
    options: Options,
    late: Arc<AtomicBool>,
}

impl Fixture {
    fn new(options: Options) -> Self {
        Self {
            options,
            late: Arc::new(AtomicBool::new(false)),
        }
    }

    fn tools(&self) -> Vec<Tool> {
        let mut tools = vec![
            Tool::new(
                "echo",
                "Echoes its text back.",
                schema(json!({
                    "type": "object",
                    "properties": {"text": {"type": "string"}},
                    "required": ["text"]
                })),
            )
            .annotate(ToolAnnotations::new().read_only(true)),
            Tool::new(
                "add",
                "Adds two numbers; the sum is also structured content.",
                schema(json!({
                    "type": "object",
                    "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                    "required": ["a", "b"]
                })),
            )
            .with_raw_output_schema(Arc::new(schema(json!({
                "type": "object",
                "properties": {"sum": {"type": "number"}},
                "required": ["sum"]
            })))),
            Tool::new("fail", "Always fails (isError).", empty_schema()),
            Tool::new("image", "Returns a tiny PNG and a caption.", empty_schema()),
            Tool::new(
                "slow",
                "Reports progress `steps` times, `delay_ms` apart; cancellable.",
                schema(json!({
                    "type": "object",
                    "properties": {
                        "steps": {"type": "integer", "minimum": 0},
                        "delay_ms": {"type": "integer", "minimum": 0}
                    },
                    "required": ["steps", "delay_ms"]
                })),
            )
            .annotate(ToolAnnotations::new().destructive(true)),
            Tool::new(
                "ask",
                "Asks the user who they are (elicitation); `form: \"rich\"` asks a form with every kind of field.",
                schema(json!({
                    "type": "object",
                    "properties": {"form": {"type": "string", "enum": ["rich"]}}
                })),
            ),
            Tool::new(
                "crash",
                "Exits the server with code 3 mid-call.",
                empty_schema(),
            ),
            Tool::new(
                "add_tool",
                "Adds the tool `late` and announces list_changed.",
                empty_schema(),
            ),
            Tool::new("log", "Sends one logging notification.", empty_schema()),
        ];
        if self.late.load(Ordering::SeqCst) {
            tools.push(Tool::new("late", "Added by add_tool.", empty_schema()));
        }
        tools
    }

    async fn slow(
        &self,
        arguments: &JsonObject,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let steps = integer_argument(arguments, "steps")?;
        let delay = Duration::from_millis(integer_argument(arguments, "delay_ms")?);
        let token = context.meta.get_progress_token();
        for step in 1..=steps {
            if let Some(token) = &token {
                let progress = ProgressNotificationParam::new(token.clone(), step as f64)
                    .with_total(steps as f64)
                    .with_message(format!("step {step}"));
                if context.peer.notify_progress(progress).await.is_err() {
                    return Err(ErrorData::internal_error("the client went away", None));
                }
            }
            if step < steps {
                tokio::select! {
                    () = tokio::time::sleep(delay) => {}
                    () = context.ct.cancelled() => {
                        // Said on stderr so a client's tests can see the cancel arrived.
                        eprintln!("fixture: slow cancelled at step {step}");
                        return Err(ErrorData::internal_error("cancelled", None));
                    }
                }
            }
        }
        Ok(text_result("done"))
    }

    async fn ask(
        &self,
        rich: bool,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let (message, form) = if rich {
            ("Tell us about you.", rich_form())
        } else {
            let form = json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "age": {"type": "integer"},
                    "color": {"type": "string", "enum": ["red", "green"]},
                    "ok": {"type": "boolean"}
                },
                "required": ["name"]
            });
            ("Who are you?", form)
        };
        let requested_schema = ElicitationSchema::from_json_schema(schema(form))
            .map_err(|e| ErrorData::internal_error(format!("elicitation schema: {e}"), None))?;
        let request = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: message.to_string(),
            requested_schema,
        };
        let answer = match context.peer.create_elicitation(request).await {
            Ok(answer) => answer,
            Err(error) => {
                return Ok(CallToolResult::error(vec![ContentBlock::text(format!(
                    "elicitation failed: {error}"
                ))]));
            }
        };
        let text = match answer.action {
            ElicitationAction::Accept => {
                format!("accepted: {}", answer.content.unwrap_or(Value::Null))
            }
            ElicitationAction::Decline => "declined".to_string(),
            ElicitationAction::Cancel => "cancelled".to_string(),
            _ => "unknown action".to_string(),
        };
        Ok(text_result(text))
    }

    #[allow(deprecated)] // MCP logging is deprecated by SEP-2577; the fixture still speaks it.
    async fn log(&self, context: &RequestContext<RoleServer>) -> Result<CallToolResult, ErrorData> {
        let message =
            LoggingMessageNotificationParam::new(LoggingLevel::Info, json!("hello from fixture"));
        context
            .peer
            .notify_logging_message(message)
            .await
            .map_err(|e| ErrorData::internal_error(format!("logging: {e}"), None))?;
        Ok(text_result("logged"))
    }
}

impl ServerHandler for Fixture {
    #[allow(deprecated)] // the logging capability is deprecated by SEP-2577; still advertised.
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_logging()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("fixture", env!("CARGO_PKG_VERSION")))
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    /// Only revisions with an `initialize` handshake: a classic server, like most in the wild.
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(
            &ProtocolVersion::LATEST_WITH_INITIALIZE,
        ))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        if self.options.hang_init {
            std::future::pending::<()>().await;
        }
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    #[allow(deprecated)] // logging/setLevel is deprecated by SEP-2577; accepted and ignored.
    async fn set_level(
        &self,
        _request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = self.tools();
        let start = match request.and_then(|r| r.cursor) {
            None => 0,
            Some(cursor) => cursor
                .parse::<usize>()
                .ok()
                .filter(|start| *start <= tools.len())
                .ok_or_else(|| ErrorData::invalid_params(format!("bad cursor {cursor:?}"), None))?,
        };
        let end = (start + self.options.page_size).min(tools.len());
        let mut page = ListToolsResult::with_all_items(tools[start..end].to_vec());
        if end < tools.len() {
            page.next_cursor = Some(end.to_string());
        }
        Ok(page)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = request.arguments.unwrap_or_default();
        let result = match request.name.as_ref() {
            "echo" => {
                let text = arguments
                    .get("text")
                    .and_then(Value::as_str)
                    .ok_or_else(|| ErrorData::invalid_params("echo needs text: string", None))?;
                text_result(format!("echo: {text}"))
            }
            "add" => {
                let a = number_argument(&arguments, "a")?;
                let b = number_argument(&arguments, "b")?;
                let sum = number(a + b);
                let mut result = text_result(sum.to_string());
                result.structured_content = Some(json!({ "sum": sum }));
                result
            }
            "fail" => CallToolResult::error(vec![ContentBlock::text("it failed on purpose")]),
            "image" => CallToolResult::success(vec![
                ContentBlock::image(PNG_1X1, "image/png"),
                ContentBlock::text("an image"),
            ]),
            "slow" => self.slow(&arguments, &context).await?,
            "ask" => {
                let rich = arguments.get("form").and_then(Value::as_str) == Some("rich");
                self.ask(rich, &context).await?
            }
            "crash" => {
                eprintln!("fixture: crashing");
                std::process::exit(3);
            }
            "add_tool" => {
                self.late.store(true, Ordering::SeqCst);
                context
                    .peer
                    .notify_tool_list_changed()
                    .await
                    .map_err(|e| ErrorData::internal_error(format!("list_changed: {e}"), None))?;
                text_result("added")
            }
            "log" => self.log(&context).await?,
            "late" if self.late.load(Ordering::SeqCst) => text_result("late"),
            other => {
                return Err(ErrorData::invalid_params(
                    format!("no tool named {other:?}"),
                    None,
                ));
            }
        };
        Ok(result.into())
    }
}

fn text_result(text: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text)])
}

/// A JSON object literal as a schema (`json!` of an object is always an object).
fn schema(value: Value) -> JsonObject {
    match value {
        Value::Object(object) => object,
        _ => JsonObject::new(),
    }
}

/// A form with every kind of field a form may have: text with lengths and formats, numbers
/// with ranges and defaults, a toggle, choices (plain, titled `oneOf`, legacy `enumNames`)
/// and multi-selects (of an `enum`, of titled `anyOf`).
fn rich_form() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Name", "description": "Your full name", "minLength": 2, "maxLength": 20},
            "agree": {"type": "boolean", "title": "Agree", "default": false},
            "email": {"type": "string", "format": "email"},
            "site": {"type": "string", "format": "uri"},
            "born": {"type": "string", "format": "date"},
            "at": {"type": "string", "format": "date-time"},
            "count": {"type": "integer", "minimum": 1, "maximum": 100, "default": 42},
            "ratio": {"type": "number", "minimum": 0, "maximum": 1},
            "friend": {"type": "string", "enum": ["Monica", "Ross"], "default": "Ross"},
            "hero": {"type": "string", "oneOf": [{"const": "h1", "title": "Superman"}, {"const": "h2", "title": "Batman"}]},
            "pet": {"type": "string", "enum": ["p1", "p2"], "enumNames": ["Cats", "Dogs"]},
            "tools": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "string", "enum": ["Guitar", "Piano", "Drums"]}, "default": ["Piano"]},
            "fish": {"type": "array", "items": {"anyOf": [{"const": "f1", "title": "Tuna"}, {"const": "f2", "title": "Trout"}]}}
        },
        "required": ["name", "count"]
    })
}

fn empty_schema() -> JsonObject {
    schema(json!({"type": "object", "properties": {}}))
}

fn number_argument(arguments: &JsonObject, name: &str) -> Result<f64, ErrorData> {
    arguments
        .get(name)
        .and_then(Value::as_f64)
        .ok_or_else(|| ErrorData::invalid_params(format!("{name} must be a number"), None))
}

fn integer_argument(arguments: &JsonObject, name: &str) -> Result<u64, ErrorData> {
    arguments.get(name).and_then(Value::as_u64).ok_or_else(|| {
        ErrorData::invalid_params(format!("{name} must be a non-negative integer"), None)
    })
}

/// A whole sum as a JSON integer (`3`, not `3.0`); anything else as a float.
fn number(value: f64) -> serde_json::Number {
    if value.fract() == 0.0 && value.abs() < 9_007_199_254_740_992.0 {
        serde_json::Number::from(value as i64)
    } else {
        serde_json::Number::from_f64(value).unwrap_or_else(|| serde_json::Number::from(0))
    }
}
