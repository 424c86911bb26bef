//! Listing a server's models for the `/model` picker (issue 14.5), over real HTTP to loopback
//! servers: OpenAI-compatible `GET /v1/models`, Ollama `GET /api/tags`, Anthropic
//! `GET /v1/models` with its headers; the key sent as each provider sends it and never in an
//! error; a slow server, an oversized body and a malformed one each end in a clear error.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use crate::support;

use std::time::Duration;

use serde_json::{Map, json};
use support::{Reply, TestServer, unreachable_url};
use taco::provider::Provider;
use taco::provider::Secret;
use taco::provider::anthropic::{AnthropicConfig, AnthropicProvider};
use taco::provider::models::{LIST_MAX_BYTES, ModelsError};
use taco::provider::ollama::{OllamaConfig, OllamaProvider};
use taco::provider::openai::{OpenAiConfig, OpenAiProvider};

const KEY: &str = "sk-FAKE-models-key-0123456789";

fn openai(base: &str) -> OpenAiProvider {
    OpenAiProvider::new(OpenAiConfig {
        name: "local".into(),
        base_url: format!("{base}/v1"),
        model: "m1".into(),
        api_key: Some(Secret::new(KEY)),
        api_key_env: Some("LOCAL_KEY".into()),
        send_reasoning_content: false,
        extra_body: Map::new(),
        connect_timeout: Duration::from_secs(5),
        idle_timeout: Duration::from_secs(10),
    })
    .unwrap()
}

fn ollama(base: &str) -> OllamaProvider {
    OllamaProvider::new(OllamaConfig {
        name: "ollama".into(),
        base_url: base.into(),
        model: "llama3.2".into(),
        api_key: None,
        api_key_env: None,
        think: None,
        num_ctx: None,
        extra_body: Map::new(),
        connect_timeout: Duration::from_secs(5),
        idle_timeout: Duration::from_secs(10),
    })
    .unwrap()
}

fn anthropic(base: &str) -> AnthropicProvider {
    AnthropicProvider::new(AnthropicConfig {
        name: "anthropic".into(),
        base_url: base.into(),
        model: "claude-sonnet-4-5".into(),
        api_key: Some(Secret::new(KEY)),
        api_key_env: Some("ANTHROPIC_API_KEY".into()),
        max_tokens: 1024,
        thinking_budget: None,
        extra_body: Map::new(),
        connect_timeout: Duration::from_secs(5),
        idle_timeout: Duration::from_secs(10),
    })
    .unwrap()
}

#[tokio::test]
async fn openai_compatible_servers_list_v1_models_with_the_bearer_key() {
    let server = TestServer::start(vec![Reply::status(200).json(&json!({
        "object": "list",
        "data": [
            {"id": "qwen2.5-coder", "object": "model", "owned_by": "me"},
            {"id": "llama-3.3-70b", "object": "model"},
        ]
    }))])
    .await;
    let models = openai(&server.url()).models().await.unwrap();
    assert_eq!(models, ["llama-3.3-70b", "qwen2.5-coder"]);
    let request = &server.requests()[0];
    assert_eq!(request.method, "GET");
    assert_eq!(request.path, "/v1/models");
    assert_eq!(
        request.header("authorization"),
        Some(&*format!("Bearer {KEY}"))
    );
}

#[tokio::test]
async fn ollama_lists_api_tags() {
    let server = TestServer::start(vec![Reply::status(200).json(&json!({
        "models": [
            {"name": "qwen3:8b", "model": "qwen3:8b", "size": 5_200_000_000_u64},
            {"name": "llama3.2:latest", "model": "llama3.2:latest"},
        ]
    }))])
    .await;
    let models = ollama(&server.url()).models().await.unwrap();
    assert_eq!(models, ["llama3.2:latest", "qwen3:8b"]);
    let request = &server.requests()[0];
    assert_eq!(
        (request.method.as_str(), request.path.as_str()),
        ("GET", "/api/tags")
    );
    assert_eq!(request.header("authorization"), None, "no key, no header");
}

#[tokio::test]
async fn anthropic_lists_v1_models_with_its_key_header_and_version() {
    let server = TestServer::start(vec![Reply::status(200).json(&json!({
        "data": [{"type": "model", "id": "claude-sonnet-4-5", "display_name": "Claude Sonnet 4.5"}],
        "has_more": false
    }))])
    .await;
    let models = anthropic(&server.url()).models().await.unwrap();
    assert_eq!(models, ["claude-sonnet-4-5"]);
    let request = &server.requests()[0];
    assert_eq!(request.path, "/v1/models?limit=1000");
    assert_eq!(request.header("x-api-key"), Some(KEY));
    assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(request.header("authorization"), None);
}

#[tokio::test]
async fn a_slow_server_times_out_with_a_clear_error() {
    let server = TestServer::start(vec![
        Reply::status(200)
            .json(&json!({"data": [{"id": "late"}]}))
            .chunk_delay(Duration::from_secs(10)),
    ])
    .await;
    let error = openai(&server.url()).models().await.unwrap_err();
    assert!(
        matches!(error, ModelsError::TimedOut { secs: 3, .. }),
        "{error:?}"
    );
    let said = error.to_string();
    assert!(
        said.contains("no answer from") && said.contains("within 3 s"),
        "{said}"
    );
}

#[tokio::test]
async fn an_oversized_body_is_not_read() {
    let big = format!(
        "{{\"data\":[{}]}}",
        vec![r#"{"id":"model-with-a-long-enough-name"}"#; 40_000].join(",")
    );
    assert!(big.len() > LIST_MAX_BYTES);
    let server = TestServer::start(vec![
        Reply::status(200)
            .header("Content-Type", "application/json")
            .body(big),
    ])
    .await;
    let error = openai(&server.url()).models().await.unwrap_err();
    assert!(matches!(error, ModelsError::TooLarge { .. }), "{error:?}");
    assert!(error.to_string().contains("over 1024 KiB"), "{error}");
}

#[tokio::test]
async fn a_malformed_body_says_what_was_expected() {
    let server = TestServer::start(vec![
        Reply::status(200).json(&json!({"object": "list", "models": []})),
        Reply::status(200)
            .header("Content-Type", "text/html")
            .body("<html>hi</html>"),
    ])
    .await;
    let provider = openai(&server.url());
    let error = provider.models().await.unwrap_err().to_string();
    assert!(
        error.contains(r#"{"data":[{"id":…}]}"#) && error.contains("no \"data\" list"),
        "{error}"
    );
    let error = provider.models().await.unwrap_err();
    assert!(matches!(error, ModelsError::Malformed { .. }), "{error:?}");
}

#[tokio::test]
async fn an_error_status_says_what_it_means_without_the_key_the_server_echoed() {
    let server = TestServer::start(vec![
        Reply::status(401).json(&json!({"error": {"message": format!("bad key {KEY}")}})),
    ])
    .await;
    let error = openai(&server.url())
        .models()
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("HTTP 401") && error.contains("API key was not accepted"),
        "{error}"
    );
    assert!(!error.contains(KEY), "{error}");
}

#[tokio::test]
async fn an_unreachable_server_says_so() {
    let url = unreachable_url().await;
    let error = ollama(&url).models().await.unwrap_err();
    assert!(matches!(error, ModelsError::Unreachable(_)), "{error:?}");
    assert!(error.to_string().contains("connection refused"), "{error}");
}
