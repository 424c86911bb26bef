//! Custom commands (issue 30.4): the files are read again each time a command runs and each
//! time `/help` opens, so reading them must stay cheap at the caps: 200 commands of 2 KiB with
//! front matter, then a tree at the 2,000-entry bound; and putting the arguments into a
//! command's largest text (64 KiB).
//!
//!   cargo bench --bench custom_commands
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed run

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use taco::custom_commands::{MAX_COMMANDS, MAX_FILE, expand, load};

fn never(_: &str) -> bool {
    false
}

fn bench(c: &mut Criterion) {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join(".taco/commands");
    std::fs::create_dir_all(dir.join("team")).unwrap();
    let body = format!(
        "---\ndescription: Command\nallowed-tools: read_file, list_dir\nmodel: m\n---\n{}\nReview $ARGUMENTS and $1.\n",
        "Some instructions for the model. ".repeat(60)
    );
    for i in 0..MAX_COMMANDS {
        let sub = if i % 2 == 0 { "" } else { "team/" };
        std::fs::write(dir.join(format!("{sub}command-{i:03}.md")), &body).unwrap();
    }
    c.bench_function("load 200 commands", |b| {
        b.iter(|| black_box(load(work.path(), None, &never, &[])))
    });
    let wide = tempfile::tempdir().unwrap();
    let dir = wide.path().join(".taco/commands");
    std::fs::create_dir_all(&dir).unwrap();
    for i in 0..2_500 {
        std::fs::write(dir.join(format!("note-{i:04}.txt")), "x").unwrap();
    }
    c.bench_function("load a tree at the entry bound", |b| {
        b.iter(|| black_box(load(wide.path(), None, &never, &[])))
    });
    let text = "Look at $1 then $2; all: $ARGUMENTS. ".repeat(MAX_FILE as usize / 40);
    c.bench_function("expand 64 KiB", |b| {
        b.iter(|| black_box(expand(&text, "\"first arg\" second third")))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
