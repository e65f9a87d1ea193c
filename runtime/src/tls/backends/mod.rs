//! The backends, one module each, and the one place that lists them: a prepared backend's
//! library state ([`Library`]) and a connection's TLS stream ([`TlsStream`]), each an enum with a
//! variant per compiled backend, and the dispatch over them. A new backend is a module here and a
//! variant of each enum.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

use super::info::Negotiated;
use super::refusal::ReadRefusal;
#[cfg(not(no_tls))]
use super::settings::TlsSettings;
use super::transport::Transport;
use crate::error::TlsHandshakeError;
#[cfg(rustls)]
use crate::provider::compiled::RustlsCrypto;
#[cfg(not(no_tls))]
use crate::{error::Error, provider::compiled::Compiled};

#[cfg(openssl_provider)]
pub(crate) mod openssl;
#[cfg(rustls_backend)]
pub(crate) mod rustls;
#[cfg(rustls_in_place)]
pub(crate) mod rustls_in_place;
#[cfg(s2n)]
pub(crate) mod s2n;

/// The library-specific half of a prepared backend.
#[derive(Debug)]
pub(super) enum Library {
    #[cfg(rustls_backend)]
    Rustls(rustls::RustlsBackend),
    #[cfg(rustls_in_place)]
    RustlsInPlace(rustls_in_place::InPlaceBackend),
    #[cfg(s2n)]
    S2n(s2n::S2nBackend),
    #[cfg(openssl_provider)]
    OpenSsl(openssl::OpensslBackend),
}

impl Library {
    /// The provider's library, prepared. A provider another crate's features name that the
    /// application's override left out is `NotCompiled`, which the builders never ask for (they
    /// resolve every provider to the application's).
    #[cfg(not(no_tls))]
    pub(super) fn prepare(settings: &TlsSettings) -> Result<Library, Error> {
        match settings.provider.compiled().map_err(Error::NotCompiled)? {
            #[cfg(rustls)]
            Compiled::Rustls(crypto) => Self::prepare_rustls(settings, crypto),
            #[cfg(s2n_plain)]
            Compiled::S2nTls => Ok(Library::S2n(s2n::S2nBackend::prepare(settings)?)),
            #[cfg(s2n_fips)]
            Compiled::S2nTlsFips => Ok(Library::S2n(s2n::S2nBackend::prepare(settings)?)),
            #[cfg(openssl_provider)]
            Compiled::OpenSsl => Ok(Library::OpenSsl(openssl::OpensslBackend::prepare(settings)?)),
        }
    }

    /// A rustls provider's library: rustls 0.24 serves rustls-aws-lc (with
    /// `experimental-rustls-024`) but for platform-verifier roots, whose verifier is built on
    /// rustls 0.23; everything else is the 0.23 backend.
    #[cfg(rustls)]
    fn prepare_rustls(settings: &TlsSettings, crypto: RustlsCrypto) -> Result<Library, Error> {
        #[cfg(all(rustls_in_place, rustls_backend))]
        if crypto == RustlsCrypto::AwsLc
            && (cfg!(not(rustls_aws_lc_on_023)) || settings.roots != Some(crate::roots::TrustRoots::PlatformVerifier))
        {
            return Ok(Library::RustlsInPlace(rustls_in_place::InPlaceBackend::prepare(settings)?));
        }
        #[cfg(rustls_backend)]
        return Ok(Library::Rustls(rustls::RustlsBackend::prepare(
            settings,
            crypto.provider().ok_or(Error::NoCryptoProvider)?,
        )?));
        // Without the 0.23 backend the one rustls provider is rustls-aws-lc on 0.24: the pattern
        // is irrefutable only in such a build.
        #[cfg(not(rustls_backend))]
        {
            let RustlsCrypto::AwsLc = crypto;
            Ok(Library::RustlsInPlace(rustls_in_place::InPlaceBackend::prepare(settings)?))
        }
    }

    /// The library's name as `TlsInfo::library` reports it.
    pub(super) fn name(&self) -> &'static str {
        match *self {
            #[cfg(rustls_backend)]
            Library::Rustls(_) => "rustls 0.23",
            #[cfg(rustls_in_place)]
            Library::RustlsInPlace(_) => "rustls 0.24",
            #[cfg(s2n)]
            Library::S2n(_) => "s2n-tls",
            #[cfg(openssl_provider)]
            Library::OpenSsl(_) => ::openssl::version::version(),
        }
    }

    /// A handshake over `tcp`: the TLS stream, and what was negotiated.
    #[cfg_attr(no_tls, allow(unused_variables))]
    pub(super) async fn handshake(
        &self,
        server_name: &str,
        tcp: Transport,
    ) -> Result<(TlsStream, Negotiated), TlsHandshakeError> {
        match *self {
            #[cfg(rustls_backend)]
            Library::Rustls(ref b) => {
                let (stream, refusal, negotiated) = b.handshake(server_name, tcp).await?;
                Ok((TlsStream::Rustls(Box::new(stream), refusal), negotiated))
            }
            #[cfg(rustls_in_place)]
            Library::RustlsInPlace(ref b) => {
                let (stream, refusal, negotiated) = b.handshake(server_name, tcp).await?;
                Ok((TlsStream::RustlsInPlace(Box::new(stream), refusal), negotiated))
            }
            #[cfg(s2n)]
            Library::S2n(ref b) => {
                let (stream, negotiated) = b.handshake(server_name, tcp).await?;
                Ok((TlsStream::S2n(Box::new(stream)), negotiated))
            }
            #[cfg(openssl_provider)]
            Library::OpenSsl(ref b) => {
                let (stream, negotiated) = b.handshake(server_name, tcp).await?;
                Ok((TlsStream::OpenSsl(Box::new(stream)), negotiated))
            }
        }
    }
}

/// A TLS stream of one of the backends.
#[derive(Debug)]
pub(crate) enum TlsStream {
    /// The stream, and where its reads record a refusal of our certificate.
    #[cfg(rustls_backend)]
    Rustls(Box<rustls::RustlsStream>, ReadRefusal),
    /// The stream, and where its reads record a server's demand for a certificate.
    #[cfg(rustls_in_place)]
    RustlsInPlace(Box<rustls_in_place::InPlaceStream<Transport>>, ReadRefusal),
    #[cfg(s2n)]
    S2n(Box<s2n::S2nStream>),
    #[cfg(openssl_provider)]
    OpenSsl(Box<openssl::OpensslStream>),
}

impl TlsStream {
    pub(super) fn tcp(&self) -> &TcpStream {
        match *self {
            #[cfg(rustls_backend)]
            TlsStream::Rustls(ref s, _) => s.get_ref().0.get_ref().tcp(),
            #[cfg(rustls_in_place)]
            TlsStream::RustlsInPlace(ref s, _) => s.get_ref().0.tcp(),
            #[cfg(s2n)]
            TlsStream::S2n(ref s) => s.tcp(),
            #[cfg(openssl_provider)]
            TlsStream::OpenSsl(ref s) => s.transport().tcp(),
        }
    }

    /// Where the stream's reads record a refusal of our certificate.
    pub(super) fn read_refusal(&self) -> &ReadRefusal {
        match *self {
            #[cfg(rustls_backend)]
            TlsStream::Rustls(_, ref refusal) => refusal,
            #[cfg(rustls_in_place)]
            TlsStream::RustlsInPlace(_, ref refusal) => refusal,
            #[cfg(openssl_provider)]
            TlsStream::OpenSsl(ref s) => s.read_refusal(),
            #[cfg(s2n)]
            TlsStream::S2n(ref s) => s.read_refusal(),
        }
    }
}

/// `$e` with `$s` bound to the pinned stream of whichever backend `$this` (a `&mut TlsStream`)
/// holds.
macro_rules! delegate {
    ($this:expr, $s:ident => $e:expr) => {
        match *$this {
            #[cfg(rustls_backend)]
            TlsStream::Rustls(ref mut $s, _) => {
                let $s = Pin::new(&mut **$s);
                $e
            }
            #[cfg(rustls_in_place)]
            TlsStream::RustlsInPlace(ref mut $s, _) => {
                let $s = Pin::new(&mut **$s);
                $e
            }
            #[cfg(s2n)]
            TlsStream::S2n(ref mut $s) => {
                let $s = Pin::new(&mut **$s);
                $e
            }
            #[cfg(openssl_provider)]
            TlsStream::OpenSsl(ref mut $s) => {
                let $s = Pin::new(&mut **$s);
                $e
            }
        }
    };
}

// With `--cfg smithy_tls="none"` the enums have no variant and no stream is ever made.
#[cfg_attr(no_tls, allow(unused_variables))]
impl AsyncRead for TlsStream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        // In TLS 1.3 a server refuses the client's certificate after the client's handshake is
        // done: its alert is the first read's error, which carries the same typed error as a
        // refusal during the handshake (so that it is not retried as a transport failure). The
        // s2n-tls and OpenSSL streams do this themselves.
        match *self.get_mut() {
            #[cfg(rustls_backend)]
            TlsStream::Rustls(ref mut s, ref refusal) => match Pin::new(&mut **s).poll_read(cx, buf) {
                Poll::Ready(Err(e)) => Poll::Ready(Err(refusal.read_error(e, rustls::refusal_on_read))),
                other => other,
            },
            #[cfg(rustls_in_place)]
            TlsStream::RustlsInPlace(ref mut s, ref refusal) => match Pin::new(&mut **s).poll_read(cx, buf) {
                Poll::Ready(Err(e)) => Poll::Ready(Err(refusal.read_error(e, rustls_in_place::refusal_on_read))),
                other => other,
            },
            #[cfg(s2n)]
            TlsStream::S2n(ref mut s) => Pin::new(&mut **s).poll_read(cx, buf),
            #[cfg(openssl_provider)]
            TlsStream::OpenSsl(ref mut s) => Pin::new(&mut **s).poll_read(cx, buf),
        }
    }
}

#[cfg_attr(no_tls, allow(unused_variables))]
impl AsyncWrite for TlsStream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        delegate!(self.get_mut(), s => s.poll_write(cx, buf))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        delegate!(self.get_mut(), s => s.poll_write_vectored(cx, bufs))
    }

    fn is_write_vectored(&self) -> bool {
        match *self {
            #[cfg(rustls_backend)]
            TlsStream::Rustls(ref s, _) => s.is_write_vectored(),
            #[cfg(rustls_in_place)]
            TlsStream::RustlsInPlace(ref s, _) => s.is_write_vectored(),
            #[cfg(s2n)]
            TlsStream::S2n(ref s) => s.is_write_vectored(),
            #[cfg(openssl_provider)]
            TlsStream::OpenSsl(ref s) => s.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        delegate!(self.get_mut(), s => s.poll_flush(cx))
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        delegate!(self.get_mut(), s => s.poll_shutdown(cx))
    }
}
