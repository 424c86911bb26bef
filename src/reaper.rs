//! Nothing outlives taco (issue 9.5). taco becomes a child subreaper, so a tool's process
//! that escapes its process group (`setsid`, a double fork) is re-parented to taco rather
//! than to init; on exit every remaining descendant is found in `/proc` and killed.

use std::collections::HashMap;

/// Rounds of find-and-kill on exit: a process may fork while its siblings are being killed.
const ROUNDS: usize = 8;

/// Makes taco the reaper of its orphaned descendants (Linux); elsewhere it does nothing.
pub fn become_subreaper() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl(PR_SET_CHILD_SUBREAPER, 1) takes plain integers and only sets a flag on
    // this process.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }
}

/// Makes taco a subreaper for as long as it lives, and kills every descendant when dropped:
/// on a normal return and also while a panic unwinds (an MCP server's children, a tool's
/// escaped process), so nothing outlives taco either way.
#[must_use = "descendants are ended when the guard is dropped"]
pub struct Reaper;

impl Reaper {
    /// Becomes the subreaper of this process's orphans.
    pub fn start() -> Self {
        become_subreaper();
        Self
    }
}

impl Drop for Reaper {
    fn drop(&mut self) {
        end_descendants();
    }
}

/// Kills every descendant of this process (SIGKILL) and reaps the ones that were its own
/// children. Returns how many were killed. Call it on the way out, when no tool runs any
/// more: it takes exit statuses that a live `Child` handle would otherwise wait for.
pub fn end_descendants() -> usize {
    let me = std::process::id() as i32;
    let mut killed = 0;
    for _ in 0..ROUNDS {
        let found = descendants(me, &parents());
        if found.is_empty() {
            break;
        }
        for &pid in &found {
            // SAFETY: kill has no memory-safety preconditions; pid is a positive process id
            // read from /proc as a descendant of this process.
            if unsafe { libc::kill(pid, libc::SIGKILL) } == 0 {
                killed += 1;
            }
        }
        reap_children();
    }
    killed
}

/// Collects the exit statuses of this process's dead children, so none stays a zombie.
fn reap_children() {
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(500);
    loop {
        let mut status = 0;
        // SAFETY: waitpid writes only into `status`, a valid local.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        match pid {
            // A child is still dying (SIGKILL is asynchronous): give it a moment.
            0 if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            p if p > 0 => {}
            // No children left (ECHILD), or out of time.
            _ => break,
        }
    }
}

/// Every process's parent, from `/proc/<pid>/stat`.
fn parents() -> HashMap<i32, i32> {
    let mut map = HashMap::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return map;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        if let Ok(stat) = std::fs::read_to_string(entry.path().join("stat"))
            && let Some(ppid) = parent_of(&stat)
        {
            map.insert(pid, ppid);
        }
    }
    map
}

/// The parent pid in a `/proc/<pid>/stat` line: the second field after the command name,
/// which is in parentheses and may itself contain spaces and parentheses.
fn parent_of(stat: &str) -> Option<i32> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// The descendants of `root`, children before grandchildren.
fn descendants(root: i32, parents: &HashMap<i32, i32>) -> Vec<i32> {
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    for (&pid, &ppid) in parents {
        children.entry(ppid).or_default().push(pid);
    }
    let mut found = Vec::new();
    let mut queue = vec![root];
    while let Some(pid) = queue.pop() {
        for &child in children.get(&pid).map(Vec::as_slice).unwrap_or(&[]) {
            if child != root && !found.contains(&child) {
                found.push(child);
                queue.push(child);
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_odd_names_parse() {
        assert_eq!(parent_of("42 (sh) S 7 42 42 0 -1"), Some(7));
        assert_eq!(parent_of("42 (a) b (c)) R 9 1 1"), Some(9));
        assert_eq!(parent_of("garbage"), None);
    }

    #[test]
    fn descendants_walk_the_tree() {
        let parents = HashMap::from([(2, 1), (3, 2), (4, 3), (5, 1), (9, 8)]);
        let mut found = descendants(2, &parents);
        found.sort();
        assert_eq!(found, vec![3, 4]);
        let mut all = descendants(1, &parents);
        all.sort();
        assert_eq!(all, vec![2, 3, 4, 5]);
    }
}
