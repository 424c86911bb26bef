use std::collections::VecDeque;

use super::*;

#[test]
fn a_dark_and_a_light_answer() {
    // xterm's default black, with BEL.
    assert_eq!(
        parse_reply(b"\x1b]11;rgb:0000/0000/0000\x07"),
        Some(Background::Dark)
    );
    // Solarized light, ended by ESC \ (what tmux and most terminals send).
    assert_eq!(
        parse_reply(b"\x1b]11;rgb:fdfd/f6f6/e3e3\x1b\\"),
        Some(Background::Light)
    );
    // One digit a channel, and rgba (alpha ignored).
    assert_eq!(
        parse_reply(b"\x1b]11;rgb:f/f/f\x07"),
        Some(Background::Light)
    );
    assert_eq!(
        parse_reply(b"\x1b]11;rgba:2828/2828/2828/ffff\x07"),
        Some(Background::Dark)
    );
    // The DA1 answer after it, and bytes before it, change nothing.
    assert_eq!(
        parse_reply(b"x\x1b]11;rgb:1e1e/1e1e/2e2e\x07\x1b[?62;22c"),
        Some(Background::Dark)
    );
}

#[test]
fn mid_grey_goes_where_dark_text_reads_better() {
    // #808080: black text has 5.3:1 on it, white 3.9:1.
    assert_eq!(
        parse_reply(b"\x1b]11;rgb:8080/8080/8080\x07"),
        Some(Background::Light)
    );
    assert_eq!(
        parse_reply(b"\x1b]11;rgb:5050/5050/5050\x07"),
        Some(Background::Dark)
    );
    assert!((luminance(1.0, 1.0, 1.0) - 1.0).abs() < 1e-9);
    assert!(luminance(0.0, 0.0, 0.0).abs() < 1e-9);
}

#[test]
fn garbage_and_cut_answers_say_nothing() {
    for bytes in [
        &b""[..],
        b"\x1b[?1;2c",
        b"\x1b]11;rgb:ffff/ffff\x07",
        b"\x1b]11;rgb:ffff/ffff/ffff",
        b"\x1b]11;rgb:ffff/ffff/ffff\x1bX",
        b"\x1b]11;rgb:fffff/0/0\x07",
        b"\x1b]11;rgb:gg/00/00\x07",
        b"\x1b]11;rgb://\x07",
        b"\x1b]11;hsv:1/2/3\x07",
        b"\x1b]11;?\x07",
        b"\x1b]11;rgb:\xff\xfe/0/0\x07",
        b"\x1b]10;rgb:ffff/ffff/ffff\x07",
    ] {
        assert_eq!(parse_reply(bytes), None, "{bytes:?}");
    }
}

#[test]
fn the_device_attributes_end_the_wait() {
    assert!(answered(b"\x1b[?1;2c"));
    assert!(answered(b"\x1b]11;rgb:0/0/0\x07\x1b[?62;4;22c"));
    assert!(!answered(b"\x1b]11;rgb:0/0/0\x07"));
    assert!(!answered(b"\x1b[?1;2"), "not complete yet");
    assert!(!answered(b"\x1b[?1;2u"), "another answer");
    assert!(answered(b"\x1b[?1u\x1b[?1c"), "a later one counts");
}

#[test]
fn colorfgbg_and_the_configured_choice() {
    assert_eq!(from_colorfgbg("15;0"), Some(Background::Dark));
    assert_eq!(from_colorfgbg("0;15"), Some(Background::Light));
    assert_eq!(from_colorfgbg("0;default;7"), Some(Background::Light));
    assert_eq!(from_colorfgbg("default;default"), None);
    assert_eq!(from_colorfgbg("1;200"), None);
    let light = Some(Background::Light);
    assert_eq!(choose(ThemeChoice::Dark, light, None), Background::Dark);
    assert_eq!(
        choose(ThemeChoice::Light, None, Some("15;0")),
        Background::Light
    );
    assert_eq!(
        choose(ThemeChoice::Auto, light, Some("15;0")),
        Background::Light
    );
    assert_eq!(
        choose(ThemeChoice::Auto, None, Some("0;15")),
        Background::Light
    );
    assert_eq!(
        choose(ThemeChoice::Auto, None, Some("junk")),
        Background::Dark
    );
    assert_eq!(choose(ThemeChoice::Auto, None, None), Background::Dark);
}

/// A terminal that answers with a script: each wait either gets the next chunk or times out.
struct Script {
    chunks: VecDeque<Vec<u8>>,
    /// Every timeout a wait was given.
    waits: Vec<Duration>,
    /// After the script: bytes forever (a flood), or nothing.
    flood: bool,
}

impl Script {
    fn new(chunks: &[&[u8]], flood: bool) -> Self {
        Self {
            chunks: chunks.iter().map(|c| c.to_vec()).collect(),
            waits: Vec::new(),
            flood,
        }
    }
}

impl Source for Script {
    fn wait(&mut self, timeout: Duration) -> io::Result<bool> {
        self.waits.push(timeout);
        Ok(!self.chunks.is_empty() || self.flood)
    }

    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let chunk = match self.chunks.pop_front() {
            Some(chunk) => chunk,
            None => vec![b'x'; buf.len()],
        };
        let n = chunk.len().min(buf.len());
        buf[..n].copy_from_slice(&chunk[..n]);
        Ok(n)
    }
}

#[test]
fn the_query_asks_for_the_colour_then_the_attributes_and_reads_the_answer() {
    let mut out = Vec::new();
    let mut input = Script::new(
        &[b"\x1b]11;rgb:ffff/", b"ffff/ffff\x1b\\", b"\x1b[?1;2c"],
        false,
    );
    let found = query(&mut out, &mut input, TIMEOUT);
    assert_eq!(out, b"\x1b]11;?\x07\x1b[c");
    assert_eq!(found, Some(Background::Light));
    assert_eq!(input.waits.len(), 3, "it stops at the DA1 answer");
}

#[test]
fn a_terminal_that_never_answers_costs_one_bounded_wait() {
    let mut out = Vec::new();
    let mut input = Script::new(&[], false);
    assert_eq!(query(&mut out, &mut input, TIMEOUT), None);
    assert_eq!(input.waits.len(), 1);
    assert!(input.waits[0] <= TIMEOUT, "{:?}", input.waits);
}

#[test]
fn a_terminal_that_answers_only_the_attributes_is_read_to_the_end() {
    let mut out = Vec::new();
    let mut input = Script::new(&[b"\x1b[?62;22c"], false);
    assert_eq!(query(&mut out, &mut input, TIMEOUT), None);
    assert_eq!(input.waits.len(), 1, "the DA1 answer ends it at once");
    assert!(
        input.chunks.is_empty(),
        "and it was consumed, not left as keys"
    );
}

#[test]
fn a_flood_of_bytes_stops_at_the_cap() {
    let mut input = Script::new(&[], true);
    let bytes = read_answers(&mut input, TIMEOUT);
    assert_eq!(bytes.len(), MAX_REPLY);
    assert!(input.waits.iter().all(|w| *w <= TIMEOUT));
}

#[test]
fn an_input_error_ends_the_wait() {
    struct Broken;
    impl Source for Broken {
        fn wait(&mut self, _: Duration) -> io::Result<bool> {
            Err(io::Error::other("gone"))
        }
        fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
            Err(io::Error::other("gone"))
        }
    }
    assert!(read_answers(&mut Broken, TIMEOUT).is_empty());
    // Output that cannot be written asks nothing and waits for nothing.
    struct Full;
    impl Write for Full {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::Error::other("full"))
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let mut input = Script::new(&[b"\x1b]11;rgb:0/0/0\x07"], false);
    assert_eq!(query(&mut Full, &mut input, TIMEOUT), None);
    assert!(input.waits.is_empty());
}
