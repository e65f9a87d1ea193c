//! What a connection to the origin runs over: the TCP socket, or, through an `https://` proxy,
//! the TLS connection to the proxy (the tunnel's bytes, TLS to the origin among them, travel
//! inside it).

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// The byte stream under a connection's HTTP (and TLS to the origin).
#[derive(Debug)]
pub(crate) enum Transport {
    /// A TCP connection: to the origin, or to an `http://` proxy.
    Tcp(TcpStream),
    /// A TLS connection to an `https://` proxy.
    ProxyTls(Box<dyn Tunnel>),
}

/// The TLS connection to an `https://` proxy, seen from the transport it carries. A trait here
/// because that connection is itself made over a [`Transport`] (the recursion closes one layer
/// up, in the stream module), so the backends below need not know the stream above them.
pub(crate) trait Tunnel: AsyncRead + AsyncWrite + Send + Unpin + std::fmt::Debug {
    /// The TCP socket underneath.
    fn tcp(&self) -> &TcpStream;
}

impl Transport {
    /// The TCP socket underneath (for addresses).
    pub(crate) fn tcp(&self) -> &TcpStream {
        match self {
            Transport::Tcp(tcp) => tcp,
            Transport::ProxyTls(tls) => tls.tcp(),
        }
    }
}

macro_rules! delegate {
    ($self:expr, $s:ident => $e:expr) => {
        match $self.get_mut() {
            Transport::Tcp($s) => {
                let $s = Pin::new($s);
                $e
            }
            Transport::ProxyTls($s) => {
                let $s = Pin::new(&mut **$s);
                $e
            }
        }
    };
}

impl AsyncRead for Transport {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        delegate!(self, s => s.poll_read(cx, buf))
    }
}

impl AsyncWrite for Transport {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        delegate!(self, s => s.poll_write(cx, buf))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        delegate!(self, s => s.poll_write_vectored(cx, bufs))
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Transport::Tcp(s) => s.is_write_vectored(),
            Transport::ProxyTls(s) => s.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        delegate!(self, s => s.poll_flush(cx))
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        delegate!(self, s => s.poll_shutdown(cx))
    }
}
