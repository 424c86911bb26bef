//! What `y` copies from the detail view: the payload as it is shown (each logical line with
//! its indent, unwrapped, control characters shown as their placeholders); and the key hint
//! that says so.

use super::Detail;

impl Detail {
    /// The whole payload as shown, one line per logical line.
    pub(crate) fn text(&self) -> String {
        let mut out = String::new();
        for (n, line) in self.lines.iter().enumerate() {
            if n > 0 {
                out.push('\n');
            }
            out.extend(std::iter::repeat_n(' ', usize::from(line.indent)));
            out.push_str(&line.text);
        }
        out
    }
}

/// The longest key hint shorter than `room` cells: every key stays readable, none is cut.
pub(super) fn keys(room: usize) -> &'static str {
    const KEYS: [&str; 3] = [
        "Esc close · ↑↓ PgUp PgDn scroll · y copy",
        "Esc close · ↑↓ scroll · y copy",
        "Esc · ↑↓ · y copy",
    ];
    (KEYS.iter())
        .find(|k| k.chars().count() < room)
        .unwrap_or(&KEYS[2])
}
