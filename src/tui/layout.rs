//! Where the panes go for a terminal size (DESIGN §7): three columns when wide, chat beside a
//! split right column when medium, one pane at a time (Tab switches) when narrow.

use ratatui::layout::{Constraint, Layout, Rect};

/// Which pane has the keyboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    /// Chat and composer.
    Chat,
    /// The tool stack.
    Stack,
    /// The trace timeline.
    Timeline,
}

impl Focus {
    /// The next pane for Tab.
    pub fn next(self) -> Self {
        match self {
            Self::Chat => Self::Stack,
            Self::Stack => Self::Timeline,
            Self::Timeline => Self::Chat,
        }
    }

    /// The previous pane for Shift-Tab.
    pub fn previous(self) -> Self {
        match self {
            Self::Chat => Self::Timeline,
            Self::Stack => Self::Chat,
            Self::Timeline => Self::Stack,
        }
    }
}

/// Columns from which all three panes sit side by side.
pub const WIDE: u16 = 140;
/// Columns below which only one pane shows.
pub const NARROW: u16 = 80;

/// The rectangles of one frame. A pane that is not shown has no rectangle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Panes {
    /// Chat pane, composer included.
    pub chat: Option<Rect>,
    /// Tool stack pane.
    pub stack: Option<Rect>,
    /// Timeline pane.
    pub timeline: Option<Rect>,
    /// Status line.
    pub status: Rect,
}

/// Splits the screen.
pub fn panes(area: Rect, focus: Focus) -> Panes {
    let [body, status] = Layout::vertical([Constraint::Min(0), Constraint::Length(1)]).areas(area);
    if area.width >= WIDE {
        let [chat, stack, timeline] = Layout::horizontal([
            Constraint::Percentage(48),
            Constraint::Percentage(20),
            Constraint::Percentage(32),
        ])
        .areas(body);
        Panes {
            chat: Some(chat),
            stack: Some(stack),
            timeline: Some(timeline),
            status,
        }
    } else if area.width >= NARROW {
        let [chat, right] =
            Layout::horizontal([Constraint::Percentage(58), Constraint::Percentage(42)])
                .areas(body);
        let [stack, timeline] =
            Layout::vertical([Constraint::Percentage(35), Constraint::Percentage(65)]).areas(right);
        Panes {
            chat: Some(chat),
            stack: Some(stack),
            timeline: Some(timeline),
            status,
        }
    } else {
        let only = Some(body);
        match focus {
            Focus::Chat => Panes {
                chat: only,
                stack: None,
                timeline: None,
                status,
            },
            Focus::Stack => Panes {
                chat: None,
                stack: only,
                timeline: None,
                status,
            },
            Focus::Timeline => Panes {
                chat: None,
                stack: None,
                timeline: only,
                status,
            },
        }
    }
}

/// A `width`×`height` rect centred in `area` (both at most `area`'s size): where a popup goes.
pub fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let (width, height) = (width.min(area.width), height.min(area.height));
    Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height - height) / 2,
        width,
        height,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_popup_is_centred_and_never_larger_than_its_area() {
        assert_eq!(
            centered(Rect::new(10, 5, 100, 40), 76, 20),
            Rect::new(22, 15, 76, 20)
        );
        assert_eq!(
            centered(Rect::new(0, 0, 60, 20), 76, 30),
            Rect::new(0, 0, 60, 20)
        );
    }

    #[test]
    fn wide_medium_and_narrow_layouts() {
        let wide = panes(Rect::new(0, 0, 200, 50), Focus::Chat);
        assert!(wide.chat.is_some() && wide.stack.is_some() && wide.timeline.is_some());
        assert_eq!(
            wide.stack.unwrap().y,
            wide.timeline.unwrap().y,
            "side by side"
        );
        let medium = panes(Rect::new(0, 0, 100, 40), Focus::Chat);
        assert_eq!(
            medium.stack.unwrap().x,
            medium.timeline.unwrap().x,
            "stacked in one column"
        );
        let narrow = panes(Rect::new(0, 0, 60, 20), Focus::Timeline);
        assert_eq!((narrow.chat, narrow.stack), (None, None));
        assert_eq!(narrow.timeline.unwrap().width, 60);
        assert_eq!(narrow.status.y, 19);
    }

    #[test]
    fn tiny_sizes_do_not_panic() {
        for w in 0..30 {
            for h in 0..8 {
                for focus in [Focus::Chat, Focus::Stack, Focus::Timeline] {
                    let _ = panes(Rect::new(0, 0, w, h), focus);
                }
            }
        }
    }
}
