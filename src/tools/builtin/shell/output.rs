//! A command's output: captured with bounded memory, then shown within one budget shared by
//! stdout and stderr, each stream keeping its head and tail.

use crate::tools::budget;

/// One stream as it arrives: the first `cap / 2` bytes, the last `cap - cap / 2`, and a count.
pub(super) struct Capture {
    cap: usize,
    head: Vec<u8>,
    tail: Vec<u8>,
    total: usize,
}

impl Capture {
    /// An empty capture keeping at most about `cap` bytes.
    pub(super) fn new(cap: usize) -> Self {
        Self {
            cap,
            head: Vec::new(),
            tail: Vec::new(),
            total: 0,
        }
    }

    fn head_cap(&self) -> usize {
        self.cap / 2
    }

    fn tail_cap(&self) -> usize {
        self.cap - self.cap / 2
    }

    /// Adds bytes read from the pipe.
    pub(super) fn push(&mut self, mut data: &[u8]) {
        self.total += data.len();
        let room = self.head_cap().saturating_sub(self.head.len());
        let take = room.min(data.len());
        self.head.extend_from_slice(&data[..take]);
        data = &data[take..];
        self.tail.extend_from_slice(data);
        // Trim only when the tail is twice its cap, so trimming stays amortized O(1).
        if self.tail.len() > 2 * self.tail_cap().max(4096) {
            self.trim_tail();
        }
    }

    fn trim_tail(&mut self) {
        let excess = self.tail.len().saturating_sub(self.tail_cap());
        self.tail.drain(..excess);
    }

    /// The kept bytes, ready to be shown.
    pub(super) fn finish(mut self) -> Stream {
        self.trim_tail();
        let mut head = self.head;
        let mut tail = self.tail;
        if head.len() + tail.len() == self.total {
            // Nothing was dropped: one buffer, so any cut made later is a single one.
            head.append(&mut tail);
        } else {
            budget::trim_partial_char(&mut head);
        }
        Stream {
            head,
            tail,
            total: self.total,
        }
    }
}

/// One stream's kept bytes: all of them in `head` (and `tail` empty) when nothing was
/// dropped, else its first and last bytes.
pub(super) struct Stream {
    head: Vec<u8>,
    tail: Vec<u8>,
    total: usize,
}

/// A stream as shown: its text, the JSON cost of that text and the bytes cut from its middle.
pub(super) struct Shown {
    pub(super) text: String,
    pub(super) cost: usize,
    pub(super) omitted: usize,
}

impl Stream {
    /// Bytes the command wrote to the stream.
    pub(super) fn total(&self) -> usize {
        self.total
    }

    fn complete(&self) -> bool {
        self.head.len() == self.total
    }

    /// The JSON cost of showing the stream whole, if it was kept whole.
    fn need(&self) -> Option<usize> {
        self.complete().then(|| budget::bytes_cost(&self.head))
    }

    /// The stream within `share` bytes of JSON cost: whole, or its head and tail around a
    /// marker saying how much was cut.
    fn show(&self, share: usize) -> Shown {
        if let Some(cost) = self.need().filter(|&cost| cost <= share) {
            return Shown {
                text: String::from_utf8_lossy(&self.head).into_owned(),
                cost,
                omitted: 0,
            };
        }
        let room = share.saturating_sub(budget::str_cost(&marker(usize::MAX)));
        let (head_len, head_cost) = budget::bytes_prefix(&self.head, room / 2);
        // The tail gets what the head left; a complete stream cuts the one buffer it has.
        let tail: &[u8] = if self.complete() {
            &self.head[head_len..]
        } else {
            &self.tail
        };
        let (start, tail_cost) = budget::bytes_suffix(tail, room - head_cost);
        let tail = &tail[start..];
        let omitted = self.total - head_len - tail.len();
        let marker = marker(omitted);
        Shown {
            cost: head_cost + budget::str_cost(&marker) + tail_cost,
            text: format!(
                "{}{marker}{}",
                String::from_utf8_lossy(&self.head[..head_len]),
                String::from_utf8_lossy(tail)
            ),
            omitted,
        }
    }
}

/// What stands in for the cut middle of a stream.
fn marker(omitted: usize) -> String {
    format!("\n[... {omitted} bytes omitted ...]\n")
}

/// Both streams within `room` bytes of JSON cost together. A stream that needs less than
/// half gets what it needs and the other gets the rest; otherwise they split it evenly.
pub(super) fn show_both(out: &Stream, err: &Stream, room: usize) -> [Shown; 2] {
    let (need_out, need_err) = (out.need(), err.need());
    let half = room / 2;
    let (share_out, share_err) = match (need_out, need_err) {
        (Some(o), Some(e)) if o.saturating_add(e) <= room => (o, e),
        (Some(o), _) if o <= half => (o, room - o),
        (_, Some(e)) if e <= half => (room - e, e),
        _ => (half, room - half),
    };
    [out.show(share_out), err.show(share_err)]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(cap: usize, chunks: &[&[u8]]) -> Stream {
        let mut capture = Capture::new(cap);
        for chunk in chunks {
            capture.push(chunk);
        }
        capture.finish()
    }

    #[test]
    fn small_output_is_whole() {
        let s = stream(10, &[b"abc", b"defg"]).show(100);
        assert_eq!((s.text.as_str(), s.cost, s.omitted), ("abcdefg", 7, 0));
        assert_eq!(stream(10, &[b"0123456789"]).show(10).text, "0123456789");
        assert_eq!(stream(10, &[b"a\xffb"]).show(10).text, "a\u{fffd}b");
    }

    #[test]
    fn big_output_keeps_head_and_tail() {
        let data: Vec<u8> = (0..100_000u32).map(|i| b'a' + (i % 26) as u8).collect();
        let chunks: Vec<&[u8]> = data.chunks(333).collect();
        let s = stream(1000, &chunks).show(1000);
        let room = 1000 - str_cost_of_marker();
        assert_eq!(s.omitted, 100_000 - room);
        assert!(s.cost <= 1000, "{}", s.cost);
        let text = &s.text;
        assert!(text.starts_with(std::str::from_utf8(&data[..room / 2]).unwrap()));
        assert!(
            text.ends_with(std::str::from_utf8(&data[data.len() - (room - room / 2)..]).unwrap())
        );
        assert!(text.contains(&format!("[... {} bytes omitted ...]", s.omitted)));
    }

    fn str_cost_of_marker() -> usize {
        budget::str_cost(&marker(usize::MAX))
    }

    #[test]
    fn a_kept_stream_too_costly_to_show_is_cut_once() {
        // Kept whole (20 bytes), but each control byte costs 6.
        let s = stream(100, &[&[1u8; 20]]).show(str_cost_of_marker() + 24);
        assert_eq!(s.omitted, 16);
        assert_eq!(s.text, format!("\u{1}\u{1}{}\u{1}\u{1}", marker(16)));
        assert_eq!(s.cost, 24 + budget::str_cost(&marker(16)));
    }

    #[test]
    fn the_budget_goes_where_it_is_needed() {
        let big = stream(1000, &[&[b'x'; 5000]]);
        let small = stream(1000, &[b"tiny"]);
        let [out, err] = show_both(&big, &small, 900);
        assert_eq!((err.text.as_str(), err.omitted), ("tiny", 0));
        assert!(out.cost <= 896 && out.cost > 850, "{}", out.cost);
        let [out, err] = show_both(&big, &big, 900);
        assert!(out.cost <= 450 && err.cost <= 450 && out.cost > 400);
    }
}
