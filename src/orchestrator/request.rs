//! One request with options of its own (a custom command's front matter): only some tools
//! offered, another model of the provider. Both hold for that request alone (its sub-agents
//! included) and the orchestrator is as it was afterwards. Narrowing the tools only narrows:
//! a tool's policy, the grants and the approvals are the same as for any request.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::approval::Approver;
use super::switch::Switched;
use super::{EventSink, Orchestrator, Outcome};
use crate::tools::{Tool, ToolRegistry, ToolSource};

/// What a request asks besides its prompt.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestOptions {
    /// Only these tools are offered (`None`: every tool).
    pub tools: Option<Vec<String>>,
    /// This model of the running provider, for this request (`None`: the session's).
    pub model: Option<String>,
}

impl RequestOptions {
    /// Whether it asks nothing of its own.
    pub fn is_plain(&self) -> bool {
        self.tools.is_none() && self.model.is_none()
    }
}

/// The tools of a registry whose names are in a list (the registry's own change as MCP
/// servers come and go: the list is applied each time).
struct Only {
    registry: Arc<ToolRegistry>,
    names: Vec<String>,
}

impl ToolSource for Only {
    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        (self.registry.all().into_iter())
            .filter(|t| self.names.iter().any(|n| n == t.name()))
            .collect()
    }
}

/// What a request swapped out, put back when it ends.
struct Saved {
    registry: Option<Arc<ToolRegistry>>,
    provider: Option<(Switched, Option<Option<u64>>, bool)>,
}

impl Orchestrator {
    /// [`Orchestrator::run`] with `options`: the tools they name alone are offered, and
    /// `switched` (the provider with the model they name, made by the caller, who knows the
    /// config) answers; both for this request only.
    pub async fn run_with(
        &mut self,
        prompt: &str,
        options: &RequestOptions,
        switched: Option<Switched>,
        sink: &mut dyn EventSink,
        approver: &mut dyn Approver,
        cancel: &CancellationToken,
    ) -> Outcome {
        let saved = self.narrow(options, switched);
        let outcome = self.run(prompt, sink, approver, cancel).await;
        self.restore_after(saved);
        outcome
    }

    fn narrow(&mut self, options: &RequestOptions, switched: Option<Switched>) -> Saved {
        let registry = options.tools.as_ref().map(|names| {
            let full = Arc::clone(&self.registry);
            let mut only = ToolRegistry::new();
            only.add_source(Arc::new(Only {
                registry: Arc::clone(&full),
                names: names.clone(),
            }));
            self.registry = Arc::new(only);
            full
        });
        let provider = switched.map(|switched| {
            let before = Switched {
                provider: std::mem::replace(&mut self.provider, switched.provider),
                retry: std::mem::replace(&mut self.settings.retry, switched.retry),
                limits: std::mem::replace(&mut self.settings.limits, switched.limits),
                context: std::mem::replace(&mut self.settings.context, switched.context),
            };
            let window = self.asked_window.take();
            let refused = std::mem::take(&mut self.summary_tokens_refused);
            (before, window, refused)
        });
        Saved { registry, provider }
    }

    fn restore_after(&mut self, saved: Saved) {
        if let Some(full) = saved.registry {
            self.registry = full;
        }
        if let Some((before, window, refused)) = saved.provider {
            self.provider = before.provider;
            self.settings.retry = before.retry;
            self.settings.limits = before.limits;
            self.settings.context = before.context;
            self.asked_window = window;
            self.summary_tokens_refused = refused;
        }
    }
}
