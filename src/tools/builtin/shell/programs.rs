//! What is known of particular programs: the arguments that make one run something its words
//! do not name (an *escape*: no rule or grant covers the command), and the grant `p` would
//! offer for one invocation (never for an escape, a path, a destructive program or an
//! interpreter).

use super::code;
use super::grants::{ArgShape, ShellGrant};
use super::names::{
    DESTRUCTIVE, GIT_BUILTINS, GIT_NOT_OFFERED, LAUNCHERS, PLAIN, SHELLS, SUBCOMMANDS,
};
use super::through::Invocation;

/// Why `p` offers no grant for an invocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotOffered {
    /// Its arguments make it run something else (see [`escape`]).
    Escape(&'static str),
    /// The program is given as a path (`/bin/rm`, `./x`).
    Path,
    /// A program one key must not allow for the session (`rm`, `dd`, `chmod`, …).
    Destructive,
    /// A shell or interpreter: it runs whatever code it is given.
    Interpreter,
    /// This invocation deletes, writes files or starts commands (`find -delete`,
    /// `git clean`).
    Acts,
    /// A program with subcommands, called without one (`cargo --version`).
    NoSubcommand,
}

/// Whether `arg` is `option` or `option=…`.
fn is_option(arg: &str, option: &str) -> bool {
    arg == option
        || arg
            .strip_prefix(option)
            .is_some_and(|rest| rest.starts_with('='))
}

/// What in `invocation` makes it run something its words do not name, if anything.
pub fn escape(invocation: &Invocation) -> Option<&'static str> {
    let Invocation { program, args } = invocation;
    let any = |options: &[&str]| args.iter().any(|a| options.iter().any(|o| is_option(a, o)));
    // A single-dash option cluster holding one of `letters` (`tar -xzI prog`).
    let cluster = |letters: &str| {
        args.iter()
            .filter(|a| a.starts_with('-') && !a.starts_with("--"))
            .any(|a| a.chars().skip(1).any(|c| letters.contains(c)))
    };
    if let Some(code) = code::inline(program, args) {
        return Some(code);
    }
    match program.as_str() {
        "git" => git(args),
        "rg" => any(&["--pre", "--hostname-bin"]).then_some("rg --pre"),
        "fd" | "fdfind" => {
            (any(&["--exec", "--exec-batch"]) || cluster("xX")).then_some("fd --exec")
        }
        "sort" => any(&["--compress-program"]).then_some("sort --compress-program"),
        "tar" => {
            let options = [
                "--to-command",
                "--use-compress-program",
                "--checkpoint-action",
                "--info-script",
                "--new-volume-script",
                "--rsh-command",
                "--rmt-command",
            ];
            // `tar xvfI …`: the first argument is a cluster even without its dash.
            let bundled = args
                .first()
                .is_some_and(|a| !a.starts_with('-') && a.contains(['I', 'F']));
            (any(&options) || cluster("IF") || bundled).then_some("tar --to-command")
        }
        "make" | "gmake" => {
            // `make SHELL=…` or `CC=…` changes what its recipes run.
            let assigns = args.iter().any(|a| !a.starts_with('-') && a.contains('='));
            (assigns || any(&["--eval"]) || cluster("E")).then_some("make VAR=…")
        }
        "cargo" => any(&["--config"]).then_some("cargo --config"),
        "go" => any(&["-exec", "--exec", "-toolexec", "--toolexec"]).then_some("go -exec"),
        "npm" | "pnpm" | "yarn" => any(&["--script-shell"]).then_some("npm --script-shell"),
        "rsync" => (any(&["--rsh", "--rsync-path"]) || cluster("e")).then_some("rsync -e"),
        "ssh" | "scp" | "sftp" => args
            .iter()
            .any(|a| {
                let a = a.to_ascii_lowercase();
                a.contains("proxycommand") || a.contains("localcommand")
            })
            .then_some("ssh -o ProxyCommand"),
        _ => None,
    }
}

/// Git: only its known subcommands, with no global option before them that changes what it
/// runs (`-c`, `--config-env`, `--exec-path=`, `-C`, `--git-dir`, …), and none of the
/// options that name a program (`--upload-pack`, `rebase -x`, `grep -O`, `bisect run`).
fn git(args: &[String]) -> Option<&'static str> {
    let sub = args.first()?;
    if sub.starts_with('-') {
        let query = [
            "--version",
            "--help",
            "-h",
            "--html-path",
            "--man-path",
            "--info-path",
        ];
        return (args.len() > 1 || !query.contains(&sub.as_str()))
            .then_some("a git option before the subcommand");
    }
    if !GIT_BUILTINS.contains(&sub.as_str()) {
        return Some("a git alias or external command");
    }
    let rest = &args[1..];
    let names_program = [
        "--upload-pack",
        "--receive-pack",
        "--exec",
        "--extcmd",
        "--open-files-in-pager",
        "--smtp-server",
        "--sendmail-cmd",
        "--to-cmd",
        "--cc-cmd",
        "--tool",
    ];
    let short = |letters: &str| {
        rest.iter()
            .filter(|a| a.starts_with('-') && !a.starts_with("--"))
            .any(|a| a.chars().skip(1).any(|c| letters.contains(c)))
    };
    let runs = rest
        .iter()
        .any(|a| names_program.iter().any(|o| is_option(a, o)))
        || match sub.as_str() {
            "grep" => short("O"),
            "rebase" => short("x"),
            "clone" | "ls-remote" | "fetch" | "pull" | "archive" => short("u"),
            "difftool" | "mergetool" | "filter-branch" => true,
            "bisect" => rest.iter().any(|a| a == "run"),
            "submodule" => rest.iter().any(|a| a == "foreach"),
            _ => false,
        };
    runs.then_some("a git option that runs a program")
}

/// A word that can be a subcommand: a plain name, not an option or a path.
fn subcommand_word(word: &str) -> bool {
    let mut chars = word.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'))
}

/// The grant `p` offers for `invocation`: the same grant is offered for exactly the
/// invocations it covers.
pub fn offer(invocation: &Invocation) -> Result<ShellGrant, NotOffered> {
    if let Some(why) = escape(invocation) {
        return Err(NotOffered::Escape(why));
    }
    let Invocation { program, args } = invocation;
    let name = program.as_str();
    let grant = |subcommand: &[String], args: ArgShape| ShellGrant {
        program: program.clone(),
        subcommand: subcommand.to_vec(),
        args,
    };
    if name.contains('/') {
        return Err(NotOffered::Path);
    }
    if DESTRUCTIVE.contains(&name) || name.starts_with("mkfs.") {
        return Err(NotOffered::Destructive);
    }
    if code::interpreter(name) || SHELLS.contains(&name) {
        return Err(NotOffered::Interpreter);
    }
    let first = args.first().filter(|a| subcommand_word(a));
    match name {
        "find" => {
            let acts = args.iter().any(|a| {
                matches!(
                    a.as_str(),
                    "-delete" | "-exec" | "-execdir" | "-ok" | "-okdir" | "-fls"
                ) || a.starts_with("-fprint")
            });
            if acts {
                Err(NotOffered::Acts)
            } else {
                Ok(grant(&[], ArgShape::Literal))
            }
        }
        "git" => match first {
            Some(sub) if GIT_NOT_OFFERED.contains(&sub.as_str()) => Err(NotOffered::Acts),
            Some(sub) => Ok(grant(std::slice::from_ref(sub), ArgShape::Literal)),
            None => Err(NotOffered::NoSubcommand),
        },
        // `npm run build`: the script is part of what was seen.
        "npm" | "pnpm" | "yarn" if first.is_some_and(|s| s == "run" || s == "run-script") => {
            match args.get(1).filter(|s| subcommand_word(s)) {
                Some(_) => Ok(grant(&args[..2], ArgShape::Literal)),
                None => Err(NotOffered::NoSubcommand),
            }
        }
        _ if PLAIN.contains(&name) => Ok(grant(&[], ArgShape::Literal)),
        _ if SUBCOMMANDS.contains(&name) => match first {
            Some(sub) if LAUNCHERS.contains(&(name, sub.as_str())) => {
                Ok(grant(&[], ArgShape::Exact(args.clone())))
            }
            Some(sub) => Ok(grant(std::slice::from_ref(sub), ArgShape::Literal)),
            None => Err(NotOffered::NoSubcommand),
        },
        // A program this list does not know may run its arguments (a launcher): only the
        // same words again.
        _ => Ok(grant(&[], ArgShape::Exact(args.clone()))),
    }
}

#[cfg(test)]
mod tests;
