//! Big pastes as chips: the composer shows `[pasted 40 lines]` where the paste went and keeps
//! the text aside; what is sent has the text back in place of the chip. Editing a chip's
//! label away drops its paste.

/// A paste with more lines than this shows as a chip.
pub const COLLAPSE_LINES: usize = 8;
/// A paste longer than this (in chars) shows as a chip, however few its lines: the editor
/// lays its whole text out on every edit, so a huge line would make typing crawl.
pub const COLLAPSE_CHARS: usize = 4000;

/// A paste shown as a chip.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paste {
    /// What shows in the editor (unique among the draft's chips).
    pub label: String,
    /// What is sent.
    pub text: String,
}

/// Whether `text` (line breaks already `\n`) is big enough to show as a chip.
pub fn collapses(text: &str) -> bool {
    let lines = text.split('\n').count();
    lines > COLLAPSE_LINES || text.chars().nth(COLLAPSE_CHARS).is_some()
}

/// A chip for `text` whose label is not among `taken`'s.
pub fn chip(text: String, taken: &[Paste]) -> Paste {
    let lines = text.split('\n').count();
    let base = if lines > 1 {
        format!("pasted {lines} lines")
    } else {
        format!("pasted {} chars", text.chars().count())
    };
    let mut label = format!("[{base}]");
    let mut n = 1;
    while taken.iter().any(|p| p.label == label) {
        n += 1;
        label = format!("[{base} #{n}]");
    }
    Paste { label, text }
}

/// `typed` with each chip's label (its first occurrence) replaced by its text, in one pass:
/// a paste that happens to contain a label is never expanded again.
pub fn expand(typed: &str, pastes: &[Paste]) -> String {
    let mut found: Vec<(usize, &Paste)> = pastes
        .iter()
        .filter_map(|p| typed.find(&p.label).map(|at| (at, p)))
        .collect();
    if found.is_empty() {
        return typed.to_string();
    }
    found.sort_by_key(|(at, _)| *at);
    let mut out =
        String::with_capacity(typed.len() + found.iter().map(|(_, p)| p.text.len()).sum::<usize>());
    let mut from = 0;
    for (at, paste) in found {
        // Labels never overlap in practice; if they did, the later one stays as typed.
        if at < from {
            continue;
        }
        out.push_str(&typed[from..at]);
        out.push_str(&paste.text);
        from = at + paste.label.len();
    }
    out.push_str(&typed[from..]);
    out
}

/// The chips still in `typed` (a label edited away drops its paste).
pub fn still_in(typed: &str, pastes: &mut Vec<Paste>) {
    pastes.retain(|p| typed.contains(&p.label));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_pastes_stay_text_and_big_ones_become_chips() {
        assert!(!collapses("one line"));
        assert!(!collapses(&"l\n".repeat(COLLAPSE_LINES - 1)));
        assert!(collapses(&"l\n".repeat(COLLAPSE_LINES)));
        assert!(!collapses(&"界".repeat(COLLAPSE_CHARS)));
        assert!(collapses(&"界".repeat(COLLAPSE_CHARS + 1)));
    }

    #[test]
    fn labels_count_lines_and_stay_unique() {
        let a = chip("a\n".repeat(39) + "end", &[]);
        assert_eq!(a.label, "[pasted 40 lines]");
        let b = chip("b\n".repeat(39) + "end", std::slice::from_ref(&a));
        assert_eq!(b.label, "[pasted 40 lines #2]");
        let c = chip("x".repeat(5000), &[]);
        assert_eq!(c.label, "[pasted 5000 chars]");
    }

    #[test]
    fn expanding_puts_each_paste_back_once() {
        let a = chip("A\n".repeat(9), &[]);
        let b = chip("B\n".repeat(9), std::slice::from_ref(&a));
        let typed = format!("see {} and {} ok", b.label, a.label);
        let full = expand(&typed, &[a.clone(), b.clone()]);
        assert_eq!(full, format!("see {} and {} ok", b.text, a.text));
        // A paste that contains a label is not expanded again.
        let tricky = Paste {
            label: "[pasted 9 lines]".into(),
            text: "[pasted 9 lines #2]".into(),
        };
        let other = Paste {
            label: "[pasted 9 lines #2]".into(),
            text: "never".into(),
        };
        assert_eq!(
            expand("x [pasted 9 lines] y", &[tricky, other]),
            "x [pasted 9 lines #2] y"
        );
        let mut pastes = vec![a.clone(), b];
        still_in(&format!("only {}", a.label), &mut pastes);
        assert_eq!(pastes, [a]);
    }
}
