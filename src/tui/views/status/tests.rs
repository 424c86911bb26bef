use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::*;

/// The hints each pane shows (as `app/render.rs` gives them).
const CHAT: &[(&str, &str)] = &[
    ("Enter", "send"),
    ("PgUp/PgDn", "scroll"),
    ("Tab", "panes"),
    ("?", "help"),
];
const TIMELINE: &[(&str, &str)] = &[
    ("↑↓", "select"),
    ("Enter", "details"),
    ("f", "filter"),
    ("Tab", "next pane"),
];
const STACK: &[(&str, &str)] = &[("↑↓", "scroll"), ("Tab", "next pane")];
const APPROVAL: &[(&str, &str)] = &[
    ("y/t/a", "approve"),
    ("n", "deny"),
    ("Enter", "confirm"),
    ("Tab", "panes"),
];

/// A busy session on a hosted model with a long name, a cost and a full-ish context.
fn busy<'a>(hints: &'a [(&'a str, &'a str)]) -> Status<'a> {
    Status {
        provider: "anthropic",
        model: "claude-3-5-sonnet-20241022",
        auto: Some("ANTHROPIC_API_KEY is set"),
        turn: 3,
        max_turns: 10,
        tokens_in: 48_213,
        tokens_out: 2_905,
        context: Some(ContextGauge {
            used: 48_000,
            window: Some(200_000),
        }),
        cost: Some(0.19),
        activity: Activity::AwaitingApproval,
        elapsed_ms: 0,
        queued: 1,
        flash: None,
        hints,
        sandbox: None,
        mode: None,
    }
}

fn line(status: &Status, width: u16) -> String {
    let area = Rect::new(0, 0, width, 1);
    let mut buf = Buffer::empty(area);
    status.render(area, &mut buf, &Theme::default());
    (0..width)
        .map(|x| buf[(x, 0)].symbol().to_string())
        .collect::<String>()
}

/// Each pane's line at 80 and 120 columns.
#[test]
fn the_focused_panes_keys_stay_at_80_and_120_columns() {
    let mut out = String::new();
    for (name, hints) in [
        ("chat", CHAT),
        ("timeline", TIMELINE),
        ("stack", STACK),
        ("approval", APPROVAL),
    ] {
        for width in [80, 120] {
            out.push_str(&format!("{name} {width}\n{}\n", line(&busy(hints), width)));
        }
    }
    insta::with_settings!({snapshot_path => "../snapshots"}, {
        insta::assert_snapshot!("status_80_and_120", out);
    });
}

#[test]
fn at_80_columns_every_pane_keeps_its_own_keys_and_the_activity() {
    for (hints, keys) in [
        (CHAT, &["Enter send"][..]),
        (TIMELINE, &["↑↓ select", "Enter details", "f filter"][..]),
        (STACK, &["↑↓ scroll"][..]),
        (APPROVAL, &["y/t/a approve", "n deny", "Enter confirm"][..]),
    ] {
        let shown = line(&busy(hints), 80);
        for key in keys {
            assert!(shown.contains(key), "{key:?} in {shown:?}");
        }
        assert!(shown.contains("awaiting approval"), "{shown:?}");
        // Token counts and the provider went first.
        assert!(
            !shown.contains("tok") && !shown.contains("anthropic"),
            "{shown:?}"
        );
    }
}

#[test]
fn with_room_nothing_is_dropped() {
    let shown = line(&busy(TIMELINE), 200);
    for part in [
        "anthropic claude-3-5-sonnet-20241022 (auto)",
        "turn 3/10",
        "↑48.2k ↓2905 tok $0.190 · ctx 24%",
        "↑↓ select  Enter details  f filter  Tab next pane",
    ] {
        assert!(shown.contains(part), "{part:?} in {shown:?}");
    }
}

#[test]
fn the_least_useful_words_go_first() {
    let status = busy(TIMELINE);
    let mut last = usize::MAX;
    // Narrowing the line never brings back something dropped at a wider one.
    for width in (40..=200).rev() {
        let shown = line(&status, width);
        let facts = [
            "(auto)",
            "tok",
            "$0.19",
            "Tab next pane",
            "anthropic",
            "turn",
            "ctx",
            "20241022",
        ]
        .iter()
        .filter(|f| shown.contains(*f))
        .count();
        assert!(facts <= last, "at {width}: {shown:?}");
        last = facts;
        assert!(shown.contains("awaiting approval"), "at {width}: {shown:?}");
    }
    // A context that warns stays when its gauge would go.
    let mut full = busy(TIMELINE);
    full.context = Some(ContextGauge {
        used: 180_000,
        window: Some(200_000),
    });
    assert!(line(&full, 80).contains("ctx 90%"), "{:?}", line(&full, 80));
}

#[test]
fn a_flash_takes_the_room_it_needs_and_is_cut_only_past_it() {
    let mut status = busy(TIMELINE);
    let flash = "copied, but tmux's set-clipboard is external: add `set -g set-clipboard on` to ~/.tmux.conf";
    status.flash = Some(flash);
    let wide = line(&status, 160);
    assert!(wide.contains(flash), "{wide:?}");
    let narrow = line(&status, 80);
    assert!(
        narrow.contains("copied, but tmux's set-clipboard"),
        "{narrow:?}"
    );
    assert!(narrow.trim_end().ends_with('…'), "{narrow:?}");
    assert!(narrow.contains("awaiting approval"), "{narrow:?}");
}
