//! The detail view's colours: highlighted JSON payloads and an approval's diff.

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::Color;
use serde_json::json;

use super::super::TimelineState;
use super::super::tests::open;
use super::*;
use crate::event::Event;
use crate::tui::overlay::{DrawCtx, Overlay};
use crate::tui::views::fed::Fed;

const OLD: &str = "fn main() {\n    println!(\"old\");\n}\n";
const NEW: &str = "fn main() {\n    // greet\n    let name = \"a long string literal that wraps\";\n    println!(\"{name}\");\n}\n";

/// A run that asks to write `src/main.rs`: the detail of its `approval_requested` row.
fn approval_detail() -> Detail {
    let diff = crate::tools::diff::render("src/main.rs", Some(OLD), NEW);
    let data = json!({
        "id": "call_1",
        "name": "write_file",
        "arguments": {"path": "src/main.rs", "content": NEW, "mode": 420, "create": true},
        "position": 1,
        "of": 1,
        "diff": diff,
    });
    let mut state = Fed::new(TimelineState::new());
    for (kind, data) in [
        (
            "run_started",
            json!({"prompt": "p", "provider": "openai", "model": "m", "max_turns": 10}),
        ),
        ("approval_requested", data),
    ] {
        let line = json!({"type": kind, "timestamp": 0, "request_id": "r", "data": data});
        let event: Event = serde_json::from_value(line).unwrap();
        state.on_event(&event);
    }
    open(&mut state)
}

fn draw(detail: &mut Detail, width: u16, height: u16) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    let theme = Theme::default();
    let ctx = DrawCtx {
        theme: &theme,
        gate: Default::default(),
        stack: &[],
    };
    terminal
        .draw(|f| detail.render(f.area(), f.buffer_mut(), &ctx))
        .unwrap();
    terminal
}

/// The foreground of the cell where `needle` starts, on the first row below the one with
/// `below` that has it.
fn fg_at(terminal: &Terminal<TestBackend>, below: &str, needle: &str) -> Option<Color> {
    let buf = terminal.backend().buffer();
    let width = usize::from(buf.area.width);
    let rows: Vec<String> = buf
        .content
        .chunks(width)
        .map(|row| row.iter().map(|c| c.symbol()).collect())
        .collect();
    let start = rows.iter().position(|r| r.contains(below)).unwrap();
    let (y, row) = rows
        .iter()
        .enumerate()
        .skip(start + 1)
        .find(|(_, r)| r.contains(needle))
        .unwrap_or_else(|| panic!("{needle:?} on screen:\n{}", rows.join("\n")));
    let col = row[..row.find(needle).unwrap()].chars().count();
    buf.cell((col as u16, y as u16)).map(|c| c.fg)
}

#[test]
fn an_approvals_detail_shows_its_diff_coloured_and_its_arguments_highlighted() {
    let mut detail = approval_detail();
    let terminal = draw(&mut detail, 60, 40);
    insta::with_settings!({snapshot_path => "../../snapshots"}, {
        insta::assert_snapshot!("timeline_detail_approval_diff", terminal.backend().to_string());
    });
    let theme = Theme::default();
    let syntax = theme.syntax;
    // The diff: removed red, added code by language on a green base, context in code colours.
    assert_eq!(
        fg_at(&terminal, "── change", "-    println!(\"old\")"),
        theme.error.fg
    );
    assert_eq!(
        fg_at(&terminal, "── change", "+    let"),
        theme.ok.fg,
        "the + mark"
    );
    assert_eq!(fg_at(&terminal, "── change", "let name"), syntax.keyword.fg);
    assert_eq!(
        fg_at(&terminal, "── change", " name ="),
        theme.ok.fg,
        "plain code on an added line"
    );
    assert_eq!(fg_at(&terminal, "── change", "\"a long"), syntax.string.fg);
    assert_eq!(fg_at(&terminal, "── change", "// greet"), syntax.comment.fg);
    assert_eq!(
        fg_at(&terminal, "── change", "fn main"),
        syntax.keyword.fg,
        "context line"
    );
    assert_eq!(fg_at(&terminal, "── change", "@@"), theme.dim.fg);
    // The arguments: JSON keys, strings and numbers apart from the code tone.
    assert_eq!(fg_at(&terminal, "── arguments", "\"path\""), syntax.key.fg);
    assert_eq!(
        fg_at(&terminal, "── arguments", "\"src/main.rs\""),
        syntax.string.fg
    );
    assert_eq!(fg_at(&terminal, "── arguments", "420"), syntax.constant.fg);
    assert_eq!(fg_at(&terminal, "── arguments", "true"), syntax.constant.fg);
    assert_eq!(fg_at(&terminal, "── arguments", "{"), theme.code.fg);
    assert_ne!(syntax.key.fg, syntax.string.fg);
    assert_ne!(syntax.string.fg, theme.code.fg);
}

#[test]
fn a_wrapped_highlighted_line_keeps_its_colours_on_every_part() {
    let mut detail = approval_detail();
    // At 24 columns the added string literal wraps: its second part is still a string.
    let terminal = draw(&mut detail, 24, 60);
    let string = Theme::default().syntax.string.fg;
    assert_eq!(fg_at(&terminal, "── change", "literal"), string);
    assert_eq!(fg_at(&terminal, "── arguments", "literal"), string);
    let text: Vec<String> = detail.lines.iter().map(|l| l.text.clone()).collect();
    assert!(text.contains(&"── change".to_string()), "{text:?}");
    for line in &detail.lines {
        if let Some(&(end, _)) = line.runs.last() {
            assert!(end <= line.text.len(), "{line:?}");
        }
    }
}

#[test]
fn a_compaction_shows_its_counts_and_its_summary_as_prose() {
    let data = json!({
        "trigger": "auto", "before_tokens": 91000, "after_tokens": 12000, "window": 128000,
        "summarized": 40, "kept_from": 41, "summary": "The user asked for X.\nWe found Y.",
        "usage": {"input_tokens": 1, "output_tokens": 1}, "duration_ms": 900,
    });
    let mut state = Fed::new(TimelineState::new());
    let line = json!({"type": "compacted", "timestamp": 0, "request_id": "r", "data": data});
    let event: Event = serde_json::from_value(line).unwrap();
    state.on_event(&event);
    let mut detail = open(&mut state);
    let terminal = draw(&mut detail, 60, 20);
    let text: String = terminal
        .backend()
        .buffer()
        .content
        .iter()
        .map(|c| c.symbol())
        .collect();
    assert!(text.contains("91000 → 12000"), "{text}");
    assert!(text.contains("auto"), "{text}");
    assert!(
        text.contains("We found Y."),
        "the summary's lines, not an escaped string: {text}"
    );
    assert!(!text.contains("\\n"), "{text}");
}

/// The rows of a drawn detail.
fn rows(terminal: &Terminal<TestBackend>) -> Vec<String> {
    let buf = terminal.backend().buffer();
    (buf.content.chunks(usize::from(buf.area.width)))
        .map(|row| row.iter().map(|c| c.symbol()).collect())
        .collect()
}

#[test]
fn unwrapped_lines_are_cut_and_pan_and_wrapped_ones_hang_under_their_start() {
    use crate::tui::layout::Focus;
    use crate::tui::overlay::{Effect, Handled, KeyCtx};
    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let ctx = KeyCtx {
        focus: Focus::Timeline,
        held: false,
    };
    let key = |code| KeyEvent::new(code, KeyModifiers::NONE);
    let mut detail = approval_detail();
    // Wrapped: the long argument line's further rows hang two cells under its start.
    let wrapped = rows(&draw(&mut detail, 40, 60));
    let at = (wrapped.iter())
        .position(|r| r.starts_with("  \"content\""))
        .unwrap();
    assert!(wrapped[at + 1].starts_with("    "), "{wrapped:#?}");
    assert!(
        !detail.on_key(key(KeyCode::Right), &ctx).taken(),
        "nothing to pan"
    );
    // Unwrapped: one row a line, `›` where it is cut; → pans and `‹` says so.
    assert!(detail.on_key(key(KeyCode::Char('w')), &ctx).taken());
    let cut = rows(&draw(&mut detail, 40, 60));
    assert_eq!(cut.len(), 60);
    let content = cut.iter().find(|r| r.starts_with("  \"content\"")).unwrap();
    assert!(content.ends_with('›'), "{content}");
    assert!(cut.iter().any(|r| r.contains("←→ pan")), "{cut:#?}");
    assert!(detail.on_key(key(KeyCode::Right), &ctx).taken());
    let panned = rows(&draw(&mut detail, 40, 60));
    let content = panned.iter().find(|r| r.contains("main() {")).unwrap();
    assert!(content.starts_with('‹'), "{content}");
    assert!(!content.contains("\"content\""), "8 cells in: {content}");
    // Panning stops where the widest line ends.
    for _ in 0..100 {
        detail.on_key(key(KeyCode::Right), &ctx);
    }
    let far = rows(&draw(&mut detail, 40, 60));
    assert!(far.iter().all(|r| !r.ends_with('›')), "{far:#?}");
    // z takes it to the whole screen, as it is.
    let Handled::Effects(mut effects) = detail.on_key(key(KeyCode::Char('z')), &ctx) else {
        panic!("z zooms");
    };
    assert!(detail.finished(), "the pane's view closes");
    assert!(matches!(effects.pop(), Some(Effect::Open(_))));
}
