//! Processes of this machine, read from /proc: what a test checks did not outlive taco.
#![allow(dead_code)]

/// The processes whose command line holds `needle` (a zombie not reaped yet has an empty
/// command line and counts as gone).
pub fn running_with(needle: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| {
            let path = e.ok()?.path();
            let line = std::fs::read(path.join("cmdline")).ok()?;
            let line = String::from_utf8_lossy(&line).replace('\0', " ");
            line.contains(needle)
                .then(|| format!("{}: {line}", path.display()))
        })
        .collect()
}
