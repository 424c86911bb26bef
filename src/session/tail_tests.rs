#![allow(clippy::unwrap_used)]

use super::*;
use crate::event::EventData;
use crate::session::testing::{HEADER, run};
use crate::session::{Entry, load};

/// A session of `runs` runs (5 lines, 2 messages each) after the header and system prompt.
fn session(dir: &Path, runs: u32, extra: impl Fn(u32) -> String) -> std::path::PathBuf {
    let path = dir.join("20261101-100000-aaaaaa.jsonl");
    let mut text = format!(
        "{HEADER}\n{}\n",
        r#"{"type":"message","timestamp":1,"data":{"content":"system prompt","role":"system"}}"#
    );
    for n in 1..=runs {
        text.push_str(&run(n, &format!("prompt {n}"), 3));
        text.push_str(&extra(n));
    }
    std::fs::write(&path, text).unwrap();
    path
}

fn want(entries: usize, messages: usize) -> Want {
    Want {
        tokens: 0,
        messages,
        entries,
    }
}

fn messages_in(entries: &[Entry]) -> usize {
    entries
        .iter()
        .filter(|e| matches!(e, Entry::Message(_)))
        .count()
}

#[test]
fn a_small_session_is_read_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = session(dir.path(), 3, |_| String::new());
    let tail = tail(&path, &want(1000, 1000)).unwrap();
    assert!(!tail.has_earlier());
    assert_eq!(tail.skipped_messages, 0);
    assert!(tail.skipped_usage.is_empty());
    assert_eq!(tail.loaded, load(&path).unwrap());
}

#[test]
fn a_long_session_is_read_from_the_run_that_makes_enough_and_ends_as_the_whole_does() {
    let dir = tempfile::tempdir().unwrap();
    let path = session(dir.path(), 200, |_| String::new());
    let whole = load(&path).unwrap();
    // 12 entries are 2.4 runs: the tail starts at the third run from the end.
    let tail = tail(&path, &want(12, 2)).unwrap();
    assert!(tail.has_earlier());
    assert_eq!(tail.loaded.header, whole.header);
    assert!(
        tail.loaded.warnings.is_empty(),
        "{:?}",
        tail.loaded.warnings
    );
    assert_eq!(tail.loaded.entries.len(), 15);
    let suffix = &whole.entries[whole.entries.len() - 15..];
    assert_eq!(tail.loaded.entries, suffix);
    assert!(matches!(
        &tail.loaded.entries[0],
        Entry::Event(e) if matches!(&e.data, EventData::RunStarted { prompt, .. } if prompt == "prompt 198")
    ));
    // Everything before is counted, not read: the system prompt and 197 runs, and their
    // tokens (3 in, 3 out a run) for the session's cost.
    assert_eq!(tail.skipped_messages, 1 + 197 * 2);
    let skipped = tail.skipped_usage.get("m").copied().unwrap_or_default();
    assert_eq!(
        (skipped.input_tokens, skipped.output_tokens),
        (197 * 3, 197 * 3)
    );
    assert_eq!(
        tail.skipped_messages + messages_in(&tail.loaded.entries),
        messages_in(&whole.entries)
    );
}

#[test]
fn the_message_share_can_ask_for_more_than_the_screen() {
    let dir = tempfile::tempdir().unwrap();
    let path = session(dir.path(), 50, |_| String::new());
    let by_count = tail(&path, &want(1, 20)).unwrap();
    assert_eq!(messages_in(&by_count.loaded.entries), 20);
    // Each message line is ~80 bytes, ~20 tokens: 400 tokens are about 20 messages.
    let by_tokens = tail(
        &path,
        &Want {
            tokens: 400,
            messages: 1,
            entries: 1,
        },
    )
    .unwrap();
    let held = messages_in(&by_tokens.loaded.entries);
    assert!((18..=24).contains(&held), "{held}");
}

fn compacted(kept_from: usize, extra: &str) -> String {
    format!(
        concat!(
            r#"{{"timestamp":5,"request_id":"rc","type":"compacted","data":{{"trigger":"auto","before_tokens":9,"after_tokens":3,"#,
            r#""summarized":4,"kept_from":{},"summary":"s","usage":{{"input_tokens":1,"output_tokens":1}},"duration_ms":1{}}}}}"#,
            "\n"
        ),
        kept_from, extra
    )
}

#[test]
fn a_compaction_keeps_the_tail_back_to_its_cut() {
    let dir = tempfile::tempdir().unwrap();
    // In run 150, a compaction kept from message 201 (run 101's answer) on.
    let path = session(dir.path(), 160, |n| {
        if n == 150 {
            compacted(202, "")
        } else {
            String::new()
        }
    });
    let tail = tail(&path, &want(5, 2)).unwrap();
    assert!(tail.skipped_messages <= 202, "{}", tail.skipped_messages);
    assert_eq!(tail.skipped_messages, 201, "from run 101's start");
}

#[test]
fn a_failed_or_nested_compaction_does_not_hold_the_tail() {
    let dir = tempfile::tempdir().unwrap();
    let path = session(dir.path(), 160, |n| match n {
        150 => compacted(10, r#","error":"the summary call failed""#),
        155 => compacted(10, r#","parent":"d1""#),
        _ => String::new(),
    });
    let tail = tail(&path, &want(5, 2)).unwrap();
    assert_eq!(messages_in(&tail.loaded.entries), 2);
}

#[test]
fn a_line_longer_than_a_chunk_is_read_whole() {
    let dir = tempfile::tempdir().unwrap();
    let big = "x".repeat(3 << 20);
    let path = session(dir.path(), 6, |n| {
        if n == 5 {
            format!(
                r#"{{"type":"message","timestamp":1,"data":{{"content":"{big}","role":"user"}}}}{}"#,
                "\n"
            )
        } else {
            String::new()
        }
    });
    let whole = load(&path).unwrap();
    let tail = tail(&path, &want(8, 2)).unwrap();
    assert!(tail.has_earlier());
    assert_eq!(tail.loaded.entries.len(), 11);
    assert_eq!(
        tail.loaded.entries,
        whole.entries[whole.entries.len() - 11..]
    );
}

#[test]
fn line_types_come_from_the_envelope_not_the_data() {
    let kind = |line: &[u8]| kind(line).map(|k| k.into_owned());
    assert_eq!(
        kind(br#"{"type":"message","data":{}}"#).as_deref(),
        Some("message")
    );
    assert_eq!(
        kind(br#"{"timestamp":1,"request_id":"r","type":"run_started","data":{}}"#).as_deref(),
        Some("run_started")
    );
    // A tool's output that mentions a type is escaped inside the data.
    assert_eq!(
        kind(br#"{"timestamp":1,"request_id":"r","type":"tool_result","data":{"r":"\"type\":\"run_started\""}}"#)
            .as_deref(),
        Some("tool_result")
    );
    // Keys in another order: a "type" inside the data is not the line's.
    assert_eq!(
        kind(br#"{"data":{"entries":[{"type":"file"}]},"timestamp":1,"type":"tool_result"}"#)
            .as_deref(),
        Some("tool_result")
    );
    assert_eq!(
        kind(br#"{"data":{"content":"x","role":"user"},"timestamp":1,"type":"message"}"#)
            .as_deref(),
        Some("message")
    );
    assert_eq!(kind(b"garbage"), None);
    assert_eq!(
        kind(br#"{"timestamp":1,"request_id":"a\"b","type":"x"}"#).as_deref(),
        Some("x")
    );
}

#[test]
fn earlier_runs_come_in_whole_runs_back_to_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let path = session(dir.path(), 30, |_| String::new());
    let whole = load(&path).unwrap();
    let mut tail = tail(&path, &want(10, 2)).unwrap();
    let mut held = tail.loaded.entries.clone();
    let mut steps = 0;
    while tail.has_earlier() {
        tail = earlier(&path, tail.from, 20).unwrap();
        assert!(
            tail.loaded.warnings.is_empty(),
            "{:?}",
            tail.loaded.warnings
        );
        let mut older = tail.loaded.entries.clone();
        older.append(&mut held);
        held = older;
        steps += 1;
    }
    // Back at the start, the pieces are the whole file, in order, nothing twice.
    assert_eq!(held, whole.entries);
    assert!(steps >= 5, "{steps}");
}
