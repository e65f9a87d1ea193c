//! The connection's byte stream: libssl's, reading every record already received per call.
//!
//! `SSL_read` returns at most one TLS record (16 KiB), so a single download read through it
//! alone hands hyper one record per poll; rustls's stream returns as much plaintext as it has
//! decrypted. [`OpensslStream`] keeps reading records into the caller's buffer until it is full
//! or the transport has nothing more, so a read costs the same on either provider.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_openssl::SslStream;

use crate::tls::gather::poll_write_gathered;
use crate::tls::read_ahead::ReadAhead;
use crate::tls::refusal::ReadRefusal;
use crate::tls::transport::Transport;

/// A TLS connection through libssl.
#[derive(Debug)]
pub(crate) struct OpensslStream {
    stream: SslStream<ReadAhead<Transport>>,
    /// An error met after a read had already gathered data, returned at the next read. libssl
    /// does not repeat a transport error: a reset, once reported, reads as a clean end of file.
    failed: Option<io::Error>,
    /// Where reads record a server's refusal of our certificate.
    refusal: ReadRefusal,
    /// The connection speaks h2: vectored writes are gathered into one (`crate::tls::gather`).
    h2: bool,
}

impl OpensslStream {
    /// The stream after its handshake; `h2` when it negotiated h2.
    pub(crate) fn new(stream: SslStream<ReadAhead<Transport>>, refusal: ReadRefusal, h2: bool) -> Self {
        OpensslStream { stream, failed: None, refusal, h2 }
    }

    /// Where reads record a server's refusal of our certificate.
    pub(crate) fn read_refusal(&self) -> &ReadRefusal {
        &self.refusal
    }

    /// The transport under TLS.
    pub(crate) fn transport(&self) -> &Transport {
        self.stream.get_ref().get_ref()
    }
}

impl AsyncRead for OpensslStream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if let Some(error) = this.failed.take() {
            return Poll::Ready(Err(error));
        }
        let start = buf.filled().len();
        loop {
            let before = buf.filled().len();
            match Pin::new(&mut this.stream).poll_read(cx, buf) {
                // End of stream (nothing added), or the buffer is full.
                Poll::Ready(Ok(())) if buf.filled().len() == before || buf.remaining() == 0 => {
                    return Poll::Ready(Ok(()))
                }
                Poll::Ready(Ok(())) => {}
                // What was read before the error is returned first, the error at the next read.
                Poll::Ready(Err(error)) if buf.filled().len() > start => {
                    this.failed = Some(this.refusal.read_error(error, super::refusal_on_read));
                    return Poll::Ready(Ok(()));
                }
                Poll::Pending if buf.filled().len() > start => return Poll::Ready(Ok(())),
                // A server's refusal of our certificate (TLS 1.3) arrives here, as an alert.
                Poll::Ready(Err(error)) => {
                    return Poll::Ready(Err(this.refusal.read_error(error, super::refusal_on_read)))
                }
                other => return other,
            }
        }
    }
}

impl AsyncWrite for OpensslStream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write(cx, data)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        poll_write_gathered(Pin::new(&mut self.get_mut().stream), cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.h2
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}
