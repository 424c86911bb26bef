//! What `y` copies from the detail view: the payload as it is shown (each logical line with
//! its indent, unwrapped, control characters shown as their placeholders).

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
