//! Fuzzing the loaders (issue 9): session and trace files (`session::load`, the listing,
//! finding and resuming) and the config parser (`config::parse_config`), fed arbitrary
//! bytes, a soup of their own tokens and mutated real inputs: a session written by
//! `SessionWriter` here, and `config.example.toml`. Every case checks: no panic, and either a
//! result (with at most a screenful of warnings) or an error that names the file. Nesting
//! 100,000 levels deep is checked explicitly.
//!
//! `cargo test` runs a bounded number of cases (256 per property, `PROPTEST_CASES` overrides
//! it). For a longer run:
//! `PROPTEST_CASES=100000 cargo test --release --test fuzz_decoders --test fuzz_loaders`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use crate::meter;
use crate::mutate;

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use proptest::prelude::*;
use serde_json::json;
use taco::config::parse_config;
use taco::conversation::{Message, ToolCall, Usage};
use taco::event::{DeltaKind, Event, EventData, LlmCall};
use taco::session::{self, SessionWriter};

use mutate::Mutation;

/// Cases per property: `PROPTEST_CASES`, or `default`.
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

fn bytes() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..2048)
}

/// Tokens and random bytes, concatenated.
fn soup(alphabet: &'static [&'static [u8]]) -> impl Strategy<Value = Vec<u8>> {
    let token = prop_oneof![
        4 => prop::sample::select(alphabet).prop_map(<[u8]>::to_vec),
        1 => prop::collection::vec(any::<u8>(), 1..8),
    ];
    prop::collection::vec(token, 0..64).prop_map(|tokens| tokens.concat())
}

/// `input` with one to four mutations; records are lines.
fn mutated(
    input: &'static [u8],
    alphabet: &'static [&'static [u8]],
) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(mutate::mutation(alphabet), 1..5)
        .prop_map(move |mutations: Vec<Mutation>| mutate::apply(input, &mutations, b"\n"))
}

/// Every line of `texts`, and `extra`, as tokens.
fn alphabet_of(texts: &[&[u8]], extra: &[&'static [u8]]) -> Vec<&'static [u8]> {
    let mut tokens = extra.to_vec();
    for text in texts {
        for line in text.split_inclusive(|&b| b == b'\n') {
            tokens.push(Vec::leak(line.to_vec()));
        }
    }
    tokens
}

// ---- Session and trace files.

fn event(data: EventData) -> Event {
    Event {
        timestamp: 1_700_000_000_000,
        request_id: Arc::from("req-1"),
        data,
    }
}

/// A session with every kind of line a run writes, as `SessionWriter` writes it.
fn session_bytes() -> &'static [u8] {
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    BYTES.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let mut writer = SessionWriter::create(tmp.path(), "demo", "m", tmp.path()).unwrap();
        let call = ToolCall {
            id: "c1".into(),
            name: "shell".into(),
            arguments: json!({"command": "ls", "deep": [[1, {"a": null}]]}),
        };
        writer.message(&Message::system("be brief")).unwrap();
        writer.message(&Message::user("list the files")).unwrap();
        let events = [
            EventData::RunStarted {
                prompt: "list the files".into(),
                provider: "demo".into(),
                model: "m".into(),
                max_turns: 8,
                trace_parent: None,
            },
            EventData::Delta {
                kind: DeltaKind::Text,
                text: "streamed".into(),
            },
            EventData::LlmCall(Box::new(LlmCall {
                turn: 1,
                model: "m".into(),
                duration_ms: 12,
                ttft_ms: Some(3),
                finish_reason: Some("tool_calls".into()),
                content: "answer".into(),
                reasoning_content: Some("thinking".into()),
                tool_calls: vec![call.clone()],
                usage: Usage {
                    input_tokens: 100,
                    output_tokens: 20,
                    cached_tokens: 0,
                },
                timings: None,
                message_count: 2,
                new_messages: vec![Message::user("hi")],
                tools: vec!["shell".into()],
                parent: None,
                omitted: 0,
                context_window: None,
                call: None,
                purpose: None,
            })),
            EventData::ToolCall {
                turn: 1,
                id: "c1".into(),
                name: "shell".into(),
                arguments: call.arguments.clone(),
                parent: None,
                sandbox: None,
            },
            EventData::ToolResult {
                id: "c1".into(),
                name: "shell".into(),
                ok: true,
                status: Some(taco::event::ToolStatus::Ok),
                denied_by: None,
                result: Some(json!({"stdout": "a\nb\n"})),
                error: None,
                duration_ms: 5,
            },
            EventData::Final {
                content: "a and b".into(),
                turns: 1,
                usage: Usage {
                    input_tokens: 100,
                    output_tokens: 20,
                    cached_tokens: 0,
                },
            },
        ];
        for data in events {
            writer.event(&event(data)).unwrap();
        }
        let calls = vec![call];
        writer
            .message(&Message::assistant(None, Some("thinking".into()), calls))
            .unwrap();
        writer
            .message(&Message::tool("c1", "shell", "a\nb\n".into()))
            .unwrap();
        std::fs::read(writer.path()).unwrap()
    })
}

fn session_alphabet() -> &'static [&'static [u8]] {
    static ALPHABET: OnceLock<Vec<&'static [u8]>> = OnceLock::new();
    ALPHABET.get_or_init(|| {
        let extra: [&'static [u8]; 14] = [
            b"\n",
            b"\r\n",
            b"{",
            b"}",
            b"\"",
            b":",
            b",",
            b"\"type\":\"session\",\"version\":99,",
            b"\"type\":\"message\",\"data\":",
            b"\"type\":\"llm_call\",\"data\":{\"parent\":null}",
            b"\"started\":18446744073709551615",
            b"\"role\":\"user\",\"content\":",
            b"\xFF\xFE",
            b"\0",
        ];
        alphabet_of(&[session_bytes()], &extra)
    })
}

/// Loads `bytes` as a session file the ways taco reads one, checking each answer.
fn check_session(bytes: &[u8]) -> Result<(), TestCaseError> {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("20240101T000000-fuzz.jsonl");
    std::fs::write(&path, bytes).unwrap();
    let shown = path.display().to_string();
    let (loaded, peak) = meter::peak(|| session::load(&path));
    // Parsed JSON takes more room than its text (32 bytes a value, `[0,0,…]` is 2 bytes one),
    // so a constant factor of the file, never more.
    prop_assert!(
        peak <= 64 * bytes.len() + (256 << 10),
        "{peak} bytes for {}",
        bytes.len()
    );
    match loaded {
        Ok(loaded) => {
            let lines = bytes.split(|&b| b == b'\n').count();
            prop_assert!(loaded.entries.len() <= lines);
            // A damaged file warns about at most 20 lines, then counts the rest.
            prop_assert!(loaded.warnings.len() <= 21, "{:?}", loaded.warnings);
            prop_assert!(loaded.warnings.iter().all(|w| !w.trim().is_empty()));
        }
        Err(e) => prop_assert!(e.to_string().contains(&shown), "{e}"),
    }
    // The listing reads the same file through another path, and formats what it finds.
    let listed = session::list(tmp.path());
    prop_assert!(listed.len() <= 1);
    let table = session::format_list(&listed, u64::MAX, session::Look::Terminal);
    prop_assert!(table.ends_with('\n'));
    match session::find(tmp.path(), None, tmp.path()) {
        Ok(found) => prop_assert_eq!(found, path.clone()),
        Err(e) => prop_assert!(!e.to_string().is_empty()),
    }
    if let Err(e) = SessionWriter::append_to(&path) {
        prop_assert!(e.to_string().contains(&shown), "{e}");
    }
    Ok(())
}

// ---- Config.

/// `config.example.toml` from the repository root.
fn example_config() -> &'static [u8] {
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    BYTES.get_or_init(|| {
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("config.example.toml")).unwrap()
    })
}

fn config_alphabet() -> &'static [&'static [u8]] {
    static ALPHABET: OnceLock<Vec<&'static [u8]>> = OnceLock::new();
    ALPHABET.get_or_init(|| {
        // The example's commented-out keys and tables, switched on.
        let text = String::from_utf8_lossy(example_config());
        let uncommented: Vec<u8> = text
            .lines()
            .filter_map(|l| l.strip_prefix("# "))
            .filter(|l| switchable(l))
            .map(|l| l.to_string() + "\n")
            .collect::<String>()
            .into_bytes();
        let extra: [&'static [u8]; 24] = [
            b"\n",
            b"=",
            b" = ",
            b"[",
            b"]",
            b"[[",
            b"{",
            b"}",
            b".",
            b"\"",
            b"'''",
            b"\"\"\"",
            b"\\u00e9",
            b"inf",
            b"nan",
            b"-0",
            b"99999999999999999999",
            b"1979-05-27T07:32:00Z",
            b"[providers.x]\n",
            b"kind = \"openai\"\n",
            b"base_url = \"ftp://x\"\n",
            b"[tools.policy]\nnope = \"allow\"\n",
            b"provider = \"x\"\n",
            "é日本\u{202e}".as_bytes(),
        ];
        alphabet_of(&[example_config(), &uncommented], &extra)
    })
}

/// The example's lines, each commented-out key or table followed by itself switched on.
fn example_lines() -> Vec<String> {
    let text = String::from_utf8_lossy(example_config());
    let mut lines = Vec::new();
    for line in text.lines() {
        lines.push(format!("{line}\n"));
        if let Some(on) = line.strip_prefix("# ").filter(|l| switchable(l)) {
            lines.push(format!("{on}\n"));
        }
    }
    lines
}

/// Whether a commented-out line is a key or a table rather than prose.
fn switchable(line: &str) -> bool {
    line.starts_with('[')
        || line
            .split_once(" = ")
            .is_some_and(|(k, _)| !k.contains(' '))
}

/// Parses `text` as a config file: a config, or an error that names the file.
fn check_config(text: &str) -> Result<(), TestCaseError> {
    let path = PathBuf::from("/fuzz/config.toml");
    let (parsed, peak) = meter::peak(|| parse_config(&path, text));
    // The toml crate tokenizes the whole text first, ~80 bytes a token, and a token can be
    // one character (`[[[…`): a constant factor of the text, never more. Config files are
    // local and small.
    prop_assert!(
        peak <= 128 * text.len() + (256 << 10),
        "{peak} bytes for {}",
        text.len()
    );
    if let Err(e) = parsed {
        let message = e.to_string();
        prop_assert!(message.starts_with("/fuzz/config.toml"), "{message}");
        prop_assert!(message.len() > "/fuzz/config.toml: ".len(), "{message}");
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn session_arbitrary_bytes(input in bytes()) {
        check_session(&input)?;
    }

    #[test]
    fn session_token_soup(input in soup(session_alphabet())) {
        check_session(&input)?;
    }

    #[test]
    fn session_mutated(input in mutated(session_bytes(), session_alphabet())) {
        check_session(&input)?;
    }

    #[test]
    fn config_arbitrary_text(input in any::<String>()) {
        check_config(&input)?;
    }

    #[test]
    fn config_token_soup(input in soup(config_alphabet())) {
        check_config(&String::from_utf8_lossy(&input))?;
    }

    #[test]
    fn config_mutated(input in mutated(example_config(), config_alphabet())) {
        check_config(&String::from_utf8_lossy(&input))?;
    }

    #[test]
    fn config_example_lines_picked(lines in prop::sample::subsequence(example_lines(), 0..=example_lines().len())) {
        // Some of the example's lines in order, commented-out keys sometimes switched on:
        // valid TOML more often than byte soup, so the checks after parsing run too.
        check_config(&lines.concat())?;
    }
}

// ---- Deep nesting.

const DEPTH: usize = 100_000;

#[test]
fn deep_nesting_in_a_session_line_is_skipped_with_a_warning() {
    let deep = format!("{}{}", "[".repeat(DEPTH), "]".repeat(DEPTH));
    let deep_object = format!("{}1{}", "{\"a\":".repeat(DEPTH), "}".repeat(DEPTH));
    let message = format!(
        "{{\"type\":\"message\",\"timestamp\":1,\"data\":{{\"role\":\"user\",\"content\":{deep}}}}}"
    );
    for line in [deep, deep_object, message] {
        let mut bytes = session_bytes().to_vec();
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        bytes.extend_from_slice(b"{\"type\":\"future\"}\n");
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("deep.jsonl");
        std::fs::write(&path, &bytes).unwrap();
        let loaded = session::load(&path).unwrap();
        let whole = session::load(&write(tmp.path(), session_bytes())).unwrap();
        assert_eq!(loaded.entries, whole.entries, "only the deep line is lost");
        let number = session_bytes().split(|&b| b == b'\n').count();
        let first = format!("line {number} ");
        assert!(
            loaded.warnings[0].starts_with(&first),
            "{:?}",
            loaded.warnings
        );
        check_session(&bytes).unwrap();
    }
}

fn write(dir: &Path, bytes: &[u8]) -> PathBuf {
    let path = dir.join("whole.jsonl");
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn deep_nesting_in_a_config_is_an_error_not_a_crash() {
    for text in [
        format!("x = {}{}", "[".repeat(DEPTH), "]".repeat(DEPTH)),
        format!("x = {}1{}", "{a=".repeat(DEPTH), "}".repeat(DEPTH)),
        format!("{} = 1", vec!["a"; DEPTH].join(".")),
        format!("[{}]", vec!["a"; DEPTH].join(".")),
    ] {
        // The toml crate has a recursion limit of its own.
        let e = parse_config(Path::new("/deep.toml"), &text).err();
        let message = e.map(|e| e.to_string()).unwrap_or_default();
        assert!(message.contains("recurs"), "{message} for {text:.60}");
        check_config(&text).unwrap();
    }
}
