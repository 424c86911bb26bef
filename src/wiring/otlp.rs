//! `taco trace FILE --otlp-json`: a recorded session or `--trace` file as OTLP JSON on
//! stdout, the spans a live export would have sent, for a backend to load later.

use std::io::Write;
use std::path::Path;

use super::Start;
use crate::exec::{EXIT_OK, EXIT_RUN_ERROR, EXIT_USAGE};
use crate::otel::attrs::Content;
use crate::session::Entry;

/// Writes `file`'s spans to stdout as one OTLP/JSON export request.
pub fn otlp_json(start: &Start, file: &Path) -> i32 {
    let loaded = match crate::session::load(file) {
        Ok(loaded) => loaded,
        Err(e) => {
            crate::say!("taco: {e}");
            return EXIT_USAGE;
        }
    };
    for warning in &loaded.warnings {
        crate::say!("taco: {warning}");
    }
    // `[otel]` says whether content goes in and what the service is called; the rest of the
    // config does not matter here.
    let env = |name: &str| crate::vault::var(name).or_else(|| std::env::var(name).ok());
    let otel = match crate::config::read_config(&start.overrides, &env) {
        Ok((_, file)) => file.otel,
        Err(e) => {
            crate::say!("taco: {e}");
            return EXIT_USAGE;
        }
    };
    let content = if otel.capture_content {
        let named = crate::config::named_secrets(&start.overrides, &env);
        Content::captured(std::sync::Arc::new(crate::vault::secrets(&named)))
    } else {
        Content::none()
    };
    let service = (env("OTEL_SERVICE_NAME").filter(|s| !s.is_empty()))
        .or(otel.service_name)
        .unwrap_or_else(|| "taco".into());
    let conversation = loaded.header.as_ref().map(|h| h.id.clone());
    let events = loaded.entries.iter().filter_map(|e| match e {
        Entry::Event(event) => Some(event),
        Entry::Message(_) => None,
    });
    let spans = crate::otel::json::spans(events, content, conversation);
    let resource = crate::otel::json::resource(&service, &[]);
    let json = match crate::otel::json::request(spans, &resource) {
        Ok(json) => json,
        Err(e) => {
            crate::say!("taco: cannot write the spans as JSON: {e}");
            return EXIT_RUN_ERROR;
        }
    };
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{json}").and_then(|()| out.flush()) {
        Ok(()) => EXIT_OK,
        Err(e) => {
            crate::say!("taco: cannot write to stdout: {e}");
            EXIT_RUN_ERROR
        }
    }
}
