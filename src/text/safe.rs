//! Text from outside (model answers, tool arguments, results and errors, MCP servers' names
//! and stderr, saved sessions, file names) never reaches a terminal raw, on any output: the
//! TUI's frames, `taco exec` on a terminal, stderr notices, `taco sessions`, `taco mcp
//! list`, the clipboard. An ESC (CSI, OSC 0/2 titles, OSC 52 clipboard writes, DCS, APC),
//! a C1 control (8-bit CSI U+009B, OSC U+009D …), BEL, a backspace or CR that overprints, or
//! a bidi override in that text could retitle the window, write the clipboard, move the
//! cursor, or make a reviewed command read differently from what runs.
//!
//! Every character that can act on a terminal is replaced by a visible, inert placeholder:
//! `^[` for ESC (the rest of a sequence then prints as the plain text it is), caret forms for
//! the other C0 controls and DEL, `�` for C1 controls and bidi controls. The mapping is one
//! character at a time, so a sequence split across streamed pieces is caught in each piece;
//! only a CR before a newline (a CRLF line end, harmless) needs to look at the next one.

use std::borrow::Cow;

/// Shown for an unsafe character that has no caret form (C1 controls, bidi overrides).
pub const REPLACEMENT: char = '\u{FFFD}';

/// Whether `c` can act on a terminal or reorder text instead of just showing: C0 and C1
/// controls, DEL, bidi embeddings, overrides, isolates and marks, and the Unicode line and
/// paragraph separators.
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}'
                | '\u{200E}'
                | '\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2066}'..='\u{2069}'
                | '\u{2028}'
                | '\u{2029}'
        )
}

/// What a tab becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tabs {
    /// Kept: a terminal line moves to the next stop, which overwrites nothing.
    Keep,
    /// Four spaces: text laid out in cells (the TUI) has no tab stops.
    Spaces,
}

/// `text` with every unsafe character shown as a visible placeholder, for text laid out in
/// the TUI's cells: newlines stay line breaks (a CR before one is dropped), tabs become four
/// spaces, C0 controls and DEL caret notation (`^[`, `^G`, `^?`), anything else `�`.
/// Borrowed when nothing changes.
pub fn escape(text: &str) -> Cow<'_, str> {
    escaped(text, Tabs::Spaces)
}

/// `text` made safe for a terminal line (stderr notices, listings, `taco exec` on a
/// terminal): as [`escape`], but tabs are kept. Borrowed when nothing changes.
pub fn terminal(text: &str) -> Cow<'_, str> {
    escaped(text, Tabs::Keep)
}

fn escaped(text: &str, tabs: Tabs) -> Cow<'_, str> {
    let acts = |c: char| match c {
        '\n' => false,
        '\t' => tabs == Tabs::Spaces,
        c => is_unsafe(c),
    };
    if !text.chars().any(acts) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\r' && chars.peek() == Some(&'\n') {
            continue;
        }
        push_escaped(&mut out, c, tabs);
    }
    Cow::Owned(out)
}

/// One character, escaped.
fn push_escaped(out: &mut String, c: char, tabs: Tabs) {
    match c {
        '\n' => out.push('\n'),
        '\t' if tabs == Tabs::Keep => out.push('\t'),
        '\t' => out.push_str("    "),
        c if (c as u32) < 0x20 => {
            out.push('^');
            out.push(char::from(b'@' + c as u8));
        }
        '\u{7F}' => out.push_str("^?"),
        c if is_unsafe(c) => out.push(REPLACEMENT),
        c => out.push(c),
    }
}

/// Streamed text made safe for a terminal piece by piece (`taco exec`'s answer as it comes):
/// the same as [`terminal`] over the whole text, wherever the pieces were cut.
#[derive(Debug, Default)]
pub struct Escaper {
    /// A CR ended the last piece: whether it is a line end depends on the next one.
    held_cr: bool,
}

impl Escaper {
    /// Appends `piece`, made safe, to `out`.
    pub fn push(&mut self, piece: &str, out: &mut String) {
        let mut chars = piece.chars().peekable();
        if std::mem::take(&mut self.held_cr) && chars.peek() != Some(&'\n') {
            push_escaped(out, '\r', Tabs::Keep);
        }
        while let Some(c) = chars.next() {
            if c == '\r' {
                match chars.peek() {
                    Some('\n') => continue,
                    None => {
                        self.held_cr = true;
                        continue;
                    }
                    Some(_) => {}
                }
            }
            push_escaped(out, c, Tabs::Keep);
        }
    }

    /// The end of the stream: a CR still held is shown.
    pub fn finish(&mut self, out: &mut String) {
        if std::mem::take(&mut self.held_cr) {
            push_escaped(out, '\r', Tabs::Keep);
        }
    }
}

/// A JSON text (one `--json` line) with every unsafe character that JSON may carry raw (C1
/// controls, DEL, bidi controls and separators: serde_json escapes only those below 0x20)
/// written as a `\uXXXX` escape. Only string contents can hold them, and the escape means
/// the same character, so the JSON reads back the same. Borrowed when nothing changes.
pub fn json(line: &[u8]) -> Cow<'_, [u8]> {
    // Every such character is DEL or starts with one of these lead bytes in UTF-8.
    if !line
        .iter()
        .any(|&b| b == 0x7F || b == 0xC2 || b == 0xD8 || b == 0xE2)
    {
        return Cow::Borrowed(line);
    }
    let Ok(text) = std::str::from_utf8(line) else {
        return Cow::Borrowed(line);
    };
    if !text.chars().any(|c| c as u32 >= 0x7F && is_unsafe(c)) {
        return Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if c as u32 >= 0x7F && is_unsafe(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out.into_bytes())
}

#[cfg(test)]
mod tests;
