//! Session files (DESIGN §8): every run's conversation and trace as append-only JSONL in the
//! data dir, so a crash loses at most the line being written.
//!
//! Line 1 is a header `{"type":"session","version","id","provider","model","workdir","started",
//! "kind"}` (`kind`: `tui` or `exec`, absent in files from before it was recorded);
//! then message lines `{"type":"message","timestamp","data":<Message>}` and event lines (the
//! plain `Event` JSON, as `exec --trace` writes them), in the order they happened. Because
//! event lines are the same as a trace file's, [`load`] reads both.

mod backwards;
mod catalog;
mod compact;
mod fork;
mod index;
mod kind;
mod listing;
mod lite;
mod reader;
mod repair;
mod tail;
#[cfg(test)]
mod testing;
mod writer;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::conversation::Message;
use crate::event::Event;

pub use catalog::INDEX_FILE;
pub use fork::{RunStart, find_run, fork};
pub use index::{Look, Summary, find, format_list, header_of, latest, list, list_with_problems};
pub use kind::{Outcome, SessionKind, resumable};
pub use reader::{Loaded, each_event, load};
pub use repair::repair;
pub use tail::{Tail, Want, earlier, tail};
pub use writer::SessionWriter;

/// Format version written in headers.
pub const FORMAT_VERSION: u32 = 2;

/// The first line of a session file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionHeader {
    /// Format version of the file ([`FORMAT_VERSION`] when this taco wrote it).
    pub version: u32,
    /// Session id, also the file's name without `.jsonl`; ids sort by start time.
    pub id: String,
    /// Provider name.
    pub provider: String,
    /// Model id.
    pub model: String,
    /// The directory the session worked in.
    pub workdir: PathBuf,
    /// Start time, unix milliseconds.
    pub started: u64,
    /// Where it was started (the TUI or `taco exec`); `None` in a file written before this
    /// was recorded, or with a kind this taco does not know.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "kind::lenient_kind"
    )]
    pub kind: Option<SessionKind>,
}

/// One line of a session or trace file, in file order.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    /// A conversation message.
    Message(Message),
    /// A trace event.
    Event(Event),
}

/// Why a session could not be read or found; every message names the file or directory.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The file does not exist.
    #[error("no such file: {}", .path.display())]
    NotFound {
        /// The missing file.
        path: PathBuf,
    },
    /// The file exists but could not be read.
    #[error("cannot read {}: {source}", .path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The file holds nothing taco wrote.
    #[error("{} is not a taco session or trace file: {reason}", .path.display())]
    NotSession {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// `--resume` without an id, and no saved session worked in this directory.
    #[error(
        "no saved session for {} (looked in {}); 'taco sessions' lists them, '--resume ID' picks one",
        .workdir.display(),
        .dir.display()
    )]
    NoSessionForWorkdir {
        /// The directory asked about.
        workdir: PathBuf,
        /// The sessions directory.
        dir: PathBuf,
    },
    /// `--resume` without an id, and the sessions of this directory are all headless runs
    /// that did not answer.
    #[error(
        "no conversation to resume in {}: its {runs} saved session{} headless run{} that did not answer; 'taco sessions' lists them, '--resume ID' picks one",
        .workdir.display(),
        if *.runs == 1 { " is a" } else { "s are" },
        if *.runs == 1 { "" } else { "s" }
    )]
    NoConversationForWorkdir {
        /// The directory asked about.
        workdir: PathBuf,
        /// How many sessions it has.
        runs: usize,
    },
    /// No session id starts with the given id.
    #[error("no session '{id}' in {}; {}", .dir.display(), known_hint(.known))]
    UnknownId {
        /// The id asked for.
        id: String,
        /// The sessions directory.
        dir: PathBuf,
        /// A few of the newest ids there.
        known: Vec<String>,
    },
    /// Several session ids start with the given prefix.
    #[error("'{id}' matches several sessions ({}); give more of the id", .candidates.join(", "))]
    AmbiguousId {
        /// The prefix asked for.
        id: String,
        /// The matching ids, newest first.
        candidates: Vec<String>,
    },
}

impl SessionError {
    /// The error for a failed open or read of `path`.
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        if source.kind() == std::io::ErrorKind::NotFound {
            Self::NotFound {
                path: path.to_path_buf(),
            }
        } else {
            Self::Unreadable {
                path: path.to_path_buf(),
                source,
            }
        }
    }
}

fn known_hint(known: &[String]) -> String {
    if known.is_empty() {
        "there are no saved sessions".to_string()
    } else {
        format!(
            "recent ones: {} ('taco sessions' lists all)",
            known.join(", ")
        )
    }
}

/// The provider and model an event says were in use from then on: a run's start or a
/// `/model` switch (`--resume`, `taco sessions` and `taco trace` take the last one).
pub fn model_used(data: &crate::event::EventData) -> Option<(String, String)> {
    use crate::event::EventData;
    match data {
        EventData::RunStarted {
            provider, model, ..
        } => Some((provider.clone(), model.clone())),
        EventData::ModelSwitched(chosen) => Some((chosen.provider.clone(), chosen.model.clone())),
        _ => None,
    }
}

/// The provider and model the session file at `path` ended with (the last run's or
/// switch's), from the session index, which reads only what was added since it last looked.
pub fn last_model(path: &Path) -> Option<(String, String)> {
    catalog::last_model(path)
}

/// `<data dir>/taco/sessions` (directories::BaseDirs::data_dir()).
pub fn sessions_dir() -> Option<PathBuf> {
    directories::BaseDirs::new().map(|d| d.data_dir().join("taco").join("sessions"))
}

/// A UTC calendar time from unix milliseconds: (year, month, day, hour, minute, second).
fn utc_parts(unix_ms: u64) -> (i64, u32, u32, u32, u32, u32) {
    let secs = unix_ms / 1000;
    // u64::MAX / 1000 / 86400 fits an i64, so neither conversion can wrap.
    let days = (secs / 86_400) as i64;
    let rem = (secs % 86_400) as u32;
    let (year, month, day) = civil_from_days(days);
    (year, month, day, rem / 3600, rem / 60 % 60, rem % 60)
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `civil_from_days`),
/// so no date crate is needed.
pub(crate) fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates_match_known_days() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(11_017), (2000, 3, 1));
        assert_eq!(civil_from_days(19_782), (2024, 2, 29));
        assert_eq!(civil_from_days(20_454), (2026, 1, 1));
    }

    #[test]
    fn utc_parts_split_the_day() {
        // 2024-02-29T23:59:58.999Z
        assert_eq!(utc_parts(1_709_251_198_999), (2024, 2, 29, 23, 59, 58));
        assert_eq!(utc_parts(0), (1970, 1, 1, 0, 0, 0));
        // Absurd header values must not panic.
        let _ = utc_parts(u64::MAX);
    }

    #[test]
    fn errors_name_the_path_and_say_what_to_do() {
        let e = SessionError::io(
            Path::new("/x/s.jsonl"),
            std::io::Error::from(std::io::ErrorKind::NotFound),
        );
        assert_eq!(e.to_string(), "no such file: /x/s.jsonl");
        let e = SessionError::UnknownId {
            id: "2024".into(),
            dir: "/d".into(),
            known: vec!["a".into(), "b".into()],
        };
        assert_eq!(
            e.to_string(),
            "no session '2024' in /d; recent ones: a, b ('taco sessions' lists all)"
        );
    }
}
