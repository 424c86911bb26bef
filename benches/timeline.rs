//! Issue 15 / DESIGN §10: a timeline of 100,000 events draws a 200×60 frame in p99 ≤ 2 ms,
//! and grows by ≤ 5 MB per 10,000 events. A frame is `TimelineState::render`.
//!
//! The events are what a working session records: each run starts, calls the model, reads a
//! file under an approval, gets its content back, answers, and ends; the model calls carry
//! their new messages (the tool's output among them), as `llm_call` events do.
//!
//! Before criterion runs it prints p50/p99 of single frames (following the newest row, and
//! scrolled half way back) and the heap the timeline holds per 10,000 events, counted by a
//! counting allocator (exact, unlike RSS, which the allocator rounds to pages it keeps).

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use serde_json::json;
use taco::conversation::{Message, ToolCall, Usage};
use taco::event::{Decision, Event, EventData, LlmCall, Scope, ToolStatus};
use taco::run_model::RunModel;
use taco::tui::theme::Theme;
use taco::tui::views::timeline::TimelineState;

/// Counts the bytes the program holds on the heap.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call goes to the system allocator unchanged; only a counter is added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded as given.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded as given.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size, Ordering::Relaxed);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded as given.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const SIZES: [usize; 3] = [1_000, 10_000, 100_000];
const AREA: Rect = Rect {
    x: 0,
    y: 0,
    width: 200,
    height: 60,
};
/// Events a run records (see `run`).
const PER_RUN: usize = 8;

/// A file the model reads: some 1.5 KB of code, different each run.
fn file(run: usize) -> String {
    (0..40)
        .map(|line| format!("    let value_{line} = compute({run}, {line}); // step {line}\n"))
        .collect()
}

/// The events of run `n`, starting at `t` (ms); `sent` is the conversation's length so far.
fn run(n: usize, t: u64, sent: &mut usize) -> Vec<Event> {
    let id: Arc<str> = Arc::from(format!("req-{n}").as_str());
    let at = |offset: u64, data: EventData| Event {
        timestamp: t + offset,
        request_id: id.clone(),
        data,
    };
    let call = format!("call-{n}");
    let path = format!("src/module_{}.rs", n % 97);
    let prompt = format!("run {n}: what does {path} do, and is anything wrong in it?");
    let tool_call = ToolCall {
        id: call.clone(),
        name: "read_file".into(),
        arguments: json!({ "path": path }),
    };
    let content = file(n);
    let answer = format!(
        "## {path}\n\nIt computes forty values from the run number. Nothing is wrong, but \
         `compute` is called with the same first argument each time (run {n})."
    );
    let mut llm = |turn: u32, new_messages: Vec<Message>, content: String, calls: Vec<ToolCall>| {
        *sent += new_messages.len();
        EventData::LlmCall(Box::new(LlmCall {
            turn,
            model: "gpt-bench".into(),
            duration_ms: 800,
            ttft_ms: Some(200),
            finish_reason: Some("stop".into()),
            content,
            reasoning_content: None,
            tool_calls: calls,
            usage: Usage {
                input_tokens: 1_000 + n as u64,
                output_tokens: 80,
                cached_tokens: 0,
            },
            timings: None,
            message_count: *sent,
            new_messages,
            tools: vec!["read_file".into(), "shell".into()],
            parent: None,
            omitted: 0,
            context_window: None,
            call: None,
            purpose: None,
        }))
    };
    vec![
        at(
            0,
            EventData::RunStarted {
                prompt: prompt.clone(),
                provider: "openai".into(),
                model: "gpt-bench".into(),
                max_turns: 20,
                trace_parent: None,
            },
        ),
        at(
            800,
            llm(
                1,
                vec![Message::user(prompt)],
                String::new(),
                vec![tool_call.clone()],
            ),
        ),
        at(
            801,
            EventData::ToolCall {
                turn: 1,
                id: call.clone(),
                name: "read_file".into(),
                arguments: tool_call.arguments.clone(),
                parent: None,
                sandbox: None,
            },
        ),
        at(
            802,
            EventData::ApprovalRequested {
                id: call.clone(),
                name: "read_file".into(),
                arguments: tool_call.arguments.clone(),
                position: 1,
                of: 1,
                note: None,
                diff: None,
                sandbox: None,
            },
        ),
        at(
            1_500,
            EventData::ApprovalDecided {
                id: call.clone(),
                name: "read_file".into(),
                decision: Decision::Approved,
                scope: Scope::Once,
                reason: None,
                prefix: None,
            },
        ),
        at(
            1_510,
            EventData::ToolResult {
                id: call.clone(),
                name: "read_file".into(),
                ok: true,
                status: Some(ToolStatus::Ok),
                denied_by: None,
                result: Some(json!({ "content": content })),
                error: None,
                duration_ms: 8,
            },
        ),
        at(
            2_400,
            llm(
                2,
                vec![
                    Message::assistant(None, None, vec![tool_call]),
                    Message::tool(call, "read_file", content),
                ],
                answer.clone(),
                Vec::new(),
            ),
        ),
        at(
            2_401,
            EventData::Final {
                content: answer,
                turns: 2,
                usage: Usage::default(),
            },
        ),
    ]
}

/// A timeline fed `events` events, and the heap bytes it holds.
fn filled(events: usize) -> (TimelineState, usize) {
    let model = RunModel::new();
    let mut sent = 0;
    let runs: Vec<Vec<Event>> = (0..events.div_ceil(PER_RUN))
        .map(|n| run(n, n as u64 * 10_000, &mut sent))
        .collect();
    let before = LIVE.load(Ordering::Relaxed);
    let mut timeline = TimelineState::new();
    for event in runs.iter().flatten().take(events) {
        timeline.on_event(event, &model);
    }
    let held = LIVE.load(Ordering::Relaxed).saturating_sub(before);
    drop(runs);
    (timeline, held)
}

fn frame(timeline: &mut TimelineState, buf: &mut Buffer, theme: &Theme) {
    timeline.render(AREA, buf, theme, true, None);
    black_box(&*buf);
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

/// p50 and p99 of 5,000 single frames for each timeline, in rounds so drift hits all alike.
fn percentiles(timelines: &mut [TimelineState]) -> Vec<(Duration, Duration)> {
    let theme = Theme::default();
    let mut buf = Buffer::empty(AREA);
    let mut times = vec![Vec::with_capacity(5_000); timelines.len()];
    for _round in 0..20 {
        for (k, timeline) in timelines.iter_mut().enumerate() {
            for _ in 0..250 {
                let start = Instant::now();
                frame(timeline, &mut buf, &theme);
                times[k].push(start.elapsed());
            }
        }
    }
    (times.into_iter())
        .map(|mut t| {
            t.sort_unstable();
            (t[t.len() / 2], t[t.len() * 99 / 100])
        })
        .collect()
}

/// Moves the selection half way back (Home, then pages down), as someone reading back.
fn halfway(timeline: &mut TimelineState) {
    let mut buf = Buffer::empty(AREA);
    frame(timeline, &mut buf, &Theme::default());
    let _ = timeline.on_key(key(KeyCode::Home));
    let pages = timeline.len() / 2 / 58;
    for _ in 0..pages {
        let _ = timeline.on_key(key(KeyCode::PageDown));
    }
}

fn report() {
    let mut held = Vec::new();
    let mut timelines = Vec::new();
    for n in SIZES {
        let (timeline, bytes) = filled(n);
        held.push(bytes);
        timelines.push(timeline);
    }
    let following = percentiles(&mut timelines);
    timelines.iter_mut().for_each(halfway);
    let back = percentiles(&mut timelines);
    println!("timeline frame at 200×60, p50 / p99 of 5000 frames:");
    for (name, results) in [("following", &following), ("half way back", &back)] {
        let cells: Vec<String> = (SIZES.iter().zip(results))
            .map(|(n, (p50, p99))| format!("{n}: {p50:.1?} / {p99:.1?}"))
            .collect();
        println!("  {name:<14} {}", cells.join(", "));
    }
    let per_10k = |bytes: usize, n: usize| bytes as f64 * 10_000.0 / n as f64 / 1e6;
    println!("heap held by the timeline:");
    for (n, bytes) in SIZES.iter().zip(&held) {
        println!(
            "  {n} events: {:.1} MB ({:.2} MB per 10,000 events)",
            *bytes as f64 / 1e6,
            per_10k(*bytes, *n)
        );
    }
}

fn bench(c: &mut Criterion) {
    report();
    let theme = Theme::default();
    let mut group = c.benchmark_group("timeline_frame_200x60");
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(3));
    let mut buf = Buffer::empty(AREA);
    for n in SIZES {
        let (mut timeline, _) = filled(n);
        group.bench_with_input(BenchmarkId::new("following", n), &n, |b, _| {
            b.iter(|| frame(&mut timeline, &mut buf, &theme));
        });
        halfway(&mut timeline);
        group.bench_with_input(BenchmarkId::new("half_way_back", n), &n, |b, _| {
            b.iter(|| frame(&mut timeline, &mut buf, &theme));
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
