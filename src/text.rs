//! Small text helpers several layers share (the orchestrator, providers, the TUI), kept here
//! so none of them imports another for them.

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

pub mod safe;

/// The arguments that say most about a call, in the order every summary shows them (the
/// chat's cells, the stack's frames, the timeline's rows): one list, so they agree.
pub const TELLING_KEYS: [&str; 6] = ["command", "path", "url", "pattern", "query", "task"];

/// The top-level pairs of an arguments object, the [`TELLING_KEYS`] first, the rest in the
/// object's order.
pub fn telling_pairs(
    map: &serde_json::Map<String, serde_json::Value>,
) -> Vec<(&String, &serde_json::Value)> {
    let mut pairs: Vec<(&String, &serde_json::Value)> = map.iter().collect();
    pairs.sort_by_key(|(k, _)| {
        (TELLING_KEYS.iter())
            .position(|f| f == k)
            .unwrap_or(TELLING_KEYS.len())
    });
    pairs
}

/// The first `max` characters of `text` on one line, with an ellipsis when cut.
pub fn summarize(text: &str, max: usize) -> String {
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &one_line[..cut]),
        None => one_line,
    }
}

/// Text for a plain terminal line (stderr): messages are written once, with Markdown code
/// spans for the chat, and a raw backtick means nothing on stderr, so `x` becomes 'x'. What
/// they quote from outside (a server's error, a tool's name) is made inert (`safe`).
pub fn plain(text: &str) -> std::borrow::Cow<'_, str> {
    let safe = safe::terminal(text);
    if !safe.contains('`') {
        return safe;
    }
    std::borrow::Cow::Owned(safe.replace('`', "'"))
}

/// One line, at most `max` columns, cut at the end with "…".
pub fn shorten_end(text: &str, max: usize) -> String {
    // Most cells are short plain ASCII with single spaces: nothing to flatten or measure.
    if text.len() <= max
        && printable_ascii(text)
        && !text.contains("  ")
        && !text.starts_with(' ')
        && !text.ends_with(' ')
    {
        return text.to_string();
    }
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.width() <= max {
        return flat;
    }
    let mut out = String::new();
    let mut used = 0;
    for c in flat.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > max.saturating_sub(1) {
            break;
        }
        used += w;
        out.push(c);
    }
    out.push('…');
    out
}

/// At most `max` columns, cut at the start with "…" (the end of a path says the most).
pub fn shorten_start(text: &str, max: usize) -> String {
    if text.len() <= max && printable_ascii(text) {
        return text.to_string();
    }
    let flat: String = text.chars().filter(|c| !c.is_control()).collect();
    if flat.width() <= max {
        return flat;
    }
    let mut tail = Vec::new();
    let mut used = 0;
    for c in flat.chars().rev() {
        let w = c.width().unwrap_or(0);
        if used + w > max.saturating_sub(1) {
            break;
        }
        used += w;
        tail.push(c);
    }
    std::iter::once('…').chain(tail.into_iter().rev()).collect()
}

/// Whether `text` is ASCII without control characters: one column per byte.
pub fn printable_ascii(text: &str) -> bool {
    text.bytes().all(|b| (0x20..0x7f).contains(&b))
}

/// Display columns of `text` (a fast path for plain ASCII, which most cells are).
pub fn columns(text: &str) -> usize {
    if printable_ascii(text) {
        text.len()
    } else {
        text.width()
    }
}

/// `1.2 s`, `850 ms`, `2 m 05 s`: short durations for cells, rows and `exec`'s tool lines.
pub fn duration(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms} ms")
    } else if ms < 60_000 {
        format!("{:.1} s", ms as f64 / 1000.0)
    } else {
        format!("{} m {:02} s", ms / 60_000, (ms % 60_000) / 1000)
    }
}

/// 1234 → "1.2k": token counts at a glance.
pub fn human(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{:.1}k", n as f64 / 1e3),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

/// "3 h ago": how long ago `then` was at `now` (both unix ms), at a glance.
pub fn ago(then: u64, now: u64) -> String {
    let secs = now.saturating_sub(then) / 1000;
    match secs {
        0..60 => "just now".to_string(),
        60..3600 => format!("{} min ago", secs / 60),
        3600..86_400 => format!("{} h ago", secs / 3600),
        _ => format!("{} d ago", secs / 86_400),
    }
}

#[cfg(test)]
mod plain_tests {
    use super::plain;

    #[test]
    fn code_spans_become_quotes() {
        assert_eq!(
            plain("provider `openai` failed"),
            "provider 'openai' failed"
        );
        assert!(matches!(plain("nothing"), std::borrow::Cow::Borrowed(_)));
    }
}

#[cfg(test)]
mod shorten_tests {
    use super::*;

    #[test]
    fn the_plain_ascii_fast_path_gives_what_the_general_path_gives() {
        // Cases on each side of the fast path's conditions.
        assert_eq!(shorten_end("fix the bug", 11), "fix the bug");
        assert_eq!(shorten_end("fix the bug!", 11), "fix the bu…");
        assert_eq!(shorten_end("fix  the bug", 11), "fix the bug");
        assert_eq!(shorten_end(" fix", 11), "fix");
        assert_eq!(shorten_end("fix\tit", 11), "fix it");
        assert_eq!(shorten_start("/a/b", 4), "/a/b");
        assert_eq!(shorten_start("/a/bc", 4), "…/bc");
        assert_eq!(shorten_start("/a\u{7}/b", 5), "/a/b");
        assert_eq!(columns("abc"), 3);
        assert_eq!(columns("日本"), 4);
        assert!(!printable_ascii("a\tb"));
    }
}
