//! Server-sent events decoding.
