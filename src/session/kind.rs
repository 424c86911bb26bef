//! What a list of sessions says about each one besides its counts (issue 27): how it was
//! made (the TUI or `taco exec`), how its last run ended, and which one `--resume` without an
//! id takes ("my last conversation here").

use serde::{Deserialize, Deserializer, Serialize};

/// Where a session was started: a person in the TUI, or a headless `taco exec` run. Kept in
/// the session header (`"kind"`); a file from before it was recorded has none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionKind {
    /// The full-screen TUI.
    Tui,
    /// `taco exec`.
    Exec,
    /// `taco acp`: an editor or another ACP client drove it.
    Acp,
    /// `taco --agent NAME`: taco's screen over an external agent (ACP); its file holds the
    /// user's messages and the agent's events, not a conversation taco's loop can go on with.
    Agent,
}

impl SessionKind {
    /// The word lists show.
    pub fn name(self) -> &'static str {
        match self {
            Self::Tui => "tui",
            Self::Exec => "exec",
            Self::Acp => "acp",
            Self::Agent => "agent",
        }
    }
}

/// A header's `kind`, where a value this taco does not know (a newer one's, another tool's)
/// reads as not said rather than making the file no session.
pub(super) fn lenient_kind<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<SessionKind>, D::Error> {
    let value = Option::<serde_json::Value>::deserialize(deserializer)?;
    Ok(value.and_then(|v| SessionKind::deserialize(v).ok()))
}

/// How a run ended, as its last line says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunEnd {
    /// `final`: the model answered.
    Answered,
    /// `error`.
    Failed,
    /// `cancelled`: the user stopped it.
    Cancelled,
}

impl RunEnd {
    /// The end an event line of type `kind` is, if it ends a run.
    pub(super) fn of(kind: &str) -> Option<Self> {
        match kind {
            "final" => Some(Self::Answered),
            "error" => Some(Self::Failed),
            "cancelled" => Some(Self::Cancelled),
            _ => None,
        }
    }
}

/// Where a session's runs stand, as the index folds its lines (`catalog`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Runs {
    /// How the last run that ended ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<RunEnd>,
    /// A run started after it and has not ended (killed, crashed, or still going).
    #[serde(default)]
    pub open: bool,
    /// The newest line's time (unix ms; the header's start when it has no other).
    pub last_at: u64,
}

impl Runs {
    /// Takes in one line of type `kind` written at `timestamp`.
    pub(super) fn note(&mut self, kind: &str, timestamp: Option<u64>) {
        if let Some(at) = timestamp {
            self.last_at = self.last_at.max(at);
        }
        if kind == "run_started" {
            self.open = true;
        } else if let Some(end) = RunEnd::of(kind) {
            (self.ended, self.open) = (Some(end), false);
        }
    }
}

/// How a session stands, in one word (`taco sessions`, the `/resume` picker).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Its last run ended with the model's answer.
    Answered,
    /// Its last run ended with an error (even before the model said anything: that is worth
    /// knowing).
    Failed,
    /// The user cancelled its last run, after the model had answered something.
    Cancelled,
    /// Its last run never ended (killed, crashed, or still going in another window), after
    /// the model had answered something.
    Interrupted,
    /// The model never answered and nothing failed: a run cancelled or killed before its
    /// first answer, or none at all. Nothing to go back to.
    Empty,
}

impl Outcome {
    /// The outcome of a session with `turns` model calls whose runs stand at `runs`.
    pub fn of(turns: u32, runs: &Runs) -> Self {
        match (runs.open, runs.ended) {
            (false, Some(RunEnd::Answered)) => Self::Answered,
            (false, Some(RunEnd::Failed)) => Self::Failed,
            _ if turns == 0 => Self::Empty,
            (true, _) => Self::Interrupted,
            (false, Some(RunEnd::Cancelled)) => Self::Cancelled,
            (false, None) => Self::Empty,
        }
    }

    /// The word lists show.
    pub fn name(self) -> &'static str {
        match self {
            Self::Answered => "answered",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
            Self::Interrupted => "interrupted",
            Self::Empty => "empty",
        }
    }
}

/// Whether `--resume` without an id may take a session made as `kind` that stands at
/// `outcome`: one a person had in the TUI, whatever became of it, or any that ended with an
/// answer. A headless run that failed, was stopped or holds nothing is never "my last
/// conversation". A file from before kinds were recorded counts as headless: it is taken
/// when it answered, which a TUI conversation left at its answer did.
pub fn resumable(kind: Option<SessionKind>, outcome: Outcome) -> bool {
    // An external agent's session is not taco's conversation to go on with.
    kind != Some(SessionKind::Agent)
        && (kind == Some(SessionKind::Tui) || outcome == Outcome::Answered)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(lines: &[&str]) -> Runs {
        let mut runs = Runs::default();
        for (at, kind) in lines.iter().enumerate() {
            runs.note(kind, Some(at as u64 + 10));
        }
        runs
    }

    #[test]
    fn the_last_run_says_how_a_session_stands() {
        let answered = runs(&["run_started", "llm_call", "final"]);
        assert_eq!(Outcome::of(1, &answered), Outcome::Answered);
        assert_eq!(answered.last_at, 12);
        let again = runs(&["run_started", "final", "run_started", "llm_call"]);
        assert_eq!(Outcome::of(2, &again), Outcome::Interrupted);
        let failed = runs(&["run_started", "final", "run_started", "error"]);
        assert_eq!(Outcome::of(1, &failed), Outcome::Failed);
        assert_eq!(Outcome::of(0, &failed), Outcome::Failed, "a reason is kept");
        let cancelled = runs(&["run_started", "cancelled"]);
        assert_eq!(Outcome::of(3, &cancelled), Outcome::Cancelled);
        assert_eq!(Outcome::of(0, &cancelled), Outcome::Empty);
        assert_eq!(Outcome::of(0, &runs(&["run_started"])), Outcome::Empty);
        assert_eq!(Outcome::of(0, &Runs::default()), Outcome::Empty);
    }

    #[test]
    fn only_a_persons_session_or_an_answered_one_is_resumed_without_an_id() {
        use Outcome::*;
        for outcome in [Answered, Failed, Cancelled, Interrupted, Empty] {
            assert!(resumable(Some(SessionKind::Tui), outcome));
            assert_eq!(
                resumable(Some(SessionKind::Exec), outcome),
                outcome == Answered
            );
            assert_eq!(resumable(None, outcome), outcome == Answered);
        }
    }

    #[test]
    fn an_unknown_kind_reads_as_not_said() {
        #[derive(Deserialize)]
        struct Header {
            #[serde(default, deserialize_with = "lenient_kind")]
            kind: Option<SessionKind>,
        }
        let read = |text: &str| serde_json::from_str::<Header>(text).map(|h| h.kind).ok();
        assert_eq!(read(r#"{"kind":"tui"}"#), Some(Some(SessionKind::Tui)));
        assert_eq!(read(r#"{"kind":"exec"}"#), Some(Some(SessionKind::Exec)));
        assert_eq!(read(r#"{"kind":"robot"}"#), Some(None));
        assert_eq!(read(r#"{"kind":7}"#), Some(None));
        assert_eq!(read(r#"{}"#), Some(None));
    }
}
