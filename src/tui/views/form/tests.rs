//! The form's model without a terminal (each kind of field, defaults, required, every
//! reason, the three answers, keys typed ahead), and snapshots of it drawn.

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::{Value, json};

use super::*;
use crate::event::{InputKind, InputRequest};
use crate::form::FormSpec;
use crate::form::spec::tests::{rich, rich_order};
use crate::tools::AskReply;
use crate::tui::layout::Focus;
use crate::tui::overlay::{Effect, FormDialog, Handled, KeyCtx, Overlay};
use crate::tui::theme::Theme;
use crate::tui::views::gate::Gate;

fn request(schema: &Value, order: &[String]) -> InputRequest {
    InputRequest {
        id: "a/form1".into(),
        kind: InputKind::Form,
        frame: "a/elicitation-1".into(),
        tool: "MCP server everything".into(),
        prompt: "MCP server everything asks: Please provide inputs for the following fields:"
            .into(),
        parameter: None,
        description: None,
        value_type: None,
        depth: None,
        form: Some(FormSpec::parse(schema, order).unwrap()),
    }
}

fn fresh() -> FormState {
    FormState::new(request(&rich(), &rich_order())).unwrap()
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn typed(form: &mut FormState, text: &str) {
    for c in text.chars() {
        assert_eq!(form.on_key(key(KeyCode::Char(c))), Step::Used);
    }
}

/// Moves the cursor to the field called `name`.
fn to(form: &mut FormState, name: &str) {
    let i = form
        .spec
        .fields
        .iter()
        .position(|f| f.name == name)
        .unwrap();
    while form.at() != Some(i) {
        form.on_key(key(KeyCode::Tab));
    }
}

fn clear(form: &mut FormState) {
    form.on_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
}

fn error_of(form: &FormState, name: &str) -> Option<String> {
    let i = form
        .spec
        .fields
        .iter()
        .position(|f| f.name == name)
        .unwrap();
    form.error(i)
}

/// Presses `button`: to the row of buttons, its letter, Enter.
fn press(form: &mut FormState, letter: char) -> Step {
    while form.at().is_some() {
        form.on_key(key(KeyCode::Tab));
    }
    form.on_key(key(KeyCode::Char(letter)));
    form.on_key(key(KeyCode::Enter))
}

#[test]
fn defaults_are_filled_in_and_empty_optional_fields_are_left_out() {
    let mut form = fresh();
    assert_eq!(
        form.entry(6),
        Some(&Entry::Text("42".into())),
        "integer default"
    );
    assert_eq!(form.entry(1), Some(&Entry::Toggle(Some(false))));
    assert_eq!(form.entry(8), Some(&Entry::Choice(Some(1))), "Ross");
    assert!(
        matches!(form.entry(11), Some(Entry::Multi { picked, .. }) if picked == &[false, true, false])
    );
    // Only the required name is missing: Accept is refused and says so beside it.
    assert_eq!(press(&mut form, 'a'), Step::Refused);
    assert_eq!(
        form.at(),
        Some(0),
        "the cursor goes to the first invalid field"
    );
    assert_eq!(form.shown_error(0).as_deref(), Some("required"));
    typed(&mut form, "Ann");
    let Step::Done(AskReply::Accept(content)) = press(&mut form, 'a') else {
        panic!("accepted");
    };
    assert_eq!(
        Value::Object(content),
        json!({"name": "Ann", "agree": false, "count": 42, "friend": "Ross", "tools": ["Piano"]}),
        "defaults sent, empty optional fields left out"
    );
}

#[test]
fn every_kind_of_field_is_filled_by_keys() {
    let mut form = fresh();
    typed(&mut form, "Ann Lee");
    to(&mut form, "agree");
    form.on_key(key(KeyCode::Char(' ')));
    to(&mut form, "email");
    typed(&mut form, "ann@example.com");
    to(&mut form, "site");
    typed(&mut form, "https://ann.example");
    to(&mut form, "born");
    typed(&mut form, "1990-05-01");
    to(&mut form, "at");
    typed(&mut form, "2024-01-01T09:30:00Z");
    to(&mut form, "count");
    clear(&mut form);
    typed(&mut form, "7");
    to(&mut form, "ratio");
    typed(&mut form, "0.5");
    to(&mut form, "friend");
    form.on_key(key(KeyCode::Left));
    to(&mut form, "hero");
    form.on_key(key(KeyCode::Right));
    form.on_key(key(KeyCode::Right));
    to(&mut form, "pet");
    form.on_key(key(KeyCode::Right));
    to(&mut form, "tools");
    form.on_key(key(KeyCode::Char(' ')));
    to(&mut form, "fish");
    form.on_key(key(KeyCode::Right));
    form.on_key(key(KeyCode::Char(' ')));
    let Step::Done(AskReply::Accept(content)) = press(&mut form, 'a') else {
        panic!(
            "accepted: {:?}",
            (0..13).map(|i| form.error(i)).collect::<Vec<_>>()
        );
    };
    assert_eq!(
        Value::Object(content),
        json!({
            "name": "Ann Lee", "agree": true, "email": "ann@example.com",
            "site": "https://ann.example", "born": "1990-05-01", "at": "2024-01-01T09:30:00Z",
            "count": 7, "ratio": 0.5, "friend": "Monica", "hero": "h2", "pet": "p1",
            "tools": ["Guitar", "Piano"], "fish": ["f2"]
        })
    );
}

#[test]
fn invalid_values_are_refused_with_their_reason_beside_the_field() {
    let mut form = fresh();
    typed(&mut form, "Ann");
    to(&mut form, "count");
    clear(&mut form);
    typed(&mut form, "500");
    assert_eq!(
        error_of(&form, "count").as_deref(),
        Some("must be 1 to 100")
    );
    clear(&mut form);
    typed(&mut form, "4.5");
    assert_eq!(
        error_of(&form, "count").as_deref(),
        Some("must be a whole number")
    );
    clear(&mut form);
    typed(&mut form, "many");
    assert_eq!(error_of(&form, "count").as_deref(), Some("not a number"));
    to(&mut form, "site");
    typed(&mut form, "not a url");
    to(&mut form, "email");
    typed(&mut form, "superman");
    to(&mut form, "born");
    typed(&mut form, "May 1st");
    to(&mut form, "tools");
    form.on_key(key(KeyCode::Right));
    form.on_key(key(KeyCode::Char(' '))); // Piano off: none picked, at least 1 wanted
    assert_eq!(press(&mut form, 'a'), Step::Refused);
    assert_eq!(form.at(), Some(2), "the first invalid field: email");
    let reasons: Vec<(usize, String)> = (0..13)
        .filter_map(|i| Some((i, form.shown_error(i)?)))
        .collect();
    assert_eq!(
        reasons,
        [
            (2, "not a valid email (name@example.com)".to_string()),
            (3, "not a valid uri (https://example.com/page)".to_string()),
            (4, "not a valid date (YYYY-MM-DD)".to_string()),
            (6, "not a number".to_string()),
        ],
        "tools left empty is optional: it is left out"
    );
    // A name too short for its minLength.
    to(&mut form, "name");
    clear(&mut form);
    typed(&mut form, "A");
    assert_eq!(
        error_of(&form, "name").as_deref(),
        Some("at least 2 characters")
    );
}

#[test]
fn a_reason_shows_once_the_field_was_changed_or_left() {
    let mut form = fresh();
    assert_eq!(
        form.shown_error(0),
        None,
        "not yet: the user has not been there"
    );
    form.on_key(key(KeyCode::Tab));
    assert_eq!(
        form.shown_error(0).as_deref(),
        Some("required"),
        "left empty"
    );
}

#[test]
fn decline_and_cancel_are_distinct_answers() {
    let mut form = fresh();
    assert_eq!(press(&mut form, 'd'), Step::Done(AskReply::Decline));
    let mut form = fresh();
    assert_eq!(press(&mut form, 'c'), Step::Done(AskReply::Cancel));
    let mut form = fresh();
    typed(&mut form, "half typed");
    assert_eq!(
        form.on_key(key(KeyCode::Esc)),
        Step::Done(AskReply::Cancel),
        "Esc cancels"
    );
    // Decline and cancel need no valid field.
    let mut form = fresh();
    to(&mut form, "count");
    typed(&mut form, "x");
    assert_eq!(press(&mut form, 'd'), Step::Done(AskReply::Decline));
}

#[test]
fn an_optional_choice_can_be_left_unpicked_and_a_toggle_unset() {
    let mut form = fresh();
    to(&mut form, "hero");
    assert_eq!(form.entry(9), Some(&Entry::Choice(None)));
    form.on_key(key(KeyCode::Right));
    assert_eq!(form.entry(9), Some(&Entry::Choice(Some(0))));
    form.on_key(key(KeyCode::Left));
    assert_eq!(form.entry(9), Some(&Entry::Choice(None)), "back to none");
    to(&mut form, "agree");
    form.on_key(key(KeyCode::Backspace));
    assert_eq!(form.entry(1), Some(&Entry::Toggle(None)));
}

#[test]
fn typed_ahead_text_never_answers_the_form() {
    // Enter on a field moves on; only Enter on the row of buttons answers, so a message
    // typed into the form (`yes` and Enter, twice) fills a field and moves, no more.
    let mut form = fresh();
    for _ in 0..2 {
        for c in "yes".chars() {
            assert_ne!(form.on_key(key(KeyCode::Char(c))), Step::Refused);
        }
        assert_eq!(form.on_key(key(KeyCode::Enter)), Step::Used);
    }
    assert_eq!(form.at(), Some(2));
    // Held by the dialog gate (keys typed before it opened), the overlay takes no answer at
    // all: the keys go on to the composer, Esc does nothing.
    let mut dialog = FormDialog::new();
    assert!(dialog.push(request(&rich(), &rich_order())));
    let held = KeyCtx {
        focus: Focus::Chat,
        held: true,
    };
    assert!(
        dialog.takes_text(),
        "the gate waits for Tab, like any dialog that takes text"
    );
    for code in [
        KeyCode::Char('y'),
        KeyCode::Enter,
        KeyCode::Tab,
        KeyCode::Char('a'),
    ] {
        assert!(!dialog.captures(&key(code), &held));
        assert!(!dialog.on_key(key(code), &held).taken(), "{code:?}");
    }
    assert!(matches!(
        dialog.on_key(key(KeyCode::Esc), &held),
        Handled::Consumed
    ));
    assert!(!dialog.finished());
    // Once the user is with it, Esc cancels, as an effect with the question's id.
    let ready = KeyCtx {
        focus: Focus::Chat,
        held: false,
    };
    let Handled::Effects(effects) = dialog.on_key(key(KeyCode::Esc), &ready) else {
        panic!("an effect");
    };
    assert!(
        matches!(&effects[..], [Effect::Fill { id, answer: AskReply::Cancel }] if id == "a/form1")
    );
    assert!(dialog.finished());
}

#[test]
fn a_paste_goes_into_the_text_field_on_one_line() {
    let mut form = fresh();
    assert!(form.on_paste("Ann\nLee"));
    assert_eq!(form.entry(0), Some(&Entry::Text("Ann Lee".into())));
    to(&mut form, "agree");
    assert!(!form.on_paste("x"));
    to(&mut form, "email");
    form.on_paste(&"x".repeat(MAX_ENTRY * 2));
    assert!(matches!(form.entry(2), Some(Entry::Text(t)) if t.len() == MAX_ENTRY));
}

fn draw(form: &mut FormState, width: u16, height: Option<u16>, gate: Gate) -> String {
    let rows = height.unwrap_or_else(|| form.wanted_rows(width));
    let mut terminal = Terminal::new(TestBackend::new(width, rows)).unwrap();
    let theme = Theme::default();
    terminal
        .draw(|f| form.render(f.area(), f.buffer_mut(), &theme, gate))
        .unwrap();
    terminal.backend().to_string()
}

fn snap(name: &str, screen: &str) {
    insta::with_settings!({snapshot_path => "snapshots"}, {
        insta::assert_snapshot!(name, screen);
    });
}

#[test]
fn snapshot_a_whole_form_at_normal_width() {
    let mut form = fresh();
    let screen = draw(&mut form, 90, None, Gate::Open);
    assert!(
        screen.contains("1 of 13") && screen.contains("default 42"),
        "{screen}"
    );
    snap("form_whole_90", &screen);
}

#[test]
fn snapshot_a_refused_form_scrolled_at_a_narrow_width() {
    let mut form = fresh();
    to(&mut form, "count");
    clear(&mut form);
    typed(&mut form, "500");
    to(&mut form, "site");
    typed(&mut form, "not a url");
    assert_eq!(press(&mut form, 'a'), Step::Refused);
    let screen = draw(&mut form, 44, Some(22), Gate::Open);
    assert!(
        screen.contains("1 of 13") && screen.contains("required"),
        "{screen}"
    );
    snap("form_refused_44", &screen);
    to(&mut form, "count");
    let screen = draw(&mut form, 44, Some(22), Gate::Open);
    assert!(
        screen.contains("7 of 13") && screen.contains("must be 1 to 100"),
        "{screen}"
    );
    assert!(
        screen.contains("more"),
        "it says what is out of sight: {screen}"
    );
    snap("form_scrolled_44", &screen);
}

#[test]
fn snapshot_a_form_waiting_for_tab() {
    let mut form = fresh();
    let screen = draw(&mut form, 60, Some(12), Gate::Tab);
    assert!(screen.contains("press Tab to answer"), "{screen}");
    snap("form_waiting_60", &screen);
}
