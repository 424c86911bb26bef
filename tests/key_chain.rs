//! The key chain (issue 26, item 3): no process taco starts can read a provider key or another
//! secret of taco's environment. `taco exec --approve all` runs against a loopback provider
//! whose model tries every way to taco's memory from a shell command — `/proc/$PPID/environ`
//! plain, reversed and in base64, `cmdline`, the fds, a scan of every writable mapping through
//! `/proc/$PPID/mem`, and `env` — as root and as a normal user, with the sandbox on and off.
//! Neither a key nor its reverse nor its base64 may reach any request body or the session file.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use base64::Engine;
use serde_json::json;

use crate::support;
use support::TestServer;
use support::cli::*;

/// The provider key, in a variable named only by the config's `api_key_env` (no class).
const KEY: &str = "sk-test-KEYCHAIN-Zq9x-0a1b2c3d4e5f6789";
/// Secret-looking variables of the classes. Each value (and the key) carries the marker
/// `Zq9x` that the memory scan looks for.
const CLASS_VARS: &[(&str, &str)] = &[
    ("OPENAI_API_KEY", "sk-proj-Zq9x-openai-00112233445566"),
    (
        "AWS_SECRET_ACCESS_KEY",
        "wJalrXUtnFEMI-Zq9x-K7MDENGbPxRfiCY",
    ),
    (
        "DATABASE_URL",
        "postgres://app:hunter2-Zq9x@db.internal:5432/app",
    ),
    ("STRIPE_SECRET_KEY", "sk_live_Zq9x51HxyzABCDEFGH"),
    ("MYSQL_PWD", "mysql-Zq9x-password"),
    (
        "SENTRY_DSN",
        "https://abcdef0123Zq9x@o1.ingest.sentry.io/42",
    ),
    ("AZURE_OPENAI_KEY", "azure-Zq9x-0123456789abcdef"),
    ("GH_AUTH", "gho_Zq9x0123456789abcdef"),
    ("SESSION_COOKIE", "sid=Zq9x0123456789abcdef"),
    ("REGISTRY_CREDENTIALS", "user:Zq9x-registry-pass"),
    (
        "PIP_INDEX_URL",
        "https://me:pipZq9xpass@pypi.internal/simple",
    ),
];

/// Where the model's commands look.
const COMMANDS: &[&str] = &[
    "cat /proc/$PPID/environ",
    "tr '\\0' '\\n' < /proc/$PPID/environ | rev",
    "base64 -w0 /proc/$PPID/environ",
    "cat /proc/$PPID/cmdline",
    "ls -l /proc/$PPID/fd; for f in /proc/$PPID/fd/*; do timeout 1 head -c 4096 \"$f\" 2>&1 | base64 -w0; done",
    // Every writable mapping of taco up to 64 MiB (the heap and the allocator's arenas; the
    // larger ones are untouched reservations), read through /proc/PID/mem: what matches the
    // marker, reversed so the redaction of known values cannot mask it.
    "echo mem-scan-ran; p=$PPID; grep -E '^[0-9a-f]+-[0-9a-f]+ rw' /proc/$p/maps | while read -r range rest; do s=$((0x${range%-*})); e=$((0x${range#*-})); [ $((e-s)) -le 67108864 ] || continue; dd if=/proc/$p/mem bs=4096 skip=$((s/4096)) count=$(((e-s)/4096)) status=none; done | tr -c '[:alnum:]_:/@.+=-' '\\n' | grep -a Zq9x | sort -u | rev",
    "env",
];

/// A home and a workspace for the user the binary runs as.
struct Dirs {
    _root: tempfile::TempDir,
    home: PathBuf,
    ws: PathBuf,
}

fn dirs(owner: Option<u32>) -> Dirs {
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let base = root.path().canonicalize().unwrap();
    let (home, ws) = (base.join("home"), base.join("ws"));
    for dir in [&home, &ws] {
        std::fs::create_dir_all(dir).unwrap();
    }
    if let Some(uid) = owner {
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o755)).unwrap();
        for dir in [&home, &ws] {
            std::os::unix::fs::chown(dir, Some(uid), Some(uid)).unwrap();
        }
    }
    Dirs {
        _root: root,
        home,
        ws,
    }
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// What must never be seen: each secret, reversed, and its base64 at each of the three
/// alignments (the part of the encoding that depends on the secret's bytes alone).
fn forbidden() -> Vec<String> {
    let mut values: Vec<&str> = CLASS_VARS.iter().map(|(_, v)| *v).collect();
    values.push(KEY);
    let mut out = Vec::new();
    for value in values {
        out.push(value.to_string());
        out.push(value.chars().rev().collect());
        for shift in 0..3 {
            let mut bytes = vec![b'.'; shift];
            bytes.extend_from_slice(value.as_bytes());
            let encoded = base64::engine::general_purpose::STANDARD.encode(&bytes);
            let start = if shift == 0 { 0 } else { 4 };
            let core = &encoded[start..encoded.len() - 4];
            out.push(core.to_string());
        }
    }
    out
}

fn assert_clean(what: &str, text: &str) {
    for secret in forbidden() {
        if let Some(at) = text.find(&secret) {
            let from = text.floor_char_boundary(at.saturating_sub(600));
            let to = text.ceil_char_boundary((at + 200).min(text.len()));
            panic!("{what} carries `{secret}`: …{}…", &text[from..to]);
        }
    }
}

/// Runs the chain with the sandbox `sandbox`, as `uid` when given (through setpriv).
async fn chain(sandbox: &str, uid: Option<u32>) {
    let d = dirs(uid);
    let calls: Vec<(String, String)> = COMMANDS
        .iter()
        .enumerate()
        .map(|(i, c)| (format!("k{i}"), json!({ "command": c }).to_string()))
        .collect();
    let list: Vec<(&str, &str, &str)> = calls
        .iter()
        .map(|(id, args)| (id.as_str(), "shell", args.as_str()))
        .collect();
    let server = TestServer::start(vec![tool_turns(&list), text_turn(&["done"])]).await;
    let config = d.home.join("config.toml");
    std::fs::write(
        &config,
        "[providers.openai]\napi_key_env = \"LLM_ACCESS\"\n[providers.openai.options]\nmax_attempts = 1\n",
    )
    .unwrap();
    let mut cmd = match uid {
        Some(uid) => {
            // setpriv runs the binary as the user; the environment goes with it.
            let mut std = support::sandboxed::taco_as(Some(uid));
            std.env_clear()
                .env("PATH", std::env::var("PATH").unwrap_or_default())
                .env("HOME", &d.home)
                .env("XDG_CONFIG_HOME", d.home.join("config"))
                .current_dir(&d.ws)
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped());
            let mut cmd = tokio::process::Command::from(std);
            cmd.kill_on_drop(true);
            cmd
        }
        None => taco(&d.home, &d.ws),
    };
    cmd.env("LLM_ACCESS", KEY)
        .env("TACO_TEST_VISIBLE", "plain-value")
        .env("TMPDIR", &d.ws);
    for (name, value) in CLASS_VARS {
        cmd.env(name, value);
    }
    openai_args(&mut cmd, &server);
    cmd.arg("-c")
        .arg(&config)
        .args(["--sandbox", sandbox, "--json", "--approve", "all"])
        .arg("read the keys");
    let run = finish(&mut cmd).await;
    assert_eq!(
        run.code, 0,
        "stderr: {}\nstdout: {}",
        run.stderr, run.stdout
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 2, "{}", run.stderr);
    // The provider still gets the key, from the store, in its header.
    assert_eq!(
        requests[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    let body = String::from_utf8_lossy(&requests[1].body).into_owned();
    // The commands ran and their output reached the provider: the test cannot pass by
    // running nothing.
    assert!(body.contains("TACO_TEST_VISIBLE=plain-value"), "{body}");
    assert!(body.contains("mem-scan-ran"), "{body}");
    for request in &requests {
        assert_clean("a request body", &String::from_utf8_lossy(&request.body));
    }
    for (name, _) in CLASS_VARS.iter().chain([&("LLM_ACCESS", KEY)]) {
        assert!(
            !body.contains(&format!("{name}=")),
            "{name} reached a tool's environment: {body}"
        );
    }
    assert_clean("stdout", &run.stdout);
    assert_clean("stderr", &run.stderr);
    let session = std::fs::read_to_string(only_session(&d.home)).unwrap();
    assert!(session.contains("mem-scan-ran"), "{session}");
    assert_clean("the session file", &session);
}

/// The user the non-root runs use.
const NOBODY: u32 = 65534;

fn as_nobody() -> Option<u32> {
    if is_root() {
        Some(NOBODY)
    } else {
        eprintln!("note: not root, so the runs as another user are the runs as this one");
        None
    }
}

#[tokio::test]
async fn the_key_is_out_of_reach_sandboxed_as_root_or_the_caller() {
    chain("workspace-write", None).await;
}

#[tokio::test]
async fn the_key_is_out_of_reach_with_the_sandbox_off_as_root_or_the_caller() {
    chain("off", None).await;
}

#[tokio::test]
async fn the_key_is_out_of_reach_sandboxed_as_a_normal_user() {
    chain("workspace-write", as_nobody()).await;
}

#[tokio::test]
async fn the_key_is_out_of_reach_with_the_sandbox_off_as_a_normal_user() {
    chain("off", as_nobody()).await;
}

#[test]
fn the_forbidden_encodings_are_what_base64_makes() {
    // The check above would pass vacuously if these were not the real encodings.
    let text = base64::engine::general_purpose::STANDARD.encode(format!("AB={KEY}\0"));
    assert!(forbidden().iter().any(|f| text.contains(f.as_str())));
}

/// Starts `taco exec` (as `uid` when given) against a provider that holds its reply, so the
/// process stays alive; returns it and its pid.
async fn waiting_taco(
    d: &Dirs,
    uid: Option<u32>,
    server: &TestServer,
) -> (tokio::process::Child, u32) {
    let mut std = support::sandboxed::taco_as(uid);
    std.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &d.home)
        .env("OPENAI_API_KEY", KEY)
        .env("TACO_TEST_VISIBLE", "plain-value")
        .current_dir(&d.ws)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    for (name, value) in CLASS_VARS {
        std.env(name, value);
    }
    let mut cmd = tokio::process::Command::from(std);
    openai_args(&mut cmd, server);
    cmd.arg("hold on").kill_on_drop(true);
    let child = cmd.spawn().unwrap();
    let pid = child.id().unwrap();
    // Until the request arrives, taco is past its startup (the environment is sealed).
    for _ in 0..200 {
        if !server.requests().is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    assert!(
        !server.requests().is_empty(),
        "taco never called the provider"
    );
    (child, pid)
}

/// A stream that starts and then says nothing more for a while: taco waits in it.
fn held_reply() -> support::Reply {
    let first = chunk(json!({"content": "thinking"}), None);
    support::Reply::sse([format!("data: {first}\n\n")]).hold(std::time::Duration::from_secs(30))
}

#[tokio::test]
async fn the_environment_block_the_kernel_shows_holds_no_secret() {
    if !is_root() {
        eprintln!("note: not root, so taco's environ (non-dumpable) cannot be read to check");
        return;
    }
    let d = dirs(None);
    let server = TestServer::start(vec![held_reply()]).await;
    let (mut child, pid) = waiting_taco(&d, None, &server).await;
    // Root (with CAP_SYS_PTRACE, unlike taco's tools) can still read it: what is there?
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    let text = String::from_utf8_lossy(&environ).into_owned();
    assert!(
        child.try_wait().unwrap().is_none(),
        "taco ended before it was read"
    );
    child.kill().await.unwrap();
    assert!(text.contains("TACO_TEST_VISIBLE=plain-value"), "{text:?}");
    assert_clean("taco's /proc/PID/environ", &text);
    for (name, _) in CLASS_VARS {
        assert!(!text.contains(&format!("{name}=")), "{name} in {text:?}");
    }
}

#[tokio::test]
async fn taco_is_not_dumpable_so_its_proc_files_are_not_the_users() {
    // As root every /proc file is root's anyway: this needs another user.
    let uid = as_nobody().filter(|_| true);
    let d = dirs(uid);
    let server = TestServer::start(vec![held_reply()]).await;
    let (mut child, pid) = waiting_taco(&d, uid, &server).await;
    use std::os::unix::fs::MetadataExt;
    let owner = std::fs::metadata(format!("/proc/{pid}/environ"))
        .unwrap()
        .uid();
    assert!(
        child.try_wait().unwrap().is_none(),
        "taco ended before it was looked at"
    );
    child.kill().await.unwrap();
    // A dumpable process's /proc files belong to its user; a non-dumpable one's to root.
    assert_eq!(
        owner, 0,
        "taco's /proc/{pid}/environ belongs to uid {owner}"
    );
}
