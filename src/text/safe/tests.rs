//! The neutraliser against the class: every way outside text could act on a terminal.

use proptest::prelude::*;

use super::*;

/// Sequences that act on a terminal: CSI, OSC 0 and 2 titles (BEL and ST ends), OSC 52
/// clipboard writes, DCS, APC, PM, SOS, the same in their 8-bit C1 forms, BEL, backspace
/// and CR overprinting, DEL, and bidi overrides, isolates and marks.
const HOSTILE: &[&str] = &[
    "\x1b[2J\x1b[H",
    "\x1b]0;pwned title\x07",
    "\x1b]2;pwned title\x1b\\",
    "\x1b]52;c;cm0gLXJmIH4K\x07",
    "\x1bP+q544e\x1b\\",
    "\x1b_Gf=100;AAAA\x1b\\",
    "\x1b^private\x1b\\",
    "\x1bXsos\x1b\\",
    "\u{9b}2J",
    "\u{9d}0;pwned title\u{9c}",
    "\u{9d}52;c;cm0gLXJmIH4K\u{7}",
    "\u{90}+q544e\u{9c}",
    "\u{9f}apc\u{9c}",
    "\u{85}next line",
    "bell\x07",
    "safe\x08\x08\x08\x08rm -rf",
    "echo hi\rrm -rf ~",
    "del\x7f",
    "\u{202E}txt.exe",
    "\u{2066}isolated\u{2069}",
    "\u{200F}\u{200E}\u{061C}",
    "line\u{2028}sep\u{2029}",
];

fn inert(text: &str) -> bool {
    !text.chars().any(|c| c != '\n' && c != '\t' && is_unsafe(c))
}

#[test]
fn every_hostile_sequence_comes_out_inert_and_visible() {
    for hostile in HOSTILE {
        let text = format!("before {hostile} after");
        for out in [terminal(&text), escape(&text)] {
            assert!(inert(&out), "{hostile:?} → {out:?}");
            assert!(out.starts_with("before ") && out.ends_with(" after"));
            assert_ne!(out, text, "{hostile:?} was not marked");
        }
    }
}

#[test]
fn controls_become_visible_and_line_breaks_stay() {
    assert!(matches!(escape("plain text\nsecond"), Cow::Borrowed(_)));
    assert!(matches!(terminal("tab\tand é 界\n"), Cow::Borrowed(_)));
    assert_eq!(
        escape("a\x1b]52;c;aGk=\x07b\x1b[2Jc\u{9b}d\re\x08f\r\ng\th\u{7f}\u{202E}i"),
        "a^[]52;c;aGk=^Gb^[[2Jc\u{FFFD}d^Me^Hf\ng    h^?\u{FFFD}i"
    );
    assert_eq!(terminal("a\tb\r\nc\rd"), "a\tb\nc^Md");
    assert_eq!(escape("\u{2066}x\u{2069}"), "\u{FFFD}x\u{FFFD}");
    assert!(!escape("\x00\x1f\u{85}\u{2028}").chars().any(is_unsafe));
}

#[test]
fn emoji_joiners_and_marks_are_not_unsafe() {
    for c in ['\u{200D}', '\u{FE0F}', '\u{0301}', 'é', '界', ' '] {
        assert!(!is_unsafe(c), "{c:?}");
    }
}

#[test]
fn a_sequence_split_across_pieces_is_caught_in_each() {
    for hostile in HOSTILE.iter().chain(&["a\r", "\r\n", "x\r\ny\r", "\r\r\n"]) {
        let text = format!("ok {hostile} ok\r\n");
        let whole = terminal(&text);
        let cuts: Vec<usize> = (0..=text.len())
            .filter(|&i| text.is_char_boundary(i))
            .collect();
        for &cut in &cuts {
            let mut escaper = Escaper::default();
            let mut out = String::new();
            escaper.push(&text[..cut], &mut out);
            escaper.push(&text[cut..], &mut out);
            escaper.finish(&mut out);
            assert_eq!(out, whole, "{text:?} cut at {cut}");
        }
    }
    let mut escaper = Escaper::default();
    let mut out = String::new();
    escaper.push("ends in a CR\r", &mut out);
    escaper.finish(&mut out);
    assert_eq!(out, "ends in a CR^M");
}

#[test]
fn json_lines_carry_no_raw_c1_or_bidi_and_read_back_the_same() {
    for hostile in HOSTILE {
        let value = serde_json::json!({"text": format!("x{hostile}y"), "n": 1});
        let line = serde_json::to_vec(&value).unwrap();
        let safe = json(&line);
        let text = std::str::from_utf8(&safe).unwrap();
        assert!(inert(text), "{text:?}");
        let back: serde_json::Value = serde_json::from_slice(&safe).unwrap();
        assert_eq!(back, value);
    }
    assert!(matches!(
        json(b"{\"a\":\"plain \xc3\xa9\"}"),
        Cow::Borrowed(_)
    ));
}

proptest! {
    #[test]
    fn any_text_comes_out_inert_however_it_is_cut(text in "(\\PC|[\\x00-\\x1f\\x7f-\\u{9f}\\u{202a}-\\u{202e}\\u{2066}-\\u{2069}]){0,40}", cut in 0usize..200) {
        let whole = terminal(&text);
        prop_assert!(inert(&whole));
        prop_assert!(inert(&escape(&text)));
        let cut = text.floor_char_boundary(cut.min(text.len()));
        let mut escaper = Escaper::default();
        let mut out = String::new();
        escaper.push(&text[..cut], &mut out);
        escaper.push(&text[cut..], &mut out);
        escaper.finish(&mut out);
        prop_assert_eq!(out, whole.into_owned());
    }
}
