//! Session files (DESIGN §8): writing, loading after crashes and damage, listing and finding.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use proptest::prelude::*;
use serde_json::json;
use taco::conversation::{Message, ToolCall, Usage};
use taco::event::{DeltaKind, Event, EventData, LlmCall};
use taco::session::{
    self, Entry, FORMAT_VERSION, Outcome, SessionError, SessionHeader, SessionKind, SessionWriter,
    Summary,
};

fn event(data: EventData) -> Event {
    Event {
        timestamp: 1_700_000_000_000,
        request_id: Arc::from("req-1"),
        data,
    }
}

fn llm_call(turn: u32, usage: (u64, u64), parent: Option<&str>) -> Event {
    event(EventData::LlmCall(Box::new(LlmCall {
        turn,
        model: "m".into(),
        duration_ms: 12,
        ttft_ms: Some(3),
        finish_reason: Some("stop".into()),
        content: "answer".into(),
        reasoning_content: None,
        tool_calls: Vec::new(),
        usage: Usage {
            input_tokens: usage.0,
            output_tokens: usage.1,
            cached_tokens: 0,
        },
        timings: None,
        message_count: 2,
        new_messages: vec![Message::user("hi")],
        tools: vec!["shell".into()],
        parent: parent.map(str::to_string),
        omitted: 0,
        context_window: None,
        call: None,
        purpose: None,
    })))
}

fn run_started(prompt: &str) -> Event {
    event(EventData::RunStarted {
        prompt: prompt.into(),
        provider: "demo".into(),
        model: "m".into(),
        max_turns: 8,
        trace_parent: None,
    })
}

fn delta() -> Event {
    event(EventData::Delta {
        kind: DeltaKind::Text,
        text: "streamed".into(),
    })
}

/// A conversation with every kind of line, as a run would write it (deltas included).
fn conversation() -> Vec<Entry> {
    vec![
        Entry::Message(Message::system("be brief")),
        Entry::Message(Message::user("list the files")),
        Entry::Event(run_started("list the files")),
        Entry::Event(delta()),
        Entry::Event(llm_call(1, (100, 20), None)),
        Entry::Message(Message::assistant(
            None,
            Some("thinking".into()),
            vec![ToolCall {
                id: "c1".into(),
                name: "shell".into(),
                arguments: json!({"command": "ls"}),
            }],
        )),
        Entry::Event(event(EventData::ToolCall {
            turn: 1,
            id: "c1".into(),
            name: "shell".into(),
            arguments: json!({"command": "ls"}),
            parent: None,
            sandbox: None,
        })),
        Entry::Event(event(EventData::ToolResult {
            id: "c1".into(),
            name: "shell".into(),
            ok: true,
            status: Some(taco::event::ToolStatus::Ok),
            denied_by: None,
            result: Some(json!({"stdout": "a\nb\n"})),
            error: None,
            duration_ms: 5,
        })),
        Entry::Message(Message::tool("c1", "shell", "a\nb\n".into())),
        Entry::Event(delta()),
        Entry::Event(llm_call(2, (150, 30), None)),
        Entry::Message(Message::assistant(Some("a and b".into()), None, Vec::new())),
        Entry::Event(event(EventData::Final {
            content: "a and b".into(),
            turns: 2,
            usage: Usage {
                input_tokens: 250,
                output_tokens: 50,
                cached_tokens: 0,
            },
        })),
    ]
}

fn is_delta(entry: &Entry) -> bool {
    matches!(entry, Entry::Event(e) if !e.is_trace())
}

fn write_all(writer: &mut SessionWriter, entries: &[Entry]) {
    for entry in entries {
        match entry {
            Entry::Message(m) => writer.message(m).unwrap(),
            Entry::Event(e) => writer.event(e).unwrap(),
        }
    }
}

fn without_deltas(entries: &[Entry]) -> Vec<Entry> {
    entries.iter().filter(|e| !is_delta(e)).cloned().collect()
}

fn append(path: &Path, bytes: &[u8]) {
    let mut file = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    file.write_all(bytes).unwrap();
}

#[test]
fn a_session_round_trips_in_order_without_deltas() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data/taco/sessions");
    let workdir = tmp.path().join("project");
    let mut writer = SessionWriter::create(&dir, "demo", "demo-model", &workdir).unwrap();
    let entries = conversation();
    write_all(&mut writer, &entries);

    assert_eq!(writer.path(), dir.join(format!("{}.jsonl", writer.id())));
    let mode = std::fs::metadata(writer.path())
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "session files are private");

    let loaded = session::load(writer.path()).unwrap();
    assert_eq!(loaded.warnings, Vec::<String>::new());
    assert_eq!(loaded.entries, without_deltas(&entries));
    let header = loaded.header.unwrap();
    assert_eq!(
        header,
        SessionHeader {
            version: FORMAT_VERSION,
            id: writer.id().to_string(),
            provider: "demo".into(),
            model: "demo-model".into(),
            workdir,
            started: header.started,
            // A writer made without saying where it was started writes none.
            kind: None,
        }
    );
    let now = taco::event::unix_ms();
    assert!(header.started <= now && now - header.started < 60_000);

    // The documented line shapes: a typed header, typed messages, and events exactly as
    // `exec --trace` writes them.
    let text = std::fs::read_to_string(writer.path()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1 + without_deltas(&entries).len());
    let first: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
    assert_eq!(first["type"], "session");
    assert_eq!(first["version"], FORMAT_VERSION);
    assert_eq!(first["id"], writer.id());
    let message: serde_json::Value = serde_json::from_str(lines[1]).unwrap();
    assert_eq!(message["type"], "message");
    assert!(message["timestamp"].as_u64().is_some());
    assert_eq!(
        message["data"],
        json!({"role": "system", "content": "be brief"})
    );
    assert_eq!(
        lines[3],
        serde_json::to_string(&run_started("list the files")).unwrap()
    );
    assert!(!text.contains("streamed"), "deltas stay out of the file");
}

#[test]
fn session_ids_sort_by_time_and_name_their_file() {
    let tmp = tempfile::tempdir().unwrap();
    let a = SessionWriter::create(tmp.path(), "demo", "m", tmp.path()).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let b = SessionWriter::create(tmp.path(), "demo", "m", tmp.path()).unwrap();
    assert!(a.id() < b.id(), "{} < {}", a.id(), b.id());
    let (date, rest) = a.id().split_once('-').unwrap();
    assert_eq!(date.len(), 8);
    assert!(date.starts_with("20"));
    assert_eq!(rest.len(), 13);
}

#[test]
fn a_torn_last_line_is_skipped_with_a_warning_and_nothing_else_is_lost() {
    let tmp = tempfile::tempdir().unwrap();
    let mut writer = SessionWriter::create(tmp.path(), "demo", "m", tmp.path()).unwrap();
    let entries = without_deltas(&conversation());
    write_all(&mut writer, &entries);
    // What a crash in the middle of the next write leaves: half a line, no newline.
    let next = serde_json::to_string(&llm_call(3, (1, 1), None)).unwrap();
    append(writer.path(), &next.as_bytes()[..next.len() / 2]);

    let loaded = session::load(writer.path()).unwrap();
    assert_eq!(loaded.entries, entries);
    let torn_line = entries.len() + 2;
    assert_eq!(
        loaded.warnings,
        vec![format!(
            "line {torn_line} is incomplete (the session was probably interrupted); it was skipped"
        )]
    );
}

#[test]
fn a_file_cut_at_any_byte_loads_a_prefix_of_what_was_written() {
    let tmp = tempfile::tempdir().unwrap();
    let mut writer = SessionWriter::create(tmp.path(), "demo", "m", tmp.path()).unwrap();
    let entries = without_deltas(&conversation());
    write_all(&mut writer, &entries);
    let full = std::fs::read(writer.path()).unwrap();
    let header_end = full.iter().position(|&b| b == b'\n').unwrap();
    let cut_path = tmp.path().join("cut.jsonl");
    for cut in 0..=full.len() {
        std::fs::write(&cut_path, &full[..cut]).unwrap();
        let result = session::load(&cut_path);
        if cut < header_end {
            let err = result.unwrap_err();
            assert!(
                matches!(err, SessionError::NotSession { .. }),
                "{cut}: {err}"
            );
            continue;
        }
        let loaded = result.unwrap_or_else(|e| panic!("cut at {cut}: {e}"));
        assert!(loaded.header.is_some());
        assert_eq!(loaded.entries[..], entries[..loaded.entries.len()], "{cut}");
        // Only a cut inside a line costs a warning; a line cut right before its newline is whole.
        let line_start = full[..cut]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let inside_line = cut > line_start && full.get(cut) != Some(&b'\n');
        assert_eq!(loaded.warnings.len(), usize::from(inside_line), "{cut}");
    }
}

#[test]
fn a_complete_last_line_without_its_newline_is_accepted() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("t.jsonl");
    let a = serde_json::to_string(&run_started("one")).unwrap();
    let b = serde_json::to_string(&llm_call(1, (5, 6), None)).unwrap();
    std::fs::write(&path, format!("{a}\n{b}")).unwrap();
    let loaded = session::load(&path).unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    assert_eq!(loaded.entries.len(), 2);
}

#[test]
fn resuming_after_a_crash_keeps_new_lines_apart_from_the_torn_one() {
    let tmp = tempfile::tempdir().unwrap();
    let mut writer = SessionWriter::create(tmp.path(), "demo", "m", tmp.path()).unwrap();
    writer.message(&Message::user("first")).unwrap();
    let id = writer.id().to_string();
    let path = writer.path().to_path_buf();
    drop(writer);
    append(&path, br#"{"type":"message","timest"#);

    let mut resumed = SessionWriter::append_to(&path).unwrap();
    assert_eq!(resumed.id(), id);
    assert_eq!(resumed.path(), path);
    resumed.message(&Message::user("second")).unwrap();
    resumed.event(&delta()).unwrap();
    resumed.event(&llm_call(1, (1, 2), None)).unwrap();

    let loaded = session::load(&path).unwrap();
    assert_eq!(
        loaded.entries,
        vec![
            Entry::Message(Message::user("first")),
            Entry::Message(Message::user("second")),
            Entry::Event(llm_call(1, (1, 2), None)),
        ]
    );
    assert_eq!(
        loaded.warnings,
        vec!["line 3 is not valid JSON (perhaps cut short by a crash); it was skipped"]
    );
}

#[test]
fn only_session_files_can_be_resumed() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = tmp.path().join("trace.jsonl");
    std::fs::write(
        &trace,
        serde_json::to_string(&run_started("x")).unwrap() + "\n",
    )
    .unwrap();
    let err = SessionWriter::append_to(&trace).unwrap_err();
    assert!(matches!(err, SessionError::NotSession { .. }));
    assert!(err.to_string().contains("trace.jsonl"), "{err}");
    assert!(err.to_string().contains("taco trace"), "{err}");

    let missing = tmp.path().join("gone.jsonl");
    let err = SessionWriter::append_to(&missing).unwrap_err();
    assert!(matches!(err, SessionError::NotFound { .. }), "{err}");
    assert!(!missing.exists(), "resuming must not create a file");
}

#[test]
fn damaged_and_unknown_middle_lines_are_skipped_by_number() {
    let tmp = tempfile::tempdir().unwrap();
    let mut writer = SessionWriter::create(tmp.path(), "demo", "m", tmp.path()).unwrap();
    writer.message(&Message::user("q")).unwrap();
    append(writer.path(), b"{{{ not json\n");
    append(
        writer.path(),
        br#"{"type":"hologram","timestamp":1,"request_id":"r","data":{}}"#,
    );
    append(writer.path(), b"\n\n");
    writer.event(&llm_call(1, (1, 1), None)).unwrap();

    let loaded = session::load(writer.path()).unwrap();
    assert_eq!(loaded.entries.len(), 2);
    assert_eq!(loaded.warnings.len(), 2, "{:?}", loaded.warnings);
    assert!(loaded.warnings[0].starts_with("line 3 is not valid JSON"));
    assert!(loaded.warnings[1].starts_with("line 4 has an unknown type 'hologram'"));
}

#[test]
fn an_exec_trace_file_loads_without_a_header() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("trace.jsonl");
    let events = [run_started("hello"), llm_call(1, (3, 4), None)];
    let text: String = events
        .iter()
        .map(|e| serde_json::to_string(e).unwrap() + "\n")
        .collect();
    std::fs::write(&path, text).unwrap();
    let loaded = session::load(&path).unwrap();
    assert_eq!(loaded.header, None);
    assert_eq!(
        loaded.entries,
        events.into_iter().map(Entry::Event).collect::<Vec<_>>()
    );
    assert!(loaded.warnings.is_empty());
}

#[test]
fn files_that_are_not_sessions_are_clear_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let empty = tmp.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let err = session::load(&empty).unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "{} is not a taco session or trace file: it is empty",
            empty.display()
        )
    );

    let garbage = tmp.path().join("garbage.bin");
    let bytes: Vec<u8> = (0..4096u32).map(|i| (i * 7919 % 251) as u8).collect();
    std::fs::write(&garbage, bytes).unwrap();
    let err = session::load(&garbage).unwrap_err();
    assert!(matches!(err, SessionError::NotSession { .. }), "{err}");
    assert!(err.to_string().contains("garbage.bin"), "{err}");

    let json = tmp.path().join("other.json");
    std::fs::write(&json, "{\"name\": \"package\"}\n[1, 2]\n").unwrap();
    let err = session::load(&json).unwrap_err().to_string();
    assert!(
        err.contains("no line of it is a taco entry (line 1 is JSON without a 'type')"),
        "{err}"
    );

    let missing = tmp.path().join("nope.jsonl");
    let err = session::load(&missing).unwrap_err();
    assert!(matches!(err, SessionError::NotFound { .. }));
    assert_eq!(
        err.to_string(),
        format!("no such file: {}", missing.display())
    );

    let err = session::load(tmp.path()).unwrap_err().to_string();
    assert!(err.ends_with("it is a directory"), "{err}");
}

/// A session file with a chosen header, as an older run would have left it.
fn session_file(dir: &Path, id: &str, started: u64, workdir: &Path, entries: &[Entry]) -> PathBuf {
    made_in(None, dir, id, started, workdir, entries)
}

/// A session file whose header says where it was started (`tui`, `exec`), or not.
fn made_in(
    kind: Option<&str>,
    dir: &Path,
    id: &str,
    started: u64,
    workdir: &Path,
    entries: &[Entry],
) -> PathBuf {
    let path = dir.join(format!("{id}.jsonl"));
    let mut header = json!({
        "type": "session", "version": 1, "id": id, "provider": "demo", "model": "m",
        "workdir": workdir, "started": started,
    });
    if let Some(kind) = kind {
        header["kind"] = kind.into();
    }
    let mut text = header.to_string();
    text.push('\n');
    for entry in entries {
        let line = match entry {
            Entry::Message(m) => json!({"type": "message", "timestamp": started, "data": m}),
            Entry::Event(e) => serde_json::to_value(e).unwrap(),
        };
        text.push_str(&line.to_string());
        text.push('\n');
    }
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn list_is_newest_first_with_prompt_turns_and_tokens() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let old = session_file(
        dir,
        "20240101-100000-aaaaaa",
        1_704_103_200_000,
        Path::new("/work/one"),
        &[
            Entry::Message(Message::system("sys")),
            Entry::Message(Message::user("first question")),
            Entry::Event(run_started("first question")),
            Entry::Event(llm_call(1, (100, 10), None)),
            Entry::Event(llm_call(1, (7, 7), Some("delegate-1"))),
            Entry::Event(llm_call(2, (200, 20), None)),
            Entry::Message(Message::user("second question")),
        ],
    );
    // Events only (an exec run that records no messages): the prompt comes from run_started.
    let new = session_file(
        dir,
        "20240202-100000-bbbbbb",
        1_706_868_000_000,
        Path::new("/work/two"),
        &[Entry::Event(run_started("from the trace"))],
    );
    std::fs::write(dir.join("broken.jsonl"), b"\x00\x01garbage").unwrap();
    std::fs::write(
        dir.join("trace-only.jsonl"),
        serde_json::to_string(&run_started("x")).unwrap(),
    )
    .unwrap();
    std::fs::write(dir.join("notes.txt"), "not a session").unwrap();
    std::fs::create_dir(dir.join("sub.jsonl")).unwrap();

    let sessions = session::list(dir);
    assert_eq!(
        sessions,
        vec![
            Summary {
                id: "20240202-100000-bbbbbb".into(),
                path: new.clone(),
                started: 1_706_868_000_000,
                workdir: "/work/two".into(),
                provider: "demo".into(),
                model: "m".into(),
                first_prompt: Some("from the trace".into()),
                turns: 0,
                tokens: Usage::default(),
                size: std::fs::metadata(&new).unwrap().len(),
                // Its newest line is older than its header says it started.
                last_activity: 1_706_868_000_000,
                kind: None,
                // Killed before the model answered.
                outcome: Outcome::Empty,
            },
            Summary {
                id: "20240101-100000-aaaaaa".into(),
                path: old.clone(),
                started: 1_704_103_200_000,
                workdir: "/work/one".into(),
                provider: "demo".into(),
                model: "m".into(),
                first_prompt: Some("first question".into()),
                turns: 2,
                // The sub-agent's call counts in the tokens, not in the turns.
                tokens: Usage {
                    input_tokens: 307,
                    output_tokens: 37,
                    cached_tokens: 0,
                },
                size: std::fs::metadata(&old).unwrap().len(),
                last_activity: 1_704_103_200_000,
                kind: None,
                outcome: Outcome::Interrupted,
            },
        ]
    );
    assert!(session::list(&dir.join("missing")).is_empty());
    // Files that cannot be listed are reported, not hidden.
    std::fs::write(dir.join("empty.jsonl"), b"").unwrap();
    let (listed, problems) = session::list_with_problems(dir);
    assert_eq!(listed.len(), 2);
    assert_eq!(problems.len(), 3, "{problems:?}");
    for name in ["broken.jsonl", "empty.jsonl", "trace-only.jsonl"] {
        assert!(
            problems
                .iter()
                .any(|p| p.contains(name) && p.contains("not listed")),
            "{name}: {problems:?}"
        );
    }
}

#[test]
fn find_by_id_exact_prefix_ambiguous_and_unknown() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let w = Path::new("/w");
    let a = session_file(dir, "20240101-100000-aaaaaa", 1, w, &[]);
    let b = session_file(dir, "20240101-100000-aabbbb", 2, w, &[]);
    let c = session_file(dir, "20240303-120000-cccccc", 3, w, &[]);

    assert_eq!(
        session::find(dir, Some("20240101-100000-aaaaaa"), w).unwrap(),
        a
    );
    assert_eq!(session::find(dir, Some("20240303"), w).unwrap(), c);
    assert_eq!(
        session::find(dir, Some("20240101-100000-aab"), w).unwrap(),
        b
    );

    let err = session::find(dir, Some("20240101"), w).unwrap_err();
    assert!(matches!(err, SessionError::AmbiguousId { .. }));
    assert_eq!(
        err.to_string(),
        "'20240101' matches several sessions (20240101-100000-aabbbb, 20240101-100000-aaaaaa); give more of the id"
    );

    let err = session::find(dir, Some("1999"), w).unwrap_err();
    assert!(matches!(err, SessionError::UnknownId { .. }));
    let text = err.to_string();
    assert!(text.contains("no session '1999'"), "{text}");
    assert!(text.contains(&dir.display().to_string()), "{text}");
    assert!(
        text.contains("20240303-120000-cccccc, 20240101-100000-aabbbb"),
        "newest first: {text}"
    );

    let empty = tempfile::tempdir().unwrap();
    let err = session::find(empty.path(), Some("x"), w).unwrap_err();
    assert!(
        err.to_string().ends_with("there are no saved sessions"),
        "{err}"
    );
}

#[test]
fn find_without_id_takes_the_newest_tui_session_of_this_workdir() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("sessions");
    std::fs::create_dir(&dir).unwrap();
    let here = tmp.path().join("here");
    let elsewhere = tmp.path().join("elsewhere");
    std::fs::create_dir(&here).unwrap();
    std::fs::create_dir(&elsewhere).unwrap();
    let tui = Some("tui");
    made_in(tui, &dir, "20240101-000000-aaaaaa", 10, &here, &[]);
    let newest_here = made_in(tui, &dir, "20240102-000000-bbbbbb", 20, &here, &[]);
    made_in(tui, &dir, "20240103-000000-cccccc", 30, &elsewhere, &[]);
    std::fs::write(dir.join("junk.jsonl"), "junk").unwrap();

    assert_eq!(session::find(&dir, None, &here).unwrap(), newest_here);
    // The same directory spelled differently still matches.
    assert_eq!(
        session::find(&dir, None, &here.join(".")).unwrap(),
        newest_here
    );
    assert_eq!(session::find(&dir, Some(""), &here).unwrap(), newest_here);

    let other = tmp.path().join("other");
    let err = session::find(&dir, None, &other).unwrap_err();
    assert!(matches!(err, SessionError::NoSessionForWorkdir { .. }));
    let text = err.to_string();
    assert!(
        text.contains(&format!("no saved session for {}", other.display())),
        "{text}"
    );
    assert!(text.contains("taco sessions"), "{text}");
}

/// An event written at `timestamp` (unix ms).
fn at(timestamp: u64, data: EventData) -> Entry {
    Entry::Event(Event {
        timestamp,
        request_id: Arc::from("r"),
        data,
    })
}

/// A run that starts at `start`, gets `turns` answers and ends with `end` (none: killed).
fn a_run(start: u64, turns: u32, end: Option<EventData>) -> Vec<Entry> {
    let mut lines = vec![at(start, run_started("go").data)];
    for turn in 1..=turns {
        let mut call = llm_call(turn, (10, 1), None);
        call.timestamp = start + u64::from(turn);
        lines.push(Entry::Event(call));
    }
    lines.extend(end.map(|end| at(start + 100, end)));
    lines
}

fn answered() -> Option<EventData> {
    Some(EventData::Final {
        content: "done".into(),
        turns: 1,
        usage: Usage::default(),
    })
}

#[test]
fn find_without_id_takes_a_persons_session_or_an_answered_one_by_last_activity() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("sessions");
    std::fs::create_dir(&dir).unwrap();
    let here = tmp.path().join("here");
    std::fs::create_dir(&here).unwrap();
    let (tui, exec) = (Some("tui"), Some("exec"));
    // A person's session started first and was taken up again last; another started later
    // and was left earlier.
    let mut again = a_run(1_000, 1, answered());
    again.extend(a_run(9_000, 1, answered()));
    let theirs = made_in(tui, &dir, "20240101-000000-aaaaaa", 1_000, &here, &again);
    made_in(
        tui,
        &dir,
        "20240101-000005-bbbbbb",
        5_000,
        &here,
        &a_run(5_000, 2, answered()),
    );
    // Headless runs since: failed at once, killed before an answer, cancelled after one.
    let failed = Some(EventData::Error {
        kind: "provider".into(),
        message: "unreachable".into(),
    });
    let cancelled = Some(EventData::Cancelled {
        running: "shell".into(),
    });
    made_in(
        exec,
        &dir,
        "20240101-000010-cccccc",
        10_000,
        &here,
        &a_run(10_000, 0, failed),
    );
    made_in(
        exec,
        &dir,
        "20240101-000011-dddddd",
        11_000,
        &here,
        &a_run(11_000, 0, None),
    );
    made_in(
        exec,
        &dir,
        "20240101-000012-eeeeee",
        12_000,
        &here,
        &a_run(12_000, 1, cancelled),
    );
    // A file from before kinds were recorded, killed mid-run.
    made_in(
        None,
        &dir,
        "20240101-000008-ffffff",
        8_000,
        &here,
        &a_run(8_000, 1, None),
    );

    let listed = session::list(&dir);
    let shown: Vec<(&str, Option<SessionKind>, Outcome, u64)> = (listed.iter())
        .map(|s| (&s.id[16..], s.kind, s.outcome, s.last_activity))
        .collect();
    let (t, e) = (Some(SessionKind::Tui), Some(SessionKind::Exec));
    assert_eq!(
        shown,
        [
            ("eeeeee", e, Outcome::Cancelled, 12_100),
            ("dddddd", e, Outcome::Empty, 11_000),
            ("cccccc", e, Outcome::Failed, 10_100),
            ("aaaaaa", t, Outcome::Answered, 9_100),
            ("ffffff", None, Outcome::Interrupted, 8_001),
            ("bbbbbb", t, Outcome::Answered, 5_100),
        ],
        "newest activity first"
    );
    assert_eq!(session::find(&dir, None, &here).unwrap(), theirs);

    // A headless run that answered is a conversation too, once it is the newest.
    let answer = made_in(
        exec,
        &dir,
        "20240101-000013-gggggg",
        13_000,
        &here,
        &a_run(13_000, 1, answered()),
    );
    assert_eq!(session::find(&dir, None, &here).unwrap(), answer);

    // Where there are only headless runs that did not answer, that is said.
    let bare = tmp.path().join("bare");
    std::fs::create_dir(&bare).unwrap();
    made_in(
        exec,
        &dir,
        "20240101-000020-hhhhhh",
        20_000,
        &bare,
        &a_run(20_000, 0, None),
    );
    made_in(
        None,
        &dir,
        "20240101-000021-iiiiii",
        21_000,
        &bare,
        &a_run(21_000, 0, None),
    );
    let err = session::find(&dir, None, &bare).unwrap_err();
    assert!(matches!(
        err,
        SessionError::NoConversationForWorkdir { runs: 2, .. }
    ));
    assert_eq!(
        err.to_string(),
        format!(
            "no conversation to resume in {}: its 2 saved sessions are headless runs that did not answer; 'taco sessions' lists them, '--resume ID' picks one",
            bare.display()
        )
    );
    // By id, any session can be resumed.
    let empty = session::find(&dir, Some("20240101-000020"), &bare).unwrap();
    assert!(empty.ends_with("20240101-000020-hhhhhh.jsonl"));
}

#[test]
fn format_list_shows_kind_last_activity_turns_and_outcome() {
    let now = 1_709_251_198_999;
    assert_eq!(
        session::format_list(&[], now, session::Look::Plain),
        "no sessions yet\n"
    );
    let sessions = [
        Summary {
            id: "20240229-235958-abcdef".into(),
            path: "/d/20240229-235958-abcdef.jsonl".into(),
            started: now - 3_600_000,
            workdir: "/home/me/project".into(),
            provider: "demo".into(),
            model: "m".into(),
            first_prompt: Some(
                "please look at\nthe failing test in tests/session.rs and fix whatever is wrong with it"
                    .into(),
            ),
            turns: 12,
            tokens: Usage {
                input_tokens: 12_345,
                output_tokens: 678,
                cached_tokens: 0,
            },
            size: 0,
            last_activity: now - 4 * 60_000,
            kind: Some(SessionKind::Tui),
            outcome: Outcome::Answered,
        },
        Summary {
            id: "20240101-000000-000000".into(),
            path: "/d/20240101-000000-000000.jsonl".into(),
            started: 1_704_067_200_000,
            workdir: "/tmp".into(),
            provider: "demo".into(),
            model: "m".into(),
            first_prompt: None,
            turns: 0,
            tokens: Usage::default(),
            size: 0,
            last_activity: now - 3 * 86_400_000,
            kind: Some(SessionKind::Exec),
            outcome: Outcome::Empty,
        },
        Summary {
            id: "20231231-000000-111111".into(),
            path: "/d/20231231-000000-111111.jsonl".into(),
            started: 1_703_980_800_000,
            workdir: "/tmp".into(),
            provider: "demo".into(),
            model: "m".into(),
            first_prompt: Some("old".into()),
            turns: 3,
            tokens: Usage::default(),
            size: 0,
            last_activity: now - 5 * 86_400_000,
            kind: None,
            outcome: Outcome::Interrupted,
        },
    ];
    let text = session::format_list(&sessions, now, session::Look::Plain);
    assert!(!text.contains('\x1b'), "plain text: {text:?}");
    assert_eq!(
        text,
        concat!(
            "ID                      KIND  LAST ACTIVE  TURNS  OUTCOME      TOKENS IN/OUT  WORKDIR           FIRST PROMPT\n",
            "20240229-235958-abcdef  tui   4 min ago       12  answered     12.3k/678      /home/me/project  please look at the failing test in tests/session.…\n",
            "20240101-000000-000000  exec  3 d ago          0  empty        0/0            /tmp              -\n",
            "20231231-000000-111111  -     5 d ago          3  interrupted  0/0            /tmp              old\n",
        )
    );
    // On a terminal the empty run is greyed out, and only it.
    let shaded = session::format_list(&sessions, now, session::Look::Terminal);
    let lines: Vec<&str> = shaded.lines().collect();
    assert_eq!(
        lines[2],
        "\x1b[2m20240101-000000-000000  exec  3 d ago          0  empty        0/0            /tmp              -\x1b[22m"
    );
    assert!(
        !lines[1].contains('\x1b') && !lines[3].contains('\x1b'),
        "{shaded:?}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn loading_never_panics_on_any_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("x.jsonl");
        std::fs::write(&path, &bytes).unwrap();
        let _ = session::load(&path);
        let _ = session::list(tmp.path());
        let _ = session::find(tmp.path(), None, tmp.path());
    }

    #[test]
    fn good_lines_survive_any_damaged_lines_between_them(
        noise in proptest::collection::vec("[^\n]{0,40}", 1..6),
    ) {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("x.jsonl");
        let good = serde_json::to_string(&run_started("kept")).unwrap();
        let mut text = String::new();
        for n in &noise {
            text.push_str(&good);
            text.push('\n');
            text.push_str(n);
            text.push('\n');
        }
        std::fs::write(&path, text).unwrap();
        let loaded = session::load(&path).unwrap();
        let kept = loaded.entries.iter().filter(|e| **e == Entry::Event(run_started("kept"))).count();
        prop_assert_eq!(kept, noise.len());
    }
}
