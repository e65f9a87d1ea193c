//! The s2n-tls connection as the HTTP layer reads it.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

use crate::tls::{ReadAhead, Transport};

/// An s2n-tls stream whose reads hand over every record s2n-tls already holds.
///
/// s2n-tls gives out at most one record per read; hyper then sees many small reads, never grows
/// its buffer, and wakes the body's reader once per record. Each read here drains what is
/// decrypted into the caller's buffer instead.
pub(crate) struct S2nStream(pub(super) s2n_tls_tokio::TlsStream<ReadAhead<Transport>>);

impl std::fmt::Debug for S2nStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S2nStream").finish_non_exhaustive()
    }
}

impl S2nStream {
    /// The TCP socket underneath.
    pub(crate) fn tcp(&self) -> &TcpStream {
        self.0.get_ref().get_ref().tcp()
    }
}

impl AsyncRead for S2nStream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let mut inner = Pin::new(&mut self.get_mut().0);
        let start = buf.filled().len();
        std::task::ready!(inner.as_mut().poll_read(cx, buf))?;
        if buf.filled().len() == start {
            return Poll::Ready(Ok(())); // end of stream
        }
        while buf.remaining() > 0 {
            let before = buf.filled().len();
            match inner.as_mut().poll_read(cx, buf) {
                Poll::Ready(Ok(())) if buf.filled().len() > before => continue,
                // End of stream or an error: reported by the next call, after this data.
                _ => break,
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for S2nStream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().0).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().0).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.0.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_shutdown(cx)
    }
}
