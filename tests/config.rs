//! Config parsing, presets, CLI overrides and auto-selection (DESIGN §6, §8).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use taco::config::{self, ConfigError, Overrides, ProviderKind, Resolved};
use taco::tools::Policy;

fn env_of(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |name| map.get(name).cloned()
}

async fn no_ollama(_host: String) -> Option<String> {
    None
}

fn write(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("config.toml");
    std::fs::write(&path, text).unwrap();
    path
}

async fn resolve(
    dir: &Path,
    overrides: Overrides,
    vars: &[(&str, &str)],
) -> Result<Resolved, ConfigError> {
    let overrides = Overrides {
        workdir: Some(dir.to_path_buf()),
        ..overrides
    };
    config::resolve(&overrides, &env_of(vars), no_ollama).await
}

#[tokio::test]
async fn bad_config_names_the_file_the_line_and_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("max_turns = 3\nprovider = [\n", 2, "array"),
        (
            "max_turns = 3\n\n[providers.x]\nkind = \"openai\"\nmodle = \"m\"\n",
            5,
            "unknown field 'modle'",
        ),
        ("provider = \"nosuch\"\n", 1, "unknown provider 'nosuch'"),
        (
            "[providers.local]\nkind = \"openai\"\nbase_url = \"ftp://x\"\n",
            3,
            "must be http or https",
        ),
        (
            "[tools.policy]\nshel = \"allow\"\n",
            2,
            "unknown tool 'shel'",
        ),
        (
            "[tools.policy]\nshell = \"sometimes\"\n",
            2,
            "unknown variant 'sometimes'",
        ),
        ("max_turns = \"ten\"\n", 1, "invalid type"),
        (
            "[tools.web_fetch]\nallow_private = [\n  \"localhost\",\n  \"10.0.0.0/99\",\n]\n",
            4,
            "allow_private: '10.0.0.0/99' has an invalid prefix length",
        ),
        (
            "[instructions]\nfiles = [\n  \"AGENTS.md\",\n  \"docs/AGENTS.md\",\n]\n",
            4,
            "[instructions] files: \"docs/AGENTS.md\" is not a file name",
        ),
        (
            "[pricing.\"my-model\"]\ninput = -1.0\noutput = 2.0\n",
            1,
            "not negative",
        ),
        (
            "[pricing.m]\ninput = 1.0\noutput = 2.0\ncache = 0.1\n",
            4,
            "unknown field 'cache'",
        ),
        (
            "[instructions]\nenable = false\n",
            2,
            "unknown field 'enable', expected 'enabled' or 'files'",
        ),
        ("[instructions]\nfiles = \"AGENTS.md\"\n", 2, "invalid type"),
    ];
    for (text, line, what) in cases {
        let path = write(dir.path(), text);
        let error = resolve(
            dir.path(),
            Overrides {
                config: Some(path.clone()),
                ..Default::default()
            },
            &[],
        )
        .await
        .unwrap_err()
        .to_string();
        let prefix = format!("{}:{line}: ", path.display());
        assert!(
            error.starts_with(&prefix),
            "{text:?}: expected {prefix:?} in {error:?}"
        );
        assert!(
            error.contains(what),
            "{text:?}: expected {what:?} in {error:?}"
        );
    }
}

#[tokio::test]
async fn a_named_config_that_is_missing_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.toml");
    let error = resolve(
        dir.path(),
        Overrides {
            config: Some(missing.clone()),
            ..Default::default()
        },
        &[],
    )
    .await
    .unwrap_err();
    assert!(error.to_string().contains("nope.toml") && error.to_string().contains("not found"));
    let via_env = resolve(
        dir.path(),
        Overrides::default(),
        &[("TACO_CONFIG", missing.to_str().unwrap())],
    )
    .await
    .unwrap_err();
    assert!(via_env.to_string().contains("nope.toml"));
}

#[tokio::test]
async fn taco_config_env_is_read_and_cli_flags_override_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        r#"
provider = "local"
max_turns = 4
[providers.local]
kind = "openai"
base_url = "http://127.0.0.1:8000/v1/"
model = "qwen"
api_key_env = "LOCAL_KEY"
[providers.local.options]
temperature = 0.2
[tools]
timeout_secs = 30
[tools.policy]
shell = "allow"
write_file = "deny"
[tools.web_fetch]
allow_hosts = ["docs.rs"]
max_redirects = 2
allow_private = ["localhost:8080", "10.0.0.0/8"]
"#,
    );
    let vars = [
        ("TACO_CONFIG", path.to_str().unwrap()),
        ("LOCAL_KEY", "k-123"),
    ];
    let r = resolve(dir.path(), Overrides::default(), &vars)
        .await
        .unwrap();
    assert_eq!(r.config_path.as_deref(), Some(path.as_path()));
    assert_eq!(
        (r.provider.name.as_str(), r.provider.kind),
        ("local", ProviderKind::Openai)
    );
    assert_eq!(r.provider.base_url, "http://127.0.0.1:8000/v1");
    assert_eq!(r.provider.model, "qwen");
    assert_eq!(
        r.provider.api_key.as_ref().map(|k| k.expose()),
        Some("k-123")
    );
    assert!(
        !format!("{:?}", r.provider).contains("k-123"),
        "the key never shows in Debug"
    );
    assert_eq!(r.max_turns, 4);
    assert_eq!(r.tools.timeout.as_secs(), 30);
    assert_eq!(r.tools.allow_hosts, ["docs.rs"]);
    assert_eq!(r.tools.max_redirects, 2);
    assert_eq!(r.tools.allow_private, ["localhost:8080", "10.0.0.0/8"]);
    assert_eq!(r.policies.get("shell"), Some(&Policy::Allow));
    assert_eq!(r.policies.get("write_file"), Some(&Policy::Deny));
    assert_eq!(r.workdir, dir.path().canonicalize().unwrap());
    assert!(r.system_prompt.contains(&r.workdir.display().to_string()));

    let flags = Overrides {
        model: Some("llama".into()),
        base_url: Some("http://10.0.0.1:9/v1".into()),
        max_turns: Some(7),
        ..Default::default()
    };
    let r = resolve(dir.path(), flags, &vars).await.unwrap();
    assert_eq!(
        (
            r.provider.model.as_str(),
            r.provider.base_url.as_str(),
            r.max_turns
        ),
        ("llama", "http://10.0.0.1:9/v1", 7)
    );
}

#[tokio::test]
async fn presets_work_without_a_config_file() {
    let dir = tempfile::tempdir().unwrap();
    let empty = write(dir.path(), "");
    let cfg = |p: &str| Overrides {
        config: Some(empty.clone()),
        provider: Some(p.into()),
        ..Default::default()
    };
    let r = resolve(dir.path(), cfg("deepseek"), &[("DEEPSEEK_API_KEY", "x")])
        .await
        .unwrap();
    assert_eq!(r.provider.base_url, "https://api.deepseek.com/v1");
    assert_eq!(r.provider.options.send_reasoning_content, Some(true));
    let r = resolve(dir.path(), cfg("groq"), &[]).await.unwrap();
    assert_eq!(r.provider.api_key_env.as_deref(), Some("GROQ_API_KEY"));
    let r = resolve(dir.path(), cfg("openrouter"), &[]).await.unwrap();
    assert_eq!(r.provider.base_url, "https://openrouter.ai/api/v1");
    let r = resolve(dir.path(), cfg("ollama"), &[("OLLAMA_HOST", "box:1234")])
        .await
        .unwrap();
    assert_eq!(r.provider.base_url, "http://box:1234");
    assert_eq!(r.provider.kind, ProviderKind::Ollama);
    let r = resolve(
        dir.path(),
        cfg("anthropic"),
        &[
            ("ANTHROPIC_API_KEY", "k"),
            ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/"),
        ],
    )
    .await
    .unwrap();
    assert_eq!(r.provider.kind, ProviderKind::Anthropic);
    assert_eq!(r.provider.base_url, "http://127.0.0.1:9");
    let error = resolve(dir.path(), cfg("anthropic"), &[])
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("ANTHROPIC_API_KEY"), "{error}");
    let r = resolve(dir.path(), cfg("demo"), &[]).await.unwrap();
    assert_eq!(r.provider.kind, ProviderKind::Demo);
    // OpenAI proper without a key fails early and says which variable to set.
    let error = resolve(dir.path(), cfg("openai"), &[])
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("OPENAI_API_KEY"), "{error}");
    // …but a local OpenAI-compatible server needs none.
    let local = Overrides {
        base_url: Some("http://127.0.0.1:1/v1".into()),
        ..cfg("openai")
    };
    assert!(resolve(dir.path(), local, &[]).await.is_ok());
    let error = resolve(dir.path(), cfg("nosuch"), &[])
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("unknown provider 'nosuch'") && error.contains("demo"),
        "{error}"
    );
}

#[tokio::test]
async fn auto_selection_prefers_a_key_then_ollama_then_the_demo() {
    let dir = tempfile::tempdir().unwrap();
    let empty = write(dir.path(), "");
    let base = Overrides {
        config: Some(empty),
        workdir: Some(dir.path().to_path_buf()),
        ..Default::default()
    };

    let r = config::resolve(&base, &env_of(&[("GROQ_API_KEY", "g")]), no_ollama)
        .await
        .unwrap();
    assert_eq!(r.provider.name, "groq");
    assert!(r.provider.auto_reason.unwrap().contains("GROQ_API_KEY"));

    let ollama = |host: String| async move {
        (host == "http://127.0.0.1:11434").then(|| "qwen3:4b".to_string())
    };
    let r = config::resolve(&base, &env_of(&[]), ollama).await.unwrap();
    assert_eq!(
        (r.provider.name.as_str(), r.provider.model.as_str()),
        ("ollama", "qwen3:4b")
    );
    assert!(r.provider.auto_reason.unwrap().contains("Ollama"));

    let r = config::resolve(&base, &env_of(&[("OPENAI_API_KEY", "")]), no_ollama)
        .await
        .unwrap();
    assert_eq!(r.provider.name, "demo");
    assert!(r.provider.auto_reason.is_some());
}

#[tokio::test]
async fn a_missing_workdir_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let overrides = Overrides {
        workdir: Some(dir.path().join("gone")),
        provider: Some("demo".into()),
        ..Default::default()
    };
    let error = config::resolve(&overrides, &env_of(&[]), no_ollama)
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("gone"), "{error}");
}

#[test]
fn the_example_config_parses() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("config.example.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let file = config::parse_config(&path, &text).unwrap();
    assert!(file.providers.len() >= 2);
    assert_eq!(file.tui.dialog_guard_ms, Some(2000));
    assert_eq!(file.tui.mouse, Some(true));
    assert_eq!(file.tui.theme, Some(config::ThemeChoice::Auto));
    assert_eq!(file.max_model_calls, Some(200));
    assert_eq!(file.max_subagent_depth, Some(3));
    assert_eq!(file.tools.shell.env_passthrough, Vec::<String>::new());
    assert_eq!(
        file.tools.max_parallel,
        Some(taco::tools::runner::DEFAULT_MAX_PARALLEL)
    );
    // Its web_fetch defaults are the built-in ones: nothing private is allowed.
    assert_eq!(file.tools.web_fetch.max_redirects, Some(5));
    assert!(file.tools.web_fetch.allow_private.is_empty());
    assert_eq!(file.instructions.names(), ["AGENTS.md", "CLAUDE.md"]);
}

#[tokio::test]
async fn the_example_values_are_the_defaults_for_limits() {
    let dir = tempfile::tempdir().unwrap();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("config.example.toml");
    let overrides = Overrides {
        config: Some(example),
        provider: Some("local".into()),
        ..Default::default()
    };
    let resolved = resolve(dir.path(), overrides, &[]).await.unwrap();
    assert_eq!(
        resolved.ui,
        config::UiSettings::default(),
        "[ui] shows the defaults"
    );
    let documented = resolved.limits;
    let empty = Overrides {
        config: Some(write(dir.path(), "")),
        provider: Some("demo".into()),
        ..Default::default()
    };
    let defaults = resolve(dir.path(), empty, &[]).await.unwrap().limits;
    assert_eq!(defaults, taco::orchestrator::Limits::default());
    assert_eq!(documented.max_model_calls, defaults.max_model_calls);
    assert_eq!(documented.max_subagent_depth, defaults.max_subagent_depth);

    // The openai table documents the per-call bounds.
    let overrides = Overrides {
        config: Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("config.example.toml")),
        provider: Some("openai".into()),
        ..Default::default()
    };
    let openai = resolve(dir.path(), overrides, &[("OPENAI_API_KEY", "k")])
        .await
        .unwrap()
        .limits;
    assert_eq!(openai, defaults);
}

#[tokio::test]
async fn provider_keys_are_secret_variables() {
    let dir = tempfile::tempdir().unwrap();
    let text = "[providers.mine]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:1/v1\"\nmodel = \"m\"\napi_key_env = \"MY_OWN_KEY\"\n";
    let overrides = Overrides {
        config: Some(write(dir.path(), text)),
        provider: Some("demo".into()),
        ..Default::default()
    };
    let resolved = resolve(dir.path(), overrides, &[]).await.unwrap();
    for var in [
        "MY_OWN_KEY",
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "GROQ_API_KEY",
    ] {
        assert!(resolved.tools.secret_vars.iter().any(|v| v == var), "{var}");
    }
}

#[tokio::test]
async fn the_dialog_quiet_defaults_to_2_s_and_zero_turns_it_off() {
    let dir = tempfile::tempdir().unwrap();
    for (text, ms) in [("", 2000), ("[tui]\ndialog_guard_ms = 0\n", 0)] {
        let overrides = Overrides {
            config: Some(write(dir.path(), text)),
            ..Default::default()
        };
        let resolved = resolve(dir.path(), overrides, &[]).await.unwrap();
        assert_eq!(resolved.dialog_guard.as_millis(), ms, "{text:?}");
    }
}

#[tokio::test]
async fn project_instructions_reach_the_system_prompt_and_can_be_renamed_or_turned_off() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().canonicalize().unwrap();
    let work = repo.join("crate");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir(&work).unwrap();
    std::fs::write(repo.join("AGENTS.md"), "Run cargo fmt before committing.\n").unwrap();
    std::fs::write(work.join("CLAUDE.md"), "This crate uses tabs.\n").unwrap();
    std::fs::write(work.join("RULES.md"), "Rules of this crate.\n").unwrap();
    let resolved_with = |text: &'static str| {
        let overrides = Overrides {
            config: Some(write(dir.path(), text)),
            workdir: Some(work.clone()),
            ..Default::default()
        };
        async move {
            config::resolve(&overrides, &env_of(&[]), no_ollama)
                .await
                .unwrap()
        }
    };

    let resolved = resolved_with("").await;
    let shown: Vec<&str> = (resolved.instructions.files.iter())
        .map(|f| f.shown.as_str())
        .collect();
    assert_eq!(shown, ["../AGENTS.md", "CLAUDE.md"]);
    let prompt = &resolved.system_prompt;
    assert!(prompt.starts_with(&config::DEFAULT_SYSTEM_PROMPT[..40]));
    let (root, near) = (
        prompt.find("Run cargo fmt").unwrap(),
        prompt.find("uses tabs").unwrap(),
    );
    assert!(
        prompt.find("# Project instructions").unwrap() < root && root < near,
        "{prompt}"
    );

    let renamed = resolved_with("[instructions]\nfiles = [\"RULES.md\", \"RULES.md\"]\n").await;
    assert_eq!(renamed.instructions.names, ["RULES.md"]);
    assert!(renamed.system_prompt.contains("Rules of this crate."));
    assert!(
        !renamed.system_prompt.contains("uses tabs")
            && !renamed.system_prompt.contains("cargo fmt")
    );

    // A prompt of one's own keeps them.
    let own = resolved_with("system_prompt = \"Be brief in {workdir}.\"\n").await;
    assert!(
        own.system_prompt.starts_with(&format!(
            "Be brief in {}.\n\n# Project instructions",
            work.display()
        )),
        "{}",
        own.system_prompt
    );

    let off = resolved_with("[instructions]\nenabled = false\n").await;
    assert!(!off.system_prompt.contains("Project instructions"));
    assert_eq!(
        off.instructions,
        taco::instructions::Instructions::default()
    );
    assert_eq!(
        off.system_prompt,
        config::DEFAULT_SYSTEM_PROMPT.replace("{workdir}", &work.display().to_string())
    );
}

#[tokio::test]
async fn configured_prices_win_over_the_built_in_ones() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "provider = \"demo\"\n[pricing.\"gpt-4.1\"]\ninput = 1.5\noutput = 6.0\ncached = 0.1\n",
    );
    let r = resolve(
        dir.path(),
        Overrides {
            config: Some(path),
            ..Overrides::default()
        },
        &[],
    )
    .await
    .unwrap();
    assert_eq!(r.pricing.price("gpt-4.1").unwrap().input, 1.5);
    assert_eq!(r.pricing.price("gpt-4.1-mini").unwrap().input, 0.40);
}

#[tokio::test]
async fn the_sandbox_is_workspace_write_without_network_by_default_and_the_flag_wins() {
    use taco::sandbox::{SandboxMode, TEST_SWITCH};
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().canonicalize().unwrap();
    let demo = |text: &str, flag: Option<SandboxMode>| Overrides {
        config: Some(write(dir.path(), text)),
        provider: Some("demo".into()),
        sandbox: flag,
        ..Default::default()
    };
    let plain = resolve(dir.path(), demo("", None), &[]).await.unwrap();
    let sandbox = plain.tools.sandbox;
    assert_eq!(
        (sandbox.mode, sandbox.network),
        (SandboxMode::WorkspaceWrite, false)
    );
    assert!(sandbox.writable.is_empty());

    let text =
        "[sandbox]\nmode = \"read-only\"\nnetwork = true\nwritable = [\"out\", \"/opt/x\"]\n";
    let sandbox = resolve(dir.path(), demo(text, None), &[])
        .await
        .unwrap()
        .tools
        .sandbox;
    assert_eq!(
        (sandbox.mode, sandbox.network),
        (SandboxMode::ReadOnly, true)
    );
    assert_eq!(sandbox.writable, [ws.join("out"), PathBuf::from("/opt/x")]);
    let flagged = resolve(dir.path(), demo(text, Some(SandboxMode::Off)), &[])
        .await
        .unwrap();
    assert_eq!(
        flagged.tools.sandbox.mode,
        SandboxMode::Off,
        "--sandbox wins"
    );

    let forced = resolve(dir.path(), demo("", None), &[(TEST_SWITCH, "1")])
        .await
        .unwrap();
    assert!(forced.tools.sandbox.asks_every_call());

    let path = write(dir.path(), "[sandbox]\nwritable = [\"\"]\n");
    let error = resolve(
        dir.path(),
        Overrides {
            config: Some(path.clone()),
            provider: Some("demo".into()),
            ..Default::default()
        },
        &[],
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(
        error.starts_with(&format!("{}:2: ", path.display())) && error.contains("not a path"),
        "{error}"
    );
}

#[tokio::test]
async fn the_example_config_documents_the_sandbox_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("config.example.toml");
    let overrides = Overrides {
        config: Some(example),
        provider: Some("demo".into()),
        ..Default::default()
    };
    let documented = resolve(dir.path(), overrides, &[]).await.unwrap();
    let defaults = resolve(
        dir.path(),
        Overrides {
            config: Some(write(dir.path(), "")),
            provider: Some("demo".into()),
            ..Default::default()
        },
        &[],
    )
    .await
    .unwrap();
    assert_eq!(documented.tools.sandbox, defaults.tools.sandbox);
}
