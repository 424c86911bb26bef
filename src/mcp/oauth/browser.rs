//! Opening the login URL in a browser, when that is easy and safe: the program `$BROWSER`
//! names (its first entry; `%s` stands for the URL), else `xdg-open` where a display is set
//! (`open` on macOS). Never through a shell; only an http(s) URL; the program's output goes
//! nowhere (the TUI owns the terminal). The URL is shown either way.

use std::process::{Command, Stdio};

/// The program and arguments that would open `url`, given the environment; `None` when
/// there is no safe way.
pub fn command_for(url: &str, env: &dyn Fn(&str) -> Option<String>) -> Option<Vec<String>> {
    let parsed = reqwest::Url::parse(url).ok()?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return None;
    }
    if let Some(browser) = env("BROWSER").filter(|b| !b.trim().is_empty()) {
        let first = browser.split(':').next().unwrap_or_default();
        let mut words: Vec<String> = first.split_whitespace().map(String::from).collect();
        if words.is_empty() {
            return None;
        }
        if words.iter().any(|w| w.contains("%s")) {
            for word in &mut words {
                *word = word.replace("%s", url);
            }
        } else {
            words.push(url.to_string());
        }
        return Some(words);
    }
    if cfg!(target_os = "macos") {
        return Some(vec!["open".into(), url.into()]);
    }
    let display = ["DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .any(|name| env(name).is_some_and(|v| !v.is_empty()));
    display.then(|| vec!["xdg-open".into(), url.into()])
}

/// Tries to open `url`; whether a program was started.
pub fn open(url: &str) -> bool {
    let Some(words) = command_for(url, &|name| std::env::var(name).ok()) else {
        return false;
    };
    let Some((program, args)) = words.split_first() else {
        return false;
    };
    let child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    match child {
        Ok(mut child) => {
            // Reaped when it ends (xdg-open returns at once; a browser may stay).
            std::thread::spawn(move || child.wait());
            true
        }
        Err(e) => {
            tracing::info!(program, error = %e, "no browser was opened for the login");
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_browser_only_for_http_urls_and_never_through_a_shell() {
        let url = "https://as.example/authorize?state=a&x=$(rm -rf ~)";
        let env = |set: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                set.iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(
            command_for(url, &env(&[("BROWSER", "firefox --new-tab:chromium")])),
            Some(vec!["firefox".into(), "--new-tab".into(), url.into()])
        );
        assert_eq!(
            command_for(url, &env(&[("BROWSER", "w3m %s")])),
            Some(vec!["w3m".into(), url.into()])
        );
        assert_eq!(
            command_for("file:///etc/passwd", &env(&[("BROWSER", "x")])),
            None
        );
        assert_eq!(
            command_for("javascript:alert(1)", &env(&[("DISPLAY", ":0")])),
            None
        );
        if !cfg!(target_os = "macos") {
            assert_eq!(command_for(url, &env(&[])), None, "no display, no browser");
            assert_eq!(
                command_for(url, &env(&[("DISPLAY", ":0")])),
                Some(vec!["xdg-open".into(), url.into()])
            );
        }
    }
}
