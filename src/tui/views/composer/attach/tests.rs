//! Attachments: mentions found, blocks written and read back, sizes.

use super::*;

#[test]
fn mentions_start_a_line_or_follow_a_blank() {
    let text = "see @a.rs and x@b.rs,\n@c/d.md @ @e";
    let found: Vec<&str> = mentions(text).into_iter().map(|(_, p)| p).collect();
    assert_eq!(found, ["a.rs", "c/d.md", "e"]);
    let (range, _) = &mentions(text)[0];
    assert_eq!(&text[range.clone()], "@a.rs");
}

#[test]
fn sizes_read_like_people_write_them() {
    assert_eq!(size(812), "812 B");
    assert_eq!(size(4301), "4.2 KB");
    assert_eq!(size(64 * 1024), "64.0 KB");
    assert_eq!(size(3 * 1024 * 1024 / 2), "1.5 MB");
    assert_eq!(parse_size("4.2 KB").map(size).as_deref(), Some("4.2 KB"));
}

#[test]
fn a_block_fences_its_content_past_any_backticks_in_it() {
    let file = Described {
        path: "notes \"x\".md".into(),
        size: 40,
        kept: None,
    };
    let text = "a ``` b\n````\n";
    let block = block(&file, text);
    assert!(block.starts_with("<file path=\"notes &quot;x&quot;.md\" size=\"40 B\">\n`````md\n"));
    assert!(block.ends_with("\n`````\n</file>"), "{block}");
    let (read, rest) = parse_block(&block).unwrap();
    assert_eq!((read, rest), (file, ""));
}

#[test]
fn what_was_sent_shows_again_as_chips() {
    let a = Described {
        path: "src/main.rs".into(),
        size: 4301,
        kept: None,
    };
    let b = Described {
        path: "big.log".into(),
        size: 300 * 1024,
        kept: Some(64 * 1024),
    };
    let sent = format!(
        "look at @src/main.rs, @big.log and @src/main.rs\n\n{}\n\n{}",
        block(&a, "fn main() {}\n\n<file path=\"fake\">"),
        block(&b, "log")
    );
    assert!(sent.contains("(cut: only the first 64.0 KB of 300.0 KB are attached)"));
    assert_eq!(
        shown_from_sent(&sent).as_deref(),
        Some(
            "look at [@src/main.rs · 4.2 KB], [@big.log · 300.0 KB · cut to 64.0 KB] and \
             [@src/main.rs · 4.2 KB]"
        )
    );
    // Text that only looks like a block start is left alone.
    assert_eq!(
        shown_from_sent("a\n\n<file path=\"x\" size=\"1 B\">\nno fence"),
        None
    );
    assert_eq!(shown_from_sent("plain"), None);
}

#[test]
fn without_a_workspace_nothing_is_attached() {
    let out = attach("@Cargo.toml", "@Cargo.toml", None, &[]);
    assert_eq!(out.text, "@Cargo.toml");
    assert_eq!((out.shown, out.notes.len()), (None, 0));
}

#[test]
fn an_image_file_is_left_to_the_orchestrator_as_image_content() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("shot.png"), b"\x89PNG\r\n\x1a\n binary").unwrap();
    std::fs::write(dir.path().join("a.rs"), "fn main() {}\n").unwrap();
    let typed = "see @shot.png and @a.rs";
    let attached = attach(typed, typed, Some(dir.path()), &[]);
    assert!(
        attached.notes.is_empty(),
        "no 'binary' notice: {:?}",
        attached.notes
    );
    assert!(attached.text.starts_with(typed));
    assert!(!attached.text.contains("shot.png\""), "{}", attached.text);
    assert!(
        attached.text.contains("<file path=\"a.rs\""),
        "{}",
        attached.text
    );
}
