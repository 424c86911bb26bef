//! The panes and overlays. Each owns its state, updates it from events and keys, and renders
//! into a buffer; side effects leave as return values, never from inside a view.

pub mod approval;
pub mod chat;
pub mod checklist;
pub mod composer;
#[cfg(test)]
pub(crate) mod fed;
pub mod file_diff;
pub mod form;
pub mod gate;
pub mod grants;
pub mod help;
pub mod input;
pub mod keyline;
pub mod picker;
pub mod rewind;
pub mod stack;
pub mod status;
pub mod timeline;
