//! A conversation's fork (rewind, issue 29): the session goes on in a new file that holds the
//! old one's lines up to the start of a run, byte for byte, after a header of its own. The
//! old file keeps everything (its later part is marked by a `rewound` event its recorder
//! writes), and every reader of sessions (resume, the tail, the index, `taco trace`) reads
//! the new file as the ordinary session it is.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use super::reader::{MAX_LINE, read_header};
use super::{SessionError, SessionWriter};
use crate::event::{Event, EventData};

/// Where a run starts in a session file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunStart {
    /// The byte offset of its `run_started` line.
    pub offset: u64,
    /// Its prompt (shortened, as recorded).
    pub prompt: String,
    /// Runs from it on (itself included): what a fork before it leaves behind.
    pub runs_from: usize,
}

/// Finds the run `request_id` in the session file at `path`.
pub fn find_run(path: &Path, request_id: &str) -> Result<Option<RunStart>, SessionError> {
    let file = File::open(path).map_err(|e| SessionError::io(path, e))?;
    let mut reader = BufReader::new(file);
    let mut at = 0u64;
    let mut buf = Vec::new();
    let mut found: Option<RunStart> = None;
    loop {
        buf.clear();
        let read = (&mut reader)
            .take(MAX_LINE)
            .read_until(b'\n', &mut buf)
            .map_err(|e| SessionError::io(path, e))?;
        if read == 0 {
            break;
        }
        let line_start = at;
        at += read as u64;
        // Only run starts matter: the type is checked in the bytes before anything is parsed.
        if !contains(&buf, b"\"run_started\"") {
            continue;
        }
        let Ok(event) = serde_json::from_slice::<Event>(buf.trim_ascii()) else {
            continue;
        };
        let EventData::RunStarted { prompt, .. } = &event.data else {
            continue;
        };
        match &mut found {
            Some(run) => run.runs_from += 1,
            None if &*event.request_id == request_id => {
                found = Some(RunStart {
                    offset: line_start,
                    prompt: prompt.clone(),
                    runs_from: 1,
                });
            }
            None => {}
        }
    }
    Ok(found)
}

/// Starts a new session file in the directory of `path` holding its lines before `offset`
/// (a line start), and returns its writer, ready to append.
pub fn fork(path: &Path, offset: u64) -> Result<SessionWriter, SessionError> {
    let err = |e| SessionError::io(path, e);
    let mut file = File::open(path).map_err(err)?;
    let header =
        read_header(BufReader::new(&mut file), path)?.ok_or_else(|| SessionError::NotSession {
            path: path.to_path_buf(),
            reason: "it has no session header".into(),
        })?;
    // The header's own line is replaced by the new file's.
    file.seek(SeekFrom::Start(0)).map_err(err)?;
    let mut first = Vec::new();
    BufReader::new(&mut file)
        .take(MAX_LINE)
        .read_until(b'\n', &mut first)
        .map_err(err)?;
    let header_end = first.len() as u64;
    if offset < header_end {
        return Err(SessionError::NotSession {
            path: path.to_path_buf(),
            reason: "the fork point is inside its header".into(),
        });
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut writer = match header.kind {
        Some(kind) => {
            SessionWriter::create_for(kind, dir, &header.provider, &header.model, &header.workdir)
        }
        None => SessionWriter::create(dir, &header.provider, &header.model, &header.workdir),
    }
    .map_err(|e| SessionError::io(dir, e))?;
    file.seek(SeekFrom::Start(header_end)).map_err(err)?;
    let copied = writer.append_raw(&mut (&mut file).take(offset - header_end));
    if let Err(e) = copied {
        // A half-copied fork is no session to leave behind.
        let _ = std::fs::remove_file(writer.path());
        return Err(SessionError::io(writer.path(), e));
    }
    Ok(writer)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::{Entry, load};

    #[test]
    fn a_fork_holds_the_lines_before_the_run_and_reads_as_a_session() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = SessionWriter::create(dir.path(), "p", "m", dir.path()).unwrap();
        let run = |id: &str, prompt: &str| {
            Event::now(
                &std::sync::Arc::from(id),
                EventData::RunStarted {
                    prompt: prompt.into(),
                    provider: "p".into(),
                    model: "m".into(),
                    max_turns: 3,
                    trace_parent: None,
                },
            )
        };
        w.event(&run("r1", "first")).unwrap();
        w.message(&crate::conversation::Message::user("first"))
            .unwrap();
        w.event(&run("r2", "second")).unwrap();
        w.message(&crate::conversation::Message::user("second"))
            .unwrap();
        w.event(&run("r3", "third")).unwrap();
        let path = w.path().to_path_buf();
        let found = find_run(&path, "r2").unwrap().unwrap();
        assert_eq!(found.prompt, "second");
        assert_eq!(found.runs_from, 2);
        assert!(find_run(&path, "nope").unwrap().is_none());
        let forked = fork(&path, found.offset).unwrap();
        assert_ne!(forked.path(), path);
        let loaded = load(forked.path()).unwrap();
        assert_eq!(loaded.header.as_ref().unwrap().id, forked.id());
        assert_eq!(loaded.messages().len(), 1);
        assert!(loaded.warnings.is_empty());
        let runs = loaded
            .entries
            .iter()
            .filter(|e| matches!(e, Entry::Event(_)))
            .count();
        assert_eq!(runs, 1);
        // The old file is untouched.
        assert_eq!(load(&path).unwrap().messages().len(), 2);
        assert!(fork(&path, 3).is_err());
    }
}
