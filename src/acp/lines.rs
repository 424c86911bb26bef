//! JSON-RPC lines over tokio byte streams, for the ACP crate's `Lines` transport. Ours rather
//! than the crate's `ByteStreams`: a peer's line has a size bound (the crate reads a line of
//! any length into memory) and a write a peer never reads has a time bound.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use futures_util::{Sink, Stream};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader};

/// The longest line a peer may send (a file's diff or a whole file travels in one): 16 MiB.
pub const MAX_LINE: usize = 16 << 20;

/// How long one line may take to be written before the peer is judged to have stopped
/// reading (the connection then ends, and says so).
pub const WRITE_WAIT: Duration = Duration::from_secs(30);

/// What went wrong with a peer's line, said to whoever runs the connection.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LineProblem {
    /// A line over [`MAX_LINE`]: dropped whole (the rest of it is read and discarded).
    #[error("the peer sent a line of more than {} MiB; it was dropped", MAX_LINE >> 20)]
    TooLong,
    /// A line that is not UTF-8: dropped.
    #[error("the peer sent a line that is not UTF-8; it was dropped")]
    NotUtf8,
}

/// Where line problems are said.
pub type Problems = Arc<dyn Fn(LineProblem) + Send + Sync>;

/// The peer's lines, each at most `max` bytes; longer or non-UTF-8 lines are dropped and said.
pub fn incoming<R>(
    reader: R,
    max: usize,
    problems: Problems,
) -> impl Stream<Item = io::Result<String>> + Send + 'static
where
    R: tokio::io::AsyncRead + Send + Unpin + 'static,
{
    let state = (BufReader::new(reader), Vec::new(), problems);
    futures_util::stream::unfold(state, move |(mut reader, mut buf, problems)| async move {
        loop {
            match read_line(&mut reader, &mut buf, max).await {
                Ok(Some(Read::Line(line))) => return Some((Ok(line), (reader, buf, problems))),
                Ok(Some(Read::Dropped(problem))) => problems(problem),
                Ok(None) => return None,
                Err(e) => return Some((Err(e), (reader, buf, problems))),
            }
        }
    })
}

/// Lines written to `writer`, each followed by a newline and flushed, each within `wait`.
pub fn outgoing<W>(writer: W, wait: Duration) -> impl Sink<String, Error = io::Error> + Send
where
    W: AsyncWrite + Send + Unpin + 'static,
{
    futures_util::sink::unfold(writer, move |mut writer, line: String| async move {
        // One write a line: a streamed answer is thousands of them.
        let mut bytes = line.into_bytes();
        bytes.push(b'\n');
        let write = async {
            writer.write_all(&bytes).await?;
            writer.flush().await
        };
        match tokio::time::timeout(wait, write).await {
            Ok(result) => result.map(|()| writer),
            Err(_) => Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "the peer read nothing for {} s; the connection was closed",
                    wait.as_secs()
                ),
            )),
        }
    })
}

/// One line read.
enum Read {
    Line(String),
    Dropped(LineProblem),
}

/// Reads up to the next newline, holding at most `max` bytes of it; `None` at the end.
async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    max: usize,
) -> io::Result<Option<Read>> {
    buf.clear();
    let mut too_long = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            // The end: a last line without its newline still counts.
            if too_long {
                return Ok(Some(Read::Dropped(LineProblem::TooLong)));
            }
            if buf.is_empty() {
                return Ok(None);
            }
            return Ok(Some(finish(buf)));
        }
        let (chunk, used, ended) = match available.iter().position(|&b| b == b'\n') {
            Some(at) => (&available[..at], at + 1, true),
            None => (available, available.len(), false),
        };
        if !too_long {
            if buf.len() + chunk.len() > max {
                too_long = true;
                buf.clear();
            } else {
                buf.extend_from_slice(chunk);
            }
        }
        reader.consume(used);
        if ended {
            if too_long {
                return Ok(Some(Read::Dropped(LineProblem::TooLong)));
            }
            return Ok(Some(finish(buf)));
        }
    }
}

fn finish(buf: &mut Vec<u8>) -> Read {
    if buf.last() == Some(&b'\r') {
        buf.pop();
    }
    match String::from_utf8(std::mem::take(buf)) {
        Ok(line) => Read::Line(line),
        Err(_) => Read::Dropped(LineProblem::NotUtf8),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::{SinkExt, StreamExt};
    use std::sync::Mutex;

    fn collect(input: &'static [u8], max: usize) -> (Vec<String>, Vec<LineProblem>) {
        let said = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&said);
        let problems: Problems = Arc::new(move |p| sink.lock().unwrap().push(p));
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let lines: Vec<String> = rt.block_on(async {
            incoming(input, max, problems)
                .map(|line| line.unwrap())
                .collect()
                .await
        });
        let problems = said.lock().unwrap().clone();
        (lines, problems)
    }

    #[test]
    fn lines_come_whole_and_the_last_needs_no_newline() {
        let (lines, problems) = collect(b"{\"a\":1}\r\n\n{\"b\":2}\n{\"c\":3}", 64);
        assert_eq!(lines, ["{\"a\":1}", "", "{\"b\":2}", "{\"c\":3}"]);
        assert!(problems.is_empty());
    }

    #[test]
    fn a_line_over_the_bound_is_dropped_and_said_and_the_next_one_still_comes() {
        let (lines, problems) = collect(b"0123456789abcdef\nok\n0123456789abcdef", 8);
        assert_eq!(lines, ["ok"]);
        assert_eq!(problems, [LineProblem::TooLong, LineProblem::TooLong]);
    }

    #[test]
    fn a_line_of_exactly_the_bound_passes() {
        let (lines, problems) = collect(b"12345678\n", 8);
        assert_eq!(lines, ["12345678"]);
        assert!(problems.is_empty());
    }

    #[test]
    fn a_line_that_is_not_utf8_is_dropped() {
        let (lines, problems) = collect(b"\xff\xfe\nok\n", 64);
        assert_eq!(lines, ["ok"]);
        assert_eq!(problems, [LineProblem::NotUtf8]);
    }

    #[test]
    fn a_line_in_many_small_reads_is_bounded_by_its_total() {
        // A pipe hands a line over in pieces: the bound counts the whole line.
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let said = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&said);
        let problems: Problems = Arc::new(move |p| sink.lock().unwrap().push(p));
        let lines: Vec<String> = rt.block_on(async {
            let (mut tx, rx) = tokio::io::duplex(4);
            tokio::spawn(async move {
                for _ in 0..10 {
                    tx.write_all(b"xxxxxxx").await.unwrap();
                }
                tx.write_all(b"\nshort\n").await.unwrap();
            });
            incoming(rx, 32, problems)
                .map(|line| line.unwrap())
                .collect()
                .await
        });
        assert_eq!(lines, ["short"]);
        assert_eq!(*said.lock().unwrap(), [LineProblem::TooLong]);
    }

    #[test]
    fn a_peer_that_never_reads_fails_the_write_within_the_wait() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build()
            .unwrap();
        let failed = rt.block_on(async {
            // A pipe of 8 bytes nobody reads.
            let (tx, _rx) = tokio::io::duplex(8);
            let mut sink = Box::pin(outgoing(tx, Duration::from_secs(30)));
            sink.send("a line longer than the pipe".to_string()).await
        });
        let error = failed.unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::TimedOut);
    }

    #[test]
    fn lines_written_end_with_a_newline() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let written = rt.block_on(async {
            let (tx, mut rx) = tokio::io::duplex(64);
            let mut sink = Box::pin(outgoing(tx, WRITE_WAIT));
            sink.send("{}".to_string()).await.unwrap();
            sink.send("[]".to_string()).await.unwrap();
            drop(sink);
            let mut out = Vec::new();
            tokio::io::AsyncReadExt::read_to_end(&mut rx, &mut out)
                .await
                .unwrap();
            out
        });
        assert_eq!(written, b"{}\n[]\n");
    }
}
