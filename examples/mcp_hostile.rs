//! A hostile MCP server for taco's tests (issue 28.1): plain JSON-RPC lines on stdio, each
//! mode one way a server can try to exhaust its client. `mcp_hostile MODE [N]`:
//!
//! - `pages`: `tools/list` never ends (every page has a next cursor).
//! - `relist-pages`: lists one tool, `trigger`; calling it says the list changed, and every
//!   later `tools/list` never ends.
//! - `stderr-line`: one endless stderr line (no newline), while serving `echo`.
//! - `progress`: `flood` sends N (default 100,000) progress notifications, then answers.
//! - `log`: `flood` sends N log messages and N stderr lines, then answers.
//! - `tools`: lists N tools (default 10,000), 500 a page.
//! - `huge-line`: answers `tools/list` with one 64 MB line.
//! - `schema`: lists `fine`, `deep` (a schema nested 60 levels) and `big` (a 100 KB schema).
//! - `stall`: never answers `tools/list`.

use std::io::{BufRead, Write};
use std::process::ExitCode;

use serde_json::{Value, json};

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_default();
    let n: usize = args
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(match mode.as_str() {
            "tools" => 10_000,
            _ => 100_000,
        });
    let known = [
        "pages",
        "relist-pages",
        "stderr-line",
        "progress",
        "log",
        "tools",
        "huge-line",
        "schema",
        "stall",
    ];
    if !known.contains(&mode.as_str()) {
        eprintln!("usage: mcp_hostile {} [N]", known.join("|"));
        return ExitCode::from(2);
    }
    if mode == "stderr-line" {
        std::thread::spawn(|| {
            let chunk = vec![b'x'; 64 * 1024];
            let mut err = std::io::stderr().lock();
            while err.write_all(&chunk).is_ok() {}
        });
    }
    let mut server = Server {
        mode,
        n,
        listed: 0,
        out: std::io::stdout().lock(),
    };
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if server.handle(&message).is_err() {
            break;
        }
    }
    ExitCode::SUCCESS
}

struct Server {
    mode: String,
    n: usize,
    listed: usize,
    out: std::io::StdoutLock<'static>,
}

fn tool(name: &str, schema: Value) -> Value {
    json!({"name": name, "description": format!("The tool {name}."), "inputSchema": schema})
}

fn empty() -> Value {
    json!({"type": "object", "properties": {}})
}

impl Server {
    fn send(&mut self, message: &Value) -> std::io::Result<()> {
        writeln!(self.out, "{message}")?;
        self.out.flush()
    }

    fn reply(&mut self, id: &Value, result: Value) -> std::io::Result<()> {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}))
    }

    fn notify(&mut self, method: &str, params: Value) -> std::io::Result<()> {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
    }

    fn handle(&mut self, message: &Value) -> std::io::Result<()> {
        let Some(id) = message.get("id").cloned() else {
            return Ok(()); // a notification
        };
        let params = &message["params"];
        match message["method"].as_str().unwrap_or_default() {
            "initialize" => {
                let version = params["protocolVersion"].as_str().unwrap_or("2025-06-18");
                self.reply(
                    &id,
                    json!({
                        "protocolVersion": version,
                        "capabilities": {"tools": {"listChanged": true}, "logging": {}},
                        "serverInfo": {"name": "hostile", "version": "1"}
                    }),
                )
            }
            "tools/list" => self.list(&id, params),
            "tools/call" => self.call(&id, params),
            "ping" => self.reply(&id, json!({})),
            _ => self.send(&json!({
                "jsonrpc": "2.0", "id": id,
                "error": {"code": -32601, "message": "method not found"}
            })),
        }
    }

    fn list(&mut self, id: &Value, params: &Value) -> std::io::Result<()> {
        self.listed += 1;
        let cursor: usize = params["cursor"]
            .as_str()
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        let endless = |at: usize| json!({"tools": [tool(&format!("t{at}"), empty())], "nextCursor": (at + 1).to_string()});
        let page = match self.mode.as_str() {
            "pages" => endless(cursor),
            "relist-pages" if self.listed == 1 => json!({"tools": [tool("trigger", empty())]}),
            "relist-pages" => endless(cursor),
            "tools" => {
                let end = (cursor + 500).min(self.n);
                let tools: Vec<Value> = (cursor..end)
                    .map(|i| tool(&format!("tool_{i}"), empty()))
                    .collect();
                let mut page = json!({"tools": tools});
                if end < self.n {
                    page["nextCursor"] = json!(end.to_string());
                }
                page
            }
            "huge-line" => {
                let description = "x".repeat(64 * 1024 * 1024);
                json!({"tools": [{"name": "huge", "description": description, "inputSchema": empty()}]})
            }
            "schema" => {
                let mut deep = json!({"type": "string"});
                // Deeper than taco's bound, within serde_json's own limit of 128.
                for _ in 0..60 {
                    deep = json!({"type": "object", "properties": {"a": deep}});
                }
                let properties: serde_json::Map<String, Value> = (0..2_000)
                    .map(|i| {
                        (
                            format!("field_{i:04}"),
                            json!({"type": "string", "description": "a field of a big schema"}),
                        )
                    })
                    .collect();
                json!({"tools": [
                    tool("fine", empty()),
                    tool("deep", deep),
                    tool("big", json!({"type": "object", "properties": properties})),
                ]})
            }
            "stall" => return Ok(()),
            _ => json!({"tools": [tool("echo", empty()), tool("flood", empty())]}),
        };
        self.reply(id, page)
    }

    fn call(&mut self, id: &Value, params: &Value) -> std::io::Result<()> {
        let token = params["_meta"]["progressToken"].clone();
        match (self.mode.as_str(), params["name"].as_str()) {
            ("relist-pages", Some("trigger")) => {
                self.notify("notifications/tools/list_changed", json!({}))?;
            }
            ("progress", Some("flood")) => {
                for i in 0..self.n {
                    self.notify(
                        "notifications/progress",
                        json!({"progressToken": token, "progress": i, "total": self.n, "message": format!("step {i}")}),
                    )?;
                }
            }
            ("log", Some("flood")) => {
                let mut err = std::io::stderr().lock();
                for i in 0..self.n {
                    self.notify(
                        "notifications/message",
                        json!({"level": "info", "data": format!("log line {i} of a flood")}),
                    )?;
                    let _ = writeln!(err, "stderr line {i} of a flood");
                }
            }
            _ => {}
        }
        self.reply(
            id,
            json!({"content": [{"type": "text", "text": "done"}], "isError": false}),
        )
    }
}
