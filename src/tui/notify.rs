//! Calling the user back (issue 27.6): when a dialog starts waiting or a run ends while
//! nobody looks at taco (the terminal reported losing focus, or tmux shows another window),
//! the bell and a desktop notification (OSC 9, or OSC 777 `notify;title;body` on terminals
//! that take that one), as `[ui] notify` says.
//!
//! Pure: what the terminal and tmux said comes in as [`Presence`], what needs the user as a
//! call, and out comes [`Escapes`] for the event loop to write, or nothing. Each dialog (by
//! its gate id, `approval c1`) is told about once, whether or not the user was away then; a
//! run's end once. The text is the app's own words around a tool name made inert and short.

use std::collections::VecDeque;

pub use crate::config::NotifyChoice;
use crate::tui::clipboard::{Route, tmux_wrap};

/// Most characters of a notification's body: a glance, not a transcript.
pub const MAX_BODY: usize = 60;
/// Dialog ids remembered as told: more than any batch of calls waits at once.
const REMEMBERED: usize = 64;

/// Whether the user can see taco, from what the terminal and tmux said.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Presence {
    /// The terminal's last focus report; `None` until it sends one (many never do).
    pub focused: Option<bool>,
    /// Whether tmux shows taco's pane, active, to an attached client; `None` outside tmux or
    /// before tmux answered.
    pub shown: Option<bool>,
}

impl Presence {
    /// Nobody looks: either source says so. What was never said counts as looking, so a
    /// terminal without focus reports never rings.
    pub fn away(self) -> bool {
        self.focused == Some(false) || self.shown == Some(false)
    }
}

/// How a desktop notification reaches the terminal.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Desktop {
    /// `ESC ] 9 ; body BEL` (iTerm2, WezTerm, Ghostty, kitty, Windows Terminal …).
    #[default]
    Osc9,
    /// `ESC ] 777 ; notify ; title ; body BEL` (rxvt-unicode, foot).
    Osc777,
}

impl Desktop {
    /// The sequence the terminal named `term` (`$TERM`, or tmux's client's) takes.
    pub fn for_terminal(term: &str) -> Self {
        if term.starts_with("rxvt") || term.starts_with("foot") {
            Self::Osc777
        } else {
            Self::Osc9
        }
    }
}

/// The bytes of one notification, ready to write to the terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Escapes(Vec<u8>);

impl Escapes {
    /// The bytes to write.
    pub fn bytes(&self) -> &[u8] {
        &self.0
    }
}

/// How a run ended, as a notification says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunEnd {
    /// With a final answer.
    Answered,
    /// With an error.
    Failed,
    /// Cancelled.
    Cancelled,
}

/// Decides when to call the user back, and writes how.
#[derive(Debug, Clone, Default)]
pub struct Notifier {
    choice: NotifyChoice,
    presence: Presence,
    desktop: Desktop,
    route: Route,
    /// The dialogs already judged (told or not), newest last.
    judged: VecDeque<String>,
}

impl Notifier {
    /// A notifier that does what `choice` says, by `desktop` through `route`.
    pub fn new(choice: NotifyChoice, desktop: Desktop, route: Route) -> Self {
        Self {
            choice,
            desktop,
            route,
            ..Self::default()
        }
    }

    /// Where the user is, as last heard.
    pub fn presence(&self) -> Presence {
        self.presence
    }

    /// The terminal reported gaining (`true`) or losing focus. Gaining it is fresh news that
    /// someone looks, whatever tmux said a moment ago.
    pub fn set_focused(&mut self, focused: bool) {
        self.presence.focused = Some(focused);
        if focused && self.presence.shown.is_some() {
            self.presence.shown = Some(true);
        }
    }

    /// What tmux last said: taco's pane shown to someone, and the terminal its client runs in.
    pub fn set_tmux(&mut self, shown: bool, client_term: &str) {
        self.presence.shown = Some(shown);
        if !client_term.is_empty() {
            self.desktop = Desktop::for_terminal(client_term);
        }
    }

    /// A dialog (by its gate id) shows and waits for the user, saying `what`: escapes to
    /// write the first time it shows while nobody looks.
    pub fn dialog(&mut self, id: &str, what: &str) -> Option<Escapes> {
        if self.judged.iter().any(|j| j == id) {
            return None;
        }
        if self.judged.len() == REMEMBERED {
            self.judged.pop_front();
        }
        self.judged.push_back(id.to_string());
        self.tell(what)
    }

    /// The run ended as `end`: escapes to write while nobody looks.
    pub fn run_ended(&mut self, end: RunEnd) -> Option<Escapes> {
        let what = match end {
            RunEnd::Answered => "the run finished",
            RunEnd::Failed => "the run stopped on an error",
            RunEnd::Cancelled => "the run was cancelled",
        };
        self.tell(what)
    }

    /// The escapes for `what`, unless someone looks or the user wants none.
    fn tell(&self, what: &str) -> Option<Escapes> {
        if !self.presence.away() {
            return None;
        }
        let desktop = match self.choice {
            NotifyChoice::Off => return None,
            NotifyChoice::Bell => None,
            NotifyChoice::Auto => Some(self.desktop),
        };
        Some(escapes(what, desktop, self.route))
    }
}

/// The bytes for `what`: the desktop notification (wrapped for tmux's passthrough inside
/// tmux, which keeps no plain OSC 9 of its own), then the bell, plain (tmux rings it itself
/// and marks the window).
pub fn escapes(what: &str, desktop: Option<Desktop>, route: Route) -> Escapes {
    let body = format!("taco: {}", inert(what));
    let mut out = Vec::new();
    if let Some(desktop) = desktop {
        let osc = match desktop {
            Desktop::Osc9 => format!("\x1b]9;{body}\x07"),
            Desktop::Osc777 => format!("\x1b]777;notify;taco;{body}\x07"),
        };
        match route {
            Route::Direct => out.extend_from_slice(osc.as_bytes()),
            Route::Tmux => out.extend(tmux_wrap(osc.as_bytes())),
        }
    }
    out.push(0x07);
    Escapes(out)
}

/// `text` as one short inert line: no control or bidi characters (they would end the
/// sequence early or act on the terminal), no `;` (OSC 777 splits on it), at most
/// [`MAX_BODY`] characters with `…` where it was cut.
pub fn inert(text: &str) -> String {
    let chars: Vec<char> = (text.chars())
        .filter_map(|c| match c {
            '\n' | '\r' | '\t' => Some(' '),
            ';' => Some(','),
            c if crate::text::safe::is_unsafe(c) || c.is_control() => None,
            c => Some(c),
        })
        .collect();
    if chars.len() <= MAX_BODY {
        return chars.into_iter().collect();
    }
    let mut out: String = chars[..MAX_BODY - 1].iter().collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests;
