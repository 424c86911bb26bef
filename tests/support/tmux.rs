//! A tmux server of the test's own, to drive the real binary in a pseudo-terminal.
//! Needs tmux (CI installs it); a test using it first asks `needs::tmux()`, which skips it
//! with a note where tmux is missing (and fails it under CI).
#![allow(dead_code)]

use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// A tmux server of our own, so tests never touch the user's sessions.
pub struct Tmux {
    socket: String,
}

impl Tmux {
    pub fn start(command: &str, width: u16, height: u16) -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let socket = format!(
            "taco-e2e-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        );
        let tmux = Self { socket };
        let out = tmux.run(&[
            "new-session",
            "-d",
            "-s",
            "t",
            "-x",
            &width.to_string(),
            "-y",
            &height.to_string(),
            command,
        ]);
        assert!(
            out.status.success(),
            "tmux new-session failed (is tmux installed?): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        tmux
    }

    pub fn run(&self, args: &[&str]) -> Output {
        Command::new(super::needs::tmux_program())
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("run tmux (install it: apt-get install -y tmux)")
    }

    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "t"];
        args.extend_from_slice(keys);
        assert!(self.run(&args).status.success());
    }

    pub fn text(&self, text: &str) {
        assert!(
            self.run(&["send-keys", "-t", "t", "-l", text])
                .status
                .success()
        );
    }

    pub fn screen(&self) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-p", "-J", "-t", "t"]).stdout)
            .into_owned()
    }

    /// Waits until the screen shows `needle`; panics with the screen if it never does.
    pub fn wait_for(&self, needle: &str) -> String {
        self.wait_until(needle, |screen| screen.contains(needle))
    }

    /// Types `/mcp` until its list shows `needle` (a tool of a server): the list is a snapshot
    /// of the servers when it runs, and on a loaded machine a server may still be starting.
    pub fn wait_for_mcp(&self, needle: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            self.text("/mcp");
            self.keys(&["Enter"]);
            std::thread::sleep(Duration::from_secs(1));
            let screen = self.screen();
            if screen.contains(needle) {
                return screen;
            }
            if Instant::now() > deadline {
                panic!("timed out waiting for {needle} in /mcp; the screen shows:\n{screen}");
            }
        }
    }

    /// Waits until a dialog showing `needle` takes keys: the user moves to it with Tab if it
    /// waits for them (it opened while they typed, or it takes text).
    pub fn wait_for_ready(&self, needle: &str) -> String {
        let screen = self.wait_for(needle);
        if !waits(&screen) {
            return screen;
        }
        self.keys(&["Tab"]);
        self.wait_until(&format!("{needle} to take keys"), |screen| {
            screen.contains(needle) && !waits(screen)
        })
    }

    /// Waits until the screen passes `test`; panics with the screen if it never does.
    pub fn wait_until(&self, what: &str, test: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let screen = self.screen();
            if test(&screen) {
                return screen;
            }
            if Instant::now() > deadline {
                panic!("timed out waiting for {what}; the screen shows:\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// Whether a dialog on `screen` waits for the user (see `app/guard.rs`).
fn waits(screen: &str) -> bool {
    ["keys active in", "Tab to answer", "Tab: answer now"]
        .iter()
        .any(|note| screen.contains(note))
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

impl Tmux {
    /// A format variable of the pane (`#{alternate_on}`, `#{mouse_any_flag}`, …).
    pub fn pane_format(&self, format: &str) -> String {
        self.format_of("t", format)
    }

    /// A format variable of `target` (`t:0`, `t:0.1`).
    pub fn format_of(&self, target: &str, format: &str) -> String {
        let out = self.run(&["display-message", "-p", "-t", target, format]);
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Attaches a client to the session in a pseudo-terminal of `width`×`height` (`script`)
    /// and records every byte tmux writes to that terminal in `file`: what a real terminal
    /// would get (a passed-through OSC, the bell).
    pub fn attach_recorder(&self, file: &std::path::Path, width: u16, height: u16) -> Recorder {
        let attach = format!(
            "stty cols {width} rows {height}; exec tmux -L {} attach -t t",
            self.socket
        );
        let child = Command::new("script")
            .args(["-q", "-f", "-c", &attach])
            .arg(file)
            .env("TERM", "xterm-256color")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("run script (util-linux)");
        let deadline = Instant::now() + Duration::from_secs(15);
        while self.format_of("t", "#{session_attached}") != "1" {
            assert!(Instant::now() < deadline, "the client never attached");
            std::thread::sleep(Duration::from_millis(50));
        }
        Recorder {
            child,
            file: file.to_path_buf(),
        }
    }
}

/// A client attached through `script`, recording what its terminal receives.
pub struct Recorder {
    child: std::process::Child,
    file: std::path::PathBuf,
}

impl Recorder {
    /// What the client's terminal has received so far.
    pub fn received(&self) -> Vec<u8> {
        std::fs::read(&self.file).unwrap_or_default()
    }

    /// Waits until what was received contains `needle`; panics with it if it never does.
    pub fn wait_for(&self, needle: &[u8]) -> Vec<u8> {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let got = self.received();
            if got.windows(needle.len()).any(|w| w == needle) {
                return got;
            }
            if Instant::now() > deadline {
                panic!(
                    "the terminal never received {:?}; it got:\n{}",
                    String::from_utf8_lossy(needle),
                    String::from_utf8_lossy(&got).escape_debug()
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs taco in `work` in a clean environment under `home` (no keys; config, data and state
/// there), with `args` (already shell-quoted), then `then` (e.g. recording the terminal mode).
pub fn launch_taco(
    home: &std::path::Path,
    work: &std::path::Path,
    args: &str,
    then: &str,
    (width, height): (u16, u16),
) -> Tmux {
    let taco = env!("CARGO_BIN_EXE_taco");
    let path = std::env::var("PATH").unwrap_or_default();
    let command = format!(
        "cd '{work}' && env -i PATH='{path}' HOME='{home}' XDG_CONFIG_HOME='{home}/config' XDG_STATE_HOME='{home}/state' TERM=xterm-256color '{taco}' {args}; {then}echo EXITED; sleep 60",
        work = work.display(),
        home = home.display(),
    );
    Tmux::start(&command, width, height)
}

/// Runs `taco exec` to the end in the same clean environment; its stdout (a failure panics
/// with its stderr).
pub fn exec_taco(home: &std::path::Path, work: &std::path::Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_taco"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_STATE_HOME", home.join("state"))
        .current_dir(work)
        .arg("exec")
        .args(args)
        .output()
        .expect("run taco exec");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
