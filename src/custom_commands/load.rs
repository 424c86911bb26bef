//! Finding the command files: `*.md` under each root, folders as namespaces, bounded in
//! file size, depth, files visited and commands kept. Symbolic links are not followed: a
//! project's command cannot send a file from elsewhere on the machine to the provider.

use std::path::{Path, PathBuf};

use super::{CustomCommand, CustomCommands, Skipped, Source, front};

/// Largest command file read.
pub const MAX_FILE: u64 = 64 * 1024;
/// Most commands kept (the project's first, then the user's).
pub const MAX_COMMANDS: usize = 200;
/// How deeply folders nest as namespaces (`a/b/c.md` is 2 deep).
pub const MAX_DEPTH: usize = 3;
/// Most directory entries looked at under one root.
const MAX_ENTRIES: usize = 2_000;
/// Longest name (folders and stem joined).
const MAX_NAME: usize = 64;

/// `<config dir>/taco/commands`, the user's commands.
pub fn user_dir() -> Option<PathBuf> {
    directories::BaseDirs::new().map(|d| d.config_dir().join("taco").join("commands"))
}

/// The commands of the workspace `workdir` (`.taco/commands/`) and of `user` (when given).
/// A command named like a built-in (`is_builtin("help")`), or under a folder named like an
/// MCP server (`mcp_servers`, whose prompts are `/server:prompt`), is skipped with why; of
/// a project's and a user's command of the same name, the project's is used.
pub fn load(
    workdir: &Path,
    user: Option<&Path>,
    is_builtin: &dyn Fn(&str) -> bool,
    mcp_servers: &[String],
) -> CustomCommands {
    let mut found = CustomCommands::default();
    let roots = [
        (
            Some(workdir.join(".taco").join("commands")),
            Source::Project,
        ),
        (user.map(Path::to_path_buf), Source::User),
    ];
    for (root, source) in roots {
        let Some(root) = root else { continue };
        let mut files = Vec::new();
        let mut budget = MAX_ENTRIES;
        walk(
            &root,
            &root,
            source,
            0,
            &mut budget,
            &mut files,
            &mut found.skipped,
        );
        if budget == 0 {
            found.skipped.push(Skipped {
                path: root.clone(),
                source,
                why: format!("more than {MAX_ENTRIES} entries: the rest were not looked at"),
            });
        }
        files.sort();
        for (name, path) in files {
            match read(&name, &path, source, is_builtin, mcp_servers) {
                Err(why) => found.skipped.push(Skipped { path, source, why }),
                Ok(command) => {
                    if let Some(kept) = found.get(&command.name) {
                        let why = format!(
                            "`/{}` is also a {} command ({}), which is used",
                            command.name,
                            kept.source.label(),
                            kept.path.display()
                        );
                        found.skipped.push(Skipped { path, source, why });
                    } else if found.commands.len() >= MAX_COMMANDS {
                        let why = format!("more than {MAX_COMMANDS} commands");
                        found.skipped.push(Skipped { path, source, why });
                    } else {
                        found.commands.push(command);
                    }
                }
            }
        }
    }
    found.commands.sort_by(|a, b| a.name.cmp(&b.name));
    found
}

/// Collects `(name, path)` of the `.md` files under `dir`.
fn walk(
    root: &Path,
    dir: &Path,
    source: Source,
    depth: usize,
    budget: &mut usize,
    files: &mut Vec<(String, PathBuf)>,
    skipped: &mut Vec<Skipped>,
) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        if *budget == 0 {
            return;
        }
        *budget -= 1;
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let file_name = entry.file_name().to_string_lossy().into_owned();
        if file_name.starts_with('.') {
            continue;
        }
        let skip = |why: String, skipped: &mut Vec<Skipped>| {
            skipped.push(Skipped {
                path: path.clone(),
                source,
                why,
            });
        };
        if kind.is_symlink() {
            if file_name.ends_with(".md") || !file_name.contains('.') {
                skip("a symbolic link: not followed".into(), skipped);
            }
            continue;
        }
        if kind.is_dir() {
            if depth + 1 >= MAX_DEPTH {
                skip(format!("folders nest at most {MAX_DEPTH} deep"), skipped);
            } else {
                walk(root, &path, source, depth + 1, budget, files, skipped);
            }
            continue;
        }
        let Some(stem) = file_name.strip_suffix(".md").filter(|_| kind.is_file()) else {
            continue;
        };
        let Ok(relative) = path.strip_prefix(root) else {
            continue;
        };
        let mut parts: Vec<String> = (relative.parent().into_iter())
            .flat_map(|p| p.iter())
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        parts.push(stem.to_string());
        if let Some(bad) = parts.iter().find(|p| !is_name(p)) {
            let why = format!(
                "`{bad}` cannot be part of a command name: use letters, digits, `-`, `_` and `.`"
            );
            skip(why, skipped);
            continue;
        }
        let name = parts.join(":");
        if name.len() > MAX_NAME {
            skip(
                format!("its name is longer than {MAX_NAME} characters"),
                skipped,
            );
            continue;
        }
        files.push((name, path));
    }
}

/// Letters, digits, `-`, `_`, `.`; not empty, not starting with `.` or `-`.
fn is_name(part: &str) -> bool {
    !part.is_empty()
        && !part.starts_with(['.', '-'])
        && part
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// Reads one command file.
fn read(
    name: &str,
    path: &Path,
    source: Source,
    is_builtin: &dyn Fn(&str) -> bool,
    mcp_servers: &[String],
) -> Result<CustomCommand, String> {
    if is_builtin(name) {
        return Err(format!("`/{name}` is a built-in command, which wins"));
    }
    if let Some((space, _)) = name.split_once(':')
        && mcp_servers.iter().any(|s| s == space)
    {
        return Err(format!(
            "its folder `{space}` is named like the MCP server `{space}`, whose prompts are `/{space}:…`; rename the folder"
        ));
    }
    let size = std::fs::symlink_metadata(path)
        .map_err(|e| format!("cannot be read: {e}"))?
        .len();
    if size > MAX_FILE {
        return Err(format!(
            "it is {size} bytes; a command file may have at most {MAX_FILE}"
        ));
    }
    let bytes = read_bounded(path)?;
    let text = String::from_utf8(bytes).map_err(|_| "it is not UTF-8 text".to_string())?;
    let (front, body) = front::split(&text)?;
    let body = body.trim().to_string();
    if body.is_empty() {
        return Err("it has no text to send".to_string());
    }
    let description = front.description.unwrap_or_else(|| {
        let first = body.lines().next().unwrap_or_default();
        crate::text::summarize(first.trim_start_matches('#').trim(), 80)
    });
    Ok(CustomCommand {
        name: name.to_string(),
        source,
        path: path.to_path_buf(),
        description,
        argument_hint: front.argument_hint,
        allowed_tools: front.allowed_tools,
        model: front.model,
        body,
    })
}

/// The file's bytes, at most [`MAX_FILE`] of them (it may have grown since it was measured).
fn read_bounded(path: &Path) -> Result<Vec<u8>, String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    // Not through a link put in its place since it was listed, and never waiting on a FIFO.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| format!("cannot be read: {e}"))?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot be read: {e}"))?;
    if bytes.len() as u64 > MAX_FILE {
        return Err(format!("it has more than {MAX_FILE} bytes"));
    }
    Ok(bytes)
}
