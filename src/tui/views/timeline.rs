//! The trace timeline pane.
