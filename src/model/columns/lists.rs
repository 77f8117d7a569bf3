//! Lists of numbers laid end to end (the inter-token gaps of every request): one offset a list
//! and the values in chunks, so that millions of values take their own size and not a heap
//! block per list (which the allocator rounds up to its next size class) nor a vector that
//! doubles (and copies) as it grows.
//!
//! Each new chunk is as large as all the values before it, between [`MIN_CHUNK`] and
//! [`CHUNK`] values: a few gaps take a few KiB, millions take chunks of 32 MiB. Natively
//! (mimalloc, transparent huge pages) blocks of a few MiB hold noticeably more memory than
//! their size, blocks of 32 MiB about their size. A chunk's unused end is never written, so
//! natively it takes no memory.

/// Values the first chunk holds.
const MIN_CHUNK: usize = 1 << 12;
/// Values a chunk holds at most (32 MiB of `f64`); a longer list gets a chunk of its own.
const CHUNK: usize = 1 << 22;

/// Lists of `f64`. List `q` is `values[offsets[q]..offsets[q + 1]]` of the chunks laid end
/// to end; a list never spans two chunks, so it reads back as one slice.
#[derive(Clone, Debug)]
pub struct NumberLists {
    /// One more than the lists.
    offsets: Vec<usize>,
    chunks: Vec<Vec<f64>>,
    /// Where each chunk starts among the values laid end to end.
    chunk_starts: Vec<usize>,
}

impl Default for NumberLists {
    fn default() -> Self {
        NumberLists {
            offsets: vec![0],
            chunks: Vec::new(),
            chunk_starts: Vec::new(),
        }
    }
}

impl PartialEq for NumberLists {
    /// The same lists, value for value (bit for bit), however chunked.
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len()
            && (0..self.len()).all(|q| {
                let (a, b) = (self.get(q), other.get(q));
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
            })
    }
}

impl NumberLists {
    /// No lists.
    pub fn new() -> NumberLists {
        NumberLists::default()
    }

    /// Appends one list.
    pub fn push(&mut self, list: &[f64]) {
        self.push_iter(list.iter().copied());
    }

    /// Appends one list given as its values in order.
    pub fn push_iter(&mut self, list: impl ExactSizeIterator<Item = f64>) {
        let total = self.values();
        let n = list.len();
        if n > 0 {
            let fits = self
                .chunks
                .last()
                .is_some_and(|c| c.capacity() - c.len() >= n);
            if !fits {
                self.chunk_starts.push(total);
                let size = total.clamp(MIN_CHUNK, CHUNK).max(n);
                self.chunks.push(Vec::with_capacity(size));
            }
            if let Some(c) = self.chunks.last_mut() {
                c.extend(list.take(n));
            }
        }
        // The values the chunk took, whatever the iterator promised.
        let end = match (self.chunks.last(), self.chunk_starts.last()) {
            (Some(c), Some(&s)) if n > 0 => s + c.len(),
            _ => total,
        };
        self.offsets.push(end);
    }

    /// Lists.
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Whether there are no lists.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Values over all lists.
    pub fn values(&self) -> usize {
        self.offsets.last().copied().unwrap_or(0)
    }

    /// List `q` (empty past the end).
    pub fn get(&self, q: usize) -> &[f64] {
        let (Some(&a), Some(&b)) = (self.offsets.get(q), self.offsets.get(q + 1)) else {
            return &[];
        };
        if a == b {
            return &[];
        }
        let k = self.chunk_starts.partition_point(|&s| s <= a) - 1;
        match (self.chunks.get(k), self.chunk_starts.get(k)) {
            (Some(c), Some(&s)) => c.get(a - s..b - s).unwrap_or_default(),
            _ => &[],
        }
    }

    /// Multiplies every value by `factor` (seconds to milliseconds, say).
    pub fn scale(&mut self, factor: f64) {
        for c in &mut self.chunks {
            for x in c.iter_mut() {
                *x *= factor;
            }
        }
    }

    /// Bytes held.
    pub fn heap_bytes(&self) -> usize {
        (self.offsets.capacity() + self.chunk_starts.capacity()) * std::mem::size_of::<usize>()
            + self
                .chunks
                .iter()
                .map(|c| c.capacity() * std::mem::size_of::<f64>())
                .sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_read_back_whole_across_chunks() {
        let mut l = NumberLists::new();
        let mut expected: Vec<Vec<f64>> = Vec::new();
        // Lists of 0 to 100,000 values: several chunks, one list longer than a chunk, and
        // lists that do not fit the rest of a chunk.
        let mut x: u64 = 3;
        for i in 0..40 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            let n = match i {
                7 => CHUNK + 5,
                _ => (x >> 45) as usize % 100_000,
            };
            let list: Vec<f64> = (0..n).map(|k| (i * 1_000_000 + k) as f64).collect();
            l.push(&list);
            expected.push(list);
            l.push(&[]);
            expected.push(Vec::new());
        }
        assert_eq!(l.len(), expected.len());
        assert_eq!(l.values(), expected.iter().map(Vec::len).sum::<usize>());
        for (q, e) in expected.iter().enumerate() {
            assert_eq!(l.get(q), e.as_slice(), "list {q}");
        }
        assert_eq!(l.get(expected.len()), &[] as &[f64]);
        // Chunks grow with the values, not one a list: at most twice the values' size.
        let values = l.values() * 8;
        assert!(
            l.heap_bytes() < 2 * values + MIN_CHUNK * 8,
            "{}",
            l.heap_bytes()
        );
        assert!(l.chunks.len() < 20, "{} chunks", l.chunks.len());
    }

    #[test]
    fn scaling_and_equality_go_value_by_value() {
        let mut a = NumberLists::new();
        a.push(&[0.5, 0.25]);
        a.push(&[]);
        a.push(&[2.0]);
        a.scale(1000.0);
        assert_eq!(a.get(0), &[500.0, 250.0]);
        assert_eq!(a.get(2), &[2000.0]);
        let mut b = NumberLists::new();
        for list in [&[500.0, 250.0][..], &[], &[2000.0]] {
            b.push(list);
        }
        assert_eq!(a, b);
        b.push(&[1.0]);
        assert_ne!(a, b);
        assert!(NumberLists::new().is_empty());
    }
}
