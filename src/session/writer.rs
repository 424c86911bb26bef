//! Appending to a session file, one whole line per `write`.

use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;

use super::catalog::Indexer;
use super::compact::Compactor;
use super::{FORMAT_VERSION, SessionError, SessionHeader, SessionKind, reader, utc_parts};
use crate::conversation::Message;
use crate::event::{Event, unix_ms};
use crate::private::{self, PrivateDir};
use crate::secrets::Secrets;

/// The scratch buffer is shrunk back after a line bigger than this (a huge tool output), so
/// one big line does not pin its memory for the rest of the session.
const KEEP_CAPACITY: usize = 1 << 20;

/// Writes a session file as it happens: every line goes to the kernel with one `write_all`
/// on an `O_APPEND` descriptor, so a crash can only tear the last line.
#[derive(Debug)]
pub struct SessionWriter {
    file: File,
    path: PathBuf,
    id: String,
    /// Scratch buffer for one line, reused.
    line: Vec<u8>,
    /// The file may end in a partial line (a failed write, or a crash before a resume): the
    /// next line starts with a newline so it is not glued to the fragment.
    torn: bool,
    /// Key values that never reach the file.
    secrets: Arc<Secrets>,
    /// Writes each tool call's arguments once.
    compactor: Compactor,
    /// Keeps the session index's row of this file current, at the end of each run.
    indexer: Indexer,
}

#[derive(Serialize)]
struct HeaderLine<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(flatten)]
    header: &'a SessionHeader,
}

#[derive(Serialize)]
struct MessageLine<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    timestamp: u64,
    data: &'a Value,
}

/// An event line whose data was compacted (see `compact`).
#[derive(Serialize)]
struct EventLine<'a> {
    timestamp: u64,
    request_id: &'a str,
    #[serde(rename = "type")]
    kind: &'a str,
    data: &'a Value,
}

impl SessionWriter {
    /// Creates `<dir>/<id>.jsonl` (dir created if missing, file mode 0600, append-only) and
    /// writes the header line, which does not say where the session was started (as in a file
    /// from before that was recorded; see [`create_for`](Self::create_for)).
    pub fn create(dir: &Path, provider: &str, model: &str, workdir: &Path) -> io::Result<Self> {
        Self::create_as(None, dir, provider, model, workdir)
    }

    /// [`create`](Self::create) for a session started in `kind` (the TUI or `taco exec`),
    /// which its header keeps: `--resume` without an id goes by it.
    pub fn create_for(
        kind: SessionKind,
        dir: &Path,
        provider: &str,
        model: &str,
        workdir: &Path,
    ) -> io::Result<Self> {
        Self::create_as(Some(kind), dir, provider, model, workdir)
    }

    fn create_as(
        kind: Option<SessionKind>,
        dir: &Path,
        provider: &str,
        model: &str,
        workdir: &Path,
    ) -> io::Result<Self> {
        // Sessions hold whole conversations: keep a directory we create private too, and
        // never write through a symlink in place of it or of a file (`private`).
        let private = PrivateDir::create(dir)?;
        let started = unix_ms();
        // Two runs in the same second collide only if their 24 random bits do; retry then.
        for _ in 0..8 {
            let id = new_id(started);
            let name = format!("{id}.jsonl");
            let path = dir.join(&name);
            let file = match private.create_new(&name, true) {
                Ok(file) => file,
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            };
            let header = SessionHeader {
                version: FORMAT_VERSION,
                id: id.clone(),
                provider: provider.to_string(),
                model: model.to_string(),
                // A non-UTF-8 path cannot be JSON; a lossy one still shows where it was.
                workdir: PathBuf::from(workdir.to_string_lossy().into_owned()),
                started,
                kind,
            };
            let mut writer = Self {
                file,
                path,
                id,
                line: Vec::new(),
                torn: false,
                secrets: Arc::default(),
                compactor: Compactor::default(),
                indexer: Indexer::default(),
            };
            if let Err(e) = writer.write_line(&HeaderLine {
                kind: "session",
                header: &header,
            }) {
                // A file without its header is not a session; do not leave it behind.
                let _ = private.remove(&name);
                return Err(e);
            }
            return Ok(writer);
        }
        Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("could not pick a fresh session id in {}", dir.display()),
        ))
    }

    /// Reopens an existing session file to append to it (resume); reads its header for `id()`.
    pub fn append_to(path: &Path) -> Result<Self, SessionError> {
        let err = |e| SessionError::io(path, e);
        // Never through a symlink: a link in the sessions directory cannot make taco append
        // a conversation to another file.
        let (dir, name) = private::split(path).map_err(err)?;
        let mut file = PrivateDir::open(dir)
            .and_then(|dir| dir.read_append(name))
            .map_err(err)?;
        let header = reader::read_header(BufReader::new(&file), path)?.ok_or_else(|| {
            SessionError::NotSession {
                path: path.to_path_buf(),
                reason: "it has no session header (a trace file can be viewed with 'taco trace', not resumed)".into(),
            }
        })?;
        // A crash may have left a last line without its newline.
        let torn = if file.metadata().map_err(err)?.len() > 0 {
            let mut last = [0u8; 1];
            file.seek(SeekFrom::End(-1)).map_err(err)?;
            file.read_exact(&mut last).map_err(err)?;
            last[0] != b'\n'
        } else {
            false
        };
        Ok(Self {
            file,
            path: path.to_path_buf(),
            id: header.id,
            line: Vec::new(),
            torn,
            secrets: Arc::default(),
            compactor: Compactor::default(),
            indexer: Indexer::default(),
        })
    }

    /// Redacts these key values from every line written from now on.
    pub fn set_secrets(&mut self, secrets: Arc<Secrets>) {
        self.secrets = secrets;
    }

    /// The session id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The session file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one conversation message (a line `{"type":"message","timestamp":…,"data":<Message>}`), flushed.
    pub fn message(&mut self, message: &Message) -> io::Result<()> {
        let mut data = serde_json::to_value(message)?;
        self.compactor.compact("message", &mut data);
        self.write_line(&MessageLine {
            kind: "message",
            timestamp: unix_ms(),
            data: &data,
        })
    }

    /// Appends one event as its own JSON line (the `Event` serialization, like `exec --trace`, with
    /// each tool call's arguments written once: see `compact`), flushed; deltas are skipped.
    pub fn event(&mut self, event: &Event) -> io::Result<()> {
        if !event.is_trace() {
            return Ok(());
        }
        let kind = event.kind();
        if !Compactor::touches(kind) {
            self.write_line(event)?;
            // A run's end is when `taco sessions` and the resume picker should see it.
            if matches!(kind, "final" | "cancelled" | "error") {
                self.indexer.note(&self.path);
            }
            return Ok(());
        }
        // The same envelope as `Event`'s serialization, with the data compacted.
        let mut data = serde_json::to_value(&event.data)?;
        let mut data = data.get_mut("data").map(Value::take).unwrap_or(Value::Null);
        self.compactor.compact(kind, &mut data);
        self.write_line(&EventLine {
            timestamp: event.timestamp,
            request_id: &event.request_id,
            kind,
            data: &data,
        })
    }

    /// Appends lines copied from another session file (whole lines; a fork), flushed.
    pub(super) fn append_raw(&mut self, from: &mut impl Read) -> io::Result<()> {
        io::copy(from, &mut self.file)?;
        self.file.flush()
    }

    fn write_line<T: Serialize>(&mut self, value: &T) -> io::Result<()> {
        self.line.clear();
        if self.torn {
            self.line.push(b'\n');
        }
        serde_json::to_writer(&mut self.line, value)?;
        self.line.push(b'\n');
        if let Cow::Owned(clean) = self.secrets.redact_bytes(&self.line) {
            self.line = clean;
        }
        let result = self.file.write_all(&self.line);
        // After a failed write_all part of the line may be in the file.
        self.torn = result.is_err();
        if self.line.capacity() > KEEP_CAPACITY {
            self.line = Vec::new();
        }
        result
    }
}

/// `YYYYMMDD-HHMMSS-xxxxxx`: UTC start time, then 6 random hex digits, so ids sort by time.
fn new_id(started: u64) -> String {
    let (y, mo, d, h, mi, s) = utc_parts(started);
    let random = uuid::Uuid::new_v4().simple().to_string();
    let suffix = random.get(..6).unwrap_or("000000");
    format!("{y:04}{mo:02}{d:02}-{h:02}{mi:02}{s:02}-{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_utc_time_and_random_hex() {
        let id = new_id(1_709_251_198_999);
        assert!(id.starts_with("20240229-235958-"), "{id}");
        assert_eq!(id.len(), 22);
        assert!(id[16..].chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(new_id(0), new_id(0));
    }

    #[test]
    fn a_failed_write_makes_the_next_line_start_fresh() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = SessionWriter::create(dir.path(), "demo", "m", dir.path()).unwrap();
        w.torn = true;
        w.message(&Message::user("hi")).unwrap();
        let text = std::fs::read_to_string(w.path()).unwrap();
        assert!(text.contains("}\n\n{\"type\":\"message\""), "{text}");
        assert!(!w.torn);
    }
}
