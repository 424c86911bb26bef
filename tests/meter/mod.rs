//! A global allocator that counts the bytes each thread has live, so a test can measure the
//! most memory a decoder held while it ran (tests run on their own threads, so others' work
//! does not count). Include it with `mod meter;` in a test crate that wants it.
#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Counts per thread, then defers to the system allocator.
pub struct Meter;

thread_local! {
    // Const-initialized cells of plain integers: reading them never allocates, which would
    // recurse into the allocator.
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn add(bytes: isize) {
    let _ = LIVE.try_with(|live| {
        let now = live.get() + bytes;
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

// SAFETY: every call is forwarded unchanged to `System`; only thread-local counters change.
unsafe impl GlobalAlloc for Meter {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        add(layout.size() as isize);
        // SAFETY: the caller's contract is passed on as is.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        add(layout.size() as isize);
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        add(-(layout.size() as isize));
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        add(new_size as isize - layout.size() as isize);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static METER: Meter = Meter;

/// Runs `f` and returns its result with the most bytes this thread had allocated on top of
/// what it held when `f` started (memory freed by another thread can make counts drift, so
/// only the difference counts).
pub fn peak<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let start = LIVE.with(Cell::get);
    PEAK.with(|peak| peak.set(start));
    let value = f();
    let peak = PEAK.with(Cell::get);
    (value, usize::try_from(peak - start).unwrap_or(0))
}

/// The bytes this thread holds now (allocated here and not freed).
pub fn live() -> isize {
    LIVE.with(Cell::get)
}
