//! The dataset store: records plus a dictionary-encoded index of every dimension, answering
//! "which records match this filter" and "which values does each dimension take, with counts
//! under the other filters" in one pass over the rows.

mod index;

use std::collections::{BTreeMap, BTreeSet};

pub(crate) use index::Column;
pub use index::{Index, IndexError, MetricValues};

use super::dim::{DimKey, DimValue};
use super::metric::MetricKey;
use super::record::Record;

/// A selection per dimension. A dimension absent from the map, or mapped to an empty set, is
/// unconstrained. `None` in a set selects the records that have no value for the dimension.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filter {
    /// Selected values per dimension.
    pub selected: BTreeMap<DimKey, BTreeSet<Option<DimValue>>>,
}

impl Filter {
    /// No constraint at all.
    pub fn all() -> Filter {
        Filter::default()
    }

    /// Adds `value` to the selection of `key`.
    pub fn select(mut self, key: impl Into<DimKey>, value: Option<DimValue>) -> Filter {
        self.selected.entry(key.into()).or_default().insert(value);
        self
    }

    /// Whether nothing is constrained.
    pub fn is_empty(&self) -> bool {
        self.selected.values().all(BTreeSet::is_empty)
    }
}

/// One value of a dimension with the number of records having it.
#[derive(Clone, Debug, PartialEq)]
pub struct FacetValue {
    /// The value; `None` counts the records without one.
    pub value: Option<DimValue>,
    /// Records with this value that pass the filters on every *other* dimension.
    pub count: usize,
    /// Whether the value is currently selected.
    pub selected: bool,
}

/// The values of one dimension, for a multi-select filter.
#[derive(Clone, Debug, PartialEq)]
pub struct Facet {
    /// The dimension.
    pub key: DimKey,
    /// Its values in sort order (numbers numerically, then text, then "no value").
    pub values: Vec<FacetValue>,
}

/// Read access to one indexed dimension.
#[derive(Clone, Copy, Debug)]
pub struct ColumnRef<'a> {
    /// Distinct values, sorted.
    pub dict: &'a [DimValue],
    /// Per record: 0 for no value, else 1 + index into `dict`.
    pub codes: &'a [u32],
}

impl<'a> ColumnRef<'a> {
    /// The value of a record, if it has one.
    pub fn value(&self, row: usize) -> Option<&'a DimValue> {
        match self.codes.get(row).copied().unwrap_or(0) {
            0 => None,
            c => self.dict.get(c as usize - 1),
        }
    }
}

/// Records with an index over every dimension they use and the metrics they carry.
#[derive(Clone, Debug, Default)]
pub struct Dataset {
    records: Vec<Record>,
    index: Index,
}

impl Dataset {
    /// Indexes `records`. Cost is linear in records × dimensions, with one allocation per
    /// distinct value rather than per cell.
    pub fn new(records: Vec<Record>) -> Dataset {
        let mut ds = Dataset {
            records,
            ..Dataset::default()
        };
        ds.reindex();
        ds
    }

    fn reindex(&mut self) {
        self.index = Index::build(&self.records);
    }

    /// Appends records and indexes them; returns the range of row indices they occupy.
    pub fn extend(&mut self, records: Vec<Record>) -> std::ops::Range<usize> {
        let index = Index::build(&records);
        self.extend_indexed(records, index)
    }

    /// Appends records with their index, built elsewhere ([`Index::build`], in the parse
    /// worker): the existing index is extended by renumbering codes, without walking any
    /// record. An index that does not fit the records is rebuilt. Returns the range of row
    /// indices the records occupy.
    pub fn extend_indexed(&mut self, records: Vec<Record>, index: Index) -> std::ops::Range<usize> {
        let start = self.records.len();
        let index = if index.len() == records.len() {
            index
        } else {
            Index::build(&records)
        };
        if self.records.is_empty() {
            self.records = records;
        } else {
            self.records.extend(records);
        }
        self.index.append(index);
        start..self.records.len()
    }

    /// The values of a metric over the records, from the index.
    pub fn metric_values(&self, key: &MetricKey) -> Option<MetricValues<'_>> {
        self.index.metric_values(key)
    }

    /// Whether some record has a field marked inferred, from the index.
    pub fn any_inferred(&self) -> bool {
        self.index.any_inferred
    }

    /// The index (for tests comparing ways of building it).
    pub fn index(&self) -> &Index {
        &self.index
    }

    /// Removes the records in `rows` (later rows move down) and re-indexes.
    pub fn remove_rows(&mut self, rows: std::ops::Range<usize>) {
        let end = rows.end.min(self.records.len());
        let start = rows.start.min(end);
        self.records.drain(start..end);
        self.reindex();
    }

    /// Changes the records in `rows` in place, then re-indexes.
    pub fn update_rows<E>(
        &mut self,
        rows: std::ops::Range<usize>,
        mut f: impl FnMut(&mut Record) -> Result<(), E>,
    ) -> Result<(), E> {
        let end = rows.end.min(self.records.len());
        let start = rows.start.min(end);
        let mut outcome = Ok(());
        for r in &mut self.records[start..end] {
            if let Err(e) = f(r) {
                outcome = Err(e);
                break;
            }
        }
        self.reindex();
        outcome
    }

    /// Read access to an indexed dimension.
    pub fn column(&self, key: &DimKey) -> Option<ColumnRef<'_>> {
        self.index
            .columns
            .iter()
            .find(|c| &c.key == key)
            .map(|c| ColumnRef {
                dict: &c.dict,
                codes: &c.codes,
            })
    }

    /// How many distinct values a dimension takes over all records.
    pub fn distinct_len(&self, key: &DimKey) -> usize {
        self.column(key).map_or(0, |c| c.dict.len())
    }

    /// Every metric some record has, sorted.
    pub fn metric_keys(&self) -> &[MetricKey] {
        &self.index.metric_keys
    }

    /// The metrics present in the records at `rows`, sorted.
    pub fn metrics_present(&self, rows: &[usize]) -> Vec<MetricKey> {
        let mut seen_sets = vec![false; self.index.metric_sets.len()];
        let mut present = vec![false; self.index.metric_keys.len()];
        for &row in rows {
            let Some(&set) = self.index.row_metric_set.get(row) else {
                continue;
            };
            if !std::mem::replace(&mut seen_sets[set as usize], true) {
                for &k in &self.index.metric_sets[set as usize] {
                    present[k as usize] = true;
                }
            }
        }
        self.index
            .metric_keys
            .iter()
            .zip(present)
            .filter(|(_, p)| *p)
            .map(|(k, _)| k.clone())
            .collect()
    }

    /// All records, in load order.
    pub fn records(&self) -> &[Record] {
        &self.records
    }

    /// Gives the records back.
    pub fn into_records(self) -> Vec<Record> {
        self.records
    }

    /// Number of records.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether there are no records.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Every dimension some record has a value for, well-known ones first.
    pub fn dim_keys(&self) -> impl Iterator<Item = &DimKey> {
        self.index.columns.iter().map(|c| &c.key)
    }

    /// Per constrained column: which codes pass.
    fn masks(&self, filter: &Filter) -> Vec<(usize, Vec<bool>)> {
        let mut masks = Vec::new();
        for (key, chosen) in &filter.selected {
            if chosen.is_empty() {
                continue;
            }
            let Some(ci) = self.index.columns.iter().position(|c| &c.key == key) else {
                // Selecting a dimension no record has: only "no value" can match.
                if !chosen.contains(&None) {
                    masks.push((usize::MAX, Vec::new()));
                }
                continue;
            };
            let col = &self.index.columns[ci];
            let mut pass = vec![false; col.dict.len() + 1];
            pass[0] = chosen.contains(&None);
            for (i, v) in col.dict.iter().enumerate() {
                pass[i + 1] = chosen.contains(&Some(v.clone()));
            }
            masks.push((ci, pass));
        }
        masks
    }

    fn passes(&self, masks: &[(usize, Vec<bool>)], row: usize) -> bool {
        masks.iter().all(|(ci, pass)| {
            *ci != usize::MAX && pass[self.index.columns[*ci].codes[row] as usize]
        })
    }

    /// Indices of the records matching `filter`, in load order.
    pub fn matching(&self, filter: &Filter) -> Vec<usize> {
        let masks = self.masks(filter);
        if masks.iter().any(|(ci, _)| *ci == usize::MAX) {
            return Vec::new();
        }
        (0..self.records.len())
            .filter(|&row| self.passes(&masks, row))
            .collect()
    }

    /// The records matching `filter`.
    pub fn filtered<'a>(&'a self, filter: &Filter) -> impl Iterator<Item = &'a Record> + 'a {
        self.matching(filter)
            .into_iter()
            .map(move |i| &self.records[i])
    }

    /// The distinct values of one dimension with their counts under the filters on the other
    /// dimensions (so a multi-select shows what choosing each value would give).
    pub fn distinct(&self, key: &DimKey, filter: &Filter) -> Vec<FacetValue> {
        self.facets(filter)
            .into_iter()
            .find(|f| &f.key == key)
            .map(|f| f.values)
            .unwrap_or_default()
    }

    /// Every dimension's values with counts, each under the filters on the other dimensions.
    /// One pass over the rows whatever the number of dimensions.
    pub fn facets(&self, filter: &Filter) -> Vec<Facet> {
        let masks = self.masks(filter);
        let impossible = masks.iter().any(|(ci, _)| *ci == usize::MAX);
        let mut counts: Vec<Vec<usize>> = self
            .index
            .columns
            .iter()
            .map(|c| vec![0; c.dict.len() + 1])
            .collect();
        if !impossible {
            for row in 0..self.records.len() {
                // Which constrained column (if exactly one) rejects this row.
                let mut failing = None;
                let mut failures = 0;
                for (ci, pass) in &masks {
                    if !pass[self.index.columns[*ci].codes[row] as usize] {
                        failures += 1;
                        failing = Some(*ci);
                        if failures > 1 {
                            break;
                        }
                    }
                }
                match failures {
                    0 => {
                        for (ci, col) in self.index.columns.iter().enumerate() {
                            counts[ci][col.codes[row] as usize] += 1;
                        }
                    }
                    1 => {
                        if let Some(ci) = failing {
                            counts[ci][self.index.columns[ci].codes[row] as usize] += 1;
                        }
                    }
                    _ => {}
                }
            }
        }
        self.index
            .columns
            .iter()
            .zip(counts)
            .map(|(col, counts)| {
                let chosen = filter.selected.get(&col.key);
                let is_selected = |v: &Option<DimValue>| chosen.is_some_and(|set| set.contains(v));
                let mut values: Vec<FacetValue> = col
                    .dict
                    .iter()
                    .enumerate()
                    .map(|(i, v)| {
                        let value = Some(v.clone());
                        FacetValue {
                            selected: is_selected(&value),
                            value,
                            count: counts[i + 1],
                        }
                    })
                    .collect();
                if col.codes.contains(&0) {
                    values.push(FacetValue {
                        value: None,
                        count: counts[0],
                        selected: is_selected(&None),
                    });
                }
                Facet {
                    key: col.key.clone(),
                    values,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Dim;

    fn rec(engine: &str, gpu: Option<&str>, batch: u64) -> Record {
        Record {
            engine: Some(engine.into()),
            gpu: gpu.map(Into::into),
            batch_size: Some(batch),
            ..Record::default()
        }
    }

    fn sample() -> Dataset {
        Dataset::new(vec![
            rec("vllm", Some("A100"), 1),
            rec("vllm", Some("H100"), 8),
            rec("sglang", Some("A100"), 8),
            rec("tgi", None, 1),
        ])
    }

    fn counts(ds: &Dataset, dim: Dim, filter: &Filter) -> Vec<(String, usize)> {
        ds.distinct(&dim.into(), filter)
            .into_iter()
            .map(|f| {
                (
                    f.value.map_or("(none)".to_string(), |v| v.to_string()),
                    f.count,
                )
            })
            .collect()
    }

    #[test]
    fn unfiltered_counts_and_matches() {
        let ds = sample();
        assert_eq!(ds.matching(&Filter::all()), vec![0, 1, 2, 3]);
        assert_eq!(
            counts(&ds, Dim::Gpu, &Filter::all()),
            [("A100".into(), 2), ("H100".into(), 1), ("(none)".into(), 1)]
        );
        assert_eq!(
            counts(&ds, Dim::BatchSize, &Filter::all()),
            [("1".into(), 2), ("8".into(), 2)]
        );
    }

    #[test]
    fn counts_are_under_the_other_filters() {
        let ds = sample();
        let f = Filter::all().select(Dim::Engine, Some("vllm".into()));
        assert_eq!(ds.matching(&f), vec![0, 1]);
        // The engine facet ignores its own selection ...
        assert_eq!(
            counts(&ds, Dim::Engine, &f),
            [("sglang".into(), 1), ("tgi".into(), 1), ("vllm".into(), 2)]
        );
        // ... the GPU facet is narrowed by it.
        assert_eq!(
            counts(&ds, Dim::Gpu, &f),
            [("A100".into(), 1), ("H100".into(), 1), ("(none)".into(), 0)]
        );
        let f = f.select(Dim::BatchSize, Some(8.0.into()));
        assert_eq!(ds.matching(&f), vec![1]);
        assert_eq!(
            counts(&ds, Dim::Engine, &f),
            [("sglang".into(), 1), ("tgi".into(), 0), ("vllm".into(), 1)]
        );
    }

    #[test]
    fn missing_values_are_selectable_and_unknown_dimensions_match_nothing() {
        let ds = sample();
        let f = Filter::all().select(Dim::Gpu, None);
        assert_eq!(ds.matching(&f), vec![3]);
        let f = Filter::all().select(Dim::Model, Some("llama".into()));
        assert!(ds.matching(&f).is_empty());
        let f = Filter::all().select(Dim::Model, None);
        assert_eq!(ds.matching(&f).len(), 4);
    }

    #[test]
    fn columns_metrics_and_in_place_changes() {
        let mut ds = sample();
        let gpu = ds.column(&Dim::Gpu.into()).unwrap();
        assert_eq!(gpu.dict, [DimValue::from("A100"), DimValue::from("H100")]);
        assert_eq!(gpu.codes, [1, 2, 1, 0]);
        assert_eq!(gpu.value(1), Some(&DimValue::from("H100")));
        assert_eq!(ds.distinct_len(&Dim::BatchSize.into()), 2);
        assert!(ds.metrics_present(&[0, 1]).is_empty());

        let mut r = rec("trtllm", Some("B200"), 64);
        r.set_metric(MetricKey::OutputThroughput, 1.0);
        let rows = ds.extend(vec![r]);
        assert_eq!(rows, 4..5);
        assert_eq!(ds.metrics_present(&[0, 4]), [MetricKey::OutputThroughput]);
        assert_eq!(ds.metrics_present(&[0, 1]), []);
        ds.update_rows(0..2, |r| r.set_known(Dim::Model, Some("m".into())))
            .unwrap();
        assert_eq!(ds.distinct_len(&Dim::Model.into()), 1);
        ds.remove_rows(0..2);
        assert_eq!(ds.len(), 3);
        assert_eq!(ds.distinct_len(&Dim::Model.into()), 0);
        assert_eq!(ds.metric_keys(), [MetricKey::OutputThroughput]);
    }

    #[test]
    fn empty_dataset() {
        let ds = Dataset::new(Vec::new());
        assert!(ds.matching(&Filter::all()).is_empty());
        assert!(ds.facets(&Filter::all()).is_empty());
    }
}
