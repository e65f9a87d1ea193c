//! Vectored writes gathered into one write, for the TLS libraries that take one buffer per write.
//!
//! s2n-tls and libssl encrypt each write into records of its own and send them at once. The h2
//! codec writes a frame's header from its buffer and the frame's payload from the caller's, two
//! buffers: written one at a time, a small request's DATA frame costs two records and two sends,
//! where rustls (which gathers vectored writes itself) sends one. On an h2 connection the s2n-tls
//! and openssl streams therefore take vectored writes and hand the library one buffer, copied
//! together from the small leading ones. A write the library could not finish is retried with the
//! same buffers, so the copy made for the retry holds the same bytes (libssl is told the buffer may
//! move). HTTP/1.1 keeps hyper's own flattening (a stream without vectored writes gets one buffer
//! from hyper), which batches uploads into larger writes than this does.

use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::AsyncWrite;

/// The most bytes copied together for one write: an h2 frame of the default maximum size (16 KiB)
/// with its header and the frames queued before it fit. A first buffer this large is written
/// as it is, uncopied.
pub(crate) const GATHER_MAX: usize = 32 * 1024;

/// Writes the start of `bufs` with one `poll_write` of `inner`: the buffers copied into one, up
/// to [`GATHER_MAX`] bytes, when more than one holds data and the first is smaller than that;
/// otherwise the first buffer that holds data, as it is. Returns what that write returns: the
/// bytes written, counted across `bufs` in order.
pub(crate) fn poll_write_gathered<W: AsyncWrite + ?Sized>(
    inner: Pin<&mut W>,
    cx: &mut Context<'_>,
    bufs: &[IoSlice<'_>],
) -> Poll<io::Result<usize>> {
    let mut filled = bufs.iter().filter(|buf| !buf.is_empty());
    let Some(first) = filled.next() else { return inner.poll_write(cx, &[]) };
    if first.len() >= GATHER_MAX || filled.next().is_none() {
        return inner.poll_write(cx, first);
    }
    let total: usize = bufs.iter().map(|buf| buf.len()).sum();
    let mut gathered = Vec::with_capacity(total.min(GATHER_MAX));
    for buf in bufs {
        let room = GATHER_MAX - gathered.len();
        if room == 0 {
            break;
        }
        gathered.extend_from_slice(&buf[..buf.len().min(room)]);
    }
    inner.poll_write(cx, &gathered)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer that records each write it is given and accepts at most `accept` bytes of it.
    struct Recorder {
        writes: Vec<Vec<u8>>,
        accept: usize,
        pending: bool,
    }

    impl Recorder {
        fn new(accept: usize) -> Self {
            Recorder { writes: Vec::new(), accept, pending: false }
        }
    }

    impl AsyncWrite for Recorder {
        fn poll_write(self: Pin<&mut Self>, _: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
            let this = self.get_mut();
            this.writes.push(buf.to_vec());
            if this.pending {
                return Poll::Pending;
            }
            Poll::Ready(Ok(buf.len().min(this.accept)))
        }

        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }

        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    fn write(recorder: &mut Recorder, bufs: &[&[u8]]) -> Poll<io::Result<usize>> {
        let slices: Vec<IoSlice<'_>> = bufs.iter().map(|b| IoSlice::new(b)).collect();
        let waker = std::task::Waker::noop();
        poll_write_gathered(Pin::new(recorder), &mut Context::from_waker(waker), &slices)
    }

    fn written(poll: Poll<io::Result<usize>>) -> usize {
        match poll {
            Poll::Ready(Ok(n)) => n,
            other => panic!("expected a write, got {other:?}"),
        }
    }

    #[test]
    fn a_frame_header_and_its_small_payload_are_one_write() {
        let mut recorder = Recorder::new(usize::MAX);
        let (header, payload) = ([1u8; 9], [2u8; 1024]);
        assert_eq!(written(write(&mut recorder, &[&header, &[], &payload])), 1033);
        assert_eq!(recorder.writes, vec![[&header[..], &payload[..]].concat()]);
    }

    #[test]
    fn one_buffer_or_a_large_first_one_is_written_as_it_is() {
        let mut recorder = Recorder::new(usize::MAX);
        assert_eq!(written(write(&mut recorder, &[&[], &[3u8; 100]])), 100);
        let large = vec![4u8; GATHER_MAX];
        assert_eq!(written(write(&mut recorder, &[&large, &[5u8; 10]])), GATHER_MAX);
        assert_eq!(recorder.writes, vec![vec![3u8; 100], large]);
    }

    #[test]
    fn gathering_stops_at_the_bound_inside_a_buffer() {
        let mut recorder = Recorder::new(usize::MAX);
        let (header, payload) = ([6u8; 9], vec![7u8; 40 * 1024]);
        assert_eq!(written(write(&mut recorder, &[&header, &payload])), GATHER_MAX);
        assert_eq!(recorder.writes.len(), 1);
        assert_eq!(recorder.writes[0][..9], header);
        assert!(recorder.writes[0][9..].iter().all(|&b| b == 7));
    }

    #[test]
    fn partial_writes_pending_and_nothing_pass_through() {
        let mut recorder = Recorder::new(5);
        assert_eq!(written(write(&mut recorder, &[&[8u8; 9], &[9u8; 9]])), 5);
        recorder.pending = true;
        assert!(write(&mut recorder, &[&[8u8; 9], &[9u8; 9]]).is_pending());
        recorder.pending = false;
        assert_eq!(written(write(&mut recorder, &[&[], &[]])), 0);
        assert_eq!(written(write(&mut recorder, &[])), 0);
    }
}
