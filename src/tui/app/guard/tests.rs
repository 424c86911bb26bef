use super::*;

/// The default quiet (`config::DIALOG_QUIET_MS`).
const QUIET: Duration = Duration::from_millis(2000);

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn letters(id: &str) -> Option<(String, bool)> {
    Some((id.to_string(), false))
}

fn text(id: &str) -> Option<(String, bool)> {
    Some((id.to_string(), true))
}

#[test]
fn a_dialog_shown_to_an_idle_user_takes_keys_at_once() {
    let t0 = Instant::now();
    let mut g = DialogGuard::new(QUIET);
    g.show(letters("a:1"), t0, false);
    assert_eq!(g.gate(t0, false), Gate::Open);
    assert!(!g.holds(t0, true, false));
}

#[test]
fn a_dialog_shown_while_typing_waits_for_quiet_and_says_how_long() {
    let t0 = Instant::now();
    let mut g = DialogGuard::new(QUIET);
    assert!(!g.holds(t0, true, false), "no dialog: nothing to hold");
    g.show(letters("a:1"), t0 + ms(500), false);
    assert_eq!(g.gate(t0 + ms(500), false), Gate::Quiet(ms(1500)));
    // A key typed past it starts the quiet again.
    assert!(g.holds(t0 + ms(1900), true, false));
    assert_eq!(g.gate(t0 + ms(2000), false), Gate::Quiet(ms(1900)));
    // Moving around is not typing.
    assert!(g.holds(t0 + ms(3000), false, false));
    assert_eq!(g.gate(t0 + ms(3900), false), Gate::Open);
    assert!(!g.holds(t0 + ms(3900), true, false));
    // Once with the user it stays so, typed into or not (a reason being typed).
    assert!(!g.holds(t0 + ms(3910), true, false));
    assert_eq!(g.gate(t0 + ms(3910), false), Gate::Open);
}

#[test]
fn an_unsent_message_keeps_every_dialog_waiting_until_tab() {
    let t0 = Instant::now();
    let mut g = DialogGuard::new(QUIET);
    g.show(letters("q:1"), t0, true);
    assert_eq!(
        g.gate(t0 + ms(60_000), true),
        Gate::Draft,
        "no quiet is enough"
    );
    assert!(g.holds(t0 + ms(60_000), true, true));
    assert!(g.engage(), "Tab moves to it");
    assert!(!g.engage(), "already there");
    assert_eq!(g.gate(t0 + ms(60_001), true), Gate::Open);
    assert!(!g.holds(t0 + ms(60_001), true, true));
}

#[test]
fn a_dialog_that_takes_text_waits_for_tab_however_quiet() {
    let t0 = Instant::now();
    let mut g = DialogGuard::new(QUIET);
    g.show(text("q:1"), t0, false);
    assert_eq!(g.gate(t0 + ms(60_000), false), Gate::Tab);
    assert!(g.holds(t0 + ms(60_000), true, false));
    assert!(g.engage());
    assert!(!g.holds(t0 + ms(60_001), true, false));
}

#[test]
fn a_dialog_right_after_an_answered_one_follows_on_but_not_after_typing() {
    let t0 = Instant::now();
    let mut g = DialogGuard::new(QUIET);
    g.show(text("q:1"), t0, false);
    g.engage();
    // The field is answered; the next field of the form opens a moment later.
    g.show(None, t0 + ms(100), false);
    g.show(text("q:2"), t0 + ms(150), false);
    assert_eq!(g.gate(t0 + ms(150), false), Gate::Open, "the next field");
    // Not when the user typed a message in between, nor long after.
    g.show(None, t0 + ms(200), false);
    g.holds(t0 + ms(300), true, false);
    g.show(text("q:3"), t0 + ms(400), false);
    assert_eq!(g.gate(t0 + ms(400), false), Gate::Tab);
    g.engage();
    g.show(None, t0 + ms(500), false);
    g.show(text("q:4"), t0 + ms(500) + FOLLOW_ON + ms(1), false);
    assert_eq!(g.gate(t0 + ms(3000), false), Gate::Tab);
}

#[test]
fn stepping_back_waits_again_and_a_new_dialog_is_judged_afresh() {
    let t0 = Instant::now();
    let mut g = DialogGuard::new(QUIET);
    g.show(letters("a:1"), t0, false);
    g.step_back(t0 + ms(100));
    assert_eq!(g.gate(t0 + ms(100), false), Gate::Quiet(QUIET));
    g.show(letters("a:1"), t0 + ms(200), false);
    assert!(
        g.gate(t0 + ms(200), false).holds(),
        "the same dialog keeps its state"
    );
    g.show(letters("a:2"), t0 + ms(2200), false);
    assert!(
        !g.gate(t0 + ms(2200), false).holds(),
        "quiet by now: the next takes keys"
    );
    g.show(None, t0 + ms(2300), false);
    assert_eq!(g.gate(t0 + ms(2300), true), Gate::Open, "nothing shows");
}

#[test]
fn zero_quiet_still_waits_for_an_unsent_message() {
    let t0 = Instant::now();
    let mut g = DialogGuard::new(Duration::ZERO);
    g.holds(t0, true, false);
    g.show(letters("a:1"), t0, false);
    assert_eq!(g.gate(t0, false), Gate::Open);
    g.step_back(t0);
    g.show(letters("a:2"), t0 + ms(5000), true);
    assert_eq!(g.gate(t0 + ms(5000), true), Gate::Draft);
}

#[test]
fn a_huge_quiet_is_capped() {
    let t0 = Instant::now();
    let mut g = DialogGuard::new(Duration::from_millis(u64::MAX));
    g.holds(t0, true, false);
    g.show(letters("a:1"), t0, false);
    assert_eq!(g.gate(t0, false), Gate::Quiet(MAX_QUIET));
    assert!(!g.holds(t0 + MAX_QUIET, false, false));
}

#[test]
fn the_same_call_asked_again_does_not_follow_on() {
    let t0 = Instant::now();
    let mut g = DialogGuard::new(QUIET);
    // The user typed a moment ago, moved to the dialog and answered it.
    g.holds(t0, true, false);
    g.show(letters("approval c1"), t0 + ms(100), false);
    g.engage();
    g.show(None, t0 + ms(300), false);
    // Its file changed after the answer: the same call is asked again, with a fresh diff.
    g.show(letters("approval c1"), t0 + ms(400), false);
    assert_eq!(
        g.gate(t0 + ms(400), false),
        Gate::Quiet(ms(1600)),
        "judged as a new dialog, not as the next one of a batch"
    );
}
