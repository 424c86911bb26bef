use super::*;

fn words(line: &str) -> Vec<Vec<String>> {
    parse(line)
        .unwrap_or_else(|e| panic!("{line:?}: {e}"))
        .into_iter()
        .map(|s| s.words)
        .collect()
}

fn w(list: &[&[&str]]) -> Vec<Vec<String>> {
    list.iter()
        .map(|c| c.iter().map(|s| s.to_string()).collect())
        .collect()
}

#[test]
fn a_line_is_its_simple_commands_with_quotes_removed() {
    assert_eq!(words("ls -la"), w(&[&["ls", "-la"]]));
    assert_eq!(
        words("git log --format='%h %s' \"a\\\"b\" c\\ d"),
        w(&[&["git", "log", "--format=%h %s", "a\"b", "c d"]])
    );
    assert_eq!(
        words("a && b || c; d | e\nf"),
        w(&[&["a"], &["b"], &["c"], &["d"], &["e"], &["f"]])
    );
    assert_eq!(words("l''s \"\" ''"), w(&[&["ls", "", ""]]));
    assert_eq!(
        words("git log \\\n --oneline"),
        w(&[&["git", "log", "--oneline"]])
    );
    assert_eq!(
        words("echo \"a\\b\""),
        w(&[&["echo", "a\\b"]]),
        "\\b stays in \"\""
    );
    assert_eq!(words("ls # a comment"), w(&[&["ls"]]));
    assert_eq!(words("echo a#b"), w(&[&["echo", "a#b"]]));
    assert_eq!(
        words("find . -exec rm {} \\;"),
        w(&[&["find", ".", "-exec", "rm", "{}", ";"]])
    );
    assert_eq!(
        words("git diff HEAD~1 HEAD^"),
        w(&[&["git", "diff", "HEAD~1", "HEAD^"]])
    );
}

#[test]
fn words_after_a_redirection_are_the_commands_arguments() {
    // The grammar files `b` under the redirection; sh gives it to echo.
    assert_eq!(words("echo a >/dev/null b"), w(&[&["echo", "a", "b"]]));
    assert_eq!(
        words("find . >/dev/null -delete"),
        w(&[&["find", ".", "-delete"]])
    );
    assert_eq!(
        words("a && b >/dev/null x | c"),
        w(&[&["a"], &["b", "x"], &["c"]])
    );
    assert_eq!(words("ls 2>&- x"), w(&[&["ls", "x"]]));
}

#[test]
fn assignments_are_kept_apart() {
    let simple = parse("LANG=C TZ=UTC ls").unwrap();
    assert_eq!(
        simple[0].assignments,
        [("LANG".into(), "C".into()), ("TZ".into(), "UTC".into())]
    );
    assert_eq!(simple[0].words, ["ls"]);
    assert!(parse("A=$x ls").is_err());
    assert!(parse("A=~/x ls").is_err());
    assert!(parse("A+=1 ls").is_err());
    assert!(
        parse("A=1").is_err(),
        "an assignment alone changes later commands"
    );
}

#[test]
fn only_redirections_to_dev_null_or_between_descriptors_are_plain() {
    for line in [
        "ls >/dev/null",
        "ls 2>/dev/null",
        "ls >>/dev/null",
        "ls </dev/null",
        "ls 2>&1",
        "ls >&2",
        "ls 2>&-",
    ] {
        assert!(parse(line).is_ok(), "{line}");
    }
    for line in [
        "ls > out",
        "ls >> out",
        "ls < /etc/passwd",
        "ls >&out",
        "ls &>/dev/null",
        "ls >|/dev/null",
        "ls 2>&10000",
    ] {
        assert_eq!(parse(line), Err(Opaque::Redirection), "{line}");
    }
    for line in ["ls >> ~/.bashrc", "ls <>/dev/null", "ls > \"$HOME\""] {
        assert!(parse(line).is_err(), "{line}");
    }
}

#[test]
fn anything_that_expands_or_is_not_a_simple_command_is_opaque() {
    for line in [
        "ls $x",
        "ls ${x}",
        "ls \"$x\"",
        "ls $(id)",
        "ls `id`",
        "ls \"`id`\"",
        "ls $((1+1))",
        "ls $'a'",
        "ls $\"a\"",
        "ls *",
        "ls a?",
        "ls [a]",
        "ls ~",
        "ls ~root",
        "echo {a,b}",
        "echo {1..3}",
        "echo a{b,c}",
        "ls !",
        "ls &",
        "ls & pwd",
        "ls |& cat",
        "ls ;; pwd",
        "(ls)",
        "{ ls; }",
        "! ls",
        "f() { ls; }",
        "if ls; then ls; fi",
        "for a in b; do ls; done",
        "case a in a) ls;; esac",
        "[[ -f x ]]",
        "export A=1",
        "local a",
        "cat <<EOF\nx\nEOF",
        "cat <<-EOF\nx\nEOF",
        "cat <<< x",
        "ls <(id)",
        "ls >(id)",
        "ls 'unterminated",
        "ls \"unterminated",
        "ls \\",
        "ls # \\\nrm -rf v",
        "ls\r",
        "ls\u{1b}[31m",
        "ls\u{0}",
        "ls\u{a0}-la",
        "ls\u{2003}-la",
        "",
        " \n ",
        "# only a comment",
    ] {
        assert!(
            parse(line).is_err(),
            "{line:?} was read as {:?}",
            parse(line)
        );
    }
}

#[test]
fn the_input_has_a_size_a_depth_and_a_work_bound() {
    assert_eq!(parse(&"a".repeat(MAX_BYTES + 1)), Err(Opaque::TooLong));
    assert!(parse(&"a".repeat(MAX_BYTES)).is_ok());
    let chain = format!("{}ls", "ls && ".repeat(200));
    assert_eq!(parse(&chain), Err(Opaque::TooBig));
    let pipes = format!("{}ls", "ls | ".repeat(100));
    assert_eq!(parse(&pipes), Err(Opaque::TooBig));
    let fine = format!("{}ls", "ls | ".repeat(40));
    assert_eq!(parse(&fine).map(|c| c.len()), Ok(41));
    for line in [
        "(".repeat(MAX_BYTES),
        format!("{}ls{}", "(".repeat(4_000), ")".repeat(4_000)),
        "$(".repeat(5_000),
        "{ ".repeat(5_000),
        "if ".repeat(5_000),
        format!("echo {}", "\"$(echo ".repeat(1_500)),
    ] {
        let start = std::time::Instant::now();
        assert!(parse(&line).is_err());
        assert!(start.elapsed() < std::time::Duration::from_secs(2));
    }
}

#[test]
fn decode_follows_posix_quoting() {
    assert_eq!(decode("'a b'").as_deref(), Ok("a b"));
    assert_eq!(decode("\"a'b\"").as_deref(), Ok("a'b"));
    assert_eq!(decode("'a\"b'").as_deref(), Ok("a\"b"));
    assert_eq!(decode("\"\\$\\`\\\\\\\"\"").as_deref(), Ok("$`\\\""));
    assert_eq!(decode("a\\\nb").as_deref(), Ok("ab"));
    assert_eq!(decode("\"a\\\nb\"").as_deref(), Ok("ab"));
    assert_eq!(
        decode("'$HOME'").as_deref(),
        Ok("$HOME"),
        "single quotes keep $"
    );
    assert_eq!(decode("\\$HOME").as_deref(), Ok("$HOME"));
    assert_eq!(decode("\\*").as_deref(), Ok("*"));
    assert_eq!(decode("'*'").as_deref(), Ok("*"));
    assert_eq!(decode("née").as_deref(), Ok("née"));
    assert!(decode("a~").is_ok());
    assert!(decode("~a").is_err());
    assert!(decode("a=~").is_err());
    assert!(decode("a:~").is_err());
    assert!(decode("#a").is_err());
    assert!(decode("'a").is_err());
}
