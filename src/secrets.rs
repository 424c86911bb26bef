//! Secrets in the environment: which variables tool processes never inherit, and the known
//! key values that are redacted wherever text leaves taco (tool results, provider errors,
//! session files, traces, `exec --json`, requests to the provider).
//!
//! Scrubbing the environment is the first line; redaction is the net behind it, for a key
//! that reaches a tool another way (a `.env` file, a passthrough variable, a config file).

use std::borrow::Cow;
use std::ffi::OsStr;

use std::sync::{Arc, PoisonError, RwLock};

use aho_corasick::AhoCorasick;
use serde_json::Value;

/// Values shorter than this are not treated as secrets when only the variable's name
/// suggests one (`*_TOKEN=1` is a flag, and redacting "true" everywhere would garble text).
const MIN_GUESSED_LEN: usize = 8;
/// Explicit provider keys are redacted from this length up.
const MIN_KEY_LEN: usize = 6;

/// Words that make a variable's name secret wherever they appear in it, in any case (the
/// classes of codex's `shell_environment_policy`, widened): `GH_AUTH`, `SENTRY_DSN`,
/// `MYSQL_PWD` and `SESSION_COOKIE` are all secrets, and so is anything with `KEY` in it.
const SECRET_WORDS: [&str; 11] = [
    "KEY",
    "SECRET",
    "TOKEN",
    "PASSWORD",
    "PASSWD",
    "PWD",
    "CREDENTIAL",
    "AUTH",
    "DSN",
    "COOKIE",
    "SESSION",
];

/// Names that contain a secret word but are the shell's own bookkeeping.
const NOT_SECRET: [&str; 2] = ["PWD", "OLDPWD"];

/// Whether a variable's name says it holds a secret: it contains one of the
/// [secret words](SECRET_WORDS) (any case), or is one of the provider key variables in
/// `key_vars`.
pub fn is_secret_name(name: &str, key_vars: &[String]) -> bool {
    if key_vars.iter().any(|k| k == name) {
        return true;
    }
    let upper = name.to_ascii_uppercase();
    // The OTLP exporter's headers carry its collector's credentials, whatever they are named.
    if upper.starts_with("OTEL_EXPORTER_OTLP") && upper.ends_with("HEADERS") {
        return true;
    }
    !NOT_SECRET.contains(&upper.as_str()) && SECRET_WORDS.iter().any(|w| upper.contains(w))
}

/// Whether a value holds a URL with a password (`scheme://user:pass@host`, the user may be
/// empty), anywhere in it: a database or proxy URL carries its credentials that way.
pub fn has_url_password(value: &str) -> bool {
    !url_passwords(value).is_empty()
}

/// The passwords of the URLs in `value` (see [`has_url_password`]).
fn url_passwords(value: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = value;
    while let Some(at) = rest.find("://") {
        let after = &rest[at + 3..];
        // The authority ends at the path, query or fragment; the userinfo at its last '@'.
        let end = after.find(['/', '?', '#']).unwrap_or(after.len());
        let authority = &after[..end];
        if let Some(userinfo) = authority.rfind('@').map(|i| &authority[..i])
            && let Some((_, pass)) = userinfo.split_once(':')
            && !pass.is_empty()
        {
            found.push(pass);
        }
        rest = after;
    }
    found
}

/// Whether the variable `name=value` holds a secret: by its name, or by a value that is a URL
/// with a password. A name that is not UTF-8 is judged by its lossy form.
pub fn is_secret_var(name: &OsStr, value: &OsStr, key_vars: &[String]) -> bool {
    is_secret_name(&name.to_string_lossy(), key_vars) || has_url_password(&value.to_string_lossy())
}

/// The names of the variables in `vars` that a tool process must not inherit: every secret
/// one that is not passed through by name.
pub fn scrubbed_names<'a>(
    vars: impl IntoIterator<Item = (&'a OsStr, &'a OsStr)>,
    key_vars: &[String],
    passthrough: &[String],
) -> Vec<&'a OsStr> {
    vars.into_iter()
        .filter(|(name, value)| {
            is_secret_var(name, value, key_vars)
                && !passthrough.iter().any(|p| OsStr::new(p) == *name)
        })
        .map(|(name, _)| name)
        .collect()
}

/// The key values taco knows, and a matcher that finds them in text.
#[derive(Clone, Default)]
pub struct Secrets {
    /// Longest first, so a key that contains another is replaced whole.
    values: Vec<String>,
    matcher: Option<AhoCorasick>,
    /// Values learned later, redacted too (see [`Learned`]).
    learned: Option<Arc<Learned>>,
}

/// Values learned while taco runs (an MCP server's OAuth tokens, issue 28.7): every
/// [`Secrets`] that follows them redacts each from the moment it is learned.
#[derive(Default)]
pub struct Learned(RwLock<Arc<Secrets>>);

impl Learned {
    /// Adds `value` (a value shorter than a key is ignored: it would garble text).
    pub fn learn(&self, value: &str) {
        let value = value.trim();
        if value.len() < MIN_KEY_LEN {
            return;
        }
        let mut now = self.0.write().unwrap_or_else(PoisonError::into_inner);
        if now.values.iter().any(|v| v == value) {
            return;
        }
        let mut values = now.values.clone();
        values.push(value.to_string());
        *now = Arc::new(Secrets::new(values));
    }

    fn now(&self) -> Arc<Secrets> {
        Arc::clone(&self.0.read().unwrap_or_else(PoisonError::into_inner))
    }
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secrets({} values)", self.values.len())
    }
}

impl Secrets {
    /// The values of the secret variables among `vars` (see [`is_secret_var`]) long enough to
    /// be secrets.
    pub fn from_env<K, V>(vars: impl IntoIterator<Item = (K, V)>, key_vars: &[String]) -> Self
    where
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        let mut values = Vec::new();
        for (name, value) in vars {
            let (Some(name), Some(value)) = (name.as_ref().to_str(), value.as_ref().to_str())
            else {
                continue;
            };
            let value = value.trim();
            let min = if key_vars.iter().any(|k| k == name) {
                MIN_KEY_LEN
            } else {
                MIN_GUESSED_LEN
            };
            if !is_secret_var(name.as_ref(), value.as_ref(), key_vars) {
                continue;
            }
            if value.len() >= min {
                values.push(value.to_string());
            }
            // A URL's password may show up alone (an error that quotes it).
            values.extend(
                (url_passwords(value).into_iter())
                    .filter(|p| p.len() >= MIN_GUESSED_LEN)
                    .map(String::from),
            );
        }
        Self::new(values)
    }

    /// Secrets with these values.
    pub fn new(values: impl IntoIterator<Item = String>) -> Self {
        let mut values: Vec<String> = values.into_iter().filter(|v| !v.is_empty()).collect();
        values.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        values.dedup();
        let matcher = if values.is_empty() {
            None
        } else {
            AhoCorasick::builder()
                .match_kind(aho_corasick::MatchKind::LeftmostLongest)
                .build(&values)
                .ok()
        };
        Self {
            values,
            matcher,
            learned: None,
        }
    }

    /// These secrets, and those `learned` learns from now on.
    pub fn following(mut self, learned: Arc<Learned>) -> Self {
        self.learned = Some(learned);
        self
    }

    /// Whether there is nothing to redact.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
            && (self.learned.as_ref()).is_none_or(|learned| learned.now().values.is_empty())
    }

    /// `text` with every known value replaced by its [`mask`].
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let own = self.redact_own(text);
        let Some(learned) = &self.learned else {
            return own;
        };
        let later = match learned.now().redact_own(&own) {
            Cow::Owned(clean) => Some(clean),
            Cow::Borrowed(_) => None,
        };
        later.map_or(own, Cow::Owned)
    }

    fn redact_own<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let Some(matcher) = &self.matcher else {
            return Cow::Borrowed(text);
        };
        if !matcher.is_match(text) {
            return Cow::Borrowed(text);
        }
        let masks: Vec<String> = self.values.iter().map(|v| mask(v)).collect();
        Cow::Owned(matcher.replace_all(text, &masks))
    }

    /// Redacts in place; returns whether anything was replaced.
    pub fn redact_string(&self, text: &mut String) -> bool {
        match self.redact(text) {
            Cow::Borrowed(_) => false,
            Cow::Owned(clean) => {
                *text = clean;
                true
            }
        }
    }

    /// Redacts every string in a JSON value (keys included) in place.
    pub fn redact_value(&self, value: &mut Value) {
        if self.is_empty() {
            return;
        }
        match value {
            Value::String(s) => {
                self.redact_string(s);
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.redact_value(v)),
            Value::Object(map) => {
                let dirty: Vec<String> = map
                    .keys()
                    .filter(|k| matches!(self.redact(k), Cow::Owned(_)))
                    .cloned()
                    .collect();
                for key in dirty {
                    if let Some(v) = map.remove(&key) {
                        map.insert(self.redact(&key).into_owned(), v);
                    }
                }
                map.values_mut().for_each(|v| self.redact_value(v));
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }

    /// Redacts a serialized line (JSON text): the same as [`redact`](Self::redact), but a
    /// key written with JSON escapes inside a string is caught too, since every key we know
    /// is plain ASCII without quotes or backslashes in practice.
    pub fn redact_bytes<'a>(&self, bytes: &'a [u8]) -> Cow<'a, [u8]> {
        let own = self.redact_own_bytes(bytes);
        let Some(learned) = &self.learned else {
            return own;
        };
        let later = match learned.now().redact_own_bytes(&own) {
            Cow::Owned(clean) => Some(clean),
            Cow::Borrowed(_) => None,
        };
        later.map_or(own, Cow::Owned)
    }

    fn redact_own_bytes<'a>(&self, bytes: &'a [u8]) -> Cow<'a, [u8]> {
        let Some(matcher) = &self.matcher else {
            return Cow::Borrowed(bytes);
        };
        if !matcher.is_match(bytes) {
            return Cow::Borrowed(bytes);
        }
        let masks: Vec<String> = self.values.iter().map(|v| mask(v)).collect();
        Cow::Owned(matcher.replace_all_bytes(bytes, &masks))
    }
}

/// How a redacted value shows: its first three characters (so `sk-` tells which key it was)
/// and `…***`; short values show nothing of themselves.
pub fn mask(value: &str) -> String {
    if value.len() >= 16 {
        let head: String = value.chars().take(3).collect();
        format!("{head}…***")
    } else {
        "***".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn keys() -> Vec<String> {
        vec!["MY_PROVIDER_KEY".to_string()]
    }

    /// Variables and whether they are withheld: the classes by name (any case), URLs with a
    /// password by value, and the names that only look close.
    const TABLE: &[(&str, &str, bool)] = &[
        ("OPENAI_API_KEY", "sk-live-0123456789", true),
        ("openai_api_key", "sk-live-0123456789", true),
        ("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG", true),
        ("AWS_SESSION_TOKEN", "IQoJb3JpZ2luX2VjE", true),
        ("STRIPE_SECRET_KEY", "sk_live_51Hxyz", true),
        ("AZURE_OPENAI_KEY", "0123456789abcdef", true),
        ("MYSQL_PWD", "hunter22", true),
        ("PGPASSWORD", "hunter22", true),
        ("REDIS_PASSWD", "hunter22", true),
        ("SENTRY_DSN", "https://abc123@o1.ingest.sentry.io/1", true),
        ("GITHUB_TOKEN", "ghp_0123456789", true),
        ("ANTHROPIC_AUTH_TOKEN", "sk-ant-0123", true),
        ("NPM_CONFIG__AUTH", "dXNlcjpwYXNz", true),
        ("DOCKER_AUTH_CONFIG", "{\"auths\":{}}", true),
        ("GOOGLE_APPLICATION_CREDENTIALS", "/home/u/sa.json", true),
        ("SESSION_SECRET", "keyboard cat", true),
        ("JSESSIONID", "0123456789ABCDEF", true),
        ("SESSION_COOKIE", "sid=abc", true),
        ("SSH_AUTH_SOCK", "/run/user/1000/ssh-agent", true),
        ("TF_VAR_db_password", "hunter22", true),
        ("MY_PROVIDER_KEY", "abcdef", true),
        (
            "DATABASE_URL",
            "postgres://app:hunter2@db.internal:5432/app",
            true,
        ),
        ("REDIS_URL", "redis://:s3cret@localhost:6379/0", true),
        ("AMQP_ADDR", "amqp://guest:guest@rabbit//", true),
        (
            "MONGO",
            "mongodb+srv://u:p@cluster0.example.net/db?retryWrites=true",
            true,
        ),
        ("JDBC", "jdbc:postgresql://u:pw@h/db", true),
        ("http_proxy", "http://me:pass@proxy.local:3128", true),
        ("PIP_INDEX_URL", "https://me:pw@pypi.internal/simple", true),
        ("PATH", "/usr/bin:/bin", false),
        ("HOME", "/home/someone", false),
        ("PWD", "/work", false),
        ("OLDPWD", "/work/old", false),
        ("pwd", "/work", false),
        ("LANG", "C.UTF-8", false),
        ("TERM", "xterm-256color", false),
        ("HTTPS_PROXY", "http://proxy.local:3128", false),
        ("GIT_REMOTE", "https://someone@github.com/o/r", false),
        ("DOCS", "https://host/a:b@c", false),
        ("MAILTO", "mailto:a:b@c.example", false),
        ("EMPTY_PASS", "ftp://user:@host/", false),
        ("RUST_LOG", "info", false),
    ];

    #[test]
    fn the_classes_by_name_and_by_value() {
        let k = keys();
        for (name, value, secret) in TABLE {
            assert_eq!(
                is_secret_var(OsStr::new(name), OsStr::new(value), &k),
                *secret,
                "{name}={value}"
            );
        }
        assert!(TABLE.iter().filter(|row| row.2).count() >= 25);
    }

    #[test]
    fn scrubbing_honours_passthrough() {
        let vars = [
            (OsStr::new("PATH"), OsStr::new("/bin")),
            (OsStr::new("OPENAI_API_KEY"), OsStr::new("sk-1")),
            (OsStr::new("GH_TOKEN"), OsStr::new("ghp")),
            (OsStr::new("DB"), OsStr::new("pg://u:p@h")),
        ];
        let names = scrubbed_names(vars, &[], &["GH_TOKEN".to_string()]);
        assert_eq!(names, vec![OsStr::new("OPENAI_API_KEY"), OsStr::new("DB")]);
    }

    #[test]
    fn a_url_password_is_redacted_alone_too() {
        let secrets = Secrets::from_env(
            [("DATABASE_URL", "postgres://app:hunter2-long@db/app")],
            &[],
        );
        assert_eq!(
            secrets.redact("auth failed: hunter2-long; postgres://app:hunter2-long@db/app"),
            "auth failed: ***; pos…***"
        );
    }

    #[test]
    fn values_come_from_secret_variables_only() {
        let secrets = Secrets::from_env(
            [
                ("OPENAI_API_KEY", "sk-live-0123456789abcdef"),
                ("MY_PROVIDER_KEY", "abcdef"),
                ("GITHUB_TOKEN", "short"),
                ("HOME", "/home/someone-long-enough"),
            ],
            &keys(),
        );
        assert_eq!(secrets.values.len(), 2);
        let text = "k=sk-live-0123456789abcdef h=/home/someone-long-enough p=abcdef t=short";
        assert_eq!(
            secrets.redact(text),
            "k=sk-…*** h=/home/someone-long-enough p=*** t=short"
        );
    }

    #[test]
    fn longest_value_wins_and_clean_text_is_borrowed() {
        let secrets = Secrets::new(["abcdefgh".to_string(), "abcdefgh-and-more-1234".to_string()]);
        assert_eq!(secrets.redact("x abcdefgh-and-more-1234 y"), "x abc…*** y");
        assert!(matches!(secrets.redact("nothing here"), Cow::Borrowed(_)));
        assert!(matches!(Secrets::default().redact("abc"), Cow::Borrowed(_)));
    }

    #[test]
    fn json_values_and_bytes() {
        let key = "sk-test-9f8e7d6c5b4a3210".to_string();
        let secrets = Secrets::new([key.clone()]);
        let mut value = json!({"stdout": format!("OPENAI_API_KEY={key}\n"), "list": [key.clone(), 1], key.clone(): true});
        secrets.redact_value(&mut value);
        let text = value.to_string();
        assert!(!text.contains(&key), "{text}");
        assert!(text.contains("sk-…***"), "{text}");
        let line = format!("{{\"a\":\"{key}\"}}\n");
        let clean = secrets.redact_bytes(line.as_bytes());
        assert_eq!(&*clean, b"{\"a\":\"sk-\xE2\x80\xA6***\"}\n");
    }

    #[test]
    fn values_learned_later_are_redacted_by_the_secrets_that_follow_them() {
        let learned = Arc::new(Learned::default());
        let secrets =
            Secrets::new(["sk-known-0123456789".to_string()]).following(Arc::clone(&learned));
        let alone = Secrets::new(["sk-known-0123456789".to_string()]);
        let token = "oauth-access-token-abcdef0123456789";
        assert_eq!(secrets.redact(token), token, "not learned yet");
        learned.learn(token);
        learned.learn("short");
        assert_eq!(
            secrets.redact(&format!("t={token} k=sk-known-0123456789 s=short")),
            "t=oau…*** k=sk-…*** s=short"
        );
        assert_eq!(
            &*secrets.redact_bytes(token.as_bytes()),
            "oau…***".as_bytes()
        );
        assert_eq!(
            alone.redact(token),
            token,
            "only the secrets that follow it"
        );
        assert!(!Secrets::default().following(learned).is_empty());
    }

    #[test]
    fn debug_never_shows_values() {
        let secrets = Secrets::new(["sk-very-secret-value".to_string()]);
        assert_eq!(format!("{secrets:?}"), "Secrets(1 values)");
    }
}
