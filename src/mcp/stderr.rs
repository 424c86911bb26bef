//! A server's stderr read in bounded chunks (issue 28.1): a line is cut at [`MAX_LINE`] bytes
//! and the rest of it, up to its newline, is skipped, so a server that prints an endless line
//! costs taco one buffer, not its memory (`BufReader::lines` kept the whole line: 8.7 GB in
//! 31 s).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::io::{AsyncRead, AsyncReadExt};

/// The last lines a child (an MCP server, an ACP agent) wrote to stderr, for the report when
/// it fails: at most `kept`, the oldest dropped.
#[derive(Debug, Clone)]
pub struct StderrTail {
    lines: Arc<Mutex<VecDeque<String>>>,
    kept: usize,
}

impl StderrTail {
    /// A tail keeping the last `kept` lines.
    pub fn new(kept: usize) -> Self {
        Self {
            lines: Arc::default(),
            kept,
        }
    }

    /// Keeps `line`, dropping the oldest past the bound.
    pub fn push(&self, line: String) {
        let mut lines = self.lines.lock().unwrap_or_else(PoisonError::into_inner);
        if lines.len() >= self.kept {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    /// The kept lines, oldest first.
    pub fn lines(&self) -> Vec<String> {
        let lines = self.lines.lock().unwrap_or_else(PoisonError::into_inner);
        lines.iter().cloned().collect()
    }
}

/// The most bytes of one line kept; the rest of the line is dropped.
pub const MAX_LINE: usize = 8 * 1024;

/// Bytes read from the pipe at a time.
const CHUNK: usize = 4 * 1024;

/// Reads `pipe` to its end, calling `line` with each line (lossy UTF-8, without its newline;
/// a cut line ends with ` …`).
pub async fn read_lines<R: AsyncRead + Unpin>(mut pipe: R, mut line: impl FnMut(String)) {
    let mut chunk = vec![0u8; CHUNK];
    let mut current: Vec<u8> = Vec::with_capacity(256);
    // Inside a line that was cut: bytes are skipped until its newline.
    let mut skipping = false;
    loop {
        let n = match pipe.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        for piece in chunk[..n].split_inclusive(|&b| b == b'\n') {
            let (bytes, ends) = match piece.split_last() {
                Some((b'\n', rest)) => (rest, true),
                _ => (piece, false),
            };
            if !skipping {
                let room = MAX_LINE - current.len();
                current.extend_from_slice(&bytes[..bytes.len().min(room)]);
                if bytes.len() > room {
                    line(cut(&current));
                    current.clear();
                    skipping = true;
                }
            }
            if ends {
                if !skipping {
                    line(text(&current));
                }
                current.clear();
                skipping = false;
            }
        }
    }
    if !skipping && !current.is_empty() {
        line(text(&current));
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .trim_end_matches('\r')
        .to_string()
}

/// A line cut at the bound (a character split at the edge becomes `�`, never a panic).
fn cut(bytes: &[u8]) -> String {
    format!("{} …", String::from_utf8_lossy(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::pin::Pin;
    use std::task::{Context, Poll};
    use tokio::io::ReadBuf;

    /// A pipe that yields `head`, then `fill` bytes forever (or `limit` of them).
    struct Endless {
        head: Vec<u8>,
        fill: u8,
        left: usize,
    }

    impl AsyncRead for Endless {
        fn poll_read(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<std::io::Result<()>> {
            if !self.head.is_empty() {
                let n = self.head.len().min(buf.remaining());
                let head: Vec<u8> = self.head.drain(..n).collect();
                buf.put_slice(&head);
                return Poll::Ready(Ok(()));
            }
            let n = self.left.min(buf.remaining());
            let fill = vec![self.fill; n];
            buf.put_slice(&fill);
            self.left -= n;
            Poll::Ready(Ok(()))
        }
    }

    async fn lines_of(pipe: impl AsyncRead + Unpin) -> Vec<String> {
        let mut out = Vec::new();
        read_lines(pipe, |l| out.push(l)).await;
        out
    }

    #[tokio::test]
    async fn lines_split_at_newlines_whatever_the_chunks() {
        let input = b"first\r\nsecond\n\nthird without newline".to_vec();
        assert_eq!(
            lines_of(&input[..]).await,
            ["first", "second", "", "third without newline"]
        );
    }

    #[tokio::test]
    async fn a_huge_line_is_cut_once_and_the_next_line_is_whole() {
        // 64 MiB of one line, then a short one: one cut line, then the short one; the
        // reader never held more than the bound.
        let pipe = Endless {
            head: b"before\n".to_vec(),
            fill: b'x',
            left: 64 << 20,
        };
        let tail = &b"\nafter\n"[..];
        let lines = lines_of(tokio::io::AsyncReadExt::chain(pipe, tail)).await;
        assert_eq!(
            lines.len(),
            3,
            "{:?}",
            lines.iter().map(String::len).collect::<Vec<_>>()
        );
        assert_eq!(lines[0], "before");
        assert_eq!(lines[1].len(), MAX_LINE + " …".len());
        assert!(lines[1].ends_with(" …"));
        assert_eq!(lines[2], "after");
    }

    #[tokio::test]
    async fn a_character_split_at_the_bound_does_not_panic() {
        let mut input = vec![b'a'; MAX_LINE - 1];
        input.extend_from_slice("é and more".as_bytes());
        input.push(b'\n');
        let lines = lines_of(&input[..]).await;
        assert_eq!(lines.len(), 1);
        assert!(
            lines[0].ends_with("\u{fffd} …"),
            "{:?}",
            &lines[0][lines[0].len() - 8..]
        );
    }
}
