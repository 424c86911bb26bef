//! A small fuzzy scorer for the composer's popups (fzf's first algorithm, simplified): every
//! query char in order, case-insensitive, ranked by matches at word starts, runs of
//! consecutive matches and short gaps; for paths, a match inside the file name counts more.
//! A few dozen lines do what the finder needs, so no matcher crate is pulled in.

/// Points for each matched char.
const MATCH: i32 = 16;
/// A match at the start of a word: after `/`, `_`, `-`, `.`, a space, or a lower-to-upper
/// case change, or at the very start.
const BOUNDARY: i32 = 10;
/// A match right after the previous one.
const CONSECUTIVE: i32 = 6;
/// A gap between two matches costs this, plus one per char skipped (at most `GAP_MAX`).
const GAP_START: i32 = 3;
const GAP_MAX: i32 = 12;
/// Every match inside the last path component (the file name).
const IN_NAME: i32 = 20;
/// A matched char typed in the same case.
const SAME_CASE: i32 = 1;

/// A match: how good it is and which chars matched (char indices, for highlighting).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Match {
    /// Higher is better.
    pub score: i32,
    /// The matched chars of the text, ascending.
    pub positions: Vec<usize>,
}

/// How well `query` matches `text`; `None` when not every query char is found in order. An
/// empty query matches everything with score 0.
pub fn score(query: &str, text: &str) -> Option<Match> {
    let query: Vec<char> = query.chars().collect();
    let text: Vec<char> = text.chars().collect();
    if query.is_empty() {
        return Some(Match {
            score: 0,
            positions: Vec::new(),
        });
    }
    let whole = best(&query, &text, 0)?;
    // The file name alone, if the query fits in it: `main` means `src/main.rs`, not `domain/`.
    let name = text
        .iter()
        .rposition(|&c| c == '/')
        .map_or(0, |slash| slash + 1);
    let in_name = (name > 0)
        .then(|| best(&query, &text, name))
        .flatten()
        .map(|mut m| {
            m.score += IN_NAME * query.len() as i32;
            m
        });
    Some(match in_name {
        Some(m) if m.score >= whole.score => m,
        _ => whole,
    })
}

/// The tightest match of `query` in `text[from..]`: the first place it ends, then walked back
/// to the latest place it can start, then matched forward again from there.
fn best(query: &[char], text: &[char], from: usize) -> Option<Match> {
    let mut at = 0;
    let mut end = None;
    for (i, &c) in text.iter().enumerate().skip(from) {
        if same(c, query[at]) {
            at += 1;
            if at == query.len() {
                end = Some(i);
                break;
            }
        }
    }
    let end = end?;
    let mut left = query.len();
    let mut start = end;
    for i in (from..=end).rev() {
        if same(text[i], query[left - 1]) {
            left -= 1;
            if left == 0 {
                start = i;
                break;
            }
        }
    }
    let mut positions = Vec::with_capacity(query.len());
    let mut at = 0;
    for (i, &c) in text.iter().enumerate().take(end + 1).skip(start) {
        if at < query.len() && same(c, query[at]) {
            positions.push(i);
            at += 1;
        }
    }
    let mut score = 0;
    let mut previous: Option<usize> = None;
    for (k, &p) in positions.iter().enumerate() {
        score += MATCH;
        if boundary(text, p) {
            score += BOUNDARY;
        }
        if text[p] == query[k] {
            score += SAME_CASE;
        }
        if let Some(prev) = previous {
            let gap = (p - prev - 1) as i32;
            if gap == 0 {
                score += CONSECUTIVE;
            } else {
                score -= GAP_START + gap.min(GAP_MAX);
            }
        }
        previous = Some(p);
    }
    Some(Match { score, positions })
}

fn same(a: char, b: char) -> bool {
    a == b || a.to_lowercase().eq(b.to_lowercase())
}

/// Whether `text[i]` starts a word.
fn boundary(text: &[char], i: usize) -> bool {
    let Some(before) = i.checked_sub(1).map(|j| text[j]) else {
        return true;
    };
    matches!(before, '/' | '_' | '-' | '.' | ' ' | '@')
        || (before.is_lowercase() && text[i].is_uppercase())
}

#[cfg(test)]
mod tests;
