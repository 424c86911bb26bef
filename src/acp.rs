//! The Agent Client Protocol (ACP, JSON-RPC over stdio), both ways: `taco acp` serves taco's
//! agent to an editor or another front end (`agent`); `taco --agent NAME` drives an external
//! agent from taco's cockpit (`client`); lines are read and written with bounds of taco's own
//! (`lines`).

pub mod agent;
pub mod client;
pub mod lines;
