//! The s2n-tls connection as the HTTP layer reads it.

use std::future::Future as _;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::{Instant, Sleep};

use crate::tls::gather::poll_write_gathered;
use crate::tls::read_ahead::ReadAhead;
use crate::tls::refusal::ReadRefusal;
use crate::tls::transport::Transport;

/// How long a connection must have had nothing to read before s2n-tls's record buffers are
/// given back. Releasing them at every empty read (between each request and its response)
/// cost small calls 10-20 %; after this long without data the connection is most likely idle
/// in a pool, and one release and reallocation per pause of this length costs nothing
/// measurable.
const RELEASE_BUFFERS_AFTER: Duration = Duration::from_millis(100);

/// An s2n-tls stream whose reads hand over every record s2n-tls already holds, and which gives
/// s2n-tls's record buffers back once it has been idle for [`RELEASE_BUFFERS_AFTER`].
///
/// s2n-tls gives out at most one record per read; hyper then sees many small reads, never grows
/// its buffer, and wakes the body's reader once per record. Each read here drains what is
/// decrypted into the caller's buffer instead.
pub(crate) struct S2nStream {
    inner: s2n_tls_tokio::TlsStream<ReadAhead<Transport>>,
    idle: IdleRelease,
    /// An error met after a read had already gathered data, returned at the next read (a
    /// transport reset is reported once; the socket then reads as a clean end of file).
    failed: Option<io::Error>,
    /// Where reads record a server's refusal of our certificate.
    refusal: ReadRefusal,
    /// The connection speaks h2: vectored writes are gathered into one (`crate::tls::gather`).
    h2: bool,
}

/// When a stream that found nothing to read gives its buffers back: a timer that runs out
/// [`RELEASE_BUFFERS_AFTER`] after it was set, checked against a count of the reads that
/// returned data. A busy connection resets the timer once per period, not once per read (a
/// reset takes the runtime's timer lock; once per small call that cost 12 % at 64 at once).
#[derive(Default)]
struct IdleRelease {
    /// Made at the first empty read.
    timer: Option<Pin<Box<Sleep>>>,
    /// Reads that returned data, ever.
    reads: u64,
    /// `reads` when the timer was set.
    reads_at_set: u64,
    /// The buffers are released and no data has arrived since.
    released: bool,
}

impl std::fmt::Debug for S2nStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S2nStream").finish_non_exhaustive()
    }
}

impl S2nStream {
    /// The TCP socket underneath.
    pub(crate) fn tcp(&self) -> &TcpStream {
        self.inner.get_ref().get_ref().tcp()
    }

    /// The stream after its handshake; `h2` when it negotiated h2.
    pub(super) fn new(inner: s2n_tls_tokio::TlsStream<ReadAhead<Transport>>, refusal: ReadRefusal, h2: bool) -> Self {
        S2nStream { inner, idle: IdleRelease::default(), failed: None, refusal, h2 }
    }

    /// Where reads record a server's refusal of our certificate.
    pub(crate) fn read_refusal(&self) -> &ReadRefusal {
        &self.refusal
    }

    /// A read found nothing: release s2n-tls's buffers once no read has returned data for a
    /// whole period (s2n-tls refuses, harmlessly, while it holds unread data). A TRACE event
    /// says when it did.
    fn note_empty_read(&mut self, cx: &mut Context<'_>) {
        if self.idle.empty_read(cx) {
            let connection: &mut s2n_tls::connection::Connection = self.inner.as_mut();
            if connection.release_buffers().is_ok() {
                tracing::trace!("idle connection: s2n-tls record buffers released");
            }
        }
    }
}

impl IdleRelease {
    /// A read found nothing: whether the buffers are to be released now, because no read has
    /// returned data for a whole period. Until then `cx` is woken when the period ends.
    fn empty_read(&mut self, cx: &mut Context<'_>) -> bool {
        if self.released {
            return false;
        }
        let (reads, reads_at_set) = (self.reads, &mut self.reads_at_set);
        let timer = self.timer.get_or_insert_with(|| {
            *reads_at_set = reads;
            Box::pin(tokio::time::sleep(RELEASE_BUFFERS_AFTER))
        });
        if timer.as_mut().poll(cx).is_pending() {
            return false;
        }
        if self.reads == self.reads_at_set {
            self.released = true;
            return true;
        }
        // Data came during the period: a new one starts now.
        self.reads_at_set = self.reads;
        timer.as_mut().reset(Instant::now() + RELEASE_BUFFERS_AFTER);
        let _ = timer.as_mut().poll(cx);
        false
    }

    /// A read returned data (or the end of the stream).
    fn data(&mut self) {
        self.reads += 1;
        self.released = false;
    }
}

impl AsyncRead for S2nStream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if let Some(error) = this.failed.take() {
            return Poll::Ready(Err(error));
        }
        let start = buf.filled().len();
        let first = match Pin::new(&mut this.inner).poll_read(cx, buf) {
            // A server's refusal of our certificate (TLS 1.3) arrives here, as an alert.
            Poll::Ready(Err(error)) => {
                let conn: &s2n_tls::connection::Connection = this.inner.as_ref();
                return Poll::Ready(Err(this
                    .refusal
                    .read_error(error, |io, answer| super::refusal_on_read(io, answer, conn))));
            }
            other => other,
        };
        if first.is_pending() {
            this.note_empty_read(cx);
            return Poll::Pending;
        }
        this.idle.data();
        let mut inner = Pin::new(&mut this.inner);
        if buf.filled().len() == start {
            return Poll::Ready(Ok(())); // end of stream
        }
        while buf.remaining() > 0 {
            let before = buf.filled().len();
            match inner.as_mut().poll_read(cx, buf) {
                Poll::Ready(Ok(())) if buf.filled().len() > before => continue,
                // An error: reported by the next call, after this data.
                Poll::Ready(Err(error)) => {
                    let conn: &s2n_tls::connection::Connection = inner.as_ref().get_ref().as_ref();
                    this.failed =
                        Some(this.refusal.read_error(error, |io, answer| super::refusal_on_read(io, answer, conn)));
                    break;
                }
                // End of stream, or nothing more yet.
                _ => break,
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for S2nStream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        poll_write_gathered(Pin::new(&mut self.get_mut().inner), cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.h2
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Polls `idle` with empty reads until it says to release, as a stream's reader would:
    /// woken by its timer, never by data.
    async fn released_within(idle: &mut IdleRelease, limit: Duration) -> bool {
        let wait = std::future::poll_fn(|cx| if idle.empty_read(cx) { Poll::Ready(()) } else { Poll::Pending });
        tokio::time::timeout(limit, wait).await.is_ok()
    }

    #[tokio::test]
    async fn buffers_go_back_after_a_quiet_period_and_not_before() {
        let mut idle = IdleRelease::default();
        let started = std::time::Instant::now();
        // The timer wakes the reader at the end of the period: no other wake-up is needed.
        assert!(released_within(&mut idle, Duration::from_secs(5)).await, "never released");
        assert!(started.elapsed() >= RELEASE_BUFFERS_AFTER, "released after {:?}", started.elapsed());
        // Released once; more empty reads change nothing until data comes.
        assert!(!released_within(&mut idle, RELEASE_BUFFERS_AFTER * 2).await, "released twice");
    }

    #[tokio::test]
    async fn data_during_the_period_starts_a_new_one() {
        let mut idle = IdleRelease::default();
        assert!(!released_within(&mut idle, RELEASE_BUFFERS_AFTER / 2).await, "released too early");
        idle.data();
        // The period that saw data ends without a release; a whole quiet one follows first.
        let started = std::time::Instant::now();
        assert!(released_within(&mut idle, Duration::from_secs(5)).await, "never released");
        assert!(started.elapsed() >= RELEASE_BUFFERS_AFTER, "released after {:?}", started.elapsed());
        // Data after a release makes the next quiet period release again.
        idle.data();
        assert!(released_within(&mut idle, Duration::from_secs(5)).await, "not released again");
    }
}
