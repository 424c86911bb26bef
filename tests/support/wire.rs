//! Wire-fixture helpers shared by provider tests: loading the recorded streams, cutting them
//! into network chunks, and collecting a decoded stream into one comparable outcome.

use std::path::PathBuf;
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use futures_util::StreamExt;
use serde_json::json;
use taco::conversation::{Message, ToolSpec};
use taco::orchestrator::turn::{Turn, TurnAssembler};
use taco::provider::{ChatRequest, ChunkStream, Provider, ProviderError};

/// `tests/fixtures/wire` in the repository (a different corpus with `TACO_WIRE_FIXTURES`).
pub fn fixture_dir() -> PathBuf {
    match std::env::var_os("TACO_WIRE_FIXTURES") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/wire"),
    }
}

/// The bytes of one fixture file.
pub fn fixture(name: &str) -> Vec<u8> {
    let path = fixture_dir().join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// Fixture file names for which `keep` is true, sorted.
pub fn fixture_names(keep: impl Fn(&str) -> bool) -> Vec<String> {
    let dir = fixture_dir();
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut names: Vec<String> = entries
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|name| keep(name))
        .collect();
    names.sort();
    names
}

/// Cuts `bytes` after every blank line (`\n\n`), as servers write one event per flush.
pub fn split_events(bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut chunks = Vec::new();
    let mut start = 0;
    for i in 1..bytes.len() {
        if bytes[i] == b'\n' && bytes[i - 1] == b'\n' {
            chunks.push(bytes[start..=i].to_vec());
            start = i + 1;
        }
    }
    if start < bytes.len() {
        chunks.push(bytes[start..].to_vec());
    }
    chunks
}

/// Cuts `bytes` at the given offsets (unsorted, repeated and out-of-range ones allowed; a
/// repeated offset yields an empty chunk).
pub fn split_at(bytes: &Bytes, cuts: &[usize]) -> Vec<Bytes> {
    let mut cuts: Vec<usize> = cuts.iter().map(|&c| c.min(bytes.len())).collect();
    cuts.sort_unstable();
    let mut chunks = Vec::with_capacity(cuts.len() + 1);
    let mut start = 0;
    for cut in cuts {
        chunks.push(bytes.slice(start..cut));
        start = cut;
    }
    chunks.push(bytes.slice(start..));
    chunks
}

/// What a decoded stream amounted to: the assembled turn and the error that ended it, if any.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The assembled turn (what arrived before any error).
    pub turn: Turn,
    /// The error item, which must be the last item of the stream.
    pub error: Option<ProviderError>,
}

/// Drains a chunk stream; panics if anything follows an error.
pub async fn collect(mut stream: ChunkStream) -> Outcome {
    let mut assembler = TurnAssembler::new();
    let mut error = None;
    while let Some(item) = stream.next().await {
        assert!(
            error.is_none(),
            "an item followed the error {error:?}: {item:?}"
        );
        match item {
            Ok(chunk) => assembler.push(chunk),
            Err(e) => error = Some(e),
        }
    }
    Outcome {
        turn: assembler.finish(),
        error,
    }
}

/// Drains a stream that never waits (e.g. decoding in-memory bytes) without a runtime.
pub fn collect_now(mut stream: ChunkStream) -> Outcome {
    let mut cx = Context::from_waker(Waker::noop());
    let mut assembler = TurnAssembler::new();
    let mut error = None;
    loop {
        match stream.as_mut().poll_next(&mut cx) {
            Poll::Ready(Some(item)) => {
                assert!(
                    error.is_none(),
                    "an item followed the error {error:?}: {item:?}"
                );
                match item {
                    Ok(chunk) => assembler.push(chunk),
                    Err(e) => error = Some(e),
                }
            }
            Poll::Ready(None) => break,
            Poll::Pending => panic!("an in-memory stream should never be pending"),
        }
    }
    Outcome {
        turn: assembler.finish(),
        error,
    }
}

/// The one tool the wire tests offer.
pub fn weather_tool() -> Vec<ToolSpec> {
    vec![ToolSpec {
        name: "get_weather".into(),
        description: "Current weather for a city.".into(),
        parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}}),
    }]
}

/// Calls `provider` once; the future's error, or the collected stream.
pub async fn call_provider(
    provider: &dyn Provider,
    messages: &[Message],
    tools: &[ToolSpec],
) -> Result<Outcome, ProviderError> {
    let stream = provider
        .stream(ChatRequest {
            messages,
            tools,
            max_tokens: None,
        })
        .await?;
    Ok(collect(stream).await)
}

/// A fixture's name, its bytes and the outcome of decoding it unsplit.
pub type Baseline = (String, Bytes, Outcome);

/// Every fixture that `keep` selects, with its unsplit outcome from `decode_chunks`.
pub fn baselines_of(
    keep: impl Fn(&str) -> bool,
    decode_chunks: impl Fn(Vec<Bytes>) -> Outcome,
) -> Vec<Baseline> {
    fixture_names(keep)
        .into_iter()
        .map(|name| {
            let bytes = Bytes::from(fixture(&name));
            let outcome = decode_chunks(vec![bytes.clone()]);
            (name, bytes, outcome)
        })
        .collect()
}

/// Decoding every fixture one byte per read gives the same outcome as unsplit.
pub fn assert_one_byte_reads_match(
    baselines: &[Baseline],
    decode_chunks: impl Fn(Vec<Bytes>) -> Outcome,
) {
    for (name, bytes, baseline) in baselines {
        let chunks = (0..bytes.len()).map(|i| bytes.slice(i..i + 1)).collect();
        assert_eq!(&decode_chunks(chunks), baseline, "{name}");
    }
}
