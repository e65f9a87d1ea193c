//! Deterministic content and its digest: bodies any size can be streamed and checked byte-exact
//! without being held in memory.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame};

/// Deterministic content: byte `i` of any stream is `(i % 251) as u8`.
pub fn pattern_byte(i: u64) -> u8 {
    (i % 251) as u8
}

/// Length and FNV-1a hash of a byte stream, updated chunk by chunk (no buffering).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Digest {
    /// Bytes seen.
    pub len: u64,
    /// FNV-1a hash of them.
    pub hash: u64,
}

impl Default for Digest {
    fn default() -> Self {
        Digest { len: 0, hash: 0xcbf2_9ce4_8422_2325 }
    }
}

impl Digest {
    /// Adds `chunk` to the digest.
    pub fn update(&mut self, chunk: &[u8]) {
        for &b in chunk {
            self.hash ^= b as u64;
            self.hash = self.hash.wrapping_mul(0x0100_0000_01b3);
        }
        self.len += chunk.len() as u64;
    }

    /// The digest of `len` pattern bytes, computed without allocating them all.
    pub fn of_pattern(len: u64) -> Digest {
        let mut d = Digest::default();
        let mut body = PatternBody::new(len);
        while let Some(chunk) = body.next_chunk() {
            d.update(&chunk);
        }
        d
    }

    /// The digest as a header value, `len=<n>;fnv=<hex>`.
    pub fn header_value(&self) -> String {
        format!("len={};fnv={:016x}", self.len, self.hash)
    }
}

/// A streamed body of `len` pattern bytes in 64 KiB chunks.
pub struct PatternBody {
    offset: u64,
    len: u64,
}

impl PatternBody {
    /// The size of every chunk but the last.
    pub const CHUNK: u64 = 64 * 1024;

    /// A body of `len` pattern bytes.
    pub fn new(len: u64) -> Self {
        PatternBody { offset: 0, len }
    }

    fn next_chunk(&mut self) -> Option<Bytes> {
        if self.offset >= self.len {
            return None;
        }
        let n = (self.len - self.offset).min(Self::CHUNK);
        let chunk: Vec<u8> = (self.offset..self.offset + n).map(pattern_byte).collect();
        self.offset += n;
        Some(Bytes::from(chunk))
    }
}

impl Body for PatternBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        Poll::Ready(self.next_chunk().map(|c| Ok(Frame::data(c))))
    }

    fn is_end_stream(&self) -> bool {
        self.offset >= self.len
    }

    fn size_hint(&self) -> http_body::SizeHint {
        http_body::SizeHint::with_exact(self.len - self.offset)
    }
}
