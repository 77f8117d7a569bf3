//! The columnar dataset: the records of a file held as typed columns rather than one
//! [`Record`] a row, with [`Columns::record`] and [`Columns::rows`] rebuilding today's
//! records for every consumer that wants rows.
//!
//! - text dimensions (and `tag.*`) are dictionary-coded ([`TextColumn`]), codes 1, 2 or 4
//!   bytes wide as the dictionary grows; numeric dimensions too ([`DictNumbers`] of `u64` for
//!   counts, of `f64` for real values), since a batch size or a request rate takes few values;
//! - metrics are one `f64` a row with a validity [`Bitmap`] ([`MetricColumn`]);
//! - per-request detail is one column per field with offsets ([`RequestArrays`]), the
//!   inter-token latencies of every request in one chunked list ([`NumberLists`]);
//! - what few rows carry (inferred fields, time series) is kept per row where present.
//!
//! A million-row tidy CSV of ten columns holds about 40 MB here against some 500 MB of records.
//!
//! # Why not Apache Arrow
//!
//! Arrow's `arrow-array` with `arrow-csv`, built for `wasm32-unknown-unknown` in a scratch
//! crate, added about 119 KB gzip to the wasm (491 KB against 23 KB for this store in the
//! same scratch crate), and the page's budget is 1 MB gzip in all. What the explorer needs of
//! columns is small (dictionary codes to filter and count, `f64` with validity to chart), and
//! Arrow's CSV reader would still need this crate's column mapping (units, synonyms, per-GPU
//! column groups) on top. So the store is this module's own.
//!
//! Pure and shared by both faces, like the rest of [`crate::model`].

mod arrays;
mod bitmap;
mod codes;
mod dict_numbers;
mod lists;
mod numbers;
mod text;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

pub use arrays::{RequestArrays, RequestField};
pub use bitmap::Bitmap;
pub(crate) use codes::with_codes;
pub use codes::{CodeRows, Codes, SameRows};
pub use dict_numbers::{DictKey, DictNumbers};
pub use lists::NumberLists;
pub use numbers::MetricColumn;
pub use text::TextColumn;

use super::record::SeriesColumns;
use super::{Dim, DimKey, DimKind, DimValue, MetricKey, Metrics, Record};

/// The values of one dimension over the rows.
#[derive(Clone, Debug, PartialEq)]
pub enum DimData {
    /// Text dimensions and tags.
    Text(TextColumn),
    /// Whole-number dimensions (`gpu_count`, `batch_size`, ...).
    Count(DictNumbers<u64>),
    /// Real-valued dimensions (`request_rate`, `input_len`, ...).
    Real(DictNumbers<f64>),
}

impl DimData {
    /// The empty column a dimension of this key is held in.
    pub fn for_key(key: &DimKey) -> DimData {
        match key {
            DimKey::Tag(_) => DimData::Text(TextColumn::new()),
            DimKey::Known(d) => match d.kind() {
                DimKind::Text => DimData::Text(TextColumn::new()),
                DimKind::Count => DimData::Count(DictNumbers::new()),
                DimKind::Real => DimData::Real(DictNumbers::new()),
            },
        }
    }

    /// Rows.
    pub fn len(&self) -> usize {
        match self {
            DimData::Text(c) => c.len(),
            DimData::Count(c) => c.len(),
            DimData::Real(c) => c.len(),
        }
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The dictionary code of row `i` (0: no value): rows with equal codes hold equal values.
    pub fn code(&self, i: usize) -> u32 {
        match self {
            DimData::Text(c) => c.code(i),
            DimData::Count(c) => c.code(i),
            DimData::Real(c) => c.code(i),
        }
    }

    /// The value of row `i`, as records give it.
    pub fn value(&self, i: usize) -> Option<DimValue> {
        match self {
            DimData::Text(c) => c.get(i).map(|v| DimValue::Text(v.to_string())),
            DimData::Count(c) => c.get(i).map(|v| DimValue::Num(v as f64)),
            DimData::Real(c) => c.get(i).map(DimValue::Num),
        }
    }

    /// Every distinct value (each used by some row).
    pub fn distinct(&self) -> Vec<DimValue> {
        match self {
            DimData::Text(c) => c
                .values()
                .iter()
                .map(|v| DimValue::Text(v.to_string()))
                .collect(),
            DimData::Count(c) => c
                .values()
                .iter()
                .map(|v| DimValue::Num(*v as f64))
                .collect(),
            DimData::Real(c) => c.values().iter().map(|v| DimValue::Num(*v)).collect(),
        }
    }

    /// Appends a row without a value.
    pub fn push_none(&mut self) {
        match self {
            DimData::Text(c) => c.push(None),
            DimData::Count(c) => c.push(None),
            DimData::Real(c) => c.push(None),
        }
    }

    /// Room for `n` more rows.
    pub fn reserve(&mut self, n: usize) {
        match self {
            DimData::Text(c) => c.reserve(n),
            DimData::Count(c) => c.reserve(n),
            DimData::Real(c) => c.reserve(n),
        }
    }

    fn heap_bytes(&self) -> usize {
        match self {
            DimData::Text(c) => c.heap_bytes(),
            DimData::Count(c) => c.heap_bytes(),
            DimData::Real(c) => c.heap_bytes(),
        }
    }
}

/// One dimension's column.
#[derive(Clone, Debug, PartialEq)]
pub struct DimColumn {
    /// The dimension.
    pub key: DimKey,
    /// Its values.
    pub data: DimData,
}

/// A value held by a few rows only, kept per row where present (sorted by row).
#[derive(Clone, Debug, Default, PartialEq)]
struct Sparse<T> {
    rows: Vec<(usize, Arc<T>)>,
}

impl<T: PartialEq> Sparse<T> {
    fn push(&mut self, row: usize, value: T) {
        // Consecutive rows with the same value share it.
        if let Some((_, last)) = self.rows.last() {
            if **last == value {
                let shared = Arc::clone(last);
                self.rows.push((row, shared));
                return;
            }
        }
        self.rows.push((row, Arc::new(value)));
    }

    fn get(&self, row: usize) -> Option<&T> {
        let k = self.rows.binary_search_by_key(&row, |(r, _)| *r).ok()?;
        self.rows.get(k).map(|(_, v)| &**v)
    }

    fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
}

/// The records of a dataset as columns. See the [module](self) docs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Columns {
    len: usize,
    /// Sorted by key (well-known dimensions in canonical order, then tags).
    dims: Vec<DimColumn>,
    /// Sorted by key.
    metrics: Vec<MetricColumn>,
    requests: RequestArrays,
    inferred: Sparse<BTreeMap<String, String>>,
    series: Sparse<SeriesColumns>,
}

impl Columns {
    /// No rows, with a column for each of `dims` and `metrics` (duplicates kept once), in
    /// key order. Readers append rows column by column, then call
    /// [`finish_row`](Columns::finish_row).
    pub fn with_keys(
        dims: impl IntoIterator<Item = DimKey>,
        metrics: impl IntoIterator<Item = MetricKey>,
    ) -> Columns {
        let dims: BTreeSet<DimKey> = crate::model::order::set_of(dims);
        let metrics: BTreeSet<MetricKey> = crate::model::order::set_of(metrics);
        Columns {
            dims: dims
                .into_iter()
                .map(|key| DimColumn {
                    data: DimData::for_key(&key),
                    key,
                })
                .collect(),
            metrics: metrics.into_iter().map(MetricColumn::new).collect(),
            ..Columns::default()
        }
    }

    /// The columns of `records` (every record's every field kept).
    pub fn from_records(records: &[Record]) -> Columns {
        let mut dims: BTreeSet<DimKey> = BTreeSet::new();
        let mut metrics: BTreeSet<MetricKey> = BTreeSet::new();
        for r in records {
            for d in Dim::ALL {
                if r.has_known(*d) {
                    dims.insert(DimKey::Known(*d));
                }
            }
            dims.extend(r.tags.keys().map(|k| DimKey::Tag(k.clone())));
            for k in r.metrics.keys() {
                if !metrics.contains(k) {
                    metrics.insert(k.clone());
                }
            }
        }
        let mut c = Columns::with_keys(dims, metrics);
        c.reserve(records.len());
        for r in records {
            c.push_record(r);
        }
        c
    }

    /// Appends `records`, adding a column (empty on the rows before) for each dimension or
    /// metric they bring that has none yet: so a reader can hand its records on a batch at a
    /// time and drop them, never holding a file's records whole. The columns come out as
    /// [`from_records`](Columns::from_records) of all the records would make them.
    pub fn extend_records(&mut self, records: &[Record]) {
        // The well-known dimensions with a column, a bit each: most records bring none new.
        const _: () = assert!(Dim::ALL.len() <= 128);
        let bit = |d: Dim| 1u128 << (d as usize);
        let mut with_column: u128 = self
            .dims
            .iter()
            .filter_map(|c| match c.key {
                DimKey::Known(d) => Some(bit(d)),
                DimKey::Tag(_) => None,
            })
            .fold(0, |a, b| a | b);
        for r in records {
            for d in Dim::ALL {
                if with_column & bit(*d) == 0 && r.has_known(*d) {
                    self.ensure_dim(DimKey::Known(*d));
                    with_column |= bit(*d);
                }
            }
            for k in r.tags.keys() {
                if !self
                    .dims
                    .iter()
                    .any(|c| matches!(&c.key, DimKey::Tag(t) if t == k))
                {
                    self.ensure_dim(DimKey::Tag(k.clone()));
                }
            }
            // Both in key order: one walk finds the keys without a column.
            let mut at = 0;
            for k in r.metrics.keys() {
                while self.metrics.get(at).is_some_and(|c| c.key < *k) {
                    at += 1;
                }
                if self.metrics.get(at).is_some_and(|c| c.key == *k) {
                    continue;
                }
                let mut col = MetricColumn::new(k.clone());
                col.reserve(self.len);
                for _ in 0..self.len {
                    col.push(None);
                }
                self.metrics.insert(at, col);
            }
            self.push_record(r);
        }
    }

    /// A column for dimension `key`, empty on the rows so far, unless it has one.
    fn ensure_dim(&mut self, key: DimKey) {
        if let Err(at) = self.dims.binary_search_by(|c| c.key.cmp(&key)) {
            let mut data = DimData::for_key(&key);
            data.reserve(self.len);
            for _ in 0..self.len {
                data.push_none();
            }
            self.dims.insert(at, DimColumn { key, data });
        }
    }

    /// Appends a record whose every dimension and metric has a column.
    fn push_record(&mut self, r: &Record) {
        for col in &mut self.dims {
            match (&col.key, &mut col.data) {
                (DimKey::Known(d), DimData::Text(c)) => c.push_shared(text_slot(r, *d)),
                (DimKey::Tag(k), DimData::Text(c)) => c.push(r.tags.get(k).map(String::as_str)),
                (DimKey::Known(d), DimData::Count(c)) => c.push(r.count_field(*d).flatten()),
                (DimKey::Known(d), DimData::Real(c)) => c.push(r.real_field(*d).flatten()),
                (DimKey::Tag(_), DimData::Count(c)) => c.push(None),
                (DimKey::Tag(_), DimData::Real(c)) => c.push(None),
            }
        }
        // Both in key order: one walk (a key without a column is passed over).
        let mut values = r.metrics.iter().peekable();
        for col in &mut self.metrics {
            while values.next_if(|(k, _)| **k < col.key).is_some() {}
            let v = values.next_if(|(k, _)| **k == col.key).map(|(_, v)| *v);
            col.push(v);
        }
        let row = self.len;
        if !r.inferred.is_empty() {
            self.inferred.push(row, r.inferred.clone());
        }
        if !r.series.is_empty() {
            self.series.push(row, r.series.clone());
        }
        self.requests.push_row(&r.requests);
        self.len += 1;
    }

    /// Ends a row whose dimensions and metrics were appended column by column (every column
    /// exactly once).
    #[inline]
    pub fn finish_row(&mut self) {
        self.len += 1;
    }

    /// Gives the rows ended with [`finish_row`](Columns::finish_row) (which carry no
    /// per-request detail) their empty share of the per-request arrays.
    pub fn finish_rows_without_requests(&mut self) {
        let missing = self.len - self.requests.rows();
        self.requests.push_empty_rows(missing);
    }

    /// Room for `n` more rows in every column.
    pub fn reserve(&mut self, n: usize) {
        for c in &mut self.dims {
            c.data.reserve(n);
        }
        for c in &mut self.metrics {
            c.reserve(n);
        }
    }

    /// Rows.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The dimension columns, in key order.
    pub fn dims(&self) -> &[DimColumn] {
        &self.dims
    }

    /// The dimension columns, to append to.
    pub fn dims_mut(&mut self) -> &mut [DimColumn] {
        &mut self.dims
    }

    /// The column of `key`.
    pub fn dim(&self, key: &DimKey) -> Option<&DimColumn> {
        self.dims.iter().find(|c| &c.key == key)
    }

    /// The position of `key`'s column in [`dims`](Columns::dims).
    pub fn dim_position(&self, key: &DimKey) -> Option<usize> {
        self.dims.binary_search_by(|c| c.key.cmp(key)).ok()
    }

    /// The metric columns, in key order.
    pub fn metrics(&self) -> &[MetricColumn] {
        &self.metrics
    }

    /// The metric columns, to append to.
    pub fn metrics_mut(&mut self) -> &mut [MetricColumn] {
        &mut self.metrics
    }

    /// The position of `key`'s column in [`metrics`](Columns::metrics).
    pub fn metric_position(&self, key: &MetricKey) -> Option<usize> {
        self.metrics.binary_search_by(|c| c.key.cmp(key)).ok()
    }

    /// The per-request detail of every row.
    pub fn requests(&self) -> &RequestArrays {
        &self.requests
    }

    /// Whether any row has inferred fields.
    pub fn any_inferred(&self) -> bool {
        !self.inferred.is_empty()
    }

    /// Whether any row has a time series.
    pub fn any_series(&self) -> bool {
        !self.series.is_empty()
    }

    /// Row `i`'s inferred fields (field → where from).
    pub fn inferred(&self, i: usize) -> Option<&BTreeMap<String, String>> {
        self.inferred.get(i)
    }

    /// Sets the per-request detail of every row (a reader that built it apart); `false`, and
    /// nothing changed, when it does not have one row per row of the columns.
    pub fn set_requests(&mut self, requests: RequestArrays) -> bool {
        let fits = requests.rows() == self.len;
        if fits {
            self.requests = requests;
        }
        fits
    }

    /// Row `i` as a record, as the row-shaped readers give it (`None` past the end).
    pub fn record(&self, i: usize) -> Option<Record> {
        let mut r = self.record_without_requests(i)?;
        r.requests = self.requests.requests(i);
        Some(r)
    }

    /// Row `i` as a record without its per-request detail (`None` past the end): for writers
    /// that go over the requests one at a time ([`RequestArrays::row_range`]).
    pub fn record_without_requests(&self, i: usize) -> Option<Record> {
        if i >= self.len {
            return None;
        }
        let mut r = Record::default();
        let mut metrics = Metrics::with_capacity(4);
        for col in &self.metrics {
            if let Some(v) = col.get(i) {
                metrics.push_last(col.key.clone(), v);
            }
        }
        r.metrics = metrics;
        for col in &self.dims {
            match (&col.key, &col.data) {
                (DimKey::Known(d), DimData::Text(c)) => {
                    if let Some(v) = c.get(i) {
                        set_text(&mut r, *d, Arc::clone(v));
                    }
                }
                (DimKey::Tag(k), DimData::Text(c)) => {
                    if let Some(v) = c.get(i) {
                        r.tags.insert(k.clone(), v.to_string());
                    }
                }
                (DimKey::Known(d), DimData::Count(c)) => {
                    if let Some(slot) = r.count_field_mut(*d) {
                        *slot = c.get(i);
                    }
                }
                (DimKey::Known(d), DimData::Real(c)) => {
                    if let Some(slot) = r.real_field_mut(*d) {
                        *slot = c.get(i);
                    }
                }
                (DimKey::Tag(_), _) => {}
            }
        }
        if let Some(inf) = self.inferred.get(i) {
            r.inferred = inf.clone();
        }
        if let Some(s) = self.series.get(i) {
            r.series = s.clone();
        }
        Some(r)
    }

    /// Every row as a record, in order.
    pub fn rows(&self) -> impl Iterator<Item = Record> + '_ {
        (0..self.len).filter_map(|i| self.record(i))
    }

    /// Bytes held by the columns (dictionaries' indexes approximated).
    pub fn heap_bytes(&self) -> usize {
        self.dims.iter().map(|c| c.data.heap_bytes()).sum::<usize>()
            + self
                .metrics
                .iter()
                .map(MetricColumn::heap_bytes)
                .sum::<usize>()
            + self.requests.heap_bytes()
    }
}

fn text_slot(r: &Record, d: Dim) -> Option<&Arc<str>> {
    r.text_field(d).and_then(Option::as_ref)
}

fn set_text(r: &mut Record, d: Dim, v: Arc<str>) {
    if let Some(slot) = r.text_field_mut(d) {
        *slot = Some(v);
    }
}

#[cfg(test)]
mod tests;
