use std::path::Path;

use super::*;

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn builtin(name: &str) -> bool {
    matches!(name, "help" | "init")
}

#[test]
fn project_and_user_commands_with_namespaces_clashes_and_bad_files() {
    let work = tempfile::tempdir().unwrap();
    let user = tempfile::tempdir().unwrap();
    let project = work.path().join(".taco/commands");
    write(
        &project,
        "review-pr.md",
        "---\ndescription: Review a PR\nargument-hint: <number>\nallowed-tools: read_file\nmodel: m2\n---\nReview PR $ARGUMENTS\n",
    );
    write(
        &project,
        "frontend/test.md",
        "# Run the frontend tests\nthen $1",
    );
    write(&project, "help.md", "mine");
    write(&project, "fx/greet.md", "hello");
    write(&project, "bad name.md", "x");
    write(&project, "empty.md", "---\ndescription: nothing\n---\n  \n");
    write(&project, "open.md", "---\ndescription: x\n");
    write(&project, "notes.txt", "not a command");
    std::fs::write(project.join("latin1.md"), [0xe9, 0x0a]).unwrap();
    write(&project, "big.md", &"x".repeat(MAX_FILE as usize + 1));
    write(&project, "a/b/c/deep.md", "too deep");
    std::os::unix::fs::symlink("/etc/hostname", project.join("link.md")).unwrap();
    write(user.path(), "review-pr.md", "the user's");
    write(user.path(), "mine.md", "A user command: $ARGUMENTS");
    let found = load(
        work.path(),
        Some(user.path()),
        &builtin,
        &["fx".to_string()],
    );
    let names: Vec<(&str, Source)> = (found.commands.iter())
        .map(|c| (c.name.as_str(), c.source))
        .collect();
    assert_eq!(
        names,
        [
            ("frontend:test", Source::Project),
            ("mine", Source::User),
            ("review-pr", Source::Project),
        ]
    );
    let review = found.get("review-pr").unwrap();
    assert_eq!(review.description, "Review a PR");
    assert_eq!(review.argument_hint.as_deref(), Some("<number>"));
    assert_eq!(review.allowed_tools, Some(vec!["read_file".to_string()]));
    let (prompt, options) = review.request("123");
    assert_eq!(prompt, "Review PR 123");
    assert_eq!(options.model.as_deref(), Some("m2"));
    assert_eq!(
        found.get("frontend:test").unwrap().description,
        "Run the frontend tests",
        "the first line, when there is no description"
    );
    let (command, args) = found.resolve("/frontend:test  unit ").unwrap();
    assert_eq!((command.name.as_str(), args), ("frontend:test", "unit"));
    assert!(found.resolve("/nope").is_none());
    let why = |file: &str| {
        (found.skipped.iter())
            .find(|s| s.path.ends_with(file))
            .map(|s| s.why.clone())
            .unwrap_or_else(|| panic!("{file} not skipped: {:?}", found.skipped))
    };
    assert!(why("help.md").contains("built-in"));
    assert!(why("fx/greet.md").contains("MCP server `fx`"));
    assert!(why("bad name.md").contains("cannot be part of a command name"));
    assert!(why("empty.md").contains("no text"));
    assert!(why("open.md").contains("closing"));
    assert!(why("latin1.md").contains("UTF-8"));
    assert!(why("big.md").contains("at most"));
    assert!(why("a/b/c").contains("nest"));
    assert!(why("link.md").contains("symbolic link"));
    let shadowed = (found.skipped.iter())
        .find(|s| s.source == Source::User && s.path.ends_with("review-pr.md"))
        .unwrap();
    assert!(
        shadowed.why.contains("also a project command"),
        "{}",
        shadowed.why
    );
    assert!(!found.skipped.iter().any(|s| s.path.ends_with("notes.txt")));
    let text = found.describe();
    assert!(
        text.contains("- `/review-pr <number>` (project) Review a PR"),
        "{text}"
    );
    assert!(text.contains("- skipped (user)"), "{text}");
}

#[test]
fn commands_are_capped() {
    let work = tempfile::tempdir().unwrap();
    let project = work.path().join(".taco/commands");
    for i in 0..MAX_COMMANDS + 3 {
        write(&project, &format!("c{i:04}.md"), "x");
    }
    let found = load(work.path(), None, &builtin, &[]);
    assert_eq!(found.commands.len(), MAX_COMMANDS);
    assert_eq!(found.skipped.len(), 3);
    assert!(found.skipped[0].why.contains("more than"));
}
