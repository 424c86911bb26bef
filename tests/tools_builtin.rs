//! The built-in tools against a real temporary workspace, a real shell and a loopback server.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use std::io::{Read, Write};
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use taco::tools::{Policy, Tool, ToolContext, ToolError, ToolReply, ToolSettings, builtin};
use tokio_util::sync::CancellationToken;

/// A workspace `<tmp>/ws` next to a directory `<tmp>/outside` that must stay untouched.
struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
    ctx: ToolContext,
}

fn fixture_with(settings: ToolSettings) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let (root, outside) = (base.join("ws"), base.join("outside"));
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "top secret\n").unwrap();
    let ctx = ToolContext {
        workdir: root.clone(),
        settings: Arc::new(settings),
        cancel: CancellationToken::new(),
        call: String::new(),
        progress: None,
        seen: None,
        trace: None,
    };
    Fixture {
        _dir: dir,
        root,
        outside,
        ctx,
    }
}

fn fixture() -> Fixture {
    fixture_with(ToolSettings::default())
}

fn tool(name: &str) -> Arc<dyn Tool> {
    builtin::all()
        .into_iter()
        .find(|t| t.name() == name)
        .unwrap()
}

async fn call(name: &str, args: Value, ctx: &ToolContext) -> Result<Value, ToolError> {
    let tool = tool(name);
    tool.validate(&args).map_err(ToolError::InvalidArguments)?;
    match tool.call(args, ctx).await? {
        ToolReply::Done(value) => Ok(value),
        other => panic!("built-in tools finish in one call, got {other:?}"),
    }
}

fn assert_refused(result: Result<Value, ToolError>) {
    match result {
        Err(ToolError::Failed(message)) => assert!(
            message.contains("outside the workspace") || message.contains("symlink"),
            "unexpected message: {message}"
        ),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn schemas_are_objects_with_the_right_required_fields() {
    let expected: [(&str, &[&str]); 10] = [
        ("list_dir", &[]),
        ("read_file", &["path"]),
        ("write_file", &["path", "content"]),
        ("edit_file", &["path", "edits"]),
        ("search_files", &["pattern"]),
        ("shell", &["command"]),
        ("web_fetch", &["url"]),
        ("delegate", &["task"]),
        ("create_code", &["description", "language", "path"]),
        ("todo_write", &["todos"]),
    ];
    let tools = builtin::all();
    assert_eq!(tools.len(), expected.len());
    for (tool, (name, required)) in tools.iter().zip(expected) {
        assert_eq!(tool.name(), name);
        assert!(!tool.description().is_empty());
        let schema = tool.parameters();
        assert_eq!(schema["type"], "object", "{name}: {schema}");
        let properties = schema["properties"].as_object().unwrap();
        for field in required {
            assert!(
                properties[*field]["description"].is_string(),
                "{name}.{field} has no description"
            );
        }
        let mut got: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().map(|v| v.as_str().unwrap()).collect())
            .unwrap_or_default();
        got.sort_unstable();
        let mut want = required.to_vec();
        want.sort_unstable();
        assert_eq!(got, want, "{name}");
        // Models add stray keys; they must not be rejected.
        if required.is_empty() {
            assert!(tool.validate(&json!({"stray": 1})).is_ok());
        }
    }
}

#[test]
fn default_policies() {
    let settings = ToolSettings {
        allow_hosts: vec!["example.com".into()],
        ..Default::default()
    };
    let policy = |name: &str, args: Value| tool(name).default_policy(&args, &settings);
    assert_eq!(policy("list_dir", json!({})), Policy::Allow);
    assert_eq!(policy("read_file", json!({"path": "a"})), Policy::Allow);
    assert_eq!(
        policy("search_files", json!({"pattern": "a"})),
        Policy::Allow
    );
    assert_eq!(
        policy(
            "edit_file",
            json!({"path": "a", "edits": [{"old_string": "x", "new_string": "y"}]})
        ),
        Policy::Ask
    );
    assert_eq!(
        policy("write_file", json!({"path": "a", "content": ""})),
        Policy::Ask
    );
    assert_eq!(policy("shell", json!({"command": "ls"})), Policy::Ask);
    assert_eq!(
        policy("web_fetch", json!({"url": "https://example.com/x"})),
        Policy::Allow
    );
    assert_eq!(
        policy("web_fetch", json!({"url": "https://api.example.com/"})),
        Policy::Allow
    );
    assert_eq!(
        policy("web_fetch", json!({"url": "https://notexample.com/"})),
        Policy::Ask
    );
    assert_eq!(
        policy("web_fetch", json!({"url": "https://example.com.evil.io/"})),
        Policy::Ask
    );
    let none = ToolSettings::default();
    assert_eq!(
        tool("web_fetch").default_policy(&json!({"url": "https://example.com/"}), &none),
        Policy::Ask
    );
}

#[tokio::test]
async fn list_dir_lists_dirs_first_with_sizes() {
    let f = fixture();
    std::fs::create_dir(f.root.join("src")).unwrap();
    std::fs::write(f.root.join("b.txt"), "hello").unwrap();
    std::fs::write(f.root.join("a.txt"), "").unwrap();
    std::fs::write(f.root.join("src/main.rs"), "fn main() {}").unwrap();
    let result = call("list_dir", json!({}), &f.ctx).await.unwrap();
    assert_eq!(result["path"], ".");
    assert_eq!(
        result["entries"],
        json!([
            {"name": "src", "type": "dir"},
            {"name": "a.txt", "type": "file", "size": 0},
            {"name": "b.txt", "type": "file", "size": 5},
        ])
    );
    let sub = call("list_dir", json!({"path": "src"}), &f.ctx)
        .await
        .unwrap();
    assert_eq!(sub["entries"][0]["name"], "main.rs");
}

#[tokio::test]
async fn list_dir_refuses_escapes() {
    let f = fixture();
    symlink(&f.outside, f.root.join("out")).unwrap();
    assert_refused(call("list_dir", json!({"path": ".."}), &f.ctx).await);
    assert_refused(call("list_dir", json!({"path": "/etc"}), &f.ctx).await);
    assert_refused(call("list_dir", json!({"path": "out"}), &f.ctx).await);
    // The symlink itself is listed, not followed.
    let root = call("list_dir", json!({"path": "."}), &f.ctx)
        .await
        .unwrap();
    assert_eq!(
        root["entries"][0],
        json!({"name": "out", "type": "symlink"})
    );
}

#[tokio::test]
async fn read_file_windows_and_truncation() {
    // The smallest cap the config allows; the whole result (not just its content) fits in it.
    let f = fixture_with(ToolSettings {
        max_output_bytes: 1024,
        ..Default::default()
    });
    let text: String = (1..=300).map(|i| format!("line {i}\n")).collect();
    std::fs::write(f.root.join("lines.txt"), &text).unwrap();
    let r = call(
        "read_file",
        json!({"path": "lines.txt", "offset": 10, "limit": 3}),
        &f.ctx,
    )
    .await
    .unwrap();
    assert_eq!(r["content"], "line 10\nline 11\nline 12\n");
    assert_eq!(
        (r["total_lines"].clone(), r["truncated"].clone()),
        (json!(300), json!(true))
    );
    assert_eq!(r["next_offset"], 13);
    assert!(r["note"].as_str().unwrap().contains("offset=13"), "{r}");

    let r = call("read_file", json!({"path": "lines.txt"}), &f.ctx)
        .await
        .unwrap();
    assert!(r.to_string().len() <= 1024, "{r}");
    assert_eq!(r["truncated"], true);
    let next = r["end_line"].as_u64().unwrap() + 1;
    assert_eq!(r["next_offset"], next);
    assert!(
        r["note"]
            .as_str()
            .unwrap()
            .contains(&format!("offset={next}")),
        "{r}"
    );

    let r = call(
        "read_file",
        json!({"path": "lines.txt", "offset": 298}),
        &f.ctx,
    )
    .await
    .unwrap();
    assert_eq!(
        (r["content"].as_str().unwrap(), &r["truncated"]),
        ("line 298\nline 299\nline 300\n", &json!(false))
    );
    assert_eq!(r["next_offset"], Value::Null);
}

#[tokio::test]
async fn read_file_binary_and_non_utf8() {
    let f = fixture();
    std::fs::write(f.root.join("blob.bin"), b"\x89PNG\0\0\0data").unwrap();
    std::fs::write(f.root.join("latin1.txt"), b"caf\xe9\n").unwrap();
    let err = call("read_file", json!({"path": "blob.bin"}), &f.ctx)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("binary"), "{err}");
    let r = call("read_file", json!({"path": "latin1.txt"}), &f.ctx)
        .await
        .unwrap();
    assert_eq!(r["content"], "caf\u{fffd}\n");
    let fifo = std::ffi::CString::new(f.root.join("fifo").to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    for name in ["read_file", "write_file"] {
        let args = json!({"path": "fifo", "content": ""});
        let err = call(name, args, &f.ctx).await.unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
    }
    let missing = call("read_file", json!({"path": "nope.txt"}), &f.ctx)
        .await
        .unwrap_err();
    assert!(missing.to_string().contains("does not exist"), "{missing}");
    let invalid = call("read_file", json!({"offset": 1}), &f.ctx)
        .await
        .unwrap_err();
    assert!(
        matches!(invalid, ToolError::InvalidArguments(_)),
        "{invalid:?}"
    );
}

#[tokio::test]
async fn read_file_refuses_escapes() {
    let f = fixture();
    symlink(f.outside.join("secret.txt"), f.root.join("link.txt")).unwrap();
    symlink(&f.outside, f.root.join("outdir")).unwrap();
    assert_refused(
        call(
            "read_file",
            json!({"path": "../outside/secret.txt"}),
            &f.ctx,
        )
        .await,
    );
    assert_refused(call("read_file", json!({"path": "/etc/passwd"}), &f.ctx).await);
    assert_refused(call("read_file", json!({"path": "link.txt"}), &f.ctx).await);
    assert_refused(call("read_file", json!({"path": "outdir/secret.txt"}), &f.ctx).await);
    let inside = f.root.join("ok.txt");
    std::fs::write(&inside, "fine\n").unwrap();
    let r = call(
        "read_file",
        json!({"path": inside.to_str().unwrap()}),
        &f.ctx,
    )
    .await
    .unwrap();
    assert_eq!(r["content"], "fine\n");
}

#[tokio::test]
async fn write_file_creates_nested_dirs_and_overwrites() {
    let f = fixture();
    let r = call(
        "write_file",
        json!({"path": "a/b/c.txt", "content": "héllo"}),
        &f.ctx,
    )
    .await
    .unwrap();
    assert_eq!(
        r,
        json!({"path": "a/b/c.txt", "bytes_written": 6, "action": "created"})
    );
    assert_eq!(
        std::fs::read_to_string(f.root.join("a/b/c.txt")).unwrap(),
        "héllo"
    );
    let r = call(
        "write_file",
        json!({"path": "a/b/c.txt", "content": "x"}),
        &f.ctx,
    )
    .await
    .unwrap();
    assert_eq!(r["action"], "overwrote 1 line");
    assert_eq!(
        std::fs::read_to_string(f.root.join("a/b/c.txt")).unwrap(),
        "x"
    );
    let err = call("write_file", json!({"path": "a", "content": "x"}), &f.ctx)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("directory"), "{err}");
}

#[tokio::test]
async fn write_file_refuses_escapes() {
    let f = fixture();
    symlink(&f.outside, f.root.join("outdir")).unwrap();
    symlink(f.outside.join("secret.txt"), f.root.join("link.txt")).unwrap();
    symlink(f.outside.join("new.txt"), f.root.join("dangling.txt")).unwrap();
    let abs = f.outside.join("abs.txt");
    for path in [
        "../escape.txt",
        "../outside/secret.txt",
        "/etc/passwd",
        abs.to_str().unwrap(),
    ] {
        assert_refused(
            call(
                "write_file",
                json!({"path": path, "content": "pwned"}),
                &f.ctx,
            )
            .await,
        );
    }
    for path in [
        "outdir/new.txt",
        "outdir/deep/new.txt",
        "link.txt",
        "dangling.txt",
    ] {
        assert_refused(
            call(
                "write_file",
                json!({"path": path, "content": "pwned"}),
                &f.ctx,
            )
            .await,
        );
    }
    let mut names: Vec<String> = std::fs::read_dir(&f.outside)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["secret.txt"]);
    assert_eq!(
        std::fs::read_to_string(f.outside.join("secret.txt")).unwrap(),
        "top secret\n"
    );
    assert!(!f.root.parent().unwrap().join("escape.txt").exists());
}

#[tokio::test]
async fn search_files_honours_gitignore_outside_git() {
    let f = fixture();
    assert!(!f.root.join(".git").exists());
    let files: [(&str, &[u8]); 7] = [
        (".gitignore", b"ignored.txt\nbuild/\n"),
        ("src/lib.rs", b"fn one() {}\n// needle here\n"),
        ("notes.md", b"a needle in notes\n"),
        ("ignored.txt", b"needle\n"),
        ("build/out.rs", b"needle\n"),
        (".hidden/x.rs", b"needle\n"),
        ("data.bin", b"needle\0\0binary"),
    ];
    for (path, content) in files {
        let path = f.root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
    let r = call("search_files", json!({"pattern": "need+le"}), &f.ctx)
        .await
        .unwrap();
    let mut found: Vec<(String, u64)> = r["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["path"].as_str().unwrap().to_string(),
                m["line"].as_u64().unwrap(),
            )
        })
        .collect();
    found.sort();
    assert_eq!(
        found,
        [("notes.md".to_string(), 1), ("src/lib.rs".to_string(), 2)],
        "{r}"
    );
    assert_eq!(
        r["matches"][0]["text"].as_str().map(str::is_empty),
        Some(false)
    );

    let r = call(
        "search_files",
        json!({"pattern": "needle", "glob": "*.rs"}),
        &f.ctx,
    )
    .await
    .unwrap();
    assert_eq!(r["count"], 1);
    assert_eq!(r["matches"][0]["path"], "src/lib.rs");
    let r = call(
        "search_files",
        json!({"pattern": "needle", "path": "src"}),
        &f.ctx,
    )
    .await
    .unwrap();
    assert_eq!(r["count"], 1);
    assert_refused(
        call(
            "search_files",
            json!({"pattern": "x", "path": ".."}),
            &f.ctx,
        )
        .await,
    );
}

#[tokio::test]
async fn search_files_caps_results_and_rejects_bad_regex() {
    let f = fixture();
    std::fs::write(f.root.join("many.txt"), "hit\n".repeat(50)).unwrap();
    let r = call(
        "search_files",
        json!({"pattern": "hit", "max_results": 5}),
        &f.ctx,
    )
    .await
    .unwrap();
    assert_eq!(
        (r["count"].clone(), r["truncated"].clone()),
        (json!(5), json!(true))
    );
    assert!(r["note"].is_string());
    let err = call("search_files", json!({"pattern": "(unclosed"}), &f.ctx)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ToolError::InvalidArguments(m) if m.contains("regex")),
        "{err:?}"
    );
    f.ctx.cancel.cancel();
    let result = call("search_files", json!({"pattern": "hit"}), &f.ctx).await;
    assert_eq!(result, Err(ToolError::Failed("cancelled".into())));
}

#[tokio::test]
async fn shell_reports_output_and_exit_codes() {
    let f = fixture();
    let r = call(
        "shell",
        json!({"command": "echo out; echo err >&2; pwd"}),
        &f.ctx,
    )
    .await
    .unwrap();
    assert_eq!(r["exit_code"], 0);
    assert_eq!(r["stdout"], format!("out\n{}\n", f.root.display()));
    assert_eq!(r["stderr"], "err\n");
    assert_eq!(r["timed_out"], false);
    // A command that exits non-zero is a failed call (issue 27.2), with its whole result.
    let r = match call("shell", json!({"command": "echo partial; exit 3"}), &f.ctx).await {
        Err(ToolError::ExitNonzero(r)) => *r,
        other => panic!("exit 3 is a failed call: {other:?}"),
    };
    assert_eq!(
        (r["exit_code"].clone(), r["stdout"].clone()),
        (json!(3), json!("partial\n"))
    );
    assert!(r["note"].as_str().unwrap().contains("code 3"));
    let r = call("shell", json!({"command": "printf 'a\\377b'"}), &f.ctx)
        .await
        .unwrap();
    assert_eq!(r["stdout"], "a\u{fffd}b");
}

#[tokio::test]
async fn shell_caps_output_keeping_head_and_tail() {
    let f = fixture_with(ToolSettings {
        max_output_bytes: 1000,
        ..Default::default()
    });
    let command = "echo START; i=0; while [ $i -lt 5000 ]; do echo xxxxxxxxxxxxxxxxxxxx; i=$((i+1)); done; echo END";
    let r = call("shell", json!({"command": command}), &f.ctx)
        .await
        .unwrap();
    let out = r["stdout"].as_str().unwrap();
    assert!(
        out.starts_with("START\n") && out.ends_with("END\n"),
        "{out}"
    );
    assert!(
        out.contains("bytes omitted") && out.len() < 1100,
        "{}",
        out.len()
    );
    assert!(r["note"].as_str().unwrap().contains("stdout"));
}

#[tokio::test]
async fn shell_background_job_holding_the_output_does_not_hang() {
    let f = fixture();
    let args = json!({"command": "echo started; sleep 30 & echo $! > bg; echo done"});
    let r = tokio::time::timeout(Duration::from_secs(20), call("shell", args, &f.ctx))
        .await
        .expect("the shell call hung")
        .unwrap();
    assert_eq!(r["exit_code"], 0);
    assert!(r["stdout"].as_str().unwrap().ends_with("done\n"), "{r}");
    assert!(r["note"].as_str().unwrap().contains("background"), "{r}");
    let pid = std::fs::read_to_string(f.root.join("bg"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_all_gone(&[pid]).await;
}

/// Runs a command that records its shell's and two children's pids in `pids`, then waits.
const SLEEPERS: &str =
    "echo $$ > pids; sleep 30 & echo $! >> pids; sleep 30 & echo $! >> pids; wait";

fn read_pids(root: &Path) -> Vec<i32> {
    let text = std::fs::read_to_string(root.join("pids")).unwrap_or_default();
    text.lines().filter_map(|l| l.trim().parse().ok()).collect()
}

async fn wait_for_pids(root: &Path) -> Vec<i32> {
    for _ in 0..400 {
        let pids = read_pids(root);
        if pids.len() == 3 {
            return pids;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the command never wrote its pids");
}

/// Whether a process still runs (a zombie waiting to be reaped does not).
fn running(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    if unsafe { libc::kill(pid, 0) } != 0 {
        return false;
    }
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat.rsplit(')').next().unwrap_or("").trim_start();
    !(state.is_empty() || state.starts_with('Z') || state.starts_with('X'))
}

async fn assert_all_gone(pids: &[i32]) {
    for _ in 0..200 {
        if !pids.iter().any(|&p| running(p)) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "processes still running: {:?}",
        pids.iter().filter(|&&p| running(p)).collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn shell_timeout_kills_the_process_group() {
    let f = fixture();
    let started = Instant::now();
    let args = json!({"command": format!("echo begun; {SLEEPERS}"), "timeout_secs": 2});
    let err = tokio::time::timeout(Duration::from_secs(25), call("shell", args, &f.ctx))
        .await
        .expect("the shell call hung")
        .unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains("timed out after 2 s") && message.contains("begun"),
        "{message}"
    );
    assert!(started.elapsed() < Duration::from_secs(25));
    let pids = read_pids(&f.root);
    assert_eq!(pids.len(), 3);
    assert_all_gone(&pids).await;
}

#[tokio::test]
async fn shell_cancel_kills_the_process_group() {
    let f = fixture();
    let cancel = f.ctx.cancel.clone();
    let root = f.root.clone();
    let canceller = tokio::spawn(async move {
        let pids = wait_for_pids(&root).await;
        cancel.cancel();
        pids
    });
    let args = json!({"command": SLEEPERS, "timeout_secs": 60});
    let result = tokio::time::timeout(Duration::from_secs(25), call("shell", args, &f.ctx)).await;
    assert_eq!(
        result.expect("the shell call hung"),
        Err(ToolError::Failed("cancelled".into()))
    );
    assert_all_gone(&canceller.await.unwrap()).await;
}

#[tokio::test]
async fn shell_dropped_future_kills_the_process_group() {
    let f = fixture();
    let shell = tool("shell");
    let mut running_call = shell.call(json!({"command": SLEEPERS, "timeout_secs": 60}), &f.ctx);
    let pids = tokio::select! {
        r = &mut running_call => panic!("finished early: {r:?}"),
        pids = wait_for_pids(&f.root) => pids,
    };
    drop(running_call);
    assert_all_gone(&pids).await;
}

/// The test servers listen on loopback, which `web_fetch` refuses unless allowed.
fn loopback() -> Vec<String> {
    vec!["127.0.0.1".into()]
}

/// A loopback HTTP/1.1 server answering a few fixed paths; returns its base URL.
fn serve() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || respond(stream));
        }
    });
    base
}

fn respond(mut stream: std::net::TcpStream) {
    let mut request = Vec::new();
    let mut buf = [0u8; 1024];
    while !request.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => request.extend_from_slice(&buf[..n]),
        }
    }
    let head = String::from_utf8_lossy(&request);
    let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
    let html =
        b"<html><head><title>T</title></head><body><h1>Hello</h1><p>World wide</p></body></html>";
    let (status, content_type, body): (&str, &str, Vec<u8>) = match path.as_str() {
        "/page" => ("200 OK", "text/html; charset=utf-8", html.to_vec()),
        "/sniff" => ("200 OK", "application/octet-stream", html.to_vec()),
        "/data.json" => ("200 OK", "application/json", br#"{"answer": 42}"#.to_vec()),
        "/image.png" => (
            "200 OK",
            "image/png",
            vec![0x89, b'P', b'N', b'G', 0, 0, 0, 0],
        ),
        "/huge" => ("200 OK", "text/plain", vec![b'z'; 5 * 1024 * 1024]),
        "/slow" => {
            std::thread::sleep(Duration::from_secs(30));
            return;
        }
        _ => ("404 Not Found", "text/plain", b"no such page here".to_vec()),
    };
    let header = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    // The client may hang up early (size cap); that is expected.
    let _ = stream
        .write_all(header.as_bytes())
        .and_then(|()| stream.write_all(&body));
}

#[tokio::test]
async fn web_fetch_converts_and_caps() {
    let f = fixture_with(ToolSettings {
        fetch_max_bytes: 100_000,
        allow_private: loopback(),
        ..Default::default()
    });
    let base = serve();
    for path in ["/page", "/sniff"] {
        let r = call("web_fetch", json!({"url": format!("{base}{path}")}), &f.ctx)
            .await
            .unwrap();
        let text = r["text"].as_str().unwrap();
        assert!(
            text.contains("Hello") && text.contains("World wide") && !text.contains("<h1>"),
            "{text}"
        );
        assert_eq!(
            (r["status"].clone(), r["truncated"].clone()),
            (json!(200), json!(false))
        );
    }
    let r = call(
        "web_fetch",
        json!({"url": format!("{base}/data.json")}),
        &f.ctx,
    )
    .await
    .unwrap();
    assert_eq!(
        (
            r["text"].as_str().unwrap(),
            r["content_type"].as_str().unwrap()
        ),
        (r#"{"answer": 42}"#, "application/json")
    );
    assert_eq!(r["url"], format!("{base}/data.json"));
    let r = call(
        "web_fetch",
        json!({"url": format!("{base}/image.png")}),
        &f.ctx,
    )
    .await
    .unwrap();
    assert!(r["text"].as_str().unwrap().contains("image/png"), "{r}");
    let r = call("web_fetch", json!({"url": format!("{base}/huge")}), &f.ctx)
        .await
        .unwrap();
    assert_eq!(r["truncated"], true);
    let text = r["text"].as_str().unwrap();
    assert!(!text.is_empty() && text.len() <= 100_000 && text.bytes().all(|b| b == b'z'));
}

#[tokio::test]
async fn web_fetch_errors_and_cancellation() {
    let f = fixture_with(ToolSettings {
        allow_private: loopback(),
        ..Default::default()
    });
    let base = serve();
    let err = call(
        "web_fetch",
        json!({"url": format!("{base}/missing")}),
        &f.ctx,
    )
    .await
    .unwrap_err();
    let message = err.to_string();
    assert!(
        matches!(err, ToolError::Failed(_))
            && message.contains("404")
            && message.contains("no such page"),
        "{message}"
    );
    let err = call("web_fetch", json!({"url": "ftp://example.com/x"}), &f.ctx)
        .await
        .unwrap_err();
    assert!(matches!(err, ToolError::InvalidArguments(_)), "{err:?}");
    let err = call("web_fetch", json!({"url": "not a url"}), &f.ctx)
        .await
        .unwrap_err();
    assert!(matches!(err, ToolError::InvalidArguments(_)), "{err:?}");

    let cancel = f.ctx.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        cancel.cancel();
    });
    let slow = call("web_fetch", json!({"url": format!("{base}/slow")}), &f.ctx);
    let result = tokio::time::timeout(Duration::from_secs(20), slow)
        .await
        .expect("web_fetch hung");
    assert_eq!(result, Err(ToolError::Failed("cancelled".into())));
}

#[tokio::test]
async fn edit_file_replaces_exactly_once_in_order_and_keeps_the_mode() {
    use std::os::unix::fs::PermissionsExt;
    let f = fixture();
    let path = f.root.join("run.sh");
    std::fs::write(&path, "#!/bin/sh\necho one\necho two\n").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    let result = call(
        "edit_file",
        json!({"path": "run.sh", "edits": [
            {"old_string": "echo one", "new_string": "echo uno"},
            {"old_string": "uno\necho two", "new_string": "uno\necho dos"}
        ]}),
        &f.ctx,
    )
    .await
    .unwrap();
    assert_eq!(result["change"], "+2 −2 in run.sh");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "#!/bin/sh\necho uno\necho dos\n"
    );
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o755, "the file keeps its permissions");
}

#[tokio::test]
async fn a_failed_edit_leaves_the_file_untouched_and_no_temp_file() {
    let f = fixture();
    let path = f.root.join("a.txt");
    std::fs::write(&path, "x = 1\nx = 1\n").unwrap();
    let error = call(
        "edit_file",
        json!({"path": "a.txt", "edits": [{"old_string": "x = 1", "new_string": "x = 2"}]}),
        &f.ctx,
    )
    .await
    .unwrap_err();
    assert!(
        error.to_string().contains("matches 2 times (lines 1, 2)"),
        "{error}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "x = 1\nx = 1\n");
    let names: Vec<_> = std::fs::read_dir(&f.root)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, ["a.txt"], "no temp file is left");
}

#[tokio::test]
async fn edit_file_keeps_crlf_and_refuses_binary_and_outside_files() {
    let f = fixture();
    std::fs::write(f.root.join("w.txt"), "one\r\ntwo\r\n").unwrap();
    call(
        "edit_file",
        json!({"path": "w.txt", "edits": [{"old_string": "two\n", "new_string": "2\n"}]}),
        &f.ctx,
    )
    .await
    .unwrap();
    assert_eq!(
        std::fs::read(f.root.join("w.txt")).unwrap(),
        b"one\r\n2\r\n"
    );
    std::fs::write(f.root.join("b.bin"), b"a\0b").unwrap();
    let binary = call(
        "edit_file",
        json!({"path": "b.bin", "edits": [{"old_string": "a", "new_string": "c"}]}),
        &f.ctx,
    )
    .await
    .unwrap_err();
    assert!(binary.to_string().contains("binary"), "{binary}");
    assert_refused(
        call(
            "edit_file",
            json!({"path": "../outside/secret.txt", "edits": [{"old_string": "top", "new_string": "no"}]}),
            &f.ctx,
        )
        .await,
    );
    assert_eq!(
        std::fs::read_to_string(f.outside.join("secret.txt")).unwrap(),
        "top secret\n"
    );
}

#[test]
fn write_and_edit_previews_are_diffs_of_what_would_change() {
    let f = fixture();
    std::fs::write(f.root.join("old.txt"), "a\nb\n").unwrap();
    let diff = |p: Option<taco::tools::diff::Preview>| p.map(|p| p.diff);
    let edit = diff(tool("edit_file").preview(
        &json!({"path": "old.txt", "edits": [{"old_string": "b", "new_string": "B"}]}),
        &f.root,
    ));
    assert!(
        edit.as_deref().unwrap().starts_with("+1 −1 in old.txt\n"),
        "{edit:?}"
    );
    let overwrite =
        diff(tool("write_file").preview(&json!({"path": "old.txt", "content": "z\n"}), &f.root));
    assert!(
        overwrite
            .as_deref()
            .unwrap()
            .starts_with("+1 −2 in old.txt"),
        "{overwrite:?}"
    );
    let new =
        diff(tool("write_file").preview(&json!({"path": "new/n.txt", "content": "hi\n"}), &f.root));
    assert!(
        new.as_deref()
            .unwrap()
            .starts_with("new file new/n.txt: 1 lines, 3 bytes"),
        "{new:?}"
    );
    assert_eq!(
        tool("read_file").preview(&json!({"path": "old.txt"}), &f.root),
        None
    );
}
