//! The detail of a `compacted` event: its counts, then the summary as prose.

use serde_json::Value;

use super::Doc;
use crate::event::Compacted;
use crate::tui::views::timeline::row::Tone;

/// Adds a compaction's fields and summary to `doc`.
pub(super) fn describe(doc: &mut Doc, c: &Compacted) {
    let trigger = serde_json::to_value(c.trigger).unwrap_or(Value::Null);
    doc.field("trigger", trigger.as_str().unwrap_or("?"));
    doc.field(
        "tokens",
        &format!("{} → {}", c.before_tokens, c.after_tokens),
    );
    if let Some(window) = c.window {
        doc.field("window", &window.to_string());
    }
    doc.field("summarised", &format!("{} messages", c.summarized));
    doc.field("kept from", &format!("message {}", c.kept_from));
    if let Some(error) = &c.error {
        doc.text(Tone::Warn, error);
    }
    if !c.summary.is_empty() {
        // The summary as the model will read it: prose, not a JSON string.
        doc.heading("summary");
        doc.text(Tone::Text, &c.summary);
    }
}
