//! DESIGN §10: SSE decode + turn assembly must reach 150 MB/s on one core.
//! The workload is the reference reply: 20,000 Chat Completions events, one token each.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use std::hint::black_box;

use bytes::Bytes;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use futures_util::StreamExt;
use futures_util::stream;
use taco::orchestrator::turn::TurnAssembler;
use taco::provider::openai::decode_stream;

fn reference_stream() -> Vec<u8> {
    let words = ["alpha ", "beta ", "gamma ", "delta ", "eps "];
    let mut out = Vec::new();
    for i in 0..20_000 {
        let event = serde_json::json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": [{"index": 0, "delta": {"content": words[i % words.len()]}, "finish_reason": null}]});
        out.extend_from_slice(format!("data: {event}\n\n").as_bytes());
    }
    out.extend_from_slice(
        b"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
    );
    out.extend_from_slice(
        b"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":20000}}\n\n",
    );
    out.extend_from_slice(b"data: [DONE]\n\n");
    out
}

/// Splits into socket-read-sized pieces (`per` events each).
fn reads(bytes: &[u8], per: usize) -> Vec<Bytes> {
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut seen = 0;
    for (i, pair) in bytes.windows(2).enumerate() {
        if pair == b"\n\n" {
            seen += 1;
            if seen % per == 0 {
                pieces.push(Bytes::copy_from_slice(&bytes[start..i + 2]));
                start = i + 2;
            }
        }
    }
    if start < bytes.len() {
        pieces.push(Bytes::copy_from_slice(&bytes[start..]));
    }
    pieces
}

fn assemble(runtime: &tokio::runtime::Runtime, pieces: &[Bytes]) -> usize {
    runtime.block_on(async {
        // decode_stream wants an owned ('static) stream; cloning Bytes only bumps refcounts.
        let owned: Vec<Bytes> = pieces.to_vec();
        let input = stream::iter(owned.into_iter().map(Ok));
        let mut decoded = decode_stream(input);
        let mut turn = TurnAssembler::new();
        while let Some(chunk) = decoded.next().await {
            turn.push(chunk.expect("valid stream"));
        }
        turn.finish().content.len()
    })
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let bytes = reference_stream();
    let mut group = c.benchmark_group("sse_decode_and_assemble");
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    for per in [1, 64] {
        let pieces = reads(&bytes, per);
        assert_eq!(assemble(&runtime, &pieces), 108_000 / 1000 * 1000);
        group.bench_function(format!("{per}_events_per_read"), |b| {
            b.iter(|| black_box(assemble(&runtime, &pieces)))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
