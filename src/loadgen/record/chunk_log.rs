//! A reply's chunk arrivals, packed: what [`RequestRecord::chunks`](super::RequestRecord) holds
//! for every request of a run until the run's figures are computed.
//!
//! A [`ChunkArrival`] is 16 bytes (an `f64` time, a `u32` token count, a flag); a 128-token reply
//! held that way is 2 KB, most of what a request cost the load generator at scale. Here each
//! chunk is one LEB128 varint of its time since the chunk before, in whole nanoseconds (the
//! resolution of the kernel receive stamps the times come from, [`crate::loadgen::stamp`]),
//! zig-zag coded, with two flag bits: coalesced, and "tokens other than 1", in which case a
//! second varint holds the count. A chunk a few milliseconds after the one before takes
//! 4 bytes; 128 of them about 512.
//!
//! Times read back exactly as [`std::time::Duration::as_secs_f64`] gives them for the stored
//! nanoseconds, which is how the client computes them in the first place, so a time measured
//! here reads back bit for bit. A time that is not a finite, non-negative number of seconds is
//! stored as 0.

use std::time::Duration;

use super::ChunkArrival;

/// A reply's token-bearing chunks, in arrival order, packed (see the module doc).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ChunkLog {
    bytes: Vec<u8>,
    len: usize,
    /// Nanoseconds of the last chunk pushed (the base of the next delta).
    last_ns: u64,
}

/// Flag bits below the zig-zag delta.
const COALESCED: u64 = 0b01;
const TOKENS_FOLLOW: u64 = 0b10;

impl ChunkLog {
    /// No chunks.
    pub fn new() -> ChunkLog {
        ChunkLog::default()
    }

    /// No chunks yet, with room for about `chunks` of them (4 bytes each: gaps of up to 33 ms),
    /// so a reply streaming in does not reallocate as it grows.
    pub fn with_capacity(chunks: usize) -> ChunkLog {
        ChunkLog {
            bytes: Vec::with_capacity(chunks.saturating_mul(4)),
            ..ChunkLog::default()
        }
    }

    /// Appends a chunk.
    pub fn push(&mut self, c: ChunkArrival) {
        let ns = nanos_of(c.at_s);
        let delta = ns.wrapping_sub(self.last_ns) as i64;
        let zigzag = ((delta << 1) ^ (delta >> 63)) as u64;
        let flags =
            if c.coalesced { COALESCED } else { 0 } | if c.tokens == 1 { 0 } else { TOKENS_FOLLOW };
        // The top two bits of a zig-zag delta are only set beyond ±73 years; dropped there.
        put_varint(&mut self.bytes, (zigzag << 2) | flags);
        if c.tokens != 1 {
            put_varint(&mut self.bytes, u64::from(c.tokens));
        }
        self.last_ns = ns;
        self.len += 1;
    }

    /// How many chunks.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The chunks, in arrival order.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            bytes: &self.bytes,
            ns: 0,
            left: self.len,
        }
    }

    /// Total output tokens of the chunks.
    pub fn tokens(&self) -> u64 {
        self.iter().map(|c| u64::from(c.tokens)).sum()
    }

    /// Gives back the room the log grew into beyond its bytes (called when a reply ends).
    pub fn shrink_to_fit(&mut self) {
        self.bytes.shrink_to_fit();
    }

    /// Bytes held on the heap.
    pub fn heap_bytes(&self) -> usize {
        self.bytes.capacity()
    }

    /// Bytes the chunks take (at most [`heap_bytes`](ChunkLog::heap_bytes)).
    pub fn byte_len(&self) -> usize {
        self.bytes.len()
    }

    /// The packed form: the bytes, the chunk count and the last chunk's nanoseconds (what
    /// [`ChunkLog::from_packed`] makes the same log of).
    pub fn packed(&self) -> (&[u8], usize, u64) {
        (&self.bytes, self.len, self.last_ns)
    }

    /// The log whose [`packed`](ChunkLog::packed) form this is.
    pub fn from_packed(bytes: Vec<u8>, len: usize, last_ns: u64) -> ChunkLog {
        ChunkLog {
            bytes,
            len,
            last_ns,
        }
    }
}

impl std::fmt::Debug for ChunkLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl FromIterator<ChunkArrival> for ChunkLog {
    fn from_iter<I: IntoIterator<Item = ChunkArrival>>(iter: I) -> ChunkLog {
        let mut log = ChunkLog::new();
        for c in iter {
            log.push(c);
        }
        log
    }
}

impl<'a> IntoIterator for &'a ChunkLog {
    type Item = ChunkArrival;
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

/// The chunks of a [`ChunkLog`], decoded one by one.
#[derive(Clone, Debug)]
pub struct Iter<'a> {
    bytes: &'a [u8],
    ns: u64,
    left: usize,
}

impl Iterator for Iter<'_> {
    type Item = ChunkArrival;

    fn next(&mut self) -> Option<ChunkArrival> {
        if self.left == 0 {
            return None;
        }
        let word = take_varint(&mut self.bytes)?;
        let zigzag = word >> 2;
        let delta = ((zigzag >> 1) as i64) ^ -((zigzag & 1) as i64);
        self.ns = self.ns.wrapping_add(delta as u64);
        let tokens = if word & TOKENS_FOLLOW != 0 {
            u32::try_from(take_varint(&mut self.bytes)?).unwrap_or(u32::MAX)
        } else {
            1
        };
        self.left -= 1;
        Some(ChunkArrival {
            at_s: Duration::from_nanos(self.ns).as_secs_f64(),
            tokens,
            coalesced: word & COALESCED != 0,
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for Iter<'_> {}

/// Whole nanoseconds in `s` seconds (0 for negative or non-finite values; saturating).
fn nanos_of(s: f64) -> u64 {
    if s.is_finite() && s > 0.0 {
        // `as` saturates at u64::MAX.
        (s * 1e9).round() as u64
    } else {
        0
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads one varint off the front of `bytes`; `None` if it is cut (only a bug makes one).
fn take_varint(bytes: &mut &[u8]) -> Option<u64> {
    let mut v = 0u64;
    for (i, &b) in bytes.iter().enumerate().take(10) {
        v |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            *bytes = &bytes[i + 1..];
            return Some(v);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(at_s: f64, tokens: u32, coalesced: bool) -> ChunkArrival {
        ChunkArrival {
            at_s,
            tokens,
            coalesced,
        }
    }

    #[test]
    fn times_measured_by_the_client_read_back_bit_for_bit() {
        // As the client computes them: a Duration's seconds.
        let times: Vec<f64> = [
            Duration::from_nanos(0),
            Duration::from_nanos(48_123_457),
            Duration::from_nanos(48_123_457),
            Duration::new(3, 999_999_999),
            Duration::new(86_400 * 30, 7),
            Duration::from_nanos(5),
        ]
        .iter()
        .map(Duration::as_secs_f64)
        .collect();
        let chunks: Vec<ChunkArrival> = times
            .iter()
            .enumerate()
            .map(|(i, &t)| chunk(t, [1, 3, 0, 1, u32::MAX, 1][i], i == 2))
            .collect();
        let log: ChunkLog = chunks.iter().copied().collect();
        assert_eq!(log.len(), 6);
        let back: Vec<ChunkArrival> = log.iter().collect();
        assert_eq!(back.len(), chunks.len());
        for (a, b) in back.iter().zip(&chunks) {
            assert_eq!(a.at_s.to_bits(), b.at_s.to_bits());
            assert_eq!((a.tokens, a.coalesced), (b.tokens, b.coalesced));
        }
        // Going back in time (the last chunk) is a negative delta, kept.
        assert_eq!(back[5].at_s, 5e-9);
        assert_eq!(log.tokens(), 1 + 3 + 1 + u64::from(u32::MAX) + 1);
    }

    #[test]
    fn decimal_times_keep_their_value() {
        let log: ChunkLog = [0.01, 0.012345678, 0.25, 1.5]
            .iter()
            .map(|&t| chunk(t, 1, false))
            .collect();
        let back: Vec<f64> = log.iter().map(|c| c.at_s).collect();
        assert_eq!(back, vec![0.01, 0.012345678, 0.25, 1.5]);
    }

    #[test]
    fn nonsense_times_are_zero_and_nothing_panics() {
        let log: ChunkLog = [f64::NAN, -1.0, f64::INFINITY, 1e300]
            .iter()
            .map(|&t| chunk(t, 1, false))
            .collect();
        let back: Vec<f64> = log.iter().map(|c| c.at_s).collect();
        assert_eq!(back[..3], [0.0, 0.0, 0.0]);
        assert_eq!(back[3], Duration::from_nanos(u64::MAX).as_secs_f64());
    }

    #[test]
    fn a_typical_reply_takes_about_four_bytes_a_chunk() {
        // 128 single-token chunks 5-9 ms apart, after a 48 ms first token.
        let mut log = ChunkLog::new();
        let mut t = Duration::from_micros(48_000);
        for i in 0..128u64 {
            log.push(chunk(t.as_secs_f64(), 1, false));
            t += Duration::from_nanos(5_000_000 + i * 31_250);
        }
        log.shrink_to_fit();
        // 5 bytes for the first (48 ms), 4 for each gap of 5-9 ms.
        assert_eq!(log.heap_bytes(), 5 + 127 * 4);
        assert_eq!(log.tokens(), 128);
    }

    #[test]
    fn empty_log() {
        let log = ChunkLog::new();
        assert!(log.is_empty());
        assert_eq!(log.iter().next(), None);
        assert_eq!(format!("{log:?}"), "[]");
    }
}
