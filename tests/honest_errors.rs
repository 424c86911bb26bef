//! Small honest errors (issue 9.7): bad input gets a clear message and the right exit code,
//! never a silent success or a hang.

use crate::support;

use std::os::unix::fs::PermissionsExt;
use std::process::Stdio;
use std::time::Duration;

use support::cli::*;
use support::{Reply, TestServer};

#[tokio::test]
async fn a_stdout_that_fails_is_an_error_not_a_silent_success() {
    for json in [false, true] {
        let (home, work) = setup();
        let mut cmd = taco(home.path(), work.path());
        cmd.args(["exec", "-p", "demo", "hi"]);
        if json {
            cmd.arg("--json");
        }
        // `output()` would pipe stdout again: spawn with stdout on the full device.
        cmd.stdout(std::fs::File::create("/dev/full").unwrap());
        let output = tokio::time::timeout(
            Duration::from_secs(60),
            cmd.spawn().unwrap().wait_with_output(),
        )
        .await
        .unwrap()
        .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "--json {json}: {stderr}");
        assert!(stderr.contains("cannot write to stdout"), "{stderr}");
    }
}

#[tokio::test]
async fn a_closed_pipe_on_stdout_is_reported() {
    let (home, work) = setup();
    let mut cmd = taco(home.path(), work.path());
    cmd.args(["exec", "-p", "demo", "--json", "hi"]);
    let mut child = cmd.spawn().unwrap();
    // The reader goes away before taco writes anything (`| head -0`).
    drop(child.stdout.take());
    let output = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("cannot write to stdout"), "{stderr}");
}

#[tokio::test]
async fn an_existing_trace_file_becomes_private() {
    let (home, work) = setup();
    let trace = work.path().join("run.trace");
    std::fs::write(&trace, "old").unwrap();
    std::fs::set_permissions(&trace, std::fs::Permissions::from_mode(0o644)).unwrap();
    let mut cmd = taco(home.path(), work.path());
    cmd.args(["exec", "-p", "demo", "--trace"])
        .arg(&trace)
        .arg("hi");
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let mode = std::fs::metadata(&trace).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert!(
        std::fs::read_to_string(&trace)
            .unwrap()
            .contains("run_started")
    );
}

async fn usage_error(args: &[&str], home: &std::path::Path, work: &std::path::Path) -> String {
    let mut cmd = taco(home, work);
    cmd.args(args);
    let run = finish(&mut cmd).await;
    assert_eq!(
        run.code, 2,
        "{args:?} should be a usage error: {}",
        run.stderr
    );
    run.stderr
}

#[tokio::test]
async fn config_paths_that_are_not_files_say_what_they_are() {
    let (home, work) = setup();
    let dir = work.path().to_str().unwrap();
    let stderr = usage_error(&["exec", "-c", dir, "hi"], home.path(), work.path()).await;
    assert!(
        stderr.contains("is a directory, not a config file"),
        "{stderr}"
    );

    let fifo = home.path().join("fifo.toml");
    let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    // Opening a FIFO for reading would block forever: taco must not even try.
    let stderr = usage_error(
        &["exec", "-c", fifo.to_str().unwrap(), "hi"],
        home.path(),
        work.path(),
    )
    .await;
    assert!(stderr.contains("not a regular file"), "{stderr}");

    let stderr = usage_error(&["exec", "-c", "/dev/zero", "hi"], home.path(), work.path()).await;
    assert!(stderr.contains("not a regular file"), "{stderr}");

    let binary = home.path().join("binary.toml");
    std::fs::write(&binary, b"provider = \"\xff\xfe\"\n").unwrap();
    let stderr = usage_error(
        &["exec", "-c", binary.to_str().unwrap(), "hi"],
        home.path(),
        work.path(),
    )
    .await;
    assert!(stderr.contains("not UTF-8"), "{stderr}");
}

#[tokio::test]
async fn a_config_directory_that_is_a_file_is_an_error() {
    let (home, work) = setup();
    // XDG_CONFIG_HOME is <home>/config (see support::cli::taco): make <config>/taco a file.
    std::fs::create_dir_all(home.path().join("config")).unwrap();
    std::fs::write(home.path().join("config/taco"), "not a directory").unwrap();
    let stderr = usage_error(&["exec", "-p", "demo", "hi"], home.path(), work.path()).await;
    assert!(stderr.contains("is a file, not a directory"), "{stderr}");
}

#[tokio::test]
async fn zero_turns_and_a_file_as_workdir_are_usage_errors() {
    let (home, work) = setup();
    let stderr = usage_error(
        &["exec", "-p", "demo", "--max-turns", "0", "hi"],
        home.path(),
        work.path(),
    )
    .await;
    assert!(stderr.contains("--max-turns"), "{stderr}");
    let file = work.path().join("hello.txt");
    let stderr = usage_error(
        &["exec", "-p", "demo", "-C", file.to_str().unwrap(), "hi"],
        home.path(),
        work.path(),
    )
    .await;
    assert!(stderr.contains("is not a directory"), "{stderr}");
}

#[tokio::test]
async fn an_html_page_instead_of_a_stream_names_the_base_url() {
    let (home, work) = setup();
    let page = "<!doctype html><html><body>Welcome to nginx!</body></html>";
    let server = TestServer::start(vec![
        Reply::status(200)
            .header("Content-Type", "text/html; charset=utf-8")
            .body(page),
    ])
    .await;
    let mut cmd = taco(home.path(), work.path());
    openai_args(&mut cmd, &server);
    cmd.arg("hi").stdin(Stdio::null());
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("HTML page"), "{}", run.stderr);
    assert!(run.stderr.contains("base URL"), "{}", run.stderr);
    assert_eq!(server.requests().len(), 1, "not retried");
}
