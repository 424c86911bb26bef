use std::time::Instant;

use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::*;

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

fn alt(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::ALT)
}

fn typed(c: &mut Composer, text: &str) {
    for ch in text.chars() {
        c.input(key(KeyCode::Char(ch)));
    }
}

fn sent(c: &mut Composer, text: &str) {
    typed(c, text);
    c.take();
}

/// The composer drawn at `width`, as tall as it asks to be, with its row count on top.
fn screen(c: &mut Composer, width: u16) -> String {
    let rows = c.rows(width);
    let mut terminal = Terminal::new(TestBackend::new(width, rows)).unwrap();
    terminal
        .draw(|f| c.render(f.area(), f.buffer_mut(), &Theme::default(), true, "ask"))
        .unwrap();
    let buffer = terminal.backend().buffer();
    let mut out = format!("rows: {rows}\n");
    for y in 0..buffer.area.height {
        let line: String = (0..buffer.area.width)
            .map(|x| buffer[(x, y)].symbol())
            .collect();
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn snapshot(name: &str, value: &str) {
    insta::with_settings!({snapshot_path => "../snapshots"}, {
        insta::assert_snapshot!(name, value);
    });
}

/// Sixty words, one line: what a long prompt typed without line breaks looks like.
fn sixty_words() -> String {
    (1..=60)
        .map(|i| format!("word{i}"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn history_recall_walks_back_and_returns_to_the_draft() {
    let mut c = Composer::new();
    typed(&mut c, "first");
    assert_eq!(c.take(), "first");
    sent(&mut c, "second");
    typed(&mut c, "draft");
    c.input(key(KeyCode::Up));
    assert_eq!(c.text(), "second");
    c.input(key(KeyCode::Up));
    assert_eq!(c.text(), "first");
    c.input(key(KeyCode::Up));
    assert_eq!(c.text(), "first", "stops at the oldest");
    c.input(key(KeyCode::Down));
    c.input(key(KeyCode::Down));
    assert_eq!(c.text(), "draft");
    // Ctrl-P and Ctrl-N walk it too, as in readline.
    c.input(ctrl('p'));
    assert_eq!(c.text(), "second");
    c.input(ctrl('n'));
    assert_eq!(c.text(), "draft");
}

#[test]
fn newlines_and_small_pastes_stay_in_the_text() {
    let mut c = Composer::new();
    typed(&mut c, "a");
    c.newline();
    typed(&mut c, "b");
    c.paste("\r\nc\rd");
    assert_eq!(c.text(), "a\nb\nc\nd");
    assert_eq!(c.rows(40), 4);
    assert!(!c.is_empty());
    c.take();
    assert!(c.is_empty());
    assert_eq!(c.rows(40), 1);
}

#[test]
fn the_height_follows_wrapped_rows_up_to_the_cap() {
    let mut c = Composer::new();
    typed(&mut c, &sixty_words());
    // 60 words of 5 to 6 chars and their spaces: about 410 columns.
    assert_eq!(c.rows(120), 4);
    assert_eq!(c.rows(200), 3, "a new width lays it out again");
    assert_eq!(c.rows(30), MAX_ROWS, "capped; it scrolls past that");
    snapshot("composer_sixty_words_at_60", &screen(&mut c, 60));
    let capped = screen(&mut c, 30);
    assert!(
        capped.contains("word60"),
        "the cursor's row shows:\n{capped}"
    );
    assert!(
        !capped.contains("word1 "),
        "the start scrolled off:\n{capped}"
    );
    snapshot("composer_capped_at_30", &capped);
    // Wide chars take two columns each.
    let mut c = Composer::new();
    typed(&mut c, &"界".repeat(30));
    assert_eq!(c.rows(20), 3);
}

#[test]
fn shrinking_text_or_a_wider_screen_leaves_no_blank_rows() {
    let mut c = Composer::new();
    typed(&mut c, &sixty_words());
    screen(&mut c, 30);
    for _ in 0..50 {
        c.input(ctrl('w'));
    }
    let shown = screen(&mut c, 30);
    assert!(shown.starts_with("rows: 3\nword1 "), "{shown}");
    typed(&mut c, &format!(" {}", sixty_words()));
    screen(&mut c, 30);
    let wide = screen(&mut c, 100);
    assert!(wide.starts_with("rows: 5\nword1 "), "{wide}");
}

#[test]
fn up_moves_through_wrapped_rows_before_recalling() {
    let mut c = Composer::new();
    sent(&mut c, "older");
    typed(&mut c, &sixty_words());
    c.rows(60);
    let rows = c.rows(60);
    assert!(rows > 2);
    for _ in 1..rows {
        c.input(key(KeyCode::Up));
        assert!(c.text().starts_with("word1 "), "still the draft");
    }
    c.input(key(KeyCode::Up));
    assert_eq!(c.text(), "older");
    c.input(key(KeyCode::Down));
    assert_eq!(c.text(), sixty_words(), "the draft is back");
}

#[test]
fn a_recalled_multi_line_prompt_puts_the_cursor_at_its_start() {
    let mut c = Composer::new();
    sent(&mut c, "one line");
    c.paste("first\nsecond\nthird");
    c.take();
    c.input(key(KeyCode::Up));
    assert_eq!(c.text(), "first\nsecond\nthird");
    assert_eq!(c.area.cursor(), (0, 0));
    // So the next Up goes on to the prompt before.
    c.input(key(KeyCode::Up));
    assert_eq!(c.text(), "one line");
    assert_eq!(c.area.cursor(), (0, 8), "a one-line prompt: at its end");
}

#[test]
fn readline_keys_edit_the_line() {
    let mut c = Composer::new();
    typed(&mut c, "git commit -m 'fix: naïve café'");
    c.input(ctrl('w'));
    assert_eq!(
        c.text(),
        "git commit -m 'fix: naïve ",
        "Ctrl-W stops at whitespace"
    );
    c.input(ctrl('w'));
    assert_eq!(c.text(), "git commit -m 'fix: ");
    c.input(ctrl('y'));
    assert_eq!(
        c.text(),
        "git commit -m 'fix: naïve ",
        "Ctrl-Y yanks it back"
    );
    c.input(ctrl('a'));
    typed(&mut c, "» ");
    assert_eq!(c.text(), "» git commit -m 'fix: naïve ");
    c.input(ctrl('e'));
    typed(&mut c, "x");
    assert_eq!(c.text(), "» git commit -m 'fix: naïve x");
    c.input(alt('b'));
    c.input(alt('b'));
    typed(&mut c, "très ");
    assert_eq!(c.text(), "» git commit -m 'fix: très naïve x");
    c.input(alt('f'));
    typed(&mut c, "!");
    assert_eq!(
        c.text(),
        "» git commit -m 'fix: très naïve! x",
        "Alt-F: to the word's end"
    );
    c.input(alt('b'));
    c.input(alt('b'));
    c.input(alt('b'));
    typed(&mut c, "<");
    assert_eq!(
        c.text(),
        "» git commit -m '<fix: très naïve! x",
        "Alt-B: words are letters and digits"
    );
    c.input(alt('f'));
    c.input(alt('f'));
    c.input(alt('f'));
    c.input(ctrl('u'));
    assert_eq!(c.text(), "! x", "Ctrl-U deletes to the line start");
    c.input(ctrl('u'));
    assert_eq!(
        c.text(),
        "! x",
        "nothing before the cursor: nothing happens"
    );
    c.input(ctrl('k'));
    assert_eq!(c.text(), "");
}

#[test]
fn ctrl_u_and_ctrl_w_stay_on_their_line() {
    let mut c = Composer::new();
    typed(&mut c, "keep this");
    c.newline();
    typed(&mut c, "日本語 テキスト");
    c.input(ctrl('w'));
    assert_eq!(c.text(), "keep this\n日本語 ");
    c.input(ctrl('u'));
    assert_eq!(c.text(), "keep this\n");
    c.input(ctrl('u'));
    assert_eq!(
        c.text(),
        "keep this\n",
        "Ctrl-U at a line start keeps the break"
    );
    c.input(ctrl('w'));
    assert_eq!(c.text(), "keep this", "Ctrl-W joins, like Backspace");
}

#[test]
fn undo_is_ctrl_z_and_redo_alt_z() {
    let mut c = Composer::new();
    typed(&mut c, "hello world");
    c.input(ctrl('w'));
    assert_eq!(c.text(), "hello ");
    c.input(ctrl('z'));
    assert_eq!(c.text(), "hello world");
    c.input(alt('z'));
    assert_eq!(c.text(), "hello ");
    c.input(ctrl('u'));
    assert_eq!(c.text(), "");
    c.input(ctrl('_'));
    assert_eq!(c.text(), "hello ", "Ctrl-_ undoes too");
}

#[test]
fn big_pastes_are_chips_and_are_sent_whole() {
    let mut c = Composer::new();
    typed(&mut c, "explain ");
    let log: String = (1..=40).map(|i| format!("line {i}\n")).collect();
    let log = log.trim_end().to_string();
    c.paste(&log);
    typed(&mut c, " please");
    assert_eq!(c.typed(), "explain [pasted 40 lines] please");
    assert_eq!(c.rows(60), 1);
    let full = format!("explain {log} please");
    assert_eq!(c.text(), full);
    assert_eq!(c.take_message().text, full);
    assert_eq!(
        c.shown(&full).as_deref(),
        Some("explain [pasted 40 lines] please")
    );
    assert_eq!(c.shown("explain"), None);
    assert_eq!(c.take_unsaved(), std::slice::from_ref(&full));
    // Recalled, the chip comes back with its paste.
    c.input(key(KeyCode::Up));
    assert_eq!(c.typed(), "explain [pasted 40 lines] please");
    assert_eq!(c.text(), full);
}

#[test]
fn a_chip_edited_away_drops_its_paste() {
    let mut c = Composer::new();
    c.paste(&"x\n".repeat(20));
    assert_eq!(c.typed(), "[pasted 21 lines]");
    c.input(key(KeyCode::Backspace));
    assert_eq!(c.text(), "[pasted 21 lines");
    c.input(ctrl('u'));
    c.paste(&"y\n".repeat(20));
    assert_eq!(c.typed(), "[pasted 21 lines]", "the label is free again");
    assert_eq!(c.text(), "y\n".repeat(20));
}

#[test]
fn a_ten_megabyte_paste_stays_quick() {
    let mut c = Composer::new();
    let big = "0123456789abcdef\n".repeat(10 << 16);
    let started = Instant::now();
    c.paste(&big);
    typed(&mut c, " and this");
    for width in [40, 120] {
        c.rows(width);
        screen(&mut c, width);
    }
    assert_eq!(c.typed(), "[pasted 655361 lines] and this");
    assert_eq!(c.text().len(), big.len() + " and this".len());
    let text = c.take();
    assert!(text.starts_with("0123456789abcdef\n"));
    assert!(
        started.elapsed().as_secs() < 5,
        "took {:?}",
        started.elapsed()
    );
    // One long line is a chip too.
    c.paste(&"z".repeat(COLLAPSE_CHARS + 1));
    assert_eq!(c.typed(), format!("[pasted {} chars]", COLLAPSE_CHARS + 1));
}

#[test]
fn ctrl_c_puts_a_draft_into_the_history() {
    let mut c = Composer::new();
    assert!(!c.clear_to_history(), "nothing to put aside");
    typed(&mut c, "half a thought");
    assert!(c.clear_to_history());
    assert!(c.is_empty());
    assert_eq!(c.take_unsaved(), ["half a thought"]);
    c.input(key(KeyCode::Up));
    assert_eq!(c.text(), "half a thought");
    // Blanks are cleared, not remembered.
    let mut c = Composer::new();
    typed(&mut c, "  ");
    c.newline();
    assert!(c.clear_to_history());
    assert!(c.is_empty() && c.take_unsaved().is_empty());
}

#[test]
fn history_from_earlier_launches_comes_first() {
    let mut c = Composer::new();
    c.set_history(vec!["from yesterday".into(), "line one\nline two".into()]);
    sent(&mut c, "today");
    assert_eq!(
        c.take_unsaved(),
        ["today"],
        "loaded entries are not saved again"
    );
    c.input(key(KeyCode::Up));
    c.input(key(KeyCode::Up));
    assert_eq!(c.text(), "line one\nline two");
    c.input(key(KeyCode::Up));
    assert_eq!(c.text(), "from yesterday");
    // A repeat of the last prompt is remembered once.
    let mut c = Composer::new();
    sent(&mut c, "same");
    sent(&mut c, "same");
    assert_eq!(c.take_unsaved(), ["same"]);
}

#[test]
fn the_history_is_capped() {
    let mut c = Composer::new();
    c.set_history((0..MAX_HISTORY + 10).map(|i| format!("p{i}")).collect());
    assert_eq!(c.history.len(), MAX_HISTORY);
    assert_eq!(c.history[0].typed, "p10");
    // Big pastes count by their bytes: the oldest go first, the newest stays.
    let draft = |typed: &str, pasted: usize| Draft {
        typed: typed.into(),
        pastes: vec![Paste {
            label: "[p]".into(),
            text: "q".repeat(pasted),
        }],
    };
    let mut history = vec![draft("a", 50), draft("b", 30), draft("c", 40)];
    trim(&mut history, 10, 80);
    let kept: Vec<&str> = history.iter().map(|d| d.typed.as_str()).collect();
    assert_eq!(kept, ["b", "c"]);
    trim(&mut history, 10, 1);
    assert_eq!(history.len(), 1, "the newest stays");
    assert_eq!(history[0].typed, "c");
}

#[test]
fn ctrl_r_finds_an_earlier_prompt_and_enter_takes_it() {
    let mut c = Composer::new();
    c.set_history(vec![
        "cargo test --all".into(),
        "git status".into(),
        "cargo clippy".into(),
    ]);
    typed(&mut c, "draft");
    c.input(ctrl('r'));
    assert!(c.is_searching());
    assert_eq!(screen(&mut c, 50), "rows: 1\n(reverse-i-search)'':\n");
    for ch in "cargo".chars() {
        assert_eq!(c.search_key(key(KeyCode::Char(ch))), SearchStep::Used);
    }
    snapshot("composer_search", &screen(&mut c, 50));
    c.search_key(ctrl('r'));
    assert!(screen(&mut c, 50).contains("'cargo': cargo test --all"));
    assert_eq!(c.search_key(key(KeyCode::Enter)), SearchStep::Used);
    assert!(!c.is_searching());
    assert_eq!(c.text(), "cargo test --all", "in the editor, not sent");
    assert!(c.take_unsaved().is_empty());
    c.input(key(KeyCode::Down));
    assert_eq!(c.text(), "git status", "the history goes on from the match");
    c.input(key(KeyCode::Down));
    c.input(key(KeyCode::Down));
    assert_eq!(c.text(), "draft");
}

#[test]
fn esc_leaves_the_search_and_other_keys_take_the_match() {
    let mut c = Composer::new();
    c.set_history(vec!["git status".into(), "git log".into()]);
    typed(&mut c, "draft");
    c.input(ctrl('r'));
    c.search_key(key(KeyCode::Char('s')));
    c.search_key(key(KeyCode::Char('t')));
    assert_eq!(c.search_key(key(KeyCode::Esc)), SearchStep::Used);
    assert!(!c.is_searching());
    assert_eq!(c.text(), "draft");
    c.input(ctrl('r'));
    c.search_key(key(KeyCode::Char('l')));
    assert_eq!(c.search_key(ctrl('e')), SearchStep::Accepted);
    assert_eq!(c.text(), "git log");
    // A paste goes into the query.
    c.input(ctrl('r'));
    c.paste("git\nst");
    assert!(screen(&mut c, 50).contains("'git st': git status"));
    c.search_key(key(KeyCode::Esc));
    assert_eq!(c.text(), "git log");
    // Nothing found: the draft stays.
    let mut c = Composer::new();
    c.set_history(vec!["git log".into()]);
    typed(&mut c, "mine");
    c.input(ctrl('r'));
    c.search_key(key(KeyCode::Char('Z')));
    assert!(screen(&mut c, 50).contains("(failing reverse-i-search)'Z':"));
    c.search_key(key(KeyCode::Enter));
    assert_eq!(c.text(), "mine");
}

#[test]
fn never_panics_on_any_size() {
    let mut c = Composer::new();
    typed(
        &mut c,
        &format!("{} 界界界 {}", sixty_words(), "x".repeat(300)),
    );
    c.newline();
    c.newline();
    for width in [0, 1, 2, 3, 5, 10, 80] {
        let rows = c.rows(width);
        assert!((1..=MAX_ROWS).contains(&rows));
        for height in [0, 1, 3] {
            let mut terminal = Terminal::new(TestBackend::new(width.max(1), height)).unwrap();
            terminal
                .draw(|f| c.render(f.area(), f.buffer_mut(), &Theme::default(), true, "p"))
                .unwrap();
        }
        c.input(key(KeyCode::Up));
        c.input(ctrl('w'));
    }
    c.input(ctrl('r'));
    c.search_key(key(KeyCode::Char('w')));
    for width in [0, 1, 4, 80] {
        c.rows(width);
    }
}

#[test]
fn the_popup_follows_the_word_at_the_cursor() {
    let mut c = Composer::new();
    typed(&mut c, "/help");
    assert_eq!(c.popup().map(|p| p.0), Some(PopupKind::Command));
    // Before the slash nothing of the word is typed yet.
    c.input(ctrl('a'));
    assert_eq!(c.popup(), None);
    // Back inside it, the query is what precedes the cursor and Tab replaces the whole word.
    c.input(key(KeyCode::Right));
    c.input(key(KeyCode::Right));
    c.input(key(KeyCode::Right));
    assert_eq!(c.popup().map(|p| p.1[0].clone()), Some("/help".into()));
    assert!(c.popup_key(key(KeyCode::Tab)));
    assert_eq!(c.typed(), "/help");
    // Arguments close it; keys with Ctrl or Alt are never the popup's.
    typed(&mut c, " x");
    assert_eq!(c.popup(), None);
    c.set_text("/c");
    assert!(!c.popup_key(ctrl('n')));
    // A mention in a command is not looked up; one in a message is (without a workspace the
    // finder says there is nothing to list).
    c.set_text("/tool @x");
    assert_eq!(c.popup(), None);
    c.set_text("see @x");
    assert_eq!(c.popup().map(|p| p.0), Some(PopupKind::File));
    assert!(!c.is_listing());
}
