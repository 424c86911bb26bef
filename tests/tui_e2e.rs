//! End to end: the real binary in a pseudo-terminal (tmux), on the offline demo provider.
//! Needs tmux (CI installs it); without tmux the tests say so and fail.

use std::path::Path;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// A tmux server of our own, so tests never touch the user's sessions.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn start(command: &str, width: u16, height: u16) -> Self {
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

    fn run(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("run tmux (install it: apt-get install -y tmux)")
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "t"];
        args.extend_from_slice(keys);
        assert!(self.run(&args).status.success());
    }

    fn text(&self, text: &str) {
        assert!(
            self.run(&["send-keys", "-t", "t", "-l", text])
                .status
                .success()
        );
    }

    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-p", "-J", "-t", "t"]).stdout)
            .into_owned()
    }

    /// Waits until the screen shows `needle`; panics with the screen if it never does.
    fn wait_for(&self, needle: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let screen = self.screen();
            if screen.contains(needle) {
                return screen;
            }
            if Instant::now() > deadline {
                panic!("timed out waiting for {needle:?}; the screen shows:\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

/// Runs taco in a shell that records the terminal mode after taco exits.
fn launch(home: &Path, work: &Path) -> Tmux {
    let taco = env!("CARGO_BIN_EXE_taco");
    let path = std::env::var("PATH").unwrap_or_default();
    let command = format!(
        "cd '{work}' && env -i PATH='{path}' HOME='{home}' XDG_CONFIG_HOME='{home}/config' XDG_STATE_HOME='{home}/state' TERM=xterm-256color '{taco}'; stty -a > '{home}/stty.txt'; echo EXITED; sleep 60",
        work = work.display(),
        home = home.display(),
    );
    Tmux::start(&command, 160, 45)
}

fn wait_for_file(path: &Path) -> String {
    let deadline = Instant::now() + Duration::from_secs(15);
    while Instant::now() < deadline {
        if let Ok(text) = std::fs::read_to_string(path)
            && !text.is_empty()
        {
            return text;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("{} never appeared", path.display());
}

#[test]
fn approve_the_demo_write_then_quit_with_ctrl_c_twice() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("notes.txt"), "hello\n").unwrap();
    let tmux = launch(home.path(), work.path());
    let screen = tmux.wait_for("Welcome to taco");
    assert!(
        screen.contains("demo"),
        "the status line names the auto-selected provider:\n{screen}"
    );

    tmux.text("hi");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("Approve write_file");
    assert!(
        screen.contains("list_dir"),
        "list_dir shows in the stack or timeline:\n{screen}"
    );
    assert!(
        screen.contains("taco-demo-note.md"),
        "the dialog shows the arguments:\n{screen}"
    );
    tmux.keys(&["y"]);
    tmux.wait_for("I wrote a short note");
    assert!(
        work.path().join("taco-demo-note.md").exists(),
        "the approved write happened"
    );

    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.wait_for("EXITED");
    let stty = wait_for_file(&home.path().join("stty.txt"));
    assert!(
        stty.contains(" icanon") && stty.contains(" echo"),
        "the terminal is back in cooked mode:\n{stty}"
    );
}

#[test]
fn deny_the_demo_write_with_n() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let tmux = launch(home.path(), work.path());
    tmux.wait_for("Welcome to taco");
    tmux.text("hi");
    tmux.keys(&["Enter"]);
    tmux.wait_for("Approve write_file");
    tmux.keys(&["n"]);
    tmux.wait_for("Reason for the model");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("denied");
    assert!(
        !work.path().join("taco-demo-note.md").exists(),
        "no file after a denial:\n{screen}"
    );
    tmux.wait_for("so I left the workspace untouched");
    tmux.text("/quit");
    tmux.keys(&["Enter"]);
    tmux.wait_for("EXITED");
    let stty = wait_for_file(&home.path().join("stty.txt"));
    assert!(stty.contains(" icanon"), "{stty}");
}
