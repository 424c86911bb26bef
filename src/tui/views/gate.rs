//! Whether the dialog on screen takes keys, as its views draw it (the state is the app's
//! dialog gate, `app/guard.rs`): a waiting dialog dims its keys and says why and how to
//! reach it, so a key that went to the composer instead is never a surprise.

use std::time::Duration;

/// Whether the dialog on screen takes keys.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Gate {
    /// It takes keys (or no dialog shows).
    #[default]
    Open,
    /// The user typed recently: it takes keys after this much more quiet, or after Tab.
    Quiet(Duration),
    /// The user has an unsent message: it takes keys after Tab.
    Draft,
    /// It takes typed text: it takes keys after Tab, so a message is never typed into it.
    Tab,
}

impl Gate {
    /// Whether keys go past the dialog to the composer.
    pub fn holds(self) -> bool {
        self != Self::Open
    }

    /// What a waiting dialog says before its (dimmed) keys; empty when it takes keys.
    pub fn note(self) -> String {
        match self {
            Self::Open => String::new(),
            Self::Quiet(left) => {
                // Rounded up, so it never says 0.0 while still waiting.
                let tenths = left.as_millis().div_ceil(100);
                format!(
                    "keys active in {}.{} s · Tab: answer now ·",
                    tenths / 10,
                    tenths % 10
                )
            }
            Self::Draft => "your message is unsent · Tab to answer ·".to_string(),
            Self::Tab => "press Tab to answer ·".to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_note_rounds_up_and_says_how_to_answer() {
        assert_eq!(Gate::Open.note(), "");
        assert_eq!(
            Gate::Quiet(Duration::from_millis(1201)).note(),
            "keys active in 1.3 s · Tab: answer now ·"
        );
        assert_eq!(
            Gate::Quiet(Duration::from_millis(1)).note(),
            "keys active in 0.1 s · Tab: answer now ·"
        );
        assert!(Gate::Draft.note().contains("Tab"));
        assert!(Gate::Tab.note().contains("Tab"));
        assert!(Gate::Draft.holds() && !Gate::Open.holds());
    }
}
