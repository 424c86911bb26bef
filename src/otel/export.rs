//! Spans to a collector over OTLP/HTTP (protobuf), off the hot path: the recorder folds each
//! event into spans and hands the ended ones to a bounded queue; a thread of its own (with
//! its own small runtime, so neither the TUI's loop nor `exec`'s run waits on it) batches
//! them to the `opentelemetry-otlp` exporter. A full queue drops spans and counts them; a
//! dead or slow collector costs one bounded export attempt at a time; either is reported
//! once. Shutdown flushes what is queued within a bound, then leaves.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use opentelemetry::KeyValue;
use opentelemetry_otlp::{Protocol, RetryPolicy, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{SpanData, SpanExporter as _};

use super::{Exporting, shown_url};

/// Messages the queue holds at most (each the spans one event ended).
const QUEUE: usize = 1024;
/// Spans sent in one export at most.
const BATCH: usize = 512;
/// How long ended spans wait for more before they are sent.
const LINGER: Duration = Duration::from_millis(500);
/// The longest one export may take (a slow collector costs this much, once at a time).
const EXPORT_TIMEOUT: Duration = Duration::from_secs(5);
/// The longest taco waits at its end for what is queued to be sent.
pub const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(3);

enum Msg {
    Spans(Vec<SpanData>),
    Stop,
}

/// What the exporting thread tells the recorder.
#[derive(Default)]
struct Shared {
    dropped: AtomicU64,
    failure: Mutex<Option<String>>,
}

/// The live exporter: a queue in front of a thread.
pub struct Exporter {
    tx: Option<SyncSender<Msg>>,
    shared: Arc<Shared>,
    done: Option<Receiver<()>>,
    url: String,
    reported: bool,
}

impl Exporter {
    /// Starts exporting to `to`; an exporter that cannot be built is an error for the user.
    pub fn start(to: &Exporting) -> Result<Self, String> {
        let headers: HashMap<String, String> = to.headers.iter().cloned().collect();
        let mut exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(to.url.clone())
            .with_timeout(EXPORT_TIMEOUT)
            .with_headers(headers)
            // One attempt an export: a batch a collector refuses is dropped and counted, and a
            // dead collector costs taco's exit nothing (the recommended retries wait ~1 s).
            .with_retry_policy(RetryPolicy::disabled())
            .build()
            .map_err(|e| {
                format!(
                    "OpenTelemetry export to {} cannot start: {e}",
                    shown_url(&to.url)
                )
            })?;
        let mut attributes: Vec<KeyValue> = (to.resource.iter())
            .map(|(k, v)| KeyValue::new(k.clone(), v.clone()))
            .collect();
        attributes.push(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")));
        exporter.set_resource(
            &Resource::builder_empty()
                .with_attributes(attributes)
                .with_service_name(to.service_name.clone())
                .build(),
        );
        let (tx, rx) = sync_channel(QUEUE);
        let (done_tx, done) = sync_channel(1);
        let shared = Arc::new(Shared::default());
        let worker = Arc::clone(&shared);
        let secrets: Vec<String> = to.headers.iter().map(|(_, v)| v.clone()).collect();
        std::thread::Builder::new()
            .name("taco-otel".into())
            .spawn(move || {
                run(exporter, rx, &worker, &secrets);
                let _ = done_tx.send(());
            })
            .map_err(|e| format!("OpenTelemetry export cannot start a thread: {e}"))?;
        Ok(Self {
            tx: Some(tx),
            shared,
            done: Some(done),
            url: shown_url(&to.url),
            reported: false,
        })
    }

    /// Queues ended spans; never waits (a full queue drops them, counted).
    pub fn send(&mut self, spans: Vec<SpanData>) {
        if spans.is_empty() {
            return;
        }
        let Some(tx) = &self.tx else { return };
        let n = spans.len() as u64;
        match tx.try_send(Msg::Spans(spans)) {
            Ok(()) => {}
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                self.shared.dropped.fetch_add(n, Ordering::Relaxed);
            }
        }
    }

    /// The first trouble, once: spans dropped or an export failed.
    pub fn take_report(&mut self) -> Option<String> {
        // Asked after every recorded event: an atomic load until there is something to say
        // (a failure is recorded before its spans are counted as dropped).
        let dropped = self.shared.dropped.load(Ordering::Acquire);
        if self.reported || dropped == 0 {
            return None;
        }
        let failure = (self.shared.failure.lock())
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        self.reported = true;
        let why = failure.unwrap_or_else(|| "the queue is full".into());
        Some(format!(
            "OpenTelemetry export to {} is failing ({why}); spans are dropped ({dropped} so \
             far) and the run goes on",
            self.url
        ))
    }

    /// Sends what is queued and stops, waiting at most `bound` — not at all once an export
    /// has failed: a collector known to be down or slow does not hold taco's exit.
    pub fn shutdown(&mut self, bound: Duration) {
        if let Some(tx) = self.tx.take() {
            // A full queue cannot take the stop: the thread ends when the sender goes.
            let _ = tx.try_send(Msg::Stop);
        }
        let failed = (self.shared.failure.lock())
            .unwrap_or_else(PoisonError::into_inner)
            .is_some();
        if let Some(done) = self.done.take()
            && !failed
        {
            let _ = done.recv_timeout(bound);
        }
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        self.shutdown(SHUTDOWN_TIMEOUT);
    }
}

/// The thread: batches of ended spans, each exported within [`EXPORT_TIMEOUT`].
fn run(
    exporter: opentelemetry_otlp::SpanExporter,
    rx: Receiver<Msg>,
    shared: &Shared,
    secrets: &[String],
) {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        *shared
            .failure
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some("no runtime for the exporter".into());
        return;
    };
    let mut batch: Vec<SpanData> = Vec::new();
    let mut since: Option<Instant> = None;
    let mut stopping = false;
    while !stopping {
        let wait = since.map_or(Duration::from_secs(3600), |t| {
            LINGER.saturating_sub(t.elapsed())
        });
        match rx.recv_timeout(wait) {
            Ok(Msg::Spans(spans)) => {
                since.get_or_insert_with(Instant::now);
                batch.extend(spans);
                if batch.len() < BATCH {
                    continue;
                }
            }
            Ok(Msg::Stop) | Err(RecvTimeoutError::Disconnected) => stopping = true,
            Err(RecvTimeoutError::Timeout) => {}
        }
        while !batch.is_empty() {
            let rest = batch.split_off(batch.len().min(BATCH));
            let sending = std::mem::replace(&mut batch, rest);
            let n = sending.len() as u64;
            let outcome = runtime.block_on(async {
                tokio::time::timeout(EXPORT_TIMEOUT, exporter.export(sending)).await
            });
            let failure = match outcome {
                Ok(Ok(())) => None,
                Ok(Err(e)) => Some(e.to_string()),
                Err(_) => Some(format!("no answer in {} s", EXPORT_TIMEOUT.as_secs())),
            };
            if let Some(mut why) = failure {
                for secret in secrets.iter().filter(|s| !s.is_empty()) {
                    why = why.replace(secret.as_str(), "[redacted]");
                }
                let mut first = shared
                    .failure
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                if first.is_none() {
                    tracing::warn!(spans = n, error = %why, "OpenTelemetry export failed");
                    *first = Some(crate::text::summarize(&why, 300));
                }
                drop(first);
                shared.dropped.fetch_add(n, Ordering::Release);
            }
        }
        since = None;
    }
}
