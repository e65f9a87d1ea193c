//! A rustls client connection driven through rustls's unbuffered API, over its transport.
//!
//! With rustls's buffered API (what tokio-rustls wraps) a received byte is copied three times
//! in user space on our side: from the read-ahead buffer into rustls's deframer buffer, from
//! the decrypted record into rustls's plaintext queue, and from there into hyper's buffer.
//! Here the socket is read straight into a buffer this stream owns (up to 64 KiB a call, as
//! the read-ahead did), rustls decrypts each record in place in it, and the plaintext goes to
//! hyper: two copies (rustls 0.23's unbuffered API still moves each decrypted record into a
//! queue of its own before handing it out, `CommonState::take_received_plaintext`). A read hands
//! hyper every record the last socket read completed, not one record per call.
//!
//! Writes encrypt straight from the caller's slices into one outgoing buffer (small slices,
//! such as an HTTP/1.1 head and a small body, are gathered into one record first) and send it
//! in one write call.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use rustls::client::UnbufferedClientConnection;
use rustls::unbuffered::{ConnectionState, EncodeError, EncryptError, InsufficientSizeError, UnbufferedStatus};
use rustls::ClientConfig;
use rustls_pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

use super::Transport;

/// The receive buffer a connection starts with: one maximum-size TLS record (16 KiB of data
/// plus header and tag). Enough for handshakes and small responses.
const INITIAL_CAPACITY: usize = 16 * 1024 + 256;

/// The receive buffer once a socket read has filled it (bulk data is arriving): four
/// maximum-size records per read call.
const BULK_CAPACITY: usize = 64 * 1024;

/// The least free space a socket read is given: one maximum-size record.
const MIN_READ: usize = 16 * 1024 + 256;

/// A maximum-size record's plaintext: slices smaller than this are gathered with their
/// neighbours into one record.
const RECORD_PLAINTEXT: usize = 16 * 1024;

/// Plaintext one write call takes at most.
const MAX_WRITE: usize = 256 * 1024;

/// Encrypted bytes that may wait for the socket before a write call waits too.
const OUTGOING_LIMIT: usize = MAX_WRITE;

/// Buffers larger than this are given back once empty and no longer needed (the outgoing
/// buffer after an upload, once the response has come; plaintext kept from a large read);
/// smaller ones are kept for the next call.
const KEEP: usize = 32 * 1024;

/// A TLS connection to the origin (or to an `https://` proxy) as hyper reads and writes it.
pub(crate) struct RustlsStream {
    conn: UnbufferedClientConnection,
    config: Arc<ClientConfig>,
    io: Transport,
    /// Received TLS bytes; `incoming[in_start..]` is not yet processed. Empty (no allocation)
    /// while the socket has nothing to read and nothing is buffered.
    incoming: Vec<u8>,
    in_start: usize,
    /// What to allocate for the next socket read: [`INITIAL_CAPACITY`] or [`BULK_CAPACITY`].
    in_capacity: usize,
    /// Decrypted bytes the caller had no room for yet: `plaintext[pt_start..]`.
    plaintext: Vec<u8>,
    pt_start: usize,
    /// Encrypted bytes not yet written: `outgoing[out_start..out_end]` (the vector's length is
    /// its usable size; it is only zeroed when it grows).
    outgoing: Vec<u8>,
    out_start: usize,
    out_end: usize,
    /// Small plaintext slices gathered into one record.
    staging: Vec<u8>,
    /// The peer sent close_notify: reads end cleanly.
    peer_closed: bool,
    /// The transport reached its end.
    eof: bool,
    /// Our close_notify is queued.
    close_queued: bool,
    /// Plaintext was written since a read last returned data: an upload may be under way, so
    /// a large outgoing buffer is kept (allocating it again would zero it again).
    wrote_since_data: bool,
}

impl std::fmt::Debug for RustlsStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RustlsStream")
            .field("buffered_in", &(self.incoming.len() - self.in_start))
            .field("buffered_out", &(self.out_end - self.out_start))
            .field("peer_closed", &self.peer_closed)
            .finish_non_exhaustive()
    }
}

/// What one step of the connection's state machine asks for next.
enum Step {
    /// Something happened that needs no I/O (a record decrypted, handshake data encoded): step
    /// again.
    Again,
    /// The handshake needs more bytes from the peer.
    HandshakeBlocked,
    /// Connected, and nothing received is left to process: more bytes are needed to read.
    Idle,
    /// That many bytes of the caller's plaintext were encrypted into the outgoing buffer.
    Wrote(usize),
    /// Both sides have sent close_notify.
    Closed,
}

/// What the caller of [`RustlsStream::step`] wants to do when the connection can send.
enum Action<'a, 'b> {
    /// Read: decrypted data goes to this buffer first (and the rest is kept).
    Read(Option<&'a mut ReadBuf<'b>>),
    /// Encrypt these slices.
    Write(&'a [io::IoSlice<'a>]),
    /// Queue close_notify.
    Close,
}

fn tls_error(e: rustls::Error) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

/// Makes `out[..needed]` usable (zeroing only what is new).
fn grow(out: &mut Vec<u8>, needed: usize) {
    if out.len() < needed {
        out.resize(needed.max(out.len() * 2).max(4096), 0);
    }
}

/// Runs `encode` into `out[*end..]`, growing `out` until it fits; advances `end`.
fn encode_into<E>(
    out: &mut Vec<u8>,
    end: &mut usize,
    mut encode: impl FnMut(&mut [u8]) -> Result<usize, E>,
    too_small: impl Fn(&E) -> Option<usize>,
) -> Result<(), E> {
    loop {
        match encode(&mut out[*end..]) {
            Ok(n) => {
                *end += n;
                return Ok(());
            }
            Err(e) => match too_small(&e) {
                Some(required) => grow(out, *end + required),
                None => return Err(e),
            },
        }
    }
}

fn encrypt_too_small(e: &EncryptError) -> Option<usize> {
    match e {
        EncryptError::InsufficientSize(InsufficientSizeError { required_size }) => Some(*required_size),
        _ => None,
    }
}

fn encrypt_error(e: EncryptError) -> io::Error {
    io::Error::other(format!("TLS encryption failed: {e}"))
}

impl RustlsStream {
    /// Connects: the TLS handshake with `name` over `io`.
    pub(crate) async fn connect(
        config: Arc<ClientConfig>,
        name: ServerName<'static>,
        io: Transport,
    ) -> io::Result<RustlsStream> {
        let conn = UnbufferedClientConnection::new(Arc::clone(&config), name).map_err(tls_error)?;
        let mut stream = RustlsStream {
            conn,
            config,
            io,
            incoming: Vec::new(),
            in_start: 0,
            in_capacity: INITIAL_CAPACITY,
            plaintext: Vec::new(),
            pt_start: 0,
            outgoing: Vec::new(),
            out_start: 0,
            out_end: 0,
            staging: Vec::new(),
            peer_closed: false,
            eof: false,
            close_queued: false,
            wrote_since_data: false,
        };
        std::future::poll_fn(|cx| stream.poll_handshake(cx)).await?;
        Ok(stream)
    }

    /// The rustls connection (negotiated version, suite, group, ALPN, resumption).
    pub(crate) fn connection(&self) -> &UnbufferedClientConnection {
        &self.conn
    }

    /// Whether the connection runs in FIPS mode (its configuration's).
    pub(crate) fn fips(&self) -> bool {
        self.config.fips()
    }

    /// The TCP socket underneath.
    pub(crate) fn tcp(&self) -> &TcpStream {
        self.io.tcp()
    }

    fn poll_handshake(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        loop {
            ready!(self.poll_flush_outgoing(cx))?;
            match self.step_or_alert(cx, Action::Read(None))? {
                Step::Again => {}
                Step::HandshakeBlocked => {
                    if self.eof {
                        return Poll::Ready(Err(io::Error::new(io::ErrorKind::UnexpectedEof, "tls handshake eof")));
                    }
                    ready!(self.poll_fill(cx))?;
                }
                Step::Idle => return self.poll_flush_outgoing(cx),
                Step::Wrote(_) | Step::Closed => {
                    return Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the peer closed the TLS connection during the handshake",
                    )))
                }
            }
        }
    }

    /// [`step`](Self::step); on a TLS error, first tries to send the alert rustls queued for the
    /// peer (without waiting).
    fn step_or_alert(&mut self, cx: &mut Context<'_>, action: Action<'_, '_>) -> io::Result<Step> {
        match self.step(action) {
            Ok(step) => Ok(step),
            Err(e) => {
                // Only what rustls already queued (the alert): while that queue is not empty
                // rustls hands it out before looking at the received bytes again, which, the
                // connection being dead, must not happen (it would raise the alert twice).
                while self.conn.wants_write() {
                    match self.conn.process_tls_records(&mut self.incoming[self.in_start..]).state {
                        Ok(ConnectionState::EncodeTlsData(mut data)) => {
                            let encoded = encode_into(
                                &mut self.outgoing,
                                &mut self.out_end,
                                |out| data.encode(out),
                                |e| match e {
                                    EncodeError::InsufficientSize(InsufficientSizeError { required_size }) => {
                                        Some(*required_size)
                                    }
                                    EncodeError::AlreadyEncoded => None,
                                },
                            );
                            if encoded.is_err() {
                                break;
                            }
                        }
                        _ => break,
                    }
                }
                let _ = self.poll_flush_outgoing(cx);
                Err(e)
            }
        }
    }

    /// One turn of rustls's state machine over the received bytes, doing what needs no I/O.
    fn step(&mut self, mut action: Action<'_, '_>) -> io::Result<Step> {
        let UnbufferedStatus { mut discard, state } =
            self.conn.process_tls_records(&mut self.incoming[self.in_start..]);
        let step = match state.map_err(tls_error) {
            Err(e) => {
                self.in_start += discard;
                return Err(e);
            }
            Ok(ConnectionState::ReadTraffic(mut traffic)) => {
                while let Some(record) = traffic.next_record() {
                    let record = record.map_err(tls_error)?;
                    discard += record.discard;
                    let mut rest = record.payload;
                    if let Action::Read(Some(buf)) = &mut action {
                        let n = rest.len().min(buf.remaining());
                        buf.put_slice(&rest[..n]);
                        rest = &rest[n..];
                    }
                    self.plaintext.extend_from_slice(rest);
                }
                Step::Again
            }
            Ok(ConnectionState::EncodeTlsData(mut data)) => {
                let encoded = encode_into(
                    &mut self.outgoing,
                    &mut self.out_end,
                    |out| data.encode(out),
                    |e| match e {
                        EncodeError::InsufficientSize(InsufficientSizeError { required_size }) => Some(*required_size),
                        EncodeError::AlreadyEncoded => None,
                    },
                );
                if let Err(e) = encoded {
                    return Err(io::Error::other(format!("TLS handshake encoding failed: {e}")));
                }
                Step::Again
            }
            // The encoded bytes wait in the outgoing buffer; every caller flushes it before it
            // waits for the peer, so they go out in order and once.
            Ok(ConnectionState::TransmitTlsData(data)) => {
                data.done();
                Step::Again
            }
            Ok(ConnectionState::BlockedHandshake) => Step::HandshakeBlocked,
            Ok(ConnectionState::WriteTraffic(mut traffic)) => match action {
                Action::Read(_) => Step::Idle,
                Action::Close => {
                    encode_into(
                        &mut self.outgoing,
                        &mut self.out_end,
                        |out| traffic.queue_close_notify(out),
                        encrypt_too_small,
                    )
                    .map_err(encrypt_error)?;
                    self.close_queued = true;
                    Step::Wrote(0)
                }
                Action::Write(slices) => {
                    let (outgoing, out_end, staging) = (&mut self.outgoing, &mut self.out_end, &mut self.staging);
                    let mut encrypt = |plaintext: &[u8]| {
                        encode_into(outgoing, out_end, |out| traffic.encrypt(plaintext, out), encrypt_too_small)
                            .map_err(encrypt_error)
                    };
                    let mut taken = 0;
                    for slice in slices {
                        let slice = &slice[..slice.len().min(MAX_WRITE - taken)];
                        if slice.is_empty() {
                            continue;
                        }
                        taken += slice.len();
                        if staging.len() + slice.len() <= RECORD_PLAINTEXT {
                            staging.extend_from_slice(slice);
                            continue;
                        }
                        if !staging.is_empty() {
                            encrypt(staging)?;
                            staging.clear();
                        }
                        if slice.len() < RECORD_PLAINTEXT {
                            staging.extend_from_slice(slice);
                        } else {
                            encrypt(slice)?;
                        }
                        if taken == MAX_WRITE {
                            break;
                        }
                    }
                    if !staging.is_empty() {
                        encrypt(staging)?;
                        staging.clear();
                    }
                    if staging.capacity() > KEEP {
                        *staging = Vec::new();
                    }
                    Step::Wrote(taken)
                }
            },
            Ok(ConnectionState::PeerClosed) => {
                self.peer_closed = true;
                Step::Again
            }
            Ok(ConnectionState::Closed) => {
                self.peer_closed = true;
                Step::Closed
            }
            Ok(other) => return Err(io::Error::other(format!("unexpected TLS client state: {other:?}"))),
        };
        self.in_start += discard;
        Ok(step)
    }

    /// Writes the outgoing buffer to the transport until it is empty.
    fn poll_flush_outgoing(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.out_start < self.out_end {
            let n = ready!(Pin::new(&mut self.io).poll_write(cx, &self.outgoing[self.out_start..self.out_end]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.out_start += n;
        }
        self.out_start = 0;
        self.out_end = 0;
        Poll::Ready(Ok(()))
    }

    /// Reads what the socket holds into the receive buffer; `Ok(0)` at its end. While the
    /// socket has nothing and nothing is buffered, the buffer goes back (an idle connection
    /// holds none) and is allocated again, not zeroed, by the next read.
    fn poll_fill(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        if self.in_start == self.incoming.len() {
            self.incoming.clear();
            self.in_start = 0;
        } else if self.in_start > 0 && self.incoming.capacity() - self.incoming.len() < MIN_READ {
            // At most one partial record (or part of a handshake flight) moves to the front.
            self.incoming.drain(..self.in_start);
            self.in_start = 0;
        }
        let wanted = self.in_capacity.max(self.incoming.len() + MIN_READ);
        if self.incoming.capacity() < wanted {
            self.incoming.reserve_exact(wanted - self.incoming.len());
        }
        let room = self.incoming.capacity() - self.incoming.len();
        match tokio_util::io::poll_read_buf(Pin::new(&mut self.io), cx, &mut self.incoming) {
            Poll::Pending => {
                if self.in_start == self.incoming.len() {
                    self.incoming = Vec::new();
                    self.in_start = 0;
                    // A response came and nothing was sent since: whatever large buffer an
                    // upload needed goes back too.
                    if !self.wrote_since_data && self.out_start == self.out_end && self.outgoing.len() > KEEP {
                        self.outgoing = Vec::new();
                    }
                }
                Poll::Pending
            }
            Poll::Ready(Ok(0)) => {
                self.eof = true;
                Poll::Ready(Ok(0))
            }
            Poll::Ready(Ok(n)) => {
                if n >= room {
                    self.in_capacity = BULK_CAPACITY;
                }
                Poll::Ready(Ok(n))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
        }
    }

    /// Hands out decrypted bytes kept from an earlier call.
    fn take_plaintext(&mut self, buf: &mut ReadBuf<'_>) {
        let n = (self.plaintext.len() - self.pt_start).min(buf.remaining());
        buf.put_slice(&self.plaintext[self.pt_start..self.pt_start + n]);
        self.pt_start += n;
        if self.pt_start == self.plaintext.len() {
            self.plaintext.clear();
            self.pt_start = 0;
            if self.plaintext.capacity() > KEEP {
                self.plaintext = Vec::new();
            }
        }
    }
}

impl AsyncRead for RustlsStream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let start = buf.filled().len();
        this.take_plaintext(buf);
        loop {
            if this.out_start < this.out_end {
                // Handshake messages after the handshake (a key update's answer): sent as the
                // socket allows, without holding up the read.
                if let Poll::Ready(Err(e)) = this.poll_flush_outgoing(cx) {
                    return Poll::Ready(Err(e));
                }
            }
            if buf.remaining() == 0 {
                this.wrote_since_data &= buf.filled().len() == start;
                return Poll::Ready(Ok(()));
            }
            match this.step_or_alert(cx, Action::Read(Some(buf)))? {
                Step::Again => {}
                Step::Closed => return Poll::Ready(Ok(())),
                Step::Idle | Step::HandshakeBlocked | Step::Wrote(_) => {
                    if buf.filled().len() > start {
                        this.wrote_since_data = false;
                        return Poll::Ready(Ok(()));
                    }
                    if this.peer_closed {
                        return Poll::Ready(Ok(()));
                    }
                    if this.eof {
                        return Poll::Ready(Err(io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            "peer closed connection without sending TLS close_notify",
                        )));
                    }
                    ready!(this.poll_fill(cx))?;
                }
            }
        }
    }
}

impl AsyncWrite for RustlsStream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.poll_write_vectored(cx, &[io::IoSlice::new(buf)])
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if this.out_end - this.out_start >= OUTGOING_LIMIT {
            ready!(this.poll_flush_outgoing(cx))?;
        }
        if bufs.iter().all(|b| b.is_empty()) {
            return Poll::Ready(Ok(0));
        }
        if this.close_queued {
            return Poll::Ready(Err(io::Error::new(io::ErrorKind::BrokenPipe, "the TLS connection is shut down")));
        }
        loop {
            match this.step_or_alert(cx, Action::Write(bufs))? {
                Step::Again => {}
                Step::Wrote(n) => {
                    this.wrote_since_data = true;
                    // Sent now as far as the socket takes it; the rest goes with the next call
                    // or the flush.
                    if let Poll::Ready(Err(e)) = this.poll_flush_outgoing(cx) {
                        return Poll::Ready(Err(e));
                    }
                    return Poll::Ready(Ok(n));
                }
                Step::Closed => {
                    return Poll::Ready(Err(io::Error::new(io::ErrorKind::BrokenPipe, "the TLS connection is closed")))
                }
                Step::Idle | Step::HandshakeBlocked => {
                    return Poll::Ready(Err(io::Error::other("the TLS connection cannot send yet")))
                }
            }
        }
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_flush_outgoing(cx))?;
        Pin::new(&mut this.io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if !this.close_queued {
            loop {
                match this.step(Action::Close) {
                    Ok(Step::Again) => {}
                    // Closed already, or a broken connection: nothing to tell the peer.
                    Ok(_) | Err(_) => break,
                }
            }
            this.close_queued = true;
        }
        ready!(this.poll_flush_outgoing(cx))?;
        Pin::new(&mut this.io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use smithy_tls_test_support::{server_config, Alpn, TestCa};
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    use tokio::net::TcpListener;

    /// A TLS server on 127.0.0.1 (tokio-rustls, ring) that runs `serve` on its one connection,
    /// and a client configuration trusting it.
    async fn server<F, Fut>(serve: F) -> (std::net::SocketAddr, Arc<ClientConfig>, tokio::task::JoinHandle<()>)
    where
        F: FnOnce(tokio_rustls::server::TlsStream<tokio::net::TcpStream>) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = ()> + Send,
    {
        let ca = TestCa::new("rustls stream test CA");
        let crypto = Arc::new(rustls::crypto::ring::default_provider());
        let config = server_config(&ca.leaf(&["localhost"]), Alpn::Http1Only, Arc::clone(&crypto));
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let task = tokio::spawn(async move {
            let (tcp, _) = listener.accept().await.expect("accept");
            serve(acceptor.accept(tcp).await.expect("server handshake")).await;
        });
        let mut roots = rustls::RootCertStore::empty();
        use rustls_pki_types::pem::PemObject as _;
        for cert in rustls_pki_types::CertificateDer::pem_slice_iter(ca.pem.as_bytes()) {
            roots.add(cert.expect("CA PEM")).expect("CA");
        }
        let client = ClientConfig::builder_with_provider(crypto)
            .with_safe_default_protocol_versions()
            .expect("versions")
            .with_root_certificates(roots)
            .with_no_client_auth();
        (addr, Arc::new(client), task)
    }

    async fn connect(addr: std::net::SocketAddr, config: Arc<ClientConfig>) -> RustlsStream {
        let tcp = tokio::net::TcpStream::connect(addr).await.expect("connect");
        let name = ServerName::try_from("localhost").expect("name");
        RustlsStream::connect(config, name, Transport::Tcp(tcp)).await.expect("client handshake")
    }

    /// Bytes 0, 1, 2, ... wrapping: a body whose every position is checkable.
    fn pattern(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i % 251) as u8).collect()
    }

    #[tokio::test]
    async fn small_and_large_writes_and_tiny_reads_round_trip_byte_exact() {
        const LEN: usize = 300 * 1024;
        let (addr, config, server) = server(|mut tls| async move {
            // Echo until the client shuts down its side.
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                let n = tls.read(&mut buf).await.expect("server read");
                if n == 0 {
                    break;
                }
                tls.write_all(&buf[..n]).await.expect("server write");
            }
            tls.shutdown().await.expect("server shutdown");
        })
        .await;
        let mut client = connect(addr, config).await;
        let data = pattern(LEN);
        // Vectored writes mixing slices smaller and larger than a record, then plain writes.
        let (head, rest) = data.split_at(100 * 1024);
        let mut offset = 0;
        while offset < head.len() {
            let sizes = [7usize, 300, 20_000, 1, 40_000];
            let mut slices = Vec::new();
            let mut at = offset;
            for size in sizes {
                let end = (at + size).min(head.len());
                slices.push(io::IoSlice::new(&head[at..end]));
                at = end;
            }
            let n = std::future::poll_fn(|cx| Pin::new(&mut client).poll_write_vectored(cx, &slices))
                .await
                .expect("vectored write");
            assert!(n > 0 && n <= at - offset, "wrote {n} of {}", at - offset);
            offset += n;
        }
        client.write_all(rest).await.expect("write");
        client.flush().await.expect("flush");
        // Read back a few bytes at a time: most of every record waits in the stream.
        let mut back = Vec::with_capacity(LEN);
        let mut small = [0u8; 5];
        while back.len() < LEN {
            let n = client.read(&mut small[..1 + back.len() % 5]).await.expect("read");
            assert!(n > 0, "early end after {} bytes", back.len());
            back.extend_from_slice(&small[..n]);
        }
        assert!(back == data, "the echo must come back byte-exact");
        client.shutdown().await.expect("client shutdown");
        // The server's close_notify is a clean end.
        assert_eq!(client.read(&mut small).await.expect("end"), 0);
        server.await.expect("server");
    }

    #[tokio::test]
    async fn an_end_without_close_notify_is_an_error_after_the_data() {
        let (addr, config, server) = server(|mut tls| async move {
            tls.write_all(b"partial").await.expect("server write");
            tls.flush().await.expect("flush");
            // TCP closes with no TLS close_notify: a truncation the client must see.
            let (mut tcp, _) = tls.into_inner();
            tcp.shutdown().await.expect("tcp shutdown");
        })
        .await;
        let mut client = connect(addr, config).await;
        let mut got = Vec::new();
        let err = loop {
            let mut buf = [0u8; 64];
            match client.read(&mut buf).await {
                Ok(0) => panic!("a bare TCP close read as a clean end after {got:?}"),
                Ok(n) => got.extend_from_slice(&buf[..n]),
                Err(e) => break e,
            }
        };
        assert_eq!(got, b"partial");
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof, "{err}");
        server.await.expect("server");
    }

    #[tokio::test]
    async fn the_peers_key_update_is_answered_and_traffic_goes_on() {
        let (addr, config, server) = server(|mut tls| async move {
            let mut buf = [0u8; 4];
            tls.read_exact(&mut buf).await.expect("first");
            assert_eq!(&buf, b"ping");
            // A KeyUpdate asking the client to update its keys too.
            tls.get_mut().1.refresh_traffic_keys().expect("key update");
            tls.write_all(b"pong").await.expect("write");
            tls.read_exact(&mut buf).await.expect("second");
            assert_eq!(&buf, b"more", "the client's data after its own key update");
            tls.write_all(b"done").await.expect("write");
            tls.shutdown().await.expect("shutdown");
        })
        .await;
        let mut client = connect(addr, config).await;
        assert_eq!(client.connection().protocol_version(), Some(rustls::ProtocolVersion::TLSv1_3));
        client.write_all(b"ping").await.expect("ping");
        let mut buf = [0u8; 4];
        client.read_exact(&mut buf).await.expect("pong");
        assert_eq!(&buf, b"pong");
        client.write_all(b"more").await.expect("more");
        client.read_exact(&mut buf).await.expect("done");
        assert_eq!(&buf, b"done");
        server.await.expect("server");
    }

    #[tokio::test]
    async fn an_idle_stream_holds_no_receive_buffer() {
        let (addr, config, server) = server(|mut tls| async move {
            tls.write_all(&pattern(200 * 1024)).await.expect("write");
            tls.flush().await.expect("flush");
            let mut buf = [0u8; 1];
            let _ = tls.read(&mut buf).await;
        })
        .await;
        let mut client = connect(addr, config).await;
        let mut got = vec![0u8; 200 * 1024];
        client.read_exact(&mut got).await.expect("body");
        assert!(got == pattern(200 * 1024));
        // Nothing more is coming: the next read waits, and the buffer is gone meanwhile.
        let mut buf = [0u8; 1];
        let waited = tokio::time::timeout(std::time::Duration::from_millis(50), client.read(&mut buf)).await;
        assert!(waited.is_err(), "no data was sent");
        assert_eq!(client.incoming.capacity(), 0, "idle with a receive buffer allocated");
        assert_eq!(client.plaintext.capacity(), 0);
        drop(client);
        server.await.expect("server");
    }
}
