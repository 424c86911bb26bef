//! taco as an ACP client (issue 32): what one `session/update` costs to become taco's events
//! (a text chunk; a tool call's announce, progress and end), and how many updates a second go
//! from an agent's pipe through the connection, the engine and the recorder to the screen's
//! channel (10,000 text chunks, in memory, the session recorded nowhere).
//!
//!   cargo bench --bench acp_client
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed run

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use agent_client_protocol::v1::schema::SessionUpdate;
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use taco::acp::client::{self, translate::Translator};
use taco::engine::{Engine, next_event};
use taco::orchestrator::task::Op;
use taco::recorder::Recorder;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

fn update(value: &Value) -> SessionUpdate {
    serde_json::from_value(value.clone()).unwrap()
}

fn translate(c: &mut Criterion) {
    let chunk = json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "some words of an answer "}});
    let call = json!({"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Read src/main.rs", "kind": "read", "status": "pending", "rawInput": {"path": "src/main.rs"}});
    let running =
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "in_progress"});
    let done = json!({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed", "content": [{"type": "content", "content": {"type": "text", "text": "fn main() {}"}}]});
    let parsed = [update(&call), update(&running), update(&done)];
    let chunk_parsed = update(&chunk);
    c.bench_function("acp_translate_text_chunk", |b| {
        let mut t = Translator::new("agent", Path::new("/w"));
        t.start("x", 1000);
        let mut n = 0u64;
        b.iter(|| {
            n += 1;
            // A new run now and then, so the kept text stays under its bound.
            if n.is_multiple_of(10_000) {
                t.start("x", 1000);
            }
            black_box(t.update(&chunk_parsed, chunk.clone(), n))
        });
    });
    c.bench_function("acp_translate_tool_call_cycle", |b| {
        let mut t = Translator::new("agent", Path::new("/w"));
        b.iter(|| {
            t.start("x", 1000);
            for (parsed, raw) in parsed.iter().zip([&call, &running, &done]) {
                black_box(t.update(parsed, raw.clone(), 1));
            }
        });
    });
}

/// An agent that answers initialize, session/new and the prompt with `chunks` text chunks.
async fn flood(read: tokio::io::DuplexStream, mut write: tokio::io::DuplexStream, chunks: usize) {
    let mut lines = BufReader::new(read).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let message: Value = serde_json::from_str(&line).unwrap();
        let id = message["id"].clone();
        let reply = match message["method"].as_str() {
            Some("initialize") => json!({"protocolVersion": 1, "agentCapabilities": {}}),
            Some("session/new") => json!({"sessionId": "s1"}),
            Some("session/prompt") => {
                let mut out = String::new();
                for i in 0..chunks {
                    let update = json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1", "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": format!("{i} ")}}}});
                    out.push_str(&update.to_string());
                    out.push('\n');
                }
                write.write_all(out.as_bytes()).await.unwrap();
                json!({"stopReason": "end_turn"})
            }
            _ => continue,
        };
        let response = json!({"jsonrpc": "2.0", "id": id, "result": reply});
        write
            .write_all(format!("{response}\n").as_bytes())
            .await
            .unwrap();
    }
}

fn throughput(c: &mut Criterion) {
    const CHUNKS: usize = 10_000;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("acp_engine");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    group.bench_function("10k_text_chunks_to_the_screen", |b| {
        b.iter_custom(|iters| {
            runtime.block_on(async {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let (client_read, agent_write) = tokio::io::duplex(1 << 16);
                    let (agent_read, client_write) = tokio::io::duplex(1 << 16);
                    tokio::spawn(flood(agent_read, agent_write, CHUNKS));
                    let mut engine = client::connect(
                        "bench",
                        std::env::temp_dir(),
                        client_read,
                        client_write,
                        Recorder::default(),
                        client::Options {
                            init_wait: Duration::from_secs(5),
                            ..client::Options::default()
                        },
                    );
                    let started = Instant::now();
                    engine.send(Op::Submit("go".into()));
                    while let Some(event) = next_event(&mut engine).await {
                        if event.kind() == "final" {
                            break;
                        }
                    }
                    total += started.elapsed();
                    Box::new(engine).shutdown(Duration::from_secs(1)).await;
                }
                total
            })
        });
    });
    group.finish();
}

criterion_group!(benches, translate, throughput);
criterion_main!(benches);
