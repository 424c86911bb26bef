//! The rewind overlay (issue 29) with the largest preview the core sends (50 files with a
//! 32 KB Rust diff each): a steady frame at 200×60, and a frame that shows another file
//! (its diff painted, syntax colours included, once per file). Before criterion runs, p50/p99
//! of single frames are printed (the budget is a frame's: 16 ms, a steady one ≤ 2 ms).

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use taco::event::{
    Change, ChangedFile, ConversationPreview, FileDiffView, FilesPreview, RewindPoint,
    RewindPreview,
};
use taco::tui::theme::Theme;
use taco::tui::views::gate::Gate;
use taco::tui::views::rewind::RewindView;

const AREA: Rect = Rect {
    x: 0,
    y: 0,
    width: 200,
    height: 60,
};
const FILES: usize = 50;
const DIFF_BYTES: usize = 32 * 1024;

/// A unified diff of Rust code of about [`DIFF_BYTES`].
fn diff(n: usize) -> String {
    let mut out = format!(
        "diff --git a/src/m{n}.rs b/src/m{n}.rs\nindex 1..2 100644\n--- a/src/m{n}.rs\n+++ b/src/m{n}.rs\n"
    );
    let mut line = 1;
    while out.len() < DIFF_BYTES {
        out.push_str(&format!("@@ -{line},4 +{line},4 @@\n"));
        // Each file's code differs: none is coloured from another's cache.
        out.push_str(&format!(" fn f{line}_{n}(x: u32) -> u32 {{\n"));
        out.push_str(&format!("-    x + {line} // the old \"value\"\n"));
        out.push_str(&format!("+    x * {line} // the new \"value\"\n"));
        out.push_str(" }\n");
        line += 4;
    }
    out
}

fn view() -> RewindView {
    let point = RewindPoint::Run {
        request_id: "bench".into(),
    };
    let files = (0..FILES)
        .map(|n| FileDiffView {
            file: ChangedFile {
                path: format!("src/m{n}.rs"),
                change: Change::Modified,
                added: 400,
                removed: 400,
                binary: false,
            },
            diff: diff(n),
            truncated: true,
        })
        .collect();
    let preview = RewindPreview {
        point: point.clone(),
        files: Ok(FilesPreview {
            checkpoint: "0123456789abcdef".into(),
            files,
            omitted: 0,
            hand_edits: vec!["src/m1.rs".into()],
        }),
        conversation: Ok(ConversationPreview {
            prompt: "make it faster".into(),
            runs_dropped: 3,
        }),
    };
    let mut view = RewindView::new(point, "before “make it faster”");
    view.loaded(&preview);
    view
}

fn frame(view: &mut RewindView, buf: &mut Buffer, theme: &Theme) -> Duration {
    let start = Instant::now();
    view.draw(AREA, buf, theme, Gate::Open);
    black_box(&buf);
    start.elapsed()
}

fn next_file(view: &mut RewindView) {
    view.on_key(KeyEvent::new(KeyCode::Right, KeyModifiers::NONE));
}

fn percentiles(name: &str, mut times: Vec<Duration>) {
    times.sort();
    let at = |q: f64| times[((times.len() as f64 - 1.0) * q) as usize];
    println!(
        "{name}: p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms ({} frames)",
        at(0.5).as_secs_f64() * 1000.0,
        at(0.99).as_secs_f64() * 1000.0,
        at(1.0).as_secs_f64() * 1000.0,
        times.len()
    );
}

fn bench(c: &mut Criterion) {
    let theme = Theme::default();
    let mut buf = Buffer::empty(AREA);
    let mut steady = view();
    frame(&mut steady, &mut buf, &theme);
    percentiles(
        "rewind overlay, steady frame",
        (0..500)
            .map(|_| frame(&mut steady, &mut buf, &theme))
            .collect(),
    );
    let mut moving = view();
    frame(&mut moving, &mut buf, &theme);
    percentiles(
        "rewind overlay, another file's diff",
        (0..FILES - 1)
            .map(|_| {
                next_file(&mut moving);
                frame(&mut moving, &mut buf, &theme)
            })
            .collect(),
    );
    c.bench_function("rewind overlay steady 200x60", |b| {
        b.iter(|| frame(&mut steady, &mut buf, &theme))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
