//! The MCP fixture server for taco's tests (issue 12), written with rmcp's server side.
//!
//! `mcp_fixture` serves MCP on stdio; `mcp_fixture --http` serves Streamable HTTP on
//! `127.0.0.1:0`, prints `http://127.0.0.1:PORT/mcp` as its only stdout line and serves until
//! killed, stdin reaches EOF or SIGTERM. `--hang-init` never answers `initialize`;
//! `--page-size N` (default 3) sets how many tools (and prompts, resources) one list page
//! holds; `--prompts N` adds N numbered prompts (`p00001`…) for the bounds tests. It writes
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
    ElicitationAction, ElicitationSchema, GetPromptRequestParams, GetPromptResponse,
    GetPromptResult, Implementation, InitializeRequestParams, InitializeResult, JsonObject,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, Prompt, PromptArgument, PromptMessage,
    ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate, Role, ServerCapabilities, ServerConfig, Tool,
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

/// The text of the resource `fixture://notes/readme.txt`.
const NOTES: &str = "The fixture's notes: the secret word is mango.";

/// A 1×1 transparent PNG (valid signature, chunks and CRCs).
const PNG_1X1: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

/// Command-line options.
#[derive(Debug, Clone, Copy)]
struct Options {
    http: bool,
    hang_init: bool,
    page_size: usize,
    /// Numbered prompts added to the real ones (`--prompts N`).
    prompts: usize,
}

fn parse_args(args: impl IntoIterator<Item = String>) -> Result<Options, String> {
    let mut options = Options {
        http: false,
        hang_init: false,
        page_size: 3,
        prompts: 0,
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
            "--prompts" => {
                let value = args.next().ok_or("--prompts needs a number")?;
                options.prompts = value
                    .parse()
                    .map_err(|_| format!("--prompts needs a number, not {value:?}"))?;
            }
            other => {
                return Err(format!(
                    "unknown argument {other:?} (usage: mcp_fixture [--http] [--hang-init] [--page-size N] [--prompts N])"
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

/// One client's server: the tool set, with `late` (and the prompt `late_prompt`) once
/// `add_tool` ran.
#[derive(Clone)]
struct Fixture {
    options: Options,
    late: Arc<AtomicBool>,
    late_prompt: Arc<AtomicBool>,
}

/// Bytes of the resource `fixture://huge.txt` (over every bound a client should have).
const HUGE_BYTES: usize = 1 << 20;

impl Fixture {
    fn new(options: Options) -> Self {
        Self {
            options,
            late: Arc::new(AtomicBool::new(false)),
            late_prompt: Arc::new(AtomicBool::new(false)),
        }
    }

    fn prompts(&self) -> Vec<Prompt> {
        let mut prompts = vec![
            Prompt::new(
                "greet",
                Some("Asks the model to greet someone."),
                Some(vec![
                    PromptArgument::new("name")
                        .with_description("who to greet")
                        .with_required(true),
                    PromptArgument::new("style")
                        .with_description("formal or casual")
                        .with_required(false),
                ]),
            ),
            Prompt::new(
                "review",
                Some("A review request with an embedded note, an image and an assistant turn."),
                None,
            ),
            Prompt::new(
                "long",
                Some("A 400 KB prompt."),
                None::<Vec<PromptArgument>>,
            ),
        ];
        if self.late_prompt.load(Ordering::SeqCst) {
            prompts.push(Prompt::new(
                "late_prompt",
                Some("Added by add_prompt."),
                None::<Vec<PromptArgument>>,
            ));
        }
        for n in 1..=self.options.prompts {
            prompts.push(Prompt::new(
                format!("p{n:05}"),
                Some(format!("Numbered prompt {n}.")),
                None::<Vec<PromptArgument>>,
            ));
        }
        prompts
    }

    fn get_prompt(&self, name: &str, arguments: &JsonObject) -> Result<GetPromptResult, ErrorData> {
        let messages = match name {
            "greet" => {
                let who = arguments
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or_else(|| ErrorData::invalid_params("greet needs name", None))?;
                let style = arguments
                    .get("style")
                    .and_then(Value::as_str)
                    .unwrap_or("friendly");
                vec![PromptMessage::new_text(
                    Role::User,
                    format!("Please greet {who} in a {style} way."),
                )]
            }
            "review" => vec![
                PromptMessage::new_text(Role::User, "Review the note below."),
                PromptMessage::new(
                    Role::User,
                    ContentBlock::embedded_text("fixture://notes/readme.txt", NOTES),
                ),
                PromptMessage::new(Role::User, ContentBlock::image(PNG_1X1, "image/png")),
                PromptMessage::new_text(Role::Assistant, "I will review it."),
            ],
            "long" => vec![PromptMessage::new_text(Role::User, "word ".repeat(80_000))],
            "late_prompt" if self.late_prompt.load(Ordering::SeqCst) => {
                vec![PromptMessage::new_text(Role::User, "late")]
            }
            other if other.starts_with('p') && self.prompts().iter().any(|p| p.name == other) => {
                vec![PromptMessage::new_text(
                    Role::User,
                    format!("numbered {other}"),
                )]
            }
            other => {
                return Err(ErrorData::invalid_params(
                    format!("no prompt named {other:?}"),
                    None,
                ));
            }
        };
        Ok(GetPromptResult::new(messages))
    }

    fn resources() -> Vec<Resource> {
        vec![
            Resource::new("fixture://notes/readme.txt", "readme")
                .with_description("The fixture's notes.")
                .with_mime_type("text/plain"),
            Resource::new("fixture://logo.png", "logo").with_mime_type("image/png"),
            Resource::new("fixture://huge.txt", "huge")
                .with_description("1 MiB of numbered lines.")
                .with_mime_type("text/plain")
                .with_size(HUGE_BYTES as u64),
        ]
    }

    fn read(uri: &str) -> Result<ReadResourceResult, ErrorData> {
        let contents = match uri {
            "fixture://notes/readme.txt" => {
                ResourceContents::text(NOTES, uri).with_mime_type("text/plain")
            }
            "fixture://logo.png" => {
                ResourceContents::blob(PNG_1X1, uri).with_mime_type("image/png")
            }
            "fixture://huge.txt" => {
                let mut text = String::with_capacity(HUGE_BYTES);
                let mut n = 0;
                while text.len() + 16 <= HUGE_BYTES {
                    n += 1;
                    text.push_str(&format!("line {n:010}\n"));
                }
                ResourceContents::text(text, uri).with_mime_type("text/plain")
            }
            _ => match uri.strip_prefix("fixture://echo/") {
                Some(word) => ResourceContents::text(format!("echo {word}"), uri),
                None => {
                    return Err(ErrorData::resource_not_found(
                        format!("no resource {uri:?}"),
                        None,
                    ));
                }
            },
        };
        Ok(ReadResourceResult::new(vec![contents]))
    }

    /// The page of `items` a `*/list` request's cursor asks for, and the next cursor.
    fn page<T: Clone>(
        &self,
        items: &[T],
        request: Option<PaginatedRequestParams>,
    ) -> Result<(Vec<T>, Option<String>), ErrorData> {
        let start = match request.and_then(|r| r.cursor) {
            None => 0,
            Some(cursor) => cursor
                .parse::<usize>()
                .ok()
                .filter(|start| *start <= items.len())
                .ok_or_else(|| ErrorData::invalid_params(format!("bad cursor {cursor:?}"), None))?,
        };
        let end = (start + self.options.page_size).min(items.len());
        let next = (end < items.len()).then(|| end.to_string());
        Ok((items[start..end].to_vec(), next))
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
                "Adds the tool `late` and the prompt `late_prompt`; announces both lists changed.",
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
            .enable_prompts()
            .enable_prompts_list_changed()
            .enable_resources()
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

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let (items, next) = self.page(&self.prompts(), request)?;
        let mut page = ListPromptsResult::with_all_items(items);
        page.next_cursor = next;
        Ok(page)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let arguments = request.arguments.unwrap_or_default();
        self.get_prompt(&request.name, &arguments).map(Into::into)
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let (items, next) = self.page(&Self::resources(), request)?;
        let mut page = ListResourcesResult::with_all_items(items);
        page.next_cursor = next;
        Ok(page)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            ResourceTemplate::new("fixture://echo/{word}", "echo")
                .with_description("Echoes the word in its URI."),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        Self::read(&request.uri).map(Into::into)
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
                self.late_prompt.store(true, Ordering::SeqCst);
                context
                    .peer
                    .notify_tool_list_changed()
                    .await
                    .map_err(|e| ErrorData::internal_error(format!("list_changed: {e}"), None))?;
                context
                    .peer
                    .notify_prompt_list_changed()
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
