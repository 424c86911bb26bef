//! Small text helpers several layers share (the orchestrator, providers, the TUI), kept here
//! so none of them imports another for them.

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
