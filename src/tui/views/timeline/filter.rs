//! Which rows the timeline lists: `f` cycles all, llm, tools, asks (what waited for the
//! user) and problems.

/// Which kinds of row the list shows (`f` cycles them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Filter {
    All,
    Llm,
    Tools,
    /// Approvals and questions: everything that waited for the user.
    Asks,
    Problems,
}

impl Filter {
    /// The next filter in the `f` cycle.
    pub(super) fn next(self) -> Self {
        match self {
            Self::All => Self::Llm,
            Self::Llm => Self::Tools,
            Self::Tools => Self::Asks,
            Self::Asks => Self::Problems,
            Self::Problems => Self::All,
        }
    }

    /// The name shown in the pane title.
    pub(super) fn label(self) -> &'static str {
        match self {
            Self::All => "all",
            Self::Llm => "llm",
            Self::Tools => "tools",
            Self::Asks => "asks",
            Self::Problems => "problems",
        }
    }
}
