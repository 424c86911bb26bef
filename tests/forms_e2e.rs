//! End to end (issue 28.2): the real binary in tmux opens the fixture's rich form, shows every
//! field with its defaults, refuses an out-of-range number with its reason, and sends the
//! form once filled; the server's echo reaches the model. Needs tmux (CI installs it).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use crate::support;

use serde_json::Value;
use support::TestServer;
use support::cli::{text_turn, tool_turn};

#[test]
fn the_rich_form_is_filled_in_the_real_binary_and_reaches_the_server() {
    if !crate::support::needs::tmux() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let server = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(TestServer::start(vec![
            tool_turn("f1", "mcp__fixture__ask", r#"{"form": "rich"}"#),
            text_turn(&["thanks"]),
        ]));
    let dir = home.path().join("config/taco");
    std::fs::create_dir_all(&dir).unwrap();
    let text = format!(
        "provider = \"local\"\n\n[providers.local]\nkind = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"m\"\n\n[providers.local.options]\nmax_attempts = 1\n\n[mcp.servers.fixture]\ncommand = {:?}\npolicy = \"allow\"\n",
        server.url(),
        support::mcp::fixture().display().to_string()
    );
    std::fs::write(dir.join("config.toml"), text).unwrap();
    let tmux = support::tmux::launch_taco(home.path(), work.path(), "", "", (120, 60));
    tmux.wait_for("Welcome to taco");
    tmux.wait_for_mcp("mcp__fixture__ask");
    tmux.text("fill it in");
    tmux.keys(&["Enter"]);
    tmux.wait_for_ready("Tell us about you.");
    // Under load the form's first frame may be caught half drawn: wait for all of it.
    tmux.wait_until("the whole form", |screen| {
        screen.contains("1 of 13") && screen.contains("default 42") && screen.contains("Superman")
    });
    // The fields come in the server's order (name, agree, email, site, born, at, count, …
    // 13 in all). Tab to count (7th), an out-of-range value, then back to the buttons and
    // Accept: refused.
    tmux.keys(&["Tab", "Tab", "Tab", "Tab", "Tab", "Tab", "C-u"]);
    tmux.text("500");
    for _ in 0..7 {
        tmux.keys(&["BTab"]);
    }
    tmux.keys(&["a", "Enter"]);
    // The range is checked as it is typed: wait for the refusal of Accept, which says the
    // empty name is required too (the range error alone may show before the keys after it).
    tmux.wait_until("Accept refused with both errors", |screen| {
        screen.contains("must be 1 to 100") && screen.contains("required")
    });
    assert!(server.requests().len() == 1, "nothing sent yet");
    // Fix both: the refusal put the cursor on the first invalid field, the name; then count
    // back to 7 (six fields on); Tab on to the buttons, Accept.
    tmux.text("Ann");
    for _ in 0..6 {
        tmux.keys(&["Tab"]);
    }
    tmux.keys(&["C-u"]);
    tmux.text("7");
    for _ in 0..7 {
        tmux.keys(&["Tab"]);
    }
    tmux.keys(&["a", "Enter"]);
    tmux.wait_for("thanks");
    let requests = server.requests();
    let body: Value = requests[1].json();
    let told = (body["messages"].as_array().unwrap().iter())
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str())
        .unwrap()
        .to_string();
    assert!(told.contains("accepted"), "{told}");
    assert!(
        told.contains(r#"\"name\":\"Ann\""#) && told.contains(r#"\"count\":7"#),
        "{told}"
    );
}
