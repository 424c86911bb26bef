//! `--max-cost` (issue 31): `taco exec` as a process against a loopback OpenAI-compatible
//! server, with a configured price. Each scripted tool turn reports 20 input and 5 output
//! tokens; at $1/M input and $10,000/M output that is $0.05002 a call, and the next call's
//! input (a few thousand tokens, estimated) costs well under a cent: a budget of $0.075
//! lets two calls through and stops the third before it is sent.

use crate::support;

use std::path::{Path, PathBuf};

use serde_json::Value;
use support::cli::*;
use support::{Reply, TestServer};

/// One tool turn's cost at the test's prices.
const CALL: f64 = (20.0 * 1.0 + 5.0 * 10_000.0) / 1_000_000.0;

/// A config with the model's price and no retries.
fn priced_config(dir: &Path, extra: &str) -> PathBuf {
    let path = dir.join("priced.toml");
    let text = format!(
        "{extra}\n[providers.openai.options]\nmax_attempts = 1\n\
         [pricing.\"m1\"]\ninput = 1.0\noutput = 10000.0\n"
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// A model that keeps reading the file, then would answer.
fn keeps_calling() -> Vec<Reply> {
    let read = |id: &str| tool_turn(id, "read_file", "{\"path\": \"hello.txt\"}");
    vec![
        read("call_1"),
        read("call_2"),
        read("call_3"),
        text_turn(&["It says hi."]),
    ]
}

async fn exec_json(home: &Path, work: &Path, server: &TestServer, args: &[&str]) -> Run {
    let mut cmd = taco(home, work);
    openai_args(&mut cmd, server);
    cmd.arg("--json").args(args);
    finish(&mut cmd).await
}

fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

fn near(a: &Value, b: f64) -> bool {
    a.as_f64().is_some_and(|a| (a - b).abs() < 1e-6)
}

#[tokio::test]
async fn the_run_stops_before_the_call_that_would_pass_the_budget() {
    let (home, work) = setup();
    let config = priced_config(home.path(), "");
    let server = TestServer::start(keeps_calling()).await;
    let run = exec_json(
        home.path(),
        work.path(),
        &server,
        &[
            "-c",
            config.to_str().unwrap(),
            "--max-cost",
            "0.075",
            "read it",
        ],
    )
    .await;
    assert_eq!(run.code, 3, "stderr: {}", run.stderr);
    // Two calls were sent; the third, which would have passed $0.075, never was.
    assert_eq!(server.requests().len(), 2);
    let events = json_lines(&run.stdout);
    assert_eq!(of_type(&events, "llm_started").len(), 2);
    let reached = of_type(&events, "budget_reached");
    assert_eq!(reached.len(), 1, "{}", run.stdout);
    let data = &reached[0]["data"];
    assert!(near(&data["max_cost"], 0.075), "{data}");
    assert!(near(&data["spent"], 2.0 * CALL), "{data}");
    assert!(data["next_call"].as_f64().unwrap() > 0.0, "{data}");
    assert!(data["input_tokens"].as_u64().unwrap() > 0, "{data}");
    assert_eq!(data["model"], "m1");
    assert_eq!(data["purpose"], "conversation");
    assert!(data.get("parent").is_none(), "{data}");
    // It comes after the second batch's results, and the run ends with the budget's error.
    let last = events.last().unwrap();
    assert_eq!(last["type"], "error", "{}", run.stdout);
    assert_eq!(last["data"]["kind"], "budget");
    assert!(of_type(&events, "final").is_empty());
    assert!(
        run.stderr
            .contains("taco: error: the cost budget of $0.075 (--max-cost, max_cost) is reached: this session has spent $0.100"),
        "{}",
        run.stderr
    );
    // The session file holds the run and loads: a resume reads it back.
    let session = only_session(home.path());
    let text = std::fs::read_to_string(&session).unwrap();
    assert!(text.contains("\"budget_reached\""), "{text}");
    let loaded = taco::session::load(&session).unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
}

#[tokio::test]
async fn a_budget_not_reached_changes_nothing() {
    let kinds = |run: &Run| -> Vec<String> {
        json_lines(&run.stdout)
            .iter()
            .map(|e| e["type"].as_str().unwrap().to_string())
            .filter(|k| k != "llm_progress")
            .collect()
    };
    let (home, work) = setup();
    let config = priced_config(home.path(), "");
    let config = config.to_str().unwrap();
    let free = TestServer::start(keeps_calling()).await;
    let without = exec_json(home.path(), work.path(), &free, &["-c", config, "read it"]).await;
    let budgeted = TestServer::start(keeps_calling()).await;
    let with = exec_json(
        home.path(),
        work.path(),
        &budgeted,
        &["-c", config, "--max-cost", "$1", "read it"],
    )
    .await;
    assert_eq!(without.code, 0, "stderr: {}", without.stderr);
    assert_eq!(with.code, 0, "stderr: {}", with.stderr);
    assert_eq!(free.requests().len(), 4);
    assert_eq!(budgeted.requests().len(), 4);
    assert_eq!(kinds(&with), kinds(&without));
    assert!(!kinds(&with).iter().any(|k| k == "budget_reached"));
    for (a, b) in free.requests().iter().zip(budgeted.requests().iter()) {
        assert_eq!(a.json()["messages"], b.json()["messages"]);
    }
}

#[tokio::test]
async fn a_model_without_a_price_cannot_be_budgeted_and_bad_amounts_are_refused() {
    let (home, work) = setup();
    let server = TestServer::start(keeps_calling()).await;
    let plain = no_retries(home.path());
    let run = exec_json(
        home.path(),
        work.path(),
        &server,
        &["-c", plain.to_str().unwrap(), "--max-cost", "1", "read it"],
    )
    .await;
    assert_eq!(run.code, 2, "stderr: {}", run.stderr);
    assert!(
        run.stderr.contains("taco knows no price for the model m1")
            && run.stderr.contains("[pricing.\"m1\"]"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    // The same budget from the config.
    let from_file = priced_config(home.path(), "max_cost = 1.0");
    std::fs::write(&plain, "max_cost = 1.0\n").unwrap();
    let run = exec_json(
        home.path(),
        work.path(),
        &server,
        &["-c", plain.to_str().unwrap(), "read it"],
    )
    .await;
    assert_eq!(run.code, 2, "stderr: {}", run.stderr);
    assert!(
        run.stderr.contains("no price for the model m1"),
        "{}",
        run.stderr
    );
    for bad in ["-1", "0", "NaN", "inf", "1e9", "lots"] {
        let run = exec_json(
            home.path(),
            work.path(),
            &server,
            &[
                "-c",
                from_file.to_str().unwrap(),
                "--max-cost",
                bad,
                "read it",
            ],
        )
        .await;
        assert_eq!(run.code, 2, "{bad}: {}", run.stderr);
        assert!(run.stderr.contains("--max-cost"), "{bad}: {}", run.stderr);
    }
    let absurd = priced_config(home.path(), "max_cost = -0.5");
    let run = exec_json(
        home.path(),
        work.path(),
        &server,
        &["-c", absurd.to_str().unwrap(), "read it"],
    )
    .await;
    assert_eq!(run.code, 2, "stderr: {}", run.stderr);
    assert!(
        run.stderr
            .contains("priced.toml:1: max_cost: a cost budget is an amount of US dollars above 0"),
        "{}",
        run.stderr
    );
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn a_sub_agents_calls_count_and_are_stopped_too() {
    let (home, work) = setup();
    let config = priced_config(home.path(), "");
    let server = TestServer::start(vec![
        tool_turn("call_1", "delegate", r#"{"task": "read hello.txt"}"#),
        tool_turn("sub_1", "read_file", "{\"path\": \"hello.txt\"}"),
        tool_turn("sub_2", "read_file", "{\"path\": \"hello.txt\"}"),
        text_turn(&["It says hi."]),
        text_turn(&["It says hi."]),
    ])
    .await;
    let run = exec_json(
        home.path(),
        work.path(),
        &server,
        &[
            "-c",
            config.to_str().unwrap(),
            "--max-cost",
            "0.075",
            "read it",
        ],
    )
    .await;
    assert_eq!(run.code, 3, "stderr: {}", run.stderr);
    // The user's call and the sub-agent's first: the sub-agent's second would pass the
    // budget, and the user's conversation makes no call after it either.
    assert_eq!(server.requests().len(), 2);
    let events = json_lines(&run.stdout);
    let reached = of_type(&events, "budget_reached");
    assert_eq!(reached.len(), 1, "{}", run.stdout);
    let data = &reached[0]["data"];
    assert_eq!(data["purpose"], "sub_agent", "{data}");
    assert!(data["parent"].as_str().is_some(), "{data}");
    assert!(near(&data["spent"], 2.0 * CALL), "{data}");
    let delegated = of_type(&events, "tool_result")
        .into_iter()
        .find(|e| e["data"]["name"] == "delegate")
        .unwrap();
    let error = delegated["data"]["error"].as_str().unwrap();
    assert!(error.contains("the cost budget of $0.075"), "{error}");
    assert_eq!(events.last().unwrap()["data"]["kind"], "budget");
}

#[tokio::test]
async fn a_resumed_sessions_earlier_runs_count() {
    let (home, work) = setup();
    let config = priced_config(home.path(), "");
    let config = config.to_str().unwrap();
    let first = TestServer::start(keeps_calling()).await;
    let run = exec_json(home.path(), work.path(), &first, &["-c", config, "read it"]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    // Three tool turns and the answer (30 in, 3 out): $0.18.
    let spent = 3.0 * CALL + (30.0 + 3.0 * 10_000.0) / 1_000_000.0;
    let next = TestServer::start(vec![text_turn(&["again"])]).await;
    let run = exec_json(
        home.path(),
        work.path(),
        &next,
        &["-c", config, "--max-cost", "0.15", "and now?", "--resume"],
    )
    .await;
    assert_eq!(run.code, 3, "stderr: {}", run.stderr);
    assert!(run.stderr.contains("Resumed session"), "{}", run.stderr);
    assert!(next.requests().is_empty());
    let events = json_lines(&run.stdout);
    let reached = of_type(&events, "budget_reached");
    assert_eq!(reached.len(), 1, "{}", run.stdout);
    assert!(near(&reached[0]["data"]["spent"], spent), "{}", run.stdout);
}
