//! The TLS stream on rustls 0.24's connection: records are read from the socket into one buffer,
//! decrypted where they lie, and copied once, straight into the caller's buffer.
//!
//! Plaintext the caller has no room for stays where it was decrypted (`pending`, a range of the
//! input buffer before its unconsumed part) until a later read takes it: the input buffer only
//! moves bytes when nothing is pending. Writes are encrypted into `out` and sent from there.

use std::future::poll_fn;
use std::io;
use std::ops::Range;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use rustls_024::client::ClientSide;
use rustls_024::crypto::cipher::OutboundPlain;
use rustls_024::{Connection, Tcp, TlsInputBuffer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::tls::settings::{INITIAL_CAPACITY, READ_AHEAD_CAPACITY};

/// The most plaintext one write encrypts: four full records. A larger write is taken in part.
const MAX_WRITE: usize = 64 * 1024;

/// How many buffers of a vectored write one call encrypts together.
const MAX_WRITE_CHUNKS: usize = 8;

/// A read that has delivered data reads the socket again while the caller has room for at least
/// this much more: a whole record.
const FILL_ON_FOR: usize = INITIAL_CAPACITY;

/// A socket read is attempted only with at least this much free room in the input buffer.
const MIN_READ_ROOM: usize = 4 * 1024;

/// Why a handshake failed: rustls refused something, or the socket did.
#[derive(Debug)]
pub(crate) enum HandshakeError {
    Tls(rustls_024::Error),
    Io(io::Error),
}

/// The received bytes: `buf[start..]` are records (or a record's beginning) rustls has not
/// consumed yet; rustls decrypts them in place.
#[derive(Debug)]
struct Input {
    buf: Vec<u8>,
    start: usize,
    /// What the next allocation holds: one record's worth, or [`READ_AHEAD_CAPACITY`] and one
    /// record once a read has filled the buffer (bulk data is arriving).
    capacity: usize,
    /// The peer sent close_notify (rustls says so here, and drops what follows it).
    close_notify: bool,
    eof: bool,
}

impl TlsInputBuffer for Input {
    fn slice_mut(&mut self) -> &mut [u8] {
        &mut self.buf[self.start..]
    }

    fn discard(&mut self, num_bytes: usize) {
        self.start += num_bytes;
    }

    fn received_close_notify(&mut self) {
        self.close_notify = true;
    }

    fn has_seen_eof(&self) -> bool {
        self.eof
    }
}

impl Input {
    fn new() -> Self {
        Input { buf: Vec::new(), start: 0, capacity: INITIAL_CAPACITY, close_notify: false, eof: false }
    }

    /// Whether unconsumed bytes are buffered (at EOF: a truncated record).
    fn has_bytes(&self) -> bool {
        self.start < self.buf.len()
    }

    /// Reads what the socket holds after the buffered bytes; the number of bytes read (0: EOF).
    /// The caller must hold no range of the buffer before `start`: they may move.
    fn poll_fill<T: AsyncRead + Unpin>(&mut self, cx: &mut Context<'_>, io: &mut T) -> Poll<io::Result<usize>> {
        // What is left is at most one record's beginning: moved to the front, so that the read
        // can take a whole buffer's worth (reading into what is left at the end would halve
        // the reads' size whenever a record straddles them).
        if self.start == self.buf.len() {
            self.buf.clear();
            self.start = 0;
        } else if self.start > 0 {
            self.buf.copy_within(self.start.., 0);
            self.buf.truncate(self.buf.len() - self.start);
            self.start = 0;
        }
        if self.buf.capacity() < self.capacity || self.buf.capacity() - self.buf.len() < MIN_READ_ROOM {
            let want = self.capacity.max(self.buf.len() + MIN_READ_ROOM);
            self.buf.reserve_exact(want - self.buf.len());
        }
        // Into the spare capacity: nothing is zeroed first.
        match tokio_util::io::poll_read_buf(Pin::new(io), cx, &mut self.buf) {
            Poll::Ready(Ok(n)) => {
                if n == 0 {
                    self.eof = true;
                } else if self.buf.len() == self.buf.capacity() {
                    // A batch, and room for the record a batch's end cuts in two.
                    self.capacity = READ_AHEAD_CAPACITY + INITIAL_CAPACITY;
                }
                Poll::Ready(Ok(n))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => {
                // Nothing buffered and nothing to read: the connection may now wait long (idle
                // in a pool), so its memory goes back until the next read.
                if !self.has_bytes() {
                    self.buf = Vec::new();
                    self.start = 0;
                }
                Poll::Pending
            }
        }
    }
}

/// A client TLS connection over `T` on rustls 0.24.
#[derive(Debug)]
pub(crate) struct InPlaceStream<T> {
    io: T,
    conn: Connection<ClientSide, Tcp>,
    input: Input,
    /// Decrypted bytes not yet read: `input.buf[pending]`.
    pending: Range<usize>,
    /// Decrypted bytes that could not stay in place (received during the handshake, or a
    /// payload rustls handed out as its own copy): `spill[spill_at..]`.
    spill: Vec<u8>,
    spill_at: usize,
    /// Encrypted bytes to send: `out[sent..]`.
    out: Vec<u8>,
    sent: usize,
    close_notify_sent: bool,
    /// A socket error met after a read had already delivered data: the next read's result.
    read_error: Option<io::Error>,
}

impl<T: AsyncRead + AsyncWrite + Unpin> InPlaceStream<T> {
    /// Runs the handshake of `conn` (its ClientHello already in `out`) over `io`.
    pub(crate) async fn handshake(
        io: T,
        conn: Connection<ClientSide, Tcp>,
        out: Vec<u8>,
    ) -> Result<Self, HandshakeError> {
        let mut stream = InPlaceStream {
            io,
            conn,
            input: Input::new(),
            pending: 0..0,
            spill: Vec::new(),
            spill_at: 0,
            out,
            sent: 0,
            close_notify_sent: false,
            read_error: None,
        };
        poll_fn(|cx| stream.poll_handshake(cx)).await?;
        Ok(stream)
    }

    pub(crate) fn get_ref(&self) -> (&T, &Connection<ClientSide, Tcp>) {
        (&self.io, &self.conn)
    }

    fn poll_handshake(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), HandshakeError>> {
        loop {
            ready!(self.poll_send(cx)).map_err(HandshakeError::Io)?;
            if !self.conn.is_handshaking() {
                return Poll::Ready(Ok(()));
            }
            if let Err(e) = self.receive(None) {
                // The alert rustls wrote for it, if the socket takes it now.
                let _ = self.poll_send(cx);
                return Poll::Ready(Err(HandshakeError::Tls(e)));
            }
            if self.sent < self.out.len() || !self.conn.is_handshaking() {
                continue;
            }
            match ready!(self.input.poll_fill(cx, &mut self.io)) {
                Ok(0) => {
                    return Poll::Ready(Err(HandshakeError::Io(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the server closed the connection during the TLS handshake",
                    ))))
                }
                Ok(_) => {}
                Err(e) => return Poll::Ready(Err(HandshakeError::Io(e))),
            }
        }
    }

    /// Processes the complete records buffered: copies the plaintext into `into` (if any) while
    /// it has room, keeps the rest (`pending`, or `spill`), and stops at the first payload it
    /// could not hand out whole.
    fn receive(&mut self, mut into: Option<&mut ReadBuf<'_>>) -> Result<(), rustls_024::Error> {
        let InPlaceStream { conn, input, pending, spill, out, .. } = self;
        // Where the input buffer lies, to tell a payload decrypted in it (rustls does not move
        // or reallocate it) from one it handed out as its own copy.
        let base = input.buf.as_ptr() as usize;
        let end = base + input.buf.len();
        let mut handler = conn.read_tls(input, out);
        while let Some(payload) = handler.next_payload() {
            let payload = payload?;
            let bytes = payload.bytes();
            let taken = into.as_deref_mut().map_or(0, |dst| {
                let n = bytes.len().min(dst.remaining());
                dst.put_slice(&bytes[..n]);
                n
            });
            let rest = &bytes[taken..];
            if rest.is_empty() {
                continue;
            }
            let at = rest.as_ptr() as usize;
            // Kept in place only for a read (the handshake's caller reads later, after buffer moves).
            if into.is_some() && spill.is_empty() && at >= base && at + rest.len() <= end {
                *pending = at - base..at - base + rest.len();
                break;
            }
            spill.extend_from_slice(rest);
            if into.as_ref().is_some_and(|dst| dst.remaining() == 0) {
                break;
            }
        }
        Ok(())
    }

    /// Hands out plaintext already decrypted, as much as `into` has room for.
    fn take_decrypted(&mut self, into: &mut ReadBuf<'_>) {
        if !self.pending.is_empty() {
            let n = self.pending.len().min(into.remaining());
            into.put_slice(&self.input.buf[self.pending.start..self.pending.start + n]);
            self.pending.start += n;
        }
        if self.spill_at < self.spill.len() {
            let n = (self.spill.len() - self.spill_at).min(into.remaining());
            into.put_slice(&self.spill[self.spill_at..self.spill_at + n]);
            self.spill_at += n;
            if self.spill_at == self.spill.len() {
                self.spill = Vec::new();
                self.spill_at = 0;
            }
        }
    }

    /// Whether decrypted bytes wait to be read.
    fn has_decrypted(&self) -> bool {
        !self.pending.is_empty() || self.spill_at < self.spill.len()
    }

    /// Sends what is encrypted and unsent; ready once all of it is with the socket.
    fn poll_send(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.sent < self.out.len() {
            let n = ready!(Pin::new(&mut self.io).poll_write(cx, &self.out[self.sent..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.sent += n;
        }
        self.out.clear();
        self.sent = 0;
        Poll::Ready(Ok(()))
    }

    /// Encrypts `chunks` (at most [`MAX_WRITE`] bytes of them) into `out`; how many bytes.
    fn encrypt(&mut self, chunks: &[&[u8]]) -> io::Result<usize> {
        let mut taken: [&[u8]; MAX_WRITE_CHUNKS] = [&[]; MAX_WRITE_CHUNKS];
        let (mut count, mut total) = (0, 0);
        for chunk in chunks.iter().filter(|c| !c.is_empty()) {
            if count == MAX_WRITE_CHUNKS || total == MAX_WRITE {
                break;
            }
            let part = &chunk[..chunk.len().min(MAX_WRITE - total)];
            taken[count] = part;
            count += 1;
            total += part.len();
        }
        if total == 0 {
            return Ok(0);
        }
        self.conn.write(OutboundPlain::new(&taken[..count]), &mut self.out).map_err(tls_io_error)?;
        Ok(total)
    }

    fn poll_write_chunks(&mut self, cx: &mut Context<'_>, chunks: &[&[u8]]) -> Poll<io::Result<usize>> {
        // At most one write's worth waits for the socket: beyond that, the caller waits.
        if self.out.len() - self.sent >= MAX_WRITE {
            ready!(self.poll_send(cx))?;
        }
        let n = self.encrypt(chunks)?;
        // Start sending now; what the socket does not take yet goes with the next write or flush.
        if let Poll::Ready(Err(e)) = self.poll_send(cx) {
            return Poll::Ready(Err(e));
        }
        Poll::Ready(Ok(n))
    }
}

/// rustls's error as an I/O error (hyper sees it as the connection's failure).
fn tls_io_error(e: rustls_024::Error) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

impl<T: AsyncRead + AsyncWrite + Unpin> AsyncRead for InPlaceStream<T> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if let Some(e) = this.read_error.take() {
            return Poll::Ready(Err(e));
        }
        let before = buf.filled().len();
        // What was decrypted before, then the records already received, then the socket: a
        // read takes as much as is here (hyper sizes its next read by how full this one was).
        this.take_decrypted(buf);
        loop {
            if buf.remaining() == 0 || this.has_decrypted() || this.input.close_notify {
                return Poll::Ready(Ok(()));
            }
            if let Err(e) = this.receive(Some(buf)) {
                let _ = this.poll_send(cx);
                return Poll::Ready(Err(tls_io_error(e)));
            }
            // Replies rustls wrote while receiving (a key update's): sent as the socket allows.
            if this.sent < this.out.len() {
                if let Poll::Ready(Err(e)) = this.poll_send(cx) {
                    return Poll::Ready(Err(e));
                }
            }
            if this.input.close_notify {
                return Poll::Ready(Ok(()));
            }
            let delivered = buf.filled().len() > before;
            if delivered && buf.remaining() < FILL_ON_FOR {
                return Poll::Ready(Ok(()));
            }
            // With room for more than a record, what else the socket already holds joins this
            // read: hyper hands each read on as one body chunk (one wake-up of the reader) and
            // grows its buffer when reads fill it.
            let filled = match this.input.poll_fill(cx, &mut this.io) {
                Poll::Pending if delivered => return Poll::Ready(Ok(())),
                Poll::Ready(Err(e)) if delivered => {
                    this.read_error = Some(e);
                    return Poll::Ready(Ok(()));
                }
                Poll::Pending => {
                    // Nothing to read and nothing received: the connection may now wait long
                    // (idle in a pool), so the send buffer's memory goes back too (the input
                    // buffer's went in `poll_fill`).
                    if this.sent == this.out.len() && this.out.capacity() > INITIAL_CAPACITY {
                        this.out = Vec::new();
                        this.sent = 0;
                    }
                    return Poll::Pending;
                }
                other => ready!(other)?,
            };
            match filled {
                // At EOF, what was read so far goes first; the end is seen at the next read.
                0 if buf.filled().len() > before => return Poll::Ready(Ok(())),
                0 if this.input.has_bytes() => {
                    return Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the server closed the connection in the middle of a TLS record",
                    )))
                }
                0 => {
                    return Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the server closed the connection without sending TLS close_notify",
                    )))
                }
                _ => {}
            }
        }
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin> AsyncWrite for InPlaceStream<T> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.get_mut().poll_write_chunks(cx, &[buf])
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let mut chunks: [&[u8]; MAX_WRITE_CHUNKS] = [&[]; MAX_WRITE_CHUNKS];
        let mut count = 0;
        for b in bufs.iter().filter(|b| !b.is_empty()).take(MAX_WRITE_CHUNKS) {
            chunks[count] = b;
            count += 1;
        }
        self.get_mut().poll_write_chunks(cx, &chunks[..count])
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_send(cx))?;
        Pin::new(&mut this.io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if !this.close_notify_sent {
            this.close_notify_sent = true;
            this.conn.send_close_notify(&mut this.out).map_err(tls_io_error)?;
        }
        ready!(this.poll_send(cx))?;
        Pin::new(&mut this.io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use smithy_tls_test_support::pattern::pattern_byte;
    use smithy_tls_test_support::pki::TestCa;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};

    use super::*;
    use crate::roots::ExtraRoots;
    use crate::tls::backends::rustls_in_place::InPlaceBackend;
    use crate::tls::settings::TlsSettings;
    use crate::tls::transport::Transport;

    /// What the server does after the handshake.
    #[derive(Clone, Copy)]
    enum Then {
        /// Sends `len` pattern bytes, updating its keys halfway, then close_notify.
        Send { len: usize },
        /// Sends `len` pattern bytes and closes the socket without close_notify.
        SendAndDrop { len: usize },
        /// Reads `len` bytes, checks them against the pattern and answers with one byte: 1 if
        /// they matched.
        Receive { len: usize },
        /// As `Receive`, but answers only once one more byte has come.
        ReceiveThenAwait { len: usize },
    }

    /// A TLS server (rustls 0.23, through tokio-rustls) for one connection, and a client
    /// stream connected to it.
    async fn connected(then: Then) -> (InPlaceStream<Transport>, tokio::task::JoinHandle<()>) {
        let ca = TestCa::new("in-place test CA");
        let identity = ca.leaf(&["localhost"]);
        let config =
            rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::aws_lc_rs::default_provider()))
                .with_safe_default_protocol_versions()
                .expect("versions")
                .with_no_client_auth()
                .with_single_cert(identity.chain.clone(), identity.private_key())
                .expect("server identity");
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let server = tokio::spawn(async move {
            let (tcp, _) = listener.accept().await.expect("accept");
            let mut tls = acceptor.accept(tcp).await.expect("server handshake");
            match then {
                Then::Send { len } | Then::SendAndDrop { len } => {
                    let data: Vec<u8> = (0..len as u64).map(pattern_byte).collect();
                    let (first, second) = data.split_at(len / 2);
                    tls.write_all(first).await.expect("send");
                    tls.get_mut().1.refresh_traffic_keys().expect("key update");
                    tls.write_all(second).await.expect("send");
                    if matches!(then, Then::Send { .. }) {
                        tls.shutdown().await.expect("close_notify");
                    } else {
                        tls.flush().await.expect("flush");
                        drop(tls);
                    }
                }
                Then::Receive { len } | Then::ReceiveThenAwait { len } => {
                    let mut got = vec![0; len];
                    tls.read_exact(&mut got).await.expect("receive");
                    if matches!(then, Then::ReceiveThenAwait { .. }) {
                        tls.read_exact(&mut [0]).await.expect("the go-ahead");
                    }
                    let same = got.iter().enumerate().all(|(i, &b)| b == pattern_byte(i as u64));
                    tls.write_all(&[u8::from(same)]).await.expect("answer");
                    tls.shutdown().await.expect("close_notify");
                }
            }
        });
        let mut extra_roots = ExtraRoots::default();
        extra_roots.add_pem("test CA", ca.pem.as_bytes()).expect("CA");
        let backend = InPlaceBackend::prepare(&TlsSettings {
            extra_roots,
            enable_http2: false,
            ..TlsSettings::for_tests(crate::provider::TlsProvider::RustlsAwsLc)
        })
        .expect("prepare");
        let tcp = TcpStream::connect(addr).await.expect("connect");
        let (stream, _, info) = backend.handshake("localhost", Transport::Tcp(tcp)).await.expect("client handshake");
        assert_eq!(info.protocol_version, "TLSv1_3");
        (stream, server)
    }

    /// Reads to the end `step` bytes at a time at most; what was read, or the error.
    async fn read_all(stream: &mut InPlaceStream<Transport>, step: usize) -> (Vec<u8>, io::Result<()>) {
        let mut all = Vec::new();
        let mut buf = vec![0; step];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) => return (all, Ok(())),
                Ok(n) => all.extend_from_slice(&buf[..n]),
                Err(e) => return (all, Err(e)),
            }
        }
    }

    #[tokio::test]
    async fn every_byte_arrives_in_order_whatever_the_read_size() {
        // Reads smaller than a record keep the rest in place; larger ones take several records.
        for (len, step) in [(100_000, 1), (1 << 20, 7), (1 << 20, 1000), (3 << 20, 70_000), (0, 64)] {
            let (mut stream, server) = connected(Then::Send { len }).await;
            let (got, end) = read_all(&mut stream, step).await;
            end.expect("close_notify is a clean end");
            assert_eq!(got.len(), len, "read {step} at a time");
            assert!(got.iter().enumerate().all(|(i, &b)| b == pattern_byte(i as u64)), "read {step} at a time");
            server.await.expect("server");
        }
    }

    #[tokio::test]
    async fn a_close_without_close_notify_is_an_unexpected_end() {
        let (mut stream, server) = connected(Then::SendAndDrop { len: 50_000 }).await;
        let (got, end) = read_all(&mut stream, 4096).await;
        assert_eq!(got.len(), 50_000, "the data before the close is delivered");
        assert_eq!(end.expect_err("truncation").kind(), io::ErrorKind::UnexpectedEof);
        server.await.expect("server");
    }

    #[tokio::test]
    async fn writes_plain_and_vectored_arrive_whole() {
        let len = 300_000;
        let (mut stream, server) = connected(Then::Receive { len }).await;
        let data: Vec<u8> = (0..len as u64).map(pattern_byte).collect();
        // A vectored write of three pieces, then plain writes of what it did not take.
        let (a, rest) = data.split_at(10);
        let (b, c) = rest.split_at(100_000);
        let slices = [io::IoSlice::new(a), io::IoSlice::new(b), io::IoSlice::new(c)];
        let taken = stream.write_vectored(&slices).await.expect("vectored write");
        assert!(taken > 10, "more than the first piece was taken: {taken}");
        stream.write_all(&data[taken..]).await.expect("write");
        stream.flush().await.expect("flush");
        let (answer, end) = read_all(&mut stream, 16).await;
        end.expect("clean end");
        assert_eq!(answer, [1], "the server received the pattern intact");
        stream.shutdown().await.expect("close_notify");
        server.await.expect("server");
    }

    #[tokio::test]
    async fn an_idle_connection_gives_its_buffers_back_and_reads_again() {
        let len = 200_000;
        let (mut stream, server) = connected(Then::ReceiveThenAwait { len }).await;
        let data: Vec<u8> = (0..len as u64).map(pattern_byte).collect();
        stream.write_all(&data).await.expect("write");
        stream.flush().await.expect("flush");
        assert!(stream.out.capacity() > INITIAL_CAPACITY, "the upload grew the send buffer");
        // The server sends nothing until the go-ahead: a read finds the socket empty.
        let mut room = [0; 16];
        let read = poll_fn(|cx| {
            let mut buf = ReadBuf::new(&mut room);
            Poll::Ready(match Pin::new(&mut stream).poll_read(cx, &mut buf) {
                Poll::Pending => None,
                Poll::Ready(done) => Some((done.map_err(|e| e.to_string()), buf.filled().len())),
            })
        })
        .await;
        assert_eq!(read, None, "nothing to read yet");
        assert_eq!(stream.input.buf.capacity(), 0, "the receive buffer went back");
        assert_eq!(stream.out.capacity(), 0, "the send buffer went back");
        // Both are allocated again as needed.
        stream.write_all(&[0]).await.expect("go-ahead");
        let (answer, end) = read_all(&mut stream, 16).await;
        end.expect("clean end");
        assert_eq!(answer, [1], "the server received the pattern intact");
        server.await.expect("server");
    }
}
