//! A recorded session or `--trace` file as OTLP JSON (`taco trace FILE --otlp-json`): the
//! same fold as the live export, written as one `ExportTraceServiceRequest` in the OTLP/JSON
//! mapping, which any collector or backend loads.

use opentelemetry::KeyValue;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::transform::common::tonic::ResourceAttributesWithSchema;
use opentelemetry_proto::transform::trace::tonic::group_spans_by_resource_and_scope;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SpanData;

use super::attrs::Content;
use super::fold::SpanFold;
use crate::event::Event;

/// The resource spans are reported under: `service.name` (and the version).
pub fn resource(service_name: &str, extra: &[(String, String)]) -> Resource {
    let mut attributes: Vec<KeyValue> = (extra.iter())
        .map(|(k, v)| KeyValue::new(k.clone(), v.clone()))
        .collect();
    attributes.push(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")));
    Resource::builder_empty()
        .with_attributes(attributes)
        .with_service_name(service_name.to_string())
        .build()
}

/// The spans of a recorded stream: every run, and whatever was still open at its end.
pub fn spans<'e>(
    events: impl IntoIterator<Item = &'e Event>,
    content: Content,
    conversation: Option<String>,
) -> Vec<SpanData> {
    let mut fold = SpanFold::new(content, conversation);
    let mut spans = Vec::new();
    let mut last = 0;
    for event in events {
        last = last.max(event.timestamp);
        spans.extend(fold.apply(event));
    }
    spans.extend(fold.finish(last));
    spans
}

/// The spans as an OTLP/JSON `ExportTraceServiceRequest`.
pub fn request(spans: Vec<SpanData>, resource: &Resource) -> Result<String, serde_json::Error> {
    let request = ExportTraceServiceRequest {
        resource_spans: group_spans_by_resource_and_scope(
            spans,
            &ResourceAttributesWithSchema::from(resource),
        ),
    };
    serde_json::to_string(&request)
}
