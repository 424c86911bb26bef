//! Fuzzing every stream decoder (issue 9): the SSE framing ([`SseDecoder`]) and the Chat
//! Completions, Messages and Ollama NDJSON decoders with their turn assembly, fed arbitrary
//! bytes, a soup of the format's own tokens and mutated recorded fixtures, cut into reads at
//! arbitrary places. Every case checks: no panic; the stream ends, within a number of items
//! bounded by the input's size, with nothing after an error; the same items whatever the
//! reads; output and memory linear in the input (measured with a counting allocator). Nesting
//! 100,000 levels deep is checked explicitly for each decoder.
//!
//! `cargo test` runs a bounded number of cases (256 per property, `PROPTEST_CASES` overrides
//! it). For a longer run:
//! `PROPTEST_CASES=100000 cargo test --release --test fuzz_decoders --test fuzz_loaders`.

use crate::meter;
use crate::mutate;
use crate::support;

use std::sync::OnceLock;
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::{Value, json};
use support::wire::{fixture, fixture_names, split_at};
use taco::orchestrator::turn::TurnAssembler;
use taco::provider::sse::{SseDecoder, SseError};
use taco::provider::{Chunk, ChunkStream, ProviderError, anthropic, ollama, openai};

use mutate::Mutation;

/// Cases per property: `PROPTEST_CASES`, or `default` (proptest's own default would be 256).
fn config(default: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(default);
    ProptestConfig {
        cases,
        ..ProptestConfig::default()
    }
}

/// One of the three stream decoders.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Decoder {
    OpenAi,
    Anthropic,
    Ollama,
}

impl Decoder {
    fn decode(self, reads: Vec<Bytes>) -> ChunkStream {
        let reads = futures_util::stream::iter(reads.into_iter().map(Ok));
        match self {
            Self::OpenAi => openai::decode_stream(reads),
            Self::Anthropic => anthropic::decode_stream(reads),
            Self::Ollama => ollama::decode_stream(reads),
        }
    }

    /// Records end with this: an SSE event, an NDJSON line.
    fn separator(self) -> &'static [u8] {
        match self {
            Self::Ollama => b"\n",
            Self::OpenAi | Self::Anthropic => b"\n\n",
        }
    }

    /// The recorded streams of this format (see the wire tests for which is which).
    fn fixtures(self) -> &'static [Vec<u8>] {
        static ALL: OnceLock<[Vec<Vec<u8>>; 3]> = OnceLock::new();
        let all = ALL.get_or_init(|| {
            let load = |keep: fn(&str) -> bool| -> Vec<Vec<u8>> {
                fixture_names(keep).iter().map(|n| fixture(n)).collect()
            };
            [
                load(|n| {
                    n.ends_with(".sse")
                        && (!n.starts_with("anthropic_") || n.contains("openai_compat"))
                }),
                load(|n| {
                    n.ends_with(".sse")
                        && n.starts_with("anthropic_")
                        && !n.contains("openai_compat")
                }),
                load(|n| n.starts_with("ollama_") && n.ends_with(".ndjson")),
            ]
        });
        &all[self as usize]
    }

    /// Tokens of the format: its fixtures' lines and fields, JSON punctuation, framing.
    fn alphabet(self) -> &'static [&'static [u8]] {
        static ALL: OnceLock<[Vec<&'static [u8]>; 3]> = OnceLock::new();
        let all = ALL.get_or_init(|| {
            [Decoder::OpenAi, Decoder::Anthropic, Decoder::Ollama].map(|decoder| {
                let mut tokens: Vec<&'static [u8]> = COMMON.to_vec();
                for bytes in decoder.fixtures() {
                    for line in bytes.split_inclusive(|&b| b == b'\n') {
                        tokens.push(Vec::leak(line.to_vec()));
                    }
                }
                tokens
            })
        });
        &all[self as usize]
    }
}

/// Framing and JSON tokens every format's soup draws from.
const COMMON: [&[u8]; 33] = [
    b"data: ",
    b"data:",
    b"event: ",
    b"id: ",
    b"retry: 10",
    b": ping",
    b"\n",
    b"\n\n",
    b"\r",
    b"\r\n",
    b"\xEF\xBB\xBF",
    b"\xFF",
    b"[DONE]",
    b"{",
    b"}",
    b"[",
    b"]",
    b"\"",
    b":",
    b",",
    b"null",
    b"1e999",
    b"\"choices\":[{\"delta\":{",
    b"\"content\":\"x\"",
    b"\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\"}}]",
    b"\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\"",
    b"\"type\":\"content_block_delta\",\"delta\":{\"type\":\"input_json_delta\"",
    b"\"type\":\"message_stop\"",
    b"\"type\":\"error\",\"error\":{\"message\":\"m\"}",
    b"\"message\":{\"content\":\"x\",\"tool_calls\":[{\"function\":{\"arguments\":{}}}]}",
    b"\"done\":true",
    b"\"error\":\"boom\"",
    b"\"finish_reason\":\"stop\"",
];

/// A soup of `decoder`'s tokens and random bytes.
fn soup(decoder: Decoder) -> impl Strategy<Value = Vec<u8>> {
    // The framing tokens alone, or they would drown among the fixtures' many lines.
    let token = prop_oneof![
        2 => prop::sample::select(&COMMON[..]).prop_map(<[u8]>::to_vec),
        2 => prop::sample::select(decoder.alphabet()).prop_map(<[u8]>::to_vec),
        1 => prop::collection::vec(any::<u8>(), 1..8),
    ];
    prop::collection::vec(token, 0..64).prop_map(|tokens| tokens.concat())
}

/// A fixture of `decoder` with one to four mutations.
fn mutated(decoder: Decoder) -> impl Strategy<Value = Vec<u8>> {
    let mutations = prop::collection::vec(mutate::mutation(decoder.alphabet()), 1..5);
    (any::<Index>(), mutations).prop_map(move |(which, mutations): (Index, Vec<Mutation>)| {
        let input = which.get(decoder.fixtures());
        mutate::apply(input, &mutations, decoder.separator())
    })
}

/// What one decode produced.
#[derive(Debug, Clone, PartialEq)]
struct Outcome {
    items: Vec<Result<Chunk, ProviderError>>,
}

/// Bytes of text a chunk carries.
fn text_len(chunk: &Chunk) -> usize {
    match chunk {
        Chunk::Text(t) | Chunk::Reasoning(t) | Chunk::Finish(t) | Chunk::ReasoningSignature(t) => {
            t.len()
        }
        Chunk::ToolCall(call) => {
            call.arguments.len()
                + call.id.as_ref().map_or(0, String::len)
                + call.name.as_ref().map_or(0, String::len)
        }
        Chunk::Usage(_) | Chunk::Timings(_) => 0,
    }
}

/// Decodes `reads`, checking as it goes that the stream never waits, ends within a bounded
/// number of items, and has nothing after an error.
fn decode(decoder: Decoder, reads: Vec<Bytes>) -> Result<Outcome, TestCaseError> {
    let len: usize = reads.iter().map(Bytes::len).sum();
    let mut stream = decoder.decode(reads);
    let mut cx = Context::from_waker(Waker::noop());
    let mut items = Vec::new();
    loop {
        match stream.as_mut().poll_next(&mut cx) {
            Poll::Ready(Some(item)) => {
                let after_error = items.last().is_some_and(|i: &Result<_, _>| i.is_err());
                prop_assert!(!after_error, "{item:?} after an error: {items:?}");
                items.push(item);
                // Every item comes from bytes of its own; the end adds at most a few.
                prop_assert!(
                    items.len() <= len + 8,
                    "{} items from {len} bytes",
                    items.len()
                );
            }
            Poll::Ready(None) => break,
            Poll::Pending => prop_assert!(false, "in-memory reads are never pending"),
        }
    }
    Ok(Outcome { items })
}

/// The checks every input gets; `cuts` split it into reads.
fn check(decoder: Decoder, input: &[u8], cuts: &Cuts) -> Result<(), TestCaseError> {
    let bytes = Bytes::copy_from_slice(input);
    let whole = decode(decoder, vec![bytes.clone()])?;
    let cuts = cuts.offsets(bytes.len());
    let split = decode(decoder, split_at(&bytes, &cuts))?;
    prop_assert_eq!(&whole, &split, "the reads changed the outcome");

    // Output: U+FFFD for one invalid byte is 3 bytes, and re-encoded JSON (whole tool calls)
    // can spell a number longer (`1e15` is `1000000000000000.0`): a few times the input.
    let text: usize = whole.items.iter().flatten().map(text_len).sum();
    prop_assert!(
        text <= 4 * input.len() + 64,
        "{text} bytes of text from {}",
        input.len()
    );

    // Memory while decoding (reads are shared, chunks dropped as they come): parsed structs
    // are bigger than their JSON, so a constant factor of the input, never more.
    // The reads are made before measuring: one `Bytes` a byte is the test's memory, not the
    // decoder's.
    let reads = split_at(&bytes, &cuts);
    let (_, peak) = meter::peak(|| {
        let mut stream = decoder.decode(reads);
        let mut cx = Context::from_waker(Waker::noop());
        while let Poll::Ready(Some(_)) = stream.as_mut().poll_next(&mut cx) {}
    });
    prop_assert!(
        peak <= 32 * input.len() + (64 << 10),
        "{peak} bytes held for {}",
        input.len()
    );

    // Turn assembly takes whatever the decoder let through.
    let mut turn = TurnAssembler::new();
    for chunk in whole.items.into_iter().flatten() {
        turn.push(chunk);
    }
    let turn = turn.finish();
    prop_assert!(turn.content.len() + turn.reasoning.len() <= text);
    Ok(())
}

/// The SSE framing alone: the same events whatever the reads, and bounded buffers.
fn check_sse(input: &[u8], cuts: &Cuts) -> Result<(), TestCaseError> {
    let events = |reads: &[&[u8]]| -> Result<Vec<String>, TestCaseError> {
        let mut decoder = SseDecoder::new();
        let mut events = Vec::new();
        for read in reads {
            decoder.push(read);
            while let Some(event) = decoder.next_event().map_err(unexpected)? {
                prop_assert!(event.data.len() <= 3 * input.len());
                events.push(format!(
                    "{:?}|{:?}|{:?}|{:?}",
                    event.event, event.data, event.id, event.retry
                ));
            }
            prop_assert!(
                decoder.buffered() <= 6 * input.len() + 64,
                "{}",
                decoder.buffered()
            );
        }
        let tail = decoder.finish().map_err(unexpected)?;
        events.push(format!("{:?}|{}", tail.pending, tail.partial_line));
        Ok(events)
    };
    let mut cuts = cuts.offsets(input.len());
    cuts.sort_unstable();
    let mut reads = Vec::new();
    let mut start = 0;
    for cut in cuts {
        reads.push(&input[start..cut]);
        start = cut;
    }
    reads.push(&input[start..]);
    prop_assert_eq!(events(&[input])?, events(&reads)?);
    Ok(())
}

/// No bound can break on inputs this small.
fn unexpected(error: SseError) -> TestCaseError {
    TestCaseError::fail(format!("a bound broke on a small input: {error}"))
}

/// Where an input is cut into reads.
#[derive(Debug, Clone)]
enum Cuts {
    /// At a few arbitrary places.
    At(Vec<Index>),
    /// Into reads of this many bytes (1: every byte its own read).
    Every(usize),
}

impl Cuts {
    /// The cut offsets for an input of `len` bytes.
    fn offsets(&self, len: usize) -> Vec<usize> {
        match self {
            Self::At(cuts) => cuts.iter().map(|c| c.index(len + 1)).collect(),
            Self::Every(n) => (1..len).step_by(*n).collect(),
        }
    }
}

fn cuts() -> impl Strategy<Value = Cuts> {
    prop_oneof![
        3 => prop::collection::vec(any::<Index>(), 0..16).prop_map(Cuts::At),
        1 => (1..4usize).prop_map(Cuts::Every),
    ]
}

fn bytes() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..2048)
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn sse_framing_arbitrary_bytes(input in bytes(), cuts in cuts()) {
        check_sse(&input, &cuts)?;
    }

    #[test]
    fn sse_framing_token_soup(input in soup(Decoder::OpenAi), cuts in cuts()) {
        check_sse(&input, &cuts)?;
    }

    #[test]
    fn sse_framing_mutated_fixtures(
        input in prop_oneof![mutated(Decoder::OpenAi), mutated(Decoder::Anthropic)],
        cuts in cuts(),
    ) {
        check_sse(&input, &cuts)?;
    }

    #[test]
    fn openai_arbitrary_bytes(input in bytes(), cuts in cuts()) {
        check(Decoder::OpenAi, &input, &cuts)?;
    }

    #[test]
    fn openai_token_soup(input in soup(Decoder::OpenAi), cuts in cuts()) {
        check(Decoder::OpenAi, &input, &cuts)?;
    }

    #[test]
    fn openai_mutated_fixtures(input in mutated(Decoder::OpenAi), cuts in cuts()) {
        check(Decoder::OpenAi, &input, &cuts)?;
    }

    #[test]
    fn anthropic_arbitrary_bytes(input in bytes(), cuts in cuts()) {
        check(Decoder::Anthropic, &input, &cuts)?;
    }

    #[test]
    fn anthropic_token_soup(input in soup(Decoder::Anthropic), cuts in cuts()) {
        check(Decoder::Anthropic, &input, &cuts)?;
    }

    #[test]
    fn anthropic_mutated_fixtures(input in mutated(Decoder::Anthropic), cuts in cuts()) {
        check(Decoder::Anthropic, &input, &cuts)?;
    }

    #[test]
    fn ollama_arbitrary_bytes(input in bytes(), cuts in cuts()) {
        check(Decoder::Ollama, &input, &cuts)?;
    }

    #[test]
    fn ollama_token_soup(input in soup(Decoder::Ollama), cuts in cuts()) {
        check(Decoder::Ollama, &input, &cuts)?;
    }

    #[test]
    fn ollama_mutated_fixtures(input in mutated(Decoder::Ollama), cuts in cuts()) {
        check(Decoder::Ollama, &input, &cuts)?;
    }
}

// ---- Deep nesting: serde_json's recursion limit (128) turns it into a clean error.

/// `[[[…]]]`, 100,000 levels deep.
fn deep() -> String {
    format!("{}{}", "[".repeat(100_000), "]".repeat(100_000))
}

/// Decodes one input whole and returns its items.
fn decode_whole(decoder: Decoder, input: String) -> Vec<Result<Chunk, ProviderError>> {
    let outcome = decode(decoder, vec![Bytes::from(input)]);
    outcome.map(|o| o.items).unwrap_or_else(|e| panic!("{e}"))
}

/// The stream ended with a `Malformed` error that says `why`.
fn assert_malformed(items: &[Result<Chunk, ProviderError>], why: &str) {
    match items.last() {
        Some(Err(ProviderError::Malformed(message))) => {
            assert!(message.contains(why), "{message}");
        }
        other => panic!("expected a malformed-stream error, got {other:?}"),
    }
}

const TOO_DEEP: &str = "recursion limit exceeded";

#[test]
fn deep_nesting_in_an_sse_data_line_is_a_clean_error() {
    let deep = deep();
    let sse = |json: String| format!("data: {json}\n\n");
    for decoder in [Decoder::OpenAi, Decoder::Anthropic] {
        // A whole event that is an array is the wrong type before it is too deep.
        assert_malformed(&decode_whole(decoder, sse(deep.clone())), "invalid type");
        let error = format!("{{\"type\":\"error\",\"error\":{deep}}}");
        assert_malformed(&decode_whole(decoder, sse(error)), TOO_DEEP);
        // Unknown fields are skipped without recursing: the event is harmless.
        let unknown = format!("{{\"type\":\"ping\",\"future\":{deep}}}");
        let items = decode_whole(decoder, sse(unknown));
        assert!(
            matches!(items[..], [Err(ProviderError::Truncated { .. })]),
            "{items:?}"
        );
    }
    let input = format!(
        "{{\"type\":\"content_block_start\",\"index\":0,\"content_block\":\
         {{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"n\",\"input\":{deep}}}}}"
    );
    assert_malformed(&decode_whole(Decoder::Anthropic, sse(input)), TOO_DEEP);
}

#[test]
fn deep_nesting_in_an_ollama_line_is_a_clean_error() {
    let deep = deep();
    assert_malformed(
        &decode_whole(Decoder::Ollama, format!("{deep}\n")),
        "invalid type",
    );
    let items = decode_whole(Decoder::Ollama, format!("{{\"future\":{deep}}}\n"));
    assert!(
        matches!(items[..], [Err(ProviderError::Truncated { .. })]),
        "{items:?}"
    );
    for line in [
        format!("{{\"error\":{deep}}}\n"),
        format!(
            "{{\"message\":{{\"tool_calls\":[{{\"function\":{{\"name\":\"n\",\"arguments\":{deep}}}}}]}}}}\n"
        ),
    ] {
        assert_malformed(&decode_whole(Decoder::Ollama, line), TOO_DEEP);
    }
}

#[test]
fn deep_nesting_in_tool_arguments_text_stays_text_in_the_turn() {
    let deep = deep();
    let event = json!({"choices": [{"delta": {"tool_calls": [
        {"index": 0, "id": "c", "function": {"name": "n", "arguments": deep}}]}}]});
    let items = decode_whole(
        Decoder::OpenAi,
        format!("data: {event}\n\ndata: [DONE]\n\n"),
    );
    let mut turn = TurnAssembler::new();
    for item in items {
        turn.push(item.unwrap_or_else(|e| panic!("{e}")));
    }
    let turn = turn.finish();
    // Too deep to parse: kept as the text the model sent, for validation to report.
    assert_eq!(turn.tool_calls[0].arguments, Value::String(deep));
}
