//! Trace and span ids, and the W3C `traceparent` that carries them between processes.
//!
//! Ids are derived from what the events say (a run's request id, a call's frame and turn),
//! hashed: the spans a live export sends and the spans `taco trace --otlp-json` writes later
//! from the session file are the same spans, and a tool process is told its call's span id
//! before that span exists anywhere.

use sha2::{Digest, Sha256};

/// A trace's context as W3C Trace Context carries it (`TRACEPARENT`, `TRACESTATE`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceParent {
    /// The trace id (16 bytes, not all zero).
    pub trace_id: [u8; 16],
    /// The parent span's id (8 bytes, not all zero).
    pub span_id: [u8; 8],
    /// The trace flags (bit 0: sampled).
    pub flags: u8,
    /// The vendors' `tracestate`, passed on as given (bounded).
    pub state: Option<String>,
}

/// Longest `tracestate` passed on (the W3C limit is 32 members of ~256 bytes).
const MAX_STATE: usize = 512;

impl TraceParent {
    /// Reads a `traceparent` header value (`00-<32 hex>-<16 hex>-<2 hex>`); `None` for
    /// anything else, an all-zero id, or version `ff`. A later version's extra fields are
    /// ignored, as the spec asks.
    pub fn parse(value: &str, state: Option<&str>) -> Option<Self> {
        let value = value.trim();
        if value.len() > 256 {
            return None;
        }
        let mut parts = value.split('-');
        let version = parts.next()?;
        let (trace, span, flags) = (parts.next()?, parts.next()?, parts.next()?);
        if version.len() != 2 || version.eq_ignore_ascii_case("ff") {
            return None;
        }
        if version == "00" && parts.next().is_some() {
            return None;
        }
        let trace_id: [u8; 16] = hex(trace)?;
        let span_id: [u8; 8] = hex(span)?;
        let [flags]: [u8; 1] = hex(flags)?;
        if trace_id == [0; 16] || span_id == [0; 8] {
            return None;
        }
        let state = state
            .map(str::trim)
            .filter(|s| !s.is_empty() && s.len() <= MAX_STATE && s.is_ascii())
            .map(String::from);
        Some(Self {
            trace_id,
            span_id,
            flags,
            state,
        })
    }

    /// The header value (`00-…-…-01`).
    pub fn header(&self) -> String {
        format!(
            "00-{}-{}-{:02x}",
            to_hex(&self.trace_id),
            to_hex(&self.span_id),
            self.flags
        )
    }

    /// The same trace, with `span` as the parent (what a child process is given).
    pub fn child(&self, span: [u8; 8]) -> Self {
        Self {
            span_id: span,
            ..self.clone()
        }
    }
}

/// The trace taco runs in, and whether its tool processes are told their call's span.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TraceSetup {
    /// `TRACEPARENT` (and `TRACESTATE`) of taco's environment: runs are its children.
    pub parent: Option<TraceParent>,
    /// Tool processes get a `TRACEPARENT` naming their call's span: spans are exported, or
    /// taco runs in someone's trace.
    pub propagate: bool,
}

impl TraceSetup {
    /// The context for a process of call `frame` (made in `turn`) of run `request_id`.
    pub fn for_call(&self, request_id: &str, frame: &str, turn: u32) -> Option<TraceParent> {
        if !self.propagate {
            return None;
        }
        let span = tool_span(request_id, frame, turn);
        Some(match &self.parent {
            Some(parent) => parent.child(span),
            None => TraceParent {
                trace_id: trace_id(request_id, None),
                span_id: span,
                flags: 1,
                state: None,
            },
        })
    }
}

/// Exactly `N` bytes from `2N` lowercase or uppercase hex digits.
fn hex<const N: usize>(text: &str) -> Option<[u8; N]> {
    if text.len() != 2 * N || !text.is_ascii() {
        return None;
    }
    let mut out = [0u8; N];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

/// Lowercase hex.
pub fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The first `N` bytes of the hash of `parts` (each length-prefixed, so `("ab","c")` and
/// `("a","bc")` differ); never all zero.
fn derive<const N: usize>(parts: &[&[u8]]) -> [u8; N] {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part);
    }
    let digest = hasher.finalize();
    let mut out = [0u8; N];
    out.copy_from_slice(&digest[..N]);
    if out == [0; N] {
        out[N - 1] = 1;
    }
    out
}

/// The trace of run `request_id`: the one taco was started in (`TRACEPARENT`), else its own.
pub fn trace_id(request_id: &str, parent: Option<&TraceParent>) -> [u8; 16] {
    match parent {
        Some(parent) => parent.trace_id,
        None => derive(&[b"trace", request_id.as_bytes()]),
    }
}

/// A span of run `request_id`, named by its kind and what tells it apart in the run.
pub fn span_id(request_id: &str, kind: &str, key: &[&str]) -> [u8; 8] {
    let mut parts: Vec<&[u8]> = vec![request_id.as_bytes(), kind.as_bytes()];
    parts.extend(key.iter().map(|k| k.as_bytes()));
    derive(&parts)
}

/// The span of a tool call: frame ids repeat across turns (some models number calls afresh
/// each turn), the turn tells them apart.
pub fn tool_span(request_id: &str, frame: &str, turn: u32) -> [u8; 8] {
    span_id(request_id, "tool", &[frame, &turn.to_string()])
}

#[cfg(test)]
mod tests {
    use super::*;

    const VALID: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

    #[test]
    fn a_valid_traceparent_round_trips() {
        let parent = TraceParent::parse(VALID, Some(" congo=t61rcWkgMzE ")).unwrap();
        assert_eq!(to_hex(&parent.trace_id), "0af7651916cd43dd8448eb211c80319c");
        assert_eq!(to_hex(&parent.span_id), "b7ad6b7169203331");
        assert_eq!(parent.flags, 1);
        assert_eq!(parent.state.as_deref(), Some("congo=t61rcWkgMzE"));
        assert_eq!(parent.header(), VALID);
        let upper = TraceParent::parse(&VALID.to_uppercase(), None).unwrap();
        assert_eq!(upper.header(), VALID);
        // A later version's extra fields are ignored.
        assert!(TraceParent::parse(&format!("01{}-extra", &VALID[2..]), None).is_some());
    }

    #[test]
    fn anything_else_is_no_parent() {
        for bad in [
            "",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331",
            "00-00000000000000000000000000000000-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
            "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-x",
            "00-0af7651916cd43dd8448eb211c8031zz-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319é-b7ad6b7169203331-01",
            &"0".repeat(10_000),
        ] {
            assert_eq!(TraceParent::parse(bad, None), None, "{bad:?}");
        }
        let huge = "a=b,".repeat(1000);
        assert_eq!(TraceParent::parse(VALID, Some(&huge)).unwrap().state, None);
    }

    #[test]
    fn ids_are_stable_and_tell_their_parts_apart() {
        assert_eq!(tool_span("r", "c1", 1), tool_span("r", "c1", 1));
        assert_ne!(tool_span("r", "c1", 1), tool_span("r", "c1", 2));
        assert_ne!(span_id("r", "ab", &["c"]), span_id("r", "a", &["bc"]));
        assert_ne!(trace_id("r1", None), trace_id("r2", None));
        let parent = TraceParent::parse(VALID, None).unwrap();
        assert_eq!(trace_id("r1", Some(&parent)), parent.trace_id);
        let child = parent.child(tool_span("r", "c1", 1));
        assert!(
            child
                .header()
                .starts_with("00-0af7651916cd43dd8448eb211c80319c-")
        );
    }
}
