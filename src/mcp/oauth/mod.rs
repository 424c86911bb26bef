//! OAuth for Streamable HTTP servers (issue 28.7), as the MCP authorization spec
//! (2025-06-18, 2025-11-25) has it, with rmcp's `auth` support doing the protocol:
//! protected resource metadata (from the server's 401 `WWW-Authenticate` or
//! `/.well-known/oauth-protected-resource`), authorization server metadata
//! (`/.well-known/oauth-authorization-server`, then `openid-configuration`), dynamic client
//! registration when no `client_id` is configured, the authorization code with PKCE (S256)
//! and the `resource` parameter, refresh with the refresh token.
//!
//! taco's parts: the loopback redirect (`callback`), the bounded HTTP client every OAuth
//! request goes through (`http`), the token files (`store`), opening a browser (`browser`),
//! and deciding how a server is reached ([`access`]). A login is always asked for by the
//! user (`/mcp login NAME`, `taco mcp login NAME`); `exec` never waits for one.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::auth::{
    AuthClient, AuthError, AuthorizationManager, AuthorizationRequest, OAuthState,
};

use super::config::{ServerSpec, Transport};

pub mod browser;
pub mod callback;
pub mod http;
pub mod store;

use store::FileStore;

/// How long a login waits for the browser to come back.
pub const LOGIN_WAIT: Duration = Duration::from_secs(300);
/// The directory of the token files in the state dir.
const TOKEN_DIR: &str = "mcp-oauth";

/// Why a login failed, in words for the user (never a token).
#[derive(Debug, thiserror::Error)]
pub enum LoginError {
    /// The server is not one taco logs in to.
    #[error("{0}")]
    NotOAuth(String),
    /// There is no state dir to keep tokens in.
    #[error("there is no state directory to keep its tokens in (is HOME set?)")]
    NoStateDir,
    /// Discovery, registration or the authorization URL failed.
    #[error("its authorization server could not be used: {0}")]
    Start(String),
    /// The browser did not come back with a code.
    #[error("{0}")]
    Callback(#[from] callback::CallbackError),
    /// The code could not be exchanged for tokens, or they could not be saved.
    #[error("the authorization code could not be exchanged for tokens: {0}")]
    Token(String),
}

/// How a `url` server is reached.
pub enum Access {
    /// Without OAuth (no tokens saved, OAuth not asked for, or another credential is set).
    Plain,
    /// With the saved tokens, refreshed when they expire.
    Authorized(AuthClient<reqwest::Client>),
    /// It needs a login first; the text says so.
    NeedsLogin(String),
}

/// Where the tokens of server `name` are kept: `<state dir>/mcp-oauth/<name>.json` (a name
/// that is not a plain file name is hashed).
pub fn token_file(name: &str) -> Option<PathBuf> {
    Some(
        crate::audit::state_dir()?
            .join(TOKEN_DIR)
            .join(file_name(name)),
    )
}

fn file_name(name: &str) -> String {
    let plain = !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('.')
        && (name.chars()).all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if plain {
        return format!("{name}.json");
    }
    use sha2::Digest;
    let digest = sha2::Sha256::digest(name.as_bytes());
    let hex: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
    format!("h-{hex}.json")
}

/// What the user is told to do when `spec`'s server needs a login.
pub fn login_hint(spec: &ServerSpec) -> String {
    format!(
        "it needs an OAuth login: run `/mcp login {0}` in taco, or `taco mcp login {0}`",
        spec.name
    )
}

/// Every message of an error and its sources, once each.
pub fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut next = Some(error);
    while let Some(e) = next {
        let text = e.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        next = e.source();
    }
    parts.join(": ")
}

/// The OAuth manager of `spec`'s server at `url`: every request bounded by its startup time,
/// its tokens in its file.
async fn manager(
    spec: &ServerSpec,
    url: &str,
) -> Result<(AuthorizationManager, http::LastFailure), String> {
    let client = http::BoundedClient::new(spec.startup_timeout)?;
    let last = client.last_failure();
    let mut manager = AuthorizationManager::new_with_oauth_http_client(url, Arc::new(client))
        .await
        .map_err(|e| chain(&e))?;
    if let Some(path) = &spec.oauth.tokens {
        manager.set_credential_store(FileStore::new(path, url));
    }
    Ok((manager, last))
}

/// An SDK error in words, with what the HTTP client saw when the SDK kept only "Request
/// failed".
fn explained(error: &AuthError, last: &http::LastFailure) -> String {
    let mut text = chain(error);
    if let Some(failure) = http::take_failure(last)
        && !text.contains(&failure)
    {
        text.push_str(&format!(" ({failure})"));
    }
    text
}

/// How `spec`'s server at `url` is reached: with its saved tokens when there are some, else
/// plainly (a server that then answers 401 needs a login), or not at all when `auth =
/// "oauth"` and no tokens are saved.
pub async fn access(
    spec: &ServerSpec,
    url: &str,
    client: reqwest::Client,
) -> Result<Access, String> {
    if spec.oauth.off {
        return Ok(Access::Plain);
    }
    let saved = match &spec.oauth.tokens {
        Some(path) => FileStore::new(path, url).read().map_err(|e| chain(&e))?,
        None => None,
    };
    if saved.is_none() {
        return Ok(if spec.oauth.required {
            Access::NeedsLogin(login_hint(spec))
        } else {
            Access::Plain
        });
    }
    let (mut manager, last) = manager(spec, url).await?;
    match manager.initialize_from_store().await {
        Ok(true) => Ok(Access::Authorized(AuthClient::new(client, manager))),
        // The authorization server changed: its old tokens were dropped.
        Ok(false) => Ok(Access::NeedsLogin(login_hint(spec))),
        Err(e) => Err(format!(
            "its saved OAuth login could not be used: {}",
            explained(&e, &last)
        )),
    }
}

/// Whether a failed connection means `spec`'s server needs a login: it answered with an
/// OAuth challenge and OAuth is not off for it.
pub fn needs_login(spec: &ServerSpec, challenge: Option<&str>) -> bool {
    !spec.oauth.off
        && challenge.is_some_and(|c| c.trim_start().to_ascii_lowercase().starts_with("bearer"))
}

/// Logs in to `spec`'s server: discovery, registration (unless a client id is configured),
/// the authorization URL (given to `show` as soon as it is known), the wait for the browser
/// (at most [`LOGIN_WAIT`]), the token exchange; the tokens end up in the server's file,
/// whose path is returned.
pub async fn login(
    spec: &ServerSpec,
    show: impl FnOnce(&str) + Send,
) -> Result<PathBuf, LoginError> {
    let Transport::Http { url, .. } = &spec.transport else {
        return Err(LoginError::NotOAuth(format!(
            "{} is started by taco (command), not reached at a url: it has no OAuth login",
            spec.name
        )));
    };
    if spec.oauth.off {
        return Err(LoginError::NotOAuth(format!(
            "{} is configured with a bearer token (bearer_token_env or an Authorization header), not OAuth",
            spec.name
        )));
    }
    let path = spec.oauth.tokens.clone().ok_or(LoginError::NoStateDir)?;
    let listener = callback::Listener::bind().await?;
    let (manager, last) = manager(spec, url).await.map_err(LoginError::Start)?;
    let mut request = AuthorizationRequest::new(listener.redirect_uri()).with_client_name("taco");
    if let Some(id) = &spec.oauth.client_id {
        request = request.with_preregistered_client(id);
    }
    if !spec.oauth.scopes.is_empty() {
        request = request.with_scopes(spec.oauth.scopes.iter().cloned());
    }
    let mut state = OAuthState::Unauthorized(manager);
    state
        .start_authorization(request)
        .await
        .map_err(|e| LoginError::Start(explained(&e, &last)))?;
    let address = state
        .get_authorization_url()
        .await
        .map_err(|e| LoginError::Start(explained(&e, &last)))?;
    let csrf = state_of(&address)
        .ok_or_else(|| LoginError::Start("the authorization URL carries no state".to_string()))?;
    show(&address);
    let callback = listener.wait(&csrf, LOGIN_WAIT).await?;
    state
        .handle_callback_with_issuer(&callback.code, &csrf, callback.issuer.as_deref())
        .await
        .map_err(|e| LoginError::Token(explained(&e, &last)))?;
    Ok(path)
}

/// The `state` of an authorization URL.
fn state_of(address: &str) -> Option<String> {
    let url = reqwest::Url::parse(address).ok()?;
    url.query_pairs()
        .find(|(key, _)| key == "state")
        .map(|(_, value)| value.into_owned())
}

/// Removes the saved tokens of `spec`'s server; whether there were any.
pub fn logout(spec: &ServerSpec) -> Result<bool, String> {
    let (Transport::Http { url, .. }, Some(path)) = (&spec.transport, &spec.oauth.tokens) else {
        return Ok(false);
    };
    FileStore::new(path, url).remove().map_err(|e| chain(&e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_files_have_plain_names_or_hashed_ones() {
        assert_eq!(file_name("github"), "github.json");
        assert_eq!(file_name("my_server-2"), "my_server-2.json");
        for odd in [
            "../etc/passwd",
            "a/b",
            "",
            ".hidden",
            "ünï",
            &"x".repeat(200),
        ] {
            let name = file_name(odd);
            assert!(name.starts_with("h-") && name.len() == 39, "{odd}: {name}");
        }
        assert_ne!(file_name("a/b"), file_name("a/c"));
    }

    #[test]
    fn the_state_is_read_from_the_authorization_url() {
        assert_eq!(
            state_of("https://as.example/authorize?response_type=code&state=abc%2Bd&x=1")
                .as_deref(),
            Some("abc+d")
        );
        assert_eq!(state_of("https://as.example/authorize"), None);
    }
}
