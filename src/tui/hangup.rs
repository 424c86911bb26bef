//! The terminal's input, ended when the terminal hangs up. crossterm 0.29's event source
//! re-reads a hung-up tty forever inside one poll (crossterm-rs/crossterm#793): the loop never
//! gets back to its `select!`, so not even SIGHUP or SIGTERM ends it, and taco outlived its
//! terminal at 100 % CPU (seen after a test's tmux server was killed). So before each poll of
//! crossterm's stream the descriptor is asked, without waiting, whether it hung up.

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_util::Stream;

/// `inner`, until the terminal behind `fd` hangs up: then one error, then the end.
pub struct UntilHangup<S> {
    inner: S,
    fd: RawFd,
    ended: bool,
}

impl<S> UntilHangup<S> {
    /// Watches `fd` (the terminal crossterm reads: stdin) for a hangup while `inner` is read.
    pub fn new(inner: S, fd: &impl AsRawFd) -> Self {
        Self {
            inner,
            fd: fd.as_raw_fd(),
            ended: false,
        }
    }
}

impl<S, T> Stream for UntilHangup<S>
where
    S: Stream<Item = io::Result<T>> + Unpin,
{
    type Item = io::Result<T>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.ended {
            return Poll::Ready(None);
        }
        if hung_up(self.fd) {
            self.ended = true;
            return Poll::Ready(Some(Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the terminal hung up",
            ))));
        }
        Pin::new(&mut self.inner).poll_next(cx)
    }
}

/// Whether `fd` reports a hangup or an error (a tty whose other side closed, a closed pipe).
fn hung_up(fd: RawFd) -> bool {
    let mut watched = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd, and a zero timeout: poll only reports.
    let ready = unsafe { libc::poll(&mut watched, 1, 0) };
    ready > 0 && watched.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::os::unix::net::UnixStream;

    use futures_util::StreamExt;

    use super::*;

    #[tokio::test]
    async fn input_goes_on_until_the_other_side_hangs_up_then_ends_with_an_error() {
        let (ours, mut theirs) = UnixStream::pair().unwrap();
        let keys = futures_util::stream::iter([Ok::<_, io::Error>(1), Ok(2)])
            .chain(futures_util::stream::pending());
        let mut input = UntilHangup::new(keys, &ours);
        // Data waiting is not a hangup.
        theirs.write_all(b"x").unwrap();
        assert_eq!(input.next().await.unwrap().unwrap(), 1);
        assert_eq!(input.next().await.unwrap().unwrap(), 2);
        drop(theirs);
        let e = input.next().await.unwrap().unwrap_err();
        assert_eq!(e.to_string(), "the terminal hung up");
        assert!(input.next().await.is_none());
    }
}
