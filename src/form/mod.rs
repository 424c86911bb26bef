//! A server's form (MCP `elicitation/create`): the requested schema read into typed fields in
//! the server's order and bounded ([`FormSpec`]), and each value checked against its field
//! ([`Checker`]). The orchestrator asks for a form as one question (`InputKind::Form`); the
//! TUI's form overlay fills it in; `exec` declines it.

mod check;
pub(crate) mod spec;

pub use check::{Checker, check_content, parse_number};
pub use spec::{
    Choice, Field, FieldKind, FormError, FormSpec, MAX_FIELDS, MAX_LABEL, MAX_OPTIONS,
    MAX_SCHEMA_BYTES, MAX_TEXT,
};
