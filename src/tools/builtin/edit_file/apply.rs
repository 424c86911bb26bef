//! Applying `edit_file`'s edits to a text: exact strings matched across line endings, line
//! endings kept per line, and the result's size bounded before it is built.
//!
//! Line endings are the file's, never the model's: `old_string` matches whether the file ends
//! a line with LF or CRLF (models send LF), lines outside the replaced text are never touched,
//! and each line break of `new_string` takes the ending of the line break at the same place in
//! the text it replaces (the k-th for the k-th). Breaks beyond those (inserted lines) take the
//! ending of the last break replaced, or, when none is, the ending of the line the match is in
//! (the next break after it; on a last line without one, the break before it); a file without
//! any line break gets LF.
//!
//! Sizes: before an edit is built, its result's size is computed from the matches (the text's
//! length, minus what the matches cover, plus occurrences × `new_string`'s length, which is
//! exact for LF and a lower bound with CRLF); past the cap the edit is refused, and the build
//! itself stops at the cap. So edits that compound (each doubling the text) are refused at the
//! first that would pass it, and memory never exceeds about the cap plus one `new_string`.

use std::borrow::Cow;

use super::Edit;

/// Line numbers listed at most when `old_string` matches more than once.
const MAX_LINES_LISTED: usize = 10;
/// Most edits in one call: each is a pass over the whole text.
pub const MAX_EDITS: usize = 1000;

/// `text` with `edits` applied in order; the result is at most `max_bytes` long. `Err` says
/// which edit failed and why.
pub fn apply(text: &str, edits: &[Edit], max_bytes: usize) -> Result<String, String> {
    if edits.is_empty() {
        return Err("no edits given: send at least one {old_string, new_string}".into());
    }
    if edits.len() > MAX_EDITS {
        return Err(format!(
            "{} edits in one call; edit_file takes at most {MAX_EDITS}: split them into several calls",
            edits.len()
        ));
    }
    let mut current = text.to_string();
    for (i, edit) in edits.iter().enumerate() {
        current = apply_one(&current, edit, i + 1, max_bytes)?;
    }
    Ok(current)
}

fn apply_one(text: &str, edit: &Edit, n: usize, max_bytes: usize) -> Result<String, String> {
    let old = lf(&edit.old_string);
    let new = lf(&edit.new_string);
    if old.is_empty() {
        return Err(format!(
            "edit {n}: old_string is empty; quote the text to replace"
        ));
    }
    if old == new {
        return Err(format!("edit {n}: old_string and new_string are the same"));
    }
    let view = View::new(text);
    // First pass: count, and measure, without building anything.
    let (mut count, mut covered) = (0usize, 0usize);
    let mut firsts = Vec::new();
    for (start, end) in view.matches(&old) {
        count += 1;
        covered += end - start;
        if firsts.len() <= MAX_LINES_LISTED {
            firsts.push(start);
        }
    }
    match count {
        0 => {
            return Err(format!(
                "edit {n}: old_string was not found{}; read the file again and copy the text exactly (whitespace included)",
                if n > 1 {
                    " (after the edits before it)"
                } else {
                    ""
                }
            ));
        }
        1 => {}
        _ if edit.replace_all => {}
        many => {
            let lines: Vec<String> = (firsts.iter().take(MAX_LINES_LISTED))
                .map(|&at| (text[..at].matches('\n').count() + 1).to_string())
                .collect();
            return Err(format!(
                "edit {n}: old_string matches {many} times (lines {}{}); add surrounding lines so it matches once, or set replace_all",
                lines.join(", "),
                if many > MAX_LINES_LISTED { ", …" } else { "" }
            ));
        }
    }
    let size = count
        .checked_mul(new.len())
        .and_then(|added| (text.len() - covered).checked_add(added));
    match size {
        Some(size) if size <= max_bytes => {}
        _ => return Err(too_big(n, size, max_bytes)),
    }
    // Second pass: build, with each replacement's line breaks given their endings.
    let mut out = String::with_capacity(size.unwrap_or(max_bytes));
    let mut around = Around::new(text);
    let mut last = 0;
    for (start, end) in view.matches(&old) {
        out.push_str(&text[last..start]);
        let replaced = &text[start..end];
        let endings: Vec<bool> = breaks(replaced).collect();
        let fallback = match endings.last() {
            Some(&crlf) => crlf,
            None => around.ending_after(end),
        };
        for (k, piece) in new.split('\n').enumerate() {
            if k > 0 {
                let crlf = endings.get(k - 1).copied().unwrap_or(fallback);
                out.push_str(if crlf { "\r\n" } else { "\n" });
            }
            out.push_str(piece);
        }
        last = end;
        if out.len() > max_bytes {
            return Err(too_big(n, None, max_bytes));
        }
    }
    out.push_str(&text[last..]);
    if out.len() > max_bytes {
        return Err(too_big(n, None, max_bytes));
    }
    Ok(out)
}

fn too_big(n: usize, size: Option<usize>, max_bytes: usize) -> String {
    let size = match size {
        Some(size) => format!("{size} bytes"),
        None => format!("more than {max_bytes} bytes"),
    };
    format!(
        "edit {n}: the file would grow to {size}, over edit_file's limit of {max_bytes} bytes; \
         nothing was changed (write a large file with write_file, or make smaller edits)"
    )
}

/// `s` with every CRLF made LF.
fn lf(s: &str) -> Cow<'_, str> {
    if s.contains("\r\n") {
        Cow::Owned(s.replace("\r\n", "\n"))
    } else {
        Cow::Borrowed(s)
    }
}

/// The endings of the line breaks in `text`, in order: true for CRLF.
fn breaks(text: &str) -> impl Iterator<Item = bool> + '_ {
    let bytes = text.as_bytes();
    memchr_iter(bytes).map(move |at| at > 0 && bytes[at - 1] == b'\r')
}

fn memchr_iter(bytes: &[u8]) -> impl Iterator<Item = usize> + '_ {
    bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .map(|(at, _)| at)
}

/// A text seen with its CRLFs as LF, for matching; matches map back to the text's bytes.
struct View<'a> {
    /// The text with CRLF as LF.
    lf: Cow<'a, str>,
    /// Where in `lf` each LF that was a CRLF is, ascending.
    crs: Vec<usize>,
}

impl<'a> View<'a> {
    fn new(text: &'a str) -> Self {
        if !text.contains("\r\n") {
            return Self {
                lf: Cow::Borrowed(text),
                crs: Vec::new(),
            };
        }
        let bytes = text.as_bytes();
        let mut crs = Vec::new();
        let mut lf = String::with_capacity(text.len());
        let mut last = 0;
        for at in memchr_iter(bytes) {
            if at > 0 && bytes[at - 1] == b'\r' {
                lf.push_str(&text[last..at - 1]);
                crs.push(lf.len());
                last = at;
            }
        }
        lf.push_str(&text[last..]);
        Self {
            lf: Cow::Owned(lf),
            crs,
        }
    }

    /// Where `i` of the LF view is in the text: a match starting at a CRLF's LF starts at its
    /// CR, and one ending after it ends after its LF.
    fn text_at(&self, i: usize) -> usize {
        i + self.crs.partition_point(|&p| p < i)
    }

    /// The matches of `old` (LF line breaks), left to right, without overlaps, as byte ranges
    /// of the text.
    fn matches<'s>(&'s self, old: &'s str) -> impl Iterator<Item = (usize, usize)> + 's {
        self.lf
            .match_indices(old)
            .map(move |(at, m)| (self.text_at(at), self.text_at(at + m.len())))
    }
}

/// The line ending of the line a match sits in, for matches seen left to right.
struct Around<'a> {
    text: &'a str,
    /// The next line break at or after the last position asked about (`None`: there is none).
    next: Option<Option<usize>>,
    /// The ending of the text's last line break, if it has one.
    last: Option<bool>,
}

impl<'a> Around<'a> {
    fn new(text: &'a str) -> Self {
        let last = text
            .as_bytes()
            .iter()
            .rposition(|&b| b == b'\n')
            .map(|at| at > 0 && text.as_bytes()[at - 1] == b'\r');
        Self {
            text,
            next: None,
            last,
        }
    }

    /// The ending of the first line break at or after `at` (positions asked about only
    /// grow, so the search never goes over the same bytes twice); on the last line, the
    /// ending of the text's last break; LF in a text without any.
    fn ending_after(&mut self, at: usize) -> bool {
        let bytes = self.text.as_bytes();
        let next = match self.next {
            Some(Some(known)) if known >= at => Some(known),
            Some(None) => None,
            _ => bytes[at..]
                .iter()
                .position(|&b| b == b'\n')
                .map(|off| at + off),
        };
        self.next = Some(next);
        match next {
            Some(pos) => pos > 0 && bytes[pos - 1] == b'\r',
            None => self.last.unwrap_or(false),
        }
    }
}

#[cfg(test)]
mod tests;
