//! A dictionary-coded numeric column, for numeric dimensions (batch size, concurrency, request
//! rate): few distinct values repeated down many rows, so one code a row and each value once.

use std::hash::Hash;

use super::codes::{Codes, DictMap};

/// A number a dictionary can key on: its exact bits (so `-0.0`, `0.0` and every NaN stay
/// what they were).
pub trait DictKey: Copy + PartialEq + std::fmt::Debug {
    /// The hashable identity of the value.
    type Bits: Copy + Eq + Hash + std::fmt::Debug;
    /// The bits.
    fn bits(self) -> Self::Bits;
}

impl DictKey for u64 {
    type Bits = u64;
    fn bits(self) -> u64 {
        self
    }
}

impl DictKey for f64 {
    type Bits = u64;
    fn bits(self) -> u64 {
        self.to_bits()
    }
}

/// Numbers, dictionary-coded.
#[derive(Clone, Debug)]
pub struct DictNumbers<T: DictKey> {
    values: Vec<T>,
    index: DictMap<T::Bits, u32>,
    codes: Codes,
    last: u32,
}

impl<T: DictKey> Default for DictNumbers<T> {
    fn default() -> Self {
        DictNumbers {
            values: Vec::new(),
            index: DictMap::default(),
            codes: Codes::default(),
            last: 0,
        }
    }
}

impl<T: DictKey> PartialEq for DictNumbers<T> {
    /// Same rows with the same values, bit for bit (dictionary order aside).
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len()
            && (0..self.len()).all(|i| self.get(i).map(T::bits) == other.get(i).map(T::bits))
    }
}

impl<T: DictKey> DictNumbers<T> {
    /// An empty column.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a row: `None` for no value.
    #[inline]
    pub fn push(&mut self, value: Option<T>) {
        self.push_coded(value);
    }

    /// Appends a row holding the value of `code`, a code this column gave before
    /// ([`push_coded`](DictNumbers::push_coded), [`code`](DictNumbers::code)); 0 is no value.
    /// The same as [`push`](DictNumbers::push) of that value.
    #[inline]
    pub fn push_code(&mut self, code: u32) {
        debug_assert!(code as usize <= self.values.len());
        if code > 0 {
            self.last = code;
        }
        self.codes.push(code);
    }

    /// Appends a row (`None` for no value) and gives its code, for
    /// [`push_code`](DictNumbers::push_code) to append the same value again without a lookup.
    #[inline]
    pub fn push_coded(&mut self, value: Option<T>) -> u32 {
        let code = match value {
            None => 0,
            Some(v) => {
                let bits = v.bits();
                let last = (self.last as usize)
                    .checked_sub(1)
                    .and_then(|k| self.values.get(k));
                if last.is_some_and(|l| l.bits() == bits) {
                    self.last
                } else if let Some(&c) = self.index.get(&bits) {
                    self.last = c;
                    c
                } else {
                    self.values.push(v);
                    let c = self.values.len() as u32;
                    self.index.insert(bits, c);
                    self.last = c;
                    c
                }
            }
        };
        self.codes.push(code);
        code
    }

    /// The value of row `i`.
    #[inline]
    pub fn get(&self, i: usize) -> Option<T> {
        self.entry(self.codes.get(i))
    }

    /// The dictionary entry of a code (`None` for 0).
    #[inline]
    pub fn entry(&self, code: u32) -> Option<T> {
        (code as usize)
            .checked_sub(1)
            .and_then(|k| self.values.get(k))
            .copied()
    }

    /// The code of row `i` (0: no value).
    #[inline]
    pub fn code(&self, i: usize) -> u32 {
        self.codes.get(i)
    }

    /// The distinct values, in order of first appearance.
    pub fn values(&self) -> &[T] {
        &self.values
    }

    /// Rows.
    pub fn len(&self) -> usize {
        self.codes.len()
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.codes.is_empty()
    }

    /// Room for `n` more rows.
    pub fn reserve(&mut self, n: usize) {
        self.codes.reserve(n);
    }

    /// Bytes held (approximate for the index).
    pub fn heap_bytes(&self) -> usize {
        self.codes.heap_bytes() + self.values.capacity() * 8 + self.index.capacity() * 16
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_keep_their_exact_bits() {
        let mut c = DictNumbers::<f64>::new();
        let rows = [
            Some(1.0),
            Some(-0.0),
            Some(0.0),
            None,
            Some(f64::INFINITY),
            Some(1.0),
        ];
        for r in rows {
            c.push(r);
        }
        assert_eq!(c.values().len(), 4);
        for (i, r) in rows.iter().enumerate() {
            assert_eq!(c.get(i).map(f64::to_bits), r.map(f64::to_bits), "{i}");
        }
        let mut n = DictNumbers::<u64>::new();
        for v in [8, 8, 16, 8] {
            n.push(Some(v));
        }
        assert_eq!(
            (n.values(), n.get(3), n.get(4)),
            (&[8u64, 16][..], Some(8), None)
        );
        assert_eq!(n.push_coded(Some(16)), 2);
        assert_eq!(n.push_coded(None), 0);
        assert_eq!(n.push_coded(Some(32)), 3);
        n.push_code(1);
        n.push_code(0);
        assert_eq!(
            (4..9).map(|i| n.get(i)).collect::<Vec<_>>(),
            [Some(16), None, Some(32), Some(8), None]
        );
    }
}
