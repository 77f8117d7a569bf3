//! A validity mask: one bit per row, set where the row has a value.

/// One bit per row, 64 rows a word.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Bitmap {
    words: Vec<u64>,
    len: usize,
}

impl Bitmap {
    /// An empty mask.
    pub const fn new() -> Bitmap {
        Bitmap {
            words: Vec::new(),
            len: 0,
        }
    }

    /// Rows in the mask.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the mask has no rows.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends one row's bit.
    #[inline]
    pub fn push(&mut self, set: bool) {
        let bit = self.len % 64;
        if bit == 0 {
            self.words.push(0);
        }
        if set {
            if let Some(w) = self.words.last_mut() {
                *w |= 1 << bit;
            }
        }
        self.len += 1;
    }

    /// Whether row `i` is set (`false` past the end).
    #[inline]
    pub fn get(&self, i: usize) -> bool {
        i < self.len
            && self
                .words
                .get(i / 64)
                .is_some_and(|w| (w >> (i % 64)) & 1 == 1)
    }

    /// How many rows are set.
    pub fn count_ones(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Room for `n` more rows without reallocating.
    pub fn reserve(&mut self, n: usize) {
        self.words
            .reserve((self.len + n).div_ceil(64).saturating_sub(self.words.len()));
    }

    /// Bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.words.capacity() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_read_back_across_words() {
        let mut b = Bitmap::new();
        let pattern: Vec<bool> = (0..200)
            .map(|i| i % 3 == 0 || i == 64 || i == 127)
            .collect();
        for &p in &pattern {
            b.push(p);
        }
        assert_eq!(b.len(), 200);
        for (i, &p) in pattern.iter().enumerate() {
            assert_eq!(b.get(i), p, "{i}");
        }
        assert!(!b.get(200));
        assert_eq!(b.count_ones(), pattern.iter().filter(|p| **p).count());
    }
}
