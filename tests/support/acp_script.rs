//! A scripted ACP agent for the client's tests (issue 32): it speaks raw JSON-RPC lines over
//! any byte stream, so it can also misbehave (malformed lines, a line over the bound, dying
//! mid-prompt, never answering). Its steps come from a JSONL file (`tests/fixtures/acp/`):
//!
//! - `{"expect": METHOD, "reply"?: RESULT}`: waits for a request (or notification) of the
//!   client's; answers a request with `reply`, or a default (`initialize`, `session/new`); a
//!   `session/prompt` is answered later by `end`.
//! - `{"update": UPDATE}`: a `session/update` of session `s1`.
//! - `{"ask": {"toolCall": …, "options": […]}}`: a `session/request_permission`; waits for
//!   the answer.
//! - `{"write_file": {"path", "content"}}` / `{"read_file": {"path"}}`: an `fs/*` request;
//!   waits for the answer.
//! - `{"request": METHOD, "params": P}`: any request of the agent's (`terminal/*`), with
//!   `sessionId` added and a `terminalId` of `"$last"` replaced by the one the last
//!   `terminal/create` got; waits for the answer.
//! - `{"sleep_ms": N}`: waits that long.
//! - `{"end": STOP_REASON}`: answers the prompt.
//! - `{"raw": TEXT}`: writes TEXT and a newline as they are; `{"long": BYTES}` writes one line
//!   of that many bytes.
//! - `{"exit": true}`: the agent is gone (its streams close); `{"hang": true}`: it reads on
//!   and never writes again.
//!
//! Everything the client sent is kept in [`Script::seen`], for the test to check.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};

/// What the client sent, in order, and how many updates the agent has written.
#[derive(Clone, Default)]
pub struct Seen(Arc<Mutex<Vec<Value>>>, Arc<std::sync::atomic::AtomicUsize>);

impl Seen {
    /// The `session/update`s written so far (a write the client does not read waits).
    pub fn updates_sent(&self) -> usize {
        self.1.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// The messages so far.
    pub fn all(&self) -> Vec<Value> {
        self.0.lock().unwrap().clone()
    }

    /// The results of the client's responses to our requests (permission answers, file
    /// results), in order.
    pub fn answers(&self) -> Vec<Value> {
        self.all()
            .into_iter()
            .filter(|m| m.get("method").is_none())
            .collect()
    }

    fn push(&self, message: Value) {
        self.0.lock().unwrap().push(message);
    }
}

/// The steps of a fixture file, `{workdir}` in it replaced by `workdir`.
pub fn steps(fixture: &str, workdir: &std::path::Path) -> Vec<Value> {
    let path = format!(
        "{}/tests/fixtures/acp/{fixture}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let text = text.replace("{workdir}", &workdir.display().to_string());
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{path}: {e}: {l}")))
        .collect()
}

/// The two ends: the client's (read, write) and the running agent's record.
pub struct Script {
    /// The client reads the agent's lines here.
    pub client_read: DuplexStream,
    /// The client writes its lines here.
    pub client_write: DuplexStream,
    /// What the client sent.
    pub seen: Seen,
}

/// Starts the agent of `steps` on the current runtime.
pub fn start(steps: Vec<Value>) -> Script {
    let (client_read, agent_write) = tokio::io::duplex(1 << 16);
    let (agent_read, client_write) = tokio::io::duplex(1 << 16);
    let seen = Seen::default();
    tokio::spawn(run(steps, agent_read, agent_write, seen.clone()));
    Script {
        client_read,
        client_write,
        seen,
    }
}

async fn run(steps: Vec<Value>, read: DuplexStream, mut write: DuplexStream, seen: Seen) {
    let mut lines = BufReader::new(read).lines();
    let mut prompt_id = Value::Null;
    let mut asked = 0;
    let mut terminal = Value::Null;
    for step in steps {
        if let Some(method) = step.get("expect").and_then(Value::as_str) {
            let Some(message) = next_of(&mut lines, &seen, |m| m["method"] == method).await else {
                return;
            };
            if method == "session/prompt" {
                prompt_id = message["id"].clone();
                continue;
            }
            if message.get("id").is_none() {
                continue;
            }
            if let Some(error) = step.get("error") {
                send(
                    &mut write,
                    json!({"jsonrpc": "2.0", "id": message["id"], "error": error}),
                )
                .await;
                continue;
            }
            let reply = step.get("reply").cloned().unwrap_or_else(|| match method {
                "initialize" => json!({"protocolVersion": 1, "agentCapabilities": {},
                                       "agentInfo": {"name": "scripted", "version": "1.0"}}),
                "session/new" => json!({"sessionId": "s1"}),
                _ => json!({}),
            });
            send(
                &mut write,
                json!({"jsonrpc": "2.0", "id": message["id"], "result": reply}),
            )
            .await;
        } else if let Some(update) = step.get("update") {
            let params = json!({"sessionId": "s1", "update": update});
            seen.1.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            send(
                &mut write,
                json!({"jsonrpc": "2.0", "method": "session/update", "params": params}),
            )
            .await;
        } else if let Some(ask) = step.get("ask") {
            asked += 1;
            let id = format!("ask-{asked}");
            let mut params = ask.clone();
            params["sessionId"] = json!("s1");
            send(&mut write, json!({"jsonrpc": "2.0", "id": id, "method": "session/request_permission", "params": params})).await;
            if next_of(&mut lines, &seen, |m| {
                m["id"] == id && m.get("method").is_none()
            })
            .await
            .is_none()
            {
                return;
            }
        } else if let Some(file) = step.get("write_file").or(step.get("read_file")) {
            asked += 1;
            let id = format!("fs-{asked}");
            let method = if step.get("write_file").is_some() {
                "fs/write_text_file"
            } else {
                "fs/read_text_file"
            };
            let mut params = file.clone();
            params["sessionId"] = json!("s1");
            send(
                &mut write,
                json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
            )
            .await;
            if next_of(&mut lines, &seen, |m| {
                m["id"] == id && m.get("method").is_none()
            })
            .await
            .is_none()
            {
                return;
            }
        } else if let Some(method) = step.get("request").and_then(Value::as_str) {
            asked += 1;
            let id = format!("req-{asked}");
            let mut params = step.get("params").cloned().unwrap_or_else(|| json!({}));
            params["sessionId"] = json!("s1");
            if params.get("terminalId") == Some(&json!("$last")) {
                params["terminalId"] = terminal.clone();
            }
            send(
                &mut write,
                json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
            )
            .await;
            let Some(answer) = next_of(&mut lines, &seen, |m| {
                m["id"] == id && m.get("method").is_none()
            })
            .await
            else {
                return;
            };
            if let Some(made) = answer.pointer("/result/terminalId") {
                terminal = made.clone();
            }
        } else if let Some(ms) = step.get("sleep_ms").and_then(Value::as_u64) {
            tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
        } else if let Some(stop) = step.get("end") {
            send(
                &mut write,
                json!({"jsonrpc": "2.0", "id": prompt_id, "result": {"stopReason": stop}}),
            )
            .await;
        } else if let Some(raw) = step.get("raw").and_then(Value::as_str) {
            let _ = write.write_all(format!("{raw}\n").as_bytes()).await;
        } else if let Some(bytes) = step.get("long").and_then(Value::as_u64) {
            let line = vec![b'x'; bytes as usize];
            let _ = write.write_all(&line).await;
            let _ = write.write_all(b"\n").await;
        } else if step.get("exit").is_some() {
            return;
        } else if step.get("hang").is_some() {
            while next_of(&mut lines, &seen, |_| false).await.is_some() {}
            return;
        } else {
            panic!("unknown step {step}");
        }
    }
    // Script done: the agent stays, reading, until the client goes.
    while next_of(&mut lines, &seen, |_| false).await.is_some() {}
}

/// The next message of the client that `wanted` picks (the others are kept, not answered);
/// `None` once the client is gone.
async fn next_of(
    lines: &mut tokio::io::Lines<BufReader<DuplexStream>>,
    seen: &Seen,
    wanted: impl Fn(&Value) -> bool,
) -> Option<Value> {
    while let Ok(Some(line)) = lines.next_line().await {
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        seen.push(message.clone());
        if wanted(&message) {
            return Some(message);
        }
    }
    None
}

async fn send(write: &mut DuplexStream, message: Value) {
    let _ = write.write_all(format!("{message}\n").as_bytes()).await;
    let _ = write.flush().await;
}
