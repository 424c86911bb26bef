//! End to end (issue 32): the real binary drives an external ACP agent in tmux, and that agent
//! is taco itself (`taco acp` against a loopback OpenAI server). The model asks to write a
//! file; the inner taco asks its client for permission; the outer taco shows its approval
//! dialog, `y` Enter approves, the file is written and the answer shows. Quitting leaves no
//! agent behind. Needs tmux (CI installs it).

use crate::support;

use std::path::Path;

use support::TestServer;
use support::cli::{text_turn, tool_turn};

fn config(home: &Path, server: &TestServer) {
    let dir = home.join("config/taco");
    std::fs::create_dir_all(&dir).unwrap();
    let taco = env!("CARGO_BIN_EXE_taco");
    // taco's own loop has a provider too (`/agent taco`), the same server; it is not asked.
    let text = format!(
        "provider = \"local\"\n\n[providers.local]\nkind = \"openai\"\nbase_url = \"{url}/v1\"\nmodel = \"m\"\n\n[agents.inner]\ncommand = {taco:?}\nargs = [\"-p\", \"openai\", \"--base-url\", \"{url}/v1\", \"-m\", \"m1\", \"acp\"]\nstartup_timeout_secs = 20\n",
        url = server.url()
    );
    std::fs::write(dir.join("config.toml"), text).unwrap();
}

#[test]
fn taco_drives_taco_acp_and_the_user_approves_its_write() {
    if !crate::support::needs::tmux() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let server = runtime.block_on(TestServer::start(vec![
        tool_turn(
            "c1",
            "write_file",
            r#"{"path": "greeting.txt", "content": "hello from taco acp\n"}"#,
        ),
        text_turn(&["The greeting is written."]),
    ]));
    config(home.path(), &server);
    let tmux = support::tmux::launch_taco(home.path(), work.path(), "--agent inner", "", (170, 45));
    tmux.wait_for("Driving the agent inner");
    tmux.text("write the greeting");
    tmux.keys(&["Enter"]);

    let screen = tmux.wait_for_ready("inner asks (ACP)");
    assert!(!work.path().join("greeting.txt").exists(), "{screen}");
    tmux.keys(&["y", "Enter"]);
    let screen = tmux.wait_for("The greeting is written.");
    assert_eq!(
        std::fs::read_to_string(work.path().join("greeting.txt")).unwrap(),
        "hello from taco acp\n",
        "{screen}"
    );

    // `/agent taco` brings taco's own loop to the screen; `/agent inner` the agent again.
    tmux.text("/agent taco");
    tmux.keys(&["Enter"]);
    tmux.wait_for("Talking to local with model m");
    tmux.text("/agent inner");
    tmux.keys(&["Enter"]);
    tmux.wait_for("Driving the agent inner");

    // Quit: the agent ends with taco; the sessions are on disk (the outer one of kind
    // `agent`, the inner ones of kind `acp`; a screen that recorded nothing left none).
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.wait_for("EXITED");
    let url = server.url();
    assert!(
        support::processes::running_with(&url).is_empty(),
        "the agent outlived taco: {:?}",
        support::processes::running_with(&url)
    );
    let files = support::cli::session_files(home.path());
    let kind = |f: &std::path::PathBuf| {
        taco::session::load(f)
            .unwrap()
            .header
            .and_then(|h| h.kind)
            .map(taco::session::SessionKind::name)
    };
    let kinds: Vec<_> = files.iter().map(kind).collect();
    assert!(kinds.contains(&Some("acp")), "{kinds:?}");
    assert_eq!(
        kinds.iter().filter(|k| **k == Some("agent")).count(),
        1,
        "{kinds:?}"
    );
    let outer = files
        .iter()
        .find(|f| kind(f) == Some("agent"))
        .unwrap_or_else(|| panic!("no session of kind agent: {kinds:?}"));

    // `taco trace` shows the agent's session: its approval and its answer.
    drop(tmux);
    let trace = support::tmux::launch_taco(
        home.path(),
        work.path(),
        &format!("trace '{}'", outer.display()),
        "",
        (170, 45),
    );
    let screen = trace.wait_for("The greeting is written.");
    assert!(screen.contains("approved"), "{screen}");
}
