//! Highlighted blocks kept by their text, so a block is highlighted once however often it
//! is drawn, and a growing block (a streamed answer) only has its new lines highlighted.
//!
//! Inside [`in_background`] (the TUI's chat layout) no regex runs on the calling thread: a
//! lookup returns what the cache holds, posts the rest to one highlighter thread, and
//! [`take_deferred`] says so; the next frame finds the colours in. The ~0.15 ms-a-line regex
//! work of a fast stream or of a long block shown at once thus never lands in a frame. The
//! worker takes a block's grammar state out of the cache and highlights without the lock,
//! a chunk at a time, so a frame's lookup never waits on it for more than a copy.

use std::cell::Cell;
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, PoisonError};

use super::engine::{Grammar, Lines};
use super::{Highlighted, Runs};

/// Blocks kept; the least recently used goes first. Each holds at most its grammar's cap
/// of text (`MAX_BYTES`, `MAX_JSON_BYTES`) and its runs.
const ENTRIES: usize = 64;
/// Text kept over all blocks (their runs take a few times more), so many large JSON
/// payloads viewed one after another cannot pile up.
const BYTES: usize = 1024 * 1024;
/// Bytes of complete lines the worker highlights between two looks at the cache.
const CHUNK: usize = 1024;

/// One block's highlighted prefix.
struct Entry {
    /// Tells the entry apart after the lock was let go (indices move on eviction).
    id: u64,
    grammar: Grammar,
    /// The complete lines highlighted so far, newlines included.
    source: String,
    lines: Arc<Vec<Runs>>,
    /// The state after `source`; `None` once the block reached its cap, or while the worker
    /// has it (`busy`).
    state: Option<Lines>,
    /// The worker is extending this entry.
    busy: bool,
    /// The last unfinished line seen after `source`, and its runs.
    tail: Option<(String, Arc<Runs>)>,
    used: u64,
}

struct Cache {
    entries: Vec<Entry>,
    clock: u64,
}

static CACHE: Mutex<Cache> = Mutex::new(Cache {
    entries: Vec::new(),
    clock: 0,
});

/// Blocks waiting for the worker, newest last; one per block (a longer text replaces its
/// prefix), at most [`ENTRIES`].
struct Queue {
    jobs: VecDeque<(Grammar, String)>,
    worker: Worker,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Worker {
    NotStarted,
    Running,
    /// It could not be started: lookups highlight on their own thread.
    Failed,
}

static QUEUE: Mutex<Queue> = Mutex::new(Queue {
    jobs: VecDeque::new(),
    worker: Worker::NotStarted,
});
static POSTED: Condvar = Condvar::new();

thread_local! {
    /// New highlighting on this thread goes to the worker (inside [`in_background`]).
    /// Per thread, so the UI loop's setting never reaches another.
    static BACKGROUND: Cell<bool> = const { Cell::new(false) };
    /// Some code was left plain (its colours are on the way) since the last
    /// [`take_deferred`].
    static DEFERRED: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` with new highlighting on this thread left to the worker when `on`; the setting
/// before is restored after.
pub(super) fn in_background<R>(on: bool, f: impl FnOnce() -> R) -> R {
    let before = BACKGROUND.replace(on);
    let out = f();
    BACKGROUND.set(before);
    out
}

/// Whether code was left plain for the worker since the last call (and clears it).
pub(super) fn take_deferred() -> bool {
    DEFERRED.replace(false)
}

/// Notes a deferral again (a caller that took it to decide something passes it on).
pub(super) fn defer() {
    DEFERRED.set(true);
}

fn lock_cache() -> std::sync::MutexGuard<'static, Cache> {
    CACHE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `code` highlighted with `grammar`, continuing the longest cached prefix of it; in the
/// background, what is cached now, the rest posted to the worker.
pub(super) fn highlight(grammar: Grammar, code: &str) -> Highlighted {
    if BACKGROUND.get() {
        let mut cache = lock_cache();
        let found = cache.find(grammar, code, true);
        let (out, done) = match found {
            Some(i) => {
                let entry = &mut cache.entries[i];
                (entry.cached(code), entry.done(code))
            }
            None => (Highlighted::plain(), false),
        };
        drop(cache);
        if done {
            return out;
        }
        if post(grammar, code) {
            DEFERRED.set(true);
            return out;
        }
        // No worker: colour it here, as outside the background.
    }
    highlight_now(grammar, code)
}

/// `code` highlighted on this thread.
fn highlight_now(grammar: Grammar, code: &str) -> Highlighted {
    let mut cache = lock_cache();
    let index = match cache.find(grammar, code, false) {
        Some(i) => i,
        None => cache.insert(grammar),
    };
    let entry = &mut cache.entries[index];
    entry.extend(code);
    entry.result(&code[entry.source.len()..])
}

impl Cache {
    /// The entry holding the longest prefix of `code` (marked used); one the worker is
    /// extending only when `busy_too`.
    fn find(&mut self, grammar: Grammar, code: &str, busy_too: bool) -> Option<usize> {
        self.clock += 1;
        let clock = self.clock;
        let found = self
            .entries
            .iter()
            .enumerate()
            .filter(|(_, e)| {
                (busy_too || !e.busy)
                    && e.grammar.same(&grammar)
                    && code.starts_with(e.source.as_str())
            })
            .max_by_key(|(_, e)| e.source.len())
            .map(|(i, _)| i)?;
        self.entries[found].used = clock;
        Some(found)
    }

    /// A new empty entry for `grammar`, the least recently used going first when full.
    fn insert(&mut self, grammar: Grammar) -> usize {
        while self.entries.len() >= ENTRIES
            || self.entries.iter().map(|e| e.source.len()).sum::<usize>() > BYTES
        {
            let oldest = (0..self.entries.len()).min_by_key(|&i| self.entries[i].used);
            let Some(oldest) = oldest else { break };
            self.entries.swap_remove(oldest);
        }
        self.clock += 1;
        self.entries.push(Entry {
            id: self.clock,
            grammar,
            source: String::new(),
            lines: Arc::new(Vec::new()),
            state: Some(Lines::new(grammar)),
            busy: false,
            tail: None,
            used: self.clock,
        });
        self.entries.len() - 1
    }
}

impl Entry {
    /// Highlights the complete lines of `code` past `source`, up to the cap.
    fn extend(&mut self, code: &str) {
        let Some(state) = &mut self.state else {
            return;
        };
        let rest = &code[self.source.len()..];
        let Some(last) = rest.rfind('\n') else {
            return;
        };
        let lines = Arc::make_mut(&mut self.lines);
        for line in rest[..=last].split_inclusive('\n') {
            if self.source.len() + line.len() > self.grammar.cap() {
                self.state = None;
                break;
            }
            lines.push(state.line(line.strip_suffix('\n').unwrap_or(line)));
            self.source.push_str(line);
        }
        self.tail = None;
    }

    /// The highlighted block, `tail` (what follows the complete lines) included when it is
    /// one unfinished line within the cap.
    fn result(&mut self, tail: &str) -> Highlighted {
        let lines = Arc::clone(&self.lines);
        let fits = self.source.len() + tail.len() <= self.grammar.cap();
        let tail = match &self.state {
            Some(state) if fits && !tail.is_empty() && !tail.contains('\n') => {
                match &self.tail {
                    Some((text, runs)) if text == tail => Some(Arc::clone(runs)),
                    _ => {
                        // The line may still grow: colour it from a copy of the state.
                        let runs = Arc::new(state.clone().line(tail));
                        self.tail = Some((tail.to_string(), Arc::clone(&runs)));
                        Some(runs)
                    }
                }
            }
            _ => None,
        };
        Highlighted { lines, tail }
    }

    /// What is cached of `code`: its highlighted lines, and of an unfinished last line the
    /// runs of the part seen before (a streamed line keeps its colours as it grows; the
    /// rest is plain until the worker catches up).
    fn cached(&self, code: &str) -> Highlighted {
        let rest = &code[self.source.len()..];
        // The line after the coloured ones may have been seen unfinished: its start keeps
        // those colours.
        let tail = match &self.tail {
            Some((text, runs)) if rest.starts_with(text.as_str()) => Some(Arc::clone(runs)),
            _ => None,
        };
        Highlighted {
            lines: Arc::clone(&self.lines),
            tail,
        }
    }

    /// Whether nothing of `code` is left to highlight: every line in, or the cap reached.
    fn done(&self, code: &str) -> bool {
        let rest = &code[self.source.len()..];
        if self.state.is_none() && !self.busy {
            return true;
        }
        if rest.contains('\n') {
            return self.source.len() + rest.find('\n').map_or(0, |n| n + 1) > self.grammar.cap();
        }
        rest.is_empty()
            || self.source.len() + rest.len() > self.grammar.cap()
            || self.tail.as_ref().is_some_and(|(text, _)| text == rest)
    }
}

impl Highlighted {
    /// Nothing coloured yet.
    fn plain() -> Self {
        Self {
            lines: Arc::new(Vec::new()),
            tail: None,
        }
    }
}

/// Posts `code` to the worker (starting it on first use); `false` when there is none.
fn post(grammar: Grammar, code: &str) -> bool {
    let mut queue = QUEUE.lock().unwrap_or_else(PoisonError::into_inner);
    if queue.worker == Worker::NotStarted {
        let started = std::thread::Builder::new()
            .name("taco-highlight".into())
            .spawn(work);
        queue.worker = if started.is_ok() {
            Worker::Running
        } else {
            Worker::Failed
        };
    }
    if queue.worker == Worker::Failed {
        return false;
    }
    // The worker never reads past the cap (one byte more tells it a line crosses it).
    let code = &code[..code.floor_char_boundary(grammar.cap() + 1)];
    let same = queue.jobs.iter_mut().find(|(g, text)| {
        g.same(&grammar) && (code.starts_with(text.as_str()) || text.starts_with(code))
    });
    match same {
        Some((_, text)) if text.as_str() == code || text.starts_with(code) => {}
        Some((_, text)) => {
            text.clear();
            text.push_str(code);
        }
        None => {
            if queue.jobs.len() >= ENTRIES {
                queue.jobs.pop_front();
            }
            queue.jobs.push_back((grammar, code.to_string()));
        }
    }
    POSTED.notify_one();
    true
}

/// The worker: takes jobs as they come, for the life of the process (it holds nothing a
/// shutdown must wait for).
fn work() {
    yield_to_frames();
    loop {
        let job = {
            let mut queue = QUEUE.lock().unwrap_or_else(PoisonError::into_inner);
            loop {
                if let Some(job) = queue.jobs.pop_front() {
                    break job;
                }
                queue = POSTED.wait(queue).unwrap_or_else(PoisonError::into_inner);
            }
        };
        let (grammar, code) = job;
        let stepped =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(
                || {
                    while step(grammar, &code) {}
                },
            ));
        if stepped.is_err() {
            // A grammar that panics leaves its block plain, not waiting for ever.
            for entry in &mut lock_cache().entries {
                entry.busy = false;
            }
        }
    }
}

/// Lowers this thread's scheduling weight, so that on a busy machine the UI thread's frames
/// go first and colours wait instead (on 2 cores, a live session's render p99 was 0.9 ms of
/// CPU but 2.3 ms on the wall clock, preempted by this thread; at nice 10, 0.9 ms on both).
fn yield_to_frames() {
    #[cfg(target_os = "linux")]
    // SAFETY: setpriority on this thread's own id only changes its nice value; a failure
    // leaves it as it was.
    unsafe {
        let tid = libc::gettid();
        libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, 10);
    }
}

/// One chunk of `code`'s highlighting with the cache unlocked; `false` when it is done.
fn step(grammar: Grammar, code: &str) -> bool {
    // Take the state and the next lines out.
    let (id, mut state, from) = {
        let mut cache = lock_cache();
        let index = match cache.find(grammar, code, false) {
            Some(i) => i,
            None => cache.insert(grammar),
        };
        let entry = &mut cache.entries[index];
        if entry.done(code) {
            return false;
        }
        let Some(state) = entry.state.take() else {
            return false;
        };
        entry.busy = true;
        (entry.id, state, entry.source.len())
    };
    let cap = grammar.cap();
    let rest = &code[from..];
    let mut source = String::new();
    let mut lines = Vec::new();
    let mut capped = false;
    let complete = rest.rfind('\n').map_or("", |last| &rest[..=last]);
    for line in complete.split_inclusive('\n') {
        if from + source.len() + line.len() > cap {
            capped = true;
            break;
        }
        lines.push(state.line(line.strip_suffix('\n').unwrap_or(line)));
        source.push_str(line);
        if source.len() >= CHUNK {
            break;
        }
    }
    let tail = &rest[source.len()..];
    let tail = (!capped
        && !tail.is_empty()
        && !tail.contains('\n')
        && from + source.len() + tail.len() <= cap)
        .then(|| (tail.to_string(), Arc::new(state.clone().line(tail))));
    // Put them back, if the entry is still there.
    let mut cache = lock_cache();
    let Some(entry) = cache.entries.iter_mut().find(|e| e.id == id) else {
        return false;
    };
    entry.busy = false;
    entry.state = (!capped).then_some(state);
    if !source.is_empty() {
        Arc::make_mut(&mut entry.lines).extend(lines);
        entry.source.push_str(&source);
        entry.tail = None;
    }
    if tail.is_some() {
        entry.tail = tail;
    }
    !entry.done(code)
}

/// Jobs waiting for the worker, and the most text one of them holds.
#[cfg(test)]
pub(super) fn queued() -> (usize, usize) {
    let queue = QUEUE.lock().unwrap_or_else(PoisonError::into_inner);
    let longest = queue.jobs.iter().map(|(_, code)| code.len()).max();
    (queue.jobs.len(), longest.unwrap_or(0))
}

/// Blocks and bytes of text the cache holds now.
#[cfg(test)]
pub(super) fn held() -> (usize, usize) {
    let cache = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
    let bytes = cache.entries.iter().map(|e| e.source.len()).sum();
    (cache.entries.len(), bytes)
}
