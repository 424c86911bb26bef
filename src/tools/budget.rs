//! Byte budgets measured as the model receives them: compact JSON, escapes included.
//!
//! Tools cut their own output to fit `max_output_bytes` with these, so the runner's
//! last-resort cap never has to (escaping can make a text several times longer).

use serde_json::Value;

/// The bytes `c` takes inside a JSON string as serde_json writes it.
pub fn char_cost(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        c if u32::from(c) < 0x20 => 6,
        c => c.len_utf8(),
    }
}

/// The bytes `text` takes inside a JSON string (without the quotes).
pub fn str_cost(text: &str) -> usize {
    text.chars().map(char_cost).sum()
}

/// The length of `value` as compact JSON, without building the text.
pub fn json_len(value: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing a Value to a counter cannot fail.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

/// The longest prefix of `text` whose JSON cost is at most `budget`, and that cost.
pub fn prefix_within(text: &str, budget: usize) -> (&str, usize) {
    let mut cost = 0;
    for (at, c) in text.char_indices() {
        let next = cost + char_cost(c);
        if next > budget {
            return (&text[..at], cost);
        }
        cost = next;
    }
    (text, cost)
}

/// Pieces of lossily decoded bytes, in order: (raw bytes, JSON cost of their decoding).
/// An invalid sequence becomes U+FFFD (3 bytes), as `String::from_utf8_lossy` does.
fn lossy_units(bytes: &[u8]) -> impl Iterator<Item = (usize, usize)> + '_ {
    bytes.utf8_chunks().flat_map(|chunk| {
        let valid = chunk.valid().chars().map(|c| (c.len_utf8(), char_cost(c)));
        let invalid = (!chunk.invalid().is_empty()).then_some((chunk.invalid().len(), 3));
        valid.chain(invalid)
    })
}

/// The JSON cost of `bytes` decoded lossily.
pub fn bytes_cost(bytes: &[u8]) -> usize {
    lossy_units(bytes).map(|(_, cost)| cost).sum()
}

/// The longest prefix of `bytes` (raw length) whose lossy decoding costs at most `budget`,
/// and that cost. Never ends inside a character.
pub fn bytes_prefix(bytes: &[u8], budget: usize) -> (usize, usize) {
    let (mut len, mut cost) = (0, 0);
    for (raw, c) in lossy_units(bytes) {
        if cost + c > budget {
            break;
        }
        len += raw;
        cost += c;
    }
    (len, cost)
}

/// Where the longest suffix of `bytes` starts whose lossy decoding costs at most `budget`,
/// and that cost. Never starts inside a character.
pub fn bytes_suffix(bytes: &[u8], budget: usize) -> (usize, usize) {
    // Continuation bytes at the start belong to a character cut off before the buffer.
    let skip = bytes
        .iter()
        .take(3)
        .take_while(|&&b| b & 0xC0 == 0x80)
        .count();
    let rest = &bytes[skip..];
    let mut cost = bytes_cost(rest);
    let mut start = skip;
    for (raw, c) in lossy_units(rest) {
        if cost <= budget {
            break;
        }
        start += raw;
        cost -= c;
    }
    (start, cost)
}

/// Drops a character cut off at the end of `bytes` (its first bytes only), so a cut made by
/// byte count does not show as U+FFFD.
pub fn trim_partial_char(bytes: &mut Vec<u8>) {
    let tail = bytes.len().saturating_sub(3);
    let Some(lead) = (tail..bytes.len()).rev().find(|&i| bytes[i] & 0xC0 != 0x80) else {
        return;
    };
    let width = match bytes[lead] {
        b if b >= 0xF0 => 4,
        b if b >= 0xE0 => 3,
        b if b >= 0xC0 => 2,
        _ => 1,
    };
    if bytes.len() - lead < width {
        bytes.truncate(lead);
    }
}

/// Builds a result whose compact JSON fits in `cap` bytes.
///
/// `build(budget)` makes the result with its cuttable text (file lines, command output, page
/// text) within `budget` bytes of JSON cost, and returns it with the cost it used. The first
/// try gives the whole cap; each retry gives what the rest of the result left, so it usually
/// takes two. The text keeps at least a quarter of the cap, so a huge envelope (a very long
/// path) cannot starve it: the runner's last-resort cap handles that case.
pub fn fit(cap: usize, mut build: impl FnMut(usize) -> (Value, usize)) -> Value {
    let floor = cap / 4;
    let mut budget = cap;
    for _ in 0..16 {
        let (value, used) = build(budget);
        let len = json_len(&value);
        if len <= cap || budget <= floor {
            return value;
        }
        let envelope = len.saturating_sub(used);
        // Strictly smaller each time, so this ends even if the envelope grows as text shrinks.
        budget = cap.saturating_sub(envelope).min(budget - 1).max(floor);
    }
    build(floor).0
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn costs_match_serde_json() {
        let samples = [
            "plain",
            "quote \" back \\ slash",
            "\t\n\r\u{8}\u{c}\u{1}\u{1f}\u{7f}",
            "héllo ✓ 🦀",
            "",
        ];
        for text in samples {
            assert_eq!(str_cost(text) + 2, json_len(&json!(text)), "{text:?}");
            assert_eq!(bytes_cost(text.as_bytes()), str_cost(text), "{text:?}");
        }
        let lossy = b"a\xffb\xe2\x9c";
        assert_eq!(bytes_cost(lossy), str_cost(&String::from_utf8_lossy(lossy)));
    }

    #[test]
    fn prefixes_and_suffixes_respect_costs_and_characters() {
        assert_eq!(prefix_within("a\"bc", 2), ("a", 1));
        assert_eq!(prefix_within("a\"bc", 3), ("a\"", 3));
        assert_eq!(prefix_within("é", 1), ("", 0));
        assert_eq!(bytes_prefix("aé".as_bytes(), 2), (1, 1));
        assert_eq!(bytes_prefix("aé".as_bytes(), 3), (3, 3));
        let text = "ab\u{1}é".as_bytes();
        assert_eq!(bytes_suffix(text, 2), (3, 2));
        assert_eq!(bytes_suffix(text, 8), (2, 8));
        assert_eq!(bytes_suffix(text, 100), (0, 10));
        // A character cut off at the start is skipped, not shown as U+FFFD.
        assert_eq!(bytes_suffix(&"é".as_bytes()[1..], 100), (1, 0));
    }

    #[test]
    fn partial_characters_are_trimmed() {
        let mut bytes = "a✓".as_bytes()[..3].to_vec();
        trim_partial_char(&mut bytes);
        assert_eq!(bytes, b"a");
        let mut whole = "a✓".as_bytes().to_vec();
        trim_partial_char(&mut whole);
        assert_eq!(whole, "a✓".as_bytes());
    }

    #[test]
    fn fit_retries_with_what_the_envelope_leaves() {
        let text = "x".repeat(1000);
        let mut tries = 0;
        let value = fit(300, |budget| {
            tries += 1;
            let (kept, used) = prefix_within(&text, budget);
            (json!({"text": kept, "note": "some words"}), used)
        });
        assert!(json_len(&value) <= 300, "{}", json_len(&value));
        assert!(json_len(&value) >= 290, "{}", json_len(&value));
        assert_eq!(tries, 2);
    }
}
