//! `taco exec` against a hostile provider (issue 9.6): an endless reply, an endless SSE
//! line, a stream of keep-alives. Each ends with a clear error, exit 1 and bounded memory
//! (DESIGN §10: ≤ 100 MB).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use crate::support;

use std::time::Duration;

use support::cli::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// Most bytes a hostile server sends before it gives up (keeps the test bounded).
const SEND_CAP: usize = 400 << 20;

/// A loopback server that answers every request with `start` and then `repeat` over and
/// over (paced by `pace`), until the client goes away or `SEND_CAP` is reached.
async fn hostile_server(start: &str, repeat: String, pace: Option<Duration>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let start = start.to_string();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let (start, repeat) = (start.clone(), repeat.clone());
            tokio::spawn(async move {
                let mut seen = Vec::new();
                let mut buf = [0u8; 8192];
                // The request's head and body: read until the body's length has arrived.
                loop {
                    let Ok(n) = socket.read(&mut buf).await else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    seen.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&seen);
                    if let Some(head_end) = text.find("\r\n\r\n") {
                        let length = text[..head_end]
                            .lines()
                            .find_map(|l| {
                                l.to_ascii_lowercase()
                                    .strip_prefix("content-length:")
                                    .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                            })
                            .unwrap_or(0);
                        if seen.len() >= head_end + 4 + length {
                            break;
                        }
                    }
                }
                let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
                if socket.write_all(head.as_bytes()).await.is_err()
                    || socket.write_all(start.as_bytes()).await.is_err()
                {
                    return;
                }
                let mut sent = 0;
                while sent < SEND_CAP {
                    if socket.write_all(repeat.as_bytes()).await.is_err() {
                        return;
                    }
                    sent += repeat.len();
                    if let Some(pace) = pace {
                        tokio::time::sleep(pace).await;
                    }
                }
            });
        }
    });
    url
}

struct Ended {
    code: i32,
    stderr: String,
    peak_rss_kb: u64,
    stdout_bytes: usize,
}

/// Runs `taco exec` against `url` and samples its peak RSS (VmHWM) while it runs.
async fn run_against(url: &str, config: &str) -> Ended {
    let (home, work) = setup();
    let config_path = home.path().join("taco.toml");
    std::fs::write(&config_path, config).unwrap();
    let mut cmd = taco(home.path(), work.path());
    cmd.args(["exec", "-p", "openai", "--base-url", url, "-m", "m", "-c"])
        .arg(&config_path)
        .arg("hi");
    let mut child = cmd.spawn().unwrap();
    let pid = child.id().unwrap();
    // The answer streams to stdout as it comes: read it, as any consumer would, and count it.
    let mut out = child.stdout.take().unwrap();
    let printed = tokio::spawn(async move {
        let mut buf = vec![0u8; 64 * 1024];
        let mut total = 0usize;
        while let Ok(n) = out.read(&mut buf).await {
            if n == 0 {
                break;
            }
            total += n;
        }
        total
    });
    let mut peak = 0;
    let status = loop {
        if let Ok(status) = tokio::time::timeout(Duration::from_millis(20), child.wait()).await {
            break status.unwrap();
        }
        if let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/status")) {
            for line in text.lines() {
                if let Some(kb) = line.strip_prefix("VmHWM:") {
                    peak = peak.max(
                        kb.trim()
                            .trim_end_matches(" kB")
                            .trim()
                            .parse()
                            .unwrap_or(0),
                    );
                }
            }
        }
    };
    let mut stderr = String::new();
    if let Some(mut err) = child.stderr.take() {
        let _ = err.read_to_string(&mut stderr).await;
    }
    Ended {
        code: status.code().unwrap_or(-1),
        stderr,
        peak_rss_kb: peak,
        stdout_bytes: printed.await.unwrap(),
    }
}

const ONE_ATTEMPT: &str = "[providers.openai.options]\nmax_attempts = 1\n";

#[tokio::test]
async fn an_endless_reply_ends_at_the_reply_cap_with_bounded_memory() {
    let piece = format!(
        "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{}\"}}}}]}}\n\n",
        "x".repeat(4000)
    );
    let url = hostile_server("", piece, None).await;
    let ended = tokio::time::timeout(Duration::from_secs(120), run_against(&url, ONE_ATTEMPT))
        .await
        .expect("taco exec must end by itself");
    assert_eq!(ended.code, 1, "{}", ended.stderr);
    assert!(ended.stderr.contains("max_reply_bytes"), "{}", ended.stderr);
    assert!(
        ended.peak_rss_kb < 100 * 1024,
        "peak RSS {} kB",
        ended.peak_rss_kb
    );
    // What streamed out is bounded by the same cap.
    assert!(ended.stdout_bytes > 0);
    assert!(ended.stdout_bytes <= 16 << 20, "{}", ended.stdout_bytes);
}

#[tokio::test]
async fn an_endless_sse_line_ends_with_a_clear_error_and_bounded_memory() {
    let start = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"";
    let url = hostile_server(start, "y".repeat(64 * 1024), None).await;
    let ended = tokio::time::timeout(Duration::from_secs(120), run_against(&url, ONE_ATTEMPT))
        .await
        .expect("taco exec must end by itself");
    assert_eq!(ended.code, 1, "{}", ended.stderr);
    assert!(ended.stderr.contains("taco: error:"), "{}", ended.stderr);
    assert!(
        ended.stderr.contains("MiB"),
        "the error names the limit: {}",
        ended.stderr
    );
    assert!(
        ended.peak_rss_kb < 100 * 1024,
        "peak RSS {} kB",
        ended.peak_rss_kb
    );
}

#[tokio::test]
async fn keep_alives_alone_end_after_the_idle_timeout() {
    let url = hostile_server(
        "",
        ": keep-alive\n\n".to_string(),
        Some(Duration::from_millis(50)),
    )
    .await;
    let config = format!("{ONE_ATTEMPT}idle_timeout_secs = 1\n");
    let ended = tokio::time::timeout(Duration::from_secs(60), run_against(&url, &config))
        .await
        .expect("taco exec must end by itself");
    assert_eq!(ended.code, 1, "{}", ended.stderr);
    assert!(ended.stderr.contains("keep-alives"), "{}", ended.stderr);
}
