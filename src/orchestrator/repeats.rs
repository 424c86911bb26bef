//! Loop detection (issue 14.8): a model that makes the same tool call with the same arguments
//! again and again in one request is stuck. The third time, the call is flagged (a
//! `loop_warning` event) and the model is told, once, in that call's result.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::scope::{Pending, Run};
use crate::event::EventData;

/// The call count at which a repeated call is flagged.
pub const REPEATS_FLAGGED: u32 = 3;

/// How often each call was made in this request, by conversation, tool and arguments.
#[derive(Debug, Default)]
pub(super) struct Repeats {
    seen: HashMap<(Option<String>, String, String), u32>,
}

impl Repeats {
    /// Counts one call; the count when it reaches [`REPEATS_FLAGGED`], once per call.
    pub(super) fn count(
        &mut self,
        parent: Option<&str>,
        name: &str,
        arguments: &Value,
    ) -> Option<u32> {
        let key = (
            parent.map(String::from),
            name.to_string(),
            canonical(arguments),
        );
        let n = self.seen.entry(key).or_insert(0);
        *n = n.saturating_add(1);
        (*n == REPEATS_FLAGGED).then_some(*n)
    }
}

impl Repeats {
    /// Counts a turn's calls, each call once per turn: a stuck model repeats itself turn
    /// after turn (the same call twice in one batch is a different oddity). One entry per
    /// call: the count when it is flagged.
    pub(super) fn count_turn(&mut self, calls: &[Pending]) -> Vec<Option<u32>> {
        let mut this_turn = HashSet::new();
        calls
            .iter()
            .map(|c| {
                if !this_turn.insert((c.name.as_str(), canonical(&c.arguments))) {
                    return None;
                }
                self.count(c.parent.as_deref(), &c.name, &c.arguments)
            })
            .collect()
    }
}

impl Run<'_> {
    /// The `loop_warning` events of a turn's flagged calls; sent after the calls' own
    /// events, so the UI flags a call it already shows.
    pub(super) fn warn_loops(&mut self, calls: &[Pending], repeated: &[Option<u32>]) {
        for (call, times) in calls.iter().zip(repeated) {
            if let Some(times) = times {
                self.emit(EventData::LoopWarning {
                    id: call.frame.clone(),
                    name: call.name.clone(),
                    times: *times,
                    parent: call.parent.clone(),
                });
            }
        }
    }
}

/// Arguments as text with every object's keys sorted: equal arguments are equal text
/// whatever order the model wrote them in (and whether `serde_json` keeps maps sorted or in
/// insertion order, which a dependency's feature can switch for the whole build).
fn canonical(value: &Value) -> String {
    fn write(value: &Value, out: &mut String) {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                out.push('{');
                for (n, key) in keys.into_iter().enumerate() {
                    if n > 0 {
                        out.push(',');
                    }
                    out.push_str(&Value::String(key.clone()).to_string());
                    out.push(':');
                    write(&map[key], out);
                }
                out.push('}');
            }
            Value::Array(items) => {
                out.push('[');
                for (n, item) in items.iter().enumerate() {
                    if n > 0 {
                        out.push(',');
                    }
                    write(item, out);
                }
                out.push(']');
            }
            other => out.push_str(&other.to_string()),
        }
    }
    let mut out = String::new();
    write(value, &mut out);
    out
}

/// What the model is told in the result of the flagged call.
pub(super) fn note(name: &str, times: u32) -> String {
    format!(
        "You have now called {name} {times} times in this request with exactly the same \
         arguments; the result will not change. Use what you have, try something different, \
         or answer."
    )
}

/// The result content with the note added: a field of a JSON object, else a line after it.
pub(super) fn with_note(content: String, note: &str) -> String {
    match serde_json::from_str::<Value>(&content) {
        Ok(Value::Object(mut map)) => {
            map.insert("repeated_call".to_string(), Value::String(note.to_string()));
            Value::Object(map).to_string()
        }
        _ => format!("{content}\n\n[{note}]"),
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn equal_arguments_in_another_order_are_the_same_call() {
        let a: Value =
            serde_json::from_str(r#"{"b":1,"a":{"d":[2,{"y":1,"x":0}],"c":"é\""}}"#).unwrap();
        let b: Value =
            serde_json::from_str(r#"{"a":{"c":"é\"","d":[2,{"x":0,"y":1}]},"b":1}"#).unwrap();
        assert_eq!(canonical(&a), canonical(&b));
        assert_eq!(
            canonical(&a),
            r#"{"a":{"c":"é\"","d":[2,{"x":0,"y":1}]},"b":1}"#
        );
        assert_ne!(canonical(&a), canonical(&serde_json::json!({"b": 2})));
    }

    use super::*;
    use serde_json::json;

    #[test]
    fn the_third_identical_call_is_flagged_once() {
        let mut r = Repeats::default();
        let args = json!({"path": "a", "limit": 3});
        assert_eq!(r.count(None, "read_file", &args), None);
        assert_eq!(
            r.count(None, "read_file", &json!({"limit": 3, "path": "a"})),
            None
        );
        assert_eq!(r.count(None, "read_file", &args), Some(3));
        assert_eq!(r.count(None, "read_file", &args), None, "told once");
        // Other arguments, another tool, another conversation: counted apart.
        assert_eq!(r.count(None, "read_file", &json!({"path": "b"})), None);
        assert_eq!(r.count(Some("d1"), "read_file", &args), None);
        assert_eq!(r.count(None, "list_dir", &args), None);
    }

    #[test]
    fn the_note_goes_into_an_object_or_after_other_text() {
        let with = with_note(r#"{"content":"x"}"#.into(), "stop");
        assert_eq!(
            serde_json::from_str::<Value>(&with).unwrap(),
            json!({"content": "x", "repeated_call": "stop"})
        );
        assert_eq!(with_note("plain".into(), "stop"), "plain\n\n[stop]");
        assert!(note("shell", 3).contains("shell 3 times"));
    }
}
