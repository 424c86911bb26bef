//! A running command's last lines, for `tool_output` events: kept small, sent at most a few
//! times a second and only when something new arrived.

use std::collections::VecDeque;
use std::time::Duration;

/// How often the tail is sent while output keeps coming.
pub(crate) const EVERY: Duration = Duration::from_millis(250);
/// Bytes kept (the last few lines of both streams together).
const KEEP: usize = 2048;
/// Lines sent at most.
const LINES: usize = 5;

/// The last bytes a command wrote, and whether they changed since last sent.
#[derive(Debug, Default)]
pub(crate) struct Tail {
    bytes: VecDeque<u8>,
    changed: bool,
}

impl Tail {
    /// Adds output.
    pub(crate) fn push(&mut self, data: &[u8]) {
        let data = &data[data.len().saturating_sub(KEEP)..];
        self.bytes.extend(data);
        let excess = self.bytes.len().saturating_sub(KEEP);
        self.bytes.drain(..excess);
        self.changed |= !data.is_empty();
    }

    /// The last lines, when they changed since the last call.
    pub(crate) fn take(&mut self) -> Option<String> {
        if !std::mem::take(&mut self.changed) {
            return None;
        }
        let (front, back) = self.bytes.as_slices();
        let mut bytes = front.to_vec();
        bytes.extend_from_slice(back);
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let start = lines.len().saturating_sub(LINES);
        Some(lines[start..].join("\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_lines_and_says_only_what_is_new() {
        let mut tail = Tail::default();
        assert_eq!(tail.take(), None);
        for i in 1..=8 {
            tail.push(format!("line {i}\n").as_bytes());
        }
        assert_eq!(
            tail.take().as_deref(),
            Some("line 4\nline 5\nline 6\nline 7\nline 8")
        );
        assert_eq!(tail.take(), None, "nothing new");
        tail.push(&vec![b'x'; 10_000]);
        assert!(tail.take().is_some_and(|t| t.len() <= KEEP));
    }
}
