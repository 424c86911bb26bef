//! A recorded session or `--trace` file as OTLP JSON (`taco trace FILE --otlp-json`): the
//! same fold as the live export, written as `ExportTraceServiceRequest`s in the OTLP/JSON
//! mapping, one a line (the collector's `otlpjsonfile` format), at most [`PER_LINE`] spans
//! each, so a long session is written as it is folded, not held whole.

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

/// Most spans in one line.
pub const PER_LINE: usize = 512;

/// Writes the spans of a recorded stream (every run, and whatever was still open at its end)
/// to `out`, a request a line; how many spans.
pub fn write_lines<'e>(
    events: impl IntoIterator<Item = &'e Event>,
    content: Content,
    conversation: Option<String>,
    resource: &Resource,
    out: &mut dyn std::io::Write,
) -> std::io::Result<usize> {
    let mut fold = SpanFold::new(content, conversation);
    let mut pending = Vec::new();
    let mut last = 0;
    let mut written = 0;
    let flush = |pending: &mut Vec<SpanData>, out: &mut dyn std::io::Write| {
        let spans = std::mem::take(pending);
        let n = spans.len();
        let line = request(spans, resource).map_err(std::io::Error::other)?;
        writeln!(out, "{line}")?;
        std::io::Result::Ok(n)
    };
    for event in events {
        last = last.max(event.timestamp);
        pending.extend(fold.apply(event));
        if pending.len() >= PER_LINE {
            written += flush(&mut pending, out)?;
        }
    }
    pending.extend(fold.finish(last));
    if !pending.is_empty() {
        written += flush(&mut pending, out)?;
    }
    Ok(written)
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::event::EventData;

    fn event(at: u64, data: EventData) -> Event {
        Event {
            timestamp: at,
            request_id: Arc::from("r1"),
            data,
        }
    }

    #[test]
    fn a_long_stream_is_written_a_bounded_request_a_line() {
        let mut events = vec![event(
            1,
            EventData::RunStarted {
                prompt: "p".into(),
                provider: "p".into(),
                model: "m".into(),
                max_turns: 1,
                trace_parent: None,
            },
        )];
        for n in 0..600u64 {
            let id = format!("c{n}");
            events.push(event(
                2 + n,
                EventData::ToolCall {
                    turn: 1,
                    id: id.clone(),
                    name: "shell".into(),
                    arguments: serde_json::json!({}),
                    parent: None,
                    sandbox: None,
                },
            ));
            events.push(event(
                3 + n,
                EventData::ToolResult {
                    id,
                    name: "shell".into(),
                    ok: true,
                    status: None,
                    denied_by: None,
                    result: None,
                    error: None,
                    duration_ms: 1,
                },
            ));
        }
        // The file ends mid-run: the run's span ends with it.
        let mut out = Vec::new();
        let resource = resource("taco", &[]);
        let n = write_lines(&events, Content::none(), None, &resource, &mut out).unwrap();
        assert_eq!(n, 601);
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        let count = |line: &str| {
            let json: serde_json::Value = serde_json::from_str(line).unwrap();
            json["resourceSpans"][0]["scopeSpans"][0]["spans"]
                .as_array()
                .unwrap()
                .len()
        };
        assert_eq!(count(lines[0]), PER_LINE);
        assert_eq!(count(lines[1]), 601 - PER_LINE);
        assert!(lines[1].contains("\"invoke_agent taco\""));
        assert!(lines[0].contains("\"service.name\""));
    }
}
