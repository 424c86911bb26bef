//! The status line: provider and model, turn, tokens, what is happening, and key hints;
//! on a narrow screen the least useful words go first and the focused pane's keys stay.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;
use unicode_width::UnicodeWidthStr;

pub use crate::run_model::Activity;
use crate::run_model::ContextGauge;
use crate::tui::theme::{Theme, spinner};
use crate::tui::views::keyline::clip_line;

/// From this share of the window on, the gauge is drawn as a warning (compaction is near).
const CONTEXT_WARN_PERCENT: u64 = 75;

/// Everything the status line shows.
#[derive(Debug, Clone)]
pub struct Status<'a> {
    /// Provider name.
    pub provider: &'a str,
    /// Model id.
    pub model: &'a str,
    /// Why the provider was auto-selected, if it was.
    pub auto: Option<&'a str>,
    /// Turn of the current request.
    pub turn: u32,
    /// Turn limit.
    pub max_turns: u32,
    /// Session input tokens.
    pub tokens_in: u64,
    /// Session output tokens.
    pub tokens_out: u64,
    /// How full the conversation is: tokens used and the window, when known.
    pub context: Option<ContextGauge>,
    /// What the session cost, when the models' prices are known.
    pub cost: Option<f64>,
    /// What is happening.
    pub activity: Activity,
    /// Milliseconds since the activity started (drives the spinner).
    pub elapsed_ms: u128,
    /// Prompts waiting to be sent.
    pub queued: usize,
    /// A short message that replaces the hints for a moment.
    pub flash: Option<&'a str>,
    /// Keys for the focused pane.
    pub hints: &'a [(&'a str, &'a str)],
    /// Shell commands run unconfined: `sandbox off` (the user's choice) or `no sandbox`
    /// (the kernel cannot); `None` while they run sandboxed.
    pub sandbox: Option<&'a str>,
    /// The permission mode, when it is not `ask` (the default says nothing).
    pub mode: Option<&'a str>,
}

/// `12.3k` for big counts.
fn count(n: u64) -> String {
    if n >= 10_000 {
        format!("{:.1}k", n as f64 / 1000.0)
    } else {
        n.to_string()
    }
}

/// What the status line leaves out when it is short of room, least useful first: the
/// facts a glance rarely needs go before the focused pane's keys, and the keys before what
/// is happening (the activity and an unconfined sandbox always stay).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Drop {
    /// `(auto)` after the model.
    Auto,
    /// `↑12.3k ↓1.2k tok`.
    Tokens,
    /// What the session cost.
    Cost,
    /// The hints for keys that work everywhere (`Tab`, `?`, `PgUp/PgDn`): help lists them.
    GlobalHints,
    /// The provider's name (the model stays).
    Provider,
    /// `turn 3/10`.
    Turn,
    /// The context gauge, unless it warns.
    Context,
    /// The model's name past [`MODEL_SHORT`] cells.
    ModelWords,
    /// `· 1 queued`: the composer lists them.
    Queued,
}

/// The drops in the order they are made.
const DROPS: [Drop; 9] = [
    Drop::Auto,
    Drop::Tokens,
    Drop::Cost,
    Drop::GlobalHints,
    Drop::Provider,
    Drop::Turn,
    Drop::Context,
    Drop::ModelWords,
    Drop::Queued,
];

/// Blank cells at least between the facts and the hints.
const GAP: usize = 2;

/// Cells a model's name keeps when its words go.
const MODEL_SHORT: usize = 14;

/// Hints of keys that work in every pane, which help lists: they go first. (`Tab take` in
/// the command popup is that popup's own.)
fn global(key: &str, what: &str) -> bool {
    matches!(
        (key, what),
        ("Tab", "panes" | "next pane") | ("?", "help") | ("PgUp/PgDn", "scroll")
    )
}

/// How much of the line is left out.
#[derive(Debug, Clone, Copy)]
struct Cut {
    /// How many of [`DROPS`] are made.
    drops: usize,
    /// How many of the remaining hints show (the first ones: the pane's own keys).
    hints: usize,
}

impl Cut {
    fn dropped(&self, drop: Drop) -> bool {
        DROPS[..self.drops].contains(&drop)
    }
}

impl Status<'_> {
    /// Draws the line: the facts on the left, the hints (or a flash) on the right. When both
    /// do not fit, the least useful words go first (see [`Drop`]), then the hints from the
    /// last; a flash too long for what is left is cut with `…`.
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        if area.height == 0 || area.width == 0 {
            return;
        }
        let width = area.width as usize;
        let mut cut = Cut {
            drops: 0,
            hints: usize::MAX,
        };
        let (left, right) = loop {
            let (left, right) = (self.left(cut, theme), self.right(cut, theme));
            if width_of(&left) + width_of(&right) + GAP <= width {
                break (left, right);
            }
            if cut.drops < DROPS.len() {
                cut.drops += 1;
            } else if self.flash.is_none() && self.shown_hints(cut).len() > 1 {
                cut.hints = self.shown_hints(cut).len() - 1;
            } else {
                break (left, right);
            }
        };
        let left_width = width_of(&left);
        Line::from(left).render(area, buf);
        // Right-aligned after a gap; a flash is cut to what is left.
        let room = width.saturating_sub(left_width + GAP);
        let mut right = Line::from(right);
        if right.width() > room {
            if self.flash.is_none() || room == 0 {
                return;
            }
            right = clip_line(right, room);
        }
        let right_width = right.width();
        let x = area.x + (width - right_width) as u16;
        right.render(
            Rect {
                x,
                width: right_width as u16,
                ..area
            },
            buf,
        );
    }

    /// The hints that show with `cut`: the global ones gone once they are dropped, then only
    /// the first `cut.hints`.
    fn shown_hints(&self, cut: Cut) -> Vec<(&str, &str)> {
        let global_gone = cut.dropped(Drop::GlobalHints);
        (self.hints.iter())
            .filter(|(key, what)| !(global_gone && global(key, what)))
            .take(cut.hints)
            .map(|(key, what)| (*key, *what))
            .collect()
    }

    /// The facts: provider and model, the sandbox, turn, tokens and cost, context, activity.
    fn left(&self, cut: Cut, theme: &Theme) -> Vec<Span<'static>> {
        let bar = || Span::styled(" │ ", theme.dim);
        let mut left = Vec::new();
        if !cut.dropped(Drop::Provider) {
            left.push(Span::styled(format!(" {} ", self.provider), theme.key));
        } else {
            left.push(Span::raw(" "));
        }
        let model = if cut.dropped(Drop::ModelWords) {
            shorten(self.model, MODEL_SHORT)
        } else {
            self.model.to_string()
        };
        left.push(Span::styled(model, theme.text));
        if self.auto.is_some() && !cut.dropped(Drop::Auto) {
            left.push(Span::styled(" (auto)", theme.dim));
        }
        if let Some(sandbox) = self.sandbox {
            left.push(bar());
            left.push(Span::styled(sandbox.to_string(), theme.warn));
        }
        if let Some(mode) = self.mode {
            left.push(bar());
            left.push(Span::styled(format!("{mode} mode"), theme.key));
        }
        if !cut.dropped(Drop::Turn) {
            left.push(bar());
            left.push(Span::raw(format!("turn {}/{}", self.turn, self.max_turns)));
        }
        let mut usage = Vec::new();
        if !cut.dropped(Drop::Tokens) {
            usage.push(Span::raw(format!(
                "↑{} ↓{} tok",
                count(self.tokens_in),
                count(self.tokens_out)
            )));
        }
        if let Some(cost) = self.cost.filter(|_| !cut.dropped(Drop::Cost)) {
            let space = if usage.is_empty() { "" } else { " " };
            usage.push(Span::raw(format!(
                "{space}{}",
                crate::config::pricing::dollars(cost)
            )));
        }
        if let Some(percent) = self.context.and_then(|c| c.percent()) {
            let warn = percent >= CONTEXT_WARN_PERCENT;
            if warn || !cut.dropped(Drop::Context) {
                let style = if warn { theme.warn } else { theme.dim };
                let dot = if usage.is_empty() { "" } else { " · " };
                usage.push(Span::styled(format!("{dot}ctx {percent}%"), style));
            }
        }
        if !usage.is_empty() {
            left.push(bar());
            left.extend(usage);
        }
        left.push(bar());
        let activity_style = match self.activity {
            Activity::Idle => theme.dim,
            Activity::AwaitingApproval | Activity::AwaitingInput => theme.warn,
            _ => theme.ok,
        };
        if self.activity != Activity::Idle {
            left.push(Span::styled(
                format!("{} ", spinner(self.elapsed_ms)),
                activity_style,
            ));
        }
        left.push(Span::styled(self.activity.label(), activity_style));
        if self.queued > 0 && !cut.dropped(Drop::Queued) {
            left.push(Span::styled(
                format!(" · {} queued", self.queued),
                theme.warn,
            ));
        }
        left
    }

    /// The flash, else the hints that show with `cut`.
    fn right(&self, cut: Cut, theme: &Theme) -> Vec<Span<'static>> {
        if let Some(flash) = self.flash {
            return vec![Span::styled(format!("{flash} "), theme.warn)];
        }
        (self.shown_hints(cut).into_iter())
            .flat_map(|(key, what)| {
                [
                    Span::styled(key.to_string(), theme.key),
                    Span::styled(format!(" {what}  "), theme.dim),
                ]
            })
            .collect()
    }
}

/// Cells `spans` take.
fn width_of(spans: &[Span]) -> usize {
    spans.iter().map(|s| s.content.width()).sum()
}

/// `text` in at most `cells` cells, `…` last when it was longer.
fn shorten(text: &str, cells: usize) -> String {
    if text.width() <= cells {
        return text.to_string();
    }
    clip_line(Line::from(text.to_string()), cells).to_string()
}

#[cfg(test)]
mod tests;
