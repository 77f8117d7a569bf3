//! A dictionary-coded text column: each distinct value stored once, one [`Codes`] entry a row.

use std::sync::Arc;

use std::hash::BuildHasher;

use super::codes::Codes;

/// Text values, dictionary-coded. Values are shared (`Arc<str>`) with the records the row
/// view builds.
#[derive(Clone, Debug, Default)]
pub struct TextColumn {
    values: Vec<Arc<str>>,
    /// The codes of `values`, found by their text's hash: four bytes an entry, where a map
    /// keyed by the text held another pointer to it (a million distinct ids cost 40 MB more).
    index: hashbrown::HashTable<u32>,
    codes: Codes,
    /// The code pushed last: a column repeating its value down the rows skips the lookup.
    last: u32,
}

/// The dictionary's hash of a text (foldhash with a fixed seed, as [`super::codes::DictMap`]).
#[inline]
fn hash_of(v: &str) -> u64 {
    foldhash::fast::FixedState::default().hash_one(v)
}

impl PartialEq for TextColumn {
    /// Same rows with the same values (dictionary order aside).
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && (0..self.len()).all(|i| self.get(i) == other.get(i))
    }
}

impl TextColumn {
    /// An empty column.
    pub fn new() -> TextColumn {
        TextColumn::default()
    }

    /// Appends a row: `None` for no value.
    #[inline]
    pub fn push(&mut self, value: Option<&str>) {
        let code = match value {
            None => 0,
            Some(v) => self.code_of(v),
        };
        self.codes.push(code);
    }

    /// Appends a row (`None` for no value) and gives its code, for
    /// [`push_code`](TextColumn::push_code) to append the same value again without a lookup.
    #[inline]
    pub fn push_coded(&mut self, value: Option<&str>) -> u32 {
        let code = match value {
            None => 0,
            Some(v) => self.code_of(v),
        };
        self.codes.push(code);
        code
    }

    /// Appends a row holding the value of `code`, a code this column gave before
    /// ([`push_coded`](TextColumn::push_coded), [`code`](TextColumn::code)); 0 is no value.
    /// The same as [`push`](TextColumn::push) of that value.
    #[inline]
    pub fn push_code(&mut self, code: u32) {
        debug_assert!(code as usize <= self.values.len());
        if code > 0 {
            self.last = code;
        }
        self.codes.push(code);
    }

    /// Appends a row holding the value [`push`](TextColumn::push) looked up last (no value
    /// before any): for a column of one value, such as the file every row came from.
    #[inline]
    pub fn repeat_last(&mut self) {
        self.codes.push(self.last);
    }

    /// Appends `n` rows holding `value` (`None`: no value), as `n` [`push`](TextColumn::push)es
    /// of it do, with one lookup.
    pub fn push_repeated(&mut self, value: Option<&str>, n: usize) {
        if n == 0 {
            return;
        }
        let code = match value {
            None => 0,
            Some(v) => self.code_of(v),
        };
        self.codes.resize(self.codes.len().saturating_add(n), code);
    }

    /// Appends a row holding a value already shared elsewhere (no copy when it is new).
    pub fn push_shared(&mut self, value: Option<&Arc<str>>) {
        let code = match value {
            None => 0,
            Some(v) => match self.lookup(v) {
                Some(c) => c,
                None => self.insert(Arc::clone(v)),
            },
        };
        self.codes.push(code);
    }

    #[inline]
    fn lookup(&mut self, v: &str) -> Option<u32> {
        if self.last > 0
            && self
                .values
                .get(self.last as usize - 1)
                .is_some_and(|l| &**l == v)
        {
            return Some(self.last);
        }
        let values = &self.values;
        let code = *self
            .index
            .find(hash_of(v), |&c| &*values[c as usize - 1] == v)?;
        self.last = code;
        Some(code)
    }

    fn insert(&mut self, v: Arc<str>) -> u32 {
        let hash = hash_of(&v);
        self.values.push(v);
        let code = self.values.len() as u32;
        let values = &self.values;
        self.index
            .insert_unique(hash, code, |&c| hash_of(&values[c as usize - 1]));
        self.last = code;
        code
    }

    #[inline]
    fn code_of(&mut self, v: &str) -> u32 {
        match self.lookup(v) {
            Some(c) => c,
            None => self.insert(v.into()),
        }
    }

    /// Replaces each distinct value for which `f` gives another (an engine's canonical
    /// spelling): the same rows, values that become equal sharing one entry.
    pub fn map_values<'a>(&mut self, f: impl Fn(&str) -> Option<&'a str>) {
        let to: Vec<Option<&str>> = self.values.iter().map(|v| f(v)).collect();
        if to.iter().all(Option::is_none) {
            return;
        }
        let mut out = TextColumn::new();
        out.reserve(self.len());
        for i in 0..self.len() {
            let code = self.codes.get(i) as usize;
            let value = code
                .checked_sub(1)
                .map(|k| match to.get(k).copied().flatten() {
                    Some(new) => new,
                    None => &*self.values[k],
                });
            out.push(value);
        }
        *self = out;
    }

    /// The value of row `i`.
    #[inline]
    pub fn get(&self, i: usize) -> Option<&Arc<str>> {
        self.entry(self.codes.get(i))
    }

    /// The dictionary entry of a code (`None` for 0).
    #[inline]
    pub fn entry(&self, code: u32) -> Option<&Arc<str>> {
        (code as usize)
            .checked_sub(1)
            .and_then(|k| self.values.get(k))
    }

    /// The code of row `i` (0: no value).
    #[inline]
    pub fn code(&self, i: usize) -> u32 {
        self.codes.get(i)
    }

    /// The distinct values, in order of first appearance (code `k + 1` is entry `k`).
    pub fn values(&self) -> &[Arc<str>] {
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

    /// Bytes per row code.
    pub fn code_width(&self) -> usize {
        self.codes.width()
    }

    /// Room for `n` more rows.
    pub fn reserve(&mut self, n: usize) {
        self.codes.reserve(n);
    }

    /// Bytes held, text included (approximate for the index).
    pub fn heap_bytes(&self) -> usize {
        let text: usize = self.values.iter().map(|v| v.len() + 16).sum();
        self.codes.heap_bytes() + text + self.values.capacity() * 16 + self.index.capacity() * 5
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_stored_once_and_read_back_by_row() {
        let mut c = TextColumn::new();
        let rows = [
            Some("a"),
            Some("b"),
            None,
            Some("a"),
            Some("a"),
            Some("c"),
            None,
        ];
        for r in rows {
            c.push(r);
        }
        assert_eq!(c.values().len(), 3);
        assert_eq!(c.len(), rows.len());
        for (i, r) in rows.iter().enumerate() {
            assert_eq!(c.get(i).map(|v| &**v), *r);
        }
        assert_eq!(c.code(2), 0);
        assert_eq!(c.get(99), None);
    }

    #[test]
    fn a_column_of_distinct_values_widens_its_codes() {
        let mut c = TextColumn::new();
        for i in 0..70_000 {
            c.push(Some(&format!("v{i}")));
        }
        assert_eq!(c.code_width(), 4);
        assert_eq!(c.get(0).map(|v| &**v), Some("v0"));
        assert_eq!(c.get(69_999).map(|v| &**v), Some("v69999"));
        let shared: Arc<str> = "v5".into();
        c.push_shared(Some(&shared));
        assert_eq!(c.code(70_000), c.code(5));
        c.repeat_last();
        assert_eq!(c.get(70_001).map(|v| &**v), Some("v5"));
        let code = c.push_coded(Some("v7"));
        assert_eq!(code, c.code(7));
        c.push_code(code);
        c.push_code(0);
        c.repeat_last();
        assert_eq!(
            (70_002..70_006)
                .map(|i| c.get(i).map(|v| v.to_string()))
                .collect::<Vec<_>>(),
            [Some("v7"), Some("v7"), None, Some("v7")].map(|v| v.map(String::from))
        );
        c.push_repeated(Some("v9"), 3);
        c.push_repeated(None, 2);
        c.push_repeated(Some("v9"), 0);
        assert_eq!(
            (70_006..70_012)
                .map(|i| c.get(i).map(|v| v.to_string()))
                .collect::<Vec<_>>(),
            [Some("v9"), Some("v9"), Some("v9"), None, None, None].map(|v| v.map(String::from))
        );
        assert_eq!(c.len(), 70_011);
        c.repeat_last();
        assert_eq!(c.code(70_011), c.code(9));
        assert_eq!(c.push_coded(None), 0);
        assert_eq!(c.push_coded(Some("new")), 70_001);
        assert_eq!(c.values().len(), 70_001);
    }
}
