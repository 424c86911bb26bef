use ratatui::style::Modifier;

use super::diff::{DiffPaint, lines as diff_lines};
use super::engine::{Lines, by_token};
use super::*;

/// The role at byte `at` of a line coloured by `runs` (`Plain` past the last run).
fn role_at(runs: &[(usize, Role)], at: usize) -> Role {
    let i = runs.partition_point(|&(end, _)| end <= at);
    runs.get(i).map_or(Role::Plain, |&(_, role)| role)
}

/// The role of the first occurrence of `needle` in line `n` of `code` highlighted as `lang`.
fn role_of(lang: &str, code: &str, n: usize, needle: &str) -> Role {
    let painted = super::code(lang, code).unwrap_or_else(|| panic!("{lang} is known"));
    let line = code.split('\n').nth(n).unwrap();
    let at = line
        .find(needle)
        .unwrap_or_else(|| panic!("{needle:?} in {line:?}"));
    let runs = painted
        .line(n)
        .unwrap_or_else(|| panic!("line {n} coloured"));
    role_at(runs, at)
}

/// Every role a line gets.
fn roles(lang: &str, code: &str, n: usize) -> Vec<Role> {
    let painted = super::code(lang, code).unwrap();
    painted
        .line(n)
        .unwrap()
        .iter()
        .map(|&(_, role)| role)
        .collect()
}

const RUST: &str =
    "// says hi\npub fn main() {\n    let s = \"hi\"; /* more */\n    println!(\"{s}\", 42);\n}";

#[test]
fn rust_code_gets_a_role_per_kind_of_token() {
    assert_eq!(role_of("rust", RUST, 0, "says"), Role::Comment);
    assert_eq!(
        role_of("rust", RUST, 0, "//"),
        Role::Comment,
        "the marker too"
    );
    assert_eq!(role_of("rust", RUST, 1, "pub"), Role::Keyword);
    assert_eq!(role_of("rust", RUST, 1, "fn"), Role::Keyword);
    assert_eq!(role_of("rust", RUST, 1, "main"), Role::Function);
    assert_eq!(role_of("rust", RUST, 1, "("), Role::Plain);
    assert_eq!(role_of("rust", RUST, 2, "let"), Role::Keyword);
    assert_eq!(role_of("rust", RUST, 2, " s "), Role::Plain);
    assert_eq!(role_of("rust", RUST, 2, "\"hi"), Role::String, "quotes too");
    assert_eq!(role_of("rust", RUST, 2, "hi"), Role::String);
    assert_eq!(role_of("rust", RUST, 2, "more"), Role::Comment);
    assert_eq!(role_of("rust", RUST, 3, "println!"), Role::Function);
    assert_eq!(role_of("rust", RUST, 3, "42"), Role::Constant);
}

#[test]
fn the_languages_asked_for_are_all_highlighted() {
    // Each sample has a string (or, for diff and Markdown, what those have instead).
    let cases: [(&[&str], &str, &str, Role); 13] = [
        (&["rust", "rs"], "let s = \"x\";", "\"x\"", Role::String),
        (&["python", "py", "python3"], "s = 'x'", "'x'", Role::String),
        (
            &["js", "javascript", "jsx"],
            "const s = 'x';",
            "'x'",
            Role::String,
        ),
        (
            &["ts", "typescript", "tsx"],
            "const s = 'x';",
            "'x'",
            Role::String,
        ),
        (&["json", "jsonc"], "{\"k\": \"x\"}", "\"x\"", Role::String),
        (&["toml"], "k = \"x\"", "\"x\"", Role::String),
        (&["yaml", "yml"], "k: \"x\"", "\"x\"", Role::String),
        (
            &["sh", "bash", "shell", "zsh"],
            "echo \"x\"",
            "\"x\"",
            Role::String,
        ),
        (&["diff", "patch"], "+added", "added", Role::Inserted),
        (&["c", "h"], "char *s = \"x\";", "\"x\"", Role::String),
        (
            &["cpp", "c++", "cxx", "hpp"],
            "auto s = \"x\";",
            "\"x\"",
            Role::String,
        ),
        (&["go", "golang"], "s := \"x\"", "\"x\"", Role::String),
        (&["markdown", "md"], "# Title", "Title", Role::Heading),
    ];
    for (tags, code, needle, role) in cases {
        for tag in tags {
            assert_eq!(role_of(tag, code, 0, needle), role, "{tag}: {code}");
        }
    }
    assert_eq!(
        role_of("Rust", RUST, 1, "fn"),
        Role::Keyword,
        "tags are case-insensitive"
    );
    assert_eq!(role_of("rust,ignore", RUST, 1, "fn"), Role::Keyword);
}

#[test]
fn unknown_or_plain_tags_and_untagged_code_stay_plain() {
    for tag in ["", "text", "txt", "log", "no-such-language"] {
        assert!(super::code(tag, "let s = \"x\";").is_none(), "{tag:?}");
    }
    // A shebang names its language even without a tag.
    let script = "#!/bin/bash\necho \"x\"";
    assert_eq!(role_of("", script, 1, "\"x\""), Role::String);
}

#[test]
fn json_keys_values_and_literals_differ() {
    let json = "{\n  \"name\": \"taco\",\n  \"n\": 1.5,\n  \"ok\": true,\n  \"none\": null\n}";
    assert_eq!(role_of("json", json, 1, "name"), Role::Key);
    assert_eq!(
        role_of("json", json, 1, "\"name"),
        Role::Key,
        "its quotes too"
    );
    assert_eq!(role_of("json", json, 1, "taco"), Role::String);
    assert_eq!(role_of("json", json, 2, "1.5"), Role::Constant);
    assert_eq!(role_of("json", json, 3, "true"), Role::Constant);
    assert_eq!(role_of("json", json, 4, "null"), Role::Constant);
    assert_eq!(role_of("json", json, 0, "{"), Role::Plain);
    assert!(super::code("json", json).is_some());
}

#[test]
fn toml_has_headers_keys_values_and_blocks() {
    let toml = "[server] # main\nport = 8_080\nname = \"taco\"\n\"quoted key\".x = 'lit'\n\
                when = 2024-05-01T10:00:00Z\nok = true\ntext = \"\"\"\nline \"with\" quotes\n\"\"\"\n\
                after = { a = 1 }";
    assert_eq!(role_of("toml", toml, 0, "[server]"), Role::Heading);
    assert_eq!(role_of("toml", toml, 0, "main"), Role::Comment);
    assert_eq!(role_of("toml", toml, 1, "port"), Role::Key);
    assert_eq!(role_of("toml", toml, 1, "8_080"), Role::Constant);
    assert_eq!(role_of("toml", toml, 2, "taco"), Role::String);
    assert_eq!(role_of("toml", toml, 3, "quoted"), Role::Key);
    assert_eq!(role_of("toml", toml, 3, ".x"), Role::Key, "dotted keys");
    assert_eq!(role_of("toml", toml, 3, "lit"), Role::String);
    assert_eq!(role_of("toml", toml, 4, "2024"), Role::Constant);
    assert_eq!(role_of("toml", toml, 5, "true"), Role::Constant);
    assert_eq!(
        roles("toml", toml, 7),
        [Role::String],
        "inside a triple-quoted string"
    );
    assert_eq!(role_of("toml", toml, 8, "\"\"\""), Role::String);
    assert_eq!(
        role_of("toml", toml, 9, "after"),
        Role::Key,
        "the block closed"
    );
    assert_eq!(
        role_of("toml", toml, 9, " a "),
        Role::Key,
        "inline table keys"
    );
    assert_eq!(role_of("toml", toml, 9, "1"), Role::Constant);
}

#[test]
fn a_huge_block_is_highlighted_only_up_to_the_cap() {
    let line = "let s = \"x\"; // filler to make the line longer\n";
    let big = line.repeat(1024 * 1024 / line.len());
    let painted = super::code("rust", &big).unwrap();
    let kept = MAX_BYTES / line.len();
    assert!(painted.line(kept - 1).is_some(), "within the cap");
    assert!(painted.line(kept).is_none(), "past the cap: plain");
    assert!(painted.line(big.lines().count() - 1).is_none());
    // Growing a capped block highlights nothing more.
    let more = format!("{big}let t = 1;\n");
    assert!(super::code("rust", &more).unwrap().line(kept).is_none());
    // JSON goes further: its grammar is cheap.
    let item = "  \"key\": \"a value of some length\",\n";
    let json = format!("{{\n{}}}", item.repeat(1024 * 1024 / item.len()));
    let painted = super::code("json", &json).unwrap();
    let kept = (MAX_JSON_BYTES - 2) / item.len();
    assert!(painted.line(kept).is_some() && painted.line(kept + 1).is_none());
}

#[test]
fn a_very_long_line_is_plain_and_not_parsed() {
    let long = format!("let s = \"{}\";", "x".repeat(2 * MAX_LINE));
    let code = format!("let a = 1;\n{long}\nlet b = \"y\";");
    let painted = super::code("rust", &code).unwrap();
    assert_eq!(painted.line(1), Some(&[(long.len(), Role::Plain)][..]));
    // The next line is coloured from the state before the long one.
    assert_eq!(role_of("rust", &code, 2, "let"), Role::Keyword);
    assert_eq!(role_of("rust", &code, 2, "\"y\""), Role::String);
    // A single line of 100k chars is past the byte cap as well: all plain.
    let huge = format!("let s = \"{}\";", "x".repeat(100_000));
    assert!(super::code("rust", &huge).unwrap().line(0).is_none());
}

/// Every line of `code` highlighted from scratch, without the cache.
fn fresh(lang: &str, code: &str) -> Vec<Runs> {
    let mut lines = Lines::new(by_token(lang).unwrap());
    code.split('\n').map(|l| lines.line(l)).collect()
}

#[test]
fn a_growing_block_continues_from_its_last_line_and_matches_a_fresh_run() {
    // Streamed a few bytes at a time, through a block comment and a string across lines.
    let code = "fn a() {}\n/* open\n   still comment */ let x = \"s\";\nlet r = r#\"\nraw\n\"#;\n";
    let mut last = None;
    for cut in (1..=code.len())
        .filter(|&i| code.is_char_boundary(i))
        .step_by(3)
    {
        last = super::code("rust", &code[..cut]);
        let painted = last.as_ref().unwrap();
        let want = fresh("rust", &code[..cut]);
        for (n, runs) in want.iter().enumerate() {
            if !runs.is_empty()
                && code[..cut]
                    .split('\n')
                    .nth(n)
                    .is_some_and(|l| !l.is_empty())
            {
                assert_eq!(
                    painted.line(n),
                    Some(runs.as_slice()),
                    "cut {cut}, line {n}"
                );
            }
        }
    }
    assert!(last.is_some());
    assert_eq!(role_of("rust", code, 2, "still"), Role::Comment);
    assert_eq!(role_of("rust", code, 2, "let"), Role::Keyword);
    assert_eq!(role_of("rust", code, 4, "raw"), Role::String);
}

#[test]
fn roles_have_their_own_colours_and_plain_is_the_code_tone() {
    let theme = Theme::default();
    let fg = |role| style(&theme, role).fg;
    assert_eq!(fg(Role::Plain), theme.code.fg);
    let coloured = [
        Role::Keyword,
        Role::String,
        Role::Comment,
        Role::Constant,
        Role::Type,
        Role::Function,
    ];
    for (i, a) in coloured.iter().enumerate() {
        assert_ne!(fg(*a), fg(Role::Plain), "{a:?}");
        for b in &coloured[i + 1..] {
            assert_ne!(fg(*a), fg(*b), "{a:?} {b:?}");
        }
    }
    assert_eq!(fg(Role::Keyword), theme.syntax.keyword.fg);
    assert_eq!(fg(Role::String), theme.syntax.string.fg);
}

const DIFF: &str = "+2 −1 in src/x.rs\n--- a/src/x.rs\n+++ b/src/x.rs\n@@ -1,3 +1,4 @@\n \
                    fn a() {\n-    let s = \"old\";\n+    let s = \"new\";\n+    // added\n \
                    }\n--- removed comment line\n\\ No newline at end of file";

#[test]
fn a_diff_is_painted_by_line_kind_and_its_code_by_language() {
    let lines = diff_lines(DIFF);
    let paint_at = |n: usize, needle: &str| {
        let line = &lines[n];
        let at = line.text.find(needle).unwrap();
        let i = line.runs.partition_point(|&(end, _)| end <= at);
        line.runs[i].1
    };
    assert_eq!(lines[0].runs, [(lines[0].text.len(), DiffPaint::Summary)]);
    assert_eq!(paint_at(1, "a/src"), DiffPaint::Header);
    assert_eq!(paint_at(2, "b/src"), DiffPaint::Header);
    assert_eq!(paint_at(3, "-1,3"), DiffPaint::Header);
    assert_eq!(paint_at(4, "fn"), DiffPaint::Context(Role::Keyword));
    assert_eq!(paint_at(4, "a"), DiffPaint::Context(Role::Function));
    assert_eq!(lines[5].runs, [(lines[5].text.len(), DiffPaint::Removed)]);
    assert_eq!(paint_at(6, "+"), DiffPaint::AddedMark);
    assert_eq!(paint_at(6, "let"), DiffPaint::Added(Role::Keyword));
    assert_eq!(paint_at(6, " s "), DiffPaint::Added(Role::Plain));
    assert_eq!(paint_at(6, "\"new\""), DiffPaint::Added(Role::String));
    assert_eq!(paint_at(7, "added"), DiffPaint::Added(Role::Comment));
    assert_eq!(paint_at(8, "}"), DiffPaint::Context(Role::Plain));
    assert_eq!(
        paint_at(9, "removed"),
        DiffPaint::Removed,
        "`---` inside a hunk is a removed line"
    );
    assert_eq!(paint_at(10, "No newline"), DiffPaint::Note);
    for line in &lines {
        assert_eq!(line.runs.last().map(|r| r.0), Some(line.text.len()));
    }

    let theme = Theme::default();
    assert_eq!(DiffPaint::Added(Role::Plain).style(&theme), theme.ok);
    assert_eq!(DiffPaint::Removed.style(&theme), theme.error);
    assert_ne!(
        DiffPaint::Added(Role::Keyword).style(&theme).fg,
        DiffPaint::Added(Role::Plain).style(&theme).fg
    );
    assert!(
        DiffPaint::Summary
            .style(&theme)
            .add_modifier
            .contains(Modifier::BOLD)
    );
}

#[test]
fn a_diff_of_an_unknown_file_type_keeps_the_line_colours() {
    let diff = "+1 −0 in notes.zzz\n--- a/notes.zzz\n+++ b/notes.zzz\n@@ -0,0 +1 @@\n+let x";
    let lines = diff_lines(diff);
    assert_eq!(
        lines[4].runs,
        [
            (1, DiffPaint::AddedMark),
            (6, DiffPaint::Added(Role::Plain))
        ]
    );
    let styled = diff::styled(diff, &Theme::default());
    assert_eq!(styled.len(), 5);
    assert_eq!(styled[4].spans[1].content, "let x");
    // Markdown is known but left plain in diffs (its grammar is slow to get ready).
    let notes = "+1 −0 in a.md\n--- a/a.md\n+++ b/a.md\n@@ -0,0 +1 @@\n+# Title";
    assert_eq!(
        diff_lines(notes)[4].runs,
        [
            (1, DiffPaint::AddedMark),
            (8, DiffPaint::Added(Role::Plain))
        ]
    );
}

#[test]
fn the_cache_stays_bounded_in_blocks_and_bytes() {
    // Lines too long to parse keep this cheap; they are kept all the same.
    let item = format!("  \"{}\": 1,\n", "k".repeat(MAX_LINE));
    let body = item.repeat(MAX_JSON_BYTES / item.len() - 1);
    for n in 0..40 {
        let json = format!("{{\"n\": {n},\n{body}}}");
        assert!(super::code("json", &json).is_some());
    }
    let (blocks, bytes) = cache::held();
    assert!(blocks <= 64, "{blocks} blocks");
    // Other tests add blocks meanwhile: room for a few of them past the bound.
    assert!(bytes <= 1024 * 1024 + 4 * MAX_JSON_BYTES, "{bytes} bytes");
}

/// `code` highlighted in the background until its colours are all in (or 10 s pass): how
/// many calls that took, and the last result.
fn in_background_until_done(code: &str) -> (usize, Highlighted) {
    let start = std::time::Instant::now();
    let mut calls = 0;
    loop {
        calls += 1;
        let (painted, deferred) =
            in_background(true, || (super::code("rust", code), take_deferred()));
        if !deferred {
            return (calls, painted.unwrap());
        }
        assert!(
            start.elapsed() < std::time::Duration::from_secs(10),
            "colours must arrive"
        );
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

#[test]
fn the_background_colours_a_block_off_the_calling_thread_exactly_as_one_call_would() {
    // Text no other test uses: the cache is shared by every test thread.
    let code: String = (0..40)
        .map(|i| format!("let in_background_{i} = \"{i}\"; // on line {i}\n"))
        .collect();
    let want = fresh("rust", &code);
    // Nothing was cached: the first call colours nothing itself.
    let (first, deferred) = in_background(true, || (super::code("rust", &code), take_deferred()));
    assert!(deferred);
    assert!(
        first.unwrap().line(0).is_none(),
        "no regex ran on this thread"
    );
    let (calls, painted) = in_background_until_done(&code);
    assert!(calls >= 1);
    for (n, runs) in want.iter().take(40).enumerate() {
        assert_eq!(painted.line(n), Some(runs.as_slice()), "line {n}");
    }
    // Outside the background nothing is deferred, and the setting before is back.
    assert!(super::code("rust", "let outside_background = 1;\n").is_some());
    assert!(!take_deferred());
}

#[test]
fn a_streamed_line_keeps_the_colours_of_its_start_while_the_rest_waits() {
    let start = "let first_in_stream = 1;\nlet unfinished_in_stream = \"ab";
    let (_, painted) = in_background_until_done(start);
    let seen = painted.line(1).unwrap().to_vec();
    assert_eq!(seen.last().map(|r| r.0), Some(30));
    let grown = "let first_in_stream = 1;\nlet unfinished_in_stream = \"abc\";\nlet next";
    let (painted, deferred) = in_background(true, || (super::code("rust", grown), take_deferred()));
    assert!(deferred);
    let painted = painted.unwrap();
    assert_eq!(
        painted.line(1),
        Some(seen.as_slice()),
        "its start keeps its colours"
    );
    let (_, painted) = in_background_until_done(grown);
    let want = fresh("rust", grown);
    for (n, runs) in want.iter().enumerate() {
        assert_eq!(painted.line(n), Some(runs.as_slice()), "line {n}");
    }
}

#[test]
fn the_worker_and_lookups_on_other_threads_agree() {
    // Lookups here and on three threads at once, in the background and not, of one
    // growing block: each result is what one call on a fresh state gives.
    let code: String = (0..60)
        .map(|i| format!("fn racing_{i}() -> u32 {{ {i} }} // {i}\n"))
        .collect();
    let want = fresh("rust", &code);
    let cuts: Vec<usize> = (1..=60)
        .map(|n| code.match_indices('\n').nth(n - 1).unwrap().0 + 1)
        .collect();
    std::thread::scope(|scope| {
        for t in 0..3 {
            let (code, want, cuts) = (&code, &want, &cuts);
            scope.spawn(move || {
                for &cut in cuts.iter().skip(t).step_by(3) {
                    let painted = in_background(t == 0, || super::code("rust", &code[..cut]));
                    let painted = painted.unwrap();
                    let lines = code[..cut].matches('\n').count();
                    for (n, want) in want.iter().take(lines).enumerate() {
                        if let Some(runs) = painted.line(n) {
                            assert_eq!(runs, want.as_slice(), "line {n} of {cut}");
                        }
                    }
                }
            });
        }
    });
    let (_, painted) = in_background_until_done(&code);
    for (n, runs) in want.iter().take(60).enumerate() {
        assert_eq!(painted.line(n), Some(runs.as_slice()), "line {n}");
    }
}

#[test]
fn what_waits_for_the_worker_is_bounded_in_jobs_and_in_bytes() {
    // A model that sends block after block, each of them huge: the queue keeps the newest
    // 64, and of each only what can be coloured (the cap and the line across it).
    let line = "let flood = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]; // a line of filler\n";
    let mut most = (0, 0);
    for i in 0..200 {
        // 20 lines to colour (a few ms of work, so jobs pile up), then a 100 KB one.
        let code = format!(
            "// flood block {i}\n{}{}\n",
            line.repeat(20),
            "x".repeat(100_000)
        );
        in_background(true, || super::code("rust", &code));
        let (jobs, longest) = super::cache::queued();
        most = (most.0.max(jobs), most.1.max(longest));
    }
    assert!(most.0 <= 64, "{} jobs queued", most.0);
    assert!(most.0 > 0, "nothing was queued");
    assert!(most.1 <= MAX_BYTES + 1, "a job held {} bytes", most.1);
    assert!(take_deferred());
}

#[cfg(target_os = "linux")]
#[test]
fn the_worker_runs_below_the_ui_in_priority() {
    // Start it (a block only the background colours).
    in_background(true, || {
        super::code("rust", "let start_the_worker_for_nice = 1;\n")
    });
    // The thread names itself and lowers its priority as it starts: wait for that.
    let nice_of_worker = || {
        std::fs::read_dir("/proc/self/task")
            .unwrap()
            .filter_map(Result::ok)
            .find(|task| {
                std::fs::read_to_string(task.path().join("comm"))
                    .is_ok_and(|comm| comm.trim() == "taco-highlight")
            })
            .and_then(|task| {
                let stat = std::fs::read_to_string(task.path().join("stat")).ok()?;
                // Fields after the `(comm)`: state is the 3rd field, nice the 19th.
                let after = &stat[stat.rfind(')')? + 2..];
                after.split(' ').nth(16)?.parse::<i32>().ok()
            })
    };
    let start = std::time::Instant::now();
    let mut nice = nice_of_worker();
    while nice != Some(10) && start.elapsed() < std::time::Duration::from_secs(10) {
        std::thread::sleep(std::time::Duration::from_millis(5));
        nice = nice_of_worker();
    }
    assert_eq!(nice, Some(10), "the highlighter thread's nice value");
    take_deferred();
}
