//! The secrets of taco's environment, kept in memory only (issue 26).
//!
//! At the very start of `main`, before any thread exists, [`seal`] moves every variable that
//! holds a secret — by the classes of [`secrets::is_secret_var`], or named by the config as a
//! key (`api_key_env`, `bearer_token_env`, an MCP header's `${NAME}`) — out of the
//! environment into this store: its value is copied here, the variable is removed from
//! `environ`, and its bytes are overwritten in the block the kernel shows as
//! `/proc/PID/environ`. So no process taco starts inherits it (unless `env_passthrough` names
//! it), and nothing that reads taco's environment finds it. Then taco makes itself
//! non-dumpable, so another process of the same user cannot read its memory, environment,
//! file descriptors or maps either; tool children drop the capabilities that would let root
//! do so anyway (`sandbox::child`).
//!
//! Every read of a secret goes through [`var`]: the provider's key, the catalog, MCP
//! `${NAME}` expansion and bearer tokens.

use std::ffi::{OsStr, OsString};
use std::sync::{Arc, LazyLock, Once, PoisonError, RwLock};

use crate::secrets::{self, Learned, Secrets};

/// What was withheld, in the order the environment had it.
static STORE: RwLock<Vec<Withheld>> = RwLock::new(Vec::new());
/// Secrets learned while taco runs (OAuth tokens); every [`secrets`] follows them.
static LEARNED: LazyLock<Arc<Learned>> = LazyLock::new(Arc::default);
/// Making taco non-dumpable, once.
static NO_DUMPS: Once = Once::new();

/// One variable taken out of the environment.
#[derive(Clone)]
struct Withheld {
    name: OsString,
    value: OsString,
}

/// The variables of `vars` to withhold: secret by class, or named in `named`. The first of
/// two entries with the same name wins, as `getenv` would have it.
pub fn to_withhold(
    vars: impl IntoIterator<Item = (OsString, OsString)>,
    named: &[String],
) -> Vec<(OsString, OsString)> {
    let mut out: Vec<(OsString, OsString)> = Vec::new();
    for (name, value) in vars {
        let secret = secrets::is_secret_var(&name, &value, named)
            || named.iter().any(|n| OsStr::new(n) == name);
        if secret && !out.iter().any(|(n, _)| *n == name) {
            out.push((name, value));
        }
    }
    out
}

/// Moves the secret variables of the environment (and those in `named`) into the store and
/// erases them from the environment block, and makes taco non-dumpable.
/// Later calls add what `named` adds (the config's key variables, once it is read).
///
/// # Safety
///
/// It changes the process environment: it must run while no other thread exists (at the
/// start of `main`), since another thread reading the environment at the same time would
/// race with it.
pub unsafe fn seal(named: &[String]) {
    let taken = to_withhold(std::env::vars_os(), named);
    if !taken.is_empty() {
        let names: Vec<&OsStr> = taken.iter().map(|(n, _)| n.as_os_str()).collect();
        // SAFETY: the caller promises no other thread exists.
        unsafe { erase::remove(&names) };
    }
    NO_DUMPS.call_once(erase::no_dumps);
    let mut store = STORE.write().unwrap_or_else(PoisonError::into_inner);
    for (name, value) in taken {
        if !store.iter().any(|w| w.name == name) {
            store.push(Withheld { name, value });
        }
    }
}

/// A variable's value: from the store when it was withheld, else from the environment.
pub fn var(name: &str) -> Option<String> {
    let store = STORE.read().unwrap_or_else(PoisonError::into_inner);
    match store.iter().find(|w| w.name == OsStr::new(name)) {
        Some(w) => w.value.to_str().map(String::from),
        None => std::env::var(name).ok(),
    }
}

/// A withheld variable's value, as the environment had it.
pub fn withheld_value(name: &str) -> Option<OsString> {
    let store = STORE.read().unwrap_or_else(PoisonError::into_inner);
    (store.iter())
        .find(|w| w.name == OsStr::new(name))
        .map(|w| w.value.clone())
}

/// The names withheld, sorted (for `/status`; never the values).
pub fn names() -> Vec<String> {
    let store = STORE.read().unwrap_or_else(PoisonError::into_inner);
    let mut names: Vec<String> = (store.iter())
        .map(|w| w.name.to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// What `/status` says of the environment: the names withheld (never a value) and which of
/// them `env_passthrough` hands to tools all the same (a provider key variable never).
pub fn describe(passthrough: &[String], key_vars: &[String]) -> String {
    describe_names(&names(), passthrough, key_vars)
}

/// [`describe`] for these withheld names.
fn describe_names(names: &[String], passthrough: &[String], key_vars: &[String]) -> String {
    if names.is_empty() {
        return "no secret variables were found in the environment".to_string();
    }
    let passed: Vec<&String> = (names.iter())
        .filter(|n| passthrough.contains(n) && !key_vars.contains(n))
        .collect();
    let mut text = format!(
        "withheld from tools, kept in taco's memory only: {}",
        names.join(", ")
    );
    if !passed.is_empty() {
        let passed: Vec<&str> = passed.iter().map(|n| n.as_str()).collect();
        text.push_str(&format!(
            "; passed to tools all the same ([tools.shell] env_passthrough): {}",
            passed.join(", ")
        ));
    }
    text
}

/// The values to redact: the store's and any secret variable still in the environment (a
/// library user that never sealed), long enough to be secrets.
pub fn secrets(key_vars: &[String]) -> Secrets {
    let store = STORE.read().unwrap_or_else(PoisonError::into_inner);
    // What the config named (outside the classes) counts as a key, however it is named.
    let mut keys = key_vars.to_vec();
    keys.extend(
        (store.iter())
            .filter(|w| !secrets::is_secret_var(&w.name, &w.value, &[]))
            .map(|w| w.name.to_string_lossy().into_owned()),
    );
    let kept = store.iter().map(|w| (w.name.clone(), w.value.clone()));
    Secrets::from_env(kept.chain(std::env::vars_os()), &keys).following(Arc::clone(&LEARNED))
}

/// Makes `value` (an OAuth token an MCP server's login got) a secret from now on: every
/// [`secrets`] redacts it wherever text leaves taco.
pub fn learn(value: &str) {
    LEARNED.learn(value);
}

/// The proxy settings of taco's own HTTP clients when a proxy variable was withheld (its URL
/// has a password): the withheld variables only leave the environment, taco still uses
/// them. `None` when no proxy variable was withheld, so the client reads them as usual.
pub fn proxies() -> Option<Vec<reqwest::Proxy>> {
    const NAMES: [(&str, &str); 3] = [
        ("ALL_PROXY", "all_proxy"),
        ("HTTPS_PROXY", "https_proxy"),
        ("HTTP_PROXY", "http_proxy"),
    ];
    let withheld = NAMES
        .iter()
        .any(|(upper, lower)| withheld_value(upper).or(withheld_value(lower)).is_some());
    if !withheld {
        return None;
    }
    let no_proxy = reqwest::NoProxy::from_env();
    let mut proxies = Vec::new();
    for (upper, lower) in NAMES {
        let Some(url) = var(lower).or_else(|| var(upper)).filter(|u| !u.is_empty()) else {
            continue;
        };
        let proxy = match upper {
            "ALL_PROXY" => reqwest::Proxy::all(url),
            "HTTPS_PROXY" => reqwest::Proxy::https(url),
            _ => reqwest::Proxy::http(url),
        };
        if let Ok(proxy) = proxy {
            proxies.push(proxy.no_proxy(no_proxy.clone()));
        }
    }
    Some(proxies)
}

/// `builder` with the withheld proxies, when there are any (see [`proxies`]).
pub fn with_proxies(mut builder: reqwest::ClientBuilder) -> reqwest::ClientBuilder {
    if let Some(proxies) = proxies() {
        for proxy in proxies {
            builder = builder.proxy(proxy);
        }
    }
    builder
}

mod erase;
pub use erase::dumpable;

#[cfg(test)]
mod tests;
