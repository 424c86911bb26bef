use super::*;

fn sandbox(mode: SandboxMode, support: Support) -> Sandbox {
    Sandbox {
        mode,
        network: false,
        writable: vec![PathBuf::from("/opt/cache")],
        support,
        metadata: Metadata::Namespace { user: false },
    }
}

#[test]
fn the_state_follows_the_mode_then_the_kernel() {
    let available = Support::Available { abi: 7 };
    let absent = Support::Unavailable("no Landlock".to_string());
    let on = sandbox(SandboxMode::WorkspaceWrite, available.clone());
    assert_eq!(on.state(), State::Enforced);
    assert_eq!(
        on.confinement(false),
        Confinement::Sandboxed {
            mode: SandboxMode::WorkspaceWrite,
            network: false
        }
    );
    assert_eq!(on.confinement(true), Confinement::Unsandboxed);
    assert!(!on.asks_every_call());
    let off = sandbox(SandboxMode::Off, absent.clone());
    assert_eq!(off.state(), State::Off);
    assert_eq!(off.confinement(true), Confinement::Off);
    assert!(!off.asks_every_call(), "off is the user's explicit choice");
    let fallback = sandbox(SandboxMode::ReadOnly, absent);
    assert_eq!(fallback.state(), State::Unavailable("no Landlock"));
    assert_eq!(fallback.confinement(false), Confinement::Unavailable);
    assert!(fallback.asks_every_call());
}

#[test]
fn writable_dirs_are_the_workspace_temp_and_configured_ones_in_workspace_write_only() {
    let ws = Path::new("/work/project");
    let on = sandbox(SandboxMode::WorkspaceWrite, Support::Available { abi: 7 });
    assert_eq!(
        on.writable_dirs(ws),
        vec![
            ws.to_path_buf(),
            std::env::temp_dir(),
            PathBuf::from("/opt/cache")
        ]
    );
    let ro = sandbox(SandboxMode::ReadOnly, Support::Available { abi: 7 });
    assert!(ro.writable_dirs(ws).is_empty());
}

#[test]
fn descriptions_say_what_is_allowed_and_what_to_do() {
    let ws = Path::new("/w");
    let on = sandbox(SandboxMode::WorkspaceWrite, Support::Available { abi: 7 });
    let text = on.describe(ws);
    assert!(
        text.contains("workspace-write (Landlock ABI 7)")
            && text.contains("writes only /w")
            && text.contains("no TCP")
            && text.contains(
                "chmod, chown, utime and xattr changes outside the writable paths are refused"
            ),
        "{text}"
    );
    let seccomp = Sandbox {
        metadata: Metadata::Seccomp("no namespaces".into()),
        ..on.clone()
    };
    let text = seccomp.describe(ws);
    assert!(
        text.contains("refused everywhere, the workspace too") && text.contains("no namespaces"),
        "{text}"
    );
    let fallback = sandbox(
        SandboxMode::WorkspaceWrite,
        Support::Unavailable("old".into()),
    );
    let text = fallback.describe(ws);
    assert!(
        text.contains("unavailable: old") && text.contains("asked about"),
        "{text}"
    );
    assert!(
        sandbox(SandboxMode::Off, Support::Available { abi: 7 })
            .describe(ws)
            .starts_with("off")
    );
}

#[test]
fn confinements_serialize_as_tagged_objects_and_read_back() {
    let sandboxed = Confinement::Sandboxed {
        mode: SandboxMode::ReadOnly,
        network: true,
    };
    let json = serde_json::to_value(sandboxed).unwrap();
    assert_eq!(
        json,
        serde_json::json!({"run": "sandboxed", "mode": "read-only", "network": true})
    );
    assert_eq!(
        serde_json::from_value::<Confinement>(json).unwrap(),
        sandboxed
    );
    assert_eq!(
        serde_json::to_value(Confinement::Unsandboxed).unwrap(),
        serde_json::json!({"run": "unsandboxed"})
    );
    assert_eq!(sandboxed.short(), "read-only+net");
    assert_eq!(Confinement::Unsandboxed.short(), "UNSANDBOXED");
    assert!(Confinement::Off.label().contains("mode is off"));
}

#[test]
fn the_real_kernel_takes_the_ruleset_when_it_says_it_can() {
    let dir = tempfile::tempdir().unwrap();
    let none = |_: &str| None;
    let resolved = Sandbox::resolve(
        SandboxMode::WorkspaceWrite,
        false,
        Vec::new(),
        dir.path(),
        &none,
    );
    // Either the kernel enforces it, or the sandbox says why not: never a silent no-op.
    match &resolved.support {
        Support::Available { abi } => assert!(*abi >= 4),
        Support::Unavailable(reason) => assert!(!reason.is_empty()),
    }
}
