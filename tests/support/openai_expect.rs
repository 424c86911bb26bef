//! Expected turns of the OpenAI-family wire fixtures, derived by reading each file (exact text
//! where short; otherwise length, prefix and suffix). Included by `tests/openai_wire.rs` only.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use serde_json::Value;
use taco::provider::ProviderError;

use crate::support::wire::Outcome;

enum Text {
    Exact(&'static str),
    Long {
        len: usize,
        prefix: &'static str,
        suffix: &'static str,
    },
}

struct Expect {
    content: Text,
    reasoning: Text,
    /// (id, name, arguments) per call in index order.
    calls: &'static [(&'static str, &'static str, &'static str)],
    finish: Option<&'static str>,
    usage: (u64, u64),
    /// An in-band error: part of its message and whether it is retryable.
    error: Option<(&'static str, bool)>,
}

const NONE: Text = Text::Exact("");

fn check_text(what: &str, actual: &str, expected: &Text) {
    match expected {
        Text::Exact(text) => assert_eq!(actual, *text, "{what}"),
        Text::Long {
            len,
            prefix,
            suffix,
        } => {
            assert_eq!(actual.len(), *len, "{what} length");
            assert!(
                actual.starts_with(prefix),
                "{what} starts {:?}",
                &actual[..prefix.len().min(actual.len())]
            );
            assert!(actual.ends_with(suffix), "{what} ends {actual:?}");
        }
    }
}

fn expect(name: &str) -> Expect {
    let ok = |content, finish, usage| Expect {
        content,
        reasoning: NONE,
        calls: &[],
        finish: Some(finish),
        usage,
        error: None,
    };
    let tools = |calls, usage| Expect {
        content: NONE,
        reasoning: NONE,
        calls,
        finish: Some("tool_calls"),
        usage,
        error: None,
    };
    let holiday = Text::Long {
        len: 1859,
        prefix: "## **Holiday Name:** Starlight Remembrance\n\n**Date:**",
        suffix: " observe 15 minutes of silent looking at",
    };
    match name {
        "anthropic_openai_compat_tool_index_starts_at_1.sse" => Expect {
            content: Text::Exact("Reading it."),
            ..tools(
                &[("toolu_sanitized", "read_file", r#"{"path":"a.txt"}"#)],
                (0, 0),
            )
        },
        "azure_openai_chat_prompt_filter_first_chunk.sse" => {
            ok(Text::Exact("Capital of Denmark."), "stop", (15, 78))
        }
        "deepseek_chat_text.sse" | "deepseek_chat_text_with_keepalive_comments_DERIVED.sse" => {
            ok(holiday, "length", (13, 400))
        }
        "deepseek_reasoner_reasoning_then_text.sse" => Expect {
            reasoning: Text::Long {
                len: 606,
                prefix: "We need to count the number of the letter \"r\" in",
                suffix: "\n\nThus, the answer is 3.",
            },
            ..ok(
                Text::Exact("The word \"strawberry\" contains three \"r\"s."),
                "stop",
                (18, 219),
            )
        },
        "deepseek_reasoner_reasoning_then_tool_call.sse" => Expect {
            reasoning: Text::Long {
                len: 191,
                prefix: "The user is asking for the weather in San Francisco",
                suffix: "location parameter set to \"San Francisco\".",
            },
            ..tools(
                &[(
                    "call_00_ioIn7yN9p1ZOMNpDLwd4MgAF",
                    "weather",
                    r#"{"location":"San Francisco"}"#,
                )],
                (339, 83),
            )
        },
        "deepseek_v4_via_azure_reasoning.sse" => Expect {
            reasoning: Text::Long {
                len: 3832,
                prefix: "We need to invent a new holiday around the latest ",
                suffix: "That seems fun. I'll craft a response.",
            },
            ..ok(
                Text::Long {
                    len: 2764,
                    prefix: "Exciting news, Knicks fans—there's a brand-new holiday",
                    suffix: "See you next April\u{202f}4—from the logo! 🎯🧡💙",
                },
                "stop",
                (19, 1720),
            )
        },
        "groq_tool_call_whole_x_groq_usage.sse" => {
            tools(&[("tk85n1k4m", "weather", "{}")], (210, 15))
        }
        "openai_chat_finish_length.sse" => ok(Text::Exact("{\""), "length", (79, 1)),
        "openai_chat_first_chunk_error.sse" => Expect {
            finish: None,
            usage: (0, 0),
            error: Some((
                "The server had an error processing your request. Sorry about that!",
                true,
            )),
            ..ok(NONE, "", (0, 0))
        },
        "openai_chat_logprobs.sse" => ok(Text::Exact("Foo!"), "stop", (9, 2)),
        "openai_chat_midstream_error_after_output.sse" => Expect {
            finish: None,
            error: Some(("stream failed after output", true)),
            ..ok(Text::Exact("Hello"), "", (0, 0))
        },
        "openai_chat_parallel_tool_calls.sse" => tools(
            &[
                (
                    "call_JMW1whyEaYG438VE1OIflxA2",
                    "GetWeatherArgs",
                    r#"{"city":"Edinburgh","country":"GB","units":"c"}"#,
                ),
                (
                    "call_DNYTawLBoN8fj3KN6qU9N1Ou",
                    "get_stock_price",
                    r#"{"ticker":"AAPL","exchange":"NASDAQ"}"#,
                ),
            ],
            (149, 60),
        ),
        "openai_chat_refusal.sse" => ok(
            Text::Exact("I'm sorry, I can't assist with that request."),
            "stop",
            (79, 11),
        ),
        "openai_chat_single_tool_call.sse" => tools(
            &[(
                "call_4XzlGBLtUe9dy3GVNV4jhq7h",
                "get_weather",
                r#"{"city":"New York City"}"#,
            )],
            (44, 16),
        ),
        "openai_chat_single_tool_call_strict.sse" => tools(
            &[(
                "call_c91SqDXlYFuETYv8mUHzz6pp",
                "GetWeatherArgs",
                r#"{"city":"Edinburgh","country":"UK","units":"c"}"#,
            )],
            (76, 24),
        ),
        "openai_chat_text_gpt41nano_obfuscation.sse" => ok(
            Text::Long {
                len: 1730,
                prefix: "**Holiday Name:** Harmony Day\n\n**Date:** Celebrated annually",
                suffix: "shared human experiences and mutual respect.",
            },
            "stop",
            (16, 300),
        ),
        // n=3: only choice 0 (temperature 65; choices 1 and 2 say 61 and 59).
        "openai_chat_text_n3_multiple_choices.sse" => ok(
            Text::Exact(r#"{"city":"San Francisco","temperature":65,"units":"f"}"#),
            "stop",
            (79, 42),
        ),
        "openai_chat_text_with_usage.sse" => ok(
            Text::Exact(
                "I'm unable to provide real-time weather updates. To get the current weather in San \
                 Francisco, I recommend checking a reliable weather website or a weather app.",
            ),
            "stop",
            (14, 30),
        ),
        "openai_compat_toolcall_second_delta_has_empty_name.sse" => tools(
            &[(
                "chatcmpl-tool-9f149c74c42f265b",
                "webSearchTool",
                r#"{"query":"current Berlin weather"}"#,
            )],
            (171, 14),
        ),
        "xai_grok_reasoning_tool_call_whole.sse" => Expect {
            reasoning: Text::Exact("First, the user is"),
            ..tools(
                &[(
                    "call_55117580",
                    "weather",
                    r#"{"location":"San Francisco"}"#,
                )],
                (291, 26),
            )
        },
        other => panic!("no expectation written for fixture {other}"),
    }
}

/// Asserts that `outcome` is what fixture `name` should decode to.
pub fn check_outcome(name: &str, outcome: &Outcome) {
    let expected = expect(name);
    let turn = &outcome.turn;
    check_text("content", &turn.content, &expected.content);
    check_text("reasoning", &turn.reasoning, &expected.reasoning);
    let calls: Vec<(&str, &str, Value)> = turn
        .tool_calls
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.clone()))
        .collect();
    let want: Vec<(&str, &str, Value)> = expected
        .calls
        .iter()
        .map(|(id, name, args)| {
            (
                *id,
                *name,
                serde_json::from_str(args).expect("expected args are JSON"),
            )
        })
        .collect();
    assert_eq!(calls, want, "tool calls");
    assert_eq!(
        turn.finish_reason.as_deref(),
        expected.finish,
        "finish reason"
    );
    let (input_tokens, output_tokens) = expected.usage;
    assert_eq!(
        (turn.usage.input_tokens, turn.usage.output_tokens),
        (input_tokens, output_tokens),
        "usage"
    );
    match (&outcome.error, expected.error) {
        (None, None) => {}
        (Some(ProviderError::Api { message, retryable }), Some((part, want_retry))) => {
            assert!(message.contains(part), "error message {message:?}");
            assert_eq!(*retryable, want_retry, "retryable");
        }
        (got, want) => panic!("error: got {got:?}, expected {:?}", want.map(|w| w.0)),
    }
}
