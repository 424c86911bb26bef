//! The status line: provider and model, turn, tokens, what is happening, and key hints.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;
use unicode_width::UnicodeWidthStr;

use crate::run_model::ContextGauge;
use crate::tui::theme::{Theme, spinner};

/// From this share of the window on, the gauge is drawn as a warning (compaction is near).
const CONTEXT_WARN_PERCENT: u64 = 75;

/// What the agent is doing, as the status line says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activity {
    /// Waiting for the user.
    Idle,
    /// The model is answering.
    Streaming,
    /// A tool runs.
    RunningTool,
    /// A call waits for approval.
    AwaitingApproval,
    /// A question (a missing parameter, the depth limit) waits for the user's answer.
    AwaitingInput,
    /// Older messages are being summarised (`/compact`).
    Compacting,
}

impl Activity {
    /// The words shown.
    pub fn label(self) -> &'static str {
        match self {
            Self::Idle => "idle",
            Self::Streaming => "streaming",
            Self::RunningTool => "running tool",
            Self::AwaitingApproval => "awaiting approval",
            Self::AwaitingInput => "awaiting input",
            Self::Compacting => "compacting",
        }
    }
}

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
}

/// `12.3k` for big counts.
fn count(n: u64) -> String {
    if n >= 10_000 {
        format!("{:.1}k", n as f64 / 1000.0)
    } else {
        n.to_string()
    }
}

impl Status<'_> {
    /// Draws the line.
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        if area.height == 0 || area.width == 0 {
            return;
        }
        let mut left = vec![
            Span::styled(format!(" {} ", self.provider), theme.key),
            Span::styled(self.model.to_string(), theme.text),
        ];
        if self.auto.is_some() {
            left.push(Span::styled(" (auto)", theme.dim));
        }
        if let Some(sandbox) = self.sandbox {
            left.push(Span::styled(" │ ", theme.dim));
            left.push(Span::styled(sandbox.to_string(), theme.warn));
        }
        left.push(Span::styled(" │ ", theme.dim));
        left.push(Span::raw(format!("turn {}/{}", self.turn, self.max_turns)));
        left.push(Span::styled(" │ ", theme.dim));
        left.push(Span::raw(format!(
            "↑{} ↓{} tok",
            count(self.tokens_in),
            count(self.tokens_out)
        )));
        if let Some(cost) = self.cost {
            left.push(Span::raw(format!(
                " {}",
                crate::config::pricing::dollars(cost)
            )));
        }
        if let Some(percent) = self.context.and_then(|c| c.percent()) {
            let style = if percent >= CONTEXT_WARN_PERCENT {
                theme.warn
            } else {
                theme.dim
            };
            left.push(Span::styled(format!(" · ctx {percent}%"), style));
        }
        left.push(Span::styled(" │ ", theme.dim));
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
        if self.queued > 0 {
            left.push(Span::styled(
                format!(" · {} queued", self.queued),
                theme.warn,
            ));
        }
        let right: Vec<Span> = match self.flash {
            Some(flash) => vec![Span::styled(format!("{flash} "), theme.warn)],
            None => self
                .hints
                .iter()
                .flat_map(|(k, what)| {
                    [
                        Span::styled(*k, theme.key),
                        Span::styled(format!(" {what}  "), theme.dim),
                    ]
                })
                .collect(),
        };
        let left_width: usize = left.iter().map(|s| s.content.width()).sum();
        let right_width: usize = right.iter().map(|s| s.content.width()).sum();
        let width = area.width as usize;
        Line::from(left).render(area, buf);
        // Hints go right-aligned, and only if they fit next to the facts.
        if left_width + right_width < width {
            let x = area.x + (width - right_width) as u16;
            Line::from(right).render(
                Rect {
                    x,
                    width: right_width as u16,
                    ..area
                },
                buf,
            );
        }
    }
}
