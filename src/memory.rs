//! What the allocator is told at start (issue 33). glibc gives each thread that allocates an
//! arena of its own (up to eight per core) and memory freed in one arena is not reused by
//! another, so a long session's resident memory grew with every worker thread that ever
//! allocated a run's messages. Two arenas: the main thread's and one the others share (taco's
//! threads are few: the UI, two runtime workers, the log writer, short blocking tasks).
pub fn tune() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets a parameter of the allocator; called before other threads.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}
