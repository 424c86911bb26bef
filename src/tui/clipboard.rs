//! Copying to the system clipboard with OSC 52 (`ESC ] 52 ; c ; <base64> BEL`), which the
//! terminal carries out, so it works over SSH too. Inside tmux the sequence is also sent
//! wrapped for passthrough (`ESC P tmux; … ESC \`, with every inner ESC doubled): tmux keeps
//! a plain one as a paste buffer and hands it on when `set-clipboard on`, and hands a wrapped
//! one to the outer terminal when `allow-passthrough on`; sending both works under either.
//!
//! Pure: text in, the bytes to write out (an [`Osc52`] value the event loop writes to the
//! terminal). Payloads are capped at [`MAX_BASE64`] bytes of base64, cut at a character.

use std::ffi::OsStr;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

/// Most base64 bytes sent: terminals have limits of their own (xterm's default is 100 000),
/// and a bigger copy is better cut and said than silently dropped.
pub const MAX_BASE64: usize = 100 * 1024;

/// How a copy reaches the terminal, decided once at startup.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Route {
    /// Straight to the terminal.
    #[default]
    Direct,
    /// Inside tmux (`$TMUX` is set): plain and wrapped for passthrough.
    Tmux,
}

impl Route {
    /// The route for a process whose `$TMUX` is `tmux`.
    pub fn from_env(tmux: Option<&OsStr>) -> Self {
        match tmux {
            Some(value) if !value.is_empty() => Self::Tmux,
            _ => Self::Direct,
        }
    }
}

/// Escape sequences that set the clipboard, ready to write to the terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Osc52(Vec<u8>);

impl Osc52 {
    /// The bytes to write.
    pub fn bytes(&self) -> &[u8] {
        &self.0
    }
}

/// A copy: what to write, and how much of the text it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Copy {
    /// The sequences.
    pub osc: Osc52,
    /// Bytes of the text copied.
    pub copied: usize,
    /// Bytes of the whole text.
    pub total: usize,
}

impl Copy {
    /// What the status line says: `copied 1.2 KiB`, or how much of how much when it was cut.
    pub fn flash(&self) -> String {
        if self.copied < self.total {
            format!(
                "copied the first {} of {} (the clipboard limit)",
                size(self.copied),
                size(self.total)
            )
        } else {
            format!("copied {}", size(self.copied))
        }
    }
}

/// What the status line says of a copy that tmux keeps to itself: its `set-clipboard` is
/// `value` (tmux's default `external`, or `off`) and passthrough is off.
pub fn tmux_blocked(value: &str) -> String {
    let value: String = (value.chars())
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .take(16)
        .collect();
    format!(
        "copied, but tmux's set-clipboard is {value}: add `set -g set-clipboard on` to ~/.tmux.conf"
    )
}

/// The OSC 52 copy of `text` by `route`, cut to [`MAX_BASE64`] bytes of base64. The text is
/// made inert first (`text::safe::terminal`): what a model or a page wrote must not reach the
/// clipboard as escape sequences, to act on whatever terminal it is pasted into.
pub fn copy(text: &str, route: Route) -> Copy {
    let text = crate::text::safe::terminal(text);
    let text = text.as_ref();
    // Every 3 bytes of text are 4 of base64.
    let most = MAX_BASE64 / 4 * 3;
    let mut cut = text.len().min(most);
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let encoded = STANDARD.encode(&text.as_bytes()[..cut]);
    let plain = sequence(&encoded);
    let bytes = match route {
        Route::Direct => plain,
        Route::Tmux => {
            let mut both = plain.clone();
            both.extend(tmux_wrap(&plain));
            both
        }
    };
    Copy {
        osc: Osc52(bytes),
        copied: cut,
        total: text.len(),
    }
}

/// `ESC ] 52 ; c ; <base64> BEL`: set the clipboard (`c`) to the decoded payload.
fn sequence(encoded: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(encoded.len() + 8);
    out.extend_from_slice(b"\x1b]52;c;");
    out.extend_from_slice(encoded.as_bytes());
    out.push(0x07);
    out
}

/// `ESC P tmux; <inner, each ESC doubled> ESC \`: tmux passes the inner sequence on.
pub(crate) fn tmux_wrap(inner: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(inner.len() + 12);
    out.extend_from_slice(b"\x1bPtmux;");
    for &b in inner {
        if b == 0x1b {
            out.push(0x1b);
        }
        out.push(b);
    }
    out.extend_from_slice(b"\x1b\\");
    out
}

/// `830 B`, `1.2 KiB`, `3.4 MiB`.
fn size(bytes: usize) -> String {
    const KIB: f64 = 1024.0;
    let b = bytes as f64;
    if bytes < 1024 {
        format!("{bytes} B")
    } else if b < KIB * KIB {
        format!("{:.1} KiB", b / KIB)
    } else {
        format!("{:.1} MiB", b / KIB / KIB)
    }
}

#[cfg(test)]
mod tests;
