//! Plain-text strings carry no Markdown code spans (issue 14.6): errors are printed on stderr
//! and shown in the chat as they are, so a backtick would show raw. Every error type's
//! Display is checked here with names and ids that have none of their own; the chat's plain
//! cells (errors, warnings) quote a code span that came from outside (a server's message).
//! HTTP errors of every status are checked against a loopback server in `openai_wire.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use std::path::{Path, PathBuf};

use taco::config::{ConfigError, parse_config};
use taco::event::EventData;
use taco::session::SessionError;
use taco::tui::views::chat::NoticeKind;

use crate::support;
use support::app::Harness;

fn plain(text: &str) {
    assert!(!text.contains('`'), "a raw backtick in: {text}");
}

#[test]
fn session_errors_are_plain_text() {
    let path = PathBuf::from("/d/s.jsonl");
    let errors = [
        SessionError::NotFound { path: path.clone() },
        SessionError::Unreadable {
            path: path.clone(),
            source: std::io::Error::other("denied"),
        },
        SessionError::NotSession {
            path,
            reason: "no line of it is a taco entry".into(),
        },
        SessionError::NoSessionForWorkdir {
            workdir: "/w".into(),
            dir: "/d".into(),
        },
        SessionError::UnknownId {
            id: "2024".into(),
            dir: "/d".into(),
            known: vec!["a".into()],
        },
        SessionError::UnknownId {
            id: "2024".into(),
            dir: "/d".into(),
            known: Vec::new(),
        },
        SessionError::AmbiguousId {
            id: "2024".into(),
            candidates: vec!["20240101".into(), "20240102".into()],
        },
    ];
    for error in errors {
        plain(&error.to_string());
    }
}

fn config_error(text: &str) -> ConfigError {
    match parse_config(Path::new("c.toml"), text) {
        Err(e) => e,
        Ok(_) => panic!("{text:?} should not parse"),
    }
}

#[test]
fn config_errors_are_plain_text_even_where_serde_quotes_with_backticks() {
    for text in [
        "modle = 1\n",
        "[providers.x]\nbase = \"http://h\"\n",
        "[providers.x]\nbase_url = \"http://h\"\n",
        "[providers.x]\nkind = \"openai\"\nbase_url = \"ftp://h\"\n",
        "provider = \"nope\"\n",
        "[tools.policy]\nshell = \"sometimes\"\n",
        "[ui]\ntheme = \"blue\"\n",
        "max_turns = \"ten\"\n",
    ] {
        let error = config_error(text).to_string();
        plain(&error);
        assert!(error.starts_with("c.toml"), "names the file: {error}");
    }
    let error = config_error("modle = 1\n").to_string();
    assert!(error.contains("unknown field 'modle'"), "{error}");
}

#[test]
fn the_chats_plain_cells_quote_a_code_span_from_outside() {
    let mut h = Harness::new();
    h.app
        .chat
        .push_notice(NoticeKind::Warn, "server said: use `x --fix`");
    h.event(EventData::Error {
        kind: "mcp".into(),
        message: "'fs' failed: `npx` was not found".into(),
    });
    let terminal = h.screen(100, 20);
    let screen = format!("{}", terminal.backend());
    assert!(screen.contains("use 'x --fix'"), "{screen}");
    assert!(screen.contains("'npx' was not found"), "{screen}");
    plain(&screen);
}
