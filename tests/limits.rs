//! Bounds on a request and its model calls (issue 9.6): a model that always delegates, an
//! endless reply, a stream of keep-alives or empty deltas, a call that never ends.

use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use futures_util::stream;
use serde_json::json;
use support::scripted::{calls, settings};
use taco::event::{Event, EventData};
use taco::orchestrator::approval::FixedApprover;
use taco::orchestrator::{Limits, Orchestrator, Outcome, Settings};
use taco::provider::{ChatRequest, Chunk, ChunkStream, Provider, ProviderError};
use taco::tools::ToolRegistry;
use tokio_util::sync::CancellationToken;

/// What every call of a [`Looping`] provider streams.
#[derive(Clone, Copy)]
enum Behaviour {
    /// Always answers with a `delegate` call.
    Delegate,
    /// Text chunks without end.
    EndlessText,
    /// Empty text deltas without end, one every 10 ms.
    EmptyDeltas,
    /// Real text, one small piece a second, without end.
    Trickle,
}

struct Looping {
    behaviour: Behaviour,
    calls: AtomicU32,
}

impl Looping {
    fn new(behaviour: Behaviour) -> Arc<Self> {
        Arc::new(Self {
            behaviour,
            calls: AtomicU32::new(0),
        })
    }
}

impl Provider for Looping {
    fn name(&self) -> &str {
        "looping"
    }

    fn model(&self) -> &str {
        "m"
    }

    fn stream<'a>(
        &'a self,
        _request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChunkStream, ProviderError>> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst);
        let stream: ChunkStream = match self.behaviour {
            Behaviour::Delegate => Box::pin(stream::iter(
                calls(&[(
                    &format!("d{n}"),
                    "delegate",
                    json!({"task": "do it again", "max_turns": 1000}),
                )])
                .into_iter()
                .map(Ok),
            )),
            Behaviour::EndlessText => Box::pin(stream::repeat_with(|| {
                Ok(Chunk::Text("x".repeat(64 * 1024)))
            })),
            Behaviour::EmptyDeltas => Box::pin(stream::unfold((), |()| async {
                tokio::time::sleep(Duration::from_millis(10)).await;
                Some((Ok(Chunk::Text(String::new())), ()))
            })),
            Behaviour::Trickle => Box::pin(stream::unfold((), |()| async {
                tokio::time::sleep(Duration::from_secs(1)).await;
                Some((Ok(Chunk::Text("a".into())), ()))
            })),
        };
        async move { Ok(stream) }.boxed()
    }
}

async fn run(provider: Arc<Looping>, settings: Settings) -> (Outcome, Vec<Event>) {
    let mut orch = Orchestrator::new(provider, Arc::new(ToolRegistry::builtins()), settings);
    let mut events = Vec::new();
    let outcome = orch
        .run(
            "go",
            &mut events,
            &mut FixedApprover::all(),
            &CancellationToken::new(),
        )
        .await;
    (outcome, events)
}

fn error_of(events: &[Event]) -> String {
    events
        .iter()
        .find_map(|e| match &e.data {
            EventData::Error { message, .. } => Some(message.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn a_model_that_always_delegates_is_bounded_in_depth_turns_and_calls() {
    let provider = Looping::new(Behaviour::Delegate);
    let (outcome, events) = run(provider.clone(), settings(3)).await;
    let made = provider.calls.load(Ordering::SeqCst);
    // Depth ≤ 3 and ≤ 3 turns per conversation (the asked-for 1000 is capped at the parent's
    // 3): 1 + 3 + 9 + 27 conversations' worth of turns at most, far below the 200 budget.
    assert!(made <= 4 * (1 + 3 + 9 + 27), "{made} model calls");
    let deepest = events
        .iter()
        .filter_map(|e| match &e.data {
            EventData::ToolCall { id, .. } => Some(id.matches('/').count()),
            _ => None,
        })
        .max()
        .unwrap();
    assert_eq!(deepest, 3, "delegates nest at most 3 deep");
    assert!(
        events.iter().any(|e| matches!(&e.data, EventData::ToolResult { error: Some(m), .. } if m.contains("max_subagent_depth"))),
        "the too-deep delegate is refused with a reason"
    );
    assert!(matches!(outcome, Outcome::Final { .. }), "{outcome:?}");

    // With a smaller budget, the budget is what stops it, with a clear error.
    let provider = Looping::new(Behaviour::Delegate);
    let budget = Settings {
        limits: Limits {
            max_model_calls: 20,
            ..Limits::default()
        },
        ..settings(3)
    };
    let (outcome, events) = run(provider.clone(), budget).await;
    assert_eq!(provider.calls.load(Ordering::SeqCst), 20);
    let Outcome::Failed(message) = outcome else {
        panic!("{outcome:?}")
    };
    assert!(
        message.contains("20 model calls (max_model_calls)"),
        "{message}"
    );
    assert_eq!(error_of(&events), message);
}

#[tokio::test]
async fn an_endless_reply_stops_at_max_reply_bytes() {
    let limited = Settings {
        limits: Limits {
            max_reply_bytes: 4 << 20,
            ..Limits::default()
        },
        ..settings(3)
    };
    let (outcome, events) = run(Looping::new(Behaviour::EndlessText), limited).await;
    let Outcome::Failed(message) = outcome else {
        panic!("{outcome:?}")
    };
    assert!(message.contains("4 MiB (max_reply_bytes)"), "{message}");
    let streamed: usize = events
        .iter()
        .filter_map(|e| match &e.data {
            EventData::Delta { text, .. } => Some(text.len()),
            _ => None,
        })
        .sum();
    assert!(streamed <= 4 << 20, "{streamed} bytes streamed");
}

#[tokio::test(start_paused = true)]
async fn empty_deltas_end_after_the_idle_timeout_like_silence() {
    let limited = Settings {
        limits: Limits {
            idle: Duration::from_secs(5),
            ..Limits::default()
        },
        ..settings(3)
    };
    let started = tokio::time::Instant::now();
    let (outcome, _) = run(Looping::new(Behaviour::EmptyDeltas), limited).await;
    let Outcome::Failed(message) = outcome else {
        panic!("{outcome:?}")
    };
    assert!(message.contains("keep-alives or empty deltas"), "{message}");
    assert!(message.contains("5 s"), "{message}");
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_secs(5) && waited < Duration::from_secs(6),
        "{waited:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_call_that_trickles_forever_ends_at_the_deadline() {
    let limited = Settings {
        limits: Limits {
            idle: Duration::from_secs(5),
            call_deadline: Duration::from_secs(60),
            ..Limits::default()
        },
        ..settings(3)
    };
    let started = tokio::time::Instant::now();
    let (outcome, events) = run(Looping::new(Behaviour::Trickle), limited).await;
    let Outcome::Failed(message) = outcome else {
        panic!("{outcome:?}")
    };
    assert!(
        message.contains("longer than 60 s (call_timeout_secs)"),
        "{message}"
    );
    assert!(started.elapsed() <= Duration::from_secs(61));
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.data, EventData::Delta { text, .. } if text == "a")),
        "the trickle was real progress until the deadline"
    );
}
