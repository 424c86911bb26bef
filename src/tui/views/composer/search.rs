//! Ctrl-R: an incremental search back through the prompt history, as in bash. Typing narrows
//! the query, Ctrl-R finds the next older match; the composer decides what Enter and Esc do.

/// The search as it stands: the query and the entry it found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Search {
    query: String,
    /// Index of the matching entry.
    found: Option<usize>,
    /// The query matches nothing (older than the last match): bash's "failing" search.
    failing: bool,
}

impl Search {
    /// An empty search (nothing found yet).
    pub fn new() -> Self {
        Self::default()
    }

    /// What is searched for.
    #[cfg(test)]
    pub fn query(&self) -> &str {
        &self.query
    }

    /// The entry found, if any.
    pub fn found(&self) -> Option<usize> {
        self.found
    }

    /// Whether the last step found nothing.
    pub fn is_failing(&self) -> bool {
        self.failing
    }

    /// The prompt shown before the match, bash's words.
    pub fn prompt(&self) -> String {
        let failing = if self.failing { "failing " } else { "" };
        format!("({failing}reverse-i-search)'{}': ", self.query)
    }

    /// Adds a char to the query: the match found so far is kept while it still matches.
    pub fn push<S: AsRef<str>>(&mut self, c: char, entries: &[S]) {
        self.query.push(c);
        let from = self.found.unwrap_or(entries.len().saturating_sub(1));
        self.look(entries, Some(from));
    }

    /// Takes the last char off the query and searches again from the newest entry.
    pub fn pop<S: AsRef<str>>(&mut self, entries: &[S]) {
        self.query.pop();
        if self.query.is_empty() {
            self.found = None;
            self.failing = false;
            return;
        }
        self.look(entries, entries.len().checked_sub(1));
    }

    /// The next older match (Ctrl-R again).
    pub fn older<S: AsRef<str>>(&mut self, entries: &[S]) {
        if self.query.is_empty() {
            return;
        }
        let from = match self.found {
            Some(0) => None,
            Some(i) => Some(i - 1),
            None => entries.len().checked_sub(1),
        };
        self.look(entries, from);
    }

    /// Finds the newest entry at or before `from` that matches; keeps the last match (and
    /// says the search fails) when there is none.
    fn look<S: AsRef<str>>(&mut self, entries: &[S], from: Option<usize>) {
        let hit = from.and_then(|from| {
            let end = from.min(entries.len().checked_sub(1)?);
            (0..=end)
                .rev()
                .find(|&i| matches(entries[i].as_ref(), &self.query))
        });
        match hit {
            Some(i) => {
                self.found = Some(i);
                self.failing = false;
            }
            None => self.failing = true,
        }
    }
}

/// Smart case, as in most pickers: a query with a capital letter matches case; one without
/// matches any case.
fn matches(entry: &str, query: &str) -> bool {
    if query.chars().any(char::is_uppercase) {
        entry.contains(query)
    } else {
        entry.to_lowercase().contains(query)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HISTORY: [&str; 4] = ["cargo test", "git status", "Cargo build", "git log"];

    fn typed(search: &mut Search, text: &str) {
        for c in text.chars() {
            search.push(c, &HISTORY);
        }
    }

    #[test]
    fn typing_finds_the_newest_match_and_ctrl_r_walks_back() {
        let mut s = Search::new();
        assert_eq!(s.prompt(), "(reverse-i-search)'': ");
        typed(&mut s, "git");
        assert_eq!(s.found(), Some(3));
        s.older(&HISTORY);
        assert_eq!(s.found(), Some(1));
        s.older(&HISTORY);
        assert_eq!(s.found(), Some(1), "no older one: the match stays");
        assert!(s.is_failing());
        assert_eq!(s.prompt(), "(failing reverse-i-search)'git': ");
    }

    #[test]
    fn narrowing_keeps_the_match_while_it_matches() {
        let mut s = Search::new();
        typed(&mut s, "git s");
        assert_eq!(s.found(), Some(1));
        s.pop(&HISTORY);
        assert_eq!(s.found(), Some(3), "searching again from the newest");
        s.pop(&HISTORY);
        s.pop(&HISTORY);
        s.pop(&HISTORY);
        s.pop(&HISTORY);
        assert_eq!((s.query(), s.found()), ("", None));
        s.pop(&HISTORY);
        s.older(&HISTORY);
        assert_eq!(s.found(), None, "an empty query finds nothing");
    }

    #[test]
    fn smart_case_and_no_history() {
        let mut s = Search::new();
        typed(&mut s, "cargo");
        assert_eq!(s.found(), Some(2), "lower case matches any case");
        let mut s = Search::new();
        typed(&mut s, "Cargo t");
        assert!(s.is_failing(), "a capital letter matches case");
        let mut s = Search::new();
        s.push('x', &[] as &[&str]);
        s.older(&[] as &[&str]);
        assert!(s.is_failing() && s.found().is_none());
    }
}
