//! The advisory check `.ci/run` runs (issue 33): reads a `Cargo.lock` against a RustSec
//! advisory database directory, as `cargo audit` does with cargo-audit's own library, and
//! fails on every advisory that applies — vulnerabilities and informational ones
//! (unmaintained, unsound, notices) alike — unless `.ci/advisories.toml` lists it with a
//! reviewed reason. CI cannot reach GitHub, so the database is the committed snapshot
//! (`.ci/advisory-db.tar.gz`, extracted by `.ci/run`); yanked crates are not checked (that
//! needs the registry's index).
//!
//! `cargo run --example advisories -- DATABASE_DIR [Cargo.lock] [advisories.toml]`

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use rustsec::database::Query;
use rustsec::{Database, Lockfile};

/// One advisory that applies to a locked crate.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Found {
    id: String,
    package: String,
    version: String,
    kind: String,
    title: String,
}

/// The reviewed exceptions: ids with their reasons.
#[derive(Debug, serde::Deserialize)]
struct Exceptions {
    #[serde(default)]
    ignore: Vec<Exception>,
}

#[derive(Debug, serde::Deserialize)]
struct Exception {
    id: String,
    why: String,
    reviewed: String,
}

/// Every advisory of `db` that applies to `lockfile`, vulnerabilities then informational ones.
fn applying(db: &Database, lockfile: &Lockfile) -> Vec<Found> {
    let mut found: Vec<Found> = Vec::new();
    for query in [
        Query::crate_scope(),
        Query::crate_scope().informational(true),
    ] {
        for vulnerability in db.query_vulnerabilities(lockfile, &query) {
            let advisory = &vulnerability.advisory;
            let entry = Found {
                id: advisory.id.to_string(),
                package: vulnerability.package.name.to_string(),
                version: vulnerability.package.version.to_string(),
                kind: advisory
                    .informational
                    .as_ref()
                    .map_or("vulnerability", |i| i.as_str())
                    .to_string(),
                title: advisory.title.clone(),
            };
            if !found.contains(&entry) {
                found.push(entry);
            }
        }
    }
    found
}

/// What applies and is not excepted; and the exceptions that no longer apply (stale).
fn judge(found: &[Found], exceptions: &Exceptions) -> (Vec<Found>, Vec<String>) {
    let open = found
        .iter()
        .filter(|f| !exceptions.ignore.iter().any(|e| e.id == f.id))
        .cloned()
        .collect();
    let stale = exceptions
        .ignore
        .iter()
        .filter(|e| !found.iter().any(|f| f.id == e.id))
        .map(|e| e.id.clone())
        .collect();
    (open, stale)
}

fn run(db: &Path, lock: &Path, exceptions: &Path) -> Result<bool, String> {
    let db = Database::open(db).map_err(|e| format!("{}: {e}", db.display()))?;
    let lockfile = Lockfile::load(lock).map_err(|e| format!("{}: {e}", lock.display()))?;
    let text = std::fs::read_to_string(exceptions)
        .map_err(|e| format!("{}: {e}", exceptions.display()))?;
    let exceptions: Exceptions =
        toml::from_str(&text).map_err(|e| format!("{}: {e}", exceptions.display()))?;
    let found = applying(&db, &lockfile);
    let (open, stale) = judge(&found, &exceptions);
    for f in &found {
        if let Some(e) = exceptions.ignore.iter().find(|e| e.id == f.id) {
            let why: String = e.why.split_whitespace().collect::<Vec<_>>().join(" ");
            println!(
                "excepted {} ({} {} {}, reviewed {}): {}",
                f.id,
                f.kind,
                f.package,
                f.version,
                e.reviewed,
                taco::text::summarize(&why, 160)
            );
        }
    }
    for f in &open {
        println!(
            "ADVISORY {} ({}) {} {}: {}",
            f.id, f.kind, f.package, f.version, f.title
        );
    }
    for id in &stale {
        println!("stale exception {id}: it no longer applies; remove it from the list");
    }
    println!(
        "{} advisories in the database; {} apply, {} excepted, {} open",
        db.iter().count(),
        found.len(),
        found.len() - open.len(),
        open.len()
    );
    Ok(open.is_empty() && stale.is_empty())
}

fn main() -> ExitCode {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let Some(db) = args.first() else {
        eprintln!("usage: advisories DATABASE_DIR [Cargo.lock] [advisories.toml]");
        return ExitCode::from(2);
    };
    let lock = args.get(1).cloned().unwrap_or_else(|| "Cargo.lock".into());
    let exceptions = args
        .get(2)
        .cloned()
        .unwrap_or_else(|| ".ci/advisories.toml".into());
    match run(db, &lock, &exceptions) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("advisories: {e}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    /// The committed snapshot, extracted into a temporary directory.
    fn snapshot() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let tarball = concat!(env!("CARGO_MANIFEST_DIR"), "/.ci/advisory-db.tar.gz");
        let status = std::process::Command::new("tar")
            .args(["-xzf", tarball, "-C"])
            .arg(dir.path())
            .status()
            .unwrap();
        assert!(status.success());
        let db = dir.path().join("advisory-db");
        (dir, db)
    }

    fn exceptions() -> Exceptions {
        let text =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/.ci/advisories.toml"))
                .unwrap();
        toml::from_str(&text).unwrap()
    }

    #[test]
    fn a_lockfile_with_known_advisories_fails_and_taco_s_passes() {
        let (_dir, db) = snapshot();
        let db = Database::open(&db).unwrap();
        assert!(db.iter().count() > 900, "the snapshot is whole");
        // smallvec 1.6.0 has a vulnerability (RUSTSEC-2021-0003); bincode 1.3.3 is
        // unmaintained, and excepted.
        let lock = r#"version = 4

[[package]]
name = "smallvec"
version = "1.6.0"
source = "registry+https://github.com/rust-lang/crates.io-index"

[[package]]
name = "bincode"
version = "1.3.3"
source = "registry+https://github.com/rust-lang/crates.io-index"
"#;
        let lockfile: Lockfile = lock.parse().unwrap();
        let found = applying(&db, &lockfile);
        let ids: Vec<&str> = found.iter().map(|f| f.id.as_str()).collect();
        assert!(ids.contains(&"RUSTSEC-2021-0003"), "{found:#?}");
        assert!(ids.contains(&"RUSTSEC-2025-0141"), "{found:#?}");
        let (open, stale) = judge(&found, &exceptions());
        assert!(open.iter().any(|f| f.id == "RUSTSEC-2021-0003"));
        assert!(!open.iter().any(|f| f.id == "RUSTSEC-2025-0141"));
        assert!(stale.is_empty());

        // taco's own lockfile: nothing open, no stale exception.
        let ours = Lockfile::load(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.lock")).unwrap();
        let found = applying(&db, &ours);
        let (open, stale) = judge(&found, &exceptions());
        assert!(open.is_empty(), "{open:#?}");
        assert!(stale.is_empty(), "{stale:?}");
        // Every exception says why and when.
        for e in exceptions().ignore {
            assert!(e.why.len() > 40 && !e.reviewed.is_empty(), "{e:?}");
        }
    }
}
