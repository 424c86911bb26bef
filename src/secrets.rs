//! Secrets in the environment: which variables tool processes never inherit, and the known
//! key values that are redacted wherever text leaves taco (tool results, provider errors,
//! session files, traces, `exec --json`, requests to the provider).
//!
//! Scrubbing the environment is the first line; redaction is the net behind it, for a key
//! that reaches a tool another way (a `.env` file, a passthrough variable, a config file).

use std::borrow::Cow;
use std::ffi::OsStr;

use aho_corasick::AhoCorasick;
use serde_json::Value;

/// Values shorter than this are not treated as secrets when only the variable's name
/// suggests one (`*_TOKEN=1` is a flag, and redacting "true" everywhere would garble text).
const MIN_GUESSED_LEN: usize = 8;
/// Explicit provider keys are redacted from this length up.
const MIN_KEY_LEN: usize = 6;

/// Whether a variable's name says it holds a secret: `*_API_KEY`, `*_TOKEN`, `*_SECRET`,
/// `*PASSWORD*` (any case), or one of the provider key variables in `key_vars`.
pub fn is_secret_name(name: &str, key_vars: &[String]) -> bool {
    if key_vars.iter().any(|k| k == name) {
        return true;
    }
    let upper = name.to_ascii_uppercase();
    upper.ends_with("_API_KEY")
        || upper == "API_KEY"
        || upper.ends_with("_TOKEN")
        || upper.ends_with("_SECRET")
        || upper.contains("PASSWORD")
}

/// The names of the variables in `vars` that a tool process must not inherit: every secret
/// name that is not passed through by name.
pub fn scrubbed_names<'a>(
    vars: impl IntoIterator<Item = &'a OsStr>,
    key_vars: &[String],
    passthrough: &[String],
) -> Vec<&'a OsStr> {
    vars.into_iter()
        .filter(|name| {
            // A name that is not UTF-8 cannot be matched by a passthrough entry; when in
            // doubt, scrub it only if its lossy form looks secret.
            let text = name.to_string_lossy();
            is_secret_name(&text, key_vars) && !passthrough.iter().any(|p| *p == text)
        })
        .collect()
}

/// The key values taco knows, and a matcher that finds them in text.
#[derive(Clone, Default)]
pub struct Secrets {
    /// Longest first, so a key that contains another is replaced whole.
    values: Vec<String>,
    matcher: Option<AhoCorasick>,
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secrets({} values)", self.values.len())
    }
}

impl Secrets {
    /// The values of the secret variables among `vars` (see [`is_secret_name`]).
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
            if value.len() >= min && is_secret_name(name, key_vars) {
                values.push(value.to_string());
            }
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
        Self { values, matcher }
    }

    /// Whether there is nothing to redact.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// `text` with every known value replaced by its [`mask`].
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
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

    #[test]
    fn secret_names() {
        let k = keys();
        for name in [
            "OPENAI_API_KEY",
            "openai_api_key",
            "GITHUB_TOKEN",
            "AWS_SECRET",
            "DB_PASSWORD",
            "PASSWORD_FILE_X",
            "MY_PROVIDER_KEY",
            "API_KEY",
        ] {
            assert!(is_secret_name(name, &k), "{name}");
        }
        for name in [
            "PATH",
            "HOME",
            "TOKENIZERS_PARALLELISM",
            "KEYBOARD",
            "SECRETS_DIR",
        ] {
            assert!(!is_secret_name(name, &k), "{name}");
        }
    }

    #[test]
    fn scrubbing_honours_passthrough() {
        let vars = [
            OsStr::new("PATH"),
            OsStr::new("OPENAI_API_KEY"),
            OsStr::new("GH_TOKEN"),
        ];
        let names = scrubbed_names(vars, &[], &["GH_TOKEN".to_string()]);
        assert_eq!(names, vec![OsStr::new("OPENAI_API_KEY")]);
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
    fn debug_never_shows_values() {
        let secrets = Secrets::new(["sk-very-secret-value".to_string()]);
        assert_eq!(format!("{secrets:?}"), "Secrets(1 values)");
    }
}
