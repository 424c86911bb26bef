use super::*;

const CAP: usize = 8 * 1024 * 1024;

fn edit(old: &str, new: &str) -> Edit {
    Edit {
        old_string: old.into(),
        new_string: new.into(),
        replace_all: false,
    }
}

fn all(old: &str, new: &str) -> Edit {
    Edit {
        replace_all: true,
        ..edit(old, new)
    }
}

#[test]
fn edits_apply_in_order_each_exactly_once() {
    let text = "fn a() {}\nfn b() {}\n";
    let out = apply(
        text,
        &[
            edit("fn a", "fn alpha"),
            edit("alpha() {}", "alpha() { 1 }"),
        ],
        CAP,
    );
    assert_eq!(out.unwrap(), "fn alpha() { 1 }\nfn b() {}\n");
}

#[test]
fn ambiguous_and_missing_text_say_where_and_change_nothing() {
    let text = "x = 1\ny = 2\nx = 1\n";
    let many = apply(text, &[edit("x = 1", "x = 3")], CAP).unwrap_err();
    assert!(many.contains("matches 2 times (lines 1, 3)"), "{many}");
    let missing = apply(text, &[edit("y = 2", "y = 5"), edit("z", "w")], CAP).unwrap_err();
    assert!(
        missing.starts_with("edit 2: old_string was not found (after"),
        "{missing}"
    );
    assert_eq!(
        apply(text, &[all("x = 1", "x = 3")], CAP).unwrap(),
        "x = 3\ny = 2\nx = 3\n"
    );
    assert!(
        apply(text, &[edit("", "a")], CAP)
            .unwrap_err()
            .contains("empty")
    );
    assert!(apply(text, &[], CAP).unwrap_err().contains("no edits"));
    // Line numbers are counted in the file as it is, CRLF or not.
    let crlf = "x\r\ny\r\nx\r\n";
    let many = apply(crlf, &[edit("x\n", "z\n")], CAP).unwrap_err();
    assert!(many.contains("(lines 1, 3)"), "{many}");
}

#[test]
fn crlf_files_stay_crlf_whatever_the_model_sends() {
    let text = "one\r\ntwo\r\nthree\r\n";
    let out = apply(text, &[edit("one\ntwo\n", "1\n2\n")], CAP).unwrap();
    assert_eq!(out, "1\r\n2\r\nthree\r\n");
    let out = apply(text, &[edit("one\r\ntwo", "1\r\n2")], CAP).unwrap();
    assert_eq!(out, "1\r\n2\r\nthree\r\n");
    // The model's CRLF in an LF file is the file's LF.
    let out = apply("a\nb\n", &[edit("a\r\nb", "A\r\nB")], CAP).unwrap();
    assert_eq!(out, "A\nB\n");
}

/// A file whose lines end in LF and CRLF, mixed: an edit changes only the lines it
/// replaces, and those keep their own endings (the old code made every line CRLF).
#[test]
fn mixed_line_endings_are_kept_per_line() {
    let text = "lf1\nlf2\ncr1\r\ncr2\r\nlf3\n";
    // Untouched lines keep theirs, whatever the edit touches.
    let out = apply(text, &[edit("cr2", "CR2")], CAP).unwrap();
    assert_eq!(out, "lf1\nlf2\ncr1\r\nCR2\r\nlf3\n");
    let out = apply(text, &[edit("lf1", "LF1")], CAP).unwrap();
    assert_eq!(out, "LF1\nlf2\ncr1\r\ncr2\r\nlf3\n");
    // A replacement across both kinds: the k-th break keeps the k-th ending it replaces.
    let out = apply(text, &[edit("lf2\ncr1\ncr2\n", "L\nC\nD\n")], CAP).unwrap();
    assert_eq!(out, "lf1\nL\nC\r\nD\r\nlf3\n");
    // Inserted lines take the ending of the last break replaced ...
    let out = apply(text, &[edit("cr1\n", "x\ny\nz\n")], CAP).unwrap();
    assert_eq!(out, "lf1\nlf2\nx\r\ny\r\nz\r\ncr2\r\nlf3\n");
    // ... or, when none is, the ending of the line the match is in.
    let out = apply(text, &[edit("cr1", "c\nr\n1")], CAP).unwrap();
    assert_eq!(out, "lf1\nlf2\nc\r\nr\r\n1\r\ncr2\r\nlf3\n");
    let out = apply(text, &[edit("lf2", "l\nf")], CAP).unwrap();
    assert_eq!(out, "lf1\nl\nf\ncr1\r\ncr2\r\nlf3\n");
    // Fewer lines than replaced: the first breaks keep their endings, the rest go.
    let out = apply(text, &[edit("lf2\ncr1\ncr2\n", "one\n")], CAP).unwrap();
    assert_eq!(out, "lf1\none\nlf3\n");
    // The last line without a break takes the file's last ending; no break at all: LF.
    let out = apply("a\r\nb", &[edit("b", "b\nc")], CAP).unwrap();
    assert_eq!(out, "a\r\nb\r\nc");
    let out = apply("ab", &[edit("b", "b\nc")], CAP).unwrap();
    assert_eq!(out, "ab\nc");
    // replace_all across both kinds: each match by its own line.
    let text = "k = 1\nk = 2\r\n";
    let out = apply(text, &[all("k", "key\nk")], CAP).unwrap();
    assert_eq!(out, "key\nk = 1\nkey\r\nk = 2\r\n");
    // A lone CR is text, not a line break.
    let out = apply("a\rb\r\n", &[edit("a\rb\n", "c\n")], CAP).unwrap();
    assert_eq!(out, "c\r\n");
}

/// 40 `replace_all` edits that each double a 12-byte file (the old code built every one,
/// 12 × 2^40 bytes, before anyone was asked): refused at the first whose result passes the
/// cap, from the count of matches alone.
#[test]
fn compounding_edits_are_refused_at_the_cap_before_they_are_built() {
    let text = "a".repeat(12);
    let edits: Vec<Edit> = (0..40).map(|_| all("a", "aa")).collect();
    let error = apply(&text, &edits, CAP).unwrap_err();
    // 12 × 2^19 = 6 MiB fits; the 20th edit would make 12 MiB.
    assert_eq!(
        error,
        format!(
            "edit 20: the file would grow to {} bytes, over edit_file's limit of {CAP} bytes; \
             nothing was changed (write a large file with write_file, or make smaller edits)",
            12usize << 20
        )
    );
    // One huge new_string is refused the same way, before it is copied.
    let huge = "x".repeat(CAP);
    let error = apply("ab", &[edit("a", &huge)], CAP).unwrap_err();
    assert!(
        error.starts_with("edit 1: the file would grow to"),
        "{error}"
    );
    // Many matches of a long new_string: refused from the count, nothing built.
    let error = apply(&"a".repeat(64), &[all("a", &"b".repeat(1 << 20))], CAP).unwrap_err();
    assert!(
        error.contains(&format!("grow to {} bytes", 64 << 20)),
        "{error}"
    );
    // Exactly at the cap is fine.
    assert_eq!(apply("ab", &[edit("b", "bc")], 3).unwrap(), "abc");
    assert!(apply("ab", &[edit("b", "bcd")], 3).is_err());
}

/// With CRLF the arithmetic is a lower bound (each inserted break may add a CR): the build
/// stops at the cap all the same.
#[test]
fn crlf_growth_is_caught_while_building() {
    let text = "a\r\n".repeat(4);
    // 4 matches, each "a" becomes "a\nb": LF arithmetic 4 × 3 + 8 = 20; with CRLF it is 24.
    assert_eq!(
        apply(&text, &[all("a", "a\nb")], 24).unwrap(),
        "a\r\nb\r\n".repeat(4)
    );
    let error = apply(&text, &[all("a", "a\nb")], 23).unwrap_err();
    assert!(
        error.starts_with("edit 1: the file would grow to more than 23 bytes"),
        "{error}"
    );
}

#[test]
fn too_many_edits_are_refused() {
    let edits: Vec<Edit> = (0..=MAX_EDITS).map(|_| edit("a", "b")).collect();
    let error = apply("a", &edits, CAP).unwrap_err();
    assert!(error.contains("at most 1000"), "{error}");
}
