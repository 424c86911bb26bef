//! The agent's `terminal/create`, started here so it is ordered with the updates around it:
//! only while a turn runs (and is not being cancelled), and shown as a frame at once.

#[allow(clippy::wildcard_imports)]
use super::*;

use agent_client_protocol::v1::schema::{CreateTerminalRequest, CreateTerminalResponse};
use agent_client_protocol::{Responder, V1};

impl State {
    /// Starts the terminal `request` asks for, or answers why not (and says it).
    pub(super) async fn create_terminal(
        &mut self,
        request: &CreateTerminalRequest,
        responder: Responder<CreateTerminalResponse, V1>,
        now: u64,
    ) {
        let refused = |why: String| agent_client_protocol::Error::new(-32602, why);
        let Some(terminals) = self.terminals.clone() else {
            let _ = responder.respond_with_error(refused("taco did not offer terminals".into()));
            return;
        };
        if self.running.is_none() || self.cancelled_at.is_some() {
            let why =
                "no turn is in progress: taco runs an agent's terminals only during its turns";
            let _ = responder.respond_with_error(refused(why.into()));
            return;
        }
        match terminals.create(request) {
            Ok(started) => {
                tracing::info!(agent = %self.name, command = %started.command, "acp agent terminal");
                let _ = responder.respond(CreateTerminalResponse::new(started.id.clone()));
                let events = self.translator.terminal_started(&started, now);
                self.emit_all(events).await;
            }
            Err(why) => {
                let _ = responder.respond_with_error(refused(why.0.clone()));
                self.problem(format!("the agent's terminal was refused: {}", why.0))
                    .await;
            }
        }
    }

    /// The turn is over: its terminals die.
    pub(super) fn kill_terminals(&self) {
        if let Some(terminals) = &self.terminals {
            terminals.kill_all();
        }
    }
}
