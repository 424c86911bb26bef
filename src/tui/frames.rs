//! How long frames take to draw, kept for the whole session in fixed log-scale buckets (no
//! allocation per frame), and the process's peak RSS: the figures the `tui quit` log line
//! reports, so a long live session's cost can be read after it ends (`benches/live_session.sh`).
//! The clocks are read here and in the event loop only; views never see them.

use std::time::{Duration, Instant};

/// log2 of [`SUB`].
const SUB_BITS: u32 = 3;
/// Buckets per power of two (8: a bucket is at most 1/8 of its lower bound wide, so a
/// percentile read from it is at most 12.5 % high, and never above the largest sample).
/// Below this many µs every value has a bucket of its own.
const SUB: u64 = 1 << SUB_BITS;
/// Powers of two covered above [`SUB`] µs: up to 2^27 µs (≈ 134 s); longer draws count in
/// the last bucket (the exact maximum is kept apart).
const OCTAVES: u64 = 24;
/// How many buckets there are.
const BUCKETS: usize = (SUB + OCTAVES * SUB) as usize;

/// Draw durations in µs: counts per bucket, the exact smallest and largest.
#[derive(Debug, Clone)]
pub struct DrawTimes {
    counts: [u64; BUCKETS],
    total: u64,
    min_us: u64,
    max_us: u64,
}

impl Default for DrawTimes {
    fn default() -> Self {
        Self {
            counts: [0; BUCKETS],
            total: 0,
            min_us: u64::MAX,
            max_us: 0,
        }
    }
}

/// What a session's draws came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    /// Frames drawn.
    pub frames: u64,
    /// The median draw, µs (the upper bound of its bucket, at most the largest draw).
    pub p50_us: u64,
    /// The 99th percentile draw, µs (likewise).
    pub p99_us: u64,
    /// The longest draw, µs (exact).
    pub max_us: u64,
}

impl DrawTimes {
    /// Counts one draw.
    pub fn record(&mut self, took: Duration) {
        let us = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
        if let Some(count) = self.counts.get_mut(bucket(us)) {
            *count += 1;
        }
        self.total += 1;
        self.min_us = self.min_us.min(us);
        self.max_us = self.max_us.max(us);
    }

    /// How many draws were counted.
    pub fn count(&self) -> u64 {
        self.total
    }

    /// The draw time below or at which a share `q` (0.0–1.0) of draws fall, µs: the upper
    /// bound of the bucket holding that rank, kept within the smallest and largest draw.
    /// `None` before any draw.
    pub fn percentile_us(&self, q: f64) -> Option<u64> {
        if self.total == 0 {
            return None;
        }
        // The 1-based rank of the sample asked for: ceil(q·n), at least the first.
        let wanted = (q.clamp(0.0, 1.0) * self.total as f64).ceil() as u64;
        let wanted = wanted.clamp(1, self.total);
        let mut seen = 0;
        for (index, count) in self.counts.iter().enumerate() {
            seen += count;
            if seen >= wanted {
                return Some(upper_bound(index).clamp(self.min_us, self.max_us));
            }
        }
        Some(self.max_us)
    }

    /// Frames, p50, p99 and max; `None` before any draw.
    pub fn summary(&self) -> Option<Summary> {
        Some(Summary {
            frames: self.total,
            p50_us: self.percentile_us(0.50)?,
            p99_us: self.percentile_us(0.99)?,
            max_us: self.max_us,
        })
    }
}

/// The bucket of a draw of `us` µs.
fn bucket(us: u64) -> usize {
    if us < SUB {
        return us as usize;
    }
    // us ≥ SUB: its top SUB_BITS + 1 bits, shifted down by `octave`, lie in SUB..2·SUB.
    let octave = u64::from(63 - us.leading_zeros() - SUB_BITS);
    if octave >= OCTAVES {
        return BUCKETS - 1;
    }
    let sub = (us >> octave) - SUB;
    (SUB + octave * SUB + sub) as usize
}

/// The largest value bucket `index` holds, µs.
fn upper_bound(index: usize) -> u64 {
    let index = index as u64;
    if index < SUB {
        return index;
    }
    let octave = (index - SUB) / SUB;
    let sub = (index - SUB) % SUB;
    ((SUB + sub + 1) << octave) - 1
}

/// How long one render took: on the wall clock, and on this thread's CPU clock (`None` where
/// the system has none), so a frame made slow by other processes taking the CPU can be told
/// from one that did more work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Took {
    /// Wall-clock time.
    pub wall: Duration,
    /// CPU time of the thread that ran it.
    pub cpu: Option<Duration>,
}

impl Took {
    /// Nothing measured yet.
    pub const ZERO: Took = Took {
        wall: Duration::ZERO,
        cpu: None,
    };
}

/// What one draw took: the app's render, and the wait to hand the frame on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Drawn {
    /// The app's render into the frame's buffer.
    pub render: Took,
    /// Waiting to hand the frame to the writer thread (zero where nothing is written, as in
    /// tests, and where the terminal keeps up).
    pub wait: Duration,
}

/// What a session's frames took, kept by the event loop for the `tui quit` log line.
#[derive(Debug, Clone, Default)]
pub struct Timings {
    /// The app's render alone (what the frame budget covers), on the wall clock.
    renders: DrawTimes,
    /// The same on the thread's CPU clock.
    render_cpu: DrawTimes,
    /// The whole draw: render, the diff against the last frame, handing the frame on.
    draws: DrawTimes,
    /// The loop's waits to hand a frame on (one already queued behind the write).
    waits: DrawTimes,
    /// Frames put off because the terminal was behind.
    postponed: u64,
}

impl Timings {
    /// Counts what one draw's parts took.
    pub fn drawn(&mut self, drawn: Drawn) {
        self.renders.record(drawn.render.wall);
        if let Some(cpu) = drawn.render.cpu {
            self.render_cpu.record(cpu);
        }
        self.waits.record(drawn.wait);
    }

    /// Counts a whole draw; returns how many there have been.
    pub fn draw_took(&mut self, took: Duration) -> u64 {
        self.draws.record(took);
        self.draws.count()
    }

    /// Counts a frame put off.
    pub fn postpone(&mut self) {
        self.postponed += 1;
    }

    /// Logs the `tui quit` line: these, the terminal's writes and the frames' way to it
    /// (`written`, `shown`: the writer thread's counts), and the peak RSS.
    pub fn log(&self, lasted: Duration, written: Option<Summary>, shown: Option<Summary>) {
        let (render, cpu) = (self.renders.summary(), self.render_cpu.summary());
        let (draw, wait) = (self.draws.summary(), self.waits.summary());
        tracing::info!(
            frames = self.draws.count(),
            postponed = self.postponed,
            seconds = lasted.as_secs_f64(),
            render_p50_us = render.map(|s| s.p50_us),
            render_p99_us = render.map(|s| s.p99_us),
            render_max_us = render.map(|s| s.max_us),
            render_cpu_p50_us = cpu.map(|s| s.p50_us),
            render_cpu_p99_us = cpu.map(|s| s.p99_us),
            render_cpu_max_us = cpu.map(|s| s.max_us),
            draw_p50_us = draw.map(|s| s.p50_us),
            draw_p99_us = draw.map(|s| s.p99_us),
            draw_max_us = draw.map(|s| s.max_us),
            wait_p50_us = wait.map(|s| s.p50_us),
            wait_p99_us = wait.map(|s| s.p99_us),
            wait_max_us = wait.map(|s| s.max_us),
            write_p50_us = written.map(|s| s.p50_us),
            write_p99_us = written.map(|s| s.p99_us),
            write_max_us = written.map(|s| s.max_us),
            shown_p50_us = shown.map(|s| s.p50_us),
            shown_p99_us = shown.map(|s| s.p99_us),
            shown_max_us = shown.map(|s| s.max_us),
            peak_rss_kib = peak_rss_kib(),
            "tui quit"
        );
    }
}

/// Runs `work`, timing it on both clocks.
pub fn timed(work: impl FnOnce()) -> Took {
    let (cpu_start, start) = (thread_cpu(), Instant::now());
    work();
    let wall = start.elapsed();
    let cpu = thread_cpu()
        .zip(cpu_start)
        .map(|(end, start)| end.saturating_sub(start));
    Took { wall, cpu }
}

/// CPU time used by the calling thread; `None` where the system does not say.
fn thread_cpu() -> Option<Duration> {
    #[cfg(target_os = "linux")]
    {
        let mut now = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // libc's, not rustix's: rustix finds the vDSO itself and faults where it is not
        // mapped as the kernel maps it (under valgrind, which `benches/layout_profile.sh` uses).
        // SAFETY: clock_gettime writes one timespec, which `now` is.
        if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) } != 0 {
            return None;
        }
        let secs = u64::try_from(now.tv_sec).ok()?;
        let nanos = u32::try_from(now.tv_nsec).ok()?;
        Some(Duration::new(secs, nanos))
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// The process's peak resident memory in KiB (`VmHWM` in `/proc/self/status`); `None` where
/// the system does not say (not Linux, or the file could not be read).
pub fn peak_rss_kib() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        use std::io::Read as _;
        // The file is a few KiB; a bound all the same.
        let mut text = String::new();
        std::fs::File::open("/proc/self/status")
            .ok()?
            .take(64 * 1024)
            .read_to_string(&mut text)
            .ok()?;
        vm_hwm_kib(&text)
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// `VmHWM` of a `/proc/PID/status` text, in KiB.
fn vm_hwm_kib(status: &str) -> Option<u64> {
    let line = status.lines().find_map(|l| l.strip_prefix("VmHWM:"))?;
    let mut words = line.split_whitespace();
    let value = words.next()?.parse().ok()?;
    (words.next()? == "kB").then_some(value)
}

#[cfg(test)]
mod tests;
