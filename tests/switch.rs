//! Switching provider and model in the orchestrator task (issue 14.5): `Op::Switch` applies
//! to the next request (after the running one), says `model_switched`, which the session file
//! keeps, and a failed switch changes nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use taco::event::{Event, EventData, Listed, ModelChoice};
use taco::orchestrator::Orchestrator;
use taco::orchestrator::switch::{Listing, ProviderModels, Providers, Switched};
use taco::orchestrator::task::{self, Op, OrchestratorTask};
use taco::provider::{ChatRequest, ChunkStream, Provider, ProviderError};
use taco::recorder::Recorder;
use taco::tools::ToolRegistry;

use crate::support;
use support::scripted::*;

/// A scripted provider under a name and model of its own.
struct Named {
    name: String,
    model: String,
    inner: Arc<Scripted>,
}

impl Provider for Named {
    fn name(&self) -> &str {
        &self.name
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn stream<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChunkStream, ProviderError>> {
        self.inner.stream(request)
    }
}

/// Two providers, `first` and `second`, each answering from its own script.
struct Two {
    first: Arc<Scripted>,
    second: Arc<Scripted>,
}

impl Providers for Two {
    fn catalog(&self) -> Vec<ProviderModels> {
        Vec::new()
    }

    fn switch(&self, name: &str, model: Option<&str>) -> Result<Switched, String> {
        let inner = match name {
            "first" => Arc::clone(&self.first),
            "second" => Arc::clone(&self.second),
            other => return Err(format!("unknown provider '{other}'")),
        };
        let model = model.unwrap_or("default").to_string();
        let context = taco::orchestrator::context::ContextSettings {
            window: Some(32_000),
            ..Default::default()
        };
        Ok(Switched {
            provider: Arc::new(Named {
                name: name.into(),
                model,
                inner,
            }),
            retry: settings(10).retry,
            limits: taco::orchestrator::Limits::default(),
            context,
        })
    }

    fn listings(&self) -> Vec<(String, Listing)> {
        let ok: Listing = Box::pin(async { Ok(vec!["a".to_string(), "b".to_string()]) });
        let failed: Listing = Box::pin(async { Err("no answer within 3 s".to_string()) });
        vec![("first".into(), ok), ("second".into(), failed)]
    }
}

fn two() -> Arc<Two> {
    Arc::new(Two {
        first: Scripted::new(vec![Ok(text("from first")), Ok(text("first again"))]),
        second: Scripted::new(vec![Ok(text("from second"))]),
    })
}

fn start(providers: &Arc<Two>, recorder: Recorder) -> OrchestratorTask {
    let provider = Arc::new(Named {
        name: "first".into(),
        model: "m1".into(),
        inner: Arc::clone(&providers.first),
    });
    let orchestrator = Orchestrator::new(provider, Arc::new(ToolRegistry::new()), settings(10));
    let providers: Arc<dyn Providers> = providers.clone();
    task::spawn_switching(orchestrator, recorder, Some(providers))
}

async fn next(t: &mut OrchestratorTask) -> Event {
    tokio::time::timeout(Duration::from_secs(10), t.events.recv())
        .await
        .unwrap()
        .unwrap()
}

/// Events until one passes `stop` (included).
async fn until(t: &mut OrchestratorTask, stop: impl Fn(&EventData) -> bool) -> Vec<EventData> {
    let mut seen = Vec::new();
    loop {
        let event = next(t).await;
        let done = stop(&event.data);
        seen.push(event.data);
        if done {
            return seen;
        }
    }
}

fn is_final(data: &EventData) -> bool {
    matches!(data, EventData::Final { .. })
}

fn started(seen: &[EventData]) -> Option<(String, String)> {
    seen.iter().find_map(|d| match d {
        EventData::RunStarted {
            provider, model, ..
        } => Some((provider.clone(), model.clone())),
        _ => None,
    })
}

#[tokio::test]
async fn a_switch_between_requests_sends_the_next_one_to_the_new_provider() {
    let providers = two();
    let mut t = start(&providers, Recorder::default());
    t.ops.send(Op::Submit("one".into())).unwrap();
    let seen = until(&mut t, is_final).await;
    assert_eq!(started(&seen), Some(("first".into(), "m1".into())));
    t.ops
        .send(Op::Switch {
            provider: "second".into(),
            model: Some("m2".into()),
        })
        .unwrap();
    let seen = until(&mut t, |d| matches!(d, EventData::ModelSwitched(_))).await;
    assert_eq!(
        seen.last(),
        Some(&EventData::ModelSwitched(ModelChoice {
            provider: "second".into(),
            model: "m2".into()
        }))
    );
    t.ops.send(Op::Submit("two".into())).unwrap();
    let seen = until(&mut t, is_final).await;
    assert_eq!(started(&seen), Some(("second".into(), "m2".into())));
    assert!(seen.iter().any(|d| matches!(d, EventData::LlmCall(c) if c.model == "m2" && c.context_window == Some(32_000))),
        "the new model's window is used: {seen:?}");
    // The conversation went along: the second provider saw the first exchange.
    let sent = providers.second.sent();
    let texts: Vec<String> = (sent[0].messages.iter())
        .filter_map(|m| m.content.clone())
        .collect();
    assert!(
        texts.iter().any(|t| t == "one") && texts.iter().any(|t| t == "from first"),
        "{texts:?}"
    );
    assert_eq!(providers.first.sent().len(), 1);
    t.ops.send(Op::Shutdown).unwrap();
}

#[tokio::test]
async fn a_switch_asked_during_a_run_applies_after_it() {
    let providers = Arc::new(Two {
        first: Scripted::new(vec![
            Ok(calls(&[("g1", "guarded", serde_json::json!({}))])),
            Ok(text("first, after the call")),
        ]),
        second: Scripted::new(vec![Ok(text("from second"))]),
    });
    let provider = Arc::new(Named {
        name: "first".into(),
        model: "m1".into(),
        inner: Arc::clone(&providers.first),
    });
    let (registry, _) = registry();
    let orchestrator = Orchestrator::new(provider, Arc::new(registry), settings(10));
    let dyn_providers: Arc<dyn Providers> = providers.clone();
    let mut t = task::spawn_switching(orchestrator, Recorder::default(), Some(dyn_providers));
    t.ops.send(Op::Submit("one".into())).unwrap();
    // The run waits for an approval: the switch is asked for in the middle of it.
    until(&mut t, |d| matches!(d, EventData::ApprovalRequested { .. })).await;
    t.ops
        .send(Op::Switch {
            provider: "second".into(),
            model: None,
        })
        .unwrap();
    let answer = taco::orchestrator::approval::ApprovalAnswer::approve(taco::event::Scope::Once);
    t.ops
        .send(Op::Approve {
            id: "g1".into(),
            answer,
        })
        .unwrap();
    let seen = until(&mut t, |d| matches!(d, EventData::ModelSwitched(_))).await;
    let final_at = seen.iter().position(is_final).expect("the run ended first");
    assert_eq!(final_at, seen.len() - 2, "{seen:?}");
    assert_eq!(
        providers.first.sent().len(),
        2,
        "the run finished on the provider it started with"
    );
    assert!(providers.second.sent().is_empty());
    t.ops.send(Op::Submit("two".into())).unwrap();
    let seen = until(&mut t, is_final).await;
    assert_eq!(started(&seen), Some(("second".into(), "default".into())));
    t.ops.send(Op::Shutdown).unwrap();
}

#[tokio::test]
async fn a_failed_switch_is_said_and_changes_nothing() {
    let providers = two();
    let mut t = start(&providers, Recorder::default());
    t.ops
        .send(Op::Switch {
            provider: "nope".into(),
            model: None,
        })
        .unwrap();
    let event = next(&mut t).await;
    match event.data {
        EventData::Error { kind, message } => {
            assert_eq!(kind, "switch");
            assert!(message.contains("unknown provider 'nope'"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    t.ops.send(Op::Submit("one".into())).unwrap();
    let seen = until(&mut t, is_final).await;
    assert_eq!(started(&seen), Some(("first".into(), "m1".into())));
    t.ops.send(Op::Shutdown).unwrap();
}

#[tokio::test]
async fn listings_come_back_as_events_one_per_provider() {
    let providers = two();
    let mut t = start(&providers, Recorder::default());
    t.ops.send(Op::ListModels).unwrap();
    let mut listed = Vec::new();
    while listed.len() < 2 {
        if let EventData::Listed(list) = next(&mut t).await.data
            && let Listed::Models {
                provider,
                models,
                error,
            } = *list
        {
            listed.push((provider, models, error));
        }
    }
    listed.sort();
    assert_eq!(
        listed[0],
        ("first".into(), vec!["a".into(), "b".into()], None)
    );
    assert_eq!(
        listed[1],
        ("second".into(), vec![], Some("no answer within 3 s".into()))
    );
    t.ops.send(Op::Shutdown).unwrap();
}

#[tokio::test]
async fn the_session_file_keeps_the_switch_and_its_header_says_a_switch_made_before_anything() {
    let dir = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let recorder = Recorder::deferred(Some(dir.path().into()), None, "first", "m1", work.path());
    let providers = two();
    let mut t = start(&providers, recorder);
    // Before anything is recorded: the new file's header says it, no line is written for it.
    t.ops
        .send(Op::Switch {
            provider: "second".into(),
            model: Some("m2".into()),
        })
        .unwrap();
    until(&mut t, |d| matches!(d, EventData::ModelSwitched(_))).await;
    t.ops.send(Op::Submit("one".into())).unwrap();
    until(&mut t, is_final).await;
    t.ops
        .send(Op::Switch {
            provider: "first".into(),
            model: Some("m3".into()),
        })
        .unwrap();
    until(&mut t, |d| matches!(d, EventData::ModelSwitched(_))).await;
    t.ops.send(Op::Shutdown).unwrap();
    if let Some(handle) = t.handle.take() {
        handle.await.unwrap();
    }
    let files: Vec<_> = (std::fs::read_dir(dir.path()).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    assert_eq!(files.len(), 1);
    let loaded = taco::session::load(&files[0]).unwrap();
    let header = loaded.header.as_ref().unwrap();
    assert_eq!(
        (header.provider.as_str(), header.model.as_str()),
        ("second", "m2")
    );
    let switches: Vec<(String, String)> = (loaded.entries.iter())
        .filter_map(|e| match e {
            taco::session::Entry::Event(Event {
                data: EventData::ModelSwitched(chosen),
                ..
            }) => Some((chosen.provider.clone(), chosen.model.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(switches, [("first".to_string(), "m3".to_string())]);
    assert_eq!(
        taco::session::last_model(&files[0]),
        Some(("first".into(), "m3".into())),
        "what --resume and taco trace take"
    );
    let listed = taco::session::list(dir.path());
    assert_eq!(
        (listed[0].provider.as_str(), listed[0].model.as_str()),
        ("first", "m3")
    );
}
