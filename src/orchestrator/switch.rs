//! Switching provider or model between requests (`/model`, `/provider`): the conversation
//! stays, the next request goes to the new provider. What a provider name and a model become
//! is the config's business ([`Providers`], given by wiring), so the core never reads it.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use tokio::sync::mpsc::{UnboundedSender, WeakUnboundedSender};

use super::context::ContextSettings;
use super::recorded::Recorded;
use super::retry::RetryPolicy;
use super::{EventSink, Limits, Orchestrator};
use crate::event::{Event, EventData, Listed, ModelChoice};
use crate::provider::Provider;

/// A provider ready to take over, with the settings that follow it.
#[derive(Clone)]
pub struct Switched {
    /// The new provider (its name and model are what `model_switched` records).
    pub provider: Arc<dyn Provider>,
    /// Its retries.
    pub retry: RetryPolicy,
    /// Its bounds on a call.
    pub limits: Limits,
    /// Its model's window and when to compact.
    pub context: ContextSettings,
}

/// One provider a session can switch to, as the `/model` picker lists it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProviderModels {
    /// Provider name.
    pub name: String,
    /// Its default model.
    pub model: String,
    /// Models the config names for it (the default first).
    pub models: Vec<String>,
    /// Whether its server can be asked for its models.
    pub lists: bool,
}

/// What a listing resolves to: the server's models, or why there are none.
pub type Listing = BoxFuture<'static, Result<Vec<String>, String>>;

/// The providers a session can switch between, and how to reach each one.
pub trait Providers: Send + Sync {
    /// Every provider, the running one first.
    fn catalog(&self) -> Vec<ProviderModels>;

    /// The provider `name` with `model` (its default when `None`), or why not.
    fn switch(&self, name: &str, model: Option<&str>) -> Result<Switched, String>;

    /// Asks each listable provider's server for its models: (provider name, listing).
    fn listings(&self) -> Vec<(String, Listing)>;
}

impl Orchestrator {
    /// Talks to `switched` from the next model call on and says so (`model_switched`); the
    /// conversation stays. The old model's window is forgotten (Ollama's is asked anew).
    pub fn switch_to(&mut self, switched: Switched, sink: &mut dyn EventSink) {
        self.provider = switched.provider;
        self.settings.retry = switched.retry;
        self.settings.limits = switched.limits;
        self.settings.context = switched.context;
        self.asked_window = None;
        self.summary_tokens_refused = false;
        let request_id: Arc<str> = Arc::from(uuid::Uuid::new_v4().to_string());
        sink.emit(Event {
            timestamp: self.clock.unix_ms(),
            request_id,
            data: EventData::ModelSwitched(ModelChoice {
                provider: self.provider.name().to_string(),
                model: self.provider.model().to_string(),
            }),
        });
    }
}

/// What the task lists and switches with: the providers (none: only the running one), and
/// where listings go when they are done (weak, so the channel still ends with the task).
pub(super) struct Lists {
    pub(super) providers: Option<Arc<dyn Providers>>,
    pub(super) events: WeakUnboundedSender<Event>,
}

impl Lists {
    /// Switches `orchestrator` to `name`/`model`; why not goes to the UI as an error outside
    /// any request (not to the session: nothing changed).
    pub(super) fn switch(
        &self,
        orchestrator: &mut Orchestrator,
        sink: &mut Recorded<UnboundedSender<Event>>,
        name: &str,
        model: Option<&str>,
    ) {
        let switched = match &self.providers {
            Some(providers) => providers.switch(name, model),
            None => Err("this session cannot switch providers".to_string()),
        };
        match switched {
            Ok(switched) => orchestrator.switch_to(switched, sink),
            Err(why) => sink.inner_mut().emit(Event::now(
                &Arc::from(""),
                EventData::Error {
                    kind: "switch".to_string(),
                    message: why,
                },
            )),
        }
    }

    /// The running provider with `model`, for one request (a custom command's `model:`);
    /// why not goes to the UI as an error outside any request, and the session's model
    /// answers.
    pub(super) fn for_request(
        &self,
        orchestrator: &Orchestrator,
        sink: &mut Recorded<UnboundedSender<Event>>,
        model: &str,
    ) -> Option<Switched> {
        let name = orchestrator.provider().name().to_string();
        let switched = match &self.providers {
            Some(providers) => providers.switch(&name, Some(model)),
            None => Err("this session cannot switch models".to_string()),
        };
        switched
            .map_err(|why| {
                let message = format!(
                    "the model `{model}` the command asks for cannot be used ({why}); the session's model answers"
                );
                sink.inner_mut().emit(Event::now(
                    &Arc::from(""),
                    EventData::Error {
                        kind: "switch".to_string(),
                        message,
                    },
                ));
            })
            .ok()
    }

    /// Lists every listable provider's models at once, each in its own task: one
    /// `models_listed` event per provider as it answers.
    pub(super) fn models(&self) {
        let Some(providers) = &self.providers else {
            return;
        };
        for (provider, listing) in providers.listings() {
            let events = self.events.clone();
            tokio::spawn(async move {
                let (models, error) = match listing.await {
                    Ok(models) => (models, None),
                    Err(why) => (Vec::new(), Some(why)),
                };
                let data = EventData::Listed(Box::new(Listed::Models {
                    provider,
                    models,
                    error,
                }));
                if let Some(events) = events.upgrade() {
                    let _ = events.send(Event::now(&Arc::from(""), data));
                }
            });
        }
    }

    /// Lists the saved sessions on a blocking thread (it reads every file): one
    /// `sessions_listed` event, which says that `open` is the session being written.
    pub(super) fn sessions(&self, open: Option<String>) {
        let events = self.events.clone();
        tokio::task::spawn_blocking(move || {
            let (sessions, problems) = match crate::session::sessions_dir() {
                Some(dir) => crate::session::list_with_problems(&dir),
                None => (Vec::new(), vec!["there is no data directory".to_string()]),
            };
            let data = EventData::Listed(Box::new(Listed::Sessions {
                sessions,
                problems,
                open,
            }));
            if let Some(events) = events.upgrade() {
                let _ = events.send(Event::now(&Arc::from(""), data));
            }
        });
    }
}
