//! The agent's terminals (`terminal/create`, `output`, `wait_for_exit`, `kill`, `release`),
//! run as taco runs its own `shell` tool's commands: `sh -c` in the sandbox (never outside
//! it: no one approved an escalation), in its own process group, with a shell command's
//! scrubbed environment, a working directory inside the workspace, its output kept within a
//! bound (the newest bytes, as ACP asks) and masked for secrets, and a time bound. Every
//! terminal is killed when the turn that made it ends, when it is released and when taco
//! is done with the agent: nothing an agent ran through taco outlives taco.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use agent_client_protocol::v1::schema::{
    CreateTerminalRequest, TerminalExitStatus, TerminalOutputResponse,
};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::mpsc::Sender;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::connection::Incoming;
use super::files::Refused;
use crate::sandbox::State;
use crate::tools::ToolSettings;
use crate::tools::builtin::shell::live;
use crate::tools::workspace::{Entry, Workspace};

/// Terminals one session may have at once (released ones do not count).
pub const MAX_TERMINALS: usize = 16;
/// Output one terminal keeps, whatever the agent asks: 1 MiB (an answer is one line).
pub const MAX_OUTPUT: usize = 1 << 20;
/// How long a terminal's command may run before taco kills it.
pub const MAX_RUN: Duration = Duration::from_secs(600);
/// `wait_for_exit` requests that may wait at once: each holds a task until its command
/// ends (600 s at most), so an agent that floods them is refused past this.
pub const MAX_WAITS: usize = 64;
/// Longest command line shown in the stack and recorded.
const SHOWN: usize = 4096;
/// After a kill, how long the pipes may take to close.
const KILL_DRAIN: Duration = Duration::from_secs(1);

/// News of a terminal for the engine: the stack, the timeline and the session file.
#[derive(Debug, Clone)]
pub enum News {
    /// Its last lines while it runs.
    Output {
        /// The terminal.
        id: String,
        /// Its last lines, masked.
        tail: String,
    },
    /// It ended.
    Ended {
        /// The terminal.
        id: String,
        /// How.
        exit: TerminalExitStatus,
        /// What it kept, masked.
        output: String,
        /// Whether older output was dropped.
        truncated: bool,
    },
}

/// A terminal that started, for the stack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Started {
    /// Its id, the agent's handle.
    pub id: String,
    /// The command line as run (`command` and its arguments), cut to a bound.
    pub command: String,
    /// Where it runs, relative to the workspace (empty for its root).
    pub cwd: String,
}

/// The output a terminal keeps: the newest `limit` bytes.
#[derive(Debug, Default)]
struct Kept {
    bytes: VecDeque<u8>,
    limit: usize,
    truncated: bool,
}

impl Kept {
    fn push(&mut self, data: &[u8]) {
        self.bytes.extend(data);
        let excess = self.bytes.len().saturating_sub(self.limit);
        if excess > 0 {
            self.bytes.drain(..excess);
            self.truncated = true;
        }
    }

    /// As text: a character cut at the front by the bound is dropped whole.
    fn text(&self) -> String {
        let (front, back) = self.bytes.as_slices();
        let mut bytes = Vec::with_capacity(self.bytes.len());
        bytes.extend_from_slice(front);
        bytes.extend_from_slice(back);
        let skip = if self.truncated {
            bytes
                .iter()
                .take(3)
                .take_while(|b| (**b & 0xC0) == 0x80)
                .count()
        } else {
            0
        };
        String::from_utf8_lossy(&bytes[skip..]).into_owned()
    }
}

/// One terminal: its output, its exit once it has one, and the switch that kills it.
struct Terminal {
    kept: Mutex<Kept>,
    exit: watch::Receiver<Option<TerminalExitStatus>>,
    kill: CancellationToken,
}

/// The session's terminals.
pub struct Terminals {
    settings: Arc<ToolSettings>,
    root: PathBuf,
    news: Sender<Incoming>,
    /// Cancelled when taco is done with the agent: every terminal dies.
    stop: CancellationToken,
    live: Mutex<Live>,
    waits: tokio::sync::Semaphore,
}

#[derive(Default)]
struct Live {
    made: u64,
    by_id: HashMap<String, Arc<Terminal>>,
}

impl Terminals {
    /// Terminals in `root` run with `settings` (sandbox, environment, secrets); their news
    /// goes to `news`; all die with `stop`.
    pub fn new(
        settings: Arc<ToolSettings>,
        root: &Path,
        news: Sender<Incoming>,
        stop: CancellationToken,
    ) -> Self {
        Self {
            settings,
            root: root.to_path_buf(),
            news,
            stop,
            live: Mutex::new(Live::default()),
            waits: tokio::sync::Semaphore::new(MAX_WAITS),
        }
    }

    fn live(&self) -> std::sync::MutexGuard<'_, Live> {
        self.live.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn get(&self, id: &str) -> Result<Arc<Terminal>, Refused> {
        self.live()
            .by_id
            .get(id)
            .cloned()
            .ok_or_else(|| Refused(format!("no terminal {id} (released, or never made)")))
    }

    /// Starts the command `request` asks for, or says why not.
    pub fn create(&self, request: &CreateTerminalRequest) -> Result<Started, Refused> {
        if let State::Unavailable(why) = self.settings.sandbox.state() {
            return Err(Refused(format!(
                "taco runs an agent's terminals only in its sandbox, which this machine cannot give ({why}); set [sandbox] mode = \"off\" to run them unconfined"
            )));
        }
        if self.live().by_id.len() >= MAX_TERMINALS {
            return Err(Refused(format!(
                "{MAX_TERMINALS} terminals are open; release one first"
            )));
        }
        let (cwd, shown_cwd) = self.cwd(request.cwd.as_deref())?;
        let mut command = tokio::process::Command::new("sh");
        // Provider keys and other secrets stay out of what the agent runs, as for `shell`.
        self.settings.child_env(&mut command);
        for variable in &request.env {
            let name = &variable.name;
            if name.is_empty() || name.contains(['=', '\0']) || variable.value.contains('\0') {
                return Err(Refused(format!(
                    "the terminal's variable {name:?} is not a variable"
                )));
            }
            command.env(name, &variable.value);
        }
        let confinement = self.settings.sandbox.confinement(false);
        self.settings
            .sandbox
            .confine(&mut command, &self.root, confinement)
            .map_err(|e| Refused(format!("the terminal was not started: {e}")))?;
        // The command is a shell line (as editors run it); the arguments follow it verbatim.
        command
            .arg("-c")
            .arg(format!("{} \"$@\"", request.command))
            .arg("sh")
            .args(&request.args)
            .current_dir(&cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        let child = command
            .spawn()
            .map_err(|e| Refused(format!("could not start sh in the sandbox: {e}")))?;
        let limit = request
            .output_byte_limit
            .map_or(MAX_OUTPUT, |l| usize::try_from(l).unwrap_or(MAX_OUTPUT))
            .min(MAX_OUTPUT);
        let (exit_tx, exit) = watch::channel(None);
        let terminal = Arc::new(Terminal {
            kept: Mutex::new(Kept {
                limit,
                ..Kept::default()
            }),
            exit,
            kill: self.stop.child_token(),
        });
        let id = {
            let mut live = self.live();
            live.made += 1;
            let id = format!("term-{}", live.made);
            live.by_id.insert(id.clone(), Arc::clone(&terminal));
            id
        };
        tokio::spawn(supervise(
            child,
            id.clone(),
            terminal,
            exit_tx,
            self.news.clone(),
            Arc::clone(&self.settings),
        ));
        let line = std::iter::once(request.command.as_str())
            .chain(request.args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ");
        Ok(Started {
            id,
            command: crate::text::shorten_end(&self.settings.secrets.redact(&line), SHOWN),
            cwd: shown_cwd,
        })
    }

    /// Where a terminal may run: `cwd` (absolute) reached through the workspace, else its
    /// root; the real path, and the path to show.
    fn cwd(&self, cwd: Option<&Path>) -> Result<(PathBuf, String), Refused> {
        let Some(cwd) = cwd else {
            return Ok((self.root.clone(), String::new()));
        };
        if !cwd.is_absolute() {
            return Err(Refused(format!(
                "the terminal's cwd must be absolute, not {}",
                cwd.display()
            )));
        }
        let workspace = Workspace::new(&self.root).map_err(|e| Refused(e.to_string()))?;
        let opened = workspace
            .open(&cwd.to_string_lossy())
            .map_err(|e| Refused(e.to_string()))?;
        if !matches!(opened.entry, Entry::Dir(_)) {
            return Err(Refused(format!("{} is not a directory", cwd.display())));
        }
        let shown = opened.rel.display().to_string();
        Ok((self.root.join(&opened.rel), shown))
    }

    /// What terminal `id` printed so far, and its exit once it has one.
    pub fn output(&self, id: &str) -> Result<TerminalOutputResponse, Refused> {
        let terminal = self.get(id)?;
        let (text, truncated) = {
            let kept = terminal.kept.lock().unwrap_or_else(PoisonError::into_inner);
            (kept.text(), kept.truncated)
        };
        let exit = terminal.exit.borrow().clone();
        Ok(
            TerminalOutputResponse::new(self.settings.secrets.redact(&text), truncated)
                .exit_status(exit),
        )
    }

    /// Waits for terminal `id` to exit (at most [`MAX_RUN`]: it is killed then).
    pub async fn wait(&self, id: &str) -> Result<TerminalExitStatus, Refused> {
        let mut exit = self.get(id)?.exit.clone();
        let _waiting = self.waits.try_acquire().map_err(|_| {
            Refused(format!(
                "{MAX_WAITS} waits for terminals are pending; wait for those first"
            ))
        })?;
        let ended = exit.wait_for(Option::is_some).await;
        match ended {
            Ok(status) => Ok(status.clone().unwrap_or_else(TerminalExitStatus::new)),
            Err(_) => Err(Refused(format!("terminal {id} was dropped"))),
        }
    }

    /// Kills terminal `id`'s command (its output stays until it is released).
    pub fn kill(&self, id: &str) -> Result<(), Refused> {
        self.get(id)?.kill.cancel();
        Ok(())
    }

    /// Kills terminal `id` if it still runs and forgets it.
    pub fn release(&self, id: &str) -> Result<(), Refused> {
        let terminal = self.live().by_id.remove(id);
        match terminal {
            Some(terminal) => {
                terminal.kill.cancel();
                Ok(())
            }
            None => Err(Refused(format!(
                "no terminal {id} (released, or never made)"
            ))),
        }
    }

    /// Kills every terminal still running (a turn ended); their output stays readable.
    pub fn kill_all(&self) {
        for terminal in self.live().by_id.values() {
            terminal.kill.cancel();
        }
    }
}

/// Runs one terminal's command to its end: output kept and its tail sent as news, killed
/// (with its group) on [`MAX_RUN`] or its switch, its exit published.
async fn supervise(
    mut child: tokio::process::Child,
    id: String,
    terminal: Arc<Terminal>,
    exit: watch::Sender<Option<TerminalExitStatus>>,
    news: Sender<Incoming>,
    settings: Arc<ToolSettings>,
) {
    let group = child.id();
    let tail = Mutex::new(live::Tail::default());
    let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
    let pumps = async {
        tokio::join!(
            pump(stdout, &terminal.kept, &tail),
            pump(stderr, &terminal.kept, &tail)
        );
    };
    tokio::pin!(pumps);
    let mut ticker = tokio::time::interval(live::EVERY);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let deadline = tokio::time::sleep(MAX_RUN);
    tokio::pin!(deadline);
    let mut pumps_done = false;
    let mut killed_why = None;
    let status = loop {
        tokio::select! {
            () = &mut pumps, if !pumps_done => pumps_done = true,
            status = child.wait() => break status.ok(),
            () = &mut deadline => {
                killed_why = Some(format!("killed by taco after {} s", MAX_RUN.as_secs()));
                break None;
            }
            () = terminal.kill.cancelled() => break None,
            _ = ticker.tick() => {
                let changed = tail.lock().unwrap_or_else(PoisonError::into_inner).take();
                if let Some(text) = changed {
                    let tail = settings.secrets.redact(&text).into_owned();
                    let _ = news.try_send(Incoming::Terminal(News::Output { id: id.clone(), tail }));
                }
            }
        }
    };
    // Whatever it left running goes with it: nothing an agent ran through taco outlives
    // the terminal.
    crate::mcp::kill_group(group);
    let status = match status {
        Some(status) => Some(status),
        None => {
            let _ = child.start_kill();
            tokio::time::timeout(KILL_DRAIN, child.wait())
                .await
                .ok()
                .and_then(Result::ok)
        }
    };
    if !pumps_done {
        let _ = tokio::time::timeout(KILL_DRAIN, &mut pumps).await;
    }
    let mut ended = exit_status(status);
    if let Some(why) = killed_why {
        terminal
            .kept
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(format!("\n[{why}]\n").as_bytes());
        ended.signal = ended.signal.or(Some("SIGKILL".to_string()));
    }
    let (output, truncated) = {
        let kept = terminal.kept.lock().unwrap_or_else(PoisonError::into_inner);
        (
            settings.secrets.redact(&kept.text()).into_owned(),
            kept.truncated,
        )
    };
    exit.send_replace(Some(ended.clone()));
    let _ = news
        .send(Incoming::Terminal(News::Ended {
            id,
            exit: ended,
            output,
            truncated,
        }))
        .await;
}

/// How a command ended, as ACP says it.
fn exit_status(status: Option<ExitStatus>) -> TerminalExitStatus {
    use std::os::unix::process::ExitStatusExt;
    let Some(status) = status else {
        return TerminalExitStatus::new().signal("SIGKILL".to_string());
    };
    let signal = status.signal().map(|s| match s {
        libc::SIGKILL => "SIGKILL".to_string(),
        libc::SIGTERM => "SIGTERM".to_string(),
        libc::SIGINT => "SIGINT".to_string(),
        other => format!("signal {other}"),
    });
    TerminalExitStatus::new()
        .exit_code(status.code().and_then(|c| u32::try_from(c).ok()))
        .signal(signal)
}

/// Copies a pipe into the kept output and the live tail until EOF.
async fn pump(
    reader: Option<impl AsyncRead + Unpin>,
    kept: &Mutex<Kept>,
    tail: &Mutex<live::Tail>,
) {
    let Some(mut reader) = reader else { return };
    let mut buf = vec![0u8; 16 * 1024];
    while let Ok(n) = reader.read(&mut buf).await {
        if n == 0 {
            break;
        }
        kept.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(&buf[..n]);
        tail.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(&buf[..n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_output_is_the_newest_bytes_cut_at_a_character() {
        let mut kept = Kept {
            limit: 4,
            ..Kept::default()
        };
        kept.push(b"ab");
        assert_eq!((kept.text(), kept.truncated), ("ab".to_string(), false));
        // "é" is two bytes: the cut falls inside it, and it is dropped whole.
        kept.push("xé€".as_bytes());
        assert!(kept.truncated);
        assert_eq!(kept.text(), "€");
        kept.push(b"12345");
        assert_eq!(kept.text(), "2345");
    }

    #[tokio::test]
    async fn waits_past_the_bound_are_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let (tx, _rx) = tokio::sync::mpsc::channel(8);
        let stop = CancellationToken::new();
        let terminals = Arc::new(Terminals::new(
            Arc::new(ToolSettings::default()),
            dir.path(),
            tx,
            stop.clone(),
        ));
        let request = CreateTerminalRequest::new("s1", "sleep 30");
        let id = terminals.create(&request).unwrap().id;
        let mut waiting = Vec::new();
        for _ in 0..MAX_WAITS {
            let (terminals, id) = (Arc::clone(&terminals), id.clone());
            waiting.push(tokio::spawn(async move { terminals.wait(&id).await }));
        }
        // Let every wait take its place.
        while terminals.waits.available_permits() > 0 {
            tokio::task::yield_now().await;
        }
        let refused = terminals.wait(&id).await.unwrap_err();
        assert!(
            refused.0.contains("waits for terminals are pending"),
            "{refused}"
        );
        terminals.kill(&id).unwrap();
        for wait in waiting {
            let exit = wait.await.unwrap().unwrap();
            assert_eq!(exit.signal.as_deref(), Some("SIGKILL"));
        }
        stop.cancel();
    }

    #[test]
    fn exit_statuses_read_as_acp_says_them() {
        use std::os::unix::process::ExitStatusExt;
        let code = exit_status(Some(ExitStatus::from_raw(3 << 8)));
        assert_eq!((code.exit_code, code.signal), (Some(3), None));
        let killed = exit_status(Some(ExitStatus::from_raw(libc::SIGKILL)));
        assert_eq!(
            (killed.exit_code, killed.signal.as_deref()),
            (None, Some("SIGKILL"))
        );
        assert_eq!(exit_status(None).signal.as_deref(), Some("SIGKILL"));
    }
}
