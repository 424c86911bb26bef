//! A loopback OAuth authorization server and the MCP server it guards, one origin
//! (`http://127.0.0.1:PORT`), for the OAuth tests (issue 28.7): the metadata documents
//! (RFC 9728 protected resource, RFC 8414 authorization server), `/register` (dynamic client
//! registration), `/authorize` (redirects to the client's loopback redirect URI with a code:
//! the test plays the browser by fetching the URL taco shows), `/token` (checks the PKCE
//! verifier against the challenge, issues access and refresh tokens, short-lived on request,
//! or misbehaves: hangs, an endless body, garbage), and `/mcp`: a small MCP responder that
//! answers only a valid, unexpired bearer token (401 with a `resource_metadata` challenge
//! otherwise). Its one tool, `whoami`, echoes the token it was called with, so a test can
//! check the token is redacted wherever taco writes.
#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{Value, json};
use sha2::Digest;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// How `/token` answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenMode {
    /// As the spec says.
    Normal,
    /// Never.
    Hang,
    /// 200 with an endless body.
    Huge,
    /// 200 with HTML.
    Garbage,
}

/// What the server saw and holds.
#[derive(Debug)]
pub struct State {
    /// `expires_in` of the access tokens it issues.
    pub token_life: u64,
    /// How `/token` answers.
    pub token_mode: TokenMode,
    /// Registered clients: id → redirect URIs.
    pub clients: HashMap<String, Vec<String>>,
    /// A client id it knows without registration (any loopback redirect, as RFC 8252 has it).
    pub preset: Option<String>,
    /// Codes: code → (client, challenge, redirect URI).
    codes: HashMap<String, (String, String, String)>,
    /// Access tokens → when they expire.
    access: HashMap<String, Instant>,
    /// Refresh tokens.
    refresh: Vec<String>,
    /// Every access token issued, in order.
    pub issued: Vec<String>,
    /// Every refresh token issued, in order.
    pub issued_refresh: Vec<String>,
    /// `grant_type` of each `/token` request, in order.
    pub grants: Vec<String>,
    /// The `resource` parameters of `/authorize` and `/token`.
    pub resources: Vec<String>,
    /// Bearer tokens `/mcp` accepted.
    pub accepted: Vec<String>,
    /// `/mcp` requests refused with 401.
    pub refused: usize,
    /// `tools/call` requests answered.
    pub calls: usize,
    /// Token requests whose PKCE verifier did not match.
    pub pkce_failures: usize,
}

/// The running server.
pub struct AuthServer {
    /// `http://127.0.0.1:PORT`.
    pub origin: String,
    /// What it saw.
    pub state: Arc<Mutex<State>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for AuthServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl AuthServer {
    /// Starts the server.
    pub async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let origin = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(Mutex::new(State {
            token_life: 3600,
            token_mode: TokenMode::Normal,
            clients: HashMap::new(),
            preset: None,
            codes: HashMap::new(),
            access: HashMap::new(),
            refresh: Vec::new(),
            issued: Vec::new(),
            issued_refresh: Vec::new(),
            grants: Vec::new(),
            resources: Vec::new(),
            accepted: Vec::new(),
            refused: 0,
            calls: 0,
            pkce_failures: 0,
        }));
        let shared = Arc::clone(&state);
        let base = origin.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let state = Arc::clone(&shared);
                let origin = base.clone();
                tokio::spawn(async move { serve(stream, &origin, &state).await });
            }
        });
        Self {
            origin,
            state,
            task,
        }
    }

    /// The MCP endpoint.
    pub fn mcp_url(&self) -> String {
        format!("{}/mcp", self.origin)
    }

    /// Sets how `/token` answers.
    pub fn set_token_mode(&self, mode: TokenMode) {
        self.state.lock().unwrap().token_mode = mode;
    }

    /// Sets the life of the access tokens it issues.
    pub fn set_token_life(&self, secs: u64) {
        self.state.lock().unwrap().token_life = secs;
    }
}

/// Plays the browser: fetches the authorization URL taco showed and follows the redirect
/// to taco's loopback listener; returns the listener's status.
pub async fn play_browser(url: &str) -> u16 {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap();
    client.get(url).send().await.unwrap().status().as_u16()
}

/// The redirect URI an authorization URL names.
pub fn redirect_uri(url: &str) -> String {
    param(&reqwest::Url::parse(url).unwrap(), "redirect_uri").unwrap()
}

fn param(url: &reqwest::Url, name: &str) -> Option<String> {
    url.query_pairs()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

struct Request {
    method: String,
    url: reqwest::Url,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        (self.headers.iter())
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn form(&self) -> reqwest::Url {
        let body = String::from_utf8_lossy(&self.body);
        reqwest::Url::parse(&format!("http://x/?{body}")).unwrap()
    }
}

async fn read_request(stream: &mut TcpStream) -> Option<Request> {
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    let end = loop {
        if let Some(at) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        let n = stream.read(&mut buf).await.ok()?;
        if n == 0 || data.len() > 1 << 20 {
            return None;
        }
        data.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&data[..end]).into_owned();
    let mut lines = head.lines();
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_string();
    let target = first.next()?.to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_string(), v.trim().to_string()))
        .collect();
    let length: usize = (headers.iter())
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = data[end + 4..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut buf).await.ok()?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&buf[..n]);
    }
    let url = reqwest::Url::parse(&format!("http://127.0.0.1{target}")).ok()?;
    Some(Request {
        method,
        url,
        headers,
        body,
    })
}

async fn respond(stream: &mut TcpStream, status: &str, headers: &[(&str, String)], body: &[u8]) {
    let mut head = format!(
        "HTTP/1.1 {status}\r\ncontent-length: {}\r\nconnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let _ = stream.write_all(head.as_bytes()).await;
    let _ = stream.write_all(body).await;
    let _ = stream.shutdown().await;
}

async fn json_reply(stream: &mut TcpStream, status: &str, value: &Value) {
    let body = value.to_string();
    respond(
        stream,
        status,
        &[("content-type", "application/json".into())],
        body.as_bytes(),
    )
    .await;
}

fn random(prefix: &str) -> String {
    format!(
        "{prefix}-{:016x}{:016x}",
        fastrand::u64(..),
        fastrand::u64(..)
    )
}

fn challenge_of(verifier: &str) -> String {
    let digest = sha2::Sha256::digest(verifier.as_bytes());
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest)
}

async fn serve(mut stream: TcpStream, origin: &str, state: &Mutex<State>) {
    let Some(request) = read_request(&mut stream).await else {
        return;
    };
    let path = request.url.path().to_string();
    match (request.method.as_str(), path.as_str()) {
        ("GET", "/.well-known/oauth-protected-resource/mcp")
        | ("GET", "/.well-known/oauth-protected-resource") => {
            let doc = json!({
                "resource": format!("{origin}/mcp"),
                "authorization_servers": [origin],
                "scopes_supported": ["mcp"],
                "bearer_methods_supported": ["header"],
            });
            json_reply(&mut stream, "200 OK", &doc).await;
        }
        ("GET", "/.well-known/oauth-authorization-server") => {
            let doc = json!({
                "issuer": origin,
                "authorization_endpoint": format!("{origin}/authorize"),
                "token_endpoint": format!("{origin}/token"),
                "registration_endpoint": format!("{origin}/register"),
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none"],
                "scopes_supported": ["mcp"],
            });
            json_reply(&mut stream, "200 OK", &doc).await;
        }
        ("POST", "/register") => {
            let asked: Value = serde_json::from_slice(&request.body).unwrap_or_default();
            let uris: Vec<String> = asked["redirect_uris"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|u| u.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default();
            let id = random("client");
            state
                .lock()
                .unwrap()
                .clients
                .insert(id.clone(), uris.clone());
            let doc = json!({
                "client_id": id,
                "redirect_uris": uris,
                "client_name": asked["client_name"],
                "token_endpoint_auth_method": "none",
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
            });
            json_reply(&mut stream, "201 Created", &doc).await;
        }
        ("GET", "/authorize") => {
            let url = &request.url;
            let client = param(url, "client_id").unwrap_or_default();
            let redirect = param(url, "redirect_uri").unwrap_or_default();
            let known = {
                let s = state.lock().unwrap();
                let preset = s.preset.as_deref() == Some(client.as_str())
                    && redirect.starts_with("http://127.0.0.1:");
                preset || (s.clients.get(&client)).is_some_and(|uris| uris.contains(&redirect))
            };
            if !known
                || param(url, "response_type").as_deref() != Some("code")
                || param(url, "code_challenge_method").as_deref() != Some("S256")
            {
                respond(
                    &mut stream,
                    "400 Bad Request",
                    &[],
                    b"bad authorization request",
                )
                .await;
                return;
            }
            let code = random("code");
            {
                let mut s = state.lock().unwrap();
                s.resources.extend(param(url, "resource"));
                let challenge = param(url, "code_challenge").unwrap_or_default();
                s.codes
                    .insert(code.clone(), (client, challenge, redirect.clone()));
            }
            let mut to = reqwest::Url::parse(&redirect).unwrap();
            to.query_pairs_mut().append_pair("code", &code);
            if let Some(st) = param(url, "state") {
                to.query_pairs_mut().append_pair("state", &st);
            }
            respond(
                &mut stream,
                "302 Found",
                &[("location", to.to_string())],
                b"",
            )
            .await;
        }
        ("POST", "/token") => token(&mut stream, &request, state).await,
        (_, "/mcp") => mcp(&mut stream, &request, origin, state).await,
        _ => respond(&mut stream, "404 Not Found", &[], b"").await,
    }
}

async fn token(stream: &mut TcpStream, request: &Request, state: &Mutex<State>) {
    let mode = state.lock().unwrap().token_mode;
    match mode {
        TokenMode::Normal => {}
        TokenMode::Hang => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            return;
        }
        TokenMode::Garbage => {
            respond(
                stream,
                "200 OK",
                &[("content-type", "text/html".into())],
                b"<html>oops</html>",
            )
            .await;
            return;
        }
        TokenMode::Huge => {
            let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n{\"access_token\":\"";
            let _ = stream.write_all(head.as_bytes()).await;
            let chunk = vec![b'a'; 64 * 1024];
            // 64 MiB at most: far past any bound taco should have.
            for _ in 0..1024 {
                if stream.write_all(&chunk).await.is_err() {
                    return;
                }
            }
            return;
        }
    }
    let issued = grant(&request.form(), state);
    match issued {
        Some(doc) => json_reply(stream, "200 OK", &doc).await,
        None => {
            json_reply(
                stream,
                "400 Bad Request",
                &json!({"error": "invalid_grant"}),
            )
            .await
        }
    }
}

/// The token response for a `/token` form, or `None` (`invalid_grant`).
fn grant(form: &reqwest::Url, state: &Mutex<State>) -> Option<Value> {
    let grant = param(form, "grant_type").unwrap_or_default();
    let mut s = state.lock().unwrap();
    s.grants.push(grant.clone());
    s.resources.extend(param(form, "resource"));
    let ok = match grant.as_str() {
        "authorization_code" => {
            let code = param(form, "code").unwrap_or_default();
            match s.codes.remove(&code) {
                Some((client, challenge, redirect)) => {
                    let verifier = param(form, "code_verifier").unwrap_or_default();
                    let pkce = challenge_of(&verifier) == challenge;
                    if !pkce {
                        s.pkce_failures += 1;
                    }
                    pkce && param(form, "client_id").as_deref() == Some(&client)
                        && param(form, "redirect_uri").as_deref() == Some(&redirect)
                }
                None => false,
            }
        }
        "refresh_token" => {
            let refresh = param(form, "refresh_token").unwrap_or_default();
            let known = s.refresh.contains(&refresh);
            s.refresh.retain(|r| *r != refresh);
            known
        }
        _ => false,
    };
    if !ok {
        return None;
    }
    let access = random("at");
    let refresh = random("rt");
    let life = s.token_life;
    s.access
        .insert(access.clone(), Instant::now() + Duration::from_secs(life));
    s.refresh.push(refresh.clone());
    s.issued.push(access.clone());
    s.issued_refresh.push(refresh.clone());
    Some(json!({
        "access_token": access,
        "token_type": "Bearer",
        "expires_in": life,
        "refresh_token": refresh,
        "scope": "mcp",
    }))
}

async fn mcp(stream: &mut TcpStream, request: &Request, origin: &str, state: &Mutex<State>) {
    let bearer = request
        .header("authorization")
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(String::from);
    let valid = bearer.as_ref().is_some_and(|token| {
        let s = state.lock().unwrap();
        s.access
            .get(token)
            .is_some_and(|until| Instant::now() < *until)
    });
    let Some(token) = bearer.filter(|_| valid) else {
        state.lock().unwrap().refused += 1;
        let challenge = format!(
            "Bearer resource_metadata=\"{origin}/.well-known/oauth-protected-resource/mcp\", scope=\"mcp\""
        );
        respond(
            stream,
            "401 Unauthorized",
            &[("www-authenticate", challenge)],
            b"",
        )
        .await;
        return;
    };
    state.lock().unwrap().accepted.push(token.clone());
    if request.method != "POST" {
        let status = if request.method == "DELETE" {
            "200 OK"
        } else {
            "405 Method Not Allowed"
        };
        respond(stream, status, &[], b"").await;
        return;
    }
    let message: Value = serde_json::from_slice(&request.body).unwrap_or_default();
    let Some(id) = message.get("id").cloned() else {
        respond(stream, "202 Accepted", &[], b"").await;
        return;
    };
    let result = match message["method"].as_str().unwrap_or_default() {
        "initialize" => json!({
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "guarded", "version": "1.0.0"},
        }),
        "tools/list" => json!({"tools": [{
            "name": "whoami",
            "description": "Says which bearer token it was called with.",
            "inputSchema": {"type": "object", "properties": {}},
        }]}),
        "tools/call" => {
            state.lock().unwrap().calls += 1;
            json!({"content": [{"type": "text", "text": format!("guarded ok; your token is {token}")}]})
        }
        _ => json!({}),
    };
    let reply = json!({"jsonrpc": "2.0", "id": id, "result": result});
    json_reply(stream, "200 OK", &reply).await;
}
