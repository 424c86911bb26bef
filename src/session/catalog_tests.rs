#![allow(clippy::unwrap_used)]

use std::fs::{FileTimes, OpenOptions};

use super::*;
use crate::session::{list, list_with_problems};

use crate::run_model::RunModel;
use crate::session::testing::{HEADER, run};

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
}

fn journal(dir: &Path) -> String {
    std::fs::read_to_string(dir.join(INDEX_FILE)).unwrap_or_default()
}

#[test]
fn a_listing_builds_the_index_and_the_next_one_reads_it_instead_of_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("20261101-100000-aaaaaa.jsonl");
    write(
        &path,
        &format!("{HEADER}\n{}{}", run(1, "first", 10), run(2, "second", 5)),
    );
    let first = list(dir.path());
    assert_eq!(first.len(), 1);
    assert_eq!(first[0].first_prompt.as_deref(), Some("first"));
    assert_eq!(first[0].turns, 2);
    assert_eq!(first[0].tokens.input_tokens, 15);
    assert_eq!(first[0].size, std::fs::metadata(&path).unwrap().len());
    assert!(journal(dir.path()).contains("aaaaaa.jsonl"));

    // Same size, same time, other bytes: only the index can still say "first".
    let len = std::fs::metadata(&path).unwrap().len() as usize;
    let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
    write(&path, &"x".repeat(len));
    let file = File::options().write(true).open(&path).unwrap();
    file.set_times(FileTimes::new().set_modified(mtime))
        .unwrap();
    drop(file);
    assert_eq!(list(dir.path()), first);
}

#[test]
fn a_grown_file_is_read_from_where_its_row_ended_and_matches_a_rebuild() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("20261101-100000-aaaaaa.jsonl");
    write(&path, &format!("{HEADER}\n{}", run(1, "first", 10)));
    assert_eq!(list(dir.path())[0].turns, 1);
    let mut file = OpenOptions::new().append(true).open(&path).unwrap();
    file.write_all(run(2, "second", 7).as_bytes()).unwrap();
    drop(file);
    let grown = list(dir.path());
    assert_eq!(grown[0].turns, 2);
    assert_eq!(grown[0].tokens.output_tokens, 17);
    assert_eq!(grown[0].first_prompt.as_deref(), Some("first"));
    std::fs::remove_file(dir.path().join(INDEX_FILE)).unwrap();
    assert_eq!(list(dir.path()), grown);
}

#[test]
fn a_torn_last_line_is_counted_once_when_it_is_complete() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("20261101-100000-aaaaaa.jsonl");
    let second = run(2, "second", 7);
    let (head, tail) = second.split_at(second.len() - 20);
    write(&path, &format!("{HEADER}\n{}{head}", run(1, "first", 10)));
    let torn = list(dir.path());
    assert_eq!(
        torn[0].turns, 2,
        "the llm_call line is whole, the final is not"
    );
    let mut file = OpenOptions::new().append(true).open(&path).unwrap();
    file.write_all(tail.as_bytes()).unwrap();
    drop(file);
    let whole = list(dir.path());
    assert_eq!(whole[0].turns, 2);
    assert_eq!(whole[0].tokens.input_tokens, 17);
    assert_eq!(whole[0].size, std::fs::metadata(&path).unwrap().len());
}

#[test]
fn a_shrunk_or_rewritten_file_is_read_again_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("20261101-100000-aaaaaa.jsonl");
    write(
        &path,
        &format!("{HEADER}\n{}{}", run(1, "first", 10), run(2, "b", 1)),
    );
    assert_eq!(list(dir.path())[0].turns, 2);
    write(&path, &format!("{HEADER}\n{}", run(1, "other", 3)));
    let again = list(dir.path());
    assert_eq!(again[0].turns, 1);
    assert_eq!(again[0].first_prompt.as_deref(), Some("other"));
}

#[test]
fn files_that_are_no_sessions_are_reported_and_a_damaged_journal_costs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("20261101-100000-aaaaaa.jsonl"),
        &format!("{HEADER}\n{}", run(1, "first", 10)),
    );
    write(&dir.path().join("trace.jsonl"), &run(1, "t", 1));
    write(&dir.path().join("empty.jsonl"), "");
    write(
        &dir.path().join(INDEX_FILE),
        "not json\n{\"file\":3}\n\u{0}\u{1}garbage",
    );
    let (sessions, problems) = list_with_problems(dir.path());
    assert_eq!(sessions.len(), 1);
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(
        problems
            .iter()
            .any(|p| p.contains("trace.jsonl") && p.contains("header"))
    );
    assert!(
        problems
            .iter()
            .any(|p| p.contains("empty.jsonl") && p.contains("empty"))
    );
    // The rewrite left only good rows: one per file, problems included.
    let text = journal(dir.path());
    assert_eq!(text.lines().count(), 3, "{text}");
    assert!(text.lines().all(|l| serde_json::from_str::<Row>(l).is_ok()));
}

#[test]
fn rows_of_deleted_files_go_and_superseded_lines_are_compacted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("20261101-100000-aaaaaa.jsonl");
    write(&path, &format!("{HEADER}\n{}", run(1, "first", 10)));
    let mut indexer = Indexer::default();
    for _ in 0..100 {
        indexer.note(&path);
    }
    assert_eq!(journal(dir.path()).lines().count(), 100);
    assert_eq!(list(dir.path()).len(), 1);
    assert_eq!(journal(dir.path()).lines().count(), 1);
    std::fs::remove_file(&path).unwrap();
    assert!(list(dir.path()).is_empty());
    assert_eq!(journal(dir.path()), "");
}

#[test]
fn the_writer_notes_each_run_end_in_the_index() {
    use crate::event::Event;
    let dir = tempfile::tempdir().unwrap();
    let mut writer =
        crate::session::SessionWriter::create(dir.path(), "demo", "m", dir.path()).unwrap();
    let lines = run(1, "hello", 4);
    let mut expander = crate::session::compact::Expander::default();
    for line in lines.lines() {
        let mut value: serde_json::Value = serde_json::from_str(line).unwrap();
        expander.expand(&mut value);
        if value["type"] == "message" {
            let message = serde_json::from_value(value["data"].take()).unwrap();
            writer.message(&message).unwrap();
        } else {
            let event: Event = serde_json::from_value(value).unwrap();
            writer.event(&event).unwrap();
        }
    }
    let rows: Vec<Row> = journal(dir.path())
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 1, "one row, at the run's end");
    let tally = rows[0].tally.as_ref().unwrap();
    assert_eq!((tally.turns, tally.tokens.input_tokens), (1, 4));
    assert_eq!(tally.first_prompt.as_deref(), Some("hello"));
    assert_eq!(
        rows[0].size,
        std::fs::metadata(writer.path()).unwrap().len()
    );
    // The index matches the file, so a listing takes the row as it is.
    let listed = list(dir.path());
    assert_eq!(listed[0].id, writer.id());
    assert_eq!(listed[0].turns, 1);
}

#[test]
fn turns_and_tokens_match_the_run_model_on_a_whole_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("20261101-100000-aaaaaa.jsonl");
    // A sub-agent's call (tokens, no turn), a compaction (tokens) and a final (the run's
    // total, not counted again).
    let nested = r#"{"timestamp":5,"request_id":"r2","type":"llm_call","data":{"content":"sub","duration_ms":1,"finish_reason":"stop","message_count":2,"model":"m","new_messages":[],"tool_calls":[],"tools":[],"turn":1,"parent":"d1","usage":{"input_tokens":100,"output_tokens":1}}}"#;
    let compacted = r#"{"timestamp":6,"request_id":"r2","type":"compacted","data":{"trigger":"auto","before_tokens":9,"after_tokens":3,"summarized":4,"kept_from":3,"summary":"s","usage":{"input_tokens":20,"output_tokens":2},"duration_ms":1}}"#;
    let text = format!(
        "{HEADER}\n{}{}{nested}\n{compacted}\n{}",
        run(1, "a", 3),
        run(2, "b", 4),
        run(3, "c", 5)
    );
    write(&path, &text);
    let loaded = crate::session::load(&path).unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let model = RunModel::replay(loaded.entries.iter().filter_map(|e| match e {
        Entry::Event(e) => Some(e),
        Entry::Message(_) => None,
    }));
    let listed = list(dir.path());
    assert_eq!(model.model_calls(), 3);
    assert_eq!(model.usage().input_tokens, 3 + 4 + 5 + 100 + 20);
    assert_eq!(listed[0].turns, model.model_calls());
    assert_eq!(listed[0].tokens, model.usage());
}

#[test]
fn a_listing_that_changes_nothing_keeps_the_journal_and_a_changed_file_rewrites_only_its_row() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("20261101-100000-aaaaaa.jsonl");
    let b = dir.path().join("20261101-100000-bbbbbb.jsonl");
    write(&a, &format!("{HEADER}\n{}", run(1, "first", 10)));
    write(
        &b,
        &format!(
            "{}\n{}",
            HEADER.replace("aaaaaa", "bbbbbb"),
            run(1, "other", 3)
        ),
    );
    let first = list(dir.path());
    assert_eq!(first.len(), 2);
    // Rows kept as they were read are written back byte for byte; a row with a field the
    // list does not read (tokens by model) keeps it.
    let before = journal(dir.path());
    assert!(before.contains("by_model"), "{before}");
    let stamp = std::fs::metadata(dir.path().join(INDEX_FILE))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(list(dir.path()), first);
    assert_eq!(journal(dir.path()), before);
    assert_eq!(
        std::fs::metadata(dir.path().join(INDEX_FILE))
            .unwrap()
            .modified()
            .unwrap(),
        stamp,
        "an unchanged listing does not rewrite the journal"
    );
    let mut file = OpenOptions::new().append(true).open(&b).unwrap();
    file.write_all(run(2, "more", 4).as_bytes()).unwrap();
    drop(file);
    let grown = list(dir.path());
    let text = journal(dir.path());
    let a_line = before.lines().find(|l| l.contains("aaaaaa")).unwrap();
    assert!(text.lines().any(|l| l == a_line), "{text}");
    let rows: Vec<Row> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 2);
    let b_row = grown.iter().find(|s| s.id.ends_with("bbbbbb")).unwrap();
    assert_eq!((b_row.turns, b_row.tokens.input_tokens), (2, 7));
}

#[test]
fn a_row_with_escapes_or_missing_counts_is_matched_or_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("20261101-100000-aaaaaa.jsonl");
    write(&path, &format!("{HEADER}\n{}", run(1, "first", 10)));
    let first = list(dir.path());
    // The same row with its file name escaped still matches: the list borrows what it can
    // and owns what it must.
    // (Its turns are doctored so that only a matched row can say 42.)
    let escaped = journal(dir.path())
        .replace("aaaaaa.jsonl", "aaaaaa\\u002ejsonl")
        .replace("\"turns\":1,", "\"turns\":42,");
    assert!(escaped.contains("\"turns\":42,"), "{escaped}");
    write(&dir.path().join(INDEX_FILE), &escaped);
    assert_eq!(list(dir.path())[0].turns, 42);
    // A row without the message count a resume needs is no row: the file is read again.
    let row: Row = serde_json::from_str(journal(dir.path()).trim()).unwrap();
    let mut value = serde_json::to_value(&row).unwrap();
    value["tally"].as_object_mut().unwrap().remove("messages");
    value["tally"]["turns"] = 99.into();
    write(&dir.path().join(INDEX_FILE), &format!("{value}\n"));
    assert_eq!(list(dir.path()), first);
    let again: Row = serde_json::from_str(journal(dir.path()).trim()).unwrap();
    let tally = again.tally.unwrap();
    assert_eq!((tally.turns, tally.messages), (1, 2));
}

#[test]
fn a_row_from_before_runs_were_kept_learns_them_from_the_files_end_only() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("20261101-100000-aaaaaa.jsonl");
    let header = HEADER.replace(r#""started":1000"#, r#""started":1000,"kind":"tui""#);
    let killed = r#"{"timestamp":1500,"request_id":"r3","type":"run_started","data":{"prompt":"more","provider":"demo","model":"m","max_turns":10}}"#;
    write(
        &path,
        &format!(
            "{header}\n{}{}{killed}\n",
            run(1, "first", 10),
            run(2, "b", 1)
        ),
    );
    list(dir.path());
    // The row as a taco before this wrote it: no kind, no runs; its turns doctored so that
    // only a row that was kept (not rebuilt from the whole file) can say 42.
    let row: Row = serde_json::from_str(journal(dir.path()).trim()).unwrap();
    let mut value = serde_json::to_value(&row).unwrap();
    let tally = value["tally"].as_object_mut().unwrap();
    assert!(tally.remove("runs").is_some() && tally.remove("kind").is_some());
    tally.insert("turns".into(), 42.into());
    write(&dir.path().join(INDEX_FILE), &format!("{value}\n"));
    let listed = list(dir.path());
    assert_eq!(listed[0].turns, 42, "the row was kept");
    assert_eq!(listed[0].kind, Some(crate::session::SessionKind::Tui));
    assert_eq!(listed[0].outcome, crate::session::Outcome::Interrupted);
    assert_eq!(listed[0].last_activity, 1500);
    // The upgraded row is written back, and grows as the file does.
    let again: Row = serde_json::from_str(journal(dir.path()).trim()).unwrap();
    assert!(again.tally.as_ref().unwrap().runs.is_some());
    let end = r#"{"timestamp":1600,"request_id":"r3","type":"final","data":{"content":"x","turns":0,"usage":{"input_tokens":0,"output_tokens":0}}}"#;
    let mut file = OpenOptions::new().append(true).open(&path).unwrap();
    writeln!(file, "{end}").unwrap();
    drop(file);
    let grown = list(dir.path());
    assert_eq!(
        (grown[0].turns, grown[0].outcome, grown[0].last_activity),
        (42, crate::session::Outcome::Answered, 1600)
    );
}

#[test]
fn the_writer_says_where_a_session_was_started_and_the_index_keeps_it() {
    use crate::session::{Outcome, SessionKind, SessionWriter};
    let dir = tempfile::tempdir().unwrap();
    let exec =
        SessionWriter::create_for(SessionKind::Exec, dir.path(), "demo", "m", dir.path()).unwrap();
    let text = std::fs::read_to_string(exec.path()).unwrap();
    assert!(text.contains(r#""kind":"exec""#), "{text}");
    let header = crate::session::header_of(exec.path()).unwrap();
    assert_eq!(header.kind, Some(SessionKind::Exec));
    let listed = list(dir.path());
    assert_eq!(listed[0].kind, Some(SessionKind::Exec));
    assert_eq!(listed[0].outcome, Outcome::Empty, "no run yet");
    assert_eq!(listed[0].last_activity, header.started);
}
