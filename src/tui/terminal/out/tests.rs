use std::sync::mpsc::{Receiver, Sender, channel};
use std::thread;

use super::*;

/// Long enough for anything that should happen to happen.
const PATIENCE: Duration = Duration::from_secs(10);

/// A terminal the test drives: keeps each write it is given, announces it, and (when gated)
/// takes each write only once the test says go; or fails every write.
#[derive(Clone, Default)]
struct Term {
    sink: Arc<Mutex<Vec<Vec<u8>>>>,
    go: Option<Arc<Mutex<Receiver<()>>>>,
    wrote: Option<Sender<()>>,
    fails: bool,
}

impl Term {
    fn gated() -> (Self, Sender<()>) {
        let (go, gate) = channel();
        let term = Self {
            go: Some(Arc::new(Mutex::new(gate))),
            ..Self::default()
        };
        (term, go)
    }

    fn announced() -> (Self, Receiver<()>) {
        let (wrote, writes) = channel();
        let term = Self {
            wrote: Some(wrote),
            ..Self::default()
        };
        (term, writes)
    }

    fn writes(&self) -> Vec<Vec<u8>> {
        self.sink.lock().unwrap().clone()
    }
}

impl Write for Term {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.fails {
            return Err(io::Error::other("the terminal is gone"));
        }
        if let Some(go) = &self.go {
            go.lock().unwrap().recv().unwrap();
        }
        self.sink.lock().unwrap().push(buf.to_vec());
        if let Some(wrote) = &self.wrote {
            wrote.send(()).unwrap();
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A writer thread over `term` in `generation`, and its timings.
fn open(term: &Term, generation: &'static Generation) -> (Out, Flushing) {
    let flushing = Flushing::default();
    let out = Out::new(term.clone(), flushing.clone(), generation).unwrap();
    (out, flushing)
}

fn frame(out: &mut Out, bytes: &[u8]) -> io::Result<()> {
    out.write_all(bytes)?;
    out.flush()
}

#[test]
fn each_frame_reaches_the_terminal_whole_in_one_write_and_in_order() {
    static GENERATION: Generation = Generation::new();
    let term = Term::default();
    let (mut out, flushing) = open(&term, &GENERATION);
    out.write_all(b"\x1b[1;1H").unwrap();
    out.write_all(b"first").unwrap();
    out.flush().unwrap();
    // Nothing built: nothing written.
    out.flush().unwrap();
    frame(&mut out, b"second").unwrap();
    assert!(out.finish(PATIENCE));
    assert_eq!(
        term.writes(),
        [b"\x1b[1;1Hfirst".to_vec(), b"second".to_vec()]
    );
    assert_eq!(flushing.written().map(|s| s.frames), Some(2));
}

#[test]
fn a_frame_is_handed_on_while_the_last_is_still_being_written_and_at_most_one_waits() {
    static GENERATION: Generation = Generation::new();
    let (term, go) = Term::gated();
    let (mut out, _) = open(&term, &GENERATION);
    let (handed, two) = channel();
    let (third, three) = channel();
    let loop_side = thread::spawn(move || {
        frame(&mut out, b"one").unwrap();
        frame(&mut out, b"two").unwrap();
        handed.send(()).unwrap();
        frame(&mut out, b"three").unwrap();
        third.send(()).unwrap();
        out
    });
    two.recv_timeout(PATIENCE)
        .expect("two frames handed on while the first write waits on the terminal");
    assert!(term.writes().is_empty(), "{:?}", term.writes());
    // "one" is being written and "two" waits: "three" waits for "one" to be written.
    assert!(three.recv_timeout(Duration::from_millis(100)).is_err());
    go.send(()).unwrap();
    three
        .recv_timeout(PATIENCE)
        .expect("handed on once one was written");
    go.send(()).unwrap();
    go.send(()).unwrap();
    let mut out = loop_side.join().unwrap();
    assert!(out.finish(PATIENCE));
    assert_eq!(
        term.writes(),
        [b"one".to_vec(), b"two".to_vec(), b"three".to_vec()]
    );
}

#[test]
fn a_failed_write_is_reported_by_the_next_flush() {
    static GENERATION: Generation = Generation::new();
    let term = Term {
        fails: true,
        ..Term::default()
    };
    let (mut out, _) = open(&term, &GENERATION);
    frame(&mut out, b"one").unwrap();
    out.ended.recv_timeout(PATIENCE).unwrap();
    assert!(
        !out.behind(),
        "broken, not behind: the next frame is drawn to find out"
    );
    let e = frame(&mut out, b"two").unwrap_err();
    assert_eq!(e.to_string(), "the terminal is gone");
    let e = frame(&mut out, b"three").unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::BrokenPipe, "{e}");
    assert!(!out.behind());
}

#[test]
fn frames_queued_when_their_generation_ends_are_dropped() {
    static GENERATION: Generation = Generation::new();
    let term = Term::default();
    let (mut out, _) = open(&term, &GENERATION);
    let ended = GENERATION.end();
    frame(&mut out, b"queued before the end").unwrap();
    drop(ended);
    frame(&mut out, b"made after it").unwrap();
    assert!(out.finish(PATIENCE));
    assert!(term.writes().is_empty(), "{:?}", term.writes());
}

#[test]
fn what_the_ender_writes_comes_after_every_frame_written_and_before_none() {
    static GENERATION: Generation = Generation::new();
    let (term, writes) = Term::announced();
    let (mut out, _) = open(&term, &GENERATION);
    frame(&mut out, b"frame").unwrap();
    writes.recv_timeout(PATIENCE).unwrap();
    {
        let _ended = GENERATION.end();
        term.sink.lock().unwrap().push(b"leave".to_vec());
    }
    frame(&mut out, b"late frame").unwrap();
    assert!(out.finish(PATIENCE));
    assert_eq!(term.writes(), [b"frame".to_vec(), b"leave".to_vec()]);
}

#[test]
fn finishing_waits_a_bounded_time_for_a_terminal_that_stopped_reading() {
    static GENERATION: Generation = Generation::new();
    let (term, go) = Term::gated();
    let (mut out, _) = open(&term, &GENERATION);
    frame(&mut out, b"stuck").unwrap();
    frame(&mut out, b"behind it").unwrap();
    // The queue is full: the last frame cannot even be handed on.
    out.write_all(b"last").unwrap();
    assert!(!out.finish(Duration::from_millis(50)));
    // Its generation is over: "behind it" will not be written when the terminal wakes.
    assert_eq!(GENERATION.current(), 1);
    go.send(()).unwrap();
}

#[test]
fn a_huge_frame_goes_in_parts_of_a_bounded_size() {
    static GENERATION: Generation = Generation::new();
    let term = Term::default();
    let (mut out, _) = open(&term, &GENERATION);
    let huge = vec![b'x'; FRAME_BUFFER * 3 + 5];
    frame(&mut out, &huge).unwrap();
    assert!(out.finish(PATIENCE));
    let writes = term.writes();
    assert_eq!(writes.concat(), huge);
    assert_eq!(writes.len(), 4);
    assert!(writes.iter().all(|w| w.len() <= FRAME_BUFFER));
}

#[test]
fn a_frame_is_counted_from_the_start_of_its_draw_to_its_last_byte_once() {
    static GENERATION: Generation = Generation::new();
    let term = Term::default();
    let (mut out, flushing) = open(&term, &GENERATION);
    out.frame_started(Instant::now() - Duration::from_millis(30));
    frame(&mut out, &vec![b'x'; FRAME_BUFFER * 2 + 1]).unwrap();
    // A frame of exactly two parts: its start travels on an empty last one.
    out.frame_started(Instant::now() - Duration::from_millis(30));
    frame(&mut out, &vec![b'y'; FRAME_BUFFER * 2]).unwrap();
    // A frame nobody timed.
    frame(&mut out, b"z").unwrap();
    assert!(out.finish(PATIENCE));
    assert_eq!(term.writes().concat().len(), FRAME_BUFFER * 4 + 2);
    let shown = flushing.shown().unwrap();
    assert_eq!(shown.frames, 2, "{shown:?}");
    assert!(shown.max_us >= 30_000, "{shown:?}");
    assert!(flushing.written().unwrap().frames >= 6);
}

#[test]
fn the_terminal_is_behind_while_a_frame_waits_behind_the_one_being_written() {
    static GENERATION: Generation = Generation::new();
    let (term, go) = Term::gated();
    let (mut out, _) = open(&term, &GENERATION);
    assert!(!out.behind());
    frame(&mut out, b"one").unwrap();
    assert!(!out.behind(), "one frame in flight");
    frame(&mut out, b"two").unwrap();
    assert!(out.behind(), "one being written, one waiting");
    go.send(()).unwrap();
    go.send(()).unwrap();
    assert!(out.finish(PATIENCE));
    assert!(!out.behind());
}
