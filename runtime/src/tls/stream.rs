//! A connection's stream: plain, or TLS by one of the backends ([`super::backends::TlsStream`]).

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

use super::backends::TlsStream;
use super::refusal::ReadRefusal;
use super::transport::{Transport, Tunnel};

/// A connected stream: plain for `http://`, or TLS for `https://` (by one of the backends), over
/// TCP or (through an `https://` proxy) over TLS to the proxy.
#[derive(Debug)]
pub(crate) enum MaybeTlsStream {
    Plain(Transport),
    Tls(TlsStream),
}

impl Tunnel for MaybeTlsStream {
    fn tcp(&self) -> &TcpStream {
        MaybeTlsStream::tcp(self)
    }
}

impl MaybeTlsStream {
    pub(crate) fn tcp(&self) -> &TcpStream {
        match self {
            MaybeTlsStream::Plain(s) => s.tcp(),
            MaybeTlsStream::Tls(s) => s.tcp(),
        }
    }

    /// Where the stream's reads record a refusal of our certificate (TLS streams).
    pub(crate) fn read_refusal(&self) -> Option<&ReadRefusal> {
        match self {
            MaybeTlsStream::Plain(_) => None,
            MaybeTlsStream::Tls(s) => Some(s.read_refusal()),
        }
    }
}

macro_rules! delegate {
    ($self:expr, $s:ident => $e:expr) => {
        match $self.get_mut() {
            MaybeTlsStream::Plain($s) => {
                let $s = Pin::new($s);
                $e
            }
            MaybeTlsStream::Tls($s) => {
                let $s = Pin::new($s);
                $e
            }
        }
    };
}

impl AsyncRead for MaybeTlsStream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        delegate!(self, s => s.poll_read(cx, buf))
    }
}

impl MaybeTlsStream {
    /// A write's error, or the server's refusal of our certificate when one waits unread: in
    /// TLS 1.3 the server sends its alert and closes after the client's handshake is done, and
    /// the client's next write (its first request) can fail on the closed connection before any
    /// read has seen the alert. On a connection the peer closed or reset (the only write errors
    /// this looks past) the socket is readable, so the read resolves at once: the alert, or the
    /// end. Until the reactor has seen that (the read is pending) the write is pending too; it
    /// fails again when polled again, and the read decides.
    fn write_error(mut self: Pin<&mut Self>, cx: &mut Context<'_>, error: io::Error) -> Poll<io::Error> {
        let closed = matches!(
            error.kind(),
            io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionAborted
        );
        if !closed || self.read_refusal().is_none_or(|r| r.get().is_some()) {
            return Poll::Ready(error);
        }
        let mut scratch = [0u8; 256];
        let read = self.as_mut().poll_read(cx, &mut ReadBuf::new(&mut scratch));
        match self.read_refusal().and_then(ReadRefusal::get) {
            Some(refused) => {
                tracing::debug!(write_error = %error, "a write met the server's refusal of our certificate");
                Poll::Ready(io::Error::new(error.kind(), refused.clone()))
            }
            None if read.is_pending() => Poll::Pending,
            None => Poll::Ready(error),
        }
    }
}

impl AsyncWrite for MaybeTlsStream {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        match delegate!(self.as_mut(), s => s.poll_write(cx, buf)) {
            Poll::Ready(Err(e)) => self.write_error(cx, e).map(Err),
            other => other,
        }
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match delegate!(self.as_mut(), s => s.poll_write_vectored(cx, bufs)) {
            Poll::Ready(Err(e)) => self.write_error(cx, e).map(Err),
            other => other,
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            MaybeTlsStream::Plain(s) => s.is_write_vectored(),
            MaybeTlsStream::Tls(s) => s.is_write_vectored(),
        }
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match delegate!(self.as_mut(), s => s.poll_flush(cx)) {
            Poll::Ready(Err(e)) => self.write_error(cx, e).map(Err),
            other => other,
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        delegate!(self, s => s.poll_shutdown(cx))
    }
}
