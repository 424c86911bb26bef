//! A command's arguments in its text, as Claude Code users write them: `$ARGUMENTS` is all
//! of them as typed, `$1`, `$2` … each one (split at blanks; "double" or 'single' quotes
//! keep blanks in one), an argument not given is empty. A text that uses neither gets the
//! arguments appended on a line of their own (`ARGUMENTS: …`), so none is lost.

/// `body` with `args` (what followed the command's name) put in.
pub fn expand(body: &str, args: &str) -> String {
    let args = args.trim();
    let words = split(args);
    let mut out = String::with_capacity(body.len() + args.len());
    let mut used = false;
    let mut rest = body;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix("ARGUMENTS") {
            out.push_str(args);
            used = true;
            rest = tail;
            continue;
        }
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        match after[..digits].parse::<usize>() {
            Ok(n) if n >= 1 => {
                if let Some(word) = words.get(n - 1) {
                    out.push_str(word);
                }
                used = true;
                rest = &after[digits..];
            }
            // `$0`, a price (`$ 5`) or a lone `$`: kept as written.
            _ => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    if !used && !args.is_empty() {
        out.push_str(&format!("\n\nARGUMENTS: {args}"));
    }
    out
}

/// The arguments one by one: split at blanks, quotes keep blanks inside one (and go).
fn split(args: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut started = false;
    for c in args.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                started = true;
            }
            (None, c) if c.is_whitespace() => {
                if started {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            (None, c) => {
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        words.push(word);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_all_and_one_by_one() {
        assert_eq!(expand("Review PR $ARGUMENTS.", " 123 "), "Review PR 123.");
        assert_eq!(
            expand("Fix issue $1 with priority $2 ($ARGUMENTS)", "42 high"),
            "Fix issue 42 with priority high (42 high)"
        );
        assert_eq!(
            expand("a=$1 b=$2 c=$3", "\"two words\" 'x y' "),
            "a=two words b=x y c="
        );
        // `$0`, a price and a lone `$` stay as written; `$12` is the twelfth argument.
        assert_eq!(expand("$0 costs $ 5$", ""), "$0 costs $ 5$");
        assert_eq!(expand("[$12]", "a b"), "[]");
    }

    #[test]
    fn arguments_a_text_does_not_use_are_appended() {
        assert_eq!(
            expand("Explain this.", "src/main.rs"),
            "Explain this.\n\nARGUMENTS: src/main.rs"
        );
        assert_eq!(expand("Explain this.", "  "), "Explain this.");
    }
}
