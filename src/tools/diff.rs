//! What a file change looks like before it is approved: a unified diff with a one-line
//! summary (`+12 −3 in src/main.rs`), computed once in the core, capped, and carried in
//! `approval_requested` so the dialog, the chat, traces and `exec` all show the same text.

use similar::TextDiff;

use super::seen::Seen;

/// A file change as the approval shows it: the diff, and the state of the file it was
/// computed from (the change applies only to that state, see `tools::seen`).
#[derive(Debug, Clone, PartialEq)]
pub struct Preview {
    /// A summary line, then the unified diff (see [`render`]).
    pub diff: String,
    /// What the file was when the diff was computed.
    pub seen: Seen,
}

/// Most bytes of diff text kept (the summary always stays).
pub const MAX_DIFF_BYTES: usize = 64 * 1024;
/// Lines of context around each change.
const CONTEXT: usize = 3;
/// Longest the line matching may take: past it the diff is still correct, only less
/// minimal (similar's deadline). A preview runs before anyone is asked, on any two texts up
/// to the file cap, and Myers' algorithm is O(N·D).
const DIFF_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(500);

/// The diff of `path` going from `old` (`None`: a new file) to `new`: a summary line, then
/// the unified diff (hunk headers carry the line numbers).
pub fn render(path: &str, old: Option<&str>, new: &str) -> String {
    let before = old.unwrap_or("");
    let diff = TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(before, new);
    let (mut added, mut removed) = (0usize, 0usize);
    for change in diff.iter_all_changes() {
        match change.tag() {
            similar::ChangeTag::Insert => added += 1,
            similar::ChangeTag::Delete => removed += 1,
            similar::ChangeTag::Equal => {}
        }
    }
    let summary = match old {
        None => format!(
            "new file {path}: {} lines, {} bytes",
            new.lines().count(),
            new.len()
        ),
        Some(_) if added == 0 && removed == 0 => format!("no change in {path}"),
        Some(_) => format!("+{added} −{removed} in {path}"),
    };
    let from = if old.is_some() {
        format!("a/{path}")
    } else {
        "/dev/null".to_string()
    };
    let body = diff
        .unified_diff()
        .context_radius(CONTEXT)
        .header(&from, &format!("b/{path}"))
        .to_string();
    let mut text = format!("{summary}\n{body}");
    if text.len() > MAX_DIFF_BYTES {
        let mut cut = MAX_DIFF_BYTES;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str("\n… the diff is longer; the rest is not shown\n");
    }
    text
}

/// The summary line of a diff made by [`render`].
pub fn summary(diff: &str) -> &str {
    diff.lines().next().unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edit_shows_its_hunk_and_counts() {
        let old = "a\nb\nc\n";
        let new = "a\nB\nc\nd\n";
        let diff = render("src/x.rs", Some(old), new);
        assert_eq!(summary(&diff), "+2 −1 in src/x.rs");
        assert!(diff.contains("--- a/src/x.rs\n+++ b/src/x.rs\n"), "{diff}");
        assert!(diff.contains("@@ -1,3 +1,4 @@"), "{diff}");
        assert!(diff.contains("\n-b\n+B\n"), "{diff}");
    }

    #[test]
    fn a_new_file_is_all_added_with_its_size() {
        let diff = render("n.txt", None, "one\ntwo\n");
        assert_eq!(summary(&diff), "new file n.txt: 2 lines, 8 bytes");
        assert!(
            diff.contains("--- /dev/null") && diff.contains("+one\n+two"),
            "{diff}"
        );
    }

    /// Two texts at the file cap (8 MiB, 4M lines of random `a`/`b`) that differ almost
    /// everywhere: Myers' O(N·D) would take many minutes (300,000 lines took 4.9 s in a
    /// debug build); the deadline makes it a few seconds, and the diff is still a diff.
    #[test]
    fn a_diff_of_two_large_unlike_texts_takes_bounded_time() {
        let mut seed = 7u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            if seed.is_multiple_of(2) { "a\n" } else { "b\n" }
        };
        let old: String = (0..4_000_000).map(|_| next()).collect();
        let new: String = (0..4_000_000).map(|_| next()).collect();
        let started = std::time::Instant::now();
        let diff = render("big", Some(&old), &new);
        let took = started.elapsed();
        assert!(took < std::time::Duration::from_secs(60), "{took:?}");
        assert!(summary(&diff).starts_with('+'), "{}", summary(&diff));
        assert!(diff.len() <= MAX_DIFF_BYTES + 100);
    }

    #[test]
    fn huge_diffs_are_cut_on_a_character() {
        let new = "é".repeat(100_000) + "\n";
        let diff = render("big", Some(""), &new);
        assert!(diff.len() <= MAX_DIFF_BYTES + 100);
        assert!(diff.ends_with("not shown\n"));
        assert_eq!(
            render("s", Some("x\n"), "x\n").lines().next(),
            Some("no change in s")
        );
    }
}
