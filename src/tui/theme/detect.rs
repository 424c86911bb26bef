//! Is the terminal's background dark or light? Asked once at startup, before the event
//! stream reads the keyboard: `OSC 11 ; ?` (the background colour) followed by `CSI c` (the
//! primary device attributes, which every terminal answers, and after the colour when it
//! answers that). The DA1 answer ends the wait early; the wait is bounded by [`TIMEOUT`] and
//! the bytes read by [`MAX_REPLY`], so a terminal that never answers costs at most 100 ms.
//! Both answers are read here, so neither reaches the keyboard as typed text.
//! Where the terminal says nothing, `$COLORFGBG` (rxvt, Konsole) decides, then dark.
//!
//! The parsing is pure (bytes in, a [`Background`] out); [`query`] is the bounded read.

use std::io::{self, Write};
use std::time::{Duration, Instant};

use crate::config::ThemeChoice;

/// The longest the startup waits for the terminal's answers.
pub const TIMEOUT: Duration = Duration::from_millis(100);
/// The most bytes read while waiting (the two answers are ~40 bytes).
pub const MAX_REPLY: usize = 1024;
/// Asks for the background colour, then for the device attributes.
pub const QUERY: &[u8] = b"\x1b]11;?\x07\x1b[c";

/// Whether the terminal's background is dark or light.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Background {
    /// Light text reads best on it.
    Dark,
    /// Dark text reads best on it.
    Light,
}

impl Background {
    /// From a colour's relative luminance (0 black … 1 white): light where black text has
    /// more contrast than white, which is past ≈ 0.18.
    pub fn from_luminance(luminance: f64) -> Self {
        // Contrast with black (L + 0.05) / 0.05 equals contrast with white 1.05 / (L + 0.05)
        // at L = √0.0525 − 0.05.
        if luminance > 0.0525_f64.sqrt() - 0.05 {
            Self::Light
        } else {
            Self::Dark
        }
    }
}

/// The background to draw for: the configured one, or for `auto` what the terminal answered,
/// else what `$COLORFGBG` says, else dark.
pub fn choose(
    choice: ThemeChoice,
    answered: Option<Background>,
    colorfgbg: Option<&str>,
) -> Background {
    match choice {
        ThemeChoice::Dark => Background::Dark,
        ThemeChoice::Light => Background::Light,
        ThemeChoice::Auto => answered
            .or_else(|| colorfgbg.and_then(from_colorfgbg))
            .unwrap_or(Background::Dark),
    }
}

/// `$COLORFGBG` is `fg;bg` (or `fg;default;bg`) in ANSI colour numbers: backgrounds 0–6 and
/// 8 are dark, 7 and 9–15 light (the rule Vim uses). Anything else says nothing.
pub fn from_colorfgbg(value: &str) -> Option<Background> {
    let bg: u8 = value.rsplit(';').next()?.trim().parse().ok()?;
    match bg {
        0..=6 | 8 => Some(Background::Dark),
        7 | 9..=15 => Some(Background::Light),
        _ => None,
    }
}

/// The background an `OSC 11` answer in `bytes` reports: `ESC ] 11 ; rgb:R/G/B` ended by
/// BEL or `ESC \`, each channel 1–4 hex digits (`rgba:` too; its alpha is ignored). `None`
/// when there is no complete, well-formed answer.
pub fn parse_reply(bytes: &[u8]) -> Option<Background> {
    const START: &[u8] = b"\x1b]11;";
    let at = bytes.windows(START.len()).position(|w| w == START)?;
    let rest = &bytes[at + START.len()..];
    let end = rest.iter().position(|&b| b == 0x07 || b == 0x1b)?;
    // `ESC` must be the start of the string terminator `ESC \`.
    if rest[end] == 0x1b && rest.get(end + 1) != Some(&b'\\') {
        return None;
    }
    let spec = std::str::from_utf8(&rest[..end]).ok()?;
    let [r, g, b] = parse_rgb(spec)?;
    Some(Background::from_luminance(luminance(r, g, b)))
}

/// `rgb:RRRR/GGGG/BBBB` (or `rgba:…/AAAA`) as three channels in 0..=1.
fn parse_rgb(spec: &str) -> Option<[f64; 3]> {
    let (kind, channels) = spec.split_once(':')?;
    let wanted = match kind {
        "rgb" => 3,
        "rgba" => 4,
        _ => return None,
    };
    let parts: Vec<&str> = channels.split('/').collect();
    if parts.len() != wanted {
        return None;
    }
    let mut out = [0.0; 3];
    for (slot, part) in out.iter_mut().zip(&parts) {
        if part.is_empty() || part.len() > 4 || !part.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let value = u32::from_str_radix(part, 16).ok()?;
        // 1 to 4 hex digits scale to the channel's full range (`f` is as bright as `ffff`).
        let max = (1u32 << (4 * part.len())) - 1;
        *slot = f64::from(value) / f64::from(max);
    }
    Some(out)
}

/// Relative luminance (WCAG 2) of an sRGB colour with channels in 0..=1.
pub fn luminance(r: f64, g: f64, b: f64) -> f64 {
    let linear = |c: f64| {
        if c <= 0.04045 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b)
}

/// Whether `bytes` hold the end of the DA1 answer (`ESC [ ? … c`), which terminals send
/// after the colour: nothing more is coming.
pub fn answered(bytes: &[u8]) -> bool {
    let mut from = 0;
    while let Some(at) = find(&bytes[from..], b"\x1b[?") {
        let params = &bytes[from + at + 3..];
        match params
            .iter()
            .position(|b| !(b.is_ascii_digit() || *b == b';'))
        {
            Some(end) if params[end] == b'c' => return true,
            _ => from += at + 3,
        }
    }
    false
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Where the answers are read from: the terminal, or a test's script.
pub trait Source {
    /// Waits up to `timeout` for bytes; `false` when none came.
    fn wait(&mut self, timeout: Duration) -> io::Result<bool>;
    /// Reads what is there (after `wait` said so, without blocking).
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize>;
}

/// Asks the terminal (`out`, then `input`) and reads its answers for at most `timeout` and
/// [`MAX_REPLY`] bytes. `None`: it did not say (or the read failed).
pub fn query(out: &mut dyn Write, input: &mut dyn Source, timeout: Duration) -> Option<Background> {
    out.write_all(QUERY).ok()?;
    out.flush().ok()?;
    let bytes = read_answers(input, timeout);
    parse_reply(&bytes)
}

/// Reads until the DA1 answer, the deadline, [`MAX_REPLY`] bytes or an error.
pub fn read_answers(input: &mut dyn Source, timeout: Duration) -> Vec<u8> {
    let deadline = Instant::now() + timeout;
    let mut bytes = Vec::new();
    let mut buf = [0u8; 256];
    while bytes.len() < MAX_REPLY && !answered(&bytes) {
        let Some(left) = deadline.checked_duration_since(Instant::now()) else {
            break;
        };
        match input.wait(left) {
            Ok(true) => {}
            Ok(false) | Err(_) => break,
        }
        let room = (MAX_REPLY - bytes.len()).min(buf.len());
        match input.read(&mut buf[..room]) {
            Ok(0) | Err(_) => break,
            Ok(n) => bytes.extend_from_slice(&buf[..n]),
        }
    }
    bytes
}

/// The terminal's input, read directly (never through std's buffered stdin, which would keep
/// keys typed meanwhile from the event stream).
pub struct Tty<'a> {
    fd: std::os::fd::BorrowedFd<'a>,
}

impl<'a> Tty<'a> {
    /// Reads from `fd` (the terminal, in raw mode).
    pub fn new(fd: std::os::fd::BorrowedFd<'a>) -> Self {
        Self { fd }
    }
}

impl Source for Tty<'_> {
    fn wait(&mut self, timeout: Duration) -> io::Result<bool> {
        use rustix::event::{PollFd, PollFlags, Timespec, poll};
        let mut fds = [PollFd::new(&self.fd, PollFlags::IN)];
        // Callers wait at most `TIMEOUT`; a duration too large for a timespec is not one.
        let timeout = Timespec::try_from(timeout).unwrap_or(Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        });
        match poll(&mut fds, Some(&timeout)) {
            Ok(ready) => Ok(ready > 0),
            // A signal (a resize) cut the wait short: the answer is given up on.
            Err(rustix::io::Errno::INTR) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        Ok(rustix::io::read(self.fd, buf)?)
    }
}

#[cfg(test)]
mod tests;
