//! The dataset's index of a run of records: a dictionary-coded column per dimension and the
//! metric set of each record. Built where the records are ([`Index::build`]: the parse worker
//! builds it for the records it sends, so the page's thread never walks a million records to
//! index them), and joined to an existing index without looking at records again
//! ([`Index::append`]: a pass over integer codes).

use std::collections::{BTreeSet, HashMap};

use super::super::columns::{with_codes, Codes, Columns};
use super::super::dim::{Dim, DimKey, DimValue};
use super::super::metric::MetricKey;
use super::super::metrics::Metrics;
use super::super::record::{BorrowedDim, Record};

/// One dictionary-encoded dimension: code 0 means "no value", code `i + 1` means `dict[i]`.
/// The dictionary is sorted, so code order is value order. The codes are as narrow as the
/// dictionary allows ([`Codes`]: a byte a row below 256 entries).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Column {
    pub(crate) key: DimKey,
    pub(crate) dict: Vec<DimValue>,
    pub(crate) codes: Codes,
    /// How many records have no value (code 0): kept so the filter panel need not scan the
    /// codes on every change to know whether to offer "no value".
    pub(crate) missing: usize,
}

impl Column {
    /// A column from its dictionary and codes, counting the records without a value.
    pub(crate) fn new(key: DimKey, dict: Vec<DimValue>, codes: Codes) -> Column {
        let missing = codes.count(0);
        Column {
            key,
            dict,
            codes,
            missing,
        }
    }
}

/// Why an index cannot belong to its records (only a damaged hand-over gives one).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IndexError {
    /// A column or the metric sets do not have one entry per record.
    #[error("the index has {found} entries in a column for {rows} records")]
    Length {
        /// Records the index is for.
        rows: usize,
        /// Entries found.
        found: usize,
    },
    /// A code beyond its dictionary, a metric set beyond the list, a key twice.
    #[error("the index refers to an entry it does not have")]
    Dangling,
}

/// The index of a run of records (see the module doc). Compares equal to the index
/// [`Index::build`] gives for the same records, however it was put together.
#[derive(Clone, Debug, Default)]
pub struct Index {
    pub(crate) rows: usize,
    /// In [`DimKey`] order: well-known dimensions in canonical order, then tags by name.
    pub(crate) columns: Vec<Column>,
    /// Every metric some record has, sorted.
    pub(crate) metric_keys: Vec<MetricKey>,
    /// Distinct sets of metrics (indices into `metric_keys`, ascending), in order of first use.
    pub(crate) metric_sets: Vec<Vec<u32>>,
    /// Per record: index into `metric_sets` (as narrow as their number allows; no byte a
    /// row while every record has the same set).
    pub(crate) row_metric_set: Codes,
    /// Per metric (as `metric_keys`): each record's value, NaN where it has none (the metric
    /// sets say which), so charts read a column rather than a million records.
    pub(crate) metric_values: Vec<Vec<f64>>,
    /// Whether some record has inferred fields.
    pub(crate) any_inferred: bool,
}

impl PartialEq for Index {
    /// Metric values compare bit for bit (a NaN equals itself).
    fn eq(&self, other: &Index) -> bool {
        self.rows == other.rows
            && self.any_inferred == other.any_inferred
            && self.columns == other.columns
            && self.metric_keys == other.metric_keys
            && self.metric_sets == other.metric_sets
            && self.row_metric_set == other.row_metric_set
            && self.metric_values.len() == other.metric_values.len()
            && self
                .metric_values
                .iter()
                .zip(&other.metric_values)
                .all(|(a, b)| {
                    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
                })
    }
}

/// One metric's values over the records, read from the index rather than the records.
#[derive(Clone, Debug)]
pub struct MetricValues<'a> {
    values: &'a [f64],
    row_set: &'a Codes,
    /// Per metric set: whether it has this metric.
    in_set: Vec<bool>,
    /// Whether every set has it (then no record's set is looked at).
    in_all: bool,
}

impl<'a> MetricValues<'a> {
    /// Every record's entry in the column: its value where [`MetricValues::get`] gives one,
    /// else NaN or whatever the column holds (never read for such a record).
    pub fn column(&self) -> &'a [f64] {
        self.values
    }

    /// Record `row`'s value, as [`Record::metric`] gives it.
    #[inline]
    pub fn get(&self, row: usize) -> Option<f64> {
        if self.in_all {
            return self.values.get(row).copied();
        }
        let set = self.row_set.try_get(row)? as usize;
        if *self.in_set.get(set)? {
            self.values.get(row).copied()
        } else {
            None
        }
    }
}

fn build_column(records: &[Record], key: DimKey) -> Column {
    let mut ids: HashMap<BorrowedDim<'_>, u32> = HashMap::new();
    let mut firsts: Vec<usize> = Vec::new();
    // The previous record's value and id: neighbouring records often share a value, and
    // comparing is cheaper than hashing.
    let mut last: Option<(BorrowedDim<'_>, u32)> = None;
    let raw: Vec<u32> = records
        .iter()
        .enumerate()
        .map(|(row, r)| match r.dim_borrowed(&key) {
            None => u32::MAX,
            Some(b) => {
                if let Some((l, id)) = last {
                    if l == b {
                        return id;
                    }
                }
                let id = *ids.entry(b).or_insert_with(|| {
                    firsts.push(row);
                    firsts.len() as u32 - 1
                });
                last = Some((b, id));
                id
            }
        })
        .collect();
    // Sort the distinct values once, then renumber.
    let mut order: Vec<(DimValue, u32)> = firsts
        .iter()
        .enumerate()
        .filter_map(|(id, &row)| records[row].dim(&key).map(|v| (v, id as u32)))
        .collect();
    crate::model::order::sort(&mut order);
    let mut renumber = vec![0u32; order.len()];
    for (pos, (_, id)) in order.iter().enumerate() {
        renumber[*id as usize] = pos as u32 + 1;
    }
    let codes = Codes::from_codes(raw.iter().map(|&id| {
        if id == u32::MAX {
            0
        } else {
            renumber[id as usize]
        }
    }));
    Column::new(key, order.into_iter().map(|(v, _)| v).collect(), codes)
}

/// Whether two dictionary values are the same value (not merely equal in sort order, as
/// `"a01"` and `"a1"` are): the same bits or the same text.
fn identical(a: &DimValue, b: &DimValue) -> bool {
    match (a, b) {
        (DimValue::Num(x), DimValue::Num(y)) => x.to_bits() == y.to_bits(),
        (DimValue::Text(x), DimValue::Text(y)) => x == y,
        _ => false,
    }
}

/// The sorted union of two sorted dictionaries, and where each one's entries went (new code
/// of old code `c` is `map[c]`, with 0 kept for "no value").
fn merge_dicts(a: &[DimValue], b: &[DimValue]) -> (Vec<DimValue>, Vec<u32>, Vec<u32>) {
    let mut dict = Vec::with_capacity(a.len() + b.len());
    let mut map_a = Vec::with_capacity(a.len() + 1);
    let mut map_b = Vec::with_capacity(b.len() + 1);
    map_a.push(0);
    map_b.push(0);
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let take_a = match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) if identical(x, y) => {
                dict.push(x.clone());
                map_a.push(dict.len() as u32);
                map_b.push(dict.len() as u32);
                i += 1;
                j += 1;
                continue;
            }
            // Ties in sort order keep the earlier records' value first, as building does.
            (Some(x), Some(y)) => x <= y,
            (Some(_), None) => true,
            _ => false,
        };
        if take_a {
            dict.push(a[i].clone());
            map_a.push(dict.len() as u32);
            i += 1;
        } else {
            dict.push(b[j].clone());
            map_b.push(dict.len() as u32);
            j += 1;
        }
    }
    (dict, map_a, map_b)
}

/// Appends `codes` renumbered by `map` (code `c` becomes `map[c]`, 0 where `map` has no
/// entry) to `onto`: one match on the width of `codes`.
fn renumber_onto(onto: &mut Codes, codes: &Codes, map: &[u32]) {
    with_codes!(codes, s => {
        for i in 0..s.rows() {
            onto.push(map.get(s.at(i) as usize).copied().unwrap_or(0));
        }
    })
}

impl Index {
    /// Indexes `records`. Cost is linear in records × dimensions, with one allocation per
    /// distinct value rather than per cell.
    pub fn build(records: &[Record]) -> Index {
        // Which well-known dimensions and tags occur, in one pass.
        let mut present = vec![false; Dim::ALL.len()];
        let mut tags: BTreeSet<&str> = BTreeSet::new();
        for r in records {
            for (p, d) in present.iter_mut().zip(Dim::ALL) {
                if !*p && r.has_known(*d) {
                    *p = true;
                }
            }
            for k in r.tags.keys() {
                if !tags.contains(k.as_str()) {
                    tags.insert(k);
                }
            }
        }
        let keys = Dim::ALL
            .iter()
            .zip(present)
            .filter(|(_, p)| *p)
            .map(|(d, _)| DimKey::Known(*d))
            .chain(tags.into_iter().map(|t| DimKey::Tag(t.to_string())));
        let columns = keys.map(|key| build_column(records, key)).collect();

        let mut all: BTreeSet<&MetricKey> = BTreeSet::new();
        let mut last: Option<&Record> = None;
        for r in records {
            // Neighbouring records usually carry the same metrics.
            if last.is_some_and(|l| {
                l.metrics.len() == r.metrics.len() && l.metrics.keys().eq(r.metrics.keys())
            }) {
                continue;
            }
            all.extend(r.metrics.keys());
            last = Some(r);
        }
        let metric_keys: Vec<MetricKey> = all.into_iter().cloned().collect();
        let position: HashMap<&MetricKey, u32> = metric_keys
            .iter()
            .enumerate()
            .map(|(i, k)| (k, i as u32))
            .collect();
        let mut set_ids: HashMap<Vec<u32>, u32> = HashMap::new();
        let mut metric_sets: Vec<Vec<u32>> = Vec::new();
        let mut row_metric_set = Vec::with_capacity(records.len());
        let mut last: Option<(&Record, u32)> = None;
        for r in records {
            if let Some((l, id)) = last {
                if l.metrics.len() == r.metrics.len() && l.metrics.keys().eq(r.metrics.keys()) {
                    row_metric_set.push(id);
                    continue;
                }
            }
            let set: Vec<u32> = r.metrics.keys().map(|k| position[k]).collect();
            let id = *set_ids.entry(set.clone()).or_insert_with(|| {
                metric_sets.push(set);
                metric_sets.len() as u32 - 1
            });
            row_metric_set.push(id);
            last = Some((r, id));
        }
        let mut metric_values = vec![vec![f64::NAN; records.len()]; metric_keys.len()];
        let mut any_inferred = false;
        for (row, (r, &set)) in records.iter().zip(&row_metric_set).enumerate() {
            any_inferred |= !r.inferred.is_empty();
            // A record's metrics are in key order, as its set's positions.
            for (&k, (_, &v)) in metric_sets[set as usize].iter().zip(r.metrics.iter()) {
                metric_values[k as usize][row] = v;
            }
        }
        Index {
            rows: records.len(),
            columns,
            metric_keys,
            metric_sets,
            row_metric_set: Codes::from_vec(row_metric_set),
            metric_values,
            any_inferred,
        }
    }

    /// The index of the records `columns` holds (what [`Index::build`] gives for
    /// `columns.rows()`), from its dictionaries and validity bits without building a record.
    pub fn from_columns(columns: &Columns) -> Index {
        let rows = columns.len();
        let mut index_columns = Vec::new();
        for col in columns.dims() {
            let values = col.data.distinct();
            if values.is_empty() {
                continue;
            }
            // The columns' dictionaries are in order of first appearance: sort, renumber.
            let mut order: Vec<(DimValue, u32)> = values
                .into_iter()
                .enumerate()
                .map(|(k, v)| (v, k as u32))
                .collect();
            crate::model::order::sort(&mut order);
            let mut renumber = vec![0u32; order.len() + 1];
            for (pos, (_, k)) in order.iter().enumerate() {
                renumber[*k as usize + 1] = pos as u32 + 1;
            }
            let codes = Codes::from_codes((0..rows).map(|i| {
                renumber
                    .get(col.data.code(i) as usize)
                    .copied()
                    .unwrap_or(0)
            }));
            index_columns.push(Column::new(
                col.key.clone(),
                order.into_iter().map(|(v, _)| v).collect(),
                codes,
            ));
        }
        let present: Vec<_> = columns.metrics().iter().filter(|m| m.count() > 0).collect();
        let metric_keys: Vec<MetricKey> = present.iter().map(|m| m.key.clone()).collect();
        let mut set_ids: HashMap<Vec<u32>, u32> = HashMap::new();
        let mut metric_sets: Vec<Vec<u32>> = Vec::new();
        let mut row_metric_set = Vec::with_capacity(rows);
        let mut set: Vec<u32> = Vec::with_capacity(present.len());
        let mut last: Option<(Vec<u32>, u32)> = None;
        for row in 0..rows {
            set.clear();
            set.extend(
                present
                    .iter()
                    .enumerate()
                    .filter(|(_, m)| m.valid().get(row))
                    .map(|(k, _)| k as u32),
            );
            if let Some((l, id)) = &last {
                if *l == set {
                    row_metric_set.push(*id);
                    continue;
                }
            }
            let id = *set_ids.entry(set.clone()).or_insert_with(|| {
                metric_sets.push(set.clone());
                metric_sets.len() as u32 - 1
            });
            row_metric_set.push(id);
            last = Some((set.clone(), id));
        }
        let metric_values = present
            .iter()
            .map(|m| (0..rows).map(|i| m.get(i).unwrap_or(f64::NAN)).collect())
            .collect();
        Index {
            rows,
            columns: index_columns,
            metric_keys,
            metric_sets,
            row_metric_set: Codes::from_vec(row_metric_set),
            metric_values,
            any_inferred: columns.any_inferred(),
        }
    }

    /// The values of `key`, per record (`None` where a record lacks the metric).
    pub fn metric_values(&self, key: &MetricKey) -> Option<MetricValues<'_>> {
        let k = self.metric_keys.binary_search(key).ok()?;
        let in_set: Vec<bool> = self
            .metric_sets
            .iter()
            .map(|s| s.contains(&(k as u32)))
            .collect();
        Some(MetricValues {
            values: self.metric_values.get(k)?,
            row_set: &self.row_metric_set,
            in_all: in_set.iter().all(|&x| x),
            in_set,
        })
    }

    /// Record `row` rebuilt from the index: its value of every indexed dimension and every
    /// metric of its set. That is the whole record for rows that carry only dimensions and
    /// metrics (no inferred fields, per-request detail or time series), as a table read into
    /// columns does ([`crate::wire::TableEncoder`]); `None` past the last row.
    pub fn record(&self, row: usize) -> Option<Record> {
        let set = self
            .metric_sets
            .get(self.row_metric_set.try_get(row)? as usize)?;
        let mut r = Record::default();
        for c in &self.columns {
            let code = c.codes.get(row) as usize;
            if let Some(v) = code.checked_sub(1).and_then(|k| c.dict.get(k)) {
                // The index holds only values a record accepted, so none is refused.
                let _ = r.set_dim(&c.key, Some(v.clone()));
            }
        }
        let mut metrics = Metrics::with_capacity(set.len());
        for &k in set {
            let k = k as usize;
            if let (Some(key), Some(v)) = (
                self.metric_keys.get(k),
                self.metric_values.get(k).and_then(|v| v.get(row)),
            ) {
                metrics.push_last(key.clone(), *v);
            }
        }
        r.metrics = metrics;
        Some(r)
    }

    /// Whether some record has inferred fields.
    pub fn any_inferred(&self) -> bool {
        self.any_inferred
    }

    /// Number of records indexed.
    pub fn len(&self) -> usize {
        self.rows
    }

    /// Whether no records are indexed.
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// An index from its parts, as [`crate::wire`] hands it over; checked so that no lookup
    /// can go out of bounds.
    pub(crate) fn from_parts(
        rows: usize,
        columns: Vec<Column>,
        metric_keys: Vec<MetricKey>,
        metric_sets: Vec<Vec<u32>>,
        row_metric_set: Codes,
        metric_values: Vec<Vec<f64>>,
        any_inferred: bool,
    ) -> Result<Index, IndexError> {
        if metric_values.len() != metric_keys.len() {
            return Err(IndexError::Dangling);
        }
        if let Some(v) = metric_values.iter().find(|v| v.len() != rows) {
            return Err(IndexError::Length {
                rows,
                found: v.len(),
            });
        }
        for c in &columns {
            if c.codes.len() != rows {
                return Err(IndexError::Length {
                    rows,
                    found: c.codes.len(),
                });
            }
            if c.codes.max() as usize > c.dict.len() {
                return Err(IndexError::Dangling);
            }
        }
        if columns.windows(2).any(|w| w[0].key >= w[1].key)
            || metric_keys.windows(2).any(|w| w[0] >= w[1])
        {
            return Err(IndexError::Dangling);
        }
        if row_metric_set.len() != rows {
            return Err(IndexError::Length {
                rows,
                found: row_metric_set.len(),
            });
        }
        if (rows > 0 && row_metric_set.max() as usize >= metric_sets.len())
            || metric_sets
                .iter()
                .flatten()
                .any(|&k| k as usize >= metric_keys.len())
        {
            return Err(IndexError::Dangling);
        }
        Ok(Index {
            rows,
            columns,
            metric_keys,
            metric_sets,
            row_metric_set,
            metric_values,
            any_inferred,
        })
    }

    /// Appends the index of the records that follow this index's records: dictionaries are
    /// merged and codes renumbered, without looking at any record.
    pub fn append(&mut self, other: Index) {
        if self.rows == 0 {
            *self = other;
            return;
        }
        let (old_rows, new_rows) = (self.rows, other.rows);
        let total = old_rows + new_rows;
        let mut old = std::mem::take(&mut self.columns).into_iter().peekable();
        let mut new = other.columns.into_iter().peekable();
        let mut columns = Vec::new();
        loop {
            let (a, b) = match (old.peek(), new.peek()) {
                (None, None) => break,
                (Some(a), Some(b)) if a.key == b.key => (old.next(), new.next()),
                (Some(a), Some(b)) if a.key < b.key => (old.next(), None),
                (Some(_), None) => (old.next(), None),
                _ => (None, new.next()),
            };
            let key = match (&a, &b) {
                (Some(c), _) | (None, Some(c)) => c.key.clone(),
                (None, None) => break,
            };
            let empty: [DimValue; 0] = [];
            let (dict, map_a, map_b) = merge_dicts(
                a.as_ref().map_or(&empty[..], |c| &c.dict),
                b.as_ref().map_or(&empty[..], |c| &c.dict),
            );
            let mut codes = Codes::default();
            codes.reserve(total);
            // Renumbering keeps code 0 as 0 and every other code non-zero, so the records
            // without a value are those of each side.
            let mut missing = 0;
            match a {
                Some(c) => {
                    renumber_onto(&mut codes, &c.codes, &map_a);
                    missing += c.missing;
                }
                None => {
                    codes.resize(old_rows, 0);
                    missing += old_rows;
                }
            }
            match b {
                Some(c) => {
                    renumber_onto(&mut codes, &c.codes, &map_b);
                    missing += c.missing;
                }
                None => {
                    missing += total - codes.len();
                    codes.resize(total, 0);
                }
            }
            columns.push(Column {
                key,
                dict,
                codes,
                missing,
            });
        }
        self.columns = columns;

        // Metrics: the sorted union of the keys, each side's sets renumbered.
        let keys: BTreeSet<&MetricKey> =
            crate::model::order::set_of(self.metric_keys.iter().chain(&other.metric_keys));
        let metric_keys: Vec<MetricKey> = keys.into_iter().cloned().collect();
        let position = |k: &MetricKey| metric_keys.binary_search(k).unwrap_or(0) as u32;
        let remap = |keys: &[MetricKey], set: &[u32]| -> Vec<u32> {
            set.iter().map(|&k| position(&keys[k as usize])).collect()
        };
        let mut sets: Vec<Vec<u32>> = Vec::new();
        let mut set_ids: HashMap<Vec<u32>, u32> = HashMap::new();
        let mut id_of = |set: Vec<u32>| -> u32 {
            *set_ids.entry(set.clone()).or_insert_with(|| {
                sets.push(set);
                sets.len() as u32 - 1
            })
        };
        let old_ids: Vec<u32> = self
            .metric_sets
            .iter()
            .map(|s| id_of(remap(&self.metric_keys, s)))
            .collect();
        let new_ids: Vec<u32> = other
            .metric_sets
            .iter()
            .map(|s| id_of(remap(&other.metric_keys, s)))
            .collect();
        let mut row_sets = Codes::default();
        row_sets.reserve(total);
        renumber_onto(&mut row_sets, &self.row_metric_set, &old_ids);
        renumber_onto(&mut row_sets, &other.row_metric_set, &new_ids);
        let values_of = |keys: &[MetricKey],
                         values: &mut Vec<Vec<f64>>,
                         k: &MetricKey,
                         n: usize| match keys.binary_search(k) {
            Ok(i) => std::mem::take(&mut values[i]),
            Err(_) => vec![f64::NAN; n],
        };
        let mut old_values = std::mem::take(&mut self.metric_values);
        let mut new_values = other.metric_values;
        self.metric_values = metric_keys
            .iter()
            .map(|k| {
                let mut v = values_of(&self.metric_keys, &mut old_values, k, old_rows);
                v.extend(values_of(&other.metric_keys, &mut new_values, k, new_rows));
                v
            })
            .collect();
        self.row_metric_set = row_sets;
        self.metric_keys = metric_keys;
        self.metric_sets = sets;
        self.any_inferred |= other.any_inferred;
        self.rows = total;
    }
}
