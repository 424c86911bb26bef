//! Images in the prompt (issue 30.5), with the binary as a process against loopback servers:
//! the exact request bodies of the three wires for a small PNG, a model without vision refused
//! before any request, the size bounds (a file over the cap refused, an image over the
//! providers' limits downscaled), hostile files, and a session resumed with its image (and
//! without its stored copy). Plus the chat's chip, as a snapshot.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use crate::support;

use std::path::Path;

use base64::prelude::{BASE64_STANDARD, Engine as _};
use image::DynamicImage;
use serde_json::{Value, json};
use support::cli::*;
use support::{Reply, TestServer};

/// A PNG of `w`×`h` pixels, opaque grey.
fn png(w: u32, h: u32) -> Vec<u8> {
    let mut image = image::RgbImage::new(w, h);
    for p in image.pixels_mut() {
        *p = image::Rgb([120, 130, 140]);
    }
    let mut out = Vec::new();
    DynamicImage::ImageRgb8(image)
        .write_with_encoder(image::codecs::png::PngEncoder::new(&mut out))
        .unwrap();
    out
}

fn write(work: &Path, name: &str, bytes: &[u8]) {
    std::fs::write(work.join(name), bytes).unwrap();
}

/// `taco exec` of `prompt` against the OpenAI-compatible `server`, model `model`, with
/// `config` as its config file.
async fn openai_exec(
    home: &Path,
    work: &Path,
    server: &TestServer,
    model: &str,
    config: &str,
    extra: &[&str],
) -> Run {
    let path = home.join("taco.toml");
    std::fs::write(&path, config).unwrap();
    let mut cmd = taco(home, work);
    cmd.env("TACO_CONFIG", &path).args([
        "exec",
        "-p",
        "openai",
        "--base-url",
        &format!("{}/v1", server.url()),
        "-m",
        model,
    ]);
    cmd.args(extra);
    finish(&mut cmd).await
}

const NO_RETRY: &str = "[providers.openai.options]\nmax_attempts = 1\n";
const VISION: &str = "[providers.openai.options]\nmax_attempts = 1\nvision = true\n";

#[tokio::test]
async fn openai_gets_a_small_png_as_a_data_url_content_part() {
    let (home, work) = setup();
    let bytes = png(2, 2);
    write(work.path(), "shot.png", &bytes);
    let server = TestServer::start(vec![text_turn(&["A grey square."])]).await;
    let prompt = "what is in shot.png?";
    let run = openai_exec(
        home.path(),
        work.path(),
        &server,
        "gpt-4o",
        NO_RETRY,
        &[prompt],
    )
    .await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let body = server.requests()[0].json();
    assert_eq!(
        body["messages"][1],
        json!({"role": "user", "content": [
            {"type": "text", "text": prompt},
            {"type": "image_url", "image_url": {
                "url": format!("data:image/png;base64,{}", BASE64_STANDARD.encode(&bytes))}},
        ]})
    );
}

#[tokio::test]
async fn anthropic_gets_an_image_block_before_the_text() {
    let (home, work) = setup();
    let bytes = png(2, 2);
    write(work.path(), "shot.png", &bytes);
    let server = TestServer::start(vec![anthropic_text("A grey square.")]).await;
    let mut cmd = taco(home.path(), work.path());
    cmd.env("ANTHROPIC_API_KEY", "sk-ant-test-0000")
        .env("ANTHROPIC_BASE_URL", server.url())
        .args([
            "exec",
            "--provider",
            "anthropic",
            "-m",
            "claude-sonnet-4-5",
            "describe @shot.png",
        ]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let body = server.requests()[0].json();
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": [
            {"type": "image", "source": {
                "type": "base64", "media_type": "image/png",
                "data": BASE64_STANDARD.encode(&bytes)}},
            {"type": "text", "text": "describe @shot.png"},
        ]}])
    );
}

#[tokio::test]
async fn ollama_gets_the_base64_in_the_messages_images() {
    let (home, work) = setup();
    let bytes = png(2, 2);
    write(work.path(), "shot.png", &bytes);
    let abs = work.path().join("shot.png");
    let prompt = format!("what is this? {}", abs.display());
    let server = TestServer::start(vec![
        Reply::status(200).json(&json!({"parameters": "num_ctx 8192"})),
        Reply::ndjson(vec![format!(
            "{}\n",
            json!({"model": "llava", "message": {"role": "assistant", "content": "Grey."}, "done": true, "done_reason": "stop", "prompt_eval_count": 10, "eval_count": 1})
        )]),
    ])
    .await;
    let mut cmd = taco(home.path(), work.path());
    cmd.env("OLLAMA_HOST", server.url())
        .args(["exec", "-p", "ollama", "-m", "llava:7b", &prompt]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let requests = server.requests();
    assert_eq!(requests[1].path, "/api/chat");
    assert_eq!(
        requests[1].json()["messages"][1],
        json!({"role": "user", "content": prompt, "images": [BASE64_STANDARD.encode(&bytes)]})
    );
}

#[tokio::test]
async fn a_model_without_vision_is_refused_before_anything_is_sent() {
    let (home, work) = setup();
    write(work.path(), "shot.png", &png(2, 2));
    let server = TestServer::start(vec![text_turn(&["never"])]).await;
    let run = openai_exec(
        home.path(),
        work.path(),
        &server,
        "deepseek-chat",
        NO_RETRY,
        &["--json", "look at @shot.png"],
    )
    .await;
    assert_ne!(run.code, 0);
    assert!(server.requests().is_empty(), "nothing reaches the server");
    let events = json_lines(&run.stdout);
    let error = events.iter().find(|e| e["type"] == "error").unwrap();
    assert_eq!(error["data"]["kind"], "image");
    let message = error["data"]["message"].as_str().unwrap();
    assert!(
        message.contains("'deepseek-chat' of provider 'openai' does not take images")
            && message.contains("shot.png")
            && message.contains("vision = true"),
        "{message}"
    );
    // The same model with `vision = true` sends it.
    let server = TestServer::start(vec![text_turn(&["ok"])]).await;
    let run = openai_exec(
        home.path(),
        work.path(),
        &server,
        "deepseek-chat",
        VISION,
        &["look at @shot.png"],
    )
    .await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let content = &server.requests()[0].json()["messages"][1]["content"];
    assert_eq!(content[1]["type"], "image_url");
}

/// Runs `prompt` against a server that must never be asked; returns stderr.
async fn refused(work: &Path, home: &Path, prompt: &str) -> String {
    let server = TestServer::start(vec![text_turn(&["never"])]).await;
    let run = openai_exec(home, work, &server, "gpt-4o", NO_RETRY, &[prompt]).await;
    assert_ne!(run.code, 0, "stdout: {}", run.stdout);
    assert!(server.requests().is_empty(), "nothing reaches the server");
    run.stderr
}

#[tokio::test]
async fn a_file_over_the_cap_is_refused_and_a_large_image_is_downscaled() {
    let (home, work) = setup();
    // 21 MB (sparse): refused from its size, before it is read.
    let big = std::fs::File::create(work.path().join("huge.png")).unwrap();
    big.set_len(21 * 1024 * 1024).unwrap();
    let stderr = refused(work.path(), home.path(), "see huge.png").await;
    assert!(
        stderr.contains("huge.png is 21.0 MB, over the 20.0 MB an image may be"),
        "{stderr}"
    );

    write(work.path(), "wide.png", &png(3000, 1000));
    let server = TestServer::start(vec![text_turn(&["wide"])]).await;
    let run = openai_exec(
        home.path(),
        work.path(),
        &server,
        "gpt-4o",
        NO_RETRY,
        &["see wide.png"],
    )
    .await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let body = server.requests()[0].json();
    let url = body["messages"][1]["content"][1]["image_url"]["url"]
        .as_str()
        .unwrap();
    // Opaque, so re-encoded as JPEG, its long side at 1568 px.
    let b64 = url.strip_prefix("data:image/jpeg;base64,").unwrap();
    let sent = image::load_from_memory(&BASE64_STANDARD.decode(b64).unwrap()).unwrap();
    assert_eq!((sent.width(), sent.height()), (1568, 523));
}

#[tokio::test]
async fn hostile_images_fail_clearly_and_send_nothing() {
    let (home, work) = setup();
    let whole = png(64, 64);
    write(work.path(), "cut.png", &whole[..whole.len() / 2]);
    let stderr = refused(work.path(), home.path(), "see cut.png").await;
    assert!(stderr.contains("cut.png cannot be decoded"), "{stderr}");
    write(work.path(), "fake.jpg", b"<html>not a picture</html>");
    let stderr = refused(work.path(), home.path(), "see fake.jpg").await;
    assert!(
        stderr.contains("fake.jpg is not a PNG, JPEG, WebP or GIF image"),
        "{stderr}"
    );
    // A header claiming 100,000 × 100,000 pixels (a decompression bomb's): refused by the
    // decoder's limits before any buffer is made.
    let mut bomb = png(1, 1);
    bomb[16..20].copy_from_slice(&100_000u32.to_be_bytes());
    bomb[20..24].copy_from_slice(&100_000u32.to_be_bytes());
    let crc = crc32(&bomb[12..29]);
    bomb[29..33].copy_from_slice(&crc.to_be_bytes());
    write(work.path(), "bomb.png", &bomb);
    let stderr = refused(work.path(), home.path(), "see bomb.png").await;
    assert!(
        stderr.contains("bomb.png is too large to decode"),
        "{stderr}"
    );
}

#[tokio::test]
async fn a_resumed_session_sends_its_image_again_and_says_when_it_is_gone() {
    let (home, work) = setup();
    let bytes = png(3, 2);
    write(work.path(), "shot.png", &bytes);
    let b64 = BASE64_STANDARD.encode(&bytes);
    let server = TestServer::start(vec![text_turn(&["first"]), text_turn(&["second"])]).await;
    let run = openai_exec(
        home.path(),
        work.path(),
        &server,
        "m1",
        VISION,
        &["see shot.png"],
    )
    .await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    // The session file names the image (and its hash), never its bytes.
    let dir = sessions_dir(home.path());
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(!text.contains(&b64), "no base64 in the session file");
    assert!(text.contains("\"images_attached\"") && text.contains("\"sha256\""));
    let stored: Vec<_> = std::fs::read_dir(dir.join("images")).unwrap().collect();
    assert_eq!(stored.len(), 1);
    std::fs::remove_file(work.path().join("shot.png")).unwrap();

    let run = openai_exec(
        home.path(),
        work.path(),
        &server,
        "m1",
        VISION,
        &["and now?", "--resume"],
    )
    .await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let body = server.requests()[1].json();
    let first = &body["messages"][1];
    assert_eq!(first["content"][0]["text"], "see shot.png");
    assert_eq!(
        first["content"][1]["image_url"]["url"],
        format!("data:image/png;base64,{b64}")
    );

    // Without its stored copy the request is still valid, and the model is told.
    for entry in std::fs::read_dir(dir.join("images")).unwrap() {
        std::fs::remove_file(entry.unwrap().path()).unwrap();
    }
    let server = TestServer::start(vec![text_turn(&["third"])]).await;
    let run = openai_exec(
        home.path(),
        work.path(),
        &server,
        "m1",
        VISION,
        &["once more", "--resume"],
    )
    .await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(run.stderr.contains("image shot.png"), "{}", run.stderr);
    let body = server.requests()[0].json();
    let first = &body["messages"][1]["content"];
    assert_eq!(first[1]["type"], "text");
    assert!(
        first[1]["text"]
            .as_str()
            .unwrap()
            .contains("image shot.png (3×2) is no longer available"),
        "{first}"
    );
}

#[test]
fn the_chat_shows_each_image_as_a_chip() {
    use taco::event::EventData;
    use taco::images::{Image, MediaType};
    let mut h = support::app::Harness::new();
    h.command("compare before.png and after.jpg");
    let image = |name: &str, media_type, width, height, bytes| Image {
        name: String::from(name),
        media_type,
        width,
        height,
        bytes,
        sha256: "0".repeat(64),
        data: None,
    };
    h.event(EventData::ImagesAttached {
        images: vec![
            image("before.png", MediaType::Png, 1024, 768, 210 * 1024),
            image("after.jpg", MediaType::Jpeg, 1568, 882, 1_400_000),
        ],
    });
    let screen = h.screen(80, 12);
    let text = support::app::screen_text(&screen);
    assert!(text.contains("🖼 before.png 1024×768 · 210 KB"), "{text}");
    insta::assert_snapshot!("image_chips", screen.backend());
}

fn anthropic_text(text: &str) -> Reply {
    let events = [
        (
            "message_start",
            json!({"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant", "model": "c", "content": [], "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ];
    Reply::sse(
        events
            .iter()
            .map(|(name, data): &(&str, Value)| format!("event: {name}\ndata: {data}\n\n"))
            .collect::<Vec<_>>(),
    )
}

/// PNG chunk CRC: a header made to lie keeps a valid checksum, so only its size lies.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

#[test]
fn a_refused_image_puts_the_text_back_in_the_composer() {
    use taco::event::EventData;
    let mut h = support::app::Harness::new();
    h.command("what is in shot.png?");
    assert_eq!(h.app.composer_text(), "");
    h.event(EventData::RunStarted {
        prompt: "what is in shot.png?".into(),
        provider: "demo".into(),
        model: "demo".into(),
        max_turns: 10,
        trace_parent: None,
    });
    h.event(EventData::Error {
        kind: "image".into(),
        message: "model 'demo' of provider 'demo' does not take images".into(),
    });
    assert_eq!(h.app.composer_text(), "what is in shot.png?");
    let text = support::app::screen_text(&h.screen(100, 40));
    assert!(text.contains("✗ error: model 'demo' of provider"), "{text}");
}
