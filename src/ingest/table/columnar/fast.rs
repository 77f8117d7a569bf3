//! The fast reader of plain rows ([`FastRows`]): one pass over a row's bytes that splits its
//! cells and reads them, a dimension cell seen before appended by its dictionary code (found
//! through a small per-column cache of cell keys).

use super::*;

/// A dimension cell's bytes as a key: up to 15 bytes and the length in the top byte (0 for
/// a longer cell, which is not cached).
#[inline]
fn cell_key(bytes: &[u8], start: usize, end: usize) -> u128 {
    let len = end - start;
    if len > 15 {
        return 0;
    }
    let word = match bytes.get(start..start + 16) {
        Some(w) => {
            let mut a = [0u8; 16];
            a.copy_from_slice(w);
            u128::from_le_bytes(a) & ((1u128 << (len * 8)) - 1)
        }
        None => {
            let mut a = [0u8; 16];
            if let (Some(to), Some(from)) = (a.get_mut(..len), bytes.get(start..end)) {
                to.copy_from_slice(from);
            }
            u128::from_le_bytes(a)
        }
    };
    word | ((len as u128) << 120)
}

/// Slots of the key cache of one dimension column.
const CACHE_SLOTS: usize = 64;

/// The dictionary codes of the cells a dimension column saw last, by their bytes
/// ([`cell_key`]): a cell seen before is appended by its code, without reading its number or
/// looking its text up. A tidy table's dimensions take a few values over and over, and often
/// the one of the row before (a GPU or input length fixed for the table, rows sorted by
/// model): that one is compared first, before the key is hashed.
struct KeyCache {
    keys: [u128; CACHE_SLOTS],
    codes: [u32; CACHE_SLOTS],
    /// The key found or put last (0: none) and its code.
    last: u128,
    last_code: u32,
}

impl KeyCache {
    fn new() -> Box<KeyCache> {
        Box::new(KeyCache {
            keys: [0; CACHE_SLOTS],
            codes: [0; CACHE_SLOTS],
            last: 0,
            last_code: 0,
        })
    }

    #[inline]
    fn at(key: u128) -> usize {
        let folded = (key as u64) ^ ((key >> 64) as u64).rotate_left(29);
        (folded.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 58) as usize % CACHE_SLOTS
    }

    #[inline]
    fn get(&mut self, key: u128) -> Option<u32> {
        if key == 0 {
            return None;
        }
        if key == self.last {
            return Some(self.last_code);
        }
        let at = Self::at(key);
        let code = (self.keys.get(at) == Some(&key))
            .then(|| self.codes.get(at).copied())
            .flatten()?;
        self.last = key;
        self.last_code = code;
        Some(code)
    }

    #[inline]
    fn put(&mut self, key: u128, code: u32) {
        if key == 0 {
            return;
        }
        let at = Self::at(key);
        if let (Some(k), Some(c)) = (self.keys.get_mut(at), self.codes.get_mut(at)) {
            *k = key;
            *c = code;
        }
        self.last = key;
        self.last_code = code;
    }
}

/// One cell as the fast reader read it, until the row is known to be whole.
#[derive(Clone, Copy)]
enum ReadCell {
    /// No value (an empty cell).
    None,
    /// A metric's value (scaled) or a real dimension's; for a dimension, where its cell starts
    /// and ends in the row (for the cell's key).
    Num(f64, u32, u32),
    /// A count dimension's value, where its cell starts and ends.
    Count(u64, u32, u32),
    /// A text cell: where it starts and ends.
    Text(u32, u32),
    /// A dimension cell found in its column's cache.
    Code(u32),
}

/// The fast reader of plain rows: one pass over a row's bytes that splits the cells and reads
/// them, for rows where that gives what the general way
/// ([`PlainRows`](super::plain_rows::PlainRows) then [`Appender::row`]) gives with no
/// warning: exactly one cell a column, the row ending at `\n` or `\r\n`, metric and real
/// cells empty or plain decimals ([`plain_decimal`]), count cells empty or plain digits, text
/// cells empty or [`plain_text`] (no quote), a measured value. Any other row is left to the
/// general way ([`FastRows::row`] gives `None`).
pub(super) struct FastRows {
    delimiter: u8,
    cells: Vec<ReadCell>,
    caches: Vec<Option<Box<KeyCache>>>,
}

impl FastRows {
    pub(super) fn new(placements: &[Placement], delimiter: u8) -> FastRows {
        FastRows {
            delimiter,
            cells: vec![ReadCell::None; placements.len()],
            caches: placements
                .iter()
                .map(|s| match s {
                    Placement::Text(_)
                    | Placement::Gpu(_)
                    | Placement::Count(_)
                    | Placement::Real(_) => Some(KeyCache::new()),
                    Placement::Skip | Placement::Refuse | Placement::Metric(..) => None,
                })
                .collect(),
        }
    }

    /// Reads and appends the row at the start of `text` when it is one for the fast reader
    /// (see [`FastRows`]), giving the bytes it took (the line ending included); `None`, with
    /// nothing appended, otherwise.
    #[inline]
    pub(super) fn row(&mut self, app: &mut Appender<'_>, text: &str) -> Option<usize> {
        let b = text.as_bytes();
        let last = app.placements.len().checked_sub(1)?;
        let mut at = 0;
        let mut measured = false;
        for (i, (placement, cache)) in app.placements.iter().zip(&mut self.caches).enumerate() {
            let cell = match *placement {
                Placement::Metric(_, scale) => {
                    let (v, end) = decimal_prefix(b, at).ok()?;
                    at = end;
                    match v {
                        Some(v) => {
                            measured = true;
                            ReadCell::Num(v * scale, 0, 0)
                        }
                        None => ReadCell::None,
                    }
                }
                Placement::Real(_) => {
                    let start = at;
                    let (v, end) = decimal_prefix(b, at).ok()?;
                    at = end;
                    match v {
                        Some(v) => {
                            match cache.as_mut().and_then(|c| c.get(cell_key(b, start, end))) {
                                Some(code) => ReadCell::Code(code),
                                None => ReadCell::Num(
                                    v,
                                    u32::try_from(start).ok()?,
                                    u32::try_from(end).ok()?,
                                ),
                            }
                        }
                        None => ReadCell::None,
                    }
                }
                Placement::Count(_) => {
                    let start = at;
                    let mut n: u64 = 0;
                    while let Some(&c) = b.get(at).filter(|c| c.is_ascii_digit()) {
                        n = n.wrapping_mul(10).wrapping_add(u64::from(c - b'0'));
                        at += 1;
                    }
                    match at - start {
                        0 => ReadCell::None,
                        1..=15 => {
                            match cache.as_mut().and_then(|c| c.get(cell_key(b, start, at))) {
                                Some(code) => ReadCell::Code(code),
                                None => ReadCell::Count(
                                    n,
                                    u32::try_from(start).ok()?,
                                    u32::try_from(at).ok()?,
                                ),
                            }
                        }
                        _ => return None,
                    }
                }
                Placement::Text(_) | Placement::Gpu(_) | Placement::Skip | Placement::Refuse => {
                    let start = at;
                    while let Some(&c) = b.get(at) {
                        if c == self.delimiter || c == b'\n' || c == b'\r' || c == b'"' {
                            break;
                        }
                        at += 1;
                    }
                    if matches!(placement, Placement::Refuse) && at != start {
                        return None;
                    }
                    if matches!(placement, Placement::Skip | Placement::Refuse) || at == start {
                        ReadCell::None
                    } else {
                        match cache.as_mut().and_then(|c| c.get(cell_key(b, start, at))) {
                            Some(code) => ReadCell::Code(code),
                            None => {
                                let cell = text.get(start..at)?;
                                if !plain_text(cell)
                                    || (matches!(placement, Placement::Gpu(_))
                                        && app.rules == Rules::Table
                                        && gpu_with_count(cell))
                                {
                                    return None;
                                }
                                ReadCell::Text(u32::try_from(start).ok()?, u32::try_from(at).ok()?)
                            }
                        }
                    }
                }
            };
            if let Some(c) = self.cells.get_mut(i) {
                *c = cell;
            }
            // The cell must end at the delimiter, the last one at the line's end.
            let end = *b.get(at)?;
            if i < last {
                if end != self.delimiter {
                    return None;
                }
                at += 1;
            } else if end == b'\n' {
                at += 1;
            } else if end == b'\r' && b.get(at + 1) == Some(&b'\n') {
                at += 2;
            } else {
                return None;
            }
        }
        if !measured {
            return None;
        }
        self.commit(app, text);
        Some(at)
    }

    /// Appends the cells [`row`](FastRows::row) read, as [`Appender::commit`] would.
    #[inline]
    fn commit(&mut self, app: &mut Appender<'_>, text: &str) {
        let b = text.as_bytes();
        let columns = &mut app.columns;
        for ((placement, cell), cache) in
            app.placements.iter().zip(&self.cells).zip(&mut self.caches)
        {
            match (*placement, *cell) {
                (Placement::Skip | Placement::Refuse, _) => {}
                (Placement::Metric(at, _), v) => {
                    if let Some(c) = columns.metrics_mut().get_mut(at) {
                        c.push(match v {
                            ReadCell::Num(x, ..) => Some(x),
                            _ => None,
                        });
                    }
                }
                (Placement::Text(at) | Placement::Gpu(at), v) => {
                    if let Some(c) = text_column(columns, at) {
                        match v {
                            ReadCell::Code(code) => c.push_code(code),
                            ReadCell::Text(start, end) => {
                                let (start, end) = (start as usize, end as usize);
                                let code = c.push_coded(text.get(start..end));
                                if let Some(cache) = cache {
                                    cache.put(cell_key(b, start, end), code);
                                }
                            }
                            _ => c.push(None),
                        }
                    }
                }
                (Placement::Count(at), v) => {
                    if let Some(DimData::Count(c)) =
                        columns.dims_mut().get_mut(at).map(|c| &mut c.data)
                    {
                        match v {
                            ReadCell::Code(code) => c.push_code(code),
                            ReadCell::Count(n, start, end) => {
                                let code = c.push_coded(Some(n));
                                if let Some(cache) = cache {
                                    cache.put(cell_key(b, start as usize, end as usize), code);
                                }
                            }
                            _ => c.push(None),
                        }
                    }
                }
                (Placement::Real(at), v) => {
                    if let Some(DimData::Real(c)) =
                        columns.dims_mut().get_mut(at).map(|c| &mut c.data)
                    {
                        match v {
                            ReadCell::Code(code) => c.push_code(code),
                            ReadCell::Num(x, start, end) => {
                                let code = c.push_coded(Some(x));
                                if let Some(cache) = cache {
                                    cache.put(cell_key(b, start as usize, end as usize), code);
                                }
                            }
                            _ => c.push(None),
                        }
                    }
                }
            }
        }
        app.end_row();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_cache_gives_the_code_put_for_a_key_and_never_one_for_a_long_cell() {
        let row = b"llama-7,H100,128,a-model-name-longer-than-fifteen-bytes\n";
        let model = cell_key(row, 0, 7);
        let gpu = cell_key(row, 8, 12);
        let long = cell_key(row, 17, 55);
        assert_eq!(long, 0);
        let mut cache = KeyCache::new();
        // Nothing put yet: not even the "last" key (0 at first) is found.
        assert_eq!(cache.get(long), None);
        assert_eq!(cache.get(model), None);
        cache.put(model, 3);
        cache.put(long, 9);
        assert_eq!(cache.get(long), None);
        assert_eq!(cache.get(model), Some(3));
        assert_eq!(cache.get(model), Some(3));
        cache.put(gpu, 1);
        assert_eq!((cache.get(gpu), cache.get(model)), (Some(1), Some(3)));
        assert_eq!(cache.get(cell_key(row, 8, 11)), None);
    }
}
