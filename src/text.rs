//! Small text helpers several layers share (the orchestrator, providers, the TUI), kept here
//! so none of them imports another for them.

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// The first `max` characters of `text` on one line, with an ellipsis when cut.
pub fn summarize(text: &str, max: usize) -> String {
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &one_line[..cut]),
        None => one_line,
    }
}

/// Text for a plain terminal line (stderr): messages are written once, with Markdown code
/// spans for the chat, and a raw backtick means nothing on stderr, so `x` becomes 'x'.
pub fn plain(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('`') {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(text.replace('`', "'"))
}

/// One line, at most `max` columns, cut at the end with "…".
pub fn shorten_end(text: &str, max: usize) -> String {
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

/// 1234 → "1.2k": token counts at a glance.
pub fn human(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{:.1}k", n as f64 / 1e3),
        _ => format!("{:.1}M", n as f64 / 1e6),
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
