//! The hooks of a session: the user's config's, then the project's `.taco/config.toml`'s
//! when the user trusts that file as it is; what was left out is said.

use std::path::Path;
use std::sync::Arc;

use serde::Deserialize;

use super::trust::{self, PROJECT_FILE, ProjectFile};
use super::{Hooks, HooksConfig, Source};

/// What a project config may hold (only hooks, for now).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProjectConfig {
    #[serde(default)]
    hooks: HooksConfig,
}

/// The hooks found, and what the user should know about them.
#[derive(Debug, Clone, Default)]
pub struct Loaded {
    /// The hooks that run.
    pub hooks: Arc<Hooks>,
    /// Notes: a project file not trusted, or not usable.
    pub notes: Vec<String>,
    /// The project file with hooks that wait for the user's trust.
    pub untrusted: Option<ProjectFile>,
}

/// The session's hooks: `user` (already checked) and the workspace's project file's, when
/// trusted (trust kept under `state`).
pub fn load(user: Vec<super::Hook>, workdir: &Path, state: Option<&Path>) -> Loaded {
    let mut loaded = Loaded::default();
    let mut hooks = user;
    match project(workdir) {
        Ok(None) => {}
        Ok(Some((file, project))) => {
            let trusted = state.is_some_and(|s| trust::is_trusted(s, &file));
            if trusted {
                hooks.extend(project);
            } else {
                loaded.notes.push(format!(
                    "{PROJECT_FILE} has {} hook{} that will not run until you trust it as it is now: /trust, or `taco trust` in this directory",
                    project.len(),
                    if project.len() == 1 { "" } else { "s" }
                ));
                loaded.untrusted = Some(file);
            }
        }
        Err(why) => loaded
            .notes
            .push(format!("project hooks are not used: {why}")),
    }
    loaded.hooks = Arc::new(Hooks::new(hooks));
    loaded
}

/// Trusts the workspace's project file as it is now; says what it trusted.
pub fn trust_project(workdir: &Path) -> Result<String, String> {
    let state =
        crate::audit::state_dir().ok_or("there is no state directory to keep the trust in")?;
    let Some((file, hooks)) = project(workdir)? else {
        return Err(format!(
            "there is no {PROJECT_FILE} with hooks in {}",
            workdir.display()
        ));
    };
    trust::trust(&state, &file)?;
    Ok(format!(
        "trusted {} as it is now: its {} hook{} run from the next session (a change needs trust again)",
        file.path.display(),
        hooks.len(),
        if hooks.len() == 1 { "" } else { "s" }
    ))
}

/// The project file and its hooks (`None`: no file, or a file without hooks).
pub fn project(workdir: &Path) -> Result<Option<(ProjectFile, Vec<super::Hook>)>, String> {
    let Some(file) = trust::project_file(workdir)? else {
        return Ok(None);
    };
    let config: ProjectConfig =
        toml::from_str(&file.text).map_err(|e| format!("{PROJECT_FILE}: {e}"))?;
    let hooks = (config.hooks)
        .compile(Source::Project)
        .map_err(|e| format!("{PROJECT_FILE}: {e}"))?;
    Ok((!hooks.is_empty()).then_some((file, hooks)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_untrusted_project_adds_no_hook_and_says_so() {
        let work = tempfile::tempdir().unwrap();
        let state = tempfile::tempdir().unwrap();
        std::fs::create_dir(work.path().join(".taco")).unwrap();
        std::fs::write(
            work.path().join(PROJECT_FILE),
            "[[hooks.pre_tool_use]]\nmatcher = \"shell\"\ncommand = \"check\"\n",
        )
        .unwrap();
        let loaded = load(Vec::new(), work.path(), Some(state.path()));
        assert!(loaded.hooks.is_empty());
        assert!(loaded.notes[0].contains("/trust"), "{:?}", loaded.notes);
        trust::trust(state.path(), loaded.untrusted.as_ref().unwrap()).unwrap();
        let loaded = load(Vec::new(), work.path(), Some(state.path()));
        assert_eq!(loaded.hooks.len(), 1);
        assert!(loaded.notes.is_empty());
        std::fs::write(work.path().join(PROJECT_FILE), "[model]\nx = 1\n").unwrap();
        let loaded = load(Vec::new(), work.path(), Some(state.path()));
        assert!(loaded.notes[0].contains("not used"), "{:?}", loaded.notes);
    }
}
