//! The one-line texts of timeline rows: names, argument summaries, spends.

use serde_json::Value;

use crate::event::{Confinement, Grant};

/// `write_file`, or `shell 'cargo test …'` for a shell grant.
pub(super) fn grant_label(grant: &Grant) -> String {
    match grant {
        Grant::Tool(name) => one_line(name),
        Grant::ShellPrefix(grant) => format!("shell '{}'", one_line(&grant.to_string())),
    }
}

/// `shell [sandboxed]`: a call's name and how it runs, for tools the sandbox covers.
pub(super) fn sandboxed(name: &str, sandbox: Option<Confinement>) -> String {
    match sandbox {
        Some(sandbox) => format!("{name} [{}]", sandbox.short()),
        None => name.to_string(),
    }
}

/// `name rest` on one line, without a trailing space when `rest` is empty.
pub(super) fn titled(name: &str, rest: &str) -> String {
    let name = one_line(name);
    let rest = one_line(rest);
    if rest.is_empty() {
        name
    } else {
        format!("{name} {rest}")
    }
}

/// `key=value` pairs of the top-level arguments, at most a few hundred characters (the row
/// is clipped to the pane anyway; this only bounds the work for huge arguments).
pub(super) fn summary(arguments: &Value) -> String {
    const MAX: usize = 300;
    let mut out = String::new();
    match arguments {
        Value::Object(map) => {
            for (key, value) in crate::text::telling_pairs(map) {
                if out.len() >= MAX {
                    break;
                }
                if !out.is_empty() {
                    out.push(' ');
                }
                out.push_str(key);
                out.push('=');
                match value {
                    Value::String(s) => push_clipped(&mut out, s, MAX),
                    other => push_clipped(&mut out, &other.to_string(), MAX),
                }
            }
        }
        Value::Null => {}
        Value::String(s) => push_clipped(&mut out, s, MAX),
        other => push_clipped(&mut out, &other.to_string(), MAX),
    }
    out
}

fn push_clipped(out: &mut String, text: &str, max: usize) {
    let room = max.saturating_sub(out.len());
    match text.char_indices().nth(room) {
        Some((cut, _)) => {
            out.push_str(&text[..cut]);
            out.push('…');
        }
        None => out.push_str(text),
    }
}

/// Collapses whitespace (newlines included) so a name fits one row; drops control characters.
pub(super) fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(512));
    // Names are clipped to the pane; 2000 characters is more than any pane is wide.
    for word in text.split_whitespace().take(2000) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.extend(word.chars().filter(|c| !c.is_control()));
        if out.len() > 2000 {
            break;
        }
    }
    out
}

/// `1.2k tok $0.004`: the tokens of a call (in and out), and its cost when priced; `None`
/// when the provider reported no tokens.
pub(super) fn spend(usage: &crate::conversation::Usage, cost: Option<f64>) -> Option<String> {
    let tokens = usage.input_tokens.saturating_add(usage.output_tokens);
    if tokens == 0 {
        return None;
    }
    let tokens = if tokens >= 1000 {
        format!("{:.1}k tok", tokens as f64 / 1000.0)
    } else {
        format!("{tokens} tok")
    };
    Some(match cost {
        Some(cost) => format!("{tokens} {}", crate::config::pricing::dollars(cost)),
        None => tokens,
    })
}
