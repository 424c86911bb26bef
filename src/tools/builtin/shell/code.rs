//! Arguments that are code: `python -c`, `node -e`, `perl -e`, `ruby -e`, `php -r`, an awk
//! program that runs commands or writes files (`system()`, `|`, `>`), a sed script with GNU
//! sed's `e` or `w`. A command carrying such code runs whatever the code says, which its words
//! do not name: no rule or grant covers it.

use super::names::INTERPRETERS;

/// Whether `program` is an interpreter (`python3.12` counts as `python3`).
pub fn interpreter(program: &str) -> bool {
    INTERPRETERS.contains(&program)
        || ["python", "pypy", "ruby", "perl", "php", "lua"]
            .iter()
            .any(|family| {
                program.strip_prefix(family).is_some_and(|v| {
                    !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit() || b == b'.')
                })
            })
}

/// What code `args` give `program` inline, if any (a short description).
pub fn inline(program: &str, args: &[String]) -> Option<&'static str> {
    let family = ["python", "pypy", "ruby", "perl", "php", "lua"]
        .into_iter()
        .find(|f| program.starts_with(f))
        .unwrap_or(program);
    match family {
        "python" | "pypy" | "ipython" => clusters(args, "c", "WXQ", "m").then_some("python -c"),
        "perl" => clusters(args, "eEMmd", "IiFxDC", "").then_some("perl -e"),
        "ruby" | "irb" => clusters(args, "e", "IrCEFixWKT", "").then_some("ruby -e"),
        "lua" | "luajit" => clusters(args, "e", "l", "").then_some("lua -e"),
        "node" | "nodejs" | "bun" => {
            let eval = |a: &String| {
                ["--eval", "--print"]
                    .iter()
                    .any(|o| a == o || a.starts_with(&format!("{o}=")))
            };
            (args.iter().any(eval) || clusters(args, "ep", "r", "")).then_some("node -e")
        }
        "deno" => (args.first().is_some_and(|a| a == "eval")).then_some("deno eval"),
        "php" => {
            let long = |a: &String| {
                [
                    "--run",
                    "--process-begin",
                    "--process-code",
                    "--process-end",
                ]
                .iter()
                .any(|o| a.starts_with(o))
            };
            (args.iter().any(long) || clusters(args, "rBRE", "cdfz", "")).then_some("php -r")
        }
        "Rscript" | "R" | "julia" | "osascript" | "expect" => (args.iter())
            .any(|a| a.starts_with("-e") || a.starts_with("-E") || a.starts_with("--eval"))
            .then_some("-e"),
        "pwsh" | "powershell" | "fish" | "csh" | "tcsh" | "nu" | "xonsh" | "elvish" | "tclsh"
        | "wish" => (args.iter().any(|a| a.starts_with('-'))).then_some("a shell's options"),
        "vim" | "vi" | "nvim" | "ex" | "ed" | "emacs" | "gdb" | "jshell" => args
            .iter()
            .any(|a| a.starts_with('-') || a.starts_with('+'))
            .then_some("an editor's commands"),
        "awk" | "gawk" | "mawk" | "nawk" => awk(args),
        "sed" | "gsed" => sed(args),
        _ => None,
    }
}

/// Single-letter option clusters (`-Bc`, `-lne`) anywhere in `args`: whether one holds a
/// letter of `code`. A letter of `valued` takes the rest of its cluster as its value; a letter
/// of `stop` hands every later argument to something else (`python -m`). Arguments that are
/// not clusters are passed over rather than taken as the end of the options: a value taken
/// for an operand must not hide the code after it (`python --check-hash-based-pycs always
/// -c …`), and a script's own `-c` read as code only asks once more.
fn clusters(args: &[String], code: &str, valued: &str, stop: &str) -> bool {
    for arg in args {
        if !arg.starts_with('-') || arg.starts_with("--") {
            continue;
        }
        for c in arg.chars().skip(1) {
            if code.contains(c) {
                return true;
            }
            if stop.contains(c) {
                return false;
            }
            if valued.contains(c) {
                break;
            }
        }
    }
    false
}

/// An awk program that runs commands, writes files or loads code (`system`, `|`, `>`,
/// gawk's `@load`); gawk's options that load code (`-E`, `-l`, `-i`).
fn awk(args: &[String]) -> Option<&'static str> {
    let runs = |program: &str| program.contains("system") || program.contains(['|', '>', '@']);
    let mut at = 0;
    let mut from_file = false;
    while let Some(arg) = args.get(at) {
        at += 1;
        match arg.as_str() {
            "--" => break,
            "-F" | "-v" | "--field-separator" | "--assign" => at += 1,
            "-f" | "--file" => {
                from_file = true;
                at += 1;
            }
            "-e" | "--source" => {
                if args.get(at).is_some_and(|p| runs(p)) {
                    return Some("an awk program that runs commands");
                }
                from_file = true;
                at += 1;
            }
            a if a.starts_with("-F") || a.starts_with("-v") => {}
            a if a.starts_with('-') && a.len() > 1 => return Some("an awk option"),
            _ => {
                at -= 1;
                break;
            }
        }
    }
    let program = if from_file { None } else { args.get(at) };
    program
        .is_some_and(|p| runs(p))
        .then_some("an awk program that runs commands")
}

/// A sed script with a command that runs or writes (`e`, `w`, `W`, `s///e`, `s///w`), or
/// one this reading does not understand.
fn sed(args: &[String]) -> Option<&'static str> {
    let mut scripts: Vec<&str> = Vec::new();
    let mut from_file = false;
    let mut at = 0;
    while let Some(arg) = args.get(at) {
        at += 1;
        if arg == "--" || !arg.starts_with('-') || arg == "-" {
            at -= 1;
            break;
        }
        if let Some(long) = arg.strip_prefix("--") {
            match long.split_once('=') {
                Some(("expression", s)) => scripts.push(s),
                Some(("file", _)) => from_file = true,
                Some(("in-place" | "line-length", _)) => {}
                None if long == "expression" => {
                    scripts.extend(args.get(at).map(String::as_str));
                    at += 1;
                }
                None if long == "file" => {
                    from_file = true;
                    at += 1;
                }
                None if matches!(long, "line-length") => at += 1,
                None if matches!(
                    long,
                    "quiet"
                        | "silent"
                        | "regexp-extended"
                        | "separate"
                        | "unbuffered"
                        | "null-data"
                        | "posix"
                        | "debug"
                        | "sandbox"
                        | "in-place"
                ) => {}
                _ => return Some("a sed option"),
            }
            continue;
        }
        let letters = &arg[1..];
        for (k, c) in letters.char_indices() {
            let rest = &letters[k + c.len_utf8()..];
            match c {
                'n' | 'E' | 'r' | 's' | 'u' | 'z' => continue,
                'e' | 'f' | 'l' => {
                    let value = if rest.is_empty() {
                        at += 1;
                        args.get(at - 1).map(String::as_str)
                    } else {
                        Some(rest)
                    };
                    match c {
                        'e' => scripts.extend(value),
                        'f' => from_file = true,
                        _ => {}
                    }
                }
                'i' => {}
                _ => return Some("a sed option"),
            }
            break;
        }
    }
    if scripts.is_empty() && !from_file {
        scripts.extend(args.get(at).map(String::as_str));
    }
    scripts
        .iter()
        .any(|s| !sed_script_is_plain(s))
        .then_some("a sed script that runs commands or writes files")
}

/// Whether a sed script only reads and prints: every command is known, none is `e`, `w`,
/// `W`, and no `s` has the `e` or `w` flag.
fn sed_script_is_plain(script: &str) -> bool {
    let chars: Vec<char> = script.chars().collect();
    let mut at = 0;
    let to_line_end = |at: &mut usize| {
        while *at < chars.len() && chars[*at] != '\n' {
            *at += 1;
        }
    };
    // Skips a delimited part (`/re/`), escapes included; false when unterminated.
    let delimited = |at: &mut usize, delim: char| {
        while *at < chars.len() {
            match chars[*at] {
                '\\' => *at += 2,
                '\n' => return false,
                c if c == delim => {
                    *at += 1;
                    return true;
                }
                _ => *at += 1,
            }
        }
        false
    };
    while at < chars.len() {
        let c = chars[at];
        if c.is_whitespace() || c == ';' {
            at += 1;
            continue;
        }
        // An address: a line number, `$`, a `/regex/` or `\cregexc`, a range, a step.
        if c.is_ascii_digit() || matches!(c, '$' | ',' | '~' | '+' | '!') {
            at += 1;
            continue;
        }
        if c == '/' || c == '\\' {
            let delim = if c == '\\' {
                at += 1;
                match chars.get(at) {
                    Some(&d) => d,
                    None => return false,
                }
            } else {
                '/'
            };
            at += 1;
            if !delimited(&mut at, delim) {
                return false;
            }
            while at < chars.len() && matches!(chars[at], 'I' | 'M') {
                at += 1;
            }
            continue;
        }
        at += 1;
        match c {
            '{' | '}' | '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x'
            | 'z' | 'F' | 'l' | 'L' | 'q' | 'Q' => {}
            '#' | ':' | 'b' | 't' | 'T' | 'r' | 'R' | 'v' => {
                // A label, a comment or a file read: to the end of the line (or `;` for
                // labels, as GNU sed reads them).
                while at < chars.len()
                    && chars[at] != '\n'
                    && !(c != '#' && c != 'r' && c != 'R' && chars[at] == ';')
                {
                    at += 1;
                }
            }
            'a' | 'i' | 'c' => {
                // Text to the end of the line, continued by a trailing backslash.
                loop {
                    to_line_end(&mut at);
                    if at > 0 && chars.get(at - 1) == Some(&'\\') && at < chars.len() {
                        at += 1;
                        continue;
                    }
                    break;
                }
            }
            's' | 'y' => {
                let Some(&delim) = chars.get(at) else {
                    return false;
                };
                if delim == '\n' || delim == '\\' {
                    return false;
                }
                at += 1;
                if !delimited(&mut at, delim) || !delimited(&mut at, delim) {
                    return false;
                }
                while let Some(&flag) = chars.get(at) {
                    match flag {
                        'e' | 'w' | 'W' => return false,
                        'g' | 'p' | 'i' | 'I' | 'm' | 'M' => at += 1,
                        d if d.is_ascii_digit() => at += 1,
                        _ => break,
                    }
                }
            }
            _ => return false,
        }
    }
    true
}
