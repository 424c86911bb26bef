//! From a reply's bytes to chunks, once for every wire format: a [`Framing`] cuts the bytes
//! into frames (SSE events, NDJSON lines) within its bounds, a [`Decoder`] turns each frame
//! into chunks, and [`chunk_stream`] drives the two. A transport error ends the stream at once,
//! a broken bound ends it with its `Limit` error, and bytes that end before the decoder saw
//! its terminator end it with `Truncated`.

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_util::Stream;

use super::{Chunk, ChunkStream, ProviderError};

/// Chunks decoded but not yet handed out (one frame can carry several).
pub type Out = VecDeque<Result<Chunk, ProviderError>>;

/// How a wire format cuts bytes into frames.
pub trait Framing: Default + Send + Unpin + 'static {
    /// One frame, borrowed from the framing's buffers or from the bytes pushed.
    type Frame<'a>
    where
        Self: 'a;
    /// Adds bytes and hands each complete frame to `frame` until it answers true (the
    /// stream is over); returns whether it is over, or the bound the bytes broke.
    fn push(
        &mut self,
        bytes: &[u8],
        frame: impl FnMut(Self::Frame<'_>) -> bool,
    ) -> Result<bool, ProviderError>;
    /// The bytes ended: the frame left without its terminator (not dispatched), if any.
    fn finish(&mut self) -> Result<Option<Self::Frame<'_>>, ProviderError>;
}

/// What one wire format does with its frames (Chat Completions, Messages, Ollama's chat).
pub trait Decoder: Send + Unpin + 'static {
    /// How its bytes are cut.
    type Framing: Framing;
    /// The terminator a complete stream ends with (named by `Truncated`).
    const TERMINATOR: &'static str;
    /// Decodes one frame into `out`; `true` when the stream is over.
    fn frame(&mut self, frame: <Self::Framing as Framing>::Frame<'_>, out: &mut Out) -> bool;
    /// The bytes ended with `pending` left undispatched; decodes it if it counts and returns
    /// whether the stream was complete.
    fn end(
        &mut self,
        pending: Option<<Self::Framing as Framing>::Frame<'_>>,
        out: &mut Out,
    ) -> bool;
}

/// Turns a byte stream into chunks with a [`Decoder`] and its framing.
pub(crate) fn chunk_stream<S, D>(bytes: S, decoder: D) -> ChunkStream
where
    S: Stream<Item = Result<Bytes, ProviderError>> + Send + 'static,
    D: Decoder,
{
    Box::pin(Chunks {
        bytes: Box::pin(bytes),
        framing: D::Framing::default(),
        decoder,
        out: VecDeque::new(),
        ended: false,
    })
}

struct Chunks<S, D: Decoder> {
    bytes: Pin<Box<S>>,
    framing: D::Framing,
    decoder: D,
    out: Out,
    /// The terminator, an error or the end of the bytes was reached.
    ended: bool,
}

impl<S, D: Decoder> Chunks<S, D> {
    fn push(&mut self, bytes: &[u8]) {
        let Self {
            framing,
            decoder,
            out,
            ..
        } = self;
        match framing.push(bytes, |frame| decoder.frame(frame, out)) {
            Ok(over) => self.ended = over,
            Err(error) => self.fail(error),
        }
    }

    fn end(&mut self) {
        self.ended = true;
        let pending = match self.framing.finish() {
            Ok(pending) => pending,
            Err(error) => return self.out.push_back(Err(error)),
        };
        if !self.decoder.end(pending, &mut self.out) {
            self.out.push_back(Err(ProviderError::Truncated {
                terminator: D::TERMINATOR,
            }));
        }
    }

    fn fail(&mut self, error: ProviderError) {
        self.out.push_back(Err(error));
        self.ended = true;
    }
}

impl<S, D> Stream for Chunks<S, D>
where
    S: Stream<Item = Result<Bytes, ProviderError>>,
    D: Decoder,
{
    type Item = Result<Chunk, ProviderError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if let Some(item) = this.out.pop_front() {
                return Poll::Ready(Some(item));
            }
            if this.ended {
                return Poll::Ready(None);
            }
            match this.bytes.as_mut().poll_next(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Some(Ok(bytes))) => this.push(&bytes),
                Poll::Ready(Some(Err(error))) => this.fail(error),
                Poll::Ready(None) => this.end(),
            }
        }
    }
}
