//! The panes and overlays. Each owns its state, updates it from events and keys, and renders
//! into a buffer; side effects leave as return values, never from inside a view.

pub mod chat;
pub mod stack;
pub mod timeline;
