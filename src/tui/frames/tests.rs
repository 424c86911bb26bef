use super::*;

fn us(n: u64) -> Duration {
    Duration::from_micros(n)
}

#[test]
fn no_draws_have_no_percentiles() {
    let times = DrawTimes::default();
    assert_eq!(times.count(), 0);
    assert_eq!(times.percentile_us(0.5), None);
    assert_eq!(times.percentile_us(0.99), None);
    assert_eq!(times.summary(), None);
}

#[test]
fn one_draw_is_every_percentile_exactly() {
    // 1,234 µs falls in a bucket 128 µs wide; the answer is still the sample itself.
    let mut times = DrawTimes::default();
    times.record(us(1_234));
    assert_eq!(times.percentile_us(0.0), Some(1_234));
    assert_eq!(times.percentile_us(0.5), Some(1_234));
    assert_eq!(times.percentile_us(1.0), Some(1_234));
    assert_eq!(
        times.summary(),
        Some(Summary {
            frames: 1,
            p50_us: 1_234,
            p99_us: 1_234,
            max_us: 1_234,
        })
    );
}

#[test]
fn small_values_are_exact() {
    let mut times = DrawTimes::default();
    for n in 0..8 {
        times.record(us(n));
    }
    // 8 samples 0..=7: rank ceil(0.5·8) = 4 is the value 3; rank 8 is 7.
    assert_eq!(times.percentile_us(0.5), Some(3));
    assert_eq!(times.percentile_us(0.99), Some(7));
    assert_eq!(times.percentile_us(0.125), Some(0));
}

#[test]
fn p99_of_a_hundred_draws_is_the_99th() {
    // 99 fast draws and one slow one: p99 is a fast draw, the maximum the slow one. 100 µs
    // lies in the bucket 96..=103, whose upper bound is what a percentile reads.
    let mut times = DrawTimes::default();
    for _ in 0..99 {
        times.record(us(100));
    }
    times.record(us(50_000));
    let summary = times.summary().unwrap();
    assert_eq!(summary.frames, 100);
    assert_eq!(summary.p50_us, 103);
    assert_eq!(summary.p99_us, 103);
    assert_eq!(summary.max_us, 50_000);
    // Two slow draws in a hundred reach p99.
    times.record(us(40_000));
    assert!(times.percentile_us(0.99).unwrap() >= 40_000);
}

#[test]
fn a_percentile_is_at_most_an_eighth_high() {
    // Every value from 1 µs to 10 s: the answer for a lone value v is v (clamped), and for v
    // among larger ones the upper bound of v's bucket, within 12.5 % of v.
    for v in (1..200).chain([1_000, 4_095, 4_096, 65_537, 1_000_000, 10_000_000]) {
        let mut times = DrawTimes::default();
        times.record(us(v));
        times.record(us(u64::MAX / 2));
        let p50 = times.percentile_us(0.5).unwrap();
        assert!(p50 >= v, "{v}: {p50}");
        assert!(p50 as f64 <= v as f64 * 1.125, "{v}: {p50}");
    }
}

#[test]
fn buckets_cover_each_value_once_in_order() {
    // Consecutive values map to the same or the next bucket, and each bucket's upper bound
    // is the last value that maps to it.
    let mut last = 0;
    for v in 0..100_000u64 {
        let b = bucket(v);
        assert!(b == last || b == last + 1, "{v}");
        if b == last + 1 {
            assert_eq!(upper_bound(last), v - 1);
        }
        last = b;
    }
}

#[test]
fn huge_draws_land_in_the_last_bucket_and_keep_their_maximum() {
    let mut times = DrawTimes::default();
    times.record(Duration::from_secs(3_600));
    times.record(Duration::MAX);
    assert_eq!(bucket(u64::MAX), BUCKETS - 1);
    assert_eq!(times.count(), 2);
    assert_eq!(times.summary().unwrap().max_us, u64::MAX);
    // The last bucket's bound (2^27 - 1 µs) is below the smallest draw, which wins.
    assert_eq!(times.percentile_us(0.5), Some(3_600_000_000));
}

#[test]
fn vm_hwm_is_read_in_kib() {
    let status = "Name:\ttaco\nVmPeak:\t  900 kB\nVmHWM:\t   51234 kB\nVmRSS:\t 40000 kB\n";
    assert_eq!(vm_hwm_kib(status), Some(51_234));
    assert_eq!(vm_hwm_kib("Name:\ttaco\n"), None);
    assert_eq!(vm_hwm_kib("VmHWM:\tlots kB\n"), None);
    assert_eq!(vm_hwm_kib("VmHWM:\t12 MB\n"), None);
}

#[cfg(target_os = "linux")]
#[test]
fn this_process_has_a_peak_rss() {
    assert!(peak_rss_kib().is_some_and(|kib| kib > 0));
}

#[test]
fn timed_work_is_measured_on_both_clocks() {
    // Spinning until the wall clock moves costs CPU time too; a sleep would not.
    let took = timed(|| {
        let start = Instant::now();
        while start.elapsed() < Duration::from_millis(5) {
            std::hint::black_box(0);
        }
    });
    assert!(took.wall >= Duration::from_millis(5));
    #[cfg(target_os = "linux")]
    assert!(
        took.cpu
            .is_some_and(|cpu| cpu > Duration::ZERO && cpu <= took.wall * 2)
    );
    let slept = timed(|| std::thread::sleep(Duration::from_millis(20)));
    assert!(slept.wall >= Duration::from_millis(20));
    #[cfg(target_os = "linux")]
    assert!(slept.cpu.is_some_and(|cpu| cpu < Duration::from_millis(10)));
}

#[test]
fn the_session_timings_keep_each_part_of_a_draw_apart() {
    let mut timings = Timings::default();
    timings.drawn(Drawn {
        render: Took {
            wall: Duration::from_micros(300),
            cpu: Some(Duration::from_micros(200)),
        },
        wait: Duration::from_micros(10),
    });
    assert_eq!(timings.draw_took(Duration::from_micros(500)), 1);
    assert_eq!(timings.draw_took(Duration::from_micros(700)), 2);
    timings.postpone();
    let max = |times: &DrawTimes| times.summary().map(|s| s.max_us);
    assert_eq!(max(&timings.renders), Some(300));
    assert_eq!(max(&timings.render_cpu), Some(200));
    assert_eq!(max(&timings.waits), Some(10));
    assert_eq!(max(&timings.draws), Some(700));
    assert_eq!(timings.postponed, 1);
}
