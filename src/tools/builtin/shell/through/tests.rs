use super::*;

fn runs(program: &str, args: &[&str]) -> Unit {
    Unit::Runs(Invocation {
        program: program.to_string(),
        args: args.iter().map(|s| s.to_string()).collect(),
    })
}

#[test]
fn wrappers_are_looked_through_to_the_command_they_run() {
    for (line, want) in [
        ("timeout 60 ls -la", runs("ls", &["-la"])),
        ("timeout --signal=KILL -k 5 10s ls", runs("ls", &[])),
        ("nice -n 5 ionice -c3 ls", runs("ls", &[])),
        ("env -i -u A LANG=C ls", runs("ls", &[])),
        ("command -p ls", runs("ls", &[])),
        ("exec ls", runs("ls", &[])),
        ("time -p ls", runs("ls", &[])),
        ("nohup -- ls", runs("ls", &[])),
        ("stdbuf -i0 -oL ls", runs("ls", &[])),
        ("chrt -f 10 ls", runs("ls", &[])),
        ("taskset 0x3 ls", runs("ls", &[])),
        ("setsid -w ls", runs("ls", &[])),
        ("flock -n /tmp/l ls", runs("ls", &[])),
        ("watch -d -n 2 'ls -la'", runs("ls", &["-la"])),
        ("sh -ec 'ls -la'", runs("ls", &["-la"])),
        ("bash -o pipefail -c ls", runs("ls", &[])),
        ("git --no-pager -P log", runs("git", &["log"])),
        ("git -c a=b log", runs("git", &["-c", "a=b", "log"])),
        ("nice", runs("nice", &[])),
        ("env", runs("env", &[])),
        ("command -v ls", runs("command", &["-v", "ls"])),
        ("/usr/bin/env ls", runs("/usr/bin/env", &["ls"])),
    ] {
        assert_eq!(units(line), [want], "{line}");
    }
}

#[test]
fn find_runs_itself_and_each_exec_command() {
    assert_eq!(
        units("find . -name x -exec grep -l y {} + -execdir rm {} \\; -print"),
        [
            runs("find", &[".", "-name", "x", "-exec", "-execdir", "-print"]),
            runs("grep", &["-l", "y", "{}"]),
            runs("rm", &["{}"]),
        ]
    );
    assert_eq!(
        units("find . -exec sh -c 'rm \"$1\"' _ {} \\;")[1],
        Unit::Unknown(Why::Syntax(Opaque::Word("\"$1\"".into())))
    );
}

#[test]
fn what_cannot_be_known_says_why() {
    let why = |line: &str| match units(line).as_slice() {
        [Unit::Unknown(why)] => why.clone(),
        other => panic!("{line}: {other:?}"),
    };
    assert_eq!(why("sudo ls"), Why::Privileged("sudo".into()));
    assert_eq!(why("timeout 5 doas ls"), Why::Privileged("doas".into()));
    assert_eq!(why("xargs rm"), Why::ArgumentsUnknown("xargs".into()));
    assert_eq!(why("timeout ls"), Why::Wrapper("timeout".into()));
    assert_eq!(why("timeout 5"), Why::Wrapper("timeout".into()));
    assert_eq!(why("ionice -p 1"), Why::Wrapper("ionice".into()));
    assert_eq!(why("exec -a x ls"), Why::Wrapper("exec".into()));
    assert_eq!(why("env -S 'rm x' ls"), Why::Wrapper("env".into()));
    assert_eq!(why("env PATH=/tmp ls"), Why::Assignment("PATH".into()));
    assert_eq!(why("LD_PRELOAD=x ls"), Why::Assignment("LD_PRELOAD".into()));
    assert_eq!(why("alias x=y"), Why::ShellState("alias".into()));
    assert_eq!(why(". ./env.sh"), Why::ShellState(".".into()));
    assert_eq!(why("eval ls"), Why::ShellState("eval".into()));
    assert_eq!(why("'=ls'"), Why::Name("=ls".into()));
    assert_eq!(why("sh -c"), Why::Wrapper("sh".into()));
    assert_eq!(why("flock 9"), Why::Wrapper("flock".into()));
    let deep = (0..6).fold("ls".to_string(), |s, _| format!("nice {s}"));
    assert_eq!(why(&deep), Why::TooDeep);
    assert!(matches!(why("ls $x"), Why::Syntax(_)));
}

#[test]
fn harmless_variables_change_no_program() {
    for name in [
        "LANG",
        "LC_ALL",
        "LC_MESSAGES",
        "TZ",
        "NO_COLOR",
        "RUST_LOG",
    ] {
        assert!(harmless(name), "{name}");
    }
    for name in [
        "PATH",
        "LD_PRELOAD",
        "LD_LIBRARY_PATH",
        "GIT_PAGER",
        "GIT_EXTERNAL_DIFF",
        "PAGER",
        "EDITOR",
        "HOME",
        "BASH_ENV",
        "ENV",
        "IFS",
        "PYTHONPATH",
        "NODE_OPTIONS",
        "LC_",
        "LC_x",
        "RUSTC_WRAPPER",
        "SHELL",
        "GIT_CONFIG_PARAMETERS",
    ] {
        assert!(!harmless(name), "{name}");
    }
}
