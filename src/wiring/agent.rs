//! `taco --agent NAME`: the TUI over an external agent (`[agents.NAME]`, ACP). No provider
//! is resolved: the agent has its own. taco starts it in the workdir, records the session
//! (kind `agent`) and hands the TUI an [`AcpEngine`](crate::acp::client::AcpEngine).

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{Start, runtime};
use crate::acp::client::{self, SHOWN_MAX_TURNS};
use crate::config::{self, UiSettings};
use crate::exec::{EXIT_OK, EXIT_RUN_ERROR, EXIT_USAGE};
use crate::history::PromptLog;
use crate::recorder::Recorder;
use crate::session::{self, SessionKind};
use crate::tui::app::AppInfo;
use crate::tui::{self, Ended, Launch};
use crate::{logging, reaper};

/// The TUI over agent `name`; the exit code.
pub fn agent_tui(start: &Start, name: &str, launched: Instant) -> i32 {
    if start.resume.is_some() {
        crate::say!(
            "taco: --resume is for taco's own sessions; an external agent's session is read with taco trace FILE"
        );
        return EXIT_USAGE;
    }
    if let Err(code) = super::screen::need_terminal() {
        return code;
    }
    // Whatever the agent starts and leaves behind ends with taco.
    let _reaper = reaper::Reaper::start();
    let runtime = match runtime(true) {
        Ok(runtime) => runtime,
        Err(code) => return code,
    };
    let (_log, log_problem) = match logging::init() {
        Ok(guard) => (guard, None),
        Err(why) => (None, Some(why)),
    };
    runtime.block_on(async {
        // The agent starts before the screen is taken: a wrong name or a missing program is
        // said on the terminal.
        let launch = match prepare(start, name, launched, log_problem) {
            Ok(launch) => launch,
            Err(why) => {
                crate::say!("taco: {why}");
                return EXIT_USAGE;
            }
        };
        match run_agent(launch, start, launched).await {
            Next::Exit(code) => code,
            // `/agent taco`: taco's own loop, on a new conversation.
            Next::Taco(note) => super::screen::taco_loop(start, launched, note).await,
        }
    })
}

/// What comes after an agent's screen.
pub(super) enum Next {
    /// taco's own loop (`/agent taco`), saying this first.
    Taco(Option<String>),
    /// taco exits with this code.
    Exit(i32),
}

/// The screen over agent `name`, from taco's own (`/agent NAME`), until the user quits or
/// goes back to taco's loop.
pub(super) async fn drive(start: &Start, name: &str, launched: Instant) -> Next {
    match prepare(start, name, launched, None) {
        Ok(launch) => run_agent(launch, start, launched).await,
        Err(why) => Next::Taco(Some(format!("The agent `{name}` did not start: {why}"))),
    }
}

/// Agents' screens, one after another (`/agent OTHER`), until the user quits or picks taco.
async fn run_agent(mut launch: Launch, start: &Start, launched: Instant) -> Next {
    loop {
        match tui::run(launch).await {
            Ok(Ended::Quit | Ended::Resume(_)) => return Next::Exit(EXIT_OK),
            Ok(Ended::Signal(stop)) => return Next::Exit(stop.exit_code()),
            Ok(Ended::Agent(None)) => return Next::Taco(None),
            Ok(Ended::Agent(Some(other))) => match prepare(start, &other, launched, None) {
                Ok(next) => launch = next,
                Err(why) => {
                    return Next::Taco(Some(format!("The agent `{other}` did not start: {why}")));
                }
            },
            Err(e) => {
                tracing::error!("tui failed: {e}");
                crate::say!("taco: the terminal failed: {e}");
                return Next::Exit(EXIT_RUN_ERROR);
            }
        }
    }
}

/// The config's agent started, and what the TUI shows about it.
fn prepare(
    start: &Start,
    name: &str,
    launched: Instant,
    log_problem: Option<String>,
) -> Result<Launch, String> {
    let env = crate::vault::var;
    let (_, file) = config::read_config(&start.overrides, &env).map_err(|e| e.to_string())?;
    let (command, init_wait) =
        config::agents::agent(&file.agents, name).map_err(|e| e.to_string())?;
    let workdir = config::workdir(&start.overrides).map_err(|e| e.to_string())?;
    // The agent's environment is a shell command's: no provider key, no withheld secret.
    let mut settings = config::tool_settings(&file.tools);
    settings.secret_vars = config::key_vars(&file);
    settings.secrets = Arc::new(crate::vault::secrets(&settings.secret_vars));
    let secrets = Arc::clone(&settings.secrets);
    let mut notes: Vec<String> = log_problem.into_iter().collect();
    let audit = match crate::audit::state_dir().map(|d| crate::audit::AuditLog::open(&d)) {
        Some(Ok(log)) => Some(log),
        Some(Err(e)) => {
            notes.push(format!("the audit log is off: {e}"));
            None
        }
        None => None,
    };
    let dir = session::sessions_dir();
    if dir.is_none() {
        notes.push("this session is not saved: no data directory".to_string());
    }
    let recorder = Recorder::deferred(dir, audit, "acp", name, &workdir)
        .made_in(SessionKind::Agent)
        .with_secrets(Arc::clone(&secrets));
    let session = recorder.locator();
    let engine = client::launch(&command, &workdir, &settings, &env, recorder, init_wait)?;
    tracing::info!(agent = %name, command = %command.command, "acp agent started");
    notes.push(format!(
        "Driving the agent `{name}` ({}) over ACP: it runs its own loop and model; taco shows its work and asks you what it asks. /model, /compact, /rewind and `!` are taco's own and not available here; /agent taco goes back to taco's loop.",
        shown_command(&command)
    ));
    let info = AppInfo {
        provider: "acp".to_string(),
        model: name.to_string(),
        max_turns: SHOWN_MAX_TURNS,
        workdir: workdir.display().to_string(),
        dialog_guard: Duration::from_millis(
            file.tui.dialog_guard_ms.unwrap_or(config::DIALOG_QUIET_MS),
        ),
        secrets: Arc::clone(&secrets),
        environment: crate::vault::describe(&settings.env_passthrough, &settings.secret_vars),
        agents: file.agents.keys().cloned().collect(),
        driving: Some(name.to_string()),
        session: Some(session),
        ..AppInfo::default()
    };
    Ok(Launch {
        info,
        engine: Some(Box::new(engine)),
        history: Vec::new(),
        viewing: None,
        notice: Some(notes.join("\n\n")),
        launched,
        prompts: PromptLog::in_state_dir(secrets),
        ui: UiSettings {
            mouse: file.tui.mouse.unwrap_or(true),
            theme: file.tui.theme.unwrap_or_default(),
            notify: file.tui.notify.unwrap_or_default(),
        },
    })
}

/// The command line as the notice shows it (arguments shortened).
fn shown_command(command: &client::process::Command) -> String {
    let line = std::iter::once(command.command.as_str())
        .chain(command.args.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ");
    crate::text::summarize(&line, 80)
}
