//! The lists of programs and names the judgement of a command knows (see `through`,
//! `programs`, `code`): kept apart so the logic reads on its own.

/// Programs that run their command as someone else, or in another root or namespace.
#[rustfmt::skip]
pub const PRIVILEGED: &[&str] = &[
    "sudo", "doas", "su", "pkexec", "run0", "runuser", "chroot", "setpriv", "capsh", "unshare",
    "nsenter", "sg", "newgrp", "systemd-run", "machinectl", "fakeroot", "firejail", "bwrap",
];

/// Builtins and keywords that change how the rest of the line runs, or run text as code.
#[rustfmt::skip]
pub const SHELL_STATE: &[&str] = &[
    "alias", "unalias", "eval", "source", ".", "set", "trap", "hash", "enable", "shopt",
    "builtin", "export", "readonly", "local", "declare", "typeset", "unset", "getopts", "read",
    "let", "coproc", "function", "select", "ulimit", "umask", "fc", "!", "[[", "{", "}", "if",
    "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac", "in",
];

/// Shells whose `-c` script is parsed like the line itself.
#[rustfmt::skip]
pub const SHELLS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh",
];

/// Git's global options that change nothing it runs; they are dropped so that
/// `git --no-pager log` is `git log`. Any other before the subcommand stays, for the rules
/// and grants to refuse.
#[rustfmt::skip]
pub const GIT_QUIET_OPTIONS: &[&str] = &[
    "--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs", "--glob-pathspecs",
    "--noglob-pathspecs", "--icase-pathspecs", "--no-replace-objects", "--no-advice",
];

/// Programs one key must not allow for the session; a rule written on purpose still can.
#[rustfmt::skip]
pub const DESTRUCTIVE: &[&str] = &[
    "rm", "dd", "mkfs", "shred", "wipefs", "chmod", "chown", "chgrp", "chattr", "setfacl",
    "kill", "pkill", "killall", "reboot", "shutdown", "halt", "poweroff", "eval", "exec",
    "curl", "wget", "ssh", "scp", "sftp", "rsync", "nc", "ncat", "socat", "telnet", "ftp", "mv",
    "truncate", "cd", "pushd", "popd", "env", "command", "time", "nice", "ionice", "docker",
    "podman", "kubectl", "systemctl", "service", "apt", "apt-get", "dpkg", "yum", "dnf",
    "pacman", "snap", "mount", "umount", "crontab", "at", "iptables", "nft", "ip", "date",
    "hostname", "passwd", "useradd", "userdel", "usermod", "sqlite3", "psql", "mysql",
];

/// Programs that read and print, whose arguments are data: `p` grants the program with any
/// literal arguments. (Writers such as `tee`, `touch` or `cp` get only an exact grant.)
#[rustfmt::skip]
pub const PLAIN: &[&str] = &[
    "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "echo", "printf", "pwd",
    "true", "false", "diff", "cmp", "stat", "file", "du", "df", "tree", "sort", "uniq", "cut",
    "tr", "nl", "which", "whoami", "id", "uname", "basename", "dirname", "realpath", "readlink",
    "sha256sum", "sha1sum", "sha512sum", "md5sum", "b2sum", "cksum", "hexdump", "od",
    "strings", "jq", "column", "paste", "join", "comm", "fold", "fmt", "expand", "unexpand",
    "rev", "tac", "seq", "sleep", "ps", "nproc", "free", "uptime",
];

/// Programs driven by a subcommand: `p` grants the program and its subcommand.
#[rustfmt::skip]
pub const SUBCOMMANDS: &[&str] = &[
    "cargo", "rustup", "npm", "pnpm", "yarn", "go", "pip", "pip3", "uv", "poetry", "gh", "just",
    "make", "gmake",
];

/// Subcommands that launch the program named in their arguments (`uv run X`): only the
/// same words again, like a program this list does not know.
#[rustfmt::skip]
pub const LAUNCHERS: &[(&str, &str)] = &[
    ("uv", "run"), ("uv", "tool"), ("poetry", "run"), ("rustup", "run"), ("npm", "exec"),
    ("npm", "x"), ("pnpm", "exec"), ("pnpm", "dlx"), ("yarn", "exec"), ("yarn", "dlx"),
    ("go", "tool"), ("gh", "extension"),
];

/// Git's own subcommands: any other name may be an alias, which can run anything.
#[rustfmt::skip]
pub const GIT_BUILTINS: &[&str] = &[
    "add", "am", "annotate", "apply", "archive", "bisect", "blame", "branch", "bundle",
    "cat-file", "check-attr", "check-ignore", "check-mailmap", "check-ref-format", "checkout",
    "checkout-index", "cherry", "cherry-pick", "citool", "clean", "clone", "column", "commit",
    "commit-graph", "commit-tree", "config", "count-objects", "credential", "daemon",
    "describe", "diagnose", "diff", "diff-files", "diff-index", "diff-tree", "difftool",
    "fast-export", "fast-import", "fetch", "filter-branch", "for-each-ref", "format-patch",
    "fsck", "gc", "grep", "gui", "hash-object", "help", "init", "instaweb",
    "interpret-trailers", "log", "ls-files", "ls-remote", "ls-tree", "maintenance", "merge",
    "merge-base", "merge-file", "merge-tree", "mergetool", "mktag", "mktree", "mv", "name-rev",
    "notes", "prune", "pull", "push", "range-diff", "read-tree", "rebase", "reflog", "remote",
    "repack", "replace", "request-pull", "rerere", "reset", "restore", "rev-list", "rev-parse",
    "revert", "rm", "send-email", "shortlog", "show", "show-branch", "show-ref",
    "sparse-checkout", "stash", "status", "stripspace", "submodule", "switch", "symbolic-ref",
    "tag", "update-index", "update-ref", "var", "verify-commit", "verify-pack", "verify-tag",
    "version", "whatchanged", "worktree", "write-tree",
];

/// Git subcommands `p` never offers: they destroy work, change what git runs later, or run
/// tools.
#[rustfmt::skip]
pub const GIT_NOT_OFFERED: &[&str] = &[
    "config", "clean", "reset", "filter-branch", "submodule", "bisect", "difftool", "mergetool",
    "send-email", "instaweb", "daemon", "credential", "gui", "citool", "prune", "gc", "reflog",
    "update-ref", "symbolic-ref", "rm", "checkout", "restore", "stash", "push",
];

/// Programs that run code (from files or arguments): `p` never offers them.
#[rustfmt::skip]
pub const INTERPRETERS: &[&str] = &[
    "python", "python2", "python3", "pypy", "pypy3", "ipython", "node", "nodejs", "deno", "bun",
    "perl", "ruby", "irb", "php", "lua", "luajit", "Rscript", "R", "julia", "osascript", "pwsh",
    "powershell", "tclsh", "wish", "expect", "fish", "csh", "tcsh", "nu", "xonsh", "elvish",
    "awk", "gawk", "mawk", "nawk", "sed", "gsed", "vim", "vi", "nvim", "ex", "ed", "emacs",
    "gdb", "java", "jshell", "dotnet-script",
];

/// Variables known to change no program's choice of code (see `through::harmless`).
#[rustfmt::skip]
pub const HARMLESS_VARIABLES: &[&str] = &[
    "LANG", "LANGUAGE", "TZ", "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE",
    "COLUMNS", "LINES", "TERM", "RUST_LOG", "RUST_BACKTRACE", "RUST_LIB_BACKTRACE",
    "CARGO_TERM_COLOR", "CARGO_INCREMENTAL", "CI", "PYTHONUNBUFFERED",
    "PYTHONDONTWRITEBYTECODE", "PYTHONHASHSEED", "NODE_ENV",
];
