//! What a front end drives: [`Op`]s in, [`Event`]s out, and a way to stop. The orchestrator
//! task is the real one; tests put a fake behind the same trait, so the TUI's loop runs
//! without a provider.

use std::future::poll_fn;
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;

use crate::event::Event;
use crate::orchestrator::task::{Op, OrchestratorTask};

/// A running agent as the UI sees it.
pub trait Engine: Send {
    /// Hands over an op; `false` when the engine is gone.
    fn send(&mut self, op: Op) -> bool;

    /// The next event; `Ready(None)` once the engine has stopped for good.
    fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<Option<Event>>;

    /// An event that is already waiting, if any (a burst is drawn as one frame).
    fn try_event(&mut self) -> Option<Event>;

    /// Asks the engine to stop, cancelling whatever runs; the future ends when it has, or
    /// after `grace` (a tool slow to cancel must not keep taco open).
    fn shutdown(self: Box<Self>, grace: Duration) -> BoxFuture<'static, ()>;
}

/// Waits for the engine's next event (`None`: it stopped).
pub async fn next_event(engine: &mut dyn Engine) -> Option<Event> {
    poll_fn(|cx| engine.poll_event(cx)).await
}

impl Engine for OrchestratorTask {
    fn send(&mut self, op: Op) -> bool {
        self.ops.send(op).is_ok()
    }

    fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        self.events.poll_recv(cx)
    }

    fn try_event(&mut self) -> Option<Event> {
        self.events.try_recv().ok()
    }

    fn shutdown(self: Box<Self>, grace: Duration) -> BoxFuture<'static, ()> {
        // Sent now, so the run is cancelled (tools' process groups killed) at once; the wait
        // lets its last session lines be written.
        let _ = self.ops.send(Op::Shutdown);
        let handle = self.handle;
        async move {
            if let Some(handle) = handle {
                let _ = tokio::time::timeout(grace, handle).await;
            }
        }
        .boxed()
    }
}
