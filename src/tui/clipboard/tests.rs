use super::*;

#[test]
fn the_plain_sequence_byte_for_byte() {
    let copy = copy("hello", Route::Direct);
    assert_eq!(copy.osc.bytes(), b"\x1b]52;c;aGVsbG8=\x07");
    assert_eq!((copy.copied, copy.total), (5, 5));
    assert_eq!(copy.flash(), "copied 5 B");
}

#[test]
fn inside_tmux_plain_then_wrapped_with_escapes_doubled() {
    let copy = copy("hi", Route::Tmux);
    let expected: &[u8] = b"\x1b]52;c;aGk=\x07\x1bPtmux;\x1b\x1b]52;c;aGk=\x07\x1b\\";
    assert_eq!(copy.osc.bytes(), expected);
}

#[test]
fn the_route_follows_tmux_in_the_environment() {
    assert_eq!(Route::from_env(None), Route::Direct);
    assert_eq!(Route::from_env(Some(OsStr::new(""))), Route::Direct);
    let socket = OsStr::new("/tmp/tmux-1000/default,1234,0");
    assert_eq!(Route::from_env(Some(socket)), Route::Tmux);
}

#[test]
fn utf8_round_trips_through_base64() {
    let text = "naïve ✓ 世界\nline two";
    let copy = copy(text, Route::Direct);
    let bytes = copy.osc.bytes();
    let payload = &bytes[7..bytes.len() - 1];
    let decoded = STANDARD.decode(payload).unwrap();
    assert_eq!(String::from_utf8(decoded).unwrap(), text);
    assert_eq!(copy.flash(), "copied 26 B");
}

#[test]
fn a_big_copy_is_cut_at_the_cap_on_a_character_and_says_so() {
    // Three-byte characters, so the cut has to step back to a boundary.
    let text = "世".repeat(40_000);
    let copy = copy(&text, Route::Direct);
    let bytes = copy.osc.bytes();
    let payload = &bytes[7..bytes.len() - 1];
    assert!(payload.len() <= MAX_BASE64, "{}", payload.len());
    assert!(payload.len() > MAX_BASE64 - 8, "{}", payload.len());
    let decoded = String::from_utf8(STANDARD.decode(payload).unwrap()).unwrap();
    assert_eq!(decoded.len(), copy.copied);
    assert!(text.starts_with(&decoded));
    assert_eq!(copy.total, 120_000);
    assert_eq!(
        copy.flash(),
        "copied the first 75.0 KiB of 117.2 KiB (the clipboard limit)"
    );
    // Exactly at the cap is whole.
    let exact = "a".repeat(MAX_BASE64 / 4 * 3);
    let whole = super::copy(&exact, Route::Direct);
    assert_eq!(whole.copied, whole.total);
    assert_eq!(whole.osc.bytes().len(), MAX_BASE64 + 8);
}

#[test]
fn sizes_read_naturally() {
    assert_eq!(size(0), "0 B");
    assert_eq!(size(1023), "1023 B");
    assert_eq!(size(1229), "1.2 KiB");
    assert_eq!(size(3 * 1024 * 1024 + 400_000), "3.4 MiB");
}

#[test]
fn a_copy_carries_no_sequence_to_the_clipboard() {
    // A model's answer with a title, a clipboard write, 8-bit CSI and OSC, overprinting and a
    // bidi override: what is pasted later must not act on the terminal it is pasted into.
    let text = "run\x1b]0;pwned\x07 \x1b]52;c;cm0=\x07 \u{9b}2J \u{9d}0;x\u{9c} ok\rrm\x08 \u{202E}gpj.exe\tend\r\n";
    for route in [Route::Direct, Route::Tmux] {
        let copy = copy(text, route);
        let bytes = copy.osc.bytes();
        let end = bytes.iter().position(|&b| b == 0x07).unwrap();
        let decoded = String::from_utf8(STANDARD.decode(&bytes[7..end]).unwrap()).unwrap();
        assert!(
            !decoded
                .chars()
                .any(|c| c != '\n' && c != '\t' && crate::text::safe::is_unsafe(c)),
            "{decoded:?}"
        );
        assert!(
            decoded.starts_with("run^[]0;pwned^G ^[]52;c;cm0=^G"),
            "{decoded:?}"
        );
        assert!(
            decoded.ends_with("\tend\n"),
            "tabs and line ends stay: {decoded:?}"
        );
    }
}
