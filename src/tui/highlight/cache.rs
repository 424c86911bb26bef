//! Highlighted blocks kept by their text, so a block is highlighted once however often it
//! is drawn, and a growing block (a streamed answer) only has its new lines highlighted.
//!
//! Inside [`budgeted`], new highlighting stops once a byte budget is spent: the lines past it
//! come back plain and [`take_deferred`] says so, and the next call (the next frame) goes on
//! from there. A fast stream (a few code lines a frame) or a long block shown at once thus
//! costs a frame a bounded slice of the ~0.15 ms-a-line regex work instead of all of it.

use std::cell::Cell;
use std::sync::{Arc, Mutex, PoisonError};

use super::engine::{Grammar, Lines};
use super::{Highlighted, Runs};

/// Blocks kept; the least recently used goes first. Each holds at most its grammar's cap
/// of text (`MAX_BYTES`, `MAX_JSON_BYTES`) and its runs.
const ENTRIES: usize = 64;
/// Text kept over all blocks (their runs take a few times more), so many large JSON
/// payloads viewed one after another cannot pile up.
const BYTES: usize = 1024 * 1024;

/// One block's highlighted prefix.
struct Entry {
    grammar: Grammar,
    /// The complete lines highlighted so far, newlines included.
    source: String,
    lines: Arc<Vec<Runs>>,
    /// The state after `source`; `None` once the block reached its cap.
    state: Option<Lines>,
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

thread_local! {
    /// Bytes of new code this thread may still highlight (`None`: no limit, outside
    /// [`budgeted`]). Per thread, so a budget set by the UI loop never reaches another.
    static BUDGET: Cell<Option<usize>> = const { Cell::new(None) };
    /// Some code was left plain for want of budget since the last [`take_deferred`].
    static DEFERRED: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` with at most `bytes` of new code highlighted on this thread (`None`: no limit);
/// the budget in force before is restored after.
pub(super) fn budgeted<R>(bytes: Option<usize>, f: impl FnOnce() -> R) -> R {
    let before = BUDGET.replace(bytes);
    let out = f();
    BUDGET.set(before);
    out
}

/// Whether code was left plain for want of budget since the last call (and clears it).
pub(super) fn take_deferred() -> bool {
    DEFERRED.replace(false)
}

/// Notes a deferral again (a caller that took it to decide something passes it on).
pub(super) fn defer() {
    DEFERRED.set(true);
}

/// Takes `len` bytes from the budget; `false` (and the deferral noted) when none is left. A
/// line is taken whole once any budget is left, so every call makes progress.
fn spend(len: usize) -> bool {
    match BUDGET.get() {
        None => true,
        Some(0) => {
            DEFERRED.set(true);
            false
        }
        Some(left) => {
            BUDGET.set(Some(left.saturating_sub(len.max(1))));
            true
        }
    }
}

/// `code` highlighted with `grammar`, continuing the longest cached prefix of it.
pub(super) fn highlight(grammar: Grammar, code: &str) -> Highlighted {
    let mut cache = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
    cache.clock += 1;
    let clock = cache.clock;
    let found = cache
        .entries
        .iter()
        .enumerate()
        .filter(|(_, e)| e.grammar.same(&grammar) && code.starts_with(e.source.as_str()))
        .max_by_key(|(_, e)| e.source.len())
        .map(|(i, _)| i);
    let index = match found {
        Some(i) => i,
        None => {
            while cache.entries.len() >= ENTRIES
                || cache.entries.iter().map(|e| e.source.len()).sum::<usize>() > BYTES
            {
                let oldest = (0..cache.entries.len()).min_by_key(|&i| cache.entries[i].used);
                let Some(oldest) = oldest else { break };
                cache.entries.swap_remove(oldest);
            }
            cache.entries.push(Entry {
                grammar,
                source: String::new(),
                lines: Arc::new(Vec::new()),
                state: Some(Lines::new(grammar)),
                tail: None,
                used: clock,
            });
            cache.entries.len() - 1
        }
    };
    let entry = &mut cache.entries[index];
    entry.used = clock;
    entry.extend(code);
    entry.result(&code[entry.source.len()..])
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
            if !spend(line.len()) {
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
                    _ if !spend(tail.len()) => None,
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
}

/// Blocks and bytes of text the cache holds now.
#[cfg(test)]
pub(super) fn held() -> (usize, usize) {
    let cache = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
    let bytes = cache.entries.iter().map(|e| e.source.len()).sum();
    (cache.entries.len(), bytes)
}
