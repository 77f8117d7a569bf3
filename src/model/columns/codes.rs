//! Dictionary codes: one per row, 1, 2 or 4 bytes wide as the dictionary grows (0 is "no
//! value", entry `k` of the dictionary is code `k + 1`); and the map the dictionaries look
//! values up with ([`DictMap`]).

/// Runs `$body` with `$s` bound to `$codes` (a `&Codes`) as [`CodeRows`] of its own width:
/// one match on the width for a whole loop, the loop compiled once per width.
macro_rules! with_codes {
    ($codes:expr, $s:ident => $body:expr) => {{
        #[allow(unused_imports)]
        use $crate::model::columns::CodeRows as _;
        match $codes {
            $crate::model::columns::Codes::Same { code, len, .. } => {
                let $s = &$crate::model::columns::SameRows {
                    code: *code,
                    len: *len,
                };
                $body
            }
            $crate::model::columns::Codes::U8(v) => {
                let $s = v.as_slice();
                $body
            }
            $crate::model::columns::Codes::U16(v) => {
                let $s = v.as_slice();
                $body
            }
            $crate::model::columns::Codes::U32(v) => {
                let $s = v.as_slice();
                $body
            }
        }
    }};
}
pub(crate) use with_codes;

/// Row codes, as narrow as the dictionary allows. A column of 7 models takes one byte a row;
/// a column holding one code on every row (the file the rows came from, a GPU or input length
/// fixed for the whole table) takes none until another code comes. Codes widen in place when
/// a push or an extension brings a code that does not fit.
///
/// Both the columns a table is read into and the dataset's index hold their codes so.
/// Hand-written rather than taken from a crate: the crates that pack integers (bit-packing,
/// compact vectors) pack to a fixed bit width chosen up front or read through shifts and
/// masks on every access, none widens a byte column in place as codes come, and each would
/// add code to the wasm bundle for what is a three-width enum here. Loops over many rows
/// match on the width once (`with_codes!`) and run a
/// loop of one width, not a match per row.
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
                        let mut v = with_room(cap);
                        v.resize(len, c as u8);
                        Codes::U8(v)
                    }
                    m if m <= u32::from(u16::MAX) => {
                        let mut v = with_room(cap);
                        v.resize(len, c as u16);
                        Codes::U16(v)
                    }
                    _ => {
                        let mut v = with_room(cap);
                        v.resize(len, c);
                        Codes::U32(v)
                    }
                }
            }
            // The room asked for stays asked for.
            Codes::U8(v) if code <= u32::from(u16::MAX) => Codes::U16(wider(v)),
            Codes::U8(v) => Codes::U32(wider(v)),
            Codes::U16(v) => Codes::U32(wider(v)),
            wide => wide,
        }
    }

    /// Codes holding `codes`, as narrow as the largest of them allows (none a row when they
    /// are all the same). Two passes over `codes`: one for the width, one to keep them.
    pub fn from_codes<I>(codes: I) -> Codes
    where
        I: Iterator<Item = u32> + Clone,
    {
        let mut len = 0usize;
        let mut max = 0u32;
        let mut first = None;
        let mut same = true;
        for c in codes.clone() {
            len += 1;
            max = max.max(c);
            match first {
                None => first = Some(c),
                Some(f) => same &= f == c,
            }
        }
        match first {
            None => Codes::default(),
            Some(code) if same => Codes::Same {
                code,
                len,
                room: len,
            },
            // `max` bounds every code: the narrowing casts are exact.
            _ if max <= u32::from(u8::MAX) => Codes::U8(codes.map(|c| c as u8).collect()),
            _ if max <= u32::from(u16::MAX) => Codes::U16(codes.map(|c| c as u16).collect()),
            _ => Codes::U32(codes.collect()),
        }
    }

    /// Codes holding `codes` ([`Codes::from_codes`]).
    pub fn from_vec(codes: Vec<u32>) -> Codes {
        Codes::from_codes(codes.iter().copied())
    }

    /// Appends every code of `codes`, widening as [`push`](Codes::push) does.
    pub fn extend<I: IntoIterator<Item = u32>>(&mut self, codes: I) {
        let codes = codes.into_iter();
        self.reserve(codes.size_hint().0);
        for c in codes {
            self.push(c);
        }
    }

    /// Appends `codes`: widened once (if at all) to hold the largest, then copied in one
    /// loop of the codes' width.
    pub fn extend_from_slice(&mut self, codes: &[u32]) {
        let Some(&first) = codes.first() else {
            return;
        };
        if let Codes::Same { code, len, .. } = self {
            if (*code == first || *len == 0) && codes.iter().all(|&c| c == first) {
                *code = first;
                *len += codes.len();
                return;
            }
        }
        let max = codes.iter().copied().max().unwrap_or(0);
        let fits = match self {
            Codes::Same { .. } => false,
            Codes::U8(_) => max <= u32::from(u8::MAX),
            Codes::U16(_) => max <= u32::from(u16::MAX),
            Codes::U32(_) => true,
        };
        if !fits {
            self.widen(max);
        }
        // Wide enough for `max`: the narrowing casts are exact.
        match self {
            Codes::U8(v) => {
                grow(v, codes.len());
                v.extend(codes.iter().map(|&c| c as u8));
            }
            Codes::U16(v) => {
                grow(v, codes.len());
                v.extend(codes.iter().map(|&c| c as u16));
            }
            Codes::U32(v) => {
                grow(v, codes.len());
                v.extend_from_slice(codes);
            }
            Codes::Same { .. } => {
                for &c in codes {
                    self.push(c);
                }
            }
        }
    }

    /// Appends `code` until there are `len` rows (no change when there are that many).
    pub fn resize(&mut self, len: usize, code: u32) {
        let more = len.saturating_sub(self.len());
        match self {
            Codes::Same {
                code: c, len: l, ..
            } if *c == code || *l == 0 => {
                *c = code;
                *l += more;
            }
            _ => {
                self.reserve(more);
                for _ in 0..more {
                    self.push(code);
                }
            }
        }
    }

    /// The codes, row by row (a match a row: loops over many rows use
    /// `with_codes!`).
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// The largest code (0 without rows).
    pub fn max(&self) -> u32 {
        with_codes!(self, s => (0..s.rows()).map(|i| s.at(i)).max().unwrap_or(0))
    }

    /// How many rows hold `code`.
    pub fn count(&self, code: u32) -> usize {
        with_codes!(self, s => (0..s.rows()).filter(|&i| s.at(i) == code).count())
    }

    /// The code of row `i`, `None` past the end.
    #[inline]
    pub fn try_get(&self, i: usize) -> Option<u32> {
        (i < self.len()).then(|| self.get(i))
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

    /// Room for `n` more codes where it can be had (see [`Vec::try_reserve_exact`]): asking
    /// for more than memory holds leaves the codes as they were, to grow as they come.
    pub fn try_reserve_exact(&mut self, n: usize) {
        match self {
            Codes::Same { len, room, .. } => *room = (*room).max(len.saturating_add(n)),
            Codes::U8(v) => {
                let _ = v.try_reserve_exact(n);
            }
            Codes::U16(v) => {
                let _ = v.try_reserve_exact(n);
            }
            Codes::U32(v) => {
                let _ = v.try_reserve_exact(n);
            }
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

/// An empty vector with room for `cap` where it can be had (room asked for by a count that
/// came from elsewhere must not abort the page), else none.
fn with_room<T>(cap: usize) -> Vec<T> {
    let mut v = Vec::new();
    let _ = v.try_reserve_exact(cap);
    v
}

/// Room in `v` for `n` more, to the next power of two: appends of equal runs then take the
/// room pushing one by one would (a million rows in 2^20, not in twice the first run's
/// length doubled).
fn grow<T>(v: &mut Vec<T>, n: usize) {
    let need = v.len().saturating_add(n);
    if need > v.capacity() {
        let room = need.checked_next_power_of_two().unwrap_or(need);
        v.reserve_exact(room - v.len());
    }
}

/// `v` in a wider type, with `v`'s room.
fn wider<T: Copy, U: From<T>>(v: Vec<T>) -> Vec<U> {
    let mut w = Vec::with_capacity(v.capacity());
    w.extend(v.iter().map(|&c| U::from(c)));
    w
}

impl<const N: usize> PartialEq<[u32; N]> for Codes {
    fn eq(&self, other: &[u32; N]) -> bool {
        self.len() == N && other.iter().enumerate().all(|(i, &c)| self.get(i) == c)
    }
}

/// Codes of one width read by row, for loops written once for every width
/// (`with_codes!`).
pub trait CodeRows {
    /// Rows.
    fn rows(&self) -> usize;
    /// The code of row `i` (0 past the end).
    fn at(&self, i: usize) -> u32;
}

macro_rules! code_rows {
    ($($t:ty),*) => {$(
        impl CodeRows for [$t] {
            #[inline(always)]
            fn rows(&self) -> usize {
                self.len()
            }
            #[inline(always)]
            fn at(&self, i: usize) -> u32 {
                self.get(i).map_or(0, |&c| u32::from(c))
            }
        }
    )*};
}
code_rows!(u8, u16, u32);

impl CodeRows for Codes {
    #[inline]
    fn rows(&self) -> usize {
        self.len()
    }
    #[inline]
    fn at(&self, i: usize) -> u32 {
        self.get(i)
    }
}

/// One code on `len` rows ([`Codes::Same`] for [`CodeRows`]).
#[derive(Clone, Copy, Debug)]
pub struct SameRows {
    /// The code.
    pub code: u32,
    /// Rows.
    pub len: usize,
}

impl CodeRows for SameRows {
    #[inline(always)]
    fn rows(&self) -> usize {
        self.len
    }
    #[inline(always)]
    fn at(&self, i: usize) -> u32 {
        if i < self.len {
            self.code
        } else {
            0
        }
    }
}

/// The dictionaries' map: foldhash's fast hash with a fixed seed (keys are short texts and
/// numbers from one file, so a keyed hash buys nothing and costs most of a lookup).
///
/// Not rustc's multiply-rotate `FxHasher`, which this was: its last multiply leaves the low
/// bits (the bucket the map picks) blind to a key's last bytes and to the high bits of a
/// number, so a million ids `r0000000`… or whole numbers as `f64` fell into a few buckets and
/// a 1,000,000-row table with an id column took 36 CPU seconds instead of under one
///.
pub type DictMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::FixedState>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dictionary_hash_spreads_ids_and_whole_numbers_over_the_buckets() {
        // The map picks a bucket from a hash's low bits. Keys differing only in their last
        // bytes (row ids) or in a number's high bits (whole numbers as `f64`) must still land
        // in different buckets: with rustc's FxHasher, which this replaced, 65,536 such ids
        // shared 32 low-bit patterns and a million-row id column took minutes.
        use std::hash::BuildHasher;
        let state = foldhash::fast::FixedState::default();
        let spread = |hashes: Vec<u64>| {
            let low: std::collections::HashSet<u64> = hashes.iter().map(|h| h & 0xffff).collect();
            low.len()
        };
        let ids = (0..65_536u32).map(|i| state.hash_one(format!("r{i:07}").as_str()));
        let numbers = (0..65_536u32).map(|i| state.hash_one(f64::from(i).to_bits()));
        // A uniform hash gives about 63 % of 65,536 distinct low 16 bits.
        for (what, n) in [
            ("ids", spread(ids.collect())),
            ("numbers", spread(numbers.collect())),
        ] {
            assert!(n > 35_000, "{what}: {n} distinct low bits of 65,536");
        }
    }

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
    fn built_at_once_as_narrow_as_the_largest_code() {
        for (codes, width, bytes) in [
            (vec![], 1, 0),
            (vec![9, 9, 9], 1, 0),
            (vec![0, 255, 3], 1, 3),
            (vec![0, 256, 3], 2, 6),
            (vec![65_535, 1], 2, 4),
            (vec![65_536, 1], 4, 8),
        ] {
            let c = Codes::from_vec(codes.clone());
            assert_eq!((c.width(), c.heap_bytes()), (width, bytes), "{codes:?}");
            assert_eq!(c.iter().collect::<Vec<_>>(), codes);
            assert_eq!(c.max(), codes.iter().copied().max().unwrap_or(0));
            assert_eq!(c.count(0), codes.iter().filter(|&&x| x == 0).count());
            assert_eq!(c.try_get(codes.len()), None);
            let mut pushed = Codes::default();
            pushed.extend(codes.iter().copied());
            assert_eq!(pushed.width(), width, "{codes:?}");
            assert_eq!(pushed, c, "{codes:?}");
        }
        let mut c = Codes::from_vec(vec![4, 4]);
        c.resize(5, 4);
        assert_eq!((c.len(), c.heap_bytes()), (5, 0));
        c.resize(7, 0);
        assert_eq!(c, [4, 4, 4, 4, 4, 0, 0]);
        c.resize(3, 1);
        assert_eq!(c.len(), 7);
    }

    proptest::proptest! {
        /// Codes pushed and extended a run at a time hold what they were given, as narrow as
        /// codes built from all of them at once.
        #[test]
        fn widening_in_place_keeps_every_code(
            runs in proptest::collection::vec(
                (proptest::collection::vec(0u32..300, 0..40), 0u32..3),
                0..12,
            ),
        ) {
            let mut all = Vec::new();
            let mut c = Codes::default();
            let mut sliced = Codes::default();
            for (run, scale) in &runs {
                // Some runs reach past 255, some past 65,535.
                let run: Vec<u32> = run.iter().map(|&x| x * [1, 250, 300_000][*scale as usize]).collect();
                c.extend(run.iter().copied());
                sliced.extend_from_slice(&run);
                all.extend(run);
            }
            let whole = Codes::from_vec(all.clone());
            proptest::prop_assert_eq!(c.iter().collect::<Vec<_>>(), all.clone());
            proptest::prop_assert_eq!(c.width(), whole.width());
            proptest::prop_assert_eq!(c.len(), all.len());
            proptest::prop_assert_eq!(c.max(), all.iter().copied().max().unwrap_or(0));
            proptest::prop_assert!(c == whole);
            proptest::prop_assert_eq!(sliced.iter().collect::<Vec<_>>(), all);
            proptest::prop_assert_eq!(sliced.width(), whole.width());
        }
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
