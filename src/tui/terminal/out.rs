//! Where frames go: a frame is built in memory and handed whole to a writer thread, which
//! writes it to the terminal (issue 33: the draw's p99 was the terminal's pace of reading).
//!
//! The event loop no longer waits on `write(2)`: it waits only when a frame is already queued
//! behind the one being written (at most one is), which is the terminal falling behind: the
//! loop reports that wait (`wait_*`), and asks [`Out::behind`] first so a frame due then is put
//! off instead. The writer thread times each write to the terminal apart. Frames are written in order, one write each, only in the [`Generation`]
//! they were made in: once the terminal is given back, frames still queued are dropped rather
//! than written over the shell's screen.

use std::io::{self, Write};
use std::mem;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TryRecvError, TrySendError};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::tui::frames::{DrawTimes, Summary};

/// Bytes a frame may gather before it is handed on: a full 200×60 repaint with colours fits;
/// a bigger frame goes in parts (still inside its synchronized update).
const FRAME_BUFFER: usize = 256 * 1024;
/// A buffer's starting capacity (most frames are a few KiB).
const START_CAPACITY: usize = 16 * 1024;
/// Buffers kept for reuse: the one being filled, one queued, one being written.
const SPARES: usize = 2;

/// The terminal's frame generation: a frame is written only in the generation it was made in.
/// Ending one (giving the terminal back) drops what is queued, and is serialized with the
/// writes, so nothing of a frame lands after what the ender writes under its lock.
#[derive(Debug, Default)]
pub struct Generation {
    /// Held by the writer for each write, and by [`Generation::end`]'s caller.
    writing: Mutex<()>,
    /// The current generation, read under `writing` before each write.
    now: AtomicU64,
}

impl Generation {
    /// Generation zero.
    pub const fn new() -> Self {
        Self {
            writing: Mutex::new(()),
            now: AtomicU64::new(0),
        }
    }

    fn lock(&self) -> MutexGuard<'_, ()> {
        // A writer that panicked mid-write leaves nothing to repair.
        self.writing.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The current generation.
    fn current(&self) -> u64 {
        self.now.load(Ordering::SeqCst)
    }

    /// Ends the current generation once the write in progress (if any) is done; no frame of
    /// it is written after this returns. The lock is held while the caller keeps the guard
    /// (for what it writes last).
    pub fn end(&self) -> MutexGuard<'_, ()> {
        let writing = self.lock();
        self.now.fetch_add(1, Ordering::SeqCst);
        writing
    }

    /// Ends generation `mine` if it is still the current one, without waiting for a write in
    /// progress (one that may never end): no later frame of it is written.
    fn end_if(&self, mine: u64) {
        let _ = self.now.compare_exchange(
            mine,
            mine.wrapping_add(1),
            Ordering::SeqCst,
            Ordering::SeqCst,
        );
    }
}

/// How long writing frames took: the loop's waits to hand a frame on, each frame's write to
/// the terminal (in the writer thread), and each frame's whole way from the start of its draw
/// to its last byte written; shared with whoever reads them.
#[derive(Debug, Clone, Default)]
pub struct Flushing {
    waited: Arc<AtomicU64>,
    written: Arc<Mutex<DrawTimes>>,
    shown: Arc<Mutex<DrawTimes>>,
}

impl Flushing {
    /// The time the loop waited to hand frames on since the last call; starts the count again.
    pub fn take(&self) -> Duration {
        Duration::from_nanos(self.waited.swap(0, Ordering::Relaxed))
    }

    /// What the writes to the terminal took, frame by frame; `None` before any.
    pub fn written(&self) -> Option<Summary> {
        summary(&self.written)
    }

    /// How long frames took from the start of their draw to their last byte written; `None`
    /// before any.
    pub fn shown(&self) -> Option<Summary> {
        summary(&self.shown)
    }

    fn wait(&self, took: Duration) {
        let nanos = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
        self.waited.fetch_add(nanos, Ordering::Relaxed);
    }

    fn wrote(&self, took: Duration, started: Option<Instant>) {
        record(&self.written, took);
        if let Some(started) = started {
            record(&self.shown, started.elapsed());
        }
    }
}

fn summary(times: &Mutex<DrawTimes>) -> Option<Summary> {
    times
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .summary()
}

fn record(times: &Mutex<DrawTimes>, took: Duration) {
    times
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .record(took);
}

/// A frame's bytes (or a part of a huge one), and when its draw started (on its last part).
struct Frame {
    bytes: Vec<u8>,
    started: Option<Instant>,
}

/// The terminal (or, in tests, any writer) behind a writer thread: bytes gather in memory
/// and each flush hands them on as one write.
pub struct Out {
    /// The frame being built.
    frame: Vec<u8>,
    /// When its draw started, if the drawer said.
    started: Option<Instant>,
    /// Frames to the writer; `None` once finished.
    frames: Option<SyncSender<Frame>>,
    /// Buffers the writer is done with.
    spares: Receiver<Vec<u8>>,
    /// The writer's end: a message (or a hang-up) when it stops.
    ended: Receiver<()>,
    /// Why the writer stopped, until a flush reports it.
    failed: Arc<Mutex<Option<io::Error>>>,
    /// Frames handed on and not yet written (or dropped).
    in_flight: Arc<AtomicUsize>,
    thread: Option<JoinHandle<()>>,
    flushing: Flushing,
    generation: &'static Generation,
    mine: u64,
}

impl Out {
    /// `writer` behind a writer thread, writing in `generation`'s current generation and
    /// counting into `flushing`.
    pub fn new<W: Write + Send + 'static>(
        writer: W,
        flushing: Flushing,
        generation: &'static Generation,
    ) -> io::Result<Self> {
        let (frames, queued) = mpsc::sync_channel::<Frame>(1);
        let (give_back, spares) = mpsc::sync_channel(SPARES);
        let (end, ended) = mpsc::sync_channel(1);
        let failed = Arc::new(Mutex::new(None));
        let in_flight = Arc::new(AtomicUsize::new(0));
        let mine = generation.current();
        let writer_side = Writer {
            writer,
            queued,
            give_back,
            failed: Arc::clone(&failed),
            in_flight: Arc::clone(&in_flight),
            flushing: flushing.clone(),
            generation,
            mine,
        };
        let thread = std::thread::Builder::new()
            .name("taco-frames".into())
            .spawn(move || {
                writer_side.run();
                let _ = end.send(());
            })?;
        Ok(Self {
            frame: Vec::with_capacity(START_CAPACITY),
            started: None,
            frames: Some(frames),
            spares,
            ended,
            failed,
            in_flight,
            thread: Some(thread),
            flushing,
            generation,
            mine,
        })
    }

    /// Whether the terminal is behind: a frame is being written and another waits, so one
    /// more would wait to be handed on.
    pub fn behind(&self) -> bool {
        self.in_flight.load(Ordering::SeqCst) >= 2
    }

    /// Says a frame's draw starts `at` (its time to the terminal is counted from there).
    pub fn frame_started(&mut self, at: Instant) {
        self.started = Some(at);
    }

    /// Hands on what is buffered and waits up to `bound` for the writer to write it all and
    /// stop. Past the bound the rest is dropped (its generation ended) and the thread left to
    /// its write; says whether everything was written in time.
    pub fn finish(&mut self, bound: Duration) -> bool {
        let deadline = Instant::now() + bound;
        // Not `hand_on`: a terminal that stopped reading keeps the queue full for good.
        if let Some(frames) = self.frames.take()
            && !self.frame.is_empty()
        {
            let mut last = Frame {
                bytes: mem::take(&mut self.frame),
                started: self.started.take(),
            };
            loop {
                match frames.try_send(last) {
                    Ok(()) | Err(TrySendError::Disconnected(_)) => break,
                    Err(TrySendError::Full(again)) if Instant::now() < deadline => {
                        last = again;
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    Err(TrySendError::Full(_)) => break,
                }
            }
        }
        // The writer ends when its queue is closed (above) and empty.
        let left = deadline.saturating_duration_since(Instant::now());
        let done = match self.ended.recv_timeout(left) {
            Ok(()) | Err(RecvTimeoutError::Disconnected) => true,
            Err(RecvTimeoutError::Timeout) => false,
        };
        if done {
            if let Some(thread) = self.thread.take() {
                let _ = thread.join();
            }
        } else {
            self.generation.end_if(self.mine);
            self.thread = None;
        }
        done
    }

    /// Gives the writer the frame built so far (`whole`: all of it, not a part of a huge one),
    /// waiting while one is already queued.
    fn hand_on(&mut self, whole: bool) -> io::Result<()> {
        if let Some(e) = self
            .failed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            return Err(e);
        }
        // An empty frame is handed on only to carry its start (a huge frame's parts took it all).
        if self.frame.is_empty() && !(whole && self.started.is_some()) {
            return Ok(());
        }
        let Some(frames) = &self.frames else {
            return Err(stopped());
        };
        let next = match self.spares.try_recv() {
            Ok(spare) => spare,
            Err(TryRecvError::Empty | TryRecvError::Disconnected) => {
                Vec::with_capacity(START_CAPACITY)
            }
        };
        let frame = Frame {
            bytes: mem::replace(&mut self.frame, next),
            started: if whole { self.started.take() } else { None },
        };
        let start = Instant::now();
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        let sent = frames.send(frame);
        self.flushing.wait(start.elapsed());
        if sent.is_err() {
            one_less(&self.in_flight);
        }
        sent.map_err(|_| {
            // The writer stopped between frames: say why, if it said.
            self.failed
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take()
                .unwrap_or_else(stopped)
        })
    }
}

/// Counts a frame in flight as done (never below zero: a failed writer zeroed the count).
fn one_less(in_flight: &AtomicUsize) {
    let _ = in_flight.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
        Some(n.saturating_sub(1))
    });
}

/// The error for a writer that is gone without saying why.
fn stopped() -> io::Error {
    io::Error::new(
        io::ErrorKind::BrokenPipe,
        "the terminal's writer has stopped",
    )
}

impl Write for Out {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        // At most a buffer's worth at a time: a huge frame goes in parts, none over the bound.
        let room = FRAME_BUFFER.saturating_sub(self.frame.len()).max(1);
        let taken = buf.len().min(room);
        self.frame.extend_from_slice(&buf[..taken]);
        if self.frame.len() >= FRAME_BUFFER {
            self.hand_on(false)?;
        }
        Ok(taken)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.hand_on(true)
    }
}

impl Drop for Out {
    fn drop(&mut self) {
        if self.frames.is_some() {
            self.finish(DROP_BOUND);
        }
    }
}

/// How long a dropped [`Out`] waits for its frames to be written.
const DROP_BOUND: Duration = Duration::from_secs(1);

/// The writer thread's side.
struct Writer<W> {
    writer: W,
    queued: Receiver<Frame>,
    give_back: SyncSender<Vec<u8>>,
    failed: Arc<Mutex<Option<io::Error>>>,
    in_flight: Arc<AtomicUsize>,
    flushing: Flushing,
    generation: &'static Generation,
    mine: u64,
}

impl<W: Write> Writer<W> {
    /// Writes frames as they come until the queue closes or a write fails.
    fn run(mut self) {
        yield_on_wake();
        while let Ok(Frame {
            bytes: mut frame,
            started,
        }) = self.queued.recv()
        {
            let written = {
                let _writing = self.generation.lock();
                if self.generation.current() != self.mine {
                    // The terminal was given back: this frame is not for the screen now there.
                    Ok(())
                } else {
                    let start = Instant::now();
                    let written = self
                        .writer
                        .write_all(&frame)
                        .and_then(|()| self.writer.flush());
                    self.flushing.wrote(start.elapsed(), started);
                    written
                }
            };
            one_less(&self.in_flight);
            if let Err(e) = written {
                *self.failed.lock().unwrap_or_else(PoisonError::into_inner) = Some(e);
                // Not behind but broken: the next frame is drawn, and its flush says why.
                self.in_flight.store(0, Ordering::SeqCst);
                return;
            }
            if frame.capacity() <= FRAME_BUFFER * 2 {
                frame.clear();
                let _ = self.give_back.try_send(frame);
            }
        }
    }
}

/// Asks the scheduler not to run this thread ahead of the one that woke it (`SCHED_BATCH`):
/// a frame handed on would otherwise preempt the event loop on its own core, and the loop
/// would wait out the write it handed off. The writer runs when the loop sleeps or on
/// another core; a thread may always lower its own priority, so this needs no privilege.
fn yield_on_wake() {
    #[cfg(target_os = "linux")]
    {
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: `param` is a valid sched_param; pid 0 is the calling thread.
        let set = unsafe { libc::sched_setscheduler(0, libc::SCHED_BATCH, &param) };
        if set != 0 {
            tracing::debug!(
                "frames' writer keeps its scheduling: {}",
                io::Error::last_os_error()
            );
        }
    }
}

#[cfg(test)]
mod tests;
