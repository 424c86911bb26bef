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
