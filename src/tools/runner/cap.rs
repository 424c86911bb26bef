//! The last-resort cap on a tool result. Tools cut their own output to fit; this only
//! catches what they did not, and still hands the model a structured JSON value: the
//! result with its longest strings shortened, and long lists shortened if need be.

use serde_json::{Map, Value, json};

use crate::tools::budget::{json_len, prefix_within, str_cost};

/// Strings are not shortened below this many bytes while lists can be shortened instead.
const FLOOR: usize = 256;
/// The least room a value of an object is shortened into (a marker and a little text).
const MIN_SHARE: usize = 64;

/// Replaces a result whose JSON exceeds `max_bytes` by
/// `{"truncated": true, "note", "original_bytes", "partial": <the result, shortened>}`,
/// within `max_bytes` whenever that much room exists.
pub fn cap_output(value: Value, max_bytes: usize) -> Value {
    let original = json_len(&value);
    if original <= max_bytes {
        return value;
    }
    let wrap = |partial: Value, lists: bool| {
        let how = if lists {
            "its longest strings were shortened (marked …[cut N bytes]) and long lists or \
             objects lost their last items (marked …[N more items cut])"
        } else {
            "its longest strings were shortened (marked …[cut N bytes])"
        };
        json!({
            "truncated": true,
            "note": format!(
                "the result was {original} bytes, over the {max_bytes}-byte cap; {how}. Ask for \
                 less (narrower path, offset/limit, a more specific pattern)."
            ),
            "original_bytes": original,
            "partial": partial,
        })
    };
    let envelope = json_len(&wrap(Value::Null, true)) - "null".len();
    let room = max_bytes.saturating_sub(envelope);
    let mut partial = value;
    let lists = !shorten_strings(&mut partial, room);
    if lists {
        prune(&mut partial, room);
    }
    let capped = wrap(partial, lists);
    if json_len(&capped) <= max_bytes {
        return capped;
    }
    // Only a cap smaller than the envelope itself gets here.
    json!({
        "truncated": true,
        "note": format!("the result was {original} bytes, over the {max_bytes}-byte cap"),
        "original_bytes": original,
    })
}

/// An error text cut so that the tool message `{"error": text}` fits in `max_bytes` as JSON
/// (escapes included), with a marker saying how much was cut.
pub fn cap_error(text: &str, max_bytes: usize) -> String {
    let envelope = json_len(&json!({ "error": "" }));
    if envelope + str_cost(text) <= max_bytes {
        return text.to_string();
    }
    let room = max_bytes.saturating_sub(envelope + marker_cost());
    let kept = prefix_within(text, room).0.len();
    format!("{}{}", &text[..kept], cut_marker(text.len() - kept))
}

/// The most a cut marker can cost: "…[cut N bytes]" with the longest N.
fn marker_cost() -> usize {
    str_cost(&cut_marker(usize::MAX))
}

fn cut_marker(cut: usize) -> String {
    format!("…[cut {cut} bytes]")
}

/// Shortens the longest strings to one common length, as long as it can, so that `value`
/// fits in `room` bytes. Returns false when strings cut to [`FLOOR`] are not enough (they
/// are cut to it then).
fn shorten_strings(value: &mut Value, room: usize) -> bool {
    let mut costs = Vec::new();
    visit_strings(value, &mut |text| {
        costs.push(str_cost(text));
    });
    let excess = json_len(value).saturating_sub(room);
    let mark = marker_cost();
    // A string cut at `level` costs at most level + mark.
    let saved = |level: usize| -> usize {
        costs
            .iter()
            .map(|&cost| cost.saturating_sub(level + mark))
            .sum()
    };
    let enough = saved(FLOOR) >= excess;
    let mut level = FLOOR;
    if enough {
        // The highest level that saves enough: the long strings keep as much as they can.
        let mut high = costs.iter().copied().max().unwrap_or(FLOOR);
        while level < high {
            let mid = level + (high - level).div_ceil(2);
            if saved(mid) >= excess {
                level = mid;
            } else {
                high = mid - 1;
            }
        }
    }
    visit_strings(value, &mut |text| {
        if str_cost(text) > level + mark {
            cut_string(text, level);
        }
    });
    enough
}

/// Cuts `text` to at most `keep` bytes of JSON cost, plus a marker saying how much went.
fn cut_string(text: &mut String, keep: usize) {
    let kept = prefix_within(text, keep).0.len();
    let marker = cut_marker(text.len() - kept);
    text.truncate(kept);
    text.push_str(&marker);
}

/// Calls `f` on every string value (not on object keys).
fn visit_strings(value: &mut Value, f: &mut impl FnMut(&mut String)) {
    match value {
        Value::String(text) => f(text),
        Value::Array(items) => items.iter_mut().for_each(|item| visit_strings(item, f)),
        Value::Object(map) => map.values_mut().for_each(|item| visit_strings(item, f)),
        _ => {}
    }
}

/// Makes `value` fit in `room` bytes by keeping the first items of lists and objects that
/// fit (the next one is shortened into what is left, if that is worth it) and saying how
/// many went.
fn prune(value: &mut Value, room: usize) {
    if json_len(value) <= room {
        return;
    }
    // At most what the closing `"…":"…[N more items cut]"` entry costs, with its comma.
    let reserve = str_cost("…") + 4 + json_len(&json!(more_marker(usize::MAX)));
    let inner = room.saturating_sub(2 + reserve);
    match value {
        Value::String(text) => cut_string(text, room.saturating_sub(2 + marker_cost())),
        Value::Array(items) => {
            let (mut kept, left) = fitting(items.iter().map(|item| json_len(item) + 1), inner);
            if let Some(next) = items.get_mut(kept)
                && left > FLOOR
            {
                prune(next, left - 1);
                kept += 1;
            }
            let dropped = items.len() - kept;
            items.truncate(kept);
            if dropped > 0 {
                items.push(json!(more_marker(dropped)));
            }
        }
        Value::Object(map) => {
            // An entry costs its quoted key, a colon, its value and a comma.
            let key_cost = |key: &str| str_cost(key) + 4;
            let keys: usize = map.keys().map(|key| key_cost(key)).sum();
            let sizes: Vec<usize> = map.values().map(json_len).collect();
            let filled = |level: usize| -> usize {
                keys + sizes.iter().map(|&size| size.min(level)).sum::<usize>()
            };
            let whole = room.saturating_sub(2);
            if filled(MIN_SHARE) <= whole {
                // Every key stays: the biggest values share what the small ones leave.
                let mut level = MIN_SHARE;
                let mut high = sizes.iter().copied().max().unwrap_or(MIN_SHARE);
                while level < high {
                    let mid = level + (high - level).div_ceil(2);
                    if filled(mid) <= whole {
                        level = mid;
                    } else {
                        high = mid - 1;
                    }
                }
                for (item, &size) in map.values_mut().zip(&sizes) {
                    if size > level {
                        prune(item, level);
                    }
                }
                return;
            }
            // Too many keys to keep them all: the first ones that fit stay.
            let (kept, _) = fitting(
                sizes.iter().zip(map.keys()).map(|(s, k)| s + key_cost(k)),
                inner,
            );
            let dropped = map.len() - kept;
            let rest: Map<String, Value> = std::mem::take(map).into_iter().take(kept).collect();
            *map = rest;
            map.insert("…".to_string(), json!(more_marker(dropped)));
        }
        // Numbers, booleans and null are tiny: a container holding them is cut instead.
        _ => {}
    }
}

/// How many of the leading `sizes` fit in `room`, and the room they leave.
fn fitting(sizes: impl Iterator<Item = usize>, room: usize) -> (usize, usize) {
    let (mut count, mut left) = (0, room);
    for size in sizes {
        if size > left {
            break;
        }
        left -= size;
        count += 1;
    }
    (count, left)
}

fn more_marker(dropped: usize) -> String {
    format!("…[{dropped} more items cut]")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_capped(capped: &Value, cap: usize) {
        let text = capped.to_string();
        assert!(text.len() <= cap, "{} > {cap}", text.len());
        assert_eq!(capped["truncated"], true);
        assert!(capped["note"].is_string() && capped["original_bytes"].is_u64());
    }

    #[test]
    fn short_results_are_kept() {
        let short = json!({"a": 1});
        assert_eq!(cap_output(short.clone(), 100), short);
    }

    #[test]
    fn the_longest_strings_are_shortened_and_the_rest_kept() {
        let value = json!({
            "stdout": "o".repeat(100_000),
            "stderr": "\"".repeat(50_000),
            "exit_code": 0,
            "short": "kept as is",
        });
        let original = value.to_string().len();
        let capped = cap_output(value, 10_000);
        assert_capped(&capped, 10_000);
        assert_eq!(capped["original_bytes"], original);
        let partial = &capped["partial"];
        assert_eq!(
            (&partial["exit_code"], &partial["short"]),
            (&json!(0), &json!("kept as is"))
        );
        let stdout = partial["stdout"].as_str().unwrap();
        let stderr = partial["stderr"].as_str().unwrap();
        assert!(
            stdout.starts_with("oooo") && stdout.ends_with(" bytes]"),
            "{stdout}"
        );
        assert!(
            stderr.starts_with("\"\"\"") && stderr.contains("…[cut "),
            "{stderr}"
        );
        // Cut to the same JSON cost, so both got a fair share of the room.
        let kept = stdout.find('…').unwrap();
        assert!(kept > 4000, "{kept}");
        assert_eq!(
            stdout,
            format!("{}…[cut {} bytes]", "o".repeat(kept), 100_000 - kept)
        );
        // Nothing cut at char boundaries breaks UTF-8 or escapes.
        let cut = cap_output(json!({"t": "é".repeat(5000)}), 1000);
        assert_capped(&cut, 1000);
        assert!(cut["partial"]["t"].as_str().unwrap().starts_with("éé"));
    }

    #[test]
    fn huge_nested_values_keep_their_keys_and_lose_list_tails() {
        let rows: Vec<Value> = (0..20_000)
            .map(|i| json!({"id": i, "name": format!("row {i}"), "tags": ["a", "b"]}))
            .collect();
        let value = json!({"rows": rows, "count": 20_000, "nested": {"deep": {"text": "x".repeat(70_000)}}});
        let capped = cap_output(value, 65_536);
        assert_capped(&capped, 65_536);
        let partial = &capped["partial"];
        assert_eq!(partial["count"], 20_000);
        assert!(
            partial["nested"]["deep"]["text"]
                .as_str()
                .unwrap()
                .contains("…[cut")
        );
        let rows = partial["rows"].as_array().unwrap();
        assert!(rows.len() > 100, "{}", rows.len());
        assert_eq!(
            rows[0],
            json!({"id": 0, "name": "row 0", "tags": ["a", "b"]})
        );
        let last = rows.last().unwrap().as_str().unwrap();
        assert!(
            last.starts_with('…') && last.ends_with("more items cut]"),
            "{last}"
        );
        // An object with too many keys keeps its first ones.
        let wide: Map<String, Value> = (0..50_000)
            .map(|i| (format!("key{i:05}"), json!(i)))
            .collect();
        let capped = cap_output(Value::Object(wide), 4096);
        assert_capped(&capped, 4096);
        let partial = capped["partial"].as_object().unwrap();
        assert_eq!(partial["key00000"], 0);
        assert!(partial["…"].as_str().unwrap().contains("more items cut"));
    }

    /// An error full of what JSON escapes (a server's message, a command's output): as the
    /// tool message `{"error": …}` it fits the cap once escaped (the old code did not cut
    /// errors at all).
    #[test]
    fn error_texts_fit_the_cap_once_escaped() {
        for unit in ["\u{1}", "\"", "\\", "\n", "é", "x"] {
            let text = unit.repeat(100_000);
            let capped = cap_error(&text, 4096);
            let content = json!({ "error": capped }).to_string();
            assert!(content.len() <= 4096, "{unit:?}: {}", content.len());
            assert!(
                content.len() > 4000,
                "{unit:?}: the room is used: {}",
                content.len()
            );
            assert!(
                capped.starts_with(unit) && capped.ends_with(" bytes]"),
                "{unit:?}"
            );
        }
        assert_eq!(cap_error("short", 100), "short");
    }

    #[test]
    fn results_full_of_escapes_fit_the_cap_once_serialized() {
        let mut text = String::new();
        for i in 0..60_000u32 {
            text.push(['\u{1}', '"', '\\', '\n', 'a'][(i % 5) as usize]);
        }
        let value = json!({"stdout": text.clone(), "list": [text.clone(), text]});
        let capped = cap_output(value, 8192);
        assert!(
            capped.to_string().len() <= 8192,
            "{}",
            capped.to_string().len()
        );
    }

    #[test]
    fn a_cap_below_the_envelope_still_gives_json() {
        let capped = cap_output(json!({"t": "x".repeat(1000)}), 100);
        assert_eq!(capped["truncated"], true);
        assert_eq!(capped.get("partial"), None);
    }
}
