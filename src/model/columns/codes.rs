//! Dictionary codes: one per row, 1, 2 or 4 bytes wide as the dictionary grows (0 is "no
//! value", entry `k` of the dictionary is code `k + 1`); and the small hasher the
//! dictionaries look values up with.

use std::hash::{BuildHasherDefault, Hasher};

/// Row codes, as narrow as the dictionary allows. A column of 7 models takes one byte a row;
/// a column holding one code on every row (the file the rows came from, a GPU or input length
/// fixed for the whole table) takes none until another code comes.
#[derive(Clone, Debug)]
pub enum Codes {
    /// `len` rows, all `code`; `room` is the rows the codes have been asked to hold, for when
    /// they are written out.
    Same {
        /// The code of every row.
        code: u32,
        /// Rows.
        len: usize,
        /// Rows [`reserve`](Codes::reserve) asked room for.
        room: usize,
    },
    /// Up to 255 entries.
    U8(Vec<u8>),
    /// Up to 65,535 entries.
    U16(Vec<u16>),
    /// More.
    U32(Vec<u32>),
}

impl Default for Codes {
    fn default() -> Codes {
        Codes::Same {
            code: 0,
            len: 0,
            room: 0,
        }
    }
}

impl PartialEq for Codes {
    /// The same code on every row, however held.
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && (0..self.len()).all(|i| self.get(i) == other.get(i))
    }
}

impl Eq for Codes {}

impl Codes {
    /// Appends a code, widening every code first when it does not fit.
    #[inline(always)]
    pub fn push(&mut self, code: u32) {
        match self {
            Codes::Same { code: c, len, .. } if *c == code || *len == 0 => {
                *c = code;
                *len += 1;
            }
            Codes::U8(v) if code <= u32::from(u8::MAX) => v.push(code as u8),
            Codes::U16(v) if code <= u32::from(u16::MAX) => v.push(code as u16),
            Codes::U32(v) => v.push(code),
            _ => self.widen_and_push(code),
        }
    }

    /// [`push`](Codes::push) of a code that does not fit the codes as they are held.
    #[cold]
    #[inline(never)]
    fn widen_and_push(&mut self, code: u32) {
        self.widen(code);
        // Widened to hold `code`: the narrowing casts below are exact.
        match self {
            Codes::Same { code: c, len, .. } => {
                *c = code;
                *len += 1;
            }
            Codes::U8(v) => v.push(code as u8),
            Codes::U16(v) => v.push(code as u16),
            Codes::U32(v) => v.push(code),
        }
    }

    fn widen(&mut self, code: u32) {
        *self = match std::mem::take(self) {
            Codes::Same { code: c, len, room } => {
                let cap = room.max(len + 1);
                match c.max(code) {
                    m if m <= u32::from(u8::MAX) => {
                        let mut v = Vec::with_capacity(cap);
                        v.resize(len, c as u8);
                        Codes::U8(v)
                    }
                    m if m <= u32::from(u16::MAX) => {
                        let mut v = Vec::with_capacity(cap);
                        v.resize(len, c as u16);
                        Codes::U16(v)
                    }
                    _ => {
                        let mut v = Vec::with_capacity(cap);
                        v.resize(len, c);
                        Codes::U32(v)
                    }
                }
            }
            Codes::U8(v) if code <= u32::from(u16::MAX) => {
                Codes::U16(v.into_iter().map(u16::from).collect())
            }
            Codes::U8(v) => Codes::U32(v.into_iter().map(u32::from).collect()),
            Codes::U16(v) => Codes::U32(v.into_iter().map(u32::from).collect()),
            wide => wide,
        }
    }

    /// The code of row `i` (0 past the end).
    #[inline]
    pub fn get(&self, i: usize) -> u32 {
        match self {
            Codes::Same { code, len, .. } => {
                if i < *len {
                    *code
                } else {
                    0
                }
            }
            Codes::U8(v) => v.get(i).map_or(0, |c| u32::from(*c)),
            Codes::U16(v) => v.get(i).map_or(0, |c| u32::from(*c)),
            Codes::U32(v) => v.get(i).copied().unwrap_or(0),
        }
    }

    /// Rows.
    pub fn len(&self) -> usize {
        match self {
            Codes::Same { len, .. } => *len,
            Codes::U8(v) => v.len(),
            Codes::U16(v) => v.len(),
            Codes::U32(v) => v.len(),
        }
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes per code (for a column of one code, the bytes that code would take).
    pub fn width(&self) -> usize {
        match self {
            Codes::Same { code, .. } if *code > u32::from(u16::MAX) => 4,
            Codes::Same { code, .. } if *code > u32::from(u8::MAX) => 2,
            Codes::Same { .. } => 1,
            Codes::U8(_) => 1,
            Codes::U16(_) => 2,
            Codes::U32(_) => 4,
        }
    }

    /// Room for `n` more rows.
    pub fn reserve(&mut self, n: usize) {
        match self {
            Codes::Same { len, room, .. } => *room = (*room).max(*len + n),
            Codes::U8(v) => v.reserve(n),
            Codes::U16(v) => v.reserve(n),
            Codes::U32(v) => v.reserve(n),
        }
    }

    /// Bytes held.
    pub fn heap_bytes(&self) -> usize {
        match self {
            Codes::Same { .. } => 0,
            Codes::U8(v) => v.capacity(),
            Codes::U16(v) => v.capacity() * 2,
            Codes::U32(v) => v.capacity() * 4,
        }
    }
}

/// The multiply-rotate hash of rustc (`FxHasher`): dictionary keys are short texts and
/// numbers from one file, so a keyed hash buys nothing and costs most of a lookup.
#[derive(Default, Clone, Copy)]
pub struct FxHasher {
    hash: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(w));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.hash
    }
}

/// A `HashMap` with [`FxHasher`].
pub type FxHashMap<K, V> = std::collections::HashMap<K, V, BuildHasherDefault<FxHasher>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_widen_and_keep_every_row() {
        let mut c = Codes::default();
        let values: Vec<u32> = vec![0, 1, 255, 3, 256, 70_000, 2, 0];
        for &v in &values {
            c.push(v);
            let w = c.width();
            assert!(w == 1 || v > 255 || c.len() > 1);
        }
        assert_eq!(c.width(), 4);
        for (i, &v) in values.iter().enumerate() {
            assert_eq!(c.get(i), v);
        }
        assert_eq!(c.get(values.len()), 0);
        let mut c = Codes::default();
        c.push(300);
        assert_eq!((c.width(), c.get(0)), (2, 300));
    }

    #[test]
    fn one_code_down_every_row_is_held_as_a_count() {
        let mut c = Codes::default();
        c.reserve(1_000);
        for _ in 0..500 {
            c.push(7);
        }
        assert_eq!((c.len(), c.width(), c.heap_bytes()), (500, 1, 0));
        assert_eq!((c.get(0), c.get(499), c.get(500)), (7, 7, 0));
        c.push(0);
        assert_eq!((c.len(), c.width(), c.heap_bytes()), (501, 1, 1_000));
        assert_eq!((c.get(499), c.get(500)), (7, 0));
        for (first, then, width) in [(3, 70_000, 4), (70_000, 3, 4), (300, 2, 2), (0, 255, 1)] {
            let mut c = Codes::default();
            c.push(first);
            c.push(first);
            c.push(then);
            assert_eq!(c.width(), width);
            assert_eq!(
                (c.get(0), c.get(1), c.get(2), c.len()),
                (first, first, then, 3)
            );
        }
        let mut c = Codes::default();
        c.push(70_000);
        assert_eq!((c.width(), c.heap_bytes()), (4, 0));
    }
}
