//! The grant each command line may produce (the table of issue 26), which later commands a
//! grant covers and which it never does.

use super::*;
use crate::tools::builtin::shell::rules::{Verdict, judge};

fn lit(program: &str, subcommand: &[&str]) -> Option<ShellGrant> {
    Some(ShellGrant {
        program: program.to_string(),
        subcommand: subcommand.iter().map(|s| s.to_string()).collect(),
        args: ArgShape::Literal,
    })
}

fn exact(program: &str, args: &[&str]) -> Option<ShellGrant> {
    Some(ShellGrant {
        program: program.to_string(),
        subcommand: Vec::new(),
        args: ArgShape::Exact(args.iter().map(|s| s.to_string()).collect()),
    })
}

/// Whether `grant` alone lets `line` run without asking.
fn covered(grant: &ShellGrant, line: &str) -> bool {
    judge(line, &[], &[], std::slice::from_ref(grant)) == Verdict::Allowed { grants: vec![0] }
}

/// Every command line of the table and the grant `p` may give for it.
fn table() -> Vec<(String, Option<ShellGrant>)> {
    let deep_sh = (0..6).fold("ls".to_string(), |inner, _| {
        format!("sh -c '{}'", inner.replace('\'', "'\\''"))
    });
    let three_sh = (0..3).fold("ls".to_string(), |inner, _| {
        format!("sh -c '{}'", inner.replace('\'', "'\\''"))
    });
    let rows: Vec<(&str, Option<ShellGrant>)> = vec![
        // Wrappers are looked through to what they run.
        ("timeout 60 ls", lit("ls", &[])),
        ("timeout -s KILL 5 ls -la", lit("ls", &[])),
        ("timeout --kill-after=2 1.5m ls", lit("ls", &[])),
        ("timeout 60 rm -rf victim", None),
        ("timeout 60", None),
        ("nice ls", lit("ls", &[])),
        ("nice -n 10 git log", lit("git", &["log"])),
        ("nice -10 cat notes.txt", lit("cat", &[])),
        ("nice rm x", None),
        ("ionice -c 3 grep foo src", lit("grep", &[])),
        ("ionice -p 1 ls", None),
        ("env ls", lit("ls", &[])),
        ("env -i ls", lit("ls", &[])),
        ("env -u HOME ls", lit("ls", &[])),
        ("env LANG=C sort names", lit("sort", &[])),
        ("env LD_PRELOAD=/tmp/x.so ls", None),
        ("env -S 'rm -rf v' ls", None),
        ("env", None),
        ("command ls", lit("ls", &[])),
        ("command -v git", None),
        ("exec ls", lit("ls", &[])),
        ("time cargo test", lit("cargo", &["test"])),
        ("nohup cargo build", lit("cargo", &["build"])),
        ("stdbuf -oL grep x log.txt", lit("grep", &[])),
        ("setsid ls", lit("ls", &[])),
        ("chrt -b 0 ls", lit("ls", &[])),
        ("taskset -c 0 ls", lit("ls", &[])),
        ("watch -n 1 ls -la", lit("ls", &[])),
        ("watch 'ls; rm -rf v'", None),
        ("watch -x ls -la", lit("ls", &[])),
        ("flock /tmp/lock cargo test", lit("cargo", &["test"])),
        (
            "flock -w 5 /tmp/lock -c 'git status'",
            lit("git", &["status"]),
        ),
        ("flock /tmp/lock -c 'rm -rf v'", None),
        ("timeout 5 nice env ls", lit("ls", &[])),
        ("nice timeout 5 nice rm -rf v", None),
        ("xargs grep foo", None),
        ("ls | xargs rm", None),
        ("parallel rm ::: a b", None),
        ("busybox ls", lit("ls", &[])),
        ("busybox rm -rf v", None),
        // Privilege is never granted, through any wrapper.
        ("sudo ls", None),
        ("doas cat /etc/shadow", None),
        ("su -c ls", None),
        ("pkexec ls", None),
        ("timeout 5 sudo ls", None),
        ("nsenter -t 1 ls", None),
        // Shells with a script: the script is parsed, to a depth.
        ("sh -c 'git status'", lit("git", &["status"])),
        ("bash -lc \"cargo test --lib\"", lit("cargo", &["test"])),
        ("zsh -c ls", lit("ls", &[])),
        ("sh -c 'ls; rm -rf v'", None),
        ("bash -c 'ls $HOME'", None),
        ("sh script.sh", None),
        ("sh", None),
        (three_sh.as_str(), lit("ls", &[])),
        (deep_sh.as_str(), None),
        ("fish -c ls", None),
        // find: its own actions and the commands it runs.
        ("find . -name '*.rs'", lit("find", &[])),
        ("find . -exec rm {} \\;", None),
        ("find . -exec ls {} +", None),
        ("find . -delete", None),
        ("find . -fprint out.txt", None),
        ("find . -name x >/dev/null -delete", None),
        ("find . -exec", None),
        // Interpreters with inline code, and interpreters at all.
        ("python3 -c 'print(1)'", None),
        ("python3 -Bc 'import os'", None),
        ("python3 script.py", None),
        ("python3.12 -c x", None),
        ("node -e 'require(\"fs\")'", None),
        ("node --eval=x", None),
        ("perl -e 'unlink \"v\"'", None),
        ("perl -lne 'print' f", None),
        ("ruby -e 'x'", None),
        ("php -r 'x'", None),
        ("lua -e 'x'", None),
        ("deno eval 'x'", None),
        ("awk '{print $1}' f", None),
        ("awk 'BEGIN{system(\"rm -rf v\")}'", None),
        ("sed -n 1,5p f", None),
        ("sed 's/a/b/e' f", None),
        // Paths to binaries.
        ("/bin/rm -rf v", None),
        ("/bin/ls", None),
        ("./x", None),
        ("bin/x", None),
        ("../x --flag", None),
        ("timeout 5 ./x", None),
        // Git: subcommands, global options, aliases.
        ("git status", lit("git", &["status"])),
        ("git --no-pager log --oneline", lit("git", &["log"])),
        ("git -P diff HEAD~1", lit("git", &["diff"])),
        ("git log HEAD^", lit("git", &["log"])),
        ("git -c alias.x='!rm -rf v' x", None),
        ("git -c core.pager=cat log", None),
        ("git --config-env=core.pager=P log", None),
        ("git --exec-path=/tmp log", None),
        ("git -C /tmp log", None),
        ("git --git-dir=/tmp/x log", None),
        ("git x", None),
        ("git lfs pull", None),
        ("git config alias.x '!rm -rf v'", None),
        ("git clean -fdx", None),
        ("git push --force", None),
        ("git rebase -x 'rm -rf v' main", None),
        ("git grep -O'rm -rf v' x", None),
        ("git fetch --upload-pack='rm -rf v' origin", None),
        ("git bisect run rm -rf v", None),
        ("git", None),
        // Quoting of every kind, newlines, comments.
        ("'ls' -la", lit("ls", &[])),
        ("\"git\" 'log'", lit("git", &["log"])),
        ("l\\s", lit("ls", &[])),
        ("l''s", lit("ls", &[])),
        ("git log --format='%h %s'", lit("git", &["log"])),
        ("echo \"a\\\"b\"", lit("echo", &[])),
        ("git log \\\n  --oneline", lit("git", &["log"])),
        ("ls # list", lit("ls", &[])),
        ("ls\nls -la", lit("ls", &[])),
        ("ls; ls -la && ls src || ls | ls", lit("ls", &[])),
        ("ls | head", None),
        ("ls # x \\\nrm -rf v", None),
        ("ls >/dev/null 2>&1", lit("ls", &[])),
        ("ls 2>/dev/null >&2", lit("ls", &[])),
        ("ls > out.txt", None),
        ("ls 2>/tmp/x", None),
        ("ls >&out", None),
        ("ls &>/dev/null", None),
        ("cat <<EOF\nhi\nEOF", None),
        ("cat <<< hi", None),
        ("ls $(rm -rf v)", None),
        ("ls `rm -rf v`", None),
        ("ls \"$(rm -rf v)\"", None),
        ("echo \"$HOME\"", None),
        ("ls ${HOME}", None),
        ("ls $'\\x41'", None),
        ("ls *.rs", None),
        ("ls ?", None),
        ("ls [ab]", None),
        ("ls ~", None),
        ("ls ~/x", None),
        ("echo {a,b}", None),
        ("echo {1..3}", None),
        ("ls <(rm -rf v)", None),
        // Assignments before a command.
        ("LANG=C ls", lit("ls", &[])),
        ("FOO=1 ls", None),
        ("PATH=/tmp ls", None),
        ("GIT_PAGER='rm -rf v' git log", None),
        ("LD_PRELOAD=x.so ls", None),
        ("X=1", None),
        // Compound commands and shell state.
        ("ls &", None),
        ("ls & rm -rf v", None),
        ("ls |& cat", None),
        ("(ls)", None),
        ("{ ls; }", None),
        ("ls && (rm -rf v)", None),
        ("f() { ls; }; f", None),
        ("if true; then ls; fi", None),
        ("! ls", None),
        ("alias ls='rm -rf v'\nls", None),
        ("eval ls", None),
        (". ./x", None),
        ("ls\r\nrm -rf v", None),
        ("ls\u{a0}-la", None),
        ("", None),
        ("   ", None),
        // Programs this list knows, and those it does not.
        ("ls -la", lit("ls", &[])),
        ("cargo test --lib shell::", lit("cargo", &["test"])),
        ("cargo --version", None),
        ("cargo test --config 'target.x.runner=\"rm\"'", None),
        ("npm run build", lit("npm", &["run", "build"])),
        ("npm install", lit("npm", &["install"])),
        ("make test", lit("make", &["test"])),
        ("make CC=evil test", None),
        ("rg --pre 'rm -rf v' x", None),
        ("rg -n TODO src", lit("rg", &[])),
        ("pytest -x tests", exact("pytest", &["-x", "tests"])),
        ("uv run pytest -x", exact("uv", &["run", "pytest", "-x"])),
        ("go test -exec 'rm -rf v' ./...", None),
        ("go test ./...", lit("go", &["test"])),
        ("strace -f ls", exact("strace", &["-f", "ls"])),
        ("touch notes.txt", exact("touch", &["notes.txt"])),
        ("\\rm -rf v", None),
        ("r''m -rf v", None),
        ("command rm -rf v", None),
        ("builtin ls", None),
        ("exec 3>/dev/null", None),
        ("ls\u{200b}", None),
        ("'' ls", None),
        ("ls -la #; rm -rf v", lit("ls", &[])),
        ("rm -rf target", None),
        ("dd if=/dev/zero of=x", None),
        ("chmod +x x", None),
        ("curl https://example.com", None),
    ];
    rows.into_iter().map(|(l, g)| (l.to_string(), g)).collect()
}

#[test]
fn each_command_of_the_table_gets_the_grant_it_may() {
    let table = table();
    assert!(table.len() >= 60, "{} rows", table.len());
    let wrong: Vec<String> = table
        .iter()
        .filter(|(line, grant)| suggest(line) != *grant)
        .map(|(line, grant)| format!("{line:?}: wanted {grant:?}, got {:?}", suggest(line)))
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_grant_covers_the_line_it_was_given_for() {
    for (line, grant) in table() {
        if let Some(grant) = grant {
            assert!(covered(&grant, &line), "{line:?} not covered by {grant:?}");
        }
    }
}

/// (the line `p` was pressed on, lines its grant covers, lines it never covers)
fn coverage() -> Vec<(&'static str, Vec<&'static str>, Vec<&'static str>)> {
    vec![
        (
            "timeout 60 ls",
            vec![
                "ls",
                "ls -la",
                "timeout 5 ls src",
                "nice ls",
                "ls >/dev/null",
                "ls; ls -la",
                "sh -c 'ls -la'",
            ],
            vec![
                "timeout 60 rm -rf victim",
                "timeout 60 ls; rm x",
                "ls *",
                "/bin/ls",
                "sudo ls",
                "env LD_PRELOAD=x ls",
                "ls $(rm x)",
                "ls | xargs rm",
                "cat x",
                "timeout 60",
                "ls > x",
                "ls # x \\\nrm -rf v",
            ],
        ),
        (
            "nice -n 5 git log",
            vec!["git log -p", "git --no-pager log", "git log --oneline -n 3"],
            vec![
                "git push",
                "git -c alias.x='!rm -rf v' x",
                "git -c core.pager=x log",
                "nice rm x",
                "git log; git push",
                "GIT_PAGER=x git log",
            ],
        ),
        (
            "git --no-pager log",
            vec!["git log"],
            vec!["git x", "git --exec-path=/tmp log", "git -C .. log"],
        ),
        (
            "pytest -x tests",
            vec![
                "pytest -x tests",
                "timeout 5 pytest -x tests",
                "'pytest' -x \"tests\"",
            ],
            vec!["pytest -x tests/other", "pytest", "pytest -x tests --pdb"],
        ),
        (
            "find . -name x",
            vec!["find src -type f", "find . -name '*.rs' 2>/dev/null"],
            vec![
                "find . -delete",
                "find . -exec rm {} \\;",
                "find . -fprint x",
            ],
        ),
        (
            "npm run build",
            vec!["npm run build -- --watch"],
            vec![
                "npm run deploy",
                "npm install",
                "npm run build --script-shell=x",
            ],
        ),
        (
            "cargo test",
            vec!["cargo test --lib shell::", "RUST_BACKTRACE=1 cargo test"],
            vec![
                "cargo test --config x=y",
                "cargo run",
                "cargo +nightly test",
            ],
        ),
        (
            "uv run pytest",
            vec!["uv run pytest"],
            vec!["uv run rm -rf v", "uv run pytest -x", "uv sync"],
        ),
    ]
}

#[test]
fn a_grant_covers_its_kind_of_command_and_never_more() {
    for (given, covers, never) in coverage() {
        let grant = suggest(given).unwrap_or_else(|| panic!("no grant for {given:?}"));
        for line in covers {
            assert!(
                covered(&grant, line),
                "{given:?}'s {grant:?} should cover {line:?}"
            );
        }
        for line in never {
            assert!(
                !covered(&grant, line),
                "{given:?}'s {grant:?} covered {line:?}"
            );
        }
    }
}

#[test]
fn the_hint_says_exactly_what_the_grant_allows() {
    let hint = |line: &str| suggest(line).map(|g| g.hint());
    assert_eq!(
        hint("git --no-pager log --oneline").as_deref(),
        Some("allows `git log …`, not other git commands")
    );
    assert_eq!(hint("timeout 60 ls").as_deref(), Some("allows `ls …`"));
    assert_eq!(
        hint("pytest -x 'my tests'").as_deref(),
        Some("allows exactly `pytest -x 'my tests'`")
    );
    assert_eq!(
        hint("npm run build").as_deref(),
        Some("allows `npm run build …`, not other npm commands")
    );
    assert_eq!(
        suggest("git log").map(|g| g.short_hint()).as_deref(),
        Some("allows `git log …`")
    );
    // Long exact words are cut to keep the key line short.
    let long = format!("pytest {}", "x".repeat(200));
    let text = hint(&long).unwrap_or_default();
    assert!(text.chars().count() < 60, "{text}");
}

#[test]
fn a_grant_is_stored_typed_and_an_old_string_covers_nothing() {
    let grant = suggest("git log").unwrap_or_else(|| panic!("no grant"));
    let json = serde_json::to_value(&grant).unwrap();
    assert_eq!(
        json,
        serde_json::json!({"program": "git", "subcommand": ["log"], "args": "literal"})
    );
    assert_eq!(serde_json::from_value::<ShellGrant>(json).unwrap(), grant);
    let exact = suggest("pytest -x").unwrap_or_else(|| panic!("no grant"));
    let back: ShellGrant = serde_json::from_str(&serde_json::to_string(&exact).unwrap()).unwrap();
    assert_eq!(back, exact);
    // Session files before typed grants: `"prefix": "timeout 60"`.
    let old: ShellGrant = serde_json::from_str("\"timeout 60\"").unwrap();
    assert_eq!(old.args, ArgShape::Legacy);
    assert_eq!(old.name(), "timeout 60");
    for line in ["timeout 60 rm -rf v", "timeout 60 ls"] {
        assert!(!covered(&old, line), "{line}");
    }
    let old: ShellGrant = serde_json::from_str("\"ls\"").unwrap();
    assert!(
        !covered(&old, "ls"),
        "an old grant covers nothing, even what it named"
    );
}

#[test]
fn huge_or_pathological_lines_are_not_grantable_and_judged_quickly() {
    let lines = [
        format!("ls {}", "a ".repeat(20_000)),
        "(".repeat(5_000),
        format!("{}ls{}", "(".repeat(3_000), ")".repeat(3_000)),
        format!("echo {}", "\"$(echo ".repeat(1_000)),
        format!("{}ls", "ls && ".repeat(1_000)),
        format!("{}ls", "ls | ".repeat(2_000)),
        "cat <<A ".repeat(2_000),
        format!("sh -c {}", "'sh -c ".repeat(500)),
        "{ ".repeat(5_000),
        format!("ls {}", "\\\n".repeat(9_000)),
    ];
    for line in &lines {
        let start = std::time::Instant::now();
        assert_eq!(suggest(line), None, "{}…", &line[..20]);
        let took = start.elapsed();
        assert!(
            took < std::time::Duration::from_secs(2),
            "{}… took {took:?}",
            &line[..20]
        );
    }
    // Long but plain: one literal word of 14,000 bytes, still judged.
    let long = format!("ls {}", "'a'\"b\"".repeat(2_000));
    assert_eq!(suggest(&long), lit("ls", &[]));
}
