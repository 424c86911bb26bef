//! Where frames go: stdout behind a buffer that holds a whole frame, timing each write to the
//! terminal (issue 33: how much of a draw is the terminal's to decide).
//!
//! stdout's own buffer is 1 KiB (a line writer), so a frame of many changes went out in many
//! writes, each a wake-up of the terminal (tmux, ssh); this one holds a whole frame and writes
//! it at the frame's end.

use std::io::{self, BufWriter, Stdout, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Bytes a frame may buffer before a write: a full 200×60 repaint with colours fits.
const FRAME_BUFFER: usize = 256 * 1024;

/// stdout (or, in tests, any writer) with a frame's buffer; counts the time its flushes (the
/// writes to the terminal) take in a [`Flushing`] its owner keeps (the terminal holds the
/// writer out of reach).
pub struct Out<W: Write = Stdout> {
    inner: BufWriter<W>,
    flushing: Flushing,
}

/// Nanoseconds an [`Out`]'s flushes took, shared with whoever reads them.
#[derive(Debug, Clone, Default)]
pub struct Flushing(Arc<AtomicU64>);

impl Flushing {
    /// The time flushes took since the last call; starts the count again.
    pub fn take(&self) -> Duration {
        Duration::from_nanos(self.0.swap(0, Ordering::Relaxed))
    }
}

impl<W: Write> Out<W> {
    /// `writer` behind a frame's buffer, counting into `flushing`.
    pub fn new(writer: W, flushing: Flushing) -> Self {
        Self {
            inner: BufWriter::with_capacity(FRAME_BUFFER, writer),
            flushing,
        }
    }
}

impl<W: Write> Write for Out<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        // Not timed: almost always a copy into the buffer (a frame over 256 KiB writes through).
        self.inner.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        let start = Instant::now();
        let flushed = self.inner.flush();
        let nanos = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.flushing.0.fetch_add(nanos, Ordering::Relaxed);
        flushed
    }
}
