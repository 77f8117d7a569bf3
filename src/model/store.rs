//! The dataset store: records plus a dictionary-encoded index of every dimension, answering
//! "which records match this filter" and "which values does each dimension take, with counts
//! under the other filters" in one pass over the rows.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::dim::{DimKey, DimValue};
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

/// One dictionary-encoded dimension: code 0 means "no value", code `i + 1` means `dict[i]`.
#[derive(Clone, Debug)]
struct Column {
    key: DimKey,
    dict: Vec<DimValue>,
    codes: Vec<u32>,
}

/// Records with an index over every dimension they use.
#[derive(Clone, Debug, Default)]
pub struct Dataset {
    records: Vec<Record>,
    columns: Vec<Column>,
}

impl Dataset {
    /// Indexes `records`. Cost is linear in records × dimensions.
    pub fn new(records: Vec<Record>) -> Dataset {
        let mut keys: BTreeSet<DimKey> = BTreeSet::new();
        for r in &records {
            for (k, _) in r.dims() {
                if !keys.contains(&k) {
                    keys.insert(k);
                }
            }
        }
        let columns = keys
            .into_iter()
            .map(|key| {
                let values: Vec<Option<DimValue>> = records.iter().map(|r| r.dim(&key)).collect();
                let distinct: BTreeSet<&DimValue> = values.iter().flatten().collect();
                let dict: Vec<DimValue> = distinct.into_iter().cloned().collect();
                let index: HashMap<&DimValue, u32> = dict
                    .iter()
                    .enumerate()
                    .map(|(i, v)| (v, i as u32 + 1))
                    .collect();
                let codes = values
                    .iter()
                    .map(|v| v.as_ref().map_or(0, |v| index[v]))
                    .collect();
                Column { key, dict, codes }
            })
            .collect();
        Dataset { records, columns }
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
        self.columns.iter().map(|c| &c.key)
    }

    /// Per constrained column: which codes pass.
    fn masks(&self, filter: &Filter) -> Vec<(usize, Vec<bool>)> {
        let mut masks = Vec::new();
        for (key, chosen) in &filter.selected {
            if chosen.is_empty() {
                continue;
            }
            let Some(ci) = self.columns.iter().position(|c| &c.key == key) else {
                // Selecting a dimension no record has: only "no value" can match.
                if !chosen.contains(&None) {
                    masks.push((usize::MAX, Vec::new()));
                }
                continue;
            };
            let col = &self.columns[ci];
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
        masks
            .iter()
            .all(|(ci, pass)| *ci != usize::MAX && pass[self.columns[*ci].codes[row] as usize])
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
                    if !pass[self.columns[*ci].codes[row] as usize] {
                        failures += 1;
                        failing = Some(*ci);
                        if failures > 1 {
                            break;
                        }
                    }
                }
                match failures {
                    0 => {
                        for (ci, col) in self.columns.iter().enumerate() {
                            counts[ci][col.codes[row] as usize] += 1;
                        }
                    }
                    1 => {
                        if let Some(ci) = failing {
                            counts[ci][self.columns[ci].codes[row] as usize] += 1;
                        }
                    }
                    _ => {}
                }
            }
        }
        self.columns
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
            gpu: gpu.map(str::to_string),
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
    fn empty_dataset() {
        let ds = Dataset::new(Vec::new());
        assert!(ds.matching(&Filter::all()).is_empty());
        assert!(ds.facets(&Filter::all()).is_empty());
    }
}
