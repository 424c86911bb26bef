//! A call's arguments as the dialog shows them for review.

use serde_json::Value;

use crate::tui::safe::escape;

/// Arguments for a person to review: `key: value` per line, multi-line strings (file
/// contents, scripts) shown as the text they are, other values as indented JSON. Controls
/// show as placeholders (`^[`, see `safe::escape`): what is approved is what is seen.
pub fn pretty(arguments: &Value) -> String {
    let Value::Object(map) = arguments else {
        // JSON escapes C0 controls but not C1 controls or bidi overrides.
        return escape(&json_text(arguments)).into_owned();
    };
    // Short values first, so `path` or `command` is seen before a long file body.
    let mut fields: Vec<(&String, &Value)> = map.iter().collect();
    fields.sort_by_key(|(_, v)| matches!(v, Value::String(t) if t.contains('\n')));
    let mut out = String::new();
    for (key, value) in fields {
        let key = escape(key).replace('\n', "^J");
        match value {
            Value::String(text) if text.contains('\n') => {
                out.push_str(&key);
                out.push_str(":\n");
                for line in text.lines() {
                    out.push_str("  ");
                    out.push_str(&escape(line));
                    out.push('\n');
                }
            }
            Value::String(text) => {
                out.push_str(&format!("{key}: {}\n", escape(text)));
            }
            other => {
                out.push_str(&format!("{key}: {}\n", escape(&json_text(other))));
            }
        }
    }
    out
}

fn json_text(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}
