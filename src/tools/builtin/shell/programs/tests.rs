use super::*;

fn inv(line: &[&str]) -> Invocation {
    Invocation {
        program: line[0].to_string(),
        args: line[1..].iter().map(|s| s.to_string()).collect(),
    }
}

#[test]
fn arguments_that_are_code_or_name_a_program_are_escapes() {
    for line in [
        &["python3", "-c", "x"][..],
        &["python3", "-W", "ignore", "-c", "x"],
        &["python3", "--check-hash-based-pycs", "always", "-c", "x"],
        &["python", "-Ic", "x"],
        &["node", "-e", "x"],
        &["node", "-pe", "x"],
        &["node", "--print=x"],
        &["bun", "--eval", "x"],
        &["deno", "eval", "x"],
        &["perl", "-e", "x"],
        &["perl", "-lne", "x"],
        &["perl", "-Mstrict", "x.pl"],
        &["ruby", "-e", "x"],
        &["ruby", "-rjson", "-e", "x"],
        &["php", "-r", "x"],
        &["php", "--run", "x"],
        &["lua", "-e", "x"],
        &["Rscript", "-e", "x"],
        &["pwsh", "-Command", "x"],
        &["fish", "-c", "x"],
        &["awk", "BEGIN{system(\"rm x\")}"],
        &["awk", "{print > \"/etc/x\"}"],
        &["awk", "{print | \"sh\"}"],
        &["gawk", "-e", "BEGIN{system(\"x\")}"],
        &["gawk", "-l", "ext"],
        &["awk", "-F:", "BEGIN{system(\"x\")}"],
        &["sed", "e rm x"],
        &["sed", "s/a/b/e", "f"],
        &["sed", "s/a/b/w /etc/x", "f"],
        &["sed", "-n", "-e", "p", "-e", "w x"],
        &["sed", "--expression=1e id"],
        &["sed", "-ne", "W x"],
        &["sed", "1!e id"],
        &["sed", "/x/e id"],
        &["vim", "-c", "!rm x"],
        &["git", "-c", "core.pager=x", "log"],
        &["git", "--exec-path=/tmp", "log"],
        &["git", "-C", "/tmp", "log"],
        &["git", "myalias"],
        &["git", "rebase", "--exec=rm x", "main"],
        &["git", "rebase", "-ix", "rm x", "main"],
        &["git", "grep", "--open-files-in-pager=rm", "x"],
        &["git", "clone", "-u", "rm x", "repo"],
        &["git", "submodule", "foreach", "rm x"],
        &["git", "difftool"],
        &["git", "send-email", "--sendmail-cmd=rm"],
        &["rg", "--pre=rm", "x"],
        &["fd", "-x", "rm"],
        &["fd", "--exec-batch", "rm"],
        &["sort", "--compress-program=rm", "f"],
        &["tar", "--to-command=rm", "-xf", "a.tar"],
        &["tar", "-xI", "rm", "-f", "a.tar"],
        &["tar", "xIf", "rm", "a.tar"],
        &["make", "SHELL=/tmp/x", "test"],
        &["make", "--eval=x"],
        &["cargo", "test", "--config", "target.x.runner='rm'"],
        &["npm", "test", "--script-shell=/tmp/x"],
        &["rsync", "-e", "rm", "a", "b"],
        &["ssh", "-oProxyCommand=rm x", "h"],
    ] {
        assert!(escape(&inv(line)).is_some(), "{line:?}");
    }
}

#[test]
fn plain_arguments_are_not_escapes() {
    for line in [
        &["python3", "-m", "pytest", "-c", "x.ini"][..],
        &["node", "app.js"],
        &["perl", "script.pl"],
        &["awk", "-F:", "{print $1}", "/etc/passwd"],
        &["awk", "-v", "x=1", "{print x}"],
        &["awk", "-f", "prog.awk", "f"],
        &["sed", "-n", "1,5p", "f"],
        &["sed", "-i", "s/a/b/g", "f"],
        &["sed", "-E", "-e", "s/(a)/\\1/", "f"],
        &["sed", "/^#/d; s/x/y/2", "f"],
        &["sed", ":a;N;$!ba;s/\\n/ /g", "f"],
        &["sed", "$a\\\nend", "f"],
        &["sed", "r other", "f"],
        &["git", "log", "-c"],
        &["git", "--version"],
        &["git", "status"],
        &["git", "log", "--exec-path"],
        &["rg", "-z", "x"],
        &["tar", "-czf", "a.tgz", "src"],
        &["make", "-j4", "test"],
        &["ls", "-la"],
    ] {
        assert_eq!(escape(&inv(line)), None, "{line:?}");
    }
}

#[test]
fn p_offers_only_what_was_seen() {
    let offer_of = |line: &[&str]| offer(&inv(line));
    assert_eq!(offer_of(&["/bin/ls"]), Err(NotOffered::Path));
    assert_eq!(offer_of(&["rm", "x"]), Err(NotOffered::Destructive));
    assert_eq!(offer_of(&["mkfs.ext4", "x"]), Err(NotOffered::Destructive));
    assert_eq!(offer_of(&["python3", "x.py"]), Err(NotOffered::Interpreter));
    assert_eq!(offer_of(&["bash", "x.sh"]), Err(NotOffered::Interpreter));
    assert_eq!(offer_of(&["find", ".", "-delete"]), Err(NotOffered::Acts));
    assert_eq!(
        offer_of(&["find", ".", "-fprintf", "x", "%p"]),
        Err(NotOffered::Acts)
    );
    assert_eq!(offer_of(&["git", "clean", "-f"]), Err(NotOffered::Acts));
    assert_eq!(offer_of(&["cargo"]), Err(NotOffered::NoSubcommand));
    assert_eq!(offer_of(&["npm", "run"]), Err(NotOffered::NoSubcommand));
    assert!(matches!(
        offer_of(&["git", "-c", "a=b", "log"]),
        Err(NotOffered::Escape(_))
    ));
    assert_eq!(
        offer_of(&["foo", "--bar"]).map(|g| g.args),
        Ok(ArgShape::Exact(vec!["--bar".into()]))
    );
}
