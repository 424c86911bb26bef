//! A loopback OTLP/HTTP receiver: the scripted server answering `POST /v1/traces` with an
//! empty `ExportTraceServiceResponse`, and the spans it received, decoded with the
//! `opentelemetry-proto` types.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;

use super::{Reply, TestServer};

/// A receiver that accepts `exports` requests.
pub async fn receiver(exports: usize) -> TestServer {
    let ok = || {
        Reply::status(200)
            .header("Content-Type", "application/x-protobuf")
            .body(Vec::new())
    };
    TestServer::start((0..exports).map(|_| ok()).collect()).await
}

/// A collector that accepts connections, reads nothing and answers nothing, until dropped.
pub struct Stalled {
    url: String,
    accepted: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
}

impl Stalled {
    /// Starts one on a loopback port.
    pub fn start() -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let accepted = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (count, stopped) = (Arc::clone(&accepted), Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut held = Vec::new();
            while !stopped.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((socket, _)) => {
                        count.fetch_add(1, Ordering::Relaxed);
                        held.push(socket);
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        });
        Self {
            url,
            accepted,
            stop,
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Connections taken so far.
    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::Relaxed)
    }
}

impl Drop for Stalled {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Every export request the receiver got, decoded.
pub fn exports(server: &TestServer) -> Vec<ExportTraceServiceRequest> {
    server
        .requests()
        .iter()
        .filter(|r| r.path == "/v1/traces")
        .map(|r| {
            assert_eq!(
                r.header("content-type"),
                Some("application/x-protobuf"),
                "OTLP/HTTP protobuf"
            );
            ExportTraceServiceRequest::decode(r.body.as_slice()).expect("an OTLP export")
        })
        .collect()
}

/// Every span received, in arrival order.
pub fn spans(server: &TestServer) -> Vec<Span> {
    exports(server)
        .into_iter()
        .flat_map(|e| e.resource_spans)
        .flat_map(|r| r.scope_spans)
        .flat_map(|s| s.spans)
        .collect()
}

/// The value of attribute `key`, as text (numbers and booleans written out).
pub fn attr(attributes: &[KeyValue], key: &str) -> Option<String> {
    let value = attributes.iter().find(|kv| kv.key == key)?.value.as_ref()?;
    Some(text(value))
}

fn text(value: &AnyValue) -> String {
    match &value.value {
        Some(any_value::Value::StringValue(s)) => s.clone(),
        Some(any_value::Value::IntValue(i)) => i.to_string(),
        Some(any_value::Value::BoolValue(b)) => b.to_string(),
        Some(any_value::Value::DoubleValue(d)) => d.to_string(),
        Some(any_value::Value::ArrayValue(a)) => {
            a.values.iter().map(text).collect::<Vec<_>>().join(",")
        }
        other => format!("{other:?}"),
    }
}

/// The span named `name` (the only one).
pub fn named<'a>(spans: &'a [Span], name: &str) -> &'a Span {
    let found: Vec<&Span> = spans.iter().filter(|s| s.name == name).collect();
    assert_eq!(found.len(), 1, "spans named {name}: {:?}", names(spans));
    found[0]
}

/// The spans' names.
pub fn names(spans: &[Span]) -> Vec<String> {
    spans.iter().map(|s| s.name.clone()).collect()
}

/// Unix ms of a span time (ns).
pub fn ms(ns: u64) -> u64 {
    ns / 1_000_000
}
