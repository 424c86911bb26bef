//! What each simple command of a line runs, looked through wrappers and launchers
//! (`timeout`, `nice`, `env`, `sh -c`, `find -exec`, …) to the commands they start. A
//! wrapper whose options are not understood, a privilege changer, `xargs` (whose command's
//! arguments come from its input), a shell builtin that changes how later commands run, or an
//! assignment that may change what runs makes the command unknown: nothing covers it.

use super::command::{self, Opaque, Simple};
use super::names::{GIT_QUIET_OPTIONS, HARMLESS_VARIABLES, PRIVILEGED, SHELL_STATE, SHELLS};

/// How many scripts deep (`sh -c "sh -c '…'"`, `watch`, `flock -c`) the look goes.
const MAX_NESTING: usize = 4;

/// One command a line runs, looked through its wrappers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unit {
    /// A program run with these literal arguments.
    Runs(Invocation),
    /// What runs cannot be known from the words, or must be asked about each time.
    Unknown(Why),
}

/// A program and its literal arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// The command's name as written: a name looked up in `PATH`, or a path.
    pub program: String,
    /// Its arguments (for git, after the global options that change nothing it runs).
    pub args: Vec<String>,
}

impl Invocation {
    fn new(program: &str, args: &[String]) -> Self {
        Self {
            program: program.to_string(),
            args: args.to_vec(),
        }
    }
}

/// Why a command's effect cannot be known from its words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    /// The line (or a script in it) is not plain simple commands.
    Syntax(Opaque),
    /// Runs as another user (`sudo`, `doas`, …) or in another root or namespace.
    Privileged(String),
    /// Runs a command with arguments only known at run time (`xargs`, `parallel`).
    ArgumentsUnknown(String),
    /// A wrapper whose options or form are not understood.
    Wrapper(String),
    /// A shell builtin that changes how later commands run (`alias`, `eval`, `source`, …).
    ShellState(String),
    /// `NAME=value` for a variable that may change what runs (`PATH`, `LD_PRELOAD`, …).
    Assignment(String),
    /// A command name that is neither a plain name nor a path.
    Name(String),
    /// Scripts nested deeper than the look goes.
    TooDeep,
}

/// Every command `line` runs, looked through wrappers.
pub fn units(line: &str) -> Vec<Unit> {
    script(line, 0)
}

fn script(line: &str, depth: usize) -> Vec<Unit> {
    if depth > MAX_NESTING {
        return vec![Unit::Unknown(Why::TooDeep)];
    }
    match command::parse(line) {
        Ok(commands) => commands
            .into_iter()
            .flat_map(|simple| with_assignments(simple, depth))
            .collect(),
        Err(opaque) => vec![Unit::Unknown(Why::Syntax(opaque))],
    }
}

fn with_assignments(simple: Simple, depth: usize) -> Vec<Unit> {
    if let Some((name, _)) = (simple.assignments.iter()).find(|(name, _)| !harmless(name)) {
        return vec![Unit::Unknown(Why::Assignment(name.clone()))];
    }
    through(&simple.words, depth)
}

/// Variables known to change no program's choice of code: locale, time zone, colour,
/// terminal size, log levels. Any other (`PATH`, `LD_*`, `GIT_*`, `PAGER`, `HOME`, …) may.
pub fn harmless(name: &str) -> bool {
    HARMLESS_VARIABLES.contains(&name)
        || name
            .strip_prefix("LC_")
            .is_some_and(|rest| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_uppercase()))
}

/// Options a wrapper takes: flags alone, and options that take a value.
struct Options {
    flags: &'static [&'static str],
    valued: &'static [&'static str],
}

/// Where a wrapper's options end (the index of its first operand); `None` for an option it
/// does not take.
fn after_options(args: &[String], options: &Options) -> Option<usize> {
    let mut at = 0;
    while let Some(arg) = args.get(at) {
        let arg = arg.as_str();
        if arg == "--" {
            return Some(at + 1);
        }
        if !arg.starts_with('-') || arg == "-" {
            return Some(at);
        }
        if options.flags.contains(&arg) {
            at += 1;
        } else if options.valued.contains(&arg) {
            at += 2;
        } else if let Some((name, _)) = arg.split_once('=')
            && name.starts_with("--")
            && options.valued.contains(&name)
        {
            at += 1;
        } else if !arg.starts_with("--")
            && arg
                .get(..2)
                .is_some_and(|short| options.valued.contains(&short))
        {
            // `-n5`: a short option with its value attached.
            at += 1;
        } else {
            return None;
        }
    }
    Some(at.min(args.len()))
}

/// A plain command name: what `PATH` lookup would find, no path, no expansion marker.
fn plain_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '+' | '-'))
}

/// What the command `words` runs, looked through wrappers.
fn through(words: &[String], depth: usize) -> Vec<Unit> {
    if depth > MAX_NESTING {
        return vec![Unit::Unknown(Why::TooDeep)];
    }
    let Some((program, args)) = words.split_first() else {
        return vec![Unit::Unknown(Why::Syntax(Opaque::Empty))];
    };
    let name = program.as_str();
    let unknown = |why: Why| vec![Unit::Unknown(why)];
    let wrapper = || unknown(Why::Wrapper(name.to_string()));
    // Looks through to the command at `args[at..]`, which must exist.
    let inner = |at: Option<usize>| match at {
        Some(at) if at < args.len() => through(&args[at..], depth + 1),
        _ => wrapper(),
    };
    // Looks through when a command follows, else the wrapper runs alone (`nice`, `env`).
    let inner_or_self = |at: Option<usize>| match at {
        Some(at) if at < args.len() => through(&args[at..], depth + 1),
        Some(_) => vec![Unit::Runs(Invocation::new(name, args))],
        None => wrapper(),
    };
    if program.contains('/') {
        return vec![Unit::Runs(Invocation::new(name, args))];
    }
    if !plain_name(name) && !SHELL_STATE.contains(&name) {
        return unknown(Why::Name(name.to_string()));
    }
    match name {
        _ if PRIVILEGED.contains(&name) => unknown(Why::Privileged(name.to_string())),
        _ if SHELL_STATE.contains(&name) => unknown(Why::ShellState(name.to_string())),
        "xargs" | "parallel" => unknown(Why::ArgumentsUnknown(name.to_string())),
        "timeout" => {
            let options = Options {
                flags: &["--preserve-status", "--foreground", "-v", "--verbose"],
                valued: &["-s", "--signal", "-k", "--kill-after"],
            };
            match after_options(args, &options) {
                Some(at) if args.get(at).is_some_and(|d| duration(d)) => inner(Some(at + 1)),
                _ => wrapper(),
            }
        }
        "nice" => {
            // `nice -10 cmd`: an adjustment written as an option.
            let at = match args.first() {
                Some(a) if a.strip_prefix('-').is_some_and(number) => Some(1),
                _ => after_options(
                    args,
                    &Options {
                        flags: &[],
                        valued: &["-n", "--adjustment"],
                    },
                ),
            };
            inner_or_self(at)
        }
        "ionice" => inner_or_self(after_options(
            args,
            &Options {
                flags: &["-t", "--ignore"],
                valued: &["-c", "--class", "-n", "--classdata"],
            },
        )),
        "command" => match args.first().map(String::as_str) {
            // `command -v x` only looks a name up.
            Some("-v" | "-V") => vec![Unit::Runs(Invocation::new(name, args))],
            _ => inner(after_options(
                args,
                &Options {
                    flags: &["-p"],
                    valued: &[],
                },
            )),
        },
        // `exec` alone changes the shell's descriptors; options are bash's only.
        "exec" | "nohup" => inner(after_options(
            args,
            &Options {
                flags: &[],
                valued: &[],
            },
        )),
        "time" => inner_or_self(after_options(
            args,
            &Options {
                flags: &["-p"],
                valued: &[],
            },
        )),
        "stdbuf" => inner(after_options(
            args,
            &Options {
                flags: &[],
                valued: &["-i", "-o", "-e", "--input", "--output", "--error"],
            },
        )),
        "setsid" => inner(after_options(
            args,
            &Options {
                flags: &["-c", "--ctty", "-f", "--fork", "-w", "--wait"],
                valued: &[],
            },
        )),
        "busybox" => inner(Some(0)),
        "chrt" => {
            let options = Options {
                flags: &[
                    "-b",
                    "--batch",
                    "-f",
                    "--fifo",
                    "-i",
                    "--idle",
                    "-o",
                    "--other",
                    "-r",
                    "--rr",
                    "-R",
                    "--reset-on-fork",
                    "-v",
                    "--verbose",
                ],
                valued: &[],
            };
            match after_options(args, &options) {
                Some(at) if args.get(at).is_some_and(|p| number(p)) => inner(Some(at + 1)),
                _ => wrapper(),
            }
        }
        "taskset" => {
            let options = Options {
                flags: &["-c", "--cpu-list"],
                valued: &[],
            };
            match after_options(args, &options) {
                Some(at) if args.get(at).is_some_and(|m| cpu_mask(m)) => inner(Some(at + 1)),
                _ => wrapper(),
            }
        }
        "env" => env(args, depth),
        "watch" => watch(args, depth),
        "flock" => flock(args, depth),
        "find" => find(args, depth),
        "git" => vec![Unit::Runs(git(args))],
        _ if SHELLS.contains(&name) => shell(name, args, depth),
        _ => vec![Unit::Runs(Invocation::new(name, args))],
    }
}

/// `timeout`'s duration: a number with an optional unit.
fn duration(text: &str) -> bool {
    let digits = text.trim_end_matches(['s', 'm', 'h', 'd']);
    text.len() - digits.len() <= 1
        && !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit() || b == b'.')
}

fn number(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

/// `taskset`'s mask or CPU list.
fn cpu_mask(text: &str) -> bool {
    !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_hexdigit() || matches!(b, b'x' | b',' | b'-' | b':'))
}

/// `env [-i] [-u NAME]… [NAME=VALUE]… [command…]`: assignments are judged like a command's.
fn env(args: &[String], depth: usize) -> Vec<Unit> {
    let options = Options {
        flags: &["-i", "--ignore-environment"],
        valued: &["-u", "--unset"],
    };
    let Some(mut at) = after_options(args, &options) else {
        return vec![Unit::Unknown(Why::Wrapper("env".to_string()))];
    };
    while let Some((name, _)) = args.get(at).and_then(|a| a.split_once('=')) {
        if !harmless(name) {
            return vec![Unit::Unknown(Why::Assignment(name.to_string()))];
        }
        at += 1;
    }
    if at < args.len() {
        through(&args[at..], depth + 1)
    } else {
        vec![Unit::Runs(Invocation::new("env", args))]
    }
}

/// `watch [options] command…`: the command's words joined run through `sh -c` (as argv
/// with `-x`).
fn watch(args: &[String], depth: usize) -> Vec<Unit> {
    let options = Options {
        flags: &[
            "-d",
            "--differences",
            "-t",
            "--no-title",
            "-b",
            "--beep",
            "-e",
            "--errexit",
            "-g",
            "--chgexit",
            "-c",
            "--color",
            "-C",
            "--no-color",
            "-p",
            "--precise",
            "-w",
            "--no-wrap",
            "-x",
            "--exec",
        ],
        valued: &["-n", "--interval", "--differences"],
    };
    match after_options(args, &options) {
        Some(at) if at < args.len() => {
            if args[..at].iter().any(|a| a == "-x" || a == "--exec") {
                through(&args[at..], depth + 1)
            } else {
                script(&args[at..].join(" "), depth + 1)
            }
        }
        _ => vec![Unit::Unknown(Why::Wrapper("watch".to_string()))],
    }
}

/// `flock [options] FILE command…` or `flock [options] FILE -c SCRIPT`.
fn flock(args: &[String], depth: usize) -> Vec<Unit> {
    let options = Options {
        flags: &[
            "-s",
            "--shared",
            "-x",
            "-e",
            "--exclusive",
            "-u",
            "--unlock",
            "-n",
            "--nb",
            "--nonblock",
            "-o",
            "--close",
            "--verbose",
            "-F",
            "--no-fork",
        ],
        valued: &["-E", "--conflict-exit-code", "-w", "--wait", "--timeout"],
    };
    let command = after_options(args, &options).and_then(|at| args.get(at + 1..));
    match command {
        Some([flag, text]) if flag == "-c" || flag == "--command" => script(text, depth + 1),
        Some(words) if !words.is_empty() && !words[0].starts_with('-') => through(words, depth + 1),
        _ => vec![Unit::Unknown(Why::Wrapper("flock".to_string()))],
    }
}

/// `find`: itself (without the commands it runs), then each `-exec`/`-execdir`/`-ok`/
/// `-okdir` command, which runs with file names for `{}`.
fn find(args: &[String], depth: usize) -> Vec<Unit> {
    let mut own = Vec::new();
    let mut run = Vec::new();
    let mut at = 0;
    while let Some(arg) = args.get(at) {
        at += 1;
        own.push(arg.clone());
        if !matches!(arg.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
            continue;
        }
        let rest = &args[at..];
        let end = (0..rest.len())
            .find(|&k| rest[k] == ";" || (rest[k] == "+" && k > 0 && rest[k - 1] == "{}"));
        let Some(end) = end else {
            return vec![Unit::Unknown(Why::Wrapper("find".to_string()))];
        };
        run.extend(through(&rest[..end], depth + 1));
        at += end + 1;
    }
    let mut units = vec![Unit::Runs(Invocation::new("find", &own))];
    units.extend(run);
    units
}

fn git(args: &[String]) -> Invocation {
    let skip = args
        .iter()
        .take_while(|a| GIT_QUIET_OPTIONS.contains(&a.as_str()))
        .count();
    Invocation::new("git", &args[skip..])
}

/// `sh -c SCRIPT` (with `-e`, `-u`, `-x`, `-l`, `-o OPTION`, `--norc`, …): the script's
/// commands. Without `-c` the shell runs a file or its input: itself, an interpreter.
fn shell(name: &str, args: &[String], depth: usize) -> Vec<Unit> {
    let mut at = 0;
    let mut command = false;
    while let Some(arg) = args.get(at) {
        match arg.as_str() {
            "--norc" | "--noprofile" | "--posix" => at += 1,
            "-o" | "+o" => at += 2,
            arg if arg.len() > 1
                && arg.starts_with('-')
                && arg[1..]
                    .chars()
                    .all(|c| matches!(c, 'c' | 'e' | 'u' | 'x' | 'l')) =>
            {
                command |= arg.contains('c');
                at += 1;
            }
            _ => break,
        }
    }
    if !command {
        return vec![Unit::Runs(Invocation::new(name, args))];
    }
    match args.get(at) {
        Some(text) => script(text, depth + 1),
        None => vec![Unit::Unknown(Why::Wrapper(name.to_string()))],
    }
}

#[cfg(test)]
mod tests;
