//! HTML to text within bounds. The page is cut at [`INPUT_CAP`], flattened by a linear
//! pre-pass (see `flatten`) and rendered by html2text. That runs where a time limit really
//! stops it: in the taco binary a child process (`taco __html2text`) that is killed at the
//! limit, on cancel, or when the call is dropped, and that also caps its own CPU time and
//! memory; without it (`html_helper` unset, or it cannot be started) on a blocking thread whose
//! parser stops at the next 4 KiB read once the limit passes or the call goes away, and whose
//! rendering is bounded by the pre-pass. A conversion that is stopped or fails still gives the
//! page's text, with the markup stripped.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{ExitCode, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::flatten::{flatten, strip};
use crate::tools::ToolSettings;
use crate::tools::builtin::truncate_str;

/// The argument that makes the taco binary run as the HTML converter.
pub const HTML_HELPER_ARG: &str = "__html2text";
/// Most HTML converted; text past it would be cut by the output cap anyway.
pub(super) const INPUT_CAP: usize = 1024 * 1024;
/// Most text a conversion returns (nesting indents can make text larger than its HTML).
const TEXT_CAP: usize = 4 * 1024 * 1024;
/// Longest a conversion may take (also bounded by half the tool timeout).
const TIME_LIMIT: Duration = Duration::from_secs(20);
/// The converter process's own CPU limit, in case its parent is gone.
const HELPER_CPU_SECS: u64 = 30;
/// The converter process's address-space limit.
const HELPER_MEMORY: u64 = 2 * 1024 * 1024 * 1024;
/// Column width HTML is rendered at.
const WIDTH: usize = 100;
/// Bytes the parser gets per read, so a stop request is seen promptly.
const READ_CHUNK: usize = 4096;

/// Text made from an HTML page, and what the model should know about how.
#[derive(Debug)]
pub(super) struct Converted {
    /// The text.
    pub text: String,
    /// Set when the page was cut or could not be rendered.
    pub note: Option<String>,
}

/// Converts an HTML page to text, in the helper process when the settings name one.
pub(super) async fn to_text(mut html: Vec<u8>, settings: &ToolSettings) -> Converted {
    let limit = TIME_LIMIT.min(settings.timeout / 2);
    let cut = html.len() > INPUT_CAP;
    html.truncate(INPUT_CAP);
    let html = Arc::new(html);
    let result = match &settings.html_helper {
        Some(helper) => match in_child(helper, &html, limit).await {
            Ok(result) => result,
            Err(e) => {
                // The binary may have been replaced or removed since it started.
                tracing::warn!("cannot start the HTML converter {}: {e}", helper.display());
                in_thread(Arc::clone(&html), limit).await
            }
        },
        None => in_thread(Arc::clone(&html), limit).await,
    };
    let mut notes = Vec::new();
    if cut {
        notes.push(format!(
            "only the first {} KiB of the HTML were converted",
            INPUT_CAP / 1024
        ));
    }
    let text = match result {
        Ok(text) => text,
        Err(why) => {
            notes.push(format!(
                "the page could not be rendered ({why}); its text is shown without layout"
            ));
            let mut text = strip(&html);
            text.truncate(truncate_str(&text, TEXT_CAP).len());
            text
        }
    };
    Converted {
        text,
        note: (!notes.is_empty()).then(|| notes.join("; ")),
    }
}

/// Flattens and renders `html`; stops with an error at the first read after `stop` is set
/// or `deadline` passes.
fn convert(html: &[u8], stop: &AtomicBool, deadline: Instant) -> Result<String, String> {
    let flat = flatten(html);
    let input = Interruptible {
        data: &flat,
        stop,
        deadline,
    };
    let mut text = html2text::config::plain()
        .allow_width_overflow()
        .string_from_read(input, WIDTH)
        .map_err(|e| e.to_string())?;
    text.truncate(truncate_str(&text, TEXT_CAP).len());
    Ok(text)
}

/// A reader that fails once asked to stop: the parser reads in small chunks, so a conversion
/// ends soon after the call that wanted it is gone.
struct Interruptible<'a> {
    data: &'a [u8],
    stop: &'a AtomicBool,
    deadline: Instant,
}

impl Read for Interruptible<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.stop.load(Ordering::Relaxed) || Instant::now() >= self.deadline {
            return Err(std::io::Error::other("the conversion was stopped"));
        }
        let n = buf.len().min(self.data.len()).min(READ_CHUNK);
        let (now, rest) = self.data.split_at(n);
        buf[..n].copy_from_slice(now);
        self.data = rest;
        Ok(n)
    }
}

/// Sets the flag when dropped: the call finished, timed out or was cancelled.
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

async fn in_thread(html: Arc<Vec<u8>>, limit: Duration) -> Result<String, String> {
    let stop = Arc::new(AtomicBool::new(false));
    let _stop = StopOnDrop(Arc::clone(&stop));
    let deadline = Instant::now() + limit;
    let task = tokio::task::spawn_blocking(move || convert(&html, &stop, deadline));
    match tokio::time::timeout(limit, task).await {
        Ok(Ok(result)) => result,
        Ok(Err(e)) => Err(format!("the converter crashed: {e}")),
        Err(_) => Err(format!("it took over {} s", limit.as_secs())),
    }
}

/// Converts in the helper process; `Err` when it cannot be started.
async fn in_child(
    helper: &Path,
    html: &[u8],
    limit: Duration,
) -> std::io::Result<Result<String, String>> {
    let mut command = tokio::process::Command::new(helper);
    // It parses hostile HTML: it must not be able to read taco's memory or inherit its fds.
    crate::sandbox::harden(&mut command);
    let mut child = command
        .arg(HTML_HELPER_ARG)
        // It only turns stdin into stdout: it needs no environment, keys least of all.
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        // Dropping the call (timeout, cancel) kills the converter with it.
        .kill_on_drop(true)
        .spawn()?;
    let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Ok(Err("the converter has no pipes".to_string()));
    };
    let work = async {
        let write = async move {
            // A converter that dies early closes the pipe; its exit status says why.
            let _ = stdin.write_all(html).await;
        };
        let read = async {
            let mut out = Vec::new();
            let read = stdout.take(TEXT_CAP as u64 + 1).read_to_end(&mut out).await;
            read.map(|_| out)
        };
        let ((), out) = tokio::join!(write, read);
        let mut out = out.map_err(|e| format!("cannot read the converter's output: {e}"))?;
        if out.len() > TEXT_CAP {
            // Enough text: the rest is not wanted.
            let _ = child.start_kill();
            out.truncate(TEXT_CAP);
        }
        let status = child
            .wait()
            .await
            .map_err(|e| format!("the converter was lost: {e}"))?;
        if status.success() || out.len() >= TEXT_CAP {
            Ok(String::from_utf8_lossy(&out).into_owned())
        } else {
            Err(format!("the converter stopped: {status}"))
        }
    };
    Ok(match tokio::time::timeout(limit, work).await {
        Ok(result) => result,
        Err(_) => {
            // Killed here rather than on drop so it is gone before the caller goes on.
            let _ = child.kill().await;
            Err(format!("it took over {} s", limit.as_secs()))
        }
    })
}

/// The converter process (`taco __html2text`): HTML on stdin, text on stdout. It limits its
/// own CPU time and memory first, so it ends even if its parent is gone.
pub fn html_helper_main() -> ExitCode {
    limit_self();
    let mut html = Vec::new();
    if std::io::stdin()
        .lock()
        .take(INPUT_CAP as u64)
        .read_to_end(&mut html)
        .is_err()
    {
        return ExitCode::FAILURE;
    }
    let never = AtomicBool::new(false);
    let Ok(text) = convert(&html, &never, Instant::now() + TIME_LIMIT) else {
        return ExitCode::FAILURE;
    };
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::FAILURE,
    }
}

fn limit_self() {
    let cpu = libc::rlimit {
        rlim_cur: HELPER_CPU_SECS as libc::rlim_t,
        rlim_max: (HELPER_CPU_SECS + 1) as libc::rlim_t,
    };
    let memory = libc::rlimit {
        rlim_cur: HELPER_MEMORY as libc::rlim_t,
        rlim_max: HELPER_MEMORY as libc::rlim_t,
    };
    // SAFETY: setrlimit reads the struct it is given and nothing else; failing leaves the
    // limits as they were, which the parent's kill still covers.
    unsafe {
        libc::setrlimit(libc::RLIMIT_CPU, &cpu);
        libc::setrlimit(libc::RLIMIT_AS, &memory);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stopped_conversion_ends_with_an_error() {
        let stop = AtomicBool::new(true);
        let far = Instant::now() + Duration::from_secs(60);
        assert!(convert(b"<p>hi</p>", &stop, far).is_err());
        let go = AtomicBool::new(false);
        assert!(
            convert(b"<p>hi</p>", &go, Instant::now()).is_err(),
            "deadline"
        );
        let text = convert(b"<h1>Hello</h1><p>World</p>", &go, far).unwrap();
        assert!(text.contains("Hello") && text.contains("World"), "{text}");
    }

    /// CPU time this thread has used: unlike wall time, it does not depend on machine load.
    fn thread_cpu() -> Duration {
        let mut now = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes one timespec, which `now` is.
        let ok = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) } == 0;
        assert!(ok);
        Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
    }

    #[test]
    fn deep_pages_convert_in_bounded_cpu_time() {
        let never = AtomicBool::new(false);
        // About 500 KB each. Unbounded, the nested divs took 45 s of CPU in a release build
        // (the lists 76 s); a debug build is several times slower still.
        for (open, count) in [
            ("<div>", 100_000),
            ("<b>", 100_000),
            ("<table><tr><td>", 33_000),
            ("<ul><li>", 62_000),
            ("<b><div>", 62_000),
            ("<div><b id=1><b id=2><b id=3><b id=4>x", 12_000),
            ("<table><b>x</b>", 30_000),
        ] {
            let html = format!("{}deep", open.repeat(count));
            let started = thread_cpu();
            // A regression fails here (stopped at the deadline) rather than hanging.
            let deadline = Instant::now() + Duration::from_secs(60);
            let text = convert(html.as_bytes(), &never, deadline)
                .unwrap_or_else(|e| panic!("{open}: {e}"));
            let used = thread_cpu() - started;
            // Measured at under 2.5 s of CPU in a debug build, 0.3 s in release.
            assert!(used < Duration::from_secs(10), "{open}: {used:?}");
            assert!(text.contains("deep"), "{open}: no text");
            assert!(text.len() <= TEXT_CAP, "{open}");
        }
    }
}
