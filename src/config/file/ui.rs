//! `[ui]`: how the TUI takes the mouse, draws, calls you back and guards its dialogs.

use serde::Deserialize;

/// `[ui]` (also read as `[tui]`, its earlier name).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TuiConfig {
    /// Whether taco takes the mouse (wheel, clicks); `false` leaves the terminal's own
    /// selection alone (default true).
    pub mouse: Option<bool>,
    /// The colours: `dark`, `light` or `auto` (asks the terminal for its background).
    pub theme: Option<ThemeChoice>,
    /// How taco says it needs you while you look elsewhere: `auto`, `bell` or `off`.
    pub notify: Option<NotifyChoice>,
    /// How long the keyboard must be quiet before a dialog takes keys by itself, in
    /// milliseconds (0: at once, unless a message is unsent).
    pub dialog_guard_ms: Option<u64>,
    /// Seconds after which a running call of a tool counts as slow (⚠ in the stack), per
    /// tool name; a tool not named here goes by its own history this session.
    #[serde(default)]
    pub slow_after_secs: std::collections::HashMap<String, u64>,
    /// Seconds without new output after which a call that streams output counts as quiet
    /// (default 30; 0: never).
    pub quiet_after_secs: Option<u64>,
}

/// `[ui] theme`: which palette the TUI draws with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThemeChoice {
    /// Light or dark after the terminal's background (its answer to OSC 11, else
    /// `$COLORFGBG`, else dark).
    #[default]
    Auto,
    /// Light text on a dark background.
    Dark,
    /// Dark text on a light background.
    Light,
}

/// `[ui] notify`: how taco calls you back when a dialog waits or a run ends while its
/// terminal (or tmux window) is not the one you look at.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NotifyChoice {
    /// A desktop notification (OSC 9, or OSC 777 where the terminal takes that) and the bell.
    #[default]
    Auto,
    /// The bell alone.
    Bell,
    /// Nothing.
    Off,
}
