//! OpenTelemetry (issue 31): `taco exec` against a loopback model server exports its run as
//! GenAI spans to a loopback OTLP/HTTP receiver; the span tree, the attributes, the times
//! (the events'), content only when captured and then masked, TRACEPARENT in and out, a dead
//! and a stalled collector, and `taco trace --otlp-json` giving the same spans.

use crate::support;

use std::time::{Duration, Instant};

use serde_json::Value;
use support::TestServer;
use support::cli::*;
use support::otlp::{self, attr, ms, named, names};
use taco::session::Entry;

const KEY: &str = "sk-test-SECRET-otel-4242";

/// A model that runs one shell command (which fails with exit 3), then answers.
async fn model(command: &str) -> TestServer {
    let args = serde_json::json!({ "command": command }).to_string();
    TestServer::start(vec![
        tool_turn("call_1", "shell", &args),
        text_turn(&["done"]),
    ])
    .await
}

/// `taco exec --approve all` with the collector at `collector` and `env` set.
async fn exec(
    home: &std::path::Path,
    work: &std::path::Path,
    server: &TestServer,
    env: &[(&str, &str)],
    extra: &[&str],
) -> Run {
    let mut cmd = taco(home, work);
    openai_args(&mut cmd, server);
    cmd.env("OPENAI_API_KEY", KEY);
    for (name, value) in env {
        cmd.env(name, value);
    }
    cmd.args(extra)
        .args(["--approve", "all", "--json", "run it"]);
    finish(&mut cmd).await
}

fn events(home: &std::path::Path) -> Vec<taco::event::Event> {
    let loaded = taco::session::load(&only_session(home)).unwrap();
    loaded
        .entries
        .into_iter()
        .filter_map(|e| match e {
            Entry::Event(e) => Some(e),
            Entry::Message(_) => None,
        })
        .collect()
}

fn stamp(events: &[taco::event::Event], kind: &str) -> u64 {
    events
        .iter()
        .find(|e| e.kind() == kind)
        .unwrap_or_else(|| panic!("no {kind}"))
        .timestamp
}

/// A run of `command` exported to a loopback collector: the dirs, the collector, the run.
async fn exported(
    command: &str,
    env: &[(&str, &str)],
) -> (tempfile::TempDir, tempfile::TempDir, TestServer, Run) {
    let (home, work) = setup();
    let collector = otlp::receiver(20).await;
    let server = model(command).await;
    let endpoint = collector.url();
    let mut env = env.to_vec();
    env.push(("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint));
    let run = exec(home.path(), work.path(), &server, &env, &[]).await;
    (home, work, collector, run)
}

#[tokio::test]
async fn a_run_is_exported_as_genai_spans_with_the_events_times() {
    let (home, _work, collector, run) = exported("echo hi; exit 3", &[]).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!run.stderr.contains("OpenTelemetry"), "{}", run.stderr);
    let spans = otlp::spans(&collector);
    let mut got = names(&spans);
    got.sort();
    assert_eq!(
        got,
        [
            "approval shell",
            "chat m1",
            "chat m1",
            "execute_tool shell",
            "invoke_agent taco"
        ]
    );
    let root = named(&spans, "invoke_agent taco");
    assert!(root.parent_span_id.is_empty(), "a root of its own");
    // The session is named, the first run of a new one too.
    let session = taco::session::load(&only_session(home.path())).unwrap();
    assert_eq!(
        attr(&root.attributes, "gen_ai.conversation.id"),
        session.header.map(|h| h.id)
    );
    assert_eq!(
        attr(&root.attributes, "gen_ai.operation.name").unwrap(),
        "invoke_agent"
    );
    assert_eq!(
        attr(&root.attributes, "gen_ai.provider.name").unwrap(),
        "openai"
    );
    assert_eq!(
        attr(&root.attributes, "gen_ai.request.model").unwrap(),
        "m1"
    );
    let tool = named(&spans, "execute_tool shell");
    assert_eq!(tool.parent_span_id, root.span_id);
    assert_eq!(tool.trace_id, root.trace_id);
    assert_eq!(attr(&tool.attributes, "gen_ai.tool.name").unwrap(), "shell");
    assert_eq!(
        attr(&tool.attributes, "gen_ai.tool.call.id").unwrap(),
        "call_1"
    );
    assert_eq!(attr(&tool.attributes, "process.exit.code").unwrap(), "3");
    let status = tool.status.as_ref().unwrap();
    assert_eq!(status.code, 2, "error status: {status:?}");
    let approval = named(&spans, "approval shell");
    assert_eq!(approval.parent_span_id, tool.span_id);
    assert_eq!(
        attr(&approval.attributes, "taco.approval.decision").unwrap(),
        "approved"
    );
    for chat in spans.iter().filter(|s| s.name == "chat m1") {
        assert_eq!(chat.parent_span_id, root.span_id);
        assert_eq!(
            attr(&chat.attributes, "gen_ai.operation.name").unwrap(),
            "chat"
        );
        assert!(attr(&chat.attributes, "gen_ai.usage.input_tokens").is_some());
        assert!(attr(&chat.attributes, "gen_ai.response.finish_reasons").is_some());
    }
    // No content unless captured.
    for span in &spans {
        for key in [
            "gen_ai.input.messages",
            "gen_ai.output.messages",
            "gen_ai.tool.call.arguments",
            "gen_ai.tool.call.result",
        ] {
            assert!(
                attr(&span.attributes, key).is_none(),
                "{key} in {}",
                span.name
            );
        }
    }
    // Span times are the events' times.
    let events = events(home.path());
    assert_eq!(ms(root.start_time_unix_nano), stamp(&events, "run_started"));
    assert_eq!(ms(root.end_time_unix_nano), stamp(&events, "final"));
    assert_eq!(ms(tool.start_time_unix_nano), stamp(&events, "tool_call"));
    assert_eq!(ms(tool.end_time_unix_nano), stamp(&events, "tool_result"));
    // The resource names the service.
    let export = &otlp::exports(&collector)[0];
    let resource = export.resource_spans[0].resource.as_ref().unwrap();
    assert_eq!(attr(&resource.attributes, "service.name").unwrap(), "taco");
}

#[tokio::test]
async fn content_goes_in_only_when_captured_and_then_masked() {
    let (home, work) = setup();
    std::fs::write(work.path().join("leak.txt"), format!("the key is {KEY}\n")).unwrap();
    let collector = otlp::receiver(20).await;
    let server = model("cat leak.txt").await;
    std::fs::write(
        home.path().join("otel.toml"),
        format!(
            "[otel]\nendpoint = \"{}\"\ncapture_content = true\n",
            collector.url()
        ),
    )
    .unwrap();
    let config = home.path().join("otel.toml");
    let run = exec(
        home.path(),
        work.path(),
        &server,
        &[],
        &["-c", config.to_str().unwrap()],
    )
    .await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let spans = otlp::spans(&collector);
    let tool = named(&spans, "execute_tool shell");
    let result = attr(&tool.attributes, "gen_ai.tool.call.result").unwrap();
    assert!(result.contains("the key is"), "{result}");
    assert!(!result.contains("SECRET"), "masked: {result}");
    let arguments = attr(&tool.attributes, "gen_ai.tool.call.arguments").unwrap();
    assert!(arguments.contains("cat leak.txt"), "{arguments}");
    let root = named(&spans, "invoke_agent taco");
    assert!(
        attr(&root.attributes, "gen_ai.input.messages")
            .unwrap()
            .contains("run it")
    );
    let received = format!("{:?}", collector.requests());
    assert!(
        !received.contains("SECRET"),
        "no key anywhere in what was sent"
    );
}

#[tokio::test]
async fn traceparent_makes_the_run_a_child_and_tools_get_their_calls_span() {
    let parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    let (_home, _work, collector, run) =
        exported("printenv TRACEPARENT", &[("TRACEPARENT", parent)]).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let spans = otlp::spans(&collector);
    let root = named(&spans, "invoke_agent taco");
    assert_eq!(hex(&root.trace_id), "0af7651916cd43dd8448eb211c80319c");
    assert_eq!(hex(&root.parent_span_id), "b7ad6b7169203331");
    let tool = named(&spans, "execute_tool shell");
    let lines = json_lines(&run.stdout);
    let result = lines
        .iter()
        .find(|e| e["type"] == "tool_result")
        .map(|e| e["data"]["result"].clone())
        .unwrap();
    let seen = result["output"]
        .as_str()
        .or(result["stdout"].as_str())
        .unwrap_or_default();
    let expected = format!(
        "00-0af7651916cd43dd8448eb211c80319c-{}-01",
        hex(&tool.span_id)
    );
    assert!(
        result.to_string().contains(&expected),
        "{expected} in {result} ({seen})"
    );
}

#[tokio::test]
async fn without_a_collector_a_traceparent_still_reaches_the_tools() {
    let (home, work) = setup();
    let server = model("printenv TRACEPARENT").await;
    let parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    let run = exec(
        home.path(),
        work.path(),
        &server,
        &[("TRACEPARENT", parent)],
        &[],
    )
    .await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let result = json_lines(&run.stdout)
        .into_iter()
        .find(|e| e["type"] == "tool_result")
        .unwrap();
    let text = result["data"]["result"].to_string();
    assert!(
        text.contains("00-0af7651916cd43dd8448eb211c80319c-"),
        "{text}"
    );
    assert!(
        !text.contains("b7ad6b7169203331"),
        "the call's own span, not taco's parent: {text}"
    );
    // The session records the parent, so a later export links to it too.
    let started = events(home.path());
    let run_started = started.iter().find(|e| e.kind() == "run_started").unwrap();
    let json = serde_json::to_value(run_started).unwrap();
    assert_eq!(json["data"]["trace_parent"], parent);
}

#[tokio::test]
async fn a_dead_collector_never_fails_the_run_and_is_said_once() {
    let (home, work) = setup();
    let server = model("echo hi").await;
    let dead = support::unreachable_url().await;
    let run = exec(
        home.path(),
        work.path(),
        &server,
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", &dead)],
        &[],
    )
    .await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout
            .lines()
            .filter(|l| l.contains("\"final\""))
            .count(),
        1
    );
    // Said once, without stopping anything.
    assert_eq!(
        run.stderr.matches("OpenTelemetry export to").count(),
        1,
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("spans are dropped"), "{}", run.stderr);
}

#[tokio::test]
async fn a_stalled_collector_does_not_hold_taco_past_its_bound() {
    let (home, work) = setup();
    let server = model("echo hi").await;
    let collector = otlp::Stalled::start();
    let endpoint = collector.url().to_string();
    let started = Instant::now();
    let run = exec(
        home.path(),
        work.path(),
        &server,
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)],
        &[],
    )
    .await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(collector.accepted() >= 1, "the export was tried");
    // Not a speed check: a collector that never answers must not keep taco alive past the
    // shutdown bound (seconds; this collector would hold it forever).
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn the_session_file_exported_as_otlp_json_gives_the_live_spans() {
    let (home, work, collector, run) = exported("echo hi; exit 3", &[]).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let live = otlp::spans(&collector);
    let mut cmd = taco(home.path(), work.path());
    cmd.arg("trace")
        .arg(only_session(home.path()))
        .arg("--otlp-json");
    let offline = finish(&mut cmd).await;
    assert_eq!(offline.code, 0, "{}", offline.stderr);
    // A request a line (one here: one run).
    let lines: Vec<&str> = offline.stdout.lines().collect();
    assert_eq!(lines.len(), 1, "{}", offline.stdout);
    let json: Value = serde_json::from_str(lines[0]).unwrap();
    let spans = json["resourceSpans"][0]["scopeSpans"][0]["spans"]
        .as_array()
        .unwrap();
    assert_eq!(spans.len(), live.len());
    for span in &live {
        let id = hex(&span.span_id);
        let same = spans
            .iter()
            .find(|s| s["spanId"].as_str() == Some(id.as_str()))
            .unwrap_or_else(|| panic!("{} ({id}) not in {json}", span.name));
        assert_eq!(same["name"], span.name);
        assert_eq!(same["traceId"], hex(&span.trace_id));
        assert_eq!(same["parentSpanId"], hex(&span.parent_span_id));
        assert_eq!(
            same["startTimeUnixNano"].as_str().unwrap(),
            span.start_time_unix_nano.to_string()
        );
        assert_eq!(
            same["endTimeUnixNano"].as_str().unwrap(),
            span.end_time_unix_nano.to_string()
        );
    }
    // A file that is not a session is a clear error.
    std::fs::write(work.path().join("junk.jsonl"), "not json\n").unwrap();
    let mut cmd = taco(home.path(), work.path());
    cmd.arg("trace")
        .arg(work.path().join("junk.jsonl"))
        .arg("--otlp-json");
    let bad = finish(&mut cmd).await;
    assert_ne!(bad.code, 0);
    assert!(bad.stderr.contains("taco:"), "{}", bad.stderr);
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn status_says_where_spans_go_and_never_a_header_value() {
    let to = taco::otel::resolve(
        &taco::otel::OtelConfig {
            endpoint: Some("https://user:pw@otel.example:4318".into()),
            ..Default::default()
        },
        &|name| {
            (name == "OTEL_EXPORTER_OTLP_HEADERS").then(|| "authorization=Bearer s3cret".into())
        },
    )
    .unwrap()
    .unwrap();
    let mut info = support::app::info();
    info.otel = Some(to.describe());
    let now = Instant::now();
    let mut h = support::app::Harness {
        app: taco::tui::app::App::new(info, now),
        t0: now,
        ms: 0,
    };
    h.command("/status");
    let screen = support::app::screen_text(&h.screen(160, 60));
    assert!(
        screen.contains(
            "OpenTelemetry: spans of every run go to https://otel.example:4318/v1/traces"
        ),
        "{screen}"
    );
    assert!(
        !screen.contains("s3cret") && !screen.contains("pw@"),
        "{screen}"
    );
}
