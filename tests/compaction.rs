//! The token-aware context (issue 13.6): compaction against a scripted provider with a tiny
//! context window, the provider's "too long" answer, `/compact` and resuming compacted.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use serde_json::json;
use taco::conversation::{Message, Role, Usage};
use taco::event::{CompactTrigger, Compacted, Event, EventData};
use taco::orchestrator::context::{BRIDGE, COMPACT_PROMPT, ContextSettings, messages_tokens};
use taco::orchestrator::{Orchestrator, Outcome, Settings};
use taco::provider::{ChatRequest, Chunk, ChunkStream, Provider, ProviderError};
use tokio_util::sync::CancellationToken;

mod support;
use support::scripted::*;

/// The scripted provider, except that summary calls (recognised by the compaction prompt)
/// are answered here, numbered, and recorded apart, so the script holds only the agent's turns.
struct Summarising {
    agent: Arc<Scripted>,
    summaries: Mutex<Vec<Vec<Message>>>,
    /// The summary calls fail with this, when set.
    fail: Option<ProviderError>,
}

impl Summarising {
    fn new(replies: Vec<Reply>) -> Arc<Self> {
        Arc::new(Self {
            agent: Scripted::new(replies),
            summaries: Mutex::default(),
            fail: None,
        })
    }

    fn summaries(&self) -> Vec<Vec<Message>> {
        self.summaries.lock().unwrap().clone()
    }
}

impl Provider for Summarising {
    fn name(&self) -> &str {
        "scripted"
    }

    fn model(&self) -> &str {
        "m1"
    }

    fn stream<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChunkStream, ProviderError>> {
        if request.messages.first().and_then(|m| m.content.as_deref()) != Some(COMPACT_PROMPT) {
            return self.agent.stream(request);
        }
        assert!(request.tools.is_empty(), "a summary call offers no tools");
        let n = {
            let mut summaries = self.summaries.lock().unwrap();
            summaries.push(request.messages.to_vec());
            summaries.len()
        };
        let fail = self.fail.clone();
        Box::pin(async move {
            if let Some(error) = fail {
                return Err(error);
            }
            let mut chunks = text(&format!("SUMMARY {n}: the user asked for echoes."));
            chunks.push(Chunk::Usage(Usage {
                input_tokens: 300,
                output_tokens: 20,
                cached_tokens: 0,
            }));
            Ok(stream_of(chunks))
        })
    }
}

/// Settings with a known window of `window` tokens (threshold 85 %).
fn windowed(window: Option<u64>) -> Settings {
    Settings {
        context: ContextSettings {
            window,
            compact_at: 0.85,
        },
        ..settings(30)
    }
}

/// `n` tool rounds, each echoing `size` bytes, then an answer.
fn echo_rounds(n: usize, size: usize) -> Vec<Reply> {
    let mut replies: Vec<Reply> = (0..n)
        .map(|i| {
            Ok(calls(&[(
                &*format!("c{i}"),
                "echo",
                json!({"text": format!("r{i} {}", "x".repeat(size))}),
            )]))
        })
        .collect();
    replies.push(Ok(text("all echoed")));
    replies
}

fn compactions(events: &[Event]) -> Vec<Compacted> {
    events
        .iter()
        .filter_map(|e| match &e.data {
            EventData::Compacted(c) => Some((**c).clone()),
            _ => None,
        })
        .collect()
}

/// Every tool result in `messages` follows the assistant message that made its call.
fn pairs_intact(messages: &[Message]) -> bool {
    messages.iter().enumerate().all(|(i, m)| {
        m.role != Role::Tool
            || messages[..i].iter().rev().any(|a| {
                a.tool_calls
                    .iter()
                    .any(|c| Some(c.id.as_str()) == m.tool_call_id.as_deref())
            })
    })
}

fn is_summary_note(m: &Message) -> bool {
    m.role == Role::System
        && m.content
            .as_deref()
            .is_some_and(|c| c.contains("compacted") && c.contains("SUMMARY"))
}

#[tokio::test]
async fn a_long_run_is_compacted_before_it_passes_the_window() {
    let window = 3_000;
    let provider = Summarising::new(echo_rounds(12, 1_600));
    let (tools, _) = registry();
    let mut orch = Orchestrator::new(provider.clone(), Arc::new(tools), windowed(Some(window)));
    let mut events = Vec::new();
    let outcome = headless(&mut orch, "echo a lot", &mut events).await;
    assert_eq!(
        outcome,
        Outcome::Final {
            content: "all echoed".into(),
            error: None
        }
    );
    let compacted = compactions(&events);
    assert!(
        !compacted.is_empty(),
        "12 rounds of ~400 tokens overflow 3000"
    );
    for c in &compacted {
        assert_eq!(c.trigger, CompactTrigger::Auto);
        assert!(c.error.is_none(), "{:?}", c.error);
        assert!(
            c.before_tokens as f64 > window as f64 * 0.85,
            "compacted only past the threshold: {}",
            c.before_tokens
        );
        assert!(c.after_tokens < c.before_tokens / 2, "{c:?}");
        assert_eq!(c.window, Some(window));
        assert!(c.summary.starts_with("SUMMARY"));
        assert_eq!(c.usage.input_tokens, 300);
    }
    // Every request the agent sent fit the window, and kept each result with its call.
    let sent = provider.agent.sent();
    for request in &sent {
        let tokens = messages_tokens(&request.messages);
        assert!(tokens <= window, "a request of {tokens} tokens was sent");
        assert!(pairs_intact(&request.messages));
        assert_eq!(request.messages[0], Message::system("SYSTEM"));
    }
    // The first request after the first compaction starts with the summary.
    let first = compacted[0].kept_from;
    let after = sent
        .iter()
        .find(|r| is_summary_note(&r.messages[1]))
        .expect("a request carries the summary");
    // The kept tail starts inside the one long run: a user turn bridges to it.
    assert_eq!(after.messages[2], Message::user(BRIDGE));
    let tail = &after.messages[3..];
    assert_eq!(tail, &orch.messages()[first..][..tail.len()]);
    // A later compaction summarises the earlier summary with what came since.
    let summaries = provider.summaries();
    assert_eq!(summaries.len(), compacted.len());
    let transcript = summaries[0][1].content.clone().unwrap();
    assert!(transcript.contains("## User\necho a lot"), "{transcript}");
    assert!(transcript.contains("## Result of echo"));
    if let Some(second) = summaries.get(1) {
        let transcript = second[1].content.as_deref().unwrap();
        assert!(
            transcript.contains("SUMMARY 1"),
            "the earlier summary is carried on"
        );
    }
    // The conversation (and so the session file) keeps every message.
    assert_eq!(orch.messages().len(), 1 + 1 + 12 * 2 + 1);
    // The gauge: each llm_call says the window.
    assert!(events.iter().any(|e| matches!(&e.data,
        EventData::LlmCall(c) if c.context_window == Some(window) && c.omitted > 0)));
}

#[tokio::test]
async fn no_window_no_compaction_until_the_provider_says_too_long() {
    // Unknown window: nothing is compacted ahead; the provider's "too long" compacts once,
    // and the same call is tried again.
    let mut replies = echo_rounds(3, 4_000);
    replies.insert(
        3,
        Err(ProviderError::ContextExceeded(
            "maximum context length is 4000 tokens".into(),
        )),
    );
    let provider = Summarising::new(replies);
    let (tools, _) = registry();
    let mut orch = Orchestrator::new(provider.clone(), Arc::new(tools), windowed(None));
    let mut events = Vec::new();
    let outcome = headless(&mut orch, "echo a lot", &mut events).await;
    assert_eq!(
        outcome,
        Outcome::Final {
            content: "all echoed".into(),
            error: None
        }
    );
    let compacted = compactions(&events);
    assert_eq!(compacted.len(), 1);
    assert_eq!(compacted[0].trigger, CompactTrigger::Overflow);
    assert!(compacted[0].after_tokens <= compacted[0].before_tokens / 2);
    let sent = provider.agent.sent();
    // Three rounds, the refused call, its retry.
    assert_eq!(sent.len(), 5);
    assert_eq!(
        sent[3].messages.len(),
        orch.messages().len() - 1,
        "refused: everything"
    );
    assert!(
        is_summary_note(&sent[4].messages[1]),
        "the retry starts with the summary"
    );
    assert!(pairs_intact(&sent[4].messages));
    assert!(messages_tokens(&sent[4].messages) < messages_tokens(&sent[3].messages) / 2);
}

#[tokio::test]
async fn too_long_even_after_compacting_fails_with_what_to_do() {
    let too_long = || Err(ProviderError::ContextExceeded("prompt is too long".into()));
    let mut replies = echo_rounds(3, 2_000);
    replies.truncate(3);
    replies.extend([too_long(), too_long(), Ok(text("never asked"))]);
    let provider = Summarising::new(replies);
    let (tools, _) = registry();
    let mut orch = Orchestrator::new(provider.clone(), Arc::new(tools), windowed(Some(100_000)));
    let mut events = Vec::new();
    let outcome = headless(&mut orch, "echo a lot", &mut events).await;
    let Outcome::Failed(message) = outcome else {
        panic!("{outcome:?}")
    };
    assert!(message.contains("prompt is too long"), "{message}");
    assert!(message.contains("/clear"), "{message}");
    assert!(message.contains("context_window"), "{message}");
    assert_eq!(compactions(&events).len(), 1, "one compaction, one retry");
    assert_eq!(provider.agent.sent().len(), 5);
    assert!(events.iter().any(|e| matches!(&e.data,
        EventData::Error { kind, .. } if kind == "context_exceeded")));
}

#[tokio::test]
async fn a_failed_summary_leaves_the_history_whole_and_the_run_goes_on() {
    let provider = Arc::new(Summarising {
        agent: Scripted::new(echo_rounds(6, 1_600)),
        summaries: Mutex::default(),
        fail: Some(ProviderError::Http {
            status: 500,
            message: "summary server down".into(),
            retryable: false,
            retry_after: None,
        }),
    });
    let (tools, _) = registry();
    let mut orch = Orchestrator::new(provider.clone(), Arc::new(tools), windowed(Some(3_000)));
    let mut events = Vec::new();
    let outcome = headless(&mut orch, "echo", &mut events).await;
    assert!(matches!(outcome, Outcome::Final { .. }), "{outcome:?}");
    let compacted = compactions(&events);
    assert!(!compacted.is_empty());
    let error = compacted[0].error.as_deref().unwrap();
    assert!(error.contains("summary server down"), "{error}");
    assert_eq!(compacted[0].before_tokens, compacted[0].after_tokens);
    // Nothing was left out of any request.
    let last = provider.agent.sent().last().unwrap().messages.clone();
    assert_eq!(last.len(), orch.messages().len() - 1);
}

#[tokio::test]
async fn compact_on_demand_then_the_next_request_starts_with_the_summary() {
    let mut replies = echo_rounds(4, 1_000);
    replies.push(Ok(text("second answer")));
    let provider = Summarising::new(replies);
    let (tools, _) = registry();
    let mut orch = Orchestrator::new(provider.clone(), Arc::new(tools), windowed(Some(200_000)));
    let mut events = Vec::new();
    headless(&mut orch, "first", &mut events).await;
    assert!(compactions(&events).is_empty(), "far from the window");
    let mut events = Vec::new();
    assert!(orch.compact(&mut events, &CancellationToken::new()).await);
    let compacted = compactions(&events);
    assert_eq!(compacted.len(), 1);
    assert_eq!(compacted[0].trigger, CompactTrigger::Manual);
    assert_eq!(
        events.len(),
        1,
        "a compaction between requests is one event"
    );
    headless(&mut orch, "second", &mut events).await;
    let last = provider.agent.sent().last().unwrap().messages.clone();
    assert!(is_summary_note(&last[1]));
    assert_eq!(last.last().unwrap(), &Message::user("second"));
}

#[tokio::test]
async fn compact_on_demand_with_nothing_to_compact_says_so() {
    let provider = Summarising::new(vec![]);
    let (tools, _) = registry();
    let mut orch = Orchestrator::new(provider.clone(), Arc::new(tools), windowed(None));
    let mut events = Vec::new();
    assert!(!orch.compact(&mut events, &CancellationToken::new()).await);
    let compacted = compactions(&events);
    assert_eq!(compacted.len(), 1);
    assert!(
        compacted[0]
            .error
            .as_deref()
            .unwrap()
            .contains("nothing to compact")
    );
    assert!(provider.summaries().is_empty(), "no model call for nothing");
}

#[tokio::test]
async fn a_restored_compaction_is_what_the_next_request_sends() {
    let provider = Summarising::new(vec![Ok(text("go on"))]);
    let (tools, _) = registry();
    let mut orch = Orchestrator::new(provider.clone(), Arc::new(tools), windowed(Some(100_000)));
    let saved = vec![
        Message::system("old system"),
        Message::user("one"),
        Message::assistant(Some("a1".into()), None, vec![]),
        Message::user("two"),
        Message::assistant(Some("a2".into()), None, vec![]),
    ];
    orch.restore(saved);
    orch.restore_compaction(3, "SUMMARY of one".into());
    headless(&mut orch, "three", &mut Vec::new()).await;
    let sent = provider.agent.sent()[0].messages.clone();
    assert_eq!(sent[0], Message::system("SYSTEM"));
    assert!(is_summary_note(&sent[1]));
    assert_eq!(sent[2], Message::user("two"));
    assert_eq!(sent.len(), 5);
    // An index past the end (a damaged file) is ignored rather than trusted.
    let provider = Summarising::new(vec![Ok(text("go on"))]);
    let (tools, _) = registry();
    let mut orch = Orchestrator::new(provider.clone(), Arc::new(tools), windowed(None));
    orch.restore(vec![Message::user("one")]);
    orch.restore_compaction(99, "SUMMARY".into());
    headless(&mut orch, "two", &mut Vec::new()).await;
    assert!(!is_summary_note(&provider.agent.sent()[0].messages[1]));
}

/// A provider whose summary call never answers (the agent's script is empty).
struct Stalling;

impl Provider for Stalling {
    fn name(&self) -> &str {
        "stalling"
    }

    fn model(&self) -> &str {
        "m1"
    }

    fn stream<'a>(
        &'a self,
        _request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChunkStream, ProviderError>> {
        Box::pin(futures_util::future::pending())
    }
}

#[tokio::test]
async fn a_cancelled_compact_says_so_and_changes_nothing() {
    let (tools, _) = registry();
    let mut orch = Orchestrator::new(Arc::new(Stalling), Arc::new(tools), windowed(Some(100_000)));
    orch.restore(vec![
        Message::user("one"),
        Message::assistant(Some("a1".into()), None, vec![]),
        Message::user("two"),
        Message::assistant(Some("a2".into()), None, vec![]),
    ]);
    let cancel = CancellationToken::new();
    let canceller = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        canceller.cancel();
    });
    let mut events = Vec::new();
    assert!(!orch.compact(&mut events, &cancel).await);
    let compacted = compactions(&events);
    assert_eq!(compacted.len(), 1);
    assert_eq!(compacted[0].error.as_deref(), Some("cancelled by the user"));
    assert_eq!(orch.messages().len(), 5);
}
