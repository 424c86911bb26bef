//! Shell grants (`p` in the approval dialog): a typed grant of one program, its subcommand and
//! the shape of the arguments allowed after them. `p` offers one only when every command of
//! the line, looked through its wrappers, would get that same grant; and a grant covers a
//! later command exactly when `p` would offer that same grant for it. So a grant never covers
//! more than the kind of command the user saw: `timeout 60 ls` grants `ls …`, which covers
//! `ls -la` and `timeout 5 ls src` and never `timeout 60 rm -rf v`.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::programs;
use super::through::{self, Invocation, Unit};

/// A command allowed for the session from the approval dialog (`p`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(from = "Wire")]
pub struct ShellGrant {
    /// The program, by name (never a path).
    pub program: String,
    /// The words that must follow it (`log` of `git log`, `run build` of `npm run build`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subcommand: Vec<String>,
    /// What may follow those.
    pub args: ArgShape,
}

/// The arguments a grant allows after the program and its subcommand.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArgShape {
    /// Any number of literal words (the line's parser admits no expansion), none of which
    /// makes the program run something else or act beyond what `p` offers (`find -delete`).
    /// For programs known to take data as arguments (`ls`, `grep`) or driven by a subcommand
    /// (`git log`, `cargo test`).
    Literal,
    /// Exactly these words: for a program not known, which may run its arguments.
    Exact(Vec<String>),
    /// A grant read from a session file written before grants were typed (a string of
    /// words): shown as it was, covering nothing.
    Legacy,
}

/// Session files before typed grants held the prefix as a string of words.
#[derive(Deserialize)]
#[serde(untagged)]
enum Wire {
    Typed {
        program: String,
        #[serde(default)]
        subcommand: Vec<String>,
        args: ArgShape,
    },
    Legacy(String),
}

impl From<Wire> for ShellGrant {
    fn from(wire: Wire) -> Self {
        match wire {
            Wire::Typed {
                program,
                subcommand,
                args,
            } => Self {
                program,
                subcommand,
                args,
            },
            Wire::Legacy(words) => {
                let mut words = words.split_whitespace().map(String::from);
                Self {
                    program: words.next().unwrap_or_default(),
                    subcommand: words.collect(),
                    args: ArgShape::Legacy,
                }
            }
        }
    }
}

impl ShellGrant {
    /// For the user: the program, subcommand and exact words, quoted where needed (`git log`).
    pub fn name(&self) -> String {
        let exact = match &self.args {
            ArgShape::Exact(args) => args.as_slice(),
            ArgShape::Literal | ArgShape::Legacy => &[],
        };
        (std::iter::once(&self.program)
            .chain(&self.subcommand)
            .chain(exact))
        .map(|w| quoted(w))
        .collect::<Vec<_>>()
        .join(" ")
    }

    /// What the dialog's `p` says the grant allows, short enough for its key line:
    /// "allows `git log …`, not other git commands".
    pub fn hint(&self) -> String {
        let name = shorten(&self.name(), 32);
        match &self.args {
            ArgShape::Literal if self.subcommand.is_empty() => format!("allows `{name} …`"),
            ArgShape::Literal => {
                format!("allows `{name} …`, not other {} commands", self.program)
            }
            ArgShape::Exact(_) => format!("allows exactly `{name}`"),
            ArgShape::Legacy => format!("`{name}` (old grant: allows nothing)"),
        }
    }

    /// The hint for a narrow key line: "allows `git log …`".
    pub fn short_hint(&self) -> String {
        format!("allows `{}`", shorten(&self.to_string(), 24))
    }

    /// Whether this grant covers `invocation`: `p` would offer this very grant for it.
    pub fn covers(&self, invocation: &Invocation) -> bool {
        self.args != ArgShape::Legacy && programs::offer(invocation).as_ref() == Ok(self)
    }
}

impl fmt::Display for ShellGrant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.args {
            ArgShape::Literal => write!(f, "{} …", self.name()),
            ArgShape::Exact(_) | ArgShape::Legacy => write!(f, "{}", self.name()),
        }
    }
}

/// A word as the shell would need it written: bare when plain, else single-quoted.
fn quoted(word: &str) -> String {
    let plain = !word.is_empty()
        && word.chars().all(|c| {
            c.is_alphanumeric()
                || matches!(
                    c,
                    '-' | '_' | '.' | '/' | ':' | '=' | '+' | ',' | '@' | '%' | '^'
                )
        });
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

/// The grant `p` offers for `line`: every command it runs, looked through its wrappers, would
/// get this same grant. `None` when any part is opaque or not grantable, or two commands
/// would need different grants.
pub fn suggest(line: &str) -> Option<ShellGrant> {
    let mut offered: Option<ShellGrant> = None;
    for unit in through::units(line) {
        let Unit::Runs(invocation) = unit else {
            return None;
        };
        let grant = programs::offer(&invocation).ok()?;
        match &offered {
            Some(first) if *first != grant => return None,
            Some(_) => {}
            None => offered = Some(grant),
        }
    }
    offered
}

#[cfg(test)]
mod tests;
