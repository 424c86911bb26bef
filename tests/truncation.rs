//! Tool results are cut once, by the tool, to fit `max_output_bytes` as the model receives
//! them (compact JSON, escapes included), keeping their structure.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Value, json};
use taco::tools::runner::cap_output;
use taco::tools::{Tool, ToolContext, ToolError, ToolReply, ToolSettings, builtin};
use tokio_util::sync::CancellationToken;

const CAP: usize = 64 * 1024;

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    ctx: ToolContext,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let ctx = ToolContext {
        workdir: root.clone(),
        settings: Arc::new(ToolSettings {
            max_output_bytes: CAP,
            allow_private: vec!["127.0.0.1".into()],
            ..Default::default()
        }),
        cancel: CancellationToken::new(),
        call: String::new(),
        progress: None,
        seen: None,
        trace: None,
    };
    Fixture {
        _dir: dir,
        root,
        ctx,
    }
}

async fn call(name: &str, args: Value, ctx: &ToolContext) -> Result<Value, ToolError> {
    let tool: Arc<dyn Tool> = builtin::all()
        .into_iter()
        .find(|t| t.name() == name)
        .unwrap();
    match tool.call(args, ctx).await? {
        ToolReply::Done(value) => Ok(value),
        other => panic!("expected a result, got {other:?}"),
    }
}

/// The result as the model gets it fits the cap, and was not cut by the runner's cap.
fn assert_fits(result: &Value) -> usize {
    let len = result.to_string().len();
    assert!(len <= CAP, "{len} bytes > {CAP}");
    assert_eq!(cap_output(result.clone(), CAP), *result);
    len
}

/// A line of varied length and characters, including ones JSON escapes.
fn line(rng: &mut fastrand::Rng) -> String {
    const PIECES: [&str; 12] = [
        "a", "word ", "\"", "\\", "\t", "\u{1}", "\u{1f}", "é", "✓", "🦀", "\r", "{}",
    ];
    let len = match rng.u8(..) {
        0 => 0,
        1 => rng.usize(200..2000),
        _ => rng.usize(1..30),
    };
    (0..len)
        .map(|_| PIECES[rng.usize(..PIECES.len())])
        .collect()
}

#[tokio::test]
async fn read_file_pages_through_200000_lines_by_next_offset() {
    let f = fixture();
    let mut rng = fastrand::Rng::with_seed(10);
    let mut text = String::new();
    for i in 0..200_000 {
        text.push_str(&line(&mut rng));
        // The last line has no newline, as a file may end.
        if i < 199_999 {
            text.push('\n');
        }
    }
    std::fs::write(f.root.join("big.txt"), &text).unwrap();

    let mut read = String::new();
    let mut offset = json!(1);
    let mut pages = 0;
    let mut biggest = 0;
    while !offset.is_null() {
        let r = call(
            "read_file",
            json!({"path": "big.txt", "offset": offset}),
            &f.ctx,
        )
        .await
        .unwrap();
        biggest = biggest.max(assert_fits(&r));
        assert_eq!(r["total_lines"], 200_000, "{}", r["note"]);
        assert_eq!(r["start_line"], offset);
        let end = r["end_line"].as_u64().unwrap();
        read.push_str(r["content"].as_str().unwrap());
        offset = r["next_offset"].clone();
        if offset.is_null() {
            assert_eq!((end, &r["truncated"]), (200_000, &json!(false)));
        } else {
            assert_eq!(offset, json!(end + 1));
            assert_eq!(r["truncated"], true);
            let note = r["note"].as_str().unwrap();
            assert!(note.contains(&format!("offset={offset}")), "{note}");
        }
        pages += 1;
        assert!(pages < 10_000, "paging does not end");
    }
    assert!(read == text, "the pages put together are not the file");
    // The pages are full: the cap is used, not a guess far below it.
    assert!(biggest > CAP - 2048, "{biggest}");
    assert!(pages > 20, "{pages}");
}

#[tokio::test]
async fn read_file_cuts_a_line_longer_than_the_cap_and_moves_past_it() {
    let f = fixture();
    let long = "\"é".repeat(350_000);
    std::fs::write(f.root.join("long.txt"), format!("{long}\nafter\n")).unwrap();
    let r = call("read_file", json!({"path": "long.txt"}), &f.ctx)
        .await
        .unwrap();
    assert_fits(&r);
    let content = r["content"].as_str().unwrap();
    assert!(
        content.len() > CAP / 4 && long.starts_with(content),
        "{}",
        content.len()
    );
    assert_eq!(
        (&r["start_line"], &r["end_line"], &r["next_offset"]),
        (&json!(1), &json!(1), &json!(2))
    );
    assert_eq!(
        (&r["total_lines"], &r["truncated"]),
        (&json!(2), &json!(true))
    );
    let note = r["note"].as_str().unwrap();
    assert!(
        note.contains("1050001 bytes") && note.contains("offset=2"),
        "{note}"
    );

    let r = call(
        "read_file",
        json!({"path": "long.txt", "offset": 2}),
        &f.ctx,
    )
    .await
    .unwrap();
    assert_eq!(
        (&r["content"], &r["next_offset"], &r["truncated"]),
        (&json!("after\n"), &json!(null), &json!(false))
    );

    // One line of 1 MB and nothing else: a single page that says the line was cut.
    std::fs::write(f.root.join("one.txt"), "x".repeat(1 << 20)).unwrap();
    let r = call("read_file", json!({"path": "one.txt"}), &f.ctx)
        .await
        .unwrap();
    assert_fits(&r);
    assert_eq!(
        (&r["next_offset"], &r["truncated"]),
        (&json!(null), &json!(true))
    );
    assert!(r["note"].as_str().unwrap().contains("1048576 bytes"), "{r}");
}

/// Splits a stream shown cut into (head, omitted, tail).
fn split_cut(text: &str) -> (&str, usize, &str) {
    let start = text.find("\n[... ").unwrap();
    let rest = &text[start + "\n[... ".len()..];
    let digits = rest.find(' ').unwrap();
    let omitted = rest[..digits].parse().unwrap();
    let tail = rest.split_once(" bytes omitted ...]\n").unwrap().1;
    (&text[..start], omitted, tail)
}

#[tokio::test]
async fn shell_keeps_head_and_tail_of_10_mb_on_each_stream_within_the_cap() {
    let f = fixture();
    // stdout is plain; every byte of stderr is a control character that JSON escapes as
    // \u0001, six bytes.
    let command = "printf START; head -c 10000000 /dev/zero | tr '\\0' a; printf END; \
                   { printf START; head -c 10000000 /dev/zero | tr '\\0' '\\001'; printf END; } >&2";
    let r = call("shell", json!({"command": command}), &f.ctx)
        .await
        .unwrap();
    let len = assert_fits(&r);
    assert!(len > CAP - 1024, "the cap is used: {len}");
    let total = 10_000_008;
    for (name, fill) in [("stdout", 'a'), ("stderr", '\u{1}')] {
        let text = r[name].as_str().unwrap();
        let (head, omitted, tail) = split_cut(text);
        assert!(head.starts_with("START") && tail.ends_with("END"), "{name}");
        assert!(
            head[5..].chars().all(|c| c == fill)
                && tail[..tail.len() - 3].chars().all(|c| c == fill)
        );
        assert_eq!(head.len() + omitted + tail.len(), total, "{name}");
        assert_eq!(r[format!("{name}_omitted")], omitted, "{name}");
        assert!(
            head.len() > 1000 && tail.len() > 1000,
            "{name}: {} {}",
            head.len(),
            tail.len()
        );
        let note = r["note"].as_str().unwrap();
        assert!(
            note.contains(&format!("{name} was {total} bytes")),
            "{note}"
        );
    }
    // One budget, shared evenly: stderr costs six times as much per byte, so it shows less.
    let shown = |name: &str| r[name].as_str().unwrap().len();
    assert!(shown("stdout") > 4 * shown("stderr"));
}

#[tokio::test]
async fn shell_gives_a_tiny_stream_whole_and_the_rest_to_the_other() {
    let f = fixture();
    let command = "echo 'tiny \"warning\"' >&2; head -c 10000000 /dev/zero | tr '\\0' x";
    let r = call("shell", json!({"command": command}), &f.ctx)
        .await
        .unwrap();
    let len = assert_fits(&r);
    assert_eq!(r["stderr"], "tiny \"warning\"\n");
    assert_eq!(r.get("stderr_omitted"), None);
    let (head, omitted, tail) = split_cut(r["stdout"].as_str().unwrap());
    assert_eq!(head.len() + omitted + tail.len(), 10_000_000);
    assert_eq!(r["stdout_omitted"], omitted);
    assert!(
        len > CAP - 1024 && head.len() + tail.len() > CAP - 1024,
        "{len}"
    );
}

#[tokio::test]
async fn a_timed_out_command_quotes_its_output_within_the_cap() {
    let f = fixture();
    let command = "head -c 3000000 /dev/zero | tr '\\0' '\"'; head -c 3000000 /dev/zero | tr '\\0' '\\002' >&2; sleep 30";
    let err = call(
        "shell",
        json!({"command": command, "timeout_secs": 2}),
        &f.ctx,
    )
    .await
    .unwrap_err();
    let message = err.to_string();
    assert!(
        message.starts_with("command timed out"),
        "{}",
        &message[..100]
    );
    assert!(
        message.contains("stdout so far:\n\"\"\"") && message.contains("stderr so far:\n\u{2}")
    );
    let len = json!({ "error": message }).to_string().len();
    assert!(len <= CAP && len > CAP - 1024, "{len}");
}

#[tokio::test]
async fn search_files_results_fit_the_cap() {
    let f = fixture();
    let line = format!("hit {}\n", "\"\\\u{1}".repeat(90));
    std::fs::write(f.root.join("quotes.txt"), line.repeat(2000)).unwrap();
    let r = call(
        "search_files",
        json!({"pattern": "hit", "max_results": 1000}),
        &f.ctx,
    )
    .await
    .unwrap();
    assert_fits(&r);
    let count = r["count"].as_u64().unwrap();
    assert_eq!(r["matches"].as_array().unwrap().len() as u64, count);
    assert!(count > 20 && r["truncated"] == true, "{count}");
    assert!(
        r["note"].as_str().unwrap().contains("capped"),
        "{}",
        r["note"]
    );
}

#[tokio::test]
async fn list_dir_results_fit_the_cap() {
    let f = fixture();
    for i in 0..1000 {
        let name = format!("{i:04}{}", "\"\\\u{1}".repeat(60));
        std::fs::write(f.root.join(name), "").unwrap();
    }
    let r = call("list_dir", json!({}), &f.ctx).await.unwrap();
    assert_fits(&r);
    let shown = r["entries"].as_array().unwrap().len();
    assert_eq!((&r["total"], &r["truncated"]), (&json!(1000), &json!(true)));
    assert!(shown > 50 && shown < 1000, "{shown}");
    assert!(
        r["note"]
            .as_str()
            .unwrap()
            .contains(&format!("first {shown} of 1000"))
    );
}

/// Serves `body` as text/plain to every request; returns the base URL.
fn serve(body: Vec<u8>) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut request = Vec::new();
            let mut buf = [0u8; 1024];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => request.extend_from_slice(&buf[..n]),
                }
            }
            let header = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream
                .write_all(header.as_bytes())
                .and_then(|()| stream.write_all(&body));
        }
    });
    base
}

#[tokio::test]
async fn web_fetch_results_fit_the_cap() {
    let f = fixture();
    let base = serve("{\"k\": \"\\u0001\"}\t".repeat(20_000).into_bytes());
    let r = call("web_fetch", json!({"url": format!("{base}/data")}), &f.ctx)
        .await
        .unwrap();
    assert_fits(&r);
    let text = r["text"].as_str().unwrap();
    assert!(
        text.starts_with("{\"k\"") && text.len() > CAP / 2,
        "{}",
        text.len()
    );
    assert_eq!(r["truncated"], true);
    assert!(
        r["note"].as_str().unwrap().contains("only the first"),
        "{}",
        r["note"]
    );
}

#[test]
fn the_last_resort_cap_gives_a_json_value_that_keeps_its_keys() {
    let files: Vec<Value> = (0..5000)
        .map(|i| json!({"path": format!("src/{i}.rs"), "lines": [i, i + 1], "text": "\"x\"".repeat(50)}))
        .collect();
    let value = json!({
        "files": files,
        "summary": {"count": 5000, "log": "\u{1}".repeat(200_000)},
        "ok": true,
    });
    let original = value.to_string().len();
    let capped = cap_output(value, CAP);
    let text = capped.to_string();
    assert!(text.len() <= CAP, "{}", text.len());
    let reparsed: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(reparsed, capped);
    assert_eq!(
        (&capped["truncated"], &capped["original_bytes"]),
        (&json!(true), &json!(original))
    );
    let partial = &capped["partial"];
    assert_eq!(
        (&partial["ok"], &partial["summary"]["count"]),
        (&json!(true), &json!(5000))
    );
    assert!(
        partial["summary"]["log"]
            .as_str()
            .unwrap()
            .contains("…[cut ")
    );
    let files = partial["files"].as_array().unwrap();
    assert!(files.len() > 10);
    assert_eq!(files[0]["path"], "src/0.rs");
    assert!(
        files
            .last()
            .unwrap()
            .as_str()
            .unwrap()
            .contains("more items cut")
    );
}
