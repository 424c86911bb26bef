use super::*;

/// A notifier as `choice` says, outside tmux, by OSC 9.
fn notifier(choice: NotifyChoice) -> Notifier {
    Notifier::new(choice, Desktop::Osc9, Route::Direct)
}

fn away(n: &mut Notifier) {
    n.set_focused(false);
}

#[test]
fn nothing_while_the_user_looks_or_before_the_terminal_said_anything() {
    let mut n = notifier(NotifyChoice::Auto);
    // Never a focus report: someone is assumed to look.
    assert_eq!(n.dialog("approval c1", "approve shell?"), None);
    n.set_focused(true);
    assert_eq!(n.dialog("approval c2", "approve shell?"), None);
    assert_eq!(n.run_ended(RunEnd::Answered), None);
}

#[test]
fn unfocused_a_dialog_rings_once_by_osc_9_and_the_bell() {
    let mut n = notifier(NotifyChoice::Auto);
    away(&mut n);
    let told = n.dialog("approval c1", "approve shell?").unwrap();
    assert_eq!(told.bytes(), b"\x1b]9;taco: approve shell?\x07\x07");
    // The same dialog again (it showed, a question covered it, it shows again): no more.
    assert_eq!(n.dialog("approval c1", "approve shell?"), None);
    // The next call of the batch is a dialog of its own.
    assert!(n.dialog("approval c2", "approve shell?").is_some());
}

#[test]
fn a_dialog_judged_while_the_user_looked_is_not_told_later() {
    let mut n = notifier(NotifyChoice::Auto);
    n.set_focused(true);
    assert_eq!(n.dialog("question q1", "answer"), None);
    away(&mut n);
    assert_eq!(n.dialog("question q1", "answer"), None);
}

#[test]
fn a_run_end_is_told_each_time_it_ends_while_away() {
    let mut n = notifier(NotifyChoice::Auto);
    away(&mut n);
    let told = n.run_ended(RunEnd::Failed).unwrap();
    assert_eq!(
        told.bytes(),
        b"\x1b]9;taco: the run stopped on an error\x07\x07"
    );
    assert!(
        n.run_ended(RunEnd::Answered).is_some(),
        "the next run's end"
    );
    n.set_focused(true);
    assert_eq!(n.run_ended(RunEnd::Cancelled), None);
}

#[test]
fn bell_rings_without_a_desktop_notification_and_off_is_silent() {
    let mut bell = notifier(NotifyChoice::Bell);
    away(&mut bell);
    assert_eq!(bell.dialog("approval c1", "x").unwrap().bytes(), b"\x07");
    let mut off = notifier(NotifyChoice::Off);
    away(&mut off);
    assert_eq!(off.dialog("approval c1", "x"), None);
    assert_eq!(off.run_ended(RunEnd::Answered), None);
}

#[test]
fn a_background_tmux_window_is_away_and_focus_gained_overrides_a_stale_answer() {
    let mut n = Notifier::new(NotifyChoice::Auto, Desktop::Osc9, Route::Tmux);
    n.set_tmux(false, "xterm-256color");
    assert!(n.presence().away());
    let told = n.dialog("approval c1", "approve shell?").unwrap();
    // Wrapped for tmux's passthrough, every ESC doubled; the bell plain.
    assert_eq!(
        told.bytes(),
        b"\x1bPtmux;\x1b\x1b]9;taco: approve shell?\x07\x1b\\\x07"
    );
    // The pane got focus back (tmux's focus-events): someone looks now.
    n.set_focused(true);
    assert!(!n.presence().away());
    assert_eq!(n.dialog("approval c2", "approve shell?"), None);
    n.set_tmux(true, "");
    assert!(!n.presence().away());
}

#[test]
fn rxvt_and_foot_get_osc_777_from_the_client_tmux_names() {
    assert_eq!(
        Desktop::for_terminal("rxvt-unicode-256color"),
        Desktop::Osc777
    );
    assert_eq!(Desktop::for_terminal("foot"), Desktop::Osc777);
    assert_eq!(Desktop::for_terminal("xterm-kitty"), Desktop::Osc9);
    assert_eq!(Desktop::for_terminal(""), Desktop::Osc9);
    let mut n = notifier(NotifyChoice::Auto);
    n.set_tmux(false, "rxvt-unicode");
    let told = n.run_ended(RunEnd::Answered).unwrap();
    assert_eq!(
        told.bytes(),
        b"\x1b]777;notify;taco;taco: the run finished\x07\x07"
    );
}

#[test]
fn the_text_is_inert_one_line_without_separators_and_short() {
    // A tool name a hostile MCP server chose: BEL and ST would end the sequence early, an
    // ESC start another, `;` add a field to OSC 777, a bidi override reorder it.
    let name = "evil\x07\x1b]52;c;cm0=\x1b\\\u{9c}\u{202e}x;y\nz";
    let text = inert(&format!("approve {name}?"));
    assert_eq!(text, "approve evil]52,c,cm0=\\x,y z?");
    assert!(!text.chars().any(|c| c.is_control()));
    let long = inert(&"a".repeat(500));
    assert_eq!(long.chars().count(), MAX_BODY);
    assert!(long.ends_with('…'));
    assert_eq!(inert(&"b".repeat(MAX_BODY)), "b".repeat(MAX_BODY));
    let bytes = escapes(
        &format!("approve {name}?"),
        Some(Desktop::Osc777),
        Route::Direct,
    );
    let b = bytes.bytes();
    // One sequence: ESC only at its start, BEL only at its end and as the bell.
    assert_eq!(b.iter().filter(|&&c| c == 0x1b).count(), 1);
    assert_eq!(b.iter().filter(|&&c| c == 0x07).count(), 2);
}
