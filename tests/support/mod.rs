//! Test support: a scripted loopback HTTP/1.1 server on tokio.
//!
//! It answers requests in arrival order with a list of [`Reply`]s (one per request), writing
//! each body chunk separately (flushed, with an optional delay) so streams arrive in pieces,
//! and records every request so tests can check what the client sent.
#![allow(dead_code)]
// Test scaffolding: a failed unwrap is a failed test, with its location.
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod acp_drive;
pub mod acp_script;
pub mod app;
pub mod cli;
pub mod mcp;
pub mod needs;
pub mod oauth;
pub mod otlp;
pub mod processes;
pub mod sandboxed;
pub mod scripted;
pub mod tmux;
pub mod wire;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A scripted response.
#[derive(Debug, Clone)]
pub struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    chunks: Vec<Vec<u8>>,
    /// Send `Content-Length` (otherwise the body ends when the connection closes).
    content_length: bool,
    chunk_delay: Duration,
    /// Keep the connection open this long after the last chunk (to test idle timeouts).
    hold: Duration,
    /// Write the last chunk again and again until the client goes away (an endless stream).
    forever: bool,
}

impl Reply {
    /// `200 text/event-stream`, close-delimited, each chunk written separately.
    pub fn sse<C: Into<Vec<u8>>>(chunks: impl IntoIterator<Item = C>) -> Self {
        Self {
            status: 200,
            headers: vec![
                ("Content-Type".into(), "text/event-stream".into()),
                ("Cache-Control".into(), "no-cache".into()),
            ],
            chunks: chunks.into_iter().map(Into::into).collect(),
            content_length: false,
            chunk_delay: Duration::ZERO,
            hold: Duration::ZERO,
            forever: false,
        }
    }

    /// `200 application/x-ndjson` (Ollama), close-delimited, each chunk written separately.
    pub fn ndjson<C: Into<Vec<u8>>>(chunks: impl IntoIterator<Item = C>) -> Self {
        Self {
            headers: vec![("Content-Type".into(), "application/x-ndjson".into())],
            ..Self::sse(chunks)
        }
    }

    /// A response with this status and no body yet (add one with [`body`](Self::body)).
    pub fn status(status: u16) -> Self {
        Self {
            status,
            headers: Vec::new(),
            content_length: true,
            ..Self::sse(Vec::<Vec<u8>>::new())
        }
    }

    /// Adds a header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    /// Sets the whole body, sent with `Content-Length`.
    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Self {
        self.chunks = vec![body.into()];
        self.content_length = true;
        self
    }

    /// Sets a JSON body with `Content-Type: application/json`.
    pub fn json(self, value: &serde_json::Value) -> Self {
        self.header("Content-Type", "application/json")
            .body(value.to_string())
    }

    /// Waits this long before each chunk.
    pub fn chunk_delay(mut self, delay: Duration) -> Self {
        self.chunk_delay = delay;
        self
    }

    /// Keeps the connection open this long after the last chunk.
    pub fn hold(mut self, duration: Duration) -> Self {
        self.hold = duration;
        self
    }

    /// Repeats the last chunk until the client goes away (at most 1 GiB, so a client that
    /// never stops reading still ends the test).
    pub fn forever(mut self) -> Self {
        self.forever = true;
        self
    }
}

/// A request as the server received it.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    /// `GET`, `POST`…
    pub method: String,
    /// Path and query, e.g. `/v1/chat/completions`.
    pub path: String,
    /// Headers in order, names lowercased.
    pub headers: Vec<(String, String)>,
    /// The body bytes.
    pub body: Vec<u8>,
    /// When the request had fully arrived (to check waits such as `Retry-After`).
    pub received: std::time::Instant,
}

impl RecordedRequest {
    /// The first header with this name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body parsed as JSON (panics with the body text when it is not JSON).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "request body is not JSON ({e}): {}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }
}

/// The running server; it stops when dropped.
///
/// It runs on its own thread and runtime, so it keeps serving while the test blocks (e.g. on a
/// child process) and works from both `#[test]` and `#[tokio::test]`.
pub struct TestServer {
    addr: std::net::SocketAddr,
    requests: Arc<Mutex<Vec<RecordedRequest>>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl TestServer {
    /// Starts a server answering with `replies` in order; requests beyond them get a 500.
    /// (`async` only for call-site symmetry; it does not wait on anything.)
    pub async fn start(replies: Vec<Reply>) -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        listener
            .set_nonblocking(true)
            .expect("non-blocking listener");
        let addr = listener.local_addr().expect("local addr");
        let requests = Arc::new(Mutex::new(Vec::new()));
        let recorded = Arc::clone(&requests);
        let replies = Arc::new(Mutex::new(VecDeque::from(replies)));
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("server runtime");
            runtime.block_on(async move {
                let listener = TcpListener::from_std(listener).expect("tokio listener");
                let accept = async {
                    while let Ok((socket, _)) = listener.accept().await {
                        let recorded = Arc::clone(&recorded);
                        let replies = Arc::clone(&replies);
                        tokio::spawn(async move {
                            let _ = serve(socket, recorded, replies).await;
                        });
                    }
                };
                tokio::select! {
                    _ = accept => {}
                    _ = stopped => {}
                }
            });
        });
        Self {
            addr,
            requests,
            stop: Some(stop),
        }
    }

    /// `http://127.0.0.1:PORT` (no trailing slash).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The requests received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// A URL on which nothing listens (a port that was bound and released).
pub async fn unreachable_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let addr = listener.local_addr().expect("local addr");
    drop(listener);
    format!("http://{addr}")
}

async fn serve(
    mut socket: TcpStream,
    recorded: Arc<Mutex<Vec<RecordedRequest>>>,
    replies: Arc<Mutex<VecDeque<Reply>>>,
) -> std::io::Result<()> {
    let request = read_request(&mut socket).await?;
    let reply = {
        // Take the reply and record the request together, so request order matches replies.
        let mut replies = replies.lock().unwrap_or_else(PoisonError::into_inner);
        recorded
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(request);
        replies.pop_front()
    };
    let reply = reply.unwrap_or_else(|| Reply::status(500).body("no scripted reply left"));
    let mut head = format!("HTTP/1.1 {} {}\r\n", reply.status, reason(reply.status));
    for (name, value) in &reply.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if reply.content_length {
        let length: usize = reply.chunks.iter().map(Vec::len).sum();
        head.push_str(&format!("Content-Length: {length}\r\n"));
    }
    head.push_str("Connection: close\r\n\r\n");
    socket.write_all(head.as_bytes()).await?;
    socket.flush().await?;
    for chunk in &reply.chunks {
        if !reply.chunk_delay.is_zero() {
            tokio::time::sleep(reply.chunk_delay).await;
        }
        socket.write_all(chunk).await?;
        socket.flush().await?;
    }
    if let Some(last) = reply
        .chunks
        .last()
        .filter(|c| reply.forever && !c.is_empty())
    {
        let mut sent = 0usize;
        while sent < 1 << 30 {
            socket.write_all(last).await?;
            sent += last.len();
        }
    }
    if !reply.hold.is_zero() {
        tokio::time::sleep(reply.hold).await;
    }
    socket.shutdown().await
}

/// Reads one request: head up to the blank line, then a `Content-Length` body.
async fn read_request(socket: &mut TcpStream) -> std::io::Result<RecordedRequest> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        let n = socket.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut start = lines.next().unwrap_or("").split(' ');
    let method = start.next().unwrap_or("").to_string();
    let path = start.next().unwrap_or("").to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let length = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < length {
        let n = socket.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    body.truncate(length);
    Ok(RecordedRequest {
        method,
        path,
        headers,
        body,
        received: std::time::Instant::now(),
    })
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Status",
    }
}
