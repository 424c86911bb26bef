//! The fuzzy scorer: what matches and how matches rank.

use super::*;

fn rank<'a>(query: &str, texts: &[&'a str]) -> Vec<&'a str> {
    let mut scored: Vec<(i32, &str)> = (texts.iter())
        .filter_map(|t| score(query, t).map(|m| (m.score, *t)))
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.len().cmp(&b.1.len())));
    scored.into_iter().map(|(_, t)| t).collect()
}

#[test]
fn every_char_in_order_case_insensitive() {
    assert!(score("smr", "src/main.rs").is_some());
    assert!(score("SMR", "src/main.rs").is_some());
    assert!(score("msr", "src/main.rs").is_none());
    assert_eq!(score("", "x").map(|m| m.score), Some(0));
    assert_eq!(
        score("mr", "src/main.rs").map(|m| m.positions),
        Some(vec![4, 9])
    );
}

#[test]
fn word_starts_runs_and_file_names_rank_first() {
    assert_eq!(
        rank(
            "main",
            &["src/domain/remains.rs", "src/main.rs", "mxaxixn.txt"]
        ),
        ["src/main.rs", "src/domain/remains.rs", "mxaxixn.txt"]
    );
    // Initials of words beat a run inside one.
    assert_eq!(
        rank("sm", &["assembly.md", "src/main.rs"]),
        ["src/main.rs", "assembly.md"]
    );
    // Camel case counts as word starts.
    assert_eq!(rank("fb", &["xfoobar", "FooBar"]), ["FooBar", "xfoobar"]);
}
