//! What is known of particular programs: the arguments that make one run something its words
//! do not name (an *escape*: no rule or grant covers the command), and the grant `p` would
//! offer for one invocation (never for an escape, a path, a destructive program or an
//! interpreter).

use super::code;
use super::grants::{ArgShape, ShellGrant};
use super::through::{Invocation, SHELLS};

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

/// Programs one key must not allow for the session; a rule written on purpose still can.
const DESTRUCTIVE: &[&str] = &[
    "rm",
    "dd",
    "mkfs",
    "shred",
    "wipefs",
    "chmod",
    "chown",
    "chgrp",
    "chattr",
    "setfacl",
    "kill",
    "pkill",
    "killall",
    "reboot",
    "shutdown",
    "halt",
    "poweroff",
    "eval",
    "exec",
    "curl",
    "wget",
    "ssh",
    "scp",
    "sftp",
    "rsync",
    "nc",
    "ncat",
    "socat",
    "telnet",
    "ftp",
    "mv",
    "truncate",
    "cd",
    "pushd",
    "popd",
    "env",
    "command",
    "time",
    "nice",
    "ionice",
    "docker",
    "podman",
    "kubectl",
    "systemctl",
    "service",
    "apt",
    "apt-get",
    "dpkg",
    "yum",
    "dnf",
    "pacman",
    "snap",
    "mount",
    "umount",
    "crontab",
    "at",
    "iptables",
    "nft",
    "ip",
    "date",
    "hostname",
    "passwd",
    "useradd",
    "userdel",
    "usermod",
    "sqlite3",
    "psql",
    "mysql",
];

/// Programs whose arguments are data: `p` grants the program with any literal arguments.
const PLAIN: &[&str] = &[
    "ls",
    "cat",
    "head",
    "tail",
    "wc",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "echo",
    "printf",
    "pwd",
    "true",
    "false",
    "diff",
    "cmp",
    "stat",
    "file",
    "du",
    "df",
    "tree",
    "sort",
    "uniq",
    "cut",
    "tr",
    "nl",
    "which",
    "whoami",
    "id",
    "uname",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "sha256sum",
    "sha1sum",
    "sha512sum",
    "md5sum",
    "b2sum",
    "cksum",
    "xxd",
    "hexdump",
    "od",
    "strings",
    "jq",
    "column",
    "paste",
    "join",
    "comm",
    "fold",
    "fmt",
    "expand",
    "unexpand",
    "rev",
    "tac",
    "seq",
    "sleep",
    "touch",
    "mkdir",
    "tee",
    "ps",
    "nproc",
    "free",
    "uptime",
];

/// Programs driven by a subcommand: `p` grants the program and its subcommand.
const SUBCOMMANDS: &[&str] = &[
    "cargo", "rustup", "npm", "pnpm", "yarn", "go", "pip", "pip3", "uv", "poetry", "gh", "just",
    "make", "gmake",
];

/// Subcommands that launch the program named in their arguments (`uv run X`): only the
/// same words again, like a program this list does not know.
const LAUNCHERS: &[(&str, &str)] = &[
    ("uv", "run"),
    ("uv", "tool"),
    ("poetry", "run"),
    ("rustup", "run"),
    ("npm", "exec"),
    ("npm", "x"),
    ("pnpm", "exec"),
    ("pnpm", "dlx"),
    ("yarn", "exec"),
    ("yarn", "dlx"),
    ("go", "tool"),
    ("gh", "extension"),
];

/// Git's own subcommands: any other name may be an alias, which can run anything.
const GIT_BUILTINS: &[&str] = &[
    "add",
    "am",
    "annotate",
    "apply",
    "archive",
    "bisect",
    "blame",
    "branch",
    "bundle",
    "cat-file",
    "check-attr",
    "check-ignore",
    "check-mailmap",
    "check-ref-format",
    "checkout",
    "checkout-index",
    "cherry",
    "cherry-pick",
    "citool",
    "clean",
    "clone",
    "column",
    "commit",
    "commit-graph",
    "commit-tree",
    "config",
    "count-objects",
    "credential",
    "daemon",
    "describe",
    "diagnose",
    "diff",
    "diff-files",
    "diff-index",
    "diff-tree",
    "difftool",
    "fast-export",
    "fast-import",
    "fetch",
    "filter-branch",
    "for-each-ref",
    "format-patch",
    "fsck",
    "gc",
    "grep",
    "gui",
    "hash-object",
    "help",
    "init",
    "instaweb",
    "interpret-trailers",
    "log",
    "ls-files",
    "ls-remote",
    "ls-tree",
    "maintenance",
    "merge",
    "merge-base",
    "merge-file",
    "merge-tree",
    "mergetool",
    "mktag",
    "mktree",
    "mv",
    "name-rev",
    "notes",
    "prune",
    "pull",
    "push",
    "range-diff",
    "read-tree",
    "rebase",
    "reflog",
    "remote",
    "repack",
    "replace",
    "request-pull",
    "rerere",
    "reset",
    "restore",
    "rev-list",
    "rev-parse",
    "revert",
    "rm",
    "send-email",
    "shortlog",
    "show",
    "show-branch",
    "show-ref",
    "sparse-checkout",
    "stash",
    "status",
    "stripspace",
    "submodule",
    "switch",
    "symbolic-ref",
    "tag",
    "update-index",
    "update-ref",
    "var",
    "verify-commit",
    "verify-pack",
    "verify-tag",
    "version",
    "whatchanged",
    "worktree",
    "write-tree",
];

/// Git subcommands `p` never offers: they destroy work, change what git runs later, or run
/// tools.
const GIT_NOT_OFFERED: &[&str] = &[
    "config",
    "clean",
    "reset",
    "filter-branch",
    "submodule",
    "bisect",
    "difftool",
    "mergetool",
    "send-email",
    "instaweb",
    "daemon",
    "credential",
    "gui",
    "citool",
    "prune",
    "gc",
    "reflog",
    "update-ref",
    "symbolic-ref",
    "rm",
    "checkout",
    "restore",
    "stash",
    "push",
];

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
