use super::draw::wrap;
use super::*;
use crate::tui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

fn model(provider: &str, model: &str) -> Row {
    let pick = Pick::Model {
        provider: provider.into(),
        model: model.into(),
    };
    Row::item(provider, model, provider, pick)
}

fn picked(picker: &Picker) -> Option<String> {
    match picker.selected()? {
        Pick::Model { model, .. } => Some(model.clone()),
        Pick::Session { id } => Some(id.clone()),
        Pick::ThisSession => Some("this".into()),
        Pick::Rewind(point) => Some(format!("{point:?}")),
    }
}

fn picker() -> Picker {
    Picker::new(
        "models",
        "switch model",
        vec![
            model("local", "qwen3:8b"),
            Row::loading("local", "asking local…"),
            model("cloud", "gpt-4.1-mini"),
            model("cloud", "GPT-5"),
            Row::error("cloud", "cloud: no answer"),
        ],
        "no models configured",
    )
}

#[test]
fn typing_filters_by_every_word_case_insensitively_and_selects_the_first_match() {
    let mut p = picker();
    assert_eq!(picked(&p).as_deref(), Some("qwen3:8b"));
    p.type_text("gpt");
    assert_eq!(picked(&p).as_deref(), Some("gpt-4.1-mini"));
    p.type_text(" 5");
    assert_eq!(
        picked(&p).as_deref(),
        Some("GPT-5"),
        "upper case matches too"
    );
    // Words match the detail (the provider) as well, in any order.
    p.clear_filter();
    p.type_text("CLOUD mini");
    assert_eq!(picked(&p).as_deref(), Some("gpt-4.1-mini"));
    // Loading and error rows stay: they say why a match may be missing.
    let texts: Vec<&str> = p.shown().iter().map(|r| r.text.as_str()).collect();
    assert_eq!(texts, ["asking local…", "gpt-4.1-mini", "cloud: no answer"]);
    p.type_text("zzz");
    assert_eq!(picked(&p), None, "nothing to choose");
    p.backspace();
    p.backspace();
    p.backspace();
    assert_eq!(picked(&p).as_deref(), Some("gpt-4.1-mini"));
}

#[test]
fn moving_skips_rows_that_are_not_choices_and_stops_at_the_ends() {
    let mut p = picker();
    p.move_by(1);
    assert_eq!(
        picked(&p).as_deref(),
        Some("gpt-4.1-mini"),
        "the loading row is skipped"
    );
    p.move_by(5);
    assert_eq!(
        picked(&p).as_deref(),
        Some("GPT-5"),
        "stops at the last choice"
    );
    p.move_by(-9);
    assert_eq!(picked(&p).as_deref(), Some("qwen3:8b"));
    p.jump(true);
    assert_eq!(picked(&p).as_deref(), Some("GPT-5"));
    p.jump(false);
    assert_eq!(picked(&p).as_deref(), Some("qwen3:8b"));
}

#[test]
fn a_group_filled_in_later_keeps_its_place_and_the_selection() {
    let mut p = picker();
    p.move_by(2);
    assert_eq!(picked(&p).as_deref(), Some("GPT-5"));
    p.set_group(
        "local",
        vec![model("local", "llama3.2"), model("local", "qwen3:8b")],
    );
    let texts: Vec<&str> = p.shown().iter().map(|r| r.text.as_str()).collect();
    assert_eq!(texts[..2], ["llama3.2", "qwen3:8b"], "where the group was");
    assert_eq!(
        picked(&p).as_deref(),
        Some("GPT-5"),
        "the selection stays on its choice"
    );
    p.set_group("new", vec![model("new", "m")]);
    assert_eq!(
        p.shown().last().map(|r| r.text.as_str()),
        Some("m"),
        "a new group goes last"
    );
}

#[test]
fn row_text_is_one_line_whatever_it_was_given() {
    let row = Row::item(
        "g",
        "fix\nthe\tbug\u{1b}[2J",
        "a\nb",
        Pick::Session { id: "1".into() },
    );
    assert_eq!(row.text, "fix the bug [2J");
    assert_eq!(row.detail, "a b");
}

#[test]
fn errors_wrap_at_spaces_and_long_words_are_cut() {
    assert_eq!(wrap("one two three", 8), ["one two", "three"]);
    assert_eq!(wrap("abcdefghijkl", 8), ["abcdefgh", "ijkl"]);
    assert_eq!(wrap("", 8), [""]);
}

#[test]
fn ages_read_naturally() {
    let now = 10_000_000_000;
    assert_eq!(age(now - 5_000, now), "just now");
    assert_eq!(age(now - 5 * 60_000, now), "5 min ago");
    assert_eq!(age(now - 3 * 3_600_000, now), "3 h ago");
    assert_eq!(age(now - 2 * 86_400_000, now), "2 d ago");
    assert_eq!(age(now + 1, now), "just now", "a clock that went back");
}

#[test]
fn page_keys_move_by_the_rows_last_drawn() {
    let rows = (0..50).map(|i| model("p", &format!("m{i:02}"))).collect();
    let mut p = Picker::new("models", "t", rows, "none");
    let mut buf = Buffer::empty(Rect::new(0, 0, 80, 24));
    p.draw(buf.area, &mut buf, &Theme::default());
    let text: String = (buf.content.iter()).map(|c| c.symbol()).collect();
    assert!(text.contains("↓ 32 more"), "what is cut is said: {text}");
    assert!(
        text.contains("Enter choose") && text.contains("Esc close"),
        "{text}"
    );
    p.page_by(1);
    // 24 rows: 2 margin, 2 borders, the filter and the hints leave 18 for the list.
    assert_eq!(picked(&p).as_deref(), Some("m18"));
    p.page_by(-1);
    assert_eq!(picked(&p).as_deref(), Some("m00"));
}

#[test]
fn an_empty_list_says_whether_there_is_none_or_the_filter_left_none() {
    let text = |p: &mut Picker| {
        let mut buf = Buffer::empty(Rect::new(0, 0, 60, 20));
        p.draw(buf.area, &mut buf, &Theme::default());
        (buf.content.iter()).map(|c| c.symbol()).collect::<String>()
    };
    let mut p = Picker::new("sessions", "resume", Vec::new(), "no saved sessions yet");
    assert!(text(&mut p).contains("no saved sessions yet"));
    let mut p = picker();
    p.set_group("local", vec![model("local", "qwen3:8b")]);
    p.type_text("zzz");
    let shown = text(&mut p);
    assert!(shown.contains("nothing matches the filter"), "{shown}");
    assert!(
        shown.contains("cloud: no answer"),
        "an error row still shows: {shown}"
    );
    // While something is still coming, that is what is said instead.
    let mut p = picker();
    p.type_text("zzz");
    let shown = text(&mut p);
    assert!(
        !shown.contains("nothing matches") && shown.contains("asking local…"),
        "{shown}"
    );
}
