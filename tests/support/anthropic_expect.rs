//! Expected turns of the Anthropic wire fixtures, derived by reading each file. Included by
//! `tests/anthropic_wire.rs` only.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use serde_json::Value;
use taco::provider::ProviderError;

use crate::support::wire::Outcome;

/// The arguments of an expected call.
#[derive(Debug, Clone, Copy)]
pub enum Args {
    /// Valid JSON, compared parsed.
    Json(&'static str),
    /// Invalid JSON kept raw as `Value::String` (a call cut off by `max_tokens` or a restart).
    Raw(&'static str),
}

/// How the stream ends when it does not end cleanly.
#[derive(Debug, Clone, Copy)]
pub enum End {
    /// `message_stop` arrived.
    Clean,
    /// An in-band error: part of its message and whether it is retryable.
    Api(&'static str, bool),
    /// No `message_stop`.
    Truncated,
}

/// The expected turn of one fixture.
pub struct Expect {
    pub content: &'static str,
    pub reasoning: &'static str,
    pub signature: Option<&'static str>,
    /// (id, name, arguments) per call in block order.
    pub calls: &'static [(&'static str, &'static str, Args)],
    pub finish: Option<&'static str>,
    pub usage: (u64, u64),
    pub end: End,
}

const TEXT: Expect = Expect {
    content: "",
    reasoning: "",
    signature: None,
    calls: &[],
    finish: Some("end_turn"),
    usage: (0, 0),
    end: End::Clean,
};

const OVERLOADED: Expect = Expect {
    finish: None,
    end: End::Api("Overloaded (overloaded_error)", true),
    ..TEXT
};

const SF_WEATHER: Args = Args::Json(r#"{"location": "San Francisco, CA", "units": "f"}"#);

/// The expectation for fixture `name`; panics for a fixture nobody has read yet.
pub fn expect(name: &str) -> Expect {
    match name {
        "anthropic_docs_basic_stream.sse" => Expect {
            content: "Hello!",
            usage: (25, 15),
            ..TEXT
        },
        "anthropic_docs_error_event_snippet.sse" | "anthropic_first_event_overloaded_error.sse" => {
            OVERLOADED
        }
        // The docs example carries no usage at all.
        "anthropic_docs_thinking_stream.sse" => Expect {
            content: "27 * 453 = 12,231",
            reasoning: "Let me solve this step by step:\n\n1. First break down 27 * 453\n2. 453 = \
                        400 + 50 + 3\n3. 27 * 400 = 10,800\n4. 27 * 50 = 1,350\n5. 27 * 3 = 81\n6. \
                        10,800 + 1,350 + 81 = 12,231",
            signature: Some("EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds..."),
            ..TEXT
        },
        "anthropic_docs_tool_use_stream.sse" => Expect {
            content: "Okay, let's check the weather for San Francisco, CA:",
            calls: &[(
                "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
                "get_weather",
                Args::Json(r#"{"location": "San Francisco, CA", "unit": "fahrenheit"}"#),
            )],
            finish: Some("tool_use"),
            usage: (472, 89),
            ..TEXT
        },
        // The duplicate message_start comes before any content: ignored.
        "anthropic_duplicate_message_start_SYNTHETIC.sse" => Expect {
            content: "Hello, World!",
            usage: (17, 227),
            ..TEXT
        },
        "anthropic_message_delta_input_tokens.sse" => Expect {
            content: "pong",
            usage: (61, 2),
            ..TEXT
        },
        // Events without `event:` lines, then an error event and no message_stop.
        "anthropic_midstream_overloaded_error.sse" => Expect {
            content: "Hello",
            usage: (17, 1),
            ..OVERLOADED
        },
        "anthropic_refusal.sse" => Expect {
            finish: Some("refusal"),
            usage: (18, 5),
            ..TEXT
        },
        // No blank line after the final message_stop: it still counts.
        "anthropic_sdkpy_basic_response.sse" => Expect {
            content: "Hello there!",
            usage: (11, 6),
            ..TEXT
        },
        // The compaction block and the fallback notice are not ours to show.
        "anthropic_sdkpy_compaction_response.sse" => Expect {
            content: "Hello there!",
            usage: (30, 8),
            ..TEXT
        },
        "anthropic_sdkpy_fallback_response.sse" => Expect {
            content: "Hello there!",
            usage: (25, 8),
            ..TEXT
        },
        // Cut by max_tokens inside the tool input: the raw text is kept for the validator.
        "anthropic_sdkpy_incomplete_partial_json_response.sse" => Expect {
            content: "I'll create a comprehensive tax guide for someone with multiple W2s and \
                      save it in a file called taxes.txt. Let me do that for you now.",
            calls: &[(
                "toolu_01EKqbqmZrGRXy18eN7m9kvY",
                "make_file",
                Args::Raw(
                    "{\"filename\": \"taxes.txt\", \"lines_of_text\": [\n\"# COMPREHENSIVE TAX \
                     GUIDE FOR INDIVIDUALS WITH MULTIPLE W-2s\",\n\"\",\n\"## \
                     INTRODUCTION\",\n\"\",\n\"Filing taxes",
                ),
            )],
            finish: Some("max_tokens"),
            usage: (450, 124),
            ..TEXT
        },
        // output_tokens 0 in message_delta does not replace message_start's 1.
        "anthropic_sdkpy_refusal_response.sse" => Expect {
            finish: Some("refusal"),
            usage: (20, 1),
            ..TEXT
        },
        "anthropic_sdkpy_tool_use_response.sse" => Expect {
            content: "I'll check the current weather in Paris for you.",
            calls: &[(
                "toolu_01NRLabsLyVHZPKxbKvkfSMn",
                "get_weather",
                Args::Json(r#"{"location": "Paris"}"#),
            )],
            finish: Some("tool_use"),
            usage: (377, 65),
            ..TEXT
        },
        // A second message (new id, block indexes from 0 again) starts mid tool call: the
        // stream ends as truncated before anything of the second message is decoded.
        "anthropic_spliced_message_start_SYNTHETIC.sse" => Expect {
            reasoning: "I will call the tool.",
            signature: Some("sig-first"),
            calls: &[("toolu_first", "test-tool", Args::Raw(r#"{"value":"Spark"#))],
            finish: None,
            usage: (17, 1),
            end: End::Truncated,
            ..TEXT
        },
        "anthropic_stream_after_tool_result_real.sse" => Expect {
            content: "The weather in San Francisco, CA is currently:\n- **Temperature:** \
                      68°F\n- **Condition:** Sunny\n\nIt's a nice sunny day!",
            usage: (770, 38),
            ..TEXT
        },
        "anthropic_stream_text_after_429_real_padding.sse" => Expect {
            content: "[12345,67890]",
            usage: (135, 10),
            ..TEXT
        },
        "anthropic_stream_tool_use_only_real.sse" => Expect {
            calls: &[("toolu_018acGYLtfR52q9yDbWaEdQZ", "get_weather", SF_WEATHER)],
            finish: Some("tool_use"),
            usage: (656, 74),
            ..TEXT
        },
        "anthropic_stream_tool_use_only_real_2.sse" => Expect {
            calls: &[("toolu_01TJoxvFknVdnV9XpWFPaRmY", "get_weather", SF_WEATHER)],
            finish: Some("tool_use"),
            usage: (656, 74),
            ..TEXT
        },
        "anthropic_text_ping.sse" => Expect {
            content: "Hello! I'm doing well, thank you for asking. How are you doing today? Is \
                      there anything I can help you with?",
            usage: (12, 30),
            ..TEXT
        },
        "anthropic_text_then_tool_use.sse" => Expect {
            content: "I'll invoke the JSON response tool.",
            calls: &[(
                "toolu_01KFbKqPYSuAKujiL6mTfzYA",
                "json",
                Args::Json(
                    r#"{"elements": [{"location": "San Francisco", "temperature": 58, "condition": "sunny"}]}"#,
                ),
            )],
            finish: Some("tool_use"),
            usage: (849, 47),
            ..TEXT
        },
        // A single empty partial_json: no input means `{}`.
        "anthropic_text_then_tool_use_no_args.sse" => Expect {
            content: "I'll update the issue list for you.",
            calls: &[(
                "toolu_01QE1WLsSVp5hy5Q3GmGTmjP",
                "updateIssueList",
                Args::Json("{}"),
            )],
            finish: Some("tool_use"),
            usage: (565, 48),
            ..TEXT
        },
        "anthropic_thinking_signature_text.sse" => Expect {
            content: "925 ÷ 5 = 185",
            reasoning: "The previous result was 925. Now I need to divide that by 5.\n\n925 ÷ 5 = 185",
            signature: Some(
                "EvQBCkYICxgCKkAxhD4NUKFzudtZ6NzbZdEiBACIScTzqjPViM596iWLZIk4EFKYYBj3B6Ptl3b0dcQv/\
                 VeJBNbejNWIWRBn+KPNEgz6HWtKx7p+QRgKsEoaDGjsiqfht7gTRFYHiyIwD1VSmNqHxv3wy8KEMP+\
                 LYb/TC4UH3H97tuoaADARFFcA0phdfxnzKQxFnc9lwY+dKlzUsaKSUAFeu1bDL5ikZJ1vL0Fkz6Jjo\
                 Fke0L/wOJRIUDUlDUOFJ1tZ3ea7g6LGE/5hwuvWgLwewdcm64d+43l7F57XrOmqNd6flI2K/oPr/4yz\
                 Ngvi/EhT6Ca17BgB",
            ),
            usage: (69, 53),
            ..TEXT
        },
        other => panic!("no expectation written for fixture {other}"),
    }
}

/// Asserts that `outcome` is what fixture `name` should decode to.
pub fn check_outcome(name: &str, outcome: &Outcome) {
    let expected = expect(name);
    let turn = &outcome.turn;
    assert_eq!(turn.content, expected.content, "{name}: content");
    assert_eq!(turn.reasoning, expected.reasoning, "{name}: reasoning");
    assert_eq!(
        turn.reasoning_signature.as_deref(),
        expected.signature,
        "{name}: signature"
    );
    let calls: Vec<(&str, &str, Value)> = turn
        .tool_calls
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.clone()))
        .collect();
    let want: Vec<(&str, &str, Value)> = expected
        .calls
        .iter()
        .map(|(id, name, args)| {
            let args = match args {
                Args::Json(text) => serde_json::from_str(text).expect("expected args are JSON"),
                Args::Raw(text) => Value::String((*text).to_string()),
            };
            (*id, *name, args)
        })
        .collect();
    assert_eq!(calls, want, "{name}: tool calls");
    assert_eq!(
        turn.finish_reason.as_deref(),
        expected.finish,
        "{name}: finish reason"
    );
    let (input_tokens, output_tokens) = expected.usage;
    assert_eq!(
        (turn.usage.input_tokens, turn.usage.output_tokens),
        (input_tokens, output_tokens),
        "{name}: usage"
    );
    match (&outcome.error, expected.end) {
        (None, End::Clean) => {}
        (Some(ProviderError::Api { message, retryable }), End::Api(part, want_retry)) => {
            assert!(message.contains(part), "{name}: error message {message:?}");
            assert_eq!(*retryable, want_retry, "{name}: retryable");
        }
        (
            Some(ProviderError::Truncated {
                terminator: "message_stop",
            }),
            End::Truncated,
        ) => {}
        (got, want) => panic!("{name}: ended with {got:?}, expected {want:?}"),
    }
}
