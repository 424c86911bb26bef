//! What tmux says about taco's pane, when taco runs inside tmux: whether anyone sees it (for
//! notifications, `notify.rs`), whether a copy can get out (`set-clipboard`,
//! `allow-passthrough`), and the terminal its client runs in. One `tmux display -p` answers
//! all of it; it is asked off the UI thread, at most [`ASK_TIMEOUT`] a time, every
//! [`BUSY_EVERY`] while a request runs (dialogs and run ends happen then) and every
//! [`IDLE_EVERY`] otherwise. Every answer is passed on, changed or not: it is the fresh word
//! on where the user is, over a focus report heard in between. A frame never waits for it.

use std::time::Duration;

use tokio::sync::watch;

/// Longest one question to tmux may take; a server that does not answer by then is asked
/// again next time.
pub const ASK_TIMEOUT: Duration = Duration::from_millis(500);
/// How often tmux is asked while a request runs.
pub const BUSY_EVERY: Duration = Duration::from_millis(500);
/// How often tmux is asked while idle (only `set-clipboard` can matter then).
pub const IDLE_EVERY: Duration = Duration::from_secs(5);
/// Most bytes of tmux's answer read.
const MAX_ANSWER: usize = 1024;

/// The format asked for, tab-separated: tmux formats read options by name too.
pub const FORMAT: &str = "#{window_active}\t#{pane_active}\t#{session_attached}\t#{set-clipboard}\t#{allow-passthrough}\t#{client_termname}";

/// tmux's `set-clipboard`: whether it takes a program's OSC 52.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetClipboard {
    /// It keeps a copy as a paste buffer and hands it on to the terminal.
    On,
    /// Another value (`external`, tmux's default, and `off` both ignore a program's copy).
    Not(String),
}

/// What tmux says about taco's pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaneState {
    /// Its window is the current one of a session with a client attached, and it is that
    /// window's active pane.
    pub shown: bool,
    /// `set-clipboard`.
    pub set_clipboard: SetClipboard,
    /// `allow-passthrough` is on: a wrapped sequence reaches the terminal.
    pub passthrough: bool,
    /// The terminal the client runs in (`#{client_termname}`), empty when unknown.
    pub client_term: String,
}

impl PaneState {
    /// Reads `tmux display -p FORMAT`'s answer; `None` when it is not one.
    pub fn parse(answer: &str) -> Option<Self> {
        let line = answer.lines().next()?;
        let mut fields = line.split('\t');
        let mut flag = || fields.next().map(|f| f.trim() == "1");
        let window_active = flag()?;
        let pane_active = flag()?;
        let attached = fields.next()?.trim().parse::<u32>().ok()?;
        let set_clipboard = match fields.next()?.trim() {
            "on" => SetClipboard::On,
            other => SetClipboard::Not(other.to_string()),
        };
        let passthrough = matches!(fields.next()?.trim(), "1" | "on" | "all");
        let client_term = fields.next().unwrap_or("").trim().to_string();
        Some(Self {
            shown: window_active && pane_active && attached > 0,
            set_clipboard,
            passthrough,
            client_term,
        })
    }

    /// Why a copy (OSC 52) never leaves tmux, when it cannot: `None` when it can.
    pub fn copy_blocked(&self) -> Option<&str> {
        match &self.set_clipboard {
            SetClipboard::On => None,
            _ if self.passthrough => None,
            SetClipboard::Not(value) => Some(value.as_str()),
        }
    }
}

/// What asking tmux gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// tmux said.
    State(PaneState),
    /// No answer this time (a timeout, an error, no server): ask again later.
    Silent,
    /// There is no `tmux` program to ask: asking again is pointless.
    NoTmux,
}

/// Asks tmux about `pane` (`$TMUX_PANE`; the current one when unset), within [`ASK_TIMEOUT`].
pub async fn ask(pane: Option<&str>) -> Answer {
    let mut command = tokio::process::Command::new("tmux");
    command.args(["display-message", "-p"]);
    if let Some(pane) = pane {
        command.args(["-t", pane]);
    }
    command
        .arg(FORMAT)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true);
    let output = match tokio::time::timeout(ASK_TIMEOUT, command.output()).await {
        Ok(Ok(output)) if output.status.success() => output,
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::NotFound => return Answer::NoTmux,
        _ => return Answer::Silent,
    };
    let answer = &output.stdout[..output.stdout.len().min(MAX_ANSWER)];
    match PaneState::parse(&String::from_utf8_lossy(answer)) {
        Some(state) => Answer::State(state),
        None => Answer::Silent,
    }
}

/// Asks tmux in the background, now and then, and tells what changed.
pub struct Watch {
    answers: watch::Receiver<Option<PaneState>>,
    busy: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl Watch {
    /// Starts asking about `pane`, when taco runs inside tmux (`$TMUX` set, not empty).
    pub fn start(tmux: Option<&std::ffi::OsStr>, pane: Option<String>) -> Option<Self> {
        tmux.filter(|t| !t.is_empty())?;
        let (tell, answers) = watch::channel(None);
        let (busy, mut busy_rx) = watch::channel(false);
        let task = tokio::spawn(async move {
            loop {
                match ask(pane.as_deref()).await {
                    Answer::State(state) => {
                        tell.send_replace(Some(state));
                    }
                    Answer::Silent => {}
                    Answer::NoTmux => {
                        tracing::info!("$TMUX is set but there is no tmux to ask");
                        return;
                    }
                }
                let every = if *busy_rx.borrow_and_update() {
                    BUSY_EVERY
                } else {
                    IDLE_EVERY
                };
                // A request starting is asked about at once: its first dialog may be near.
                tokio::select! {
                    _ = tokio::time::sleep(every) => {}
                    changed = busy_rx.changed() => if changed.is_err() { return },
                }
                if tell.is_closed() {
                    return;
                }
            }
        });
        Some(Self {
            answers,
            busy,
            task,
        })
    }

    /// Says whether a request runs (how often to ask).
    pub fn set_busy(&self, busy: bool) {
        self.busy
            .send_if_modified(|b| std::mem::replace(b, busy) != busy);
    }

    /// The next answer; never when the asking stopped.
    pub async fn answer(&mut self) -> PaneState {
        loop {
            if self.answers.changed().await.is_err() {
                return std::future::pending().await;
            }
            if let Some(state) = self.answers.borrow_and_update().clone() {
                return state;
            }
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The next answer from `watch`, or never without one.
pub async fn next(watch: &mut Option<Watch>) -> PaneState {
    match watch {
        Some(watch) => watch.answer().await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_reads_into_the_pane_state() {
        let shown = PaneState::parse("1\t1\t1\texternal\t0\txterm-256color\n").unwrap();
        assert!(shown.shown);
        assert_eq!(shown.set_clipboard, SetClipboard::Not("external".into()));
        assert_eq!(shown.copy_blocked(), Some("external"));
        assert_eq!(shown.client_term, "xterm-256color");
        // Another window is current, another pane active, or no client attached: unseen.
        for answer in ["0\t1\t1\ton\t0\t", "1\t0\t1\ton\t0\t", "1\t1\t0\ton\t0\t"] {
            let state = PaneState::parse(answer).unwrap();
            assert!(!state.shown, "{answer:?}");
            assert_eq!(state.copy_blocked(), None, "set-clipboard on");
        }
        // Passthrough gets a wrapped copy out whatever set-clipboard says.
        let through = PaneState::parse("1\t1\t1\toff\t1\t").unwrap();
        assert_eq!(through.copy_blocked(), None);
        assert_eq!(PaneState::parse("1\t1\t1\toff\t0").unwrap().client_term, "");
    }

    #[test]
    fn a_broken_answer_is_none() {
        for answer in ["", "1\t1", "1\t1\tmany\ton\t0\t", "no server running"] {
            assert_eq!(PaneState::parse(answer), None, "{answer:?}");
        }
    }

    #[tokio::test]
    async fn outside_tmux_nothing_is_asked() {
        assert!(Watch::start(None, None).is_none());
        assert!(Watch::start(Some(std::ffi::OsStr::new("")), None).is_none());
        let mut none = None;
        let waited = tokio::time::timeout(Duration::from_millis(20), next(&mut none)).await;
        assert!(waited.is_err(), "never answers");
    }
}
