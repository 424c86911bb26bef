//! The agent loop (DESIGN §4).

pub mod turn;
