//! The names MCP tools are offered under: `mcp__<server>__<tool>`, reduced to what every
//! provider accepts (`^[a-zA-Z0-9_-]{1,64}$`). Deterministic: a name that is too long, or
//! that two tools would share once reduced, ends in a hash of its server and tool instead,
//! so it does not depend on the order tools are listed in.

use std::collections::HashSet;

/// The longest tool name providers accept.
pub const MAX_NAME: usize = 64;
/// Hex digits of the hash that disambiguates.
const HASH_DIGITS: usize = 8;

/// `text` with every character outside `[a-zA-Z0-9_-]` replaced by `_` (empty: `_`).
pub fn sanitize(text: &str) -> String {
    let clean: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if clean.is_empty() { "_".into() } else { clean }
}

/// A tool's name as people read it: `mcp__github__create_issue` is `github · create_issue`
/// (the prefix is for the model; a name that ended in a hash stays as it is). Any other
/// name is itself.
pub fn display(name: &str) -> std::borrow::Cow<'_, str> {
    let split = name
        .strip_prefix("mcp__")
        .and_then(|rest| rest.split_once("__"))
        .filter(|(server, tool)| !server.is_empty() && !tool.is_empty());
    match split {
        Some((server, tool)) => std::borrow::Cow::Owned(format!("{server} · {tool}")),
        None => std::borrow::Cow::Borrowed(name),
    }
}

/// FNV-1a, 32 bits: small, stable across versions and platforms.
fn fnv1a(text: &str) -> u32 {
    text.bytes().fold(0x811c_9dc5, |hash, byte| {
        (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
    })
}

/// The name of one tool, given the names already taken.
pub fn qualified(server: &str, tool: &str, taken: &HashSet<String>) -> String {
    let plain = format!("mcp__{}__{}", sanitize(server), sanitize(tool));
    if plain.len() <= MAX_NAME && !taken.contains(&plain) {
        return plain;
    }
    let hash = format!(
        "{:0width$x}",
        fnv1a(&format!("{server}\u{0}{tool}")),
        width = HASH_DIGITS
    );
    let keep = MAX_NAME - HASH_DIGITS - 1;
    let stem: String = plain.chars().take(keep).collect();
    let mut name = format!("{stem}_{hash}");
    let mut n = 2;
    while taken.contains(&name) {
        // Two hashes equal: vanishingly rare, still never two tools under one name.
        let suffix = format!("_{hash}{n}");
        let stem: String = plain.chars().take(MAX_NAME - suffix.len()).collect();
        name = format!("{stem}{suffix}");
        n += 1;
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid(name: &str) -> bool {
        (1..=MAX_NAME).contains(&name.len())
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    }

    #[test]
    fn plain_names_keep_their_parts() {
        let taken = HashSet::new();
        assert_eq!(qualified("fs", "read_file", &taken), "mcp__fs__read_file");
        assert_eq!(
            qualified("my server", "tool.v2", &taken),
            "mcp__my_server__tool_v2"
        );
        assert_eq!(qualified("", "", &taken), "mcp______");
    }

    #[test]
    fn long_and_colliding_names_get_a_stable_hash() {
        let long = "x".repeat(100);
        let name = qualified("srv", &long, &HashSet::new());
        assert!(valid(&name), "{name}");
        assert_eq!(
            name,
            qualified("srv", &long, &HashSet::new()),
            "deterministic"
        );

        let mut taken = HashSet::new();
        let first = qualified("s", "a.b", &taken);
        taken.insert(first.clone());
        let second = qualified("s", "a b", &taken);
        assert_eq!(first, "mcp__s__a_b");
        assert!(valid(&second) && second != first, "{second}");
        assert_eq!(
            second,
            qualified("s", "a b", &taken),
            "the same tool gets the same name"
        );
    }

    #[test]
    fn unicode_and_hostile_names_become_valid() {
        let taken = HashSet::new();
        for tool in ["名前", "../../etc", "a\nb", "\u{202e}x", &"é".repeat(80)] {
            let name = qualified("ü", tool, &taken);
            assert!(valid(&name), "{tool:?} → {name}");
        }
    }

    #[test]
    fn people_read_server_dot_tool() {
        assert_eq!(
            display("mcp__github__create_issue"),
            "github · create_issue"
        );
        assert_eq!(display("mcp__fs__read__file"), "fs · read__file");
        assert_eq!(display("read_file"), "read_file");
        assert_eq!(display("mcp__"), "mcp__");
        assert_eq!(display("mcp__x__"), "mcp__x__");
    }
}
