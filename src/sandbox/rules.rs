//! The Landlock ruleset of a sandboxed process, built in the parent before the fork (it
//! allocates and opens a file descriptor per allowed directory); `child` enforces it.

use std::path::Path;

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, RulesetAttr, RulesetCreated,
    RulesetCreatedAttr, Scope, path_beneath_rules,
};

use super::{Sandbox, SandboxError, SandboxMode};

/// The ruleset for one process: read and execute anywhere, write only the writable
/// directories and `/dev/null`, no TCP unless the network is allowed, no signals to and no
/// abstract Unix sockets of processes outside the sandbox.
pub(super) fn ruleset(sandbox: &Sandbox, workdir: &Path) -> Result<RulesetCreated, SandboxError> {
    let fail = |e: landlock::RulesetError| SandboxError(e.to_string());
    // What the promise rests on is required: a kernel without it fails here, never silently.
    let required = AccessFs::from_all(ABI::V3);
    let mut ruleset = landlock::Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(required)
        .map_err(fail)?;
    if !sandbox.network {
        ruleset = ruleset
            .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)
            .map_err(fail)?;
    }
    // Hardening newer kernels add: device ioctls (ABI 5), signal and abstract-socket scopes
    // (ABI 6). Taken where the kernel has them.
    let ruleset = ruleset
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::IoctlDev)
        .map_err(fail)?
        .scope(Scope::Signal | Scope::AbstractUnixSocket)
        .map_err(fail)?;
    let all = AccessFs::from_all(ABI::V5);
    let mut created = ruleset
        .create()
        .map_err(fail)?
        .add_rules(path_beneath_rules(["/"], AccessFs::from_read(ABI::V5)))
        .map_err(fail)?
        .add_rules(path_beneath_rules(["/dev/null"], all))
        .map_err(fail)?;
    if sandbox.mode == SandboxMode::WorkspaceWrite {
        // A configured directory that does not exist is skipped: nothing can be written there.
        created = created
            .add_rules(path_beneath_rules(sandbox.writable_dirs(workdir), all))
            .map_err(fail)?;
    }
    Ok(created.no_new_privs(true))
}
