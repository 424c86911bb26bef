use super::*;

fn rules(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn a_rule_names_the_command_that_runs_by_whole_words() {
    let allow = rules(&["git status", "git diff", "cargo test", "ls"]);
    let p = |c: &str| policy(c, &allow, &[]);
    for line in [
        "git status",
        "git  status  --short",
        "cargo test --test mcp",
        "git 'status'",
        "timeout 60 git status",
        "nice -n 5 ls -la",
        "git --no-pager diff",
        "ls >/dev/null 2>&1",
        "ls && git status",
        "ls | ls",
        "sh -c 'git status'",
        "LANG=C ls",
    ] {
        assert_eq!(p(line), Some(Policy::Allow), "{line}");
    }
    for line in [
        "git statusx",
        "git",
        "git push",
        "sudo ls",
        "doas ls",
        "/bin/ls",
        "./ls",
        "ls; rm x",
        "ls && rm x",
        "ls | sh",
        "env LD_PRELOAD=x ls",
        "LD_PRELOAD=x ls",
        "PATH=/tmp ls",
        "ls $(rm x)",
        "ls `rm x`",
        "ls *",
        "ls > ~/.bashrc",
        "ls &",
        "xargs ls",
        "git -c core.fsmonitor='rm -rf v' status",
        "git status\nrm -rf x",
        "git status 'unterminated",
        "sh -c 'ls; rm x'",
        "find . -exec ls {} \\;",
    ] {
        assert_eq!(p(line), None, "{line}");
    }
}

#[test]
fn a_rule_never_covers_code_in_arguments() {
    let allow = rules(&["python3", "git", "sed", "awk", "find"]);
    let p = |c: &str| policy(c, &allow, &[]);
    assert_eq!(p("python3 script.py"), Some(Policy::Allow));
    assert_eq!(p("python3 -c 'import os'"), None);
    assert_eq!(p("git log"), Some(Policy::Allow));
    assert_eq!(p("git -c alias.x='!rm -rf v' x"), None);
    assert_eq!(p("git x"), None, "an alias may run anything");
    assert_eq!(p("sed -n 1p f"), Some(Policy::Allow));
    assert_eq!(p("sed 's/a/b/e' f"), None);
    assert_eq!(p("awk '{print $1}' f"), Some(Policy::Allow));
    assert_eq!(p("awk 'BEGIN{system(\"rm -rf v\")}'"), None);
    assert_eq!(
        p("find . -delete"),
        Some(Policy::Allow),
        "a rule written on purpose"
    );
    assert_eq!(p("find . -exec rm {} \\;"), None, "rm is not allowed");
    let allow = rules(&["find", "grep"]);
    assert_eq!(
        policy("find . -exec grep -l x {} +", &allow, &[]),
        Some(Policy::Allow)
    );
}

#[test]
fn an_ask_rule_that_names_any_command_of_the_line_wins() {
    let allow = rules(&["git", "ls"]);
    let ask = rules(&["git push"]);
    let p = |c: &str| policy(c, &allow, &ask);
    assert_eq!(p("git log"), Some(Policy::Allow));
    assert_eq!(p("git push origin"), Some(Policy::Ask));
    assert_eq!(p("ls && git push"), Some(Policy::Ask));
    assert_eq!(p("timeout 5 git push"), Some(Policy::Ask));
    assert_eq!(p("sh -c 'git push'"), Some(Policy::Ask));
    assert_eq!(p("git --no-pager push"), Some(Policy::Ask));
}

#[test]
fn rules_and_grants_cover_a_line_together() {
    let allow = rules(&["head"]);
    let grants = [
        crate::tools::builtin::shell::grants::suggest("cargo test").unwrap(),
        crate::tools::builtin::shell::grants::suggest("wc -l").unwrap(),
    ];
    assert_eq!(
        judge("cargo test 2>&1 | head -5", &allow, &[], &grants),
        Verdict::Allowed { grants: vec![0] }
    );
    assert_eq!(
        judge("cargo test | wc -l && cargo test", &[], &[], &grants),
        Verdict::Allowed { grants: vec![0, 1] }
    );
    assert_eq!(
        judge("cargo test | tail", &allow, &[], &grants),
        Verdict::Uncovered
    );
    let ask = rules(&["cargo test"]);
    assert_eq!(judge("cargo test", &allow, &ask, &grants), Verdict::Ask);
}

#[test]
fn a_rule_that_is_not_plain_words_matches_nothing() {
    for rule in ["ls *", "ls; rm", "$(ls)", "A=1 ls", ""] {
        assert_eq!(policy("ls", &rules(&[rule]), &[]), None, "{rule:?}");
    }
}
