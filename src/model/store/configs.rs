//! The dataset's configurations: every distinct combination of all dimensions' values and set
//! of metrics, numbered in order of first appearance, with each row's number. Worked out in one
//! pass over the rows per change of the dataset; a filter is then decided once per
//! configuration (a few thousand) rather than once per row (a million), and its rows are one
//! pass over the rows' numbers ([`super::Dataset::filter_pass`]).

use std::collections::HashMap;

use super::super::columns::{with_codes, Codes};
use super::Index;

/// Rows whose keys [`Configurations::new`] works out together.
const BLOCK: usize = 1024;

/// Each row's configuration number, as narrow as the number of configurations allows: a
/// byte a row for up to 256 configurations, two for up to 65,536, else four.
#[derive(Clone, Debug)]
pub(super) enum RowConfigs {
    /// Up to 256 configurations.
    U8(Vec<u8>),
    /// Up to 65,536 configurations.
    U16(Vec<u16>),
    /// More.
    U32(Vec<u32>),
}

impl Default for RowConfigs {
    fn default() -> RowConfigs {
        RowConfigs::U8(Vec::new())
    }
}

impl RowConfigs {
    /// Room for `rows` numbers, a byte each until a number needs more.
    pub(super) fn with_capacity(rows: usize) -> RowConfigs {
        RowConfigs::U8(Vec::with_capacity(rows))
    }

    /// Appends `id`, widening every number kept so far (once per width, with room for
    /// `rows` in all) when it does not fit: numbered as narrow as they come, with no wide
    /// copy of them all to narrow at the end.
    pub(super) fn push(&mut self, id: u32, rows: usize) {
        fn widen<T: Copy + Into<U>, U>(v: &[T], rows: usize) -> Vec<U> {
            let mut wide = Vec::with_capacity(rows.max(v.len() + 1));
            wide.extend(v.iter().map(|&x| x.into()));
            wide
        }
        match self {
            RowConfigs::U8(v) => match u8::try_from(id) {
                Ok(id) => v.push(id),
                Err(_) => {
                    *self = RowConfigs::U16(widen(v, rows));
                    self.push(id, rows);
                }
            },
            RowConfigs::U16(v) => match u16::try_from(id) {
                Ok(id) => v.push(id),
                Err(_) => {
                    *self = RowConfigs::U32(widen(v, rows));
                    self.push(id, rows);
                }
            },
            RowConfigs::U32(v) => v.push(id),
        }
    }

    /// Bytes a row.
    #[cfg(test)]
    pub(super) fn width(&self) -> usize {
        match self {
            RowConfigs::U8(_) => 1,
            RowConfigs::U16(_) => 2,
            RowConfigs::U32(_) => 4,
        }
    }

    /// Calls `f(row, configuration)` for each of `rows` (all rows when `None`), in order; a
    /// row beyond the numbered ones is skipped. The width is decided once, not per row.
    pub(super) fn each(&self, rows: Option<&[usize]>, f: impl FnMut(usize, u32)) {
        fn walk<T: Copy + Into<u32>>(
            ids: &[T],
            rows: Option<&[usize]>,
            mut f: impl FnMut(usize, u32),
        ) {
            match rows {
                None => {
                    for (row, &id) in ids.iter().enumerate() {
                        f(row, id.into());
                    }
                }
                Some(rows) => {
                    for &row in rows {
                        if let Some(&id) = ids.get(row) {
                            f(row, id.into());
                        }
                    }
                }
            }
        }
        match self {
            RowConfigs::U8(v) => walk(v, rows, f),
            RowConfigs::U16(v) => walk(v, rows, f),
            RowConfigs::U32(v) => walk(v, rows, f),
        }
    }

    /// The rows whose configuration is `selected`, in order; `count` is how many there are
    /// (room for them all at once).
    pub(super) fn rows_where(&self, selected: &[bool], count: usize) -> Vec<usize> {
        fn pick<T: Copy + Into<u32>>(ids: &[T], selected: &[bool], count: usize) -> Vec<usize> {
            let mut rows = Vec::with_capacity(count);
            for (row, &id) in ids.iter().enumerate() {
                if selected.get(id.into() as usize).copied().unwrap_or(false) {
                    rows.push(row);
                }
            }
            rows
        }
        match self {
            RowConfigs::U8(v) => pick(v, selected, count),
            RowConfigs::U16(v) => pick(v, selected, count),
            RowConfigs::U32(v) => pick(v, selected, count),
        }
    }
}

/// The configurations of a dataset (see the module doc).
#[derive(Clone, Debug, Default)]
pub(super) struct Configurations {
    /// Per configuration: its first row (which holds its codes), in load order.
    pub(super) firsts: std::sync::Arc<Vec<usize>>,
    /// Per configuration: how many rows it has.
    pub(super) rows: Vec<usize>,
    /// Per row: its configuration.
    pub(super) of_row: RowConfigs,
}

/// Open addressing from a 64-bit key to a configuration number, with the last key looked up
/// remembered (rows of one configuration often follow each other).
struct KeyTable {
    /// `(key, id)`, `id == u32::MAX` for an empty slot; a power of two long.
    slots: Vec<(u64, u32)>,
    len: usize,
    last: Option<(u64, u32)>,
}

impl KeyTable {
    const EMPTY: u32 = u32::MAX;

    fn new() -> KeyTable {
        KeyTable {
            slots: vec![(0, Self::EMPTY); 1024],
            len: 0,
            last: None,
        }
    }

    fn slot(slots: &[(u64, u32)], key: u64) -> usize {
        let bits = slots.len().trailing_zeros();
        let mut at = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize;
        let mask = slots.len() - 1;
        while slots[at].1 != Self::EMPTY && slots[at].0 != key {
            at = (at + 1) & mask;
        }
        at
    }

    /// The number of `key`, or `fresh` (then kept as its number) for a key not seen before;
    /// whether it is new.
    fn id(&mut self, key: u64, fresh: u32) -> (u32, bool) {
        if let Some((k, id)) = self.last {
            if k == key {
                return (id, false);
            }
        }
        let at = Self::slot(&self.slots, key);
        let (id, new) = if self.slots[at].1 == Self::EMPTY {
            self.slots[at] = (key, fresh);
            self.len += 1;
            if self.len * 2 > self.slots.len() {
                let old = std::mem::take(&mut self.slots);
                self.slots = vec![(0, Self::EMPTY); old.len() * 2];
                for (k, v) in old.into_iter().filter(|s| s.1 != Self::EMPTY) {
                    let at = Self::slot(&self.slots, k);
                    self.slots[at] = (k, v);
                }
            }
            (fresh, true)
        } else {
            (self.slots[at].1, false)
        };
        self.last = Some((key, id));
        (id, new)
    }
}

impl Configurations {
    /// The configurations of the rows of `index`: one pass over the rows.
    pub(super) fn new(index: &Index) -> Configurations {
        let n = index.rows;
        let mut columns: Vec<(&Codes, u64)> = index
            .columns
            .iter()
            .map(|c| (&c.codes, c.dict.len() as u64 + 1))
            .collect();
        columns.push((&index.row_metric_set, index.metric_sets.len() as u64 + 1));
        let fits_u64 = columns
            .iter()
            .try_fold(1u64, |acc, &(_, radix)| acc.checked_mul(radix))
            .is_some();
        let mut firsts = Vec::new();
        let mut rows: Vec<usize> = Vec::new();
        let mut of_row = RowConfigs::with_capacity(n);
        let mut note = |row: usize, id: u32, new: bool, of_row: &mut RowConfigs| {
            if new {
                firsts.push(row);
                rows.push(0);
            }
            if let Some(r) = rows.get_mut(id as usize) {
                *r += 1;
            }
            of_row.push(id, n);
        };
        if fits_u64 {
            let mut table = KeyTable::new();
            // A block of rows at a time: each column adds its codes to the block's keys in
            // a loop of its own width (one match on the width per column and block).
            let mut keys = vec![0u64; BLOCK.min(n)];
            for start in (0..n).step_by(BLOCK) {
                let end = (start + BLOCK).min(n);
                let keys = &mut keys[..end - start];
                keys.fill(0);
                for &(codes, radix) in &columns {
                    with_codes!(codes, s => {
                        for (key, row) in keys.iter_mut().zip(start..end) {
                            *key = *key * radix + u64::from(s.at(row));
                        }
                    });
                }
                for (&key, row) in keys.iter().zip(start..end) {
                    let fresh = u32::try_from(table.len).unwrap_or(u32::MAX);
                    let (id, new) = table.id(key, fresh);
                    note(row, id, new, &mut of_row);
                }
            }
        } else {
            let mut seen: HashMap<Vec<u32>, u32> = HashMap::new();
            for row in 0..n {
                let key: Vec<u32> = columns.iter().map(|&(codes, _)| codes.get(row)).collect();
                let fresh = u32::try_from(seen.len()).unwrap_or(u32::MAX);
                let mut new = false;
                let id = *seen.entry(key).or_insert_with(|| {
                    new = true;
                    fresh
                });
                note(row, id, new, &mut of_row);
            }
        }
        Configurations {
            firsts: std::sync::Arc::new(firsts),
            rows,
            of_row,
        }
    }
}
