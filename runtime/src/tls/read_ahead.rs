//! A receive buffer between the TCP socket and a TLS library.
//!
//! TLS libraries read the socket a record or less at a time, so a bulk download costs several
//! system calls per record. [`ReadAhead`] reads whatever the socket holds, up to
//! [`READ_AHEAD_CAPACITY`], in one call and serves the library's small reads from memory (the
//! read calls per MiB it saves: docs/benchmarks/investigations.md).

use std::io;
use std::pin::Pin;
#[cfg(s2n)]
use std::sync::atomic::{AtomicU16, Ordering};
#[cfg(s2n)]
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::settings::{INITIAL_CAPACITY, READ_AHEAD_CAPACITY};

/// A read straight into the caller's buffer that fills it and brings at least this much means
/// bulk data is arriving: from then on reads are batched. Handshake messages and small
/// responses come in smaller reads (the TLS libraries ask for 4 KiB at a time until a record
/// needs more), so a connection that carries only those never allocates a buffer here.
const BULK_READ: usize = 8 * 1024;

/// Wraps a byte stream so that reads from it are batched once bulk data arrives; writes pass
/// straight through.
///
/// Until a read shows bulk data ([`BULK_READ`]) every read goes straight into the caller's
/// buffer: a connection carrying handshakes and small responses allocates nothing here, and
/// nothing short-lived sits between the connection's long-lived allocations, where it would
/// fragment the heap idle connections live in. Then: one TLS record's worth, up to [`READ_AHEAD_CAPACITY`] once
/// a batch read has filled the buffer; none while the socket has nothing to read (a connection
/// idle in a pool, waiting for a response): the buffer is released when a read finds the socket
/// empty with nothing buffered, and allocated again (not zeroed) at the next read.
#[derive(Debug)]
pub(crate) struct ReadAhead<S> {
    inner: S,
    /// Bytes `buffer[start..]` have been received and not yet handed out.
    buffer: Vec<u8>,
    start: usize,
    /// How much to allocate for the next socket read: [`INITIAL_CAPACITY`], or
    /// [`READ_AHEAD_CAPACITY`] once a read has filled the buffer.
    capacity: usize,
    /// A direct read has shown bulk data: reads are batched from now on.
    batching: bool,
    /// Where to note the first byte the peer sent, if anyone asked (s2n-tls connections).
    #[cfg(s2n)]
    first_byte: Option<FirstByte>,
}

/// The first byte a peer sent on a connection, kept for diagnosing a failed handshake (a server
/// that answers with something other than TLS) after the stream itself is gone. Only s2n-tls
/// needs it: rustls recognises such an answer itself.
#[cfg(s2n)]
#[derive(Debug, Clone, Default)]
pub(crate) struct FirstByte(Arc<AtomicU16>);

#[cfg(s2n)]
impl FirstByte {
    const NONE: u16 = u16::MAX;

    pub(crate) fn new() -> Self {
        FirstByte(Arc::new(AtomicU16::new(Self::NONE)))
    }

    /// The byte, once the peer sent one.
    pub(crate) fn get(&self) -> Option<u8> {
        u8::try_from(self.0.load(Ordering::Relaxed)).ok()
    }

    fn note(&self, byte: u8) {
        let _ = self.0.compare_exchange(Self::NONE, u16::from(byte), Ordering::Relaxed, Ordering::Relaxed);
    }
}

impl<S> ReadAhead<S> {
    pub(crate) fn new(inner: S) -> Self {
        ReadAhead {
            inner,
            buffer: Vec::new(),
            start: 0,
            capacity: INITIAL_CAPACITY,
            batching: false,
            #[cfg(s2n)]
            first_byte: None,
        }
    }

    /// Like [`new`](Self::new), noting the first byte the peer sends in `first_byte`.
    #[cfg(s2n)]
    pub(crate) fn noting_first_byte(inner: S, first_byte: FirstByte) -> Self {
        ReadAhead { first_byte: Some(first_byte), ..Self::new(inner) }
    }

    pub(crate) fn get_ref(&self) -> &S {
        &self.inner
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for ReadAhead<S> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.start == this.buffer.len() {
            // Before bulk data, and for a caller with room for a whole batch, the detour gains
            // nothing.
            if !this.batching || buf.remaining() >= READ_AHEAD_CAPACITY {
                let (before, room) = (buf.filled().len(), buf.remaining());
                ready!(Pin::new(&mut this.inner).poll_read(cx, buf))?;
                let n = buf.filled().len() - before;
                if n == room && n >= BULK_READ {
                    this.batching = true;
                }
                #[cfg(s2n)]
                if let (Some(probe), Some(&first)) = (&this.first_byte, buf.filled().get(before)) {
                    probe.note(first);
                }
                return Poll::Ready(Ok(()));
            }
            if buf.remaining() == 0 {
                return Poll::Ready(Ok(()));
            }
            this.buffer.clear();
            this.start = 0;
            if this.buffer.capacity() < this.capacity {
                this.buffer = Vec::with_capacity(this.capacity);
            }
            // Reads into the spare capacity: nothing is zeroed first.
            match tokio_util::io::poll_read_buf(Pin::new(&mut this.inner), cx, &mut this.buffer) {
                Poll::Pending => {
                    // Nothing buffered and nothing to read: the connection may now wait long
                    // (idle in a pool, or for a slow response). Its memory goes back until
                    // data arrives.
                    this.buffer = Vec::new();
                    return Poll::Pending;
                }
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Ready(Ok(0)) => return Poll::Ready(Ok(())), // end of stream
                Poll::Ready(Ok(n)) => {
                    if n >= this.capacity {
                        // The read filled the buffer: bulk data is arriving.
                        this.capacity = READ_AHEAD_CAPACITY;
                    }
                }
            }
            #[cfg(s2n)]
            if let Some(probe) = &this.first_byte {
                probe.note(this.buffer[0]);
            }
        }
        let n = (this.buffer.len() - this.start).min(buf.remaining());
        buf.put_slice(&this.buffer[this.start..this.start + n]);
        this.start += n;
        Poll::Ready(Ok(()))
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for ReadAhead<S> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
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
    use std::collections::VecDeque;
    use tokio::io::AsyncReadExt;

    /// A stream that yields prepared chunks, one per read call at most, and counts the calls.
    struct Chunks {
        chunks: VecDeque<io::Result<Vec<u8>>>,
        calls: usize,
        largest_request: usize,
    }

    impl Chunks {
        fn new(chunks: impl IntoIterator<Item = io::Result<Vec<u8>>>) -> Self {
            Chunks { chunks: chunks.into_iter().collect(), calls: 0, largest_request: 0 }
        }
    }

    impl AsyncRead for Chunks {
        fn poll_read(mut self: Pin<&mut Self>, _: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
            self.calls += 1;
            self.largest_request = self.largest_request.max(buf.remaining());
            match self.chunks.pop_front() {
                None => Poll::Ready(Ok(())),
                Some(Err(e)) => Poll::Ready(Err(e)),
                Some(Ok(mut chunk)) => {
                    let n = chunk.len().min(buf.remaining());
                    buf.put_slice(&chunk[..n]);
                    if n < chunk.len() {
                        self.chunks.push_front(Ok(chunk.split_off(n)));
                    }
                    Poll::Ready(Ok(()))
                }
            }
        }
    }

    fn pattern(len: usize, seed: u8) -> Vec<u8> {
        (0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect()
    }

    #[tokio::test]
    async fn small_reads_are_served_from_one_large_socket_read() {
        let data = pattern(3 * READ_AHEAD_CAPACITY + 1000, 7);
        let mut stream = ReadAhead::new(Chunks::new([Ok(data.clone())]));
        let mut received = Vec::new();
        let mut record = [0u8; 16 * 1024 + 5];
        loop {
            let n = stream.read(&mut record).await.unwrap();
            if n == 0 {
                break;
            }
            received.extend_from_slice(&record[..n]);
        }
        assert_eq!(received, data);
        // One record read straight into the caller's buffer, full: bulk data, so batching starts
        // with a one-record buffer; it came back full too, so the buffer grew: three more reads
        // took in the rest (about 12 records' worth), one saw the end.
        assert_eq!(stream.inner.calls, 6);
        assert_eq!(stream.inner.largest_request, READ_AHEAD_CAPACITY);
        assert_eq!(stream.buffer.capacity(), READ_AHEAD_CAPACITY);
    }

    #[tokio::test]
    async fn bytes_arrive_in_order_whatever_the_read_sizes() {
        let chunks: Vec<io::Result<Vec<u8>>> =
            [1, 5, 300_000, 17, 16_389, 70_000].iter().enumerate().map(|(i, &n)| Ok(pattern(n, i as u8))).collect();
        let expected: Vec<u8> = chunks.iter().flat_map(|c| c.as_ref().unwrap().clone()).collect();
        let mut stream = ReadAhead::new(Chunks::new(chunks));
        let mut received = Vec::new();
        let sizes = [5usize, 1, 16_384, 3, 40_000, 7];
        let mut i = 0;
        loop {
            let mut buf = vec![0u8; sizes[i % sizes.len()]];
            i += 1;
            let n = stream.read(&mut buf).await.unwrap();
            if n == 0 {
                break;
            }
            received.extend_from_slice(&buf[..n]);
        }
        assert_eq!(received.len(), expected.len());
        assert!(received == expected, "bytes reordered or lost");
    }

    #[tokio::test]
    async fn a_caller_with_a_large_buffer_reads_the_socket_directly() {
        let data = pattern(READ_AHEAD_CAPACITY + 10, 3);
        let mut stream = ReadAhead::new(Chunks::new([Ok(data.clone())]));
        let mut buf = vec![0u8; READ_AHEAD_CAPACITY + 100];
        let n = stream.read(&mut buf).await.unwrap();
        assert_eq!(&buf[..n], &data[..]);
        assert_eq!(stream.buffer.capacity(), 0, "no buffer allocated when it is not needed");
    }

    #[tokio::test]
    async fn a_connection_with_small_messages_reads_them_straight_and_allocates_nothing() {
        // Handshake-sized and small-response reads, some filling the caller's 4 KiB buffer.
        let sizes = [300usize, 4096, 5000, 1200, 4096, 900];
        let mut stream = ReadAhead::new(Chunks::new(sizes.iter().enumerate().map(|(i, &n)| Ok(pattern(n, i as u8)))));
        let mut received = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            let n = stream.read(&mut buf).await.unwrap();
            if n == 0 {
                break;
            }
            received.extend_from_slice(&buf[..n]);
        }
        let expected: Vec<u8> = sizes.iter().enumerate().flat_map(|(i, &n)| pattern(n, i as u8)).collect();
        assert!(received == expected);
        assert!(!stream.batching, "no read was bulk");
        assert_eq!(stream.buffer.capacity(), 0, "no buffer was ever allocated");
    }

    #[tokio::test]
    async fn an_idle_connection_holds_no_buffer_and_keeps_its_size_for_the_next_burst() {
        let (mut writer, reader) = tokio::io::duplex(256 * 1024);
        let mut stream = ReadAhead::new(reader);
        use tokio::io::AsyncWriteExt;
        // A burst that fills the one-record buffer: it grows.
        writer.write_all(&pattern(200_000, 9)).await.unwrap();
        let mut buf = [0u8; 16 * 1024];
        let mut got = 0;
        while got < 200_000 {
            got += stream.read(&mut buf).await.unwrap();
        }
        assert_eq!(stream.capacity, READ_AHEAD_CAPACITY);
        // Nothing more to read: the next read is pending, and the buffer is gone meanwhile.
        let pending = futures_poll_once(&mut stream, &mut buf).await;
        assert!(pending, "nothing to read yet");
        assert_eq!(stream.buffer.capacity(), 0, "an idle connection keeps no receive buffer");
        // The next burst is read with a buffer of the size bulk data needed before.
        writer.write_all(&pattern(100_000, 10)).await.unwrap();
        let n = stream.read(&mut buf).await.unwrap();
        assert_eq!(&buf[..n], &pattern(100_000, 10)[..n]);
        assert_eq!(stream.buffer.capacity(), READ_AHEAD_CAPACITY);
    }

    /// Polls one read of `stream` once: whether it was pending.
    async fn futures_poll_once(stream: &mut ReadAhead<tokio::io::DuplexStream>, buf: &mut [u8]) -> bool {
        std::future::poll_fn(|cx| {
            let mut read = ReadBuf::new(buf);
            Poll::Ready(Pin::new(&mut *stream).poll_read(cx, &mut read).is_pending())
        })
        .await
    }

    #[tokio::test]
    async fn pending_socket_reads_wake_the_reader_and_lose_nothing() {
        let (mut writer, reader) = tokio::io::duplex(1024);
        let mut stream = ReadAhead::new(reader);
        let sender = tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            for i in 0..50u8 {
                writer.write_all(&pattern(700, i)).await.unwrap();
                tokio::task::yield_now().await;
            }
        });
        let mut received = Vec::new();
        let mut buf = [0u8; 333];
        loop {
            let n = stream.read(&mut buf).await.unwrap();
            if n == 0 {
                break;
            }
            received.extend_from_slice(&buf[..n]);
        }
        sender.await.unwrap();
        let expected: Vec<u8> = (0..50u8).flat_map(|i| pattern(700, i)).collect();
        assert!(received == expected, "{} of {} bytes, or out of order", received.len(), expected.len());
    }

    #[tokio::test]
    async fn errors_come_after_the_data_received_before_them() {
        let broken = io::Error::new(io::ErrorKind::ConnectionReset, "reset");
        let mut stream = ReadAhead::new(Chunks::new([Ok(pattern(100, 1)), Err(broken)]));
        let mut buf = [0u8; 64];
        assert_eq!(stream.read(&mut buf).await.unwrap(), 64);
        assert_eq!(stream.read(&mut buf).await.unwrap(), 36);
        let err = stream.read(&mut buf).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::ConnectionReset);
    }

    #[cfg(s2n)]
    #[tokio::test]
    async fn the_first_byte_is_noted_once_on_either_read_path() {
        for big_reader in [false, true] {
            let probe = FirstByte::new();
            assert_eq!(probe.get(), None);
            let chunks = Chunks::new([Ok(b"HTTP/1.1".to_vec()), Ok(b"xyz".to_vec())]);
            let mut stream = ReadAhead::noting_first_byte(chunks, probe.clone());
            let mut buf = vec![0; if big_reader { READ_AHEAD_CAPACITY } else { 5 }];
            let _ = stream.read(&mut buf).await.unwrap();
            let _ = stream.read(&mut buf).await.unwrap();
            assert_eq!(probe.get(), Some(b'H'), "big reader: {big_reader}");
        }
        // Nothing received, nothing noted.
        let probe = FirstByte::new();
        let mut stream = ReadAhead::noting_first_byte(Chunks::new([]), probe.clone());
        assert_eq!(stream.read(&mut [0u8; 16]).await.unwrap(), 0);
        assert_eq!(probe.get(), None);
    }
}
