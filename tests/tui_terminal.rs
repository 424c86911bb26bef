//! The terminal side of issue 14.6, end to end in tmux: `y` copies through OSC 52 (tmux,
//! with `set-clipboard on`, keeps what it receives as a paste buffer, which `show-buffer`
//! reads back), `[ui] mouse = false` leaves mouse reporting off, and `theme = "auto"` asks the
//! terminal for its background (tmux answers OSC 11 from `window-style`). Issue 27: a dialog
//! that waits while nobody looks at taco's pane rings the bell and sends OSC 9 (seen by a
//! client attached through `script`), a copy under `set-clipboard off` says how to fix it, and
//! quitting after the window grew leaves the shell clean.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use crate::support;

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
    if !crate::support::needs::tmux() {
        return;
    }
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
    if !crate::support::needs::tmux() {
        return;
    }
    // taco sees $TMUX (as it does in any tmux pane) and sends both forms; tmux drops the
    // passthrough one (allow-passthrough is off) and keeps the plain one.
    let (copied, screen) = copy_through_tmux("TMUX='/tmp/tmux-test,1,0'");
    assert!(copied.starts_with("▶ run_started\n"), "{copied}");
    assert!(!screen.contains("tmux;"), "{screen}");
}

#[test]
fn mouse_false_leaves_mouse_reporting_off_and_the_default_turns_it_on() {
    if !crate::support::needs::tmux() {
        return;
    }
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
    if !crate::support::needs::tmux() {
        return;
    }
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
    if !crate::support::needs::tmux() {
        return;
    }
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

// ---- issue 27: notifications, tmux's set-clipboard, a resize before quitting --------------

/// taco as tmux runs it in a pane: `$TMUX` and `$TMUX_PANE` as tmux set them, so it asks
/// this tmux server about its pane.
const IN_TMUX: &str = "TMUX=\"$TMUX\" TMUX_PANE=\"$TMUX_PANE\"";

/// Bytes that call the user back in what a terminal received: the OSC 9 notification.
const OSC_9: &[u8] = b"\x1b]9;taco: approve write_file?\x07";

/// Runs the demo request in `target` up to its approval dialog.
fn ask_for_approval(tmux: &Tmux, target: &str) {
    assert!(
        tmux.run(&["send-keys", "-t", target, "-l", "hi"])
            .status
            .success()
    );
    assert!(
        tmux.run(&["send-keys", "-t", target, "Enter"])
            .status
            .success()
    );
}

/// The screen of `target`.
fn screen_of(tmux: &Tmux, target: &str) -> String {
    let out = tmux.run(&["capture-pane", "-p", "-J", "-t", target]);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn wait_screen(tmux: &Tmux, target: &str, needle: &str) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let screen = screen_of(tmux, target);
        if screen.contains(needle) {
            return screen;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no {needle:?} in {target}:\n{screen}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn an_approval_in_a_background_tmux_window_rings_its_bell() {
    if !crate::support::needs::tmux() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let tmux = launch_gated(home.path(), work.path(), IN_TMUX);
    let recorder = tmux.attach_recorder(&home.path().join("client.out"), 160, 45);
    go(home.path());
    wait_screen(&tmux, "t:0", "Welcome to taco");
    // The user goes to another window; taco's is in the background.
    // After window 0 (`-a`): a bare `-t t` can resolve to an index already in use.
    let opened = tmux.run(&["new-window", "-a", "-t", "t:0"]);
    assert!(
        opened.status.success(),
        "tmux new-window: {}",
        String::from_utf8_lossy(&opened.stderr)
    );
    assert_eq!(tmux.format_of("t:0", "#{window_active}"), "0");
    assert_eq!(tmux.format_of("t:0", "#{window_bell_flag}"), "0");
    ask_for_approval(&tmux, "t:0");
    wait_screen(&tmux, "t:0", "Approve write_file");
    // tmux took the bell: the window is flagged in the status line, and the terminal rang.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    while tmux.format_of("t:0", "#{window_bell_flag}") != "1" {
        assert!(
            std::time::Instant::now() < deadline,
            "no bell flag on taco's window"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let got = recorder.wait_for(b"\x07");
    assert!(
        !contains(&got, b"taco: approve"),
        "the notification's text never shows as text"
    );
    assert!(!screen_of(&tmux, "t:0").contains("]9;"), "nothing leaked");
}

#[test]
fn an_approval_in_a_pane_the_user_left_reaches_the_terminal_as_osc_9() {
    if !crate::support::needs::tmux() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let tmux = launch_gated(home.path(), work.path(), IN_TMUX);
    assert!(
        tmux.run(&["set", "-g", "allow-passthrough", "on"])
            .status
            .success()
    );
    let recorder = tmux.attach_recorder(&home.path().join("client.out"), 160, 45);
    go(home.path());
    wait_screen(&tmux, "t:0.0", "Welcome to taco");
    // The user works in a pane beside taco's: taco shows but nobody looks at it.
    assert!(tmux.run(&["split-window", "-t", "t:0"]).status.success());
    assert_eq!(tmux.format_of("t:0.0", "#{pane_active}"), "0");
    ask_for_approval(&tmux, "t:0.0");
    wait_screen(&tmux, "t:0.0", "Approve write_file");
    // tmux passes the wrapped OSC 9 on to the terminal, unwrapped, and the bell after it.
    let got = recorder.wait_for(OSC_9);
    assert!(contains(&got, b"\x1b]9;taco: approve write_file?\x07"));
    // One notification for the dialog, however long it waits.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let again = recorder.received();
    let count = again.windows(OSC_9.len()).filter(|w| *w == OSC_9).count();
    assert_eq!(
        count,
        1,
        "{}",
        String::from_utf8_lossy(&again).escape_debug()
    );
}

#[test]
fn an_approval_the_user_looks_at_neither_rings_nor_notifies() {
    if !crate::support::needs::tmux() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let tmux = launch_gated(home.path(), work.path(), IN_TMUX);
    assert!(
        tmux.run(&["set", "-g", "allow-passthrough", "on"])
            .status
            .success()
    );
    let recorder = tmux.attach_recorder(&home.path().join("client.out"), 160, 45);
    go(home.path());
    tmux.wait_for("Welcome to taco");
    ask_for_approval(&tmux, "t");
    tmux.wait_for("Approve write_file");
    // Long enough for tmux to have been asked again, and a notification to have gone out.
    std::thread::sleep(std::time::Duration::from_millis(2000));
    let got = recorder.received();
    assert!(!got.is_empty(), "the client is recording");
    assert!(
        !contains(&got, b"]9;"),
        "{}",
        String::from_utf8_lossy(&got).escape_debug()
    );
    assert!(!contains(&got, b"\x07"), "no bell");
}

/// Opens a timeline payload in taco under tmux with `set-clipboard` as `value`, copies it
/// with `y`: the status line, and tmux's paste buffer if the copy arrived.
fn copy_with_set_clipboard(value: &str) -> (String, Option<String>) {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let tmux = launch_gated(home.path(), work.path(), IN_TMUX);
    assert!(
        tmux.run(&["set", "-g", "set-clipboard", value])
            .status
            .success()
    );
    go(home.path());
    open_a_timeline_detail(&tmux);
    tmux.keys(&["y"]);
    let screen = tmux.wait_for("copied");
    let out = tmux.run(&["show-buffer"]);
    let kept = (out.status.success() && !out.stdout.is_empty())
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned());
    quit(&tmux);
    (screen, kept)
}

#[test]
fn inside_tmux_with_set_clipboard_off_the_copy_says_how_to_turn_it_on() {
    if !crate::support::needs::tmux() {
        return;
    }
    let (screen, kept) = copy_with_set_clipboard("off");
    assert!(
        screen.contains(
            "copied, but tmux's set-clipboard is off: add `set -g set-clipboard on` to ~/.tmux.conf"
        ),
        "{screen}"
    );
    assert_eq!(kept, None, "tmux took nothing");
    let (screen, kept) = copy_with_set_clipboard("on");
    assert!(!screen.contains("set-clipboard"), "{screen}");
    assert!(kept.unwrap().starts_with("▶ run_started\n"));
}

#[test]
fn growing_the_window_leaves_no_borders_on_the_shell_after_quitting() {
    if !crate::support::needs::tmux() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let tmux = support::tmux::launch_taco(home.path(), work.path(), "", "", (80, 24));
    tmux.wait_for("Welcome to taco");
    assert!(
        tmux.run(&["resize-window", "-t", "t", "-x", "160", "-y", "45"])
            .status
            .success()
    );
    // Drawn again at the new size (three columns from 140 on).
    tmux.wait_until("the wide layout", |s| {
        s.contains("timeline ·") && s.lines().any(|l| l.chars().count() > 150)
    });
    tmux.keys(&["C-c", "C-c"]);
    let screen = tmux.wait_for("EXITED");
    let boxes: Vec<&str> = (screen.lines())
        .filter(|l| l.contains(['─', '│', '┌', '┐', '└', '┘']))
        .collect();
    assert!(
        boxes.is_empty(),
        "rows of the last frame left behind:\n{screen}"
    );
}
