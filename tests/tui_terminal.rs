//! The terminal side of issue 14.6, end to end in tmux: `y` copies through OSC 52 (tmux,
//! with `set-clipboard on`, keeps what it receives as a paste buffer, which `show-buffer`
//! reads back), `[ui] mouse = false` leaves mouse reporting off, and `theme = "auto"` asks the
//! terminal for its background (tmux answers OSC 11 from `window-style`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

mod support;

use std::path::Path;

use support::tmux::Tmux;

/// Runs taco in tmux with a clean environment plus `env` (`NAME='value' …`), once the file
/// `go` appears in `home`, so the test can set tmux options before taco starts.
fn launch_gated(home: &Path, work: &Path, env: &str) -> Tmux {
    let taco = env!("CARGO_BIN_EXE_taco");
    let path = std::env::var("PATH").unwrap_or_default();
    let command = format!(
        "while [ ! -e '{home}/go' ]; do sleep 0.05; done; cd '{work}' && env -i PATH='{path}' HOME='{home}' XDG_CONFIG_HOME='{home}/config' XDG_STATE_HOME='{home}/state' TERM=xterm-256color {env} '{taco}'; echo EXITED; sleep 60",
        work = work.display(),
        home = home.display(),
    );
    Tmux::start(&command, 160, 45)
}

fn go(home: &Path) {
    std::fs::write(home.join("go"), "").unwrap();
}

fn config(home: &Path, text: &str) {
    let dir = home.join("config/taco");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), text).unwrap();
}

/// The newest tmux paste buffer, once there is one.
fn buffer(tmux: &Tmux) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    loop {
        let out = tmux.run(&["show-buffer"]);
        if out.status.success() && !out.stdout.is_empty() {
            return String::from_utf8_lossy(&out.stdout).into_owned();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no paste buffer; the screen shows:\n{}",
            tmux.screen()
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// Runs the demo request, denies its write, and opens the timeline's first row.
fn open_a_timeline_detail(tmux: &Tmux) {
    tmux.wait_for("Welcome to taco");
    tmux.text("hi");
    tmux.keys(&["Enter"]);
    tmux.wait_for_ready("Approve write_file");
    tmux.keys(&["n", "Enter"]);
    tmux.wait_for("Reason for the model");
    tmux.keys(&["Enter"]);
    tmux.wait_for("so I left the workspace untouched");
    // Chat → stack → timeline; Home: the run's start, then its payload.
    tmux.keys(&["Tab", "Tab", "Home", "Enter"]);
    tmux.wait_for("Esc close");
}

fn quit(tmux: &Tmux) {
    tmux.keys(&["Escape"]);
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.wait_for("EXITED");
}

/// Launches taco with `env`, opens a timeline payload, presses `y`: what tmux kept as its
/// paste buffer, and the screen after the copy.
fn copy_through_tmux(env: &str) -> (String, String) {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let tmux = launch_gated(home.path(), work.path(), env);
    assert!(
        tmux.run(&["set", "-g", "set-clipboard", "on"])
            .status
            .success()
    );
    go(home.path());
    open_a_timeline_detail(&tmux);
    assert!(
        !tmux.run(&["show-buffer"]).status.success(),
        "no buffer before the copy"
    );
    tmux.keys(&["y"]);
    let screen = tmux.wait_for("copied");
    let copied = buffer(&tmux);
    quit(&tmux);
    (copied, screen)
}

#[test]
fn y_in_the_timeline_detail_sets_the_clipboard_with_osc_52() {
    let (copied, screen) = copy_through_tmux("");
    // The payload of the run's start, as the detail view shows it.
    assert!(copied.starts_with("▶ run_started\n"), "{copied}");
    assert!(copied.contains("\"prompt\": \"hi\""), "{copied}");
    assert!(
        !screen.contains("52;c"),
        "nothing leaked to the screen:\n{screen}"
    );
}

#[test]
fn inside_tmux_the_copy_also_goes_out_wrapped_and_the_plain_one_still_lands() {
    // taco sees $TMUX (as it does in any tmux pane) and sends both forms; tmux drops the
    // passthrough one (allow-passthrough is off) and keeps the plain one.
    let (copied, screen) = copy_through_tmux("TMUX='/tmp/tmux-test,1,0'");
    assert!(copied.starts_with("▶ run_started\n"), "{copied}");
    assert!(!screen.contains("tmux;"), "{screen}");
}

#[test]
fn mouse_false_leaves_mouse_reporting_off_and_the_default_turns_it_on() {
    for (config_text, expected) in [("", "1"), ("[ui]\nmouse = false\n", "0")] {
        let home = tempfile::tempdir().unwrap();
        let work = tempfile::tempdir().unwrap();
        config(home.path(), config_text);
        let tmux = launch_gated(home.path(), work.path(), "");
        go(home.path());
        tmux.wait_for("Welcome to taco");
        assert_eq!(
            tmux.pane_format("#{mouse_any_flag}"),
            expected,
            "config {config_text:?}"
        );
        assert_eq!(tmux.pane_format("#{alternate_on}"), "1");
        tmux.keys(&["C-c", "C-c"]);
        tmux.wait_for("EXITED");
        assert_eq!(tmux.pane_format("#{mouse_any_flag}"), "0", "restored");
    }
}

/// The screen with its colours (`capture-pane -e`).
fn coloured(tmux: &Tmux) -> String {
    let out = tmux.run(&["capture-pane", "-p", "-e", "-t", "t"]);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn auto_theme_is_light_where_the_terminal_says_its_background_is() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let tmux = launch_gated(home.path(), work.path(), "");
    // tmux answers OSC 11 with the pane's background.
    let style = tmux.run(&["set", "-g", "window-style", "bg=#fdf6e3"]);
    assert!(style.status.success());
    go(home.path());
    tmux.wait_for("Welcome to taco");
    let screen = coloured(&tmux);
    // The focused chat border: 24 in the light palette, 74 in the dark one.
    assert!(screen.contains("38;5;24m"), "light colours:\n{screen}");
    assert!(!screen.contains("38;5;74m"), "no dark ones:\n{screen}");
    let text = tmux.screen();
    assert!(
        text.contains("ask taco to do something"),
        "an empty composer:\n{text}"
    );
    assert!(!text.contains("rgb"), "no answer typed in:\n{text}");
    tmux.keys(&["C-c", "C-c"]);
    tmux.wait_for("EXITED");
}

#[test]
fn auto_theme_is_dark_when_the_terminal_does_not_say_and_nothing_is_typed_in() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    // Without a window-style, tmux 3.3 answers only the device attributes.
    let tmux = launch_gated(home.path(), work.path(), "");
    go(home.path());
    tmux.wait_for("Welcome to taco");
    let screen = coloured(&tmux);
    assert!(screen.contains("38;5;74m"), "dark colours:\n{screen}");
    let text = tmux.screen();
    assert!(text.contains("ask taco to do something"), "{text}");
    // A forced light theme asks nothing and draws light.
    tmux.keys(&["C-c", "C-c"]);
    tmux.wait_for("EXITED");
    drop(tmux);
    let home = tempfile::tempdir().unwrap();
    config(home.path(), "[tui]\ntheme = \"light\"\n");
    let tmux = launch_gated(home.path(), work.path(), "");
    go(home.path());
    tmux.wait_for("Welcome to taco");
    assert!(
        coloured(&tmux).contains("38;5;24m"),
        "the old [tui] name still works"
    );
    tmux.keys(&["C-c", "C-c"]);
    tmux.wait_for("EXITED");
}
