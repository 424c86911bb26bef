//! Trusting a project's `.taco/config.toml` (issue 30.1): its hooks run only after the user
//! said so once for the file as it is; a changed file must be trusted again (codex asks the
//! same before project hooks run). What was trusted is kept in the state dir
//! (`trusted-projects.json`: the file's canonical path → the SHA-256 of its bytes).

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use sha2::Digest;

use crate::private::PrivateDir;

/// The project config file of a workspace.
pub const PROJECT_FILE: &str = ".taco/config.toml";
/// Where trust is kept, in the state dir.
const TRUST_FILE: &str = "trusted-projects.json";
/// Largest project config read (and largest trust file).
pub const MAX_BYTES: u64 = 1 << 20;

/// A project config file and what it holds now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectFile {
    /// Its canonical path.
    pub path: PathBuf,
    /// Its text.
    pub text: String,
    /// The SHA-256 of its bytes (hex).
    pub hash: String,
}

/// The workspace's project config, if it has one; a file that cannot be read is an error.
pub fn project_file(workdir: &Path) -> Result<Option<ProjectFile>, String> {
    let path = workdir.join(PROJECT_FILE);
    let meta = match std::fs::symlink_metadata(&path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    if !meta.is_file() {
        return Err(format!(
            "{} is not a plain file (a symlink or a directory); its hooks are not read",
            path.display()
        ));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(&path)
        .and_then(|f| f.take(MAX_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(format!("{} is larger than 1 MiB", path.display()));
    }
    let text = String::from_utf8(bytes).map_err(|_| format!("{} is not UTF-8", path.display()))?;
    let hash = hex(&sha2::Sha256::digest(text.as_bytes()));
    let path = path.canonicalize().unwrap_or(path);
    Ok(Some(ProjectFile { path, text, hash }))
}

/// Whether the user trusts `file` as it is now.
pub fn is_trusted(state: &Path, file: &ProjectFile) -> bool {
    read(state)
        .get(&file.path.to_string_lossy().into_owned())
        .is_some_and(|hash| *hash == file.hash)
}

/// Trusts `file` as it is now (its hooks run from the next session on).
pub fn trust(state: &Path, file: &ProjectFile) -> Result<(), String> {
    let mut trusted = read(state);
    trusted.insert(file.path.to_string_lossy().into_owned(), file.hash.clone());
    let dir = PrivateDir::create(state).map_err(|e| e.to_string())?;
    let text = serde_json::to_string_pretty(&trusted).map_err(|e| e.to_string())?;
    let temp = format!("{TRUST_FILE}.{:08x}.tmp", fastrand::u32(..));
    let written = dir
        .create_new(&temp, false)
        .and_then(|mut f| f.write_all(text.as_bytes()).and_then(|()| f.sync_all()))
        .and_then(|()| dir.rename(&temp, TRUST_FILE));
    written.map_err(|e| {
        let _ = dir.remove(&temp);
        format!("cannot save the trust in {}: {e}", state.display())
    })
}

/// What is trusted (nothing, when the file is missing or unreadable).
fn read(state: &Path) -> BTreeMap<String, String> {
    let Ok(dir) = PrivateDir::open(state) else {
        return BTreeMap::new();
    };
    let mut text = String::new();
    match dir.read(TRUST_FILE) {
        Ok(file) => match file.take(MAX_BYTES).read_to_string(&mut text) {
            Ok(_) => serde_json::from_str(&text).unwrap_or_default(),
            Err(_) => BTreeMap::new(),
        },
        Err(_) => BTreeMap::new(),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_trusted_as_it_is_and_a_change_needs_trust_again() {
        let work = tempfile::tempdir().unwrap();
        let state = tempfile::tempdir().unwrap();
        let state = state.path().join("taco");
        assert_eq!(project_file(work.path()).unwrap(), None);
        std::fs::create_dir(work.path().join(".taco")).unwrap();
        std::fs::write(
            work.path().join(PROJECT_FILE),
            "[[hooks.stop]]\ncommand = \"x\"\n",
        )
        .unwrap();
        let file = project_file(work.path()).unwrap().unwrap();
        assert!(!is_trusted(&state, &file));
        trust(&state, &file).unwrap();
        assert!(is_trusted(&state, &file));
        std::fs::write(
            work.path().join(PROJECT_FILE),
            "[[hooks.stop]]\ncommand = \"y\"\n",
        )
        .unwrap();
        let changed = project_file(work.path()).unwrap().unwrap();
        assert!(!is_trusted(&state, &changed));
        // A symlink in its place is not read.
        std::fs::remove_file(work.path().join(PROJECT_FILE)).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", work.path().join(PROJECT_FILE)).unwrap();
        assert!(
            project_file(work.path())
                .unwrap_err()
                .contains("not a plain file")
        );
    }
}
