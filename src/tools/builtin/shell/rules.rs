//! Shell command rules (`[tools.shell] allow` / `ask`): a command prefix given as words,
//! matched against the command's words, never its raw text. Only a *simple* command can
//! match: anything the shell would treat as more than one command or would expand (`;`,
//! `&`, `|`, redirections, `$`, backticks, a newline, outside single quotes) matches no rule,
//! so `git status; rm -rf x` or `git status $(rm -rf x)` is asked about like any command.

use crate::tools::Policy;

/// The words of `command` when it is one simple command (quotes removed); `None` when the
/// shell would run or expand more than its words.
pub fn simple_words(command: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = command.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                // Single quotes: everything literal up to the next one.
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return None,
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        // Expansion happens inside double quotes too.
                        Some('$' | '`') | None => return None,
                        Some('\\') => match chars.next() {
                            Some(c) => word.push(c),
                            None => return None,
                        },
                        Some(c) => word.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some('\n') | None => return None,
                    Some(c) => word.push(c),
                }
            }
            ';' | '&' | '|' | '<' | '>' | '$' | '`' | '(' | ')' | '\n' | '\r' | '{' | '}' | '*'
            | '?' | '[' | '~' | '#' => return None,
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    // `VAR=x cmd` runs cmd with a changed environment: not the command the rule names.
    if words.first().is_none_or(|w| w.contains('=')) {
        return None;
    }
    Some(words)
}

/// The prefix the dialog offers to allow for `command`: its first word, and the second when
/// it is a subcommand rather than an option or a path (`cargo test`, `git status`, `ls`);
/// `None` when the command is not simple.
pub fn suggested_prefix(command: &str) -> Option<String> {
    let words = simple_words(command)?;
    let first = words.first()?;
    // One key must not open the door to these for the rest of the session (a config rule
    // still can, written on purpose).
    if NEVER_OFFERED.contains(&first.as_str()) {
        return None;
    }
    match words.get(1) {
        Some(second)
            if second
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
                && !second.starts_with('-') =>
        {
            Some(format!("{first} {second}"))
        }
        _ => Some(first.clone()),
    }
}

/// Programs whose prefix the dialog never offers to allow for the session.
const NEVER_OFFERED: &[&str] = &[
    "rm", "sudo", "su", "doas", "dd", "mkfs", "shred", "chmod", "chown", "kill", "pkill",
    "killall", "reboot", "shutdown", "sh", "bash", "zsh", "env", "xargs", "find", "eval", "exec",
    "curl", "wget", "ssh", "scp", "mv", "truncate",
];

/// Whether `rule` (a prefix written as words) starts `words`.
fn starts(words: &[String], rule: &str) -> bool {
    let Some(rule) = simple_words(rule) else {
        return false;
    };
    !rule.is_empty() && words.len() >= rule.len() && words.iter().zip(&rule).all(|(w, r)| w == r)
}

/// The policy the rules give `command`: `ask` rules win over `allow` rules; `None` when no
/// rule matches (or the command is not simple).
pub fn policy(command: &str, allow: &[String], ask: &[String]) -> Option<Policy> {
    let words = simple_words(command)?;
    if ask.iter().any(|rule| starts(&words, rule)) {
        Some(Policy::Ask)
    } else if allow.iter().any(|rule| starts(&words, rule)) {
        Some(Policy::Allow)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_prefix_matches_whole_words_of_a_simple_command() {
        let allow = rules(&["git status", "git diff", "cargo test"]);
        let p = |c: &str| policy(c, &allow, &[]);
        assert_eq!(p("git status"), Some(Policy::Allow));
        assert_eq!(p("git  status  --short"), Some(Policy::Allow));
        assert_eq!(p("cargo test --test mcp"), Some(Policy::Allow));
        assert_eq!(p("git 'status'"), Some(Policy::Allow), "quotes are removed");
        assert_eq!(p("git statusx"), None, "words, not substrings");
        assert_eq!(p("git"), None);
        assert_eq!(p("git push"), None);
    }

    #[test]
    fn compound_and_expanding_commands_match_nothing() {
        let allow = rules(&["git status", "echo"]);
        for command in [
            "git status; rm -rf x",
            "git status && rm -rf x",
            "git status || rm -rf x",
            "git status | sh",
            "git status & rm -rf x",
            "git status > ~/.bashrc",
            "git status $(rm -rf x)",
            "git status `rm -rf x`",
            "echo \"$(rm -rf x)\"",
            "echo \"$HOME\"",
            "git status\nrm -rf x",
            "FOO=1 git status",
            "git status 'unterminated",
            "echo *",
            "git status # comment",
        ] {
            assert_eq!(policy(command, &allow, &[]), None, "{command:?}");
        }
        assert_eq!(
            policy("echo 'a; b $(c)'", &allow, &[]),
            Some(Policy::Allow),
            "inside single quotes it is all one literal word"
        );
    }

    #[test]
    fn the_offered_prefix_is_the_command_and_its_subcommand() {
        assert_eq!(
            suggested_prefix("cargo test --test mcp").as_deref(),
            Some("cargo test")
        );
        assert_eq!(suggested_prefix("ls -la").as_deref(), Some("ls"));
        assert_eq!(suggested_prefix("cat src/main.rs").as_deref(), Some("cat"));
        assert_eq!(suggested_prefix("git status; rm -rf x"), None);
        assert_eq!(suggested_prefix("rm -rf target"), None, "never offered");
        assert_eq!(suggested_prefix("sudo make install"), None);
    }

    #[test]
    fn ask_rules_win_over_allow_rules() {
        let allow = rules(&["git"]);
        let ask = rules(&["git push"]);
        assert_eq!(policy("git log", &allow, &ask), Some(Policy::Allow));
        assert_eq!(policy("git push origin", &allow, &ask), Some(Policy::Ask));
    }
}
