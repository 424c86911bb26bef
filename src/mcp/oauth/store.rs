//! A server's OAuth tokens on disk: one file per server in `<state dir>/mcp-oauth/`, 0600 in
//! a 0700 directory, written whole to a temp file and renamed (a crash leaves the old file or
//! the new one, never half of one), never through a symlink (`private`). The file names the
//! server's URL: tokens saved for one URL are never sent to another (a config that now points
//! the name elsewhere needs a new login). Every token read or written becomes a secret taco
//! redacts (`vault::learn`).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};
use serde::{Deserialize, Serialize};

use crate::private::PrivateDir;

/// The largest token file read.
const MAX_FILE: u64 = 64 * 1024;

/// What the file holds.
#[derive(Serialize, Deserialize)]
struct Saved {
    /// The server's URL the tokens are for.
    url: String,
    credentials: StoredCredentials,
}

/// The tokens of one server.
#[derive(Debug, Clone)]
pub struct FileStore {
    path: PathBuf,
    url: String,
    /// What was last read or written: the SDK loads the credentials before every request,
    /// and the file is read once per process.
    kept: Arc<Mutex<Option<StoredCredentials>>>,
}

impl FileStore {
    /// The store at `path` for the server at `url`.
    pub fn new(path: &Path, url: &str) -> Self {
        Self {
            path: path.to_path_buf(),
            url: url.to_string(),
            kept: Arc::default(),
        }
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, Option<StoredCredentials>> {
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn split(&self) -> Result<(&Path, &str), AuthError> {
        let dir = self.path.parent();
        let name = self.path.file_name().and_then(|n| n.to_str());
        match (dir, name) {
            (Some(dir), Some(name)) => Ok((dir, name)),
            _ => Err(store_error(&self.path, "is not a file path")),
        }
    }

    /// The saved credentials for this URL, if any (the tokens learned as secrets).
    pub fn read(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let (dir, name) = self.split()?;
        let dir = match PrivateDir::open(dir) {
            Ok(dir) => dir,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(store_error(dir, &e.to_string())),
        };
        let file = match dir.read(name) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(store_error(&self.path, &e.to_string())),
        };
        let mut text = String::new();
        file.take(MAX_FILE + 1)
            .read_to_string(&mut text)
            .map_err(|e| store_error(&self.path, &e.to_string()))?;
        if text.len() as u64 > MAX_FILE {
            return Err(store_error(&self.path, "is larger than 64 KiB"));
        }
        let saved: Saved = serde_json::from_str(&text)
            .map_err(|e| store_error(&self.path, &format!("cannot be read ({e}); log in again")))?;
        learn(&saved.credentials);
        Ok((saved.url == self.url).then_some(saved.credentials))
    }

    /// Saves `credentials` for this URL, atomically.
    pub fn write(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        learn(&credentials);
        let (dir, name) = self.split()?;
        let saved = Saved {
            url: self.url.clone(),
            credentials,
        };
        let text = serde_json::to_vec_pretty(&saved)
            .map_err(|e| store_error(&self.path, &e.to_string()))?;
        let dir = PrivateDir::create(dir).map_err(|e| store_error(dir, &e.to_string()))?;
        let temp = format!(".{name}.{}-{}.tmp", std::process::id(), fastrand::u64(..));
        let written = dir.create_new(&temp, false).and_then(|mut file| {
            file.write_all(&text)?;
            file.sync_all()
        });
        let renamed = written.and_then(|()| dir.rename(&temp, name));
        if let Err(e) = renamed {
            let _ = dir.remove(&temp);
            return Err(store_error(&self.path, &e.to_string()));
        }
        Ok(())
    }

    /// Removes the file (`taco mcp logout`).
    pub fn remove(&self) -> Result<bool, AuthError> {
        let (dir, name) = self.split()?;
        let Ok(dir) = PrivateDir::open(dir) else {
            return Ok(false);
        };
        match dir.remove(name) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(store_error(&self.path, &e.to_string())),
        }
    }
}

fn store_error(path: &Path, why: &str) -> AuthError {
    AuthError::CredentialStoreError(format!("the token file {} {why}", path.display()))
}

/// Makes the tokens in `credentials` secrets (read from their JSON: the fields of RFC 6749).
fn learn(credentials: &StoredCredentials) {
    let Ok(json) = serde_json::to_value(&credentials.token_response) else {
        return;
    };
    for field in ["access_token", "refresh_token", "id_token"] {
        if let Some(token) = json.get(field).and_then(|t| t.as_str()) {
            crate::vault::learn(token);
        }
    }
}

#[async_trait]
impl CredentialStore for FileStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        if let Some(kept) = self.kept().clone() {
            return Ok(Some(kept));
        }
        let read = self.read()?;
        self.kept().clone_from(&read);
        Ok(read)
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.write(credentials.clone())?;
        *self.kept() = Some(credentials);
        Ok(())
    }

    async fn clear(&self) -> Result<(), AuthError> {
        *self.kept() = None;
        self.remove().map(drop)
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn credentials(access: &str) -> StoredCredentials {
        let response = serde_json::from_value(serde_json::json!({
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": 3600,
            "refresh_token": "refresh-token-0123456789",
        }))
        .unwrap();
        StoredCredentials::new("client-1".into(), Some(response), vec![], Some(1))
    }

    #[test]
    fn tokens_are_kept_private_whole_and_for_their_url_only() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("state/mcp-oauth/web.json");
        let store = FileStore::new(&path, "https://mcp.example/mcp");
        assert!(store.read().unwrap().is_none(), "nothing saved yet");
        store
            .write(credentials("access-token-one-0123456789"))
            .unwrap();
        store
            .write(credentials("access-token-two-0123456789"))
            .unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let dir_mode = std::fs::metadata(path.parent().unwrap())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(dir_mode & 0o777, 0o700);
        let files: Vec<_> = std::fs::read_dir(path.parent().unwrap()).unwrap().collect();
        assert_eq!(files.len(), 1, "no temp file is left behind");
        let read = store.read().unwrap().unwrap();
        let json = serde_json::to_value(&read.token_response).unwrap();
        assert_eq!(json["access_token"], "access-token-two-0123456789");
        // Another URL under the same name gets nothing.
        let moved = FileStore::new(&path, "https://elsewhere.example/mcp");
        assert!(moved.read().unwrap().is_none());
        // The tokens are secrets now.
        let secrets = crate::vault::secrets(&[]);
        assert!(
            !secrets
                .redact("access-token-two-0123456789")
                .contains("two")
        );
        assert!(!secrets.redact("refresh-token-0123456789").contains("0123"));
        assert!(store.remove().unwrap());
        assert!(store.read().unwrap().is_none());
    }

    #[test]
    fn a_symlink_or_garbage_is_refused_with_the_file_named() {
        let temp = tempfile::tempdir().unwrap();
        let victim = temp.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let dir = temp.path().join("mcp-oauth");
        std::fs::create_dir(&dir).unwrap();
        std::os::unix::fs::symlink(&victim, dir.join("a.json")).unwrap();
        let store = FileStore::new(&dir.join("a.json"), "https://h/mcp");
        let error = store.read().unwrap_err().to_string();
        assert!(error.contains("a.json"), "{error}");
        std::fs::write(dir.join("b.json"), "not json").unwrap();
        let error = FileStore::new(&dir.join("b.json"), "https://h/mcp")
            .read()
            .unwrap_err()
            .to_string();
        assert!(error.contains("log in again"), "{error}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    }
}
