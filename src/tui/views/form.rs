//! A server's form (MCP `elicitation/create`) as one dialog: every field of the requested
//! schema in the server's order, filled in place, checked as it is filled, answered with
//! Accept, Decline or Cancel. The state (`state.rs`) is a typed model that keys change; the
//! drawing (`render.rs`) reads it.

mod render;
mod state;
#[cfg(test)]
mod tests;

pub use render::limits;
pub use state::{Button, Entry, FormState, MAX_ENTRY, Step};
