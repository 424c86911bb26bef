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
