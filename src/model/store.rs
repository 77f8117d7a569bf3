//! The dataset store: records (or, for a table of dimensions and metrics, no records at all)
//! plus a dictionary-encoded index of every dimension and a column per metric, answering
//! "which records match this filter" and "which values does each dimension take, with counts
//! under the other filters" together: decided once per configuration (distinct combination of
//! dimension values and metric set, [`Dataset::configurations`]), then one pass over the
//! rows' configuration numbers.

mod configs;
mod index;

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, OnceLock};

pub(crate) use index::Column;
pub use index::{Index, IndexError, MetricValues};

use super::columns::{CodeRows, Codes};
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
    /// Per record: 0 for no value, else 1 + index into `dict` (as narrow as `dict` allows).
    pub codes: &'a Codes,
}

impl<'a> ColumnRef<'a> {
    /// The value of a record, if it has one.
    pub fn value(&self, row: usize) -> Option<&'a DimValue> {
        match self.codes.get(row) {
            0 => None,
            c => self.dict.get(c as usize - 1),
        }
    }
}

/// The rows below `n` whose code in every column of `checks` passes its mask.
fn rows_passing<C: CodeRows + ?Sized>(checks: &[(&C, &[bool])], n: usize) -> Vec<usize> {
    (0..n)
        .filter(|&row| {
            checks
                .iter()
                .all(|(codes, pass)| pass.get(codes.at(row) as usize).copied().unwrap_or(false))
        })
        .collect()
}

/// The configurations part of [`Dataset::filter_pass`] over the columns `cols` (their codes,
/// in index order): which configurations match (`selected`; returns their rows) and the
/// counts. A configuration no filter rejects counts its rows in every dimension, one exactly
/// one filter rejects in that filter's dimension only.
fn pass_configs<C: CodeRows + ?Sized>(
    cols: &[&C],
    masks: &[(usize, Vec<bool>)],
    configs: &configs::Configurations,
    counts: &mut [Vec<usize>],
    selected: &mut [bool],
) -> usize {
    let code = |ci: usize, row: usize| cols.get(ci).map_or(0, |c| c.at(row) as usize);
    let mut matching = 0;
    for ((&first, &n), selected) in configs.firsts.iter().zip(&configs.rows).zip(selected) {
        // Which constrained column (if exactly one) rejects this configuration.
        let mut failing = usize::MAX;
        let mut failures = 0;
        for (ci, pass) in masks {
            if !pass.get(code(*ci, first)).copied().unwrap_or(false) {
                failures += 1;
                failing = *ci;
                if failures > 1 {
                    break;
                }
            }
        }
        match failures {
            0 => {
                *selected = true;
                matching += n;
                for (ci, counts) in counts.iter_mut().enumerate() {
                    if let Some(x) = counts.get_mut(code(ci, first)) {
                        *x += n;
                    }
                }
            }
            1 => {
                if let Some(x) = counts
                    .get_mut(failing)
                    .and_then(|c| c.get_mut(code(failing, first)))
                {
                    *x += n;
                }
            }
            _ => {}
        }
    }
    matching
}

/// Records with an index over every dimension they use and the metrics they carry.
///
/// A file's rows are kept either as records or, for a table read into columns whose rows carry
/// only dimensions and metrics ([`Dataset::extend_columnar`]), as the index alone: such a row's
/// record is rebuilt on demand ([`Dataset::record`]), so a million-row table costs its columns
/// (about 60 bytes a row) rather than a record a row (about 500). Views read the index
/// (dictionary codes, metric columns) and ask for records only for the few rows they show.
#[derive(Clone, Debug, Default)]
pub struct Dataset {
    /// Runs of rows in order, each a file's rows (or part of one).
    runs: Vec<Run>,
    index: Index,
    /// The configurations ([`Dataset::configurations`]) with each row's, worked out on first
    /// use after each change.
    configurations: OnceLock<Arc<configs::Configurations>>,
}

/// The rows a filter lets through and every dimension's values with their counts under the
/// filters on the other dimensions, from one pass over the rows ([`Dataset::filter_pass`]).
#[derive(Clone, Debug, PartialEq)]
pub struct FilterPass {
    /// Indices of the matching records, in load order ([`Dataset::matching`]).
    pub rows: Vec<usize>,
    /// Every dimension's values with counts ([`Dataset::facets`]).
    pub facets: Vec<Facet>,
    /// Per configuration ([`Dataset::configurations`]): whether it matches. A filter keeps or
    /// drops a configuration's rows together, so `rows` are every row of these.
    pub configurations: Vec<bool>,
}

/// Consecutive rows kept the same way.
#[derive(Clone, Debug)]
struct Run {
    /// The first row.
    start: usize,
    /// Number of rows.
    len: usize,
    /// The records, or `None` for rows kept as the index alone.
    records: Option<Vec<Record>>,
}

/// Rows rebuilt at a time when an index is rebuilt from rows kept as columns.
const REBUILD_CHUNK: usize = 8_192;

impl Dataset {
    /// Indexes `records`. Cost is linear in records × dimensions, with one allocation per
    /// distinct value rather than per cell.
    pub fn new(records: Vec<Record>) -> Dataset {
        let mut ds = Dataset::default();
        ds.extend(records);
        ds
    }

    /// The index of the rows as they are now, rebuilt: records are indexed, rows kept as
    /// columns are rebuilt from the current index a chunk at a time and indexed.
    fn reindex(&mut self) {
        let mut index = Index::default();
        for run in &self.runs {
            match &run.records {
                Some(records) => index.append(Index::build(records)),
                None => {
                    let end = run.start + run.len;
                    let mut at = run.start;
                    while at < end {
                        let upto = (at + REBUILD_CHUNK).min(end);
                        let chunk: Vec<Record> =
                            (at..upto).filter_map(|r| self.index.record(r)).collect();
                        index.append(Index::build(&chunk));
                        at = upto;
                    }
                }
            }
        }
        self.index = index;
        self.configurations = OnceLock::new();
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
        let index = if index.len() == records.len() {
            index
        } else {
            Index::build(&records)
        };
        let n = records.len();
        self.push_run(n, Some(records), index)
    }

    /// Appends rows kept as their index alone: rows that carry only dimensions and metrics
    /// (no inferred fields, per-request detail or time series), as a table read into columns
    /// ([`crate::wire::TableRows`]); their records are rebuilt from the index when asked for.
    /// Returns the range of row indices they occupy.
    pub fn extend_columnar(&mut self, index: Index) -> std::ops::Range<usize> {
        let n = index.len();
        self.push_run(n, None, index)
    }

    fn push_run(
        &mut self,
        len: usize,
        records: Option<Vec<Record>>,
        index: Index,
    ) -> std::ops::Range<usize> {
        let start = self.len();
        if len > 0 {
            self.runs.push(Run {
                start,
                len,
                records,
            });
        }
        self.index.append(index);
        self.configurations = OnceLock::new();
        start..start + len
    }

    /// The run holding `row`.
    fn run_of(&self, row: usize) -> Option<&Run> {
        let i = self.runs.partition_point(|r| r.start + r.len <= row);
        self.runs.get(i).filter(|r| r.start <= row)
    }

    /// Record `row`: borrowed where rows are kept as records, rebuilt from the index where
    /// they are kept as columns. `None` past the last row.
    pub fn record(&self, row: usize) -> Option<Cow<'_, Record>> {
        let run = self.run_of(row)?;
        match &run.records {
            Some(records) => records.get(row - run.start).map(Cow::Borrowed),
            None => self.index.record(row).map(Cow::Owned),
        }
    }

    /// Record `row` where rows are kept as records; `None` for a row kept as columns (which
    /// carries only dimensions and metrics, see [`Dataset::kept_records`]) or past the end.
    pub fn kept_record(&self, row: usize) -> Option<&Record> {
        let run = self.run_of(row)?;
        run.records.as_ref()?.get(row - run.start)
    }

    /// The records of `rows` in order: borrowed when they are records of one file, else
    /// rebuilt ([`Dataset::record`]). Rows past the end are left out.
    pub fn records_in(&self, rows: std::ops::Range<usize>) -> Cow<'_, [Record]> {
        let end = rows.end.min(self.len());
        let start = rows.start.min(end);
        if let Some(run) = self.run_of(start) {
            if let Some(records) = &run.records {
                if end <= run.start + run.len {
                    return Cow::Borrowed(&records[start - run.start..end - run.start]);
                }
            }
        }
        Cow::Owned(
            (start..end)
                .filter_map(|r| self.record(r).map(Cow::into_owned))
                .collect(),
        )
    }

    /// Every record in row order ([`Dataset::record`] of each row).
    pub fn records(&self) -> impl Iterator<Item = Cow<'_, Record>> + '_ {
        (0..self.len()).filter_map(|row| self.record(row))
    }

    /// The records of the rows kept as records. Every other row carries only dimensions and
    /// metrics, so what only records can carry (per-request detail, time series, inferred
    /// fields) is found here or nowhere.
    pub fn kept_records(&self) -> impl Iterator<Item = &Record> + '_ {
        self.runs
            .iter()
            .filter_map(|r| r.records.as_deref())
            .flatten()
    }

    /// The first (in key order) metric record `row` has, from the index.
    pub fn first_metric(&self, row: usize) -> Option<&MetricKey> {
        let set = self.index.row_metric_set.try_get(row)?;
        let first = *self.index.metric_sets.get(set as usize)?.first()?;
        self.index.metric_keys.get(first as usize)
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
        let end = rows.end.min(self.len());
        let start = rows.start.min(end);
        if start == end {
            return;
        }
        let mut runs = Vec::with_capacity(self.runs.len());
        for mut run in std::mem::take(&mut self.runs) {
            let (a, b) = (run.start, run.start + run.len);
            // The part of the run inside the removed rows.
            let (cut_a, cut_b) = (start.clamp(a, b), end.clamp(a, b));
            if let Some(records) = &mut run.records {
                records.drain(cut_a - a..cut_b - a);
            }
            let kept_before = cut_a - a;
            run.len -= cut_b - cut_a;
            if run.records.is_none() && cut_a < cut_b && kept_before > 0 && cut_b < b {
                // A hole inside a run of columns: two runs, so rows keep their place in the
                // old index until it is rebuilt.
                runs.push(Run {
                    start: a,
                    len: kept_before,
                    records: None,
                });
                run = Run {
                    start: cut_b,
                    len: b - cut_b,
                    records: None,
                };
            } else if run.records.is_none() && kept_before == 0 {
                run.start = cut_b;
            }
            if run.len > 0 {
                runs.push(run);
            }
        }
        // Runs of columns still point at their rows in the old index: rebuild from it, then
        // number the rows afresh.
        self.runs = runs;
        self.reindex();
        let mut at = 0;
        for run in &mut self.runs {
            run.start = at;
            at += run.len;
        }
    }

    /// Changes the records in `rows` in place, then re-indexes. Rows kept as columns become
    /// records first (their run's rows, as the records a change may add fields to).
    pub fn update_rows<E>(
        &mut self,
        rows: std::ops::Range<usize>,
        mut f: impl FnMut(&mut Record) -> Result<(), E>,
    ) -> Result<(), E> {
        let end = rows.end.min(self.len());
        let start = rows.start.min(end);
        for i in 0..self.runs.len() {
            let run = &self.runs[i];
            if run.records.is_none() && run.start < end && start < run.start + run.len {
                let records = (run.start..run.start + run.len)
                    .filter_map(|r| self.index.record(r))
                    .collect();
                self.runs[i].records = Some(records);
            }
        }
        let mut outcome = Ok(());
        'runs: for run in &mut self.runs {
            let Some(records) = &mut run.records else {
                continue;
            };
            for (k, r) in records.iter_mut().enumerate() {
                let row = run.start + k;
                if row < start || row >= end {
                    continue;
                }
                if let Err(e) = f(r) {
                    outcome = Err(e);
                    break 'runs;
                }
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
        let mut unseen = seen_sets.len();
        let mut present = vec![false; self.index.metric_keys.len()];
        for &row in rows {
            // Once every set is seen the other rows cannot add a metric (a table whose rows
            // all have the same metrics stops at its first row).
            if unseen == 0 {
                break;
            }
            let Some(set) = self.index.row_metric_set.try_get(row) else {
                continue;
            };
            if !std::mem::replace(&mut seen_sets[set as usize], true) {
                unseen -= 1;
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

    /// Every record, in load order (records of rows kept as columns rebuilt).
    pub fn into_records(self) -> Vec<Record> {
        if self.runs.iter().all(|r| r.records.is_some()) {
            return self
                .runs
                .into_iter()
                .flat_map(|r| r.records.unwrap_or_default())
                .collect();
        }
        self.records().map(Cow::into_owned).collect()
    }

    /// Number of records.
    pub fn len(&self) -> usize {
        self.index.rows
    }

    /// Whether there are no records.
    pub fn is_empty(&self) -> bool {
        self.index.rows == 0
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

    /// Indices of the records matching `filter`, in load order.
    pub fn matching(&self, filter: &Filter) -> Vec<usize> {
        let masks = self.masks(filter);
        if masks.iter().any(|(ci, _)| *ci == usize::MAX) {
            return Vec::new();
        }
        let columns = &self.index.columns;
        let n = self.len();
        // One match on the width for the whole pass when every constrained column is a byte a
        // row (dictionaries below 256 values, the usual case), else one a code read.
        let bytes: Option<Vec<(&[u8], &[bool])>> = masks
            .iter()
            .map(|(ci, pass)| match columns.get(*ci).map(|c| &c.codes) {
                Some(Codes::U8(v)) => Some((v.as_slice(), pass.as_slice())),
                _ => None,
            })
            .collect();
        match bytes {
            Some(checks) => rows_passing(&checks, n),
            None => {
                let checks: Vec<(&Codes, &[bool])> = masks
                    .iter()
                    .filter_map(|(ci, pass)| Some((&columns.get(*ci)?.codes, pass.as_slice())))
                    .collect();
                rows_passing(&checks, n)
            }
        }
    }

    /// The records matching `filter`.
    pub fn filtered<'a>(&'a self, filter: &Filter) -> impl Iterator<Item = Cow<'a, Record>> + 'a {
        self.matching(filter)
            .into_iter()
            .filter_map(move |i| self.record(i))
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
    /// Counted per configuration whatever the number of dimensions ([`Dataset::filter_pass`]).
    pub fn facets(&self, filter: &Filter) -> Vec<Facet> {
        self.filter_pass(filter).facets
    }

    /// [`Dataset::matching`] and [`Dataset::facets`] together. A filter is decided once per
    /// configuration ([`Dataset::configurations`]: rows of one configuration have the same
    /// codes): a configuration no filter rejects matches and counts its rows in every
    /// dimension, one exactly one filter rejects counts them in that filter's dimension only.
    /// The matching rows are then one pass over the rows' configuration numbers.
    pub fn filter_pass(&self, filter: &Filter) -> FilterPass {
        let masks = self.masks(filter);
        let impossible = masks.iter().any(|(ci, _)| *ci == usize::MAX);
        let columns = &self.index.columns;
        let mut counts: Vec<Vec<usize>> =
            columns.iter().map(|c| vec![0; c.dict.len() + 1]).collect();
        let mut rows = Vec::new();
        let configs = self.configuration_index();
        let mut selected = vec![false; configs.firsts.len()];
        if !impossible {
            // One match on the width for the whole pass when every column is a byte a row
            // (dictionaries below 256 values, the usual case), else one a code read.
            let bytes: Option<Vec<&[u8]>> = columns
                .iter()
                .map(|c| match &c.codes {
                    Codes::U8(v) => Some(v.as_slice()),
                    _ => None,
                })
                .collect();
            let matching = match bytes {
                Some(cols) => pass_configs(&cols, &masks, configs, &mut counts, &mut selected),
                None => {
                    let cols: Vec<&Codes> = columns.iter().map(|c| &c.codes).collect();
                    pass_configs(&cols, &masks, configs, &mut counts, &mut selected)
                }
            };
            rows = if masks.is_empty() {
                (0..self.len()).collect()
            } else {
                configs.of_row.rows_where(&selected, matching)
            };
        }
        let facets = self.facets_of(filter, counts);
        FilterPass {
            rows,
            facets,
            configurations: selected,
        }
    }

    /// Every dimension's values with their `counts` (per column, by code).
    fn facets_of(&self, filter: &Filter, counts: Vec<Vec<usize>>) -> Vec<Facet> {
        let columns = &self.index.columns;
        columns
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
                if col.missing > 0 {
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

    /// One row of each configuration: the first row of every distinct combination of all
    /// dimensions' values and set of metrics, in load order. Rows of one configuration differ
    /// only in their metrics' values, so whatever asks which values occur together (which
    /// dimensions merge into a chart's points, how many series there are) gets the same
    /// answer from these rows as from every row: a table of a million rows of a few thousand
    /// configurations is walked once (per change of the dataset) rather than per question.
    pub fn configurations(&self) -> Arc<Vec<usize>> {
        self.configuration_index().firsts.clone()
    }

    /// Calls `f(row, configuration)` for each of `rows` (every row when `None`), in order,
    /// with the row's configuration numbered as [`Dataset::configurations`] lists them.
    pub fn each_configuration(&self, rows: Option<&[usize]>, f: impl FnMut(usize, u32)) {
        self.configuration_index().of_row.each(rows, f);
    }

    /// The configurations with each row's, worked out once per change of the dataset (one
    /// pass over the rows; a byte a row for up to 256 configurations, two for up to 65,536,
    /// else four).
    fn configuration_index(&self) -> &configs::Configurations {
        self.configurations
            .get_or_init(|| Arc::new(configs::Configurations::new(&self.index)))
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
        assert_eq!(*gpu.codes, [1, 2, 1, 0]);
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

    /// A plain record (dimensions and metrics only), as a table read into columns holds.
    fn plain(engine: &str, gpu: Option<&str>, batch: u64, ttft: Option<f64>) -> Record {
        let mut r = rec(engine, gpu, batch);
        if let Some(v) = ttft {
            r.set_metric(MetricKey::OutputThroughput, v);
        }
        r.tags.insert("site".into(), format!("s{}", batch % 3));
        r
    }

    /// The same rows, the middle file kept as its index alone.
    fn mixed() -> (Vec<Record>, Dataset) {
        let first = vec![
            plain("vllm", Some("A100"), 1, Some(1.0)),
            rec("tgi", None, 2),
        ];
        let table = vec![
            plain("sglang", Some("H100"), 8, Some(2.5)),
            plain("vllm", None, 4, None),
            plain("trtllm", Some("A100"), 8, Some(f64::NAN)),
            plain("sglang", Some("B200"), 16, Some(7.0)),
        ];
        let last = vec![plain("tgi", Some("H100"), 1, Some(3.0))];
        let mut ds = Dataset::new(first.clone());
        assert_eq!(ds.extend_columnar(Index::build(&table)), 2..6);
        assert_eq!(ds.extend(last.clone()), 6..7);
        let all: Vec<Record> = first.into_iter().chain(table).chain(last).collect();
        (all, ds)
    }

    /// Records compared through their debug text: a NaN metric equals itself there.
    fn dbg(x: impl std::fmt::Debug) -> String {
        format!("{x:?}")
    }

    #[test]
    fn rows_kept_as_columns_read_as_their_records() {
        let (all, ds) = mixed();
        let reference = Dataset::new(all.clone());
        assert_eq!(ds.len(), 7);
        assert_eq!(ds.index(), reference.index());
        for (i, r) in all.iter().enumerate() {
            assert_eq!(dbg(ds.record(i).as_deref()), dbg(Some(r)), "row {i}");
            assert_eq!(ds.kept_record(i).is_some(), !(2..6).contains(&i), "row {i}");
        }
        assert!(ds.record(7).is_none());
        assert_eq!(ds.kept_records().count(), 3);
        let f = Filter::all().select(Dim::Engine, Some("sglang".into()));
        assert_eq!(ds.matching(&f), [2, 5]);
        let filtered: Vec<Record> = ds.filtered(&f).map(Cow::into_owned).collect();
        assert_eq!(dbg(&filtered), dbg(&[all[2].clone(), all[5].clone()]));
        assert_eq!(ds.facets(&f), reference.facets(&f));
        assert_eq!(dbg(&*ds.records_in(0..2)), dbg(&all[0..2]));
        assert!(matches!(ds.records_in(0..2), Cow::Borrowed(_)));
        assert_eq!(dbg(&*ds.records_in(1..4)), dbg(&all[1..4]));
        assert_eq!(dbg(&*ds.records_in(5..99)), dbg(&all[5..7]));
        assert_eq!(ds.first_metric(1), None);
        assert_eq!(ds.first_metric(2), Some(&MetricKey::OutputThroughput));
        assert_eq!(dbg(ds.clone().into_records()), dbg(&all));
    }

    #[test]
    fn removing_and_changing_rows_kept_as_columns() {
        // Every cut: across runs, inside the table, all of it.
        for (a, b) in [(0, 3), (3, 5), (2, 6), (1, 7), (4, 4), (5, 7), (0, 7)] {
            let (mut all, mut ds) = mixed();
            ds.remove_rows(a..b);
            all.drain(a..b);
            let reference = Dataset::new(all.clone());
            assert_eq!(ds.index(), reference.index(), "{a}..{b}");
            let got: Vec<Record> = ds.records().map(Cow::into_owned).collect();
            assert_eq!(dbg(got), dbg(&all), "{a}..{b}");
        }
        let (mut all, mut ds) = mixed();
        ds.update_rows(3..5, |r| {
            r.set_inferred(&Dim::Model.into(), "m".into(), "user")
        })
        .unwrap();
        for r in &mut all[3..5] {
            r.set_inferred(&Dim::Model.into(), "m".into(), "user")
                .unwrap();
        }
        assert_eq!(ds.index(), Dataset::new(all.clone()).index());
        assert!(ds.any_inferred());
        let got: Vec<Record> = ds.records().map(Cow::into_owned).collect();
        assert_eq!(dbg(got), dbg(all));
        // The changed file is kept as records now.
        assert!(ds.kept_record(2).is_some());
    }

    #[test]
    fn one_pass_gives_the_matching_rows_and_every_count() {
        let ds = sample();
        let vllm = Filter::all().select(Dim::Engine, Some("vllm".into()));
        let a100_or_none = Filter::all()
            .select(Dim::Gpu, Some("A100".into()))
            .select(Dim::Gpu, None);
        let both = vllm.clone().select(Dim::BatchSize, Some(8.0.into()));
        let nothing = Filter::all().select(Dim::Model, Some("llama".into()));
        for f in [Filter::all(), vllm, a100_or_none, both, nothing] {
            let pass = ds.filter_pass(&f);
            assert_eq!(pass.rows, ds.matching(&f), "{f:?}");
            assert_eq!(pass.facets, ds.facets(&f), "{f:?}");
        }
        let pass = ds.filter_pass(
            &Filter::all()
                .select(Dim::Gpu, None)
                .select(Dim::Engine, Some("tgi".into())),
        );
        assert_eq!(pass.rows, [3]);
        let facet = |d: Dim| pass.facets.iter().find(|f| f.key == d.into()).unwrap();
        let gpu: Vec<(Option<String>, usize, bool)> = facet(Dim::Gpu)
            .values
            .iter()
            .map(|v| {
                (
                    v.value.as_ref().map(ToString::to_string),
                    v.count,
                    v.selected,
                )
            })
            .collect();
        // Under the engine filter alone: tgi has no GPU.
        assert_eq!(
            gpu,
            [
                (Some("A100".into()), 0, false),
                (Some("H100".into()), 0, false),
                (None, 1, true)
            ]
        );
        let engines: Vec<usize> = facet(Dim::Engine).values.iter().map(|v| v.count).collect();
        // Under the GPU filter alone: only tgi has no GPU.
        assert_eq!(engines, [0, 1, 0]);
    }

    #[test]
    fn one_row_of_each_configuration() {
        let mut records = vec![
            rec("vllm", Some("A100"), 1),
            rec("vllm", Some("A100"), 1),
            rec("vllm", None, 1),
            rec("tgi", Some("A100"), 1),
            rec("vllm", None, 1),
            rec("vllm", Some("A100"), 1),
        ];
        // The same dimensions with a metric: another configuration.
        records[5].set_metric(MetricKey::OutputThroughput, 1.0);
        let mut ds = Dataset::new(records);
        assert_eq!(*ds.configurations(), [0, 2, 3, 5]);
        // Kept until the rows change.
        assert!(Arc::ptr_eq(&ds.configurations(), &ds.configurations()));
        ds.extend(vec![
            rec("tgi", Some("H100"), 1),
            rec("vllm", Some("A100"), 1),
        ]);
        assert_eq!(*ds.configurations(), [0, 2, 3, 5, 6]);
        ds.remove_rows(0..1);
        assert_eq!(*ds.configurations(), [0, 1, 2, 4, 5]);
        // Past 2^26 combinations they are hashed, past 2^64 told apart by their codes.
        for tags in [5, 20] {
            let wide: Vec<Record> = (0..80u64)
                .map(|i| {
                    let mut r = rec("vllm", None, 1);
                    for t in 0..tags {
                        r.tags.insert(format!("t{t}"), format!("{}", (i + t) % 40));
                    }
                    r
                })
                .collect();
            let firsts: Vec<usize> = (0..40).collect();
            assert_eq!(*Dataset::new(wide).configurations(), firsts, "{tags} tags");
        }
        assert!(Dataset::default().configurations().is_empty());
    }

    /// The filter pass before configurations (the reference for [`Dataset::filter_pass`]):
    /// one pass over the rows: a
    /// row no filter rejects matches and counts in every dimension, a row exactly one filter
    /// rejects counts in that filter's dimension only.
    fn filter_pass_by_rows(ds: &Dataset, filter: &Filter) -> FilterPass {
        let masks = ds.masks(filter);
        let impossible = masks.iter().any(|(ci, _)| *ci == usize::MAX);
        let columns = &ds.index.columns;
        let n = ds.len();
        let mut counts: Vec<Vec<usize>> =
            columns.iter().map(|c| vec![0; c.dict.len() + 1]).collect();
        let mut rows = Vec::new();
        if impossible {
            // No row matches and every count stays 0.
        } else if masks.is_empty() {
            // No filter: every row matches; each column counts its codes on its own.
            rows = (0..n).collect();
            for (col, counts) in columns.iter().zip(&mut counts) {
                for c in col.codes.iter().take(n) {
                    if let Some(x) = counts.get_mut(c as usize) {
                        *x += 1;
                    }
                }
            }
        } else {
            let checks: Vec<(usize, &Codes, &[bool])> = masks
                .iter()
                .map(|(ci, pass)| (*ci, &columns[*ci].codes, pass.as_slice()))
                .collect();
            let passes = |codes: &Codes, pass: &[bool], row: usize| {
                codes
                    .try_get(row)
                    .and_then(|c| pass.get(c as usize))
                    .copied()
                    .unwrap_or(false)
            };
            let count = |counts: &mut Vec<usize>, codes: &Codes, row: usize| {
                if let Some(x) = codes.try_get(row).and_then(|c| counts.get_mut(c as usize)) {
                    *x += 1;
                }
            };
            for row in 0..n {
                // Which constrained column (if exactly one) rejects this row.
                let mut failing = usize::MAX;
                let mut failures = 0;
                for &(ci, codes, pass) in &checks {
                    if !passes(codes, pass, row) {
                        failures += 1;
                        failing = ci;
                        if failures > 1 {
                            break;
                        }
                    }
                }
                match failures {
                    0 => {
                        rows.push(row);
                        for (col, counts) in columns.iter().zip(&mut counts) {
                            count(counts, &col.codes, row);
                        }
                    }
                    1 => {
                        if let (Some(col), Some(counts)) =
                            (columns.get(failing), counts.get_mut(failing))
                        {
                            count(counts, &col.codes, row);
                        }
                    }
                    _ => {}
                }
            }
        }
        let facets = ds.facets_of(filter, counts);
        // A configuration matches when its first row does (its rows go together).
        let configurations = ds
            .configurations()
            .iter()
            .map(|first| rows.binary_search(first).is_ok())
            .collect();
        FilterPass {
            rows,
            facets,
            configurations,
        }
    }

    /// Records from `(engine, gpu, batch, site, metric)` choices.
    fn generated(rows: &[(u8, u8, u16, u8, u8)]) -> Vec<Record> {
        let engines = ["vllm", "sglang", "tgi"];
        let gpus = [None, Some("A100"), Some("H100")];
        rows.iter()
            .map(|&(e, g, b, site, m)| {
                let mut r = rec(
                    engines[usize::from(e) % 3],
                    gpus[usize::from(g) % 3],
                    u64::from(b),
                );
                if site % 4 != 0 {
                    r.tags.insert("site".into(), format!("s{}", site % 4));
                }
                match m % 3 {
                    0 => {}
                    1 => r.set_metric(MetricKey::OutputThroughput, f64::from(b) * 1.5),
                    _ => r.set_metric(MetricKey::Completed, f64::from(site)),
                }
                r
            })
            .collect()
    }

    /// A filter from `(dimension, value)` choices: engine, gpu (with "no value"), batch,
    /// site, and a dimension no record has.
    fn generated_filter(choices: &[(u8, u8)]) -> Filter {
        let mut f = Filter::all();
        for &(d, v) in choices {
            f = match d % 5 {
                0 => f.select(
                    Dim::Engine,
                    Some(["vllm", "sglang", "tgi", "trt"][usize::from(v) % 4].into()),
                ),
                1 => f.select(
                    Dim::Gpu,
                    [None, Some("A100".into()), Some("H100".into())][usize::from(v) % 3].clone(),
                ),
                2 => f.select(Dim::BatchSize, Some(f64::from(v % 8).into())),
                3 => f.select(
                    DimKey::Tag("site".into()),
                    (v % 4 != 0).then(|| format!("s{}", v % 4).into()),
                ),
                _ => f.select(Dim::Model, (v % 2 == 0).then(|| "llama".into())),
            };
        }
        f
    }

    proptest::proptest! {
        #[test]
        fn filter_pass_by_configuration_equals_the_pass_over_rows(
            rows in proptest::collection::vec((0u8..3, 0u8..3, 0u16..8, 0u8..4, 0u8..3), 0..120),
            choices in proptest::collection::vec((0u8..5, 0u8..8), 0..5),
            cut in 0usize..40,
        ) {
            let f = generated_filter(&choices);
            let records = generated(&rows);
            // Kept as records; part kept as columns; after rows are removed.
            let mut ds = Dataset::new(records.clone());
            let pass = ds.filter_pass(&f);
            proptest::prop_assert_eq!(&pass, &filter_pass_by_rows(&ds, &f));
            proptest::prop_assert_eq!(&ds.matching(&f), &pass.rows);
            // The metrics of the matching rows, every row looked at.
            let metrics: BTreeSet<MetricKey> = pass
                .rows
                .iter()
                .flat_map(|&r| records[r].metrics.keys().cloned())
                .collect();
            proptest::prop_assert_eq!(
                ds.metrics_present(&pass.rows),
                metrics.into_iter().collect::<Vec<_>>()
            );
            let half = records.len() / 2;
            let mut mixed = Dataset::new(records[..half].to_vec());
            mixed.extend_columnar(Index::build(&records[half..]));
            proptest::prop_assert_eq!(mixed.filter_pass(&f), filter_pass_by_rows(&ds, &f));
            ds.remove_rows(cut..cut + 7);
            proptest::prop_assert_eq!(ds.filter_pass(&f), filter_pass_by_rows(&ds, &f));
        }
    }

    #[test]
    fn filter_pass_over_hundreds_of_configurations() {
        // 3 engines x 3 GPUs x 400 batches: 3,600 configurations, two bytes a row.
        let rows: Vec<(u8, u8, u16, u8, u8)> = (0..4000u16)
            .map(|i| ((i % 3) as u8, ((i / 3) % 3) as u8, i % 400, 1, 1))
            .collect();
        let ds = Dataset::new(generated(&rows));
        assert_eq!(ds.configuration_index().of_row.width(), 2);
        assert_eq!(ds.configurations().len(), 3600);
        for choices in [
            vec![],
            vec![(0, 0)],
            vec![(0, 1), (1, 2)],
            vec![(2, 3), (4, 1)],
        ] {
            let f = generated_filter(&choices);
            assert_eq!(ds.filter_pass(&f), filter_pass_by_rows(&ds, &f), "{f:?}");
        }
        let f = generated_filter(&[(0, 1), (1, 2)]);
        let pass = ds.filter_pass(&f);
        // sglang on H100: i % 3 == 1 and (i / 3) % 3 == 2.
        let expected: Vec<usize> = (0..4000)
            .filter(|i| i % 3 == 1 && (i / 3) % 3 == 2)
            .collect();
        assert_eq!(pass.rows, expected);
    }

    #[test]
    fn row_configurations_as_narrow_as_their_count() {
        for (count, width) in [(1, 1), (256, 1), (257, 2), (65_536, 2), (65_537, 4)] {
            // Numbered in order of first appearance, then the first again: the numbers kept
            // before a widening survive it.
            let ids: Vec<u32> = (0..count).chain([0]).collect();
            let mut narrow = configs::RowConfigs::default();
            for &id in &ids {
                narrow.push(id, ids.len());
            }
            assert_eq!(narrow.width(), width, "{count}");
            let mut seen = Vec::new();
            narrow.each(None, |row, id| seen.push((row, id)));
            let expected: Vec<(usize, u32)> = ids.iter().copied().enumerate().collect();
            assert_eq!(seen, expected, "{count}");
            let last = count as usize - 1;
            let mut selected = vec![false; count as usize];
            selected[last] = true;
            let rows = narrow.rows_where(&selected, 1);
            let want: Vec<usize> = if last == 0 { vec![0, 1] } else { vec![last] };
            assert_eq!(rows, want, "{count}");
            let picked = [last, 0];
            let mut some = Vec::new();
            narrow.each(Some(&picked), |row, id| some.push((row, id)));
            assert_eq!(some, [(last, last as u32), (0, 0)], "{count}");
        }
    }

    #[test]
    fn index_codes_widen_in_place_as_appends_bring_values() {
        // Batch sizes 0, 1, 2, ... (code = batch + 1), one GPU and one metric set throughout:
        // the batch column crosses 255 and then 65,535 values as runs are appended.
        let records: Vec<Record> = (0..66_000u64)
            .map(|b| {
                let mut r = rec("vllm", Some("A100"), b);
                r.set_metric(MetricKey::OutputThroughput, b as f64);
                r
            })
            .collect();
        let batch = |i: &Index| -> Column {
            let key = DimKey::Known(Dim::BatchSize);
            i.columns.iter().find(|c| c.key == key).cloned().unwrap()
        };
        let mut appended = Index::default();
        let mut start = 0;
        for (end, width) in [
            (200, 1),
            (255, 1),
            (256, 2),
            (400, 2),
            (65_535, 2),
            (65_536, 4),
            (66_000, 4),
        ] {
            appended.append(Index::build(&records[start..end]));
            start = end;
            let built = Index::build(&records[..end]);
            assert_eq!(appended, built, "{end}");
            let (a, b) = (batch(&appended), batch(&built));
            assert_eq!((a.codes.width(), b.codes.width()), (width, width), "{end}");
            assert_eq!(a.codes.len(), end);
            assert_eq!((a.codes.get(0), a.codes.get(end - 1)), (1, end as u32));
            assert!(a.codes.iter().eq(1..=end as u32));
            assert_eq!(a.missing, 0);
            // One GPU, one set of metrics: no byte a row.
            let gpu = appended.columns.iter().find(|c| c.key == Dim::Gpu.into());
            assert_eq!(gpu.map(|c| c.codes.heap_bytes()), Some(0));
            assert_eq!(appended.row_metric_set.heap_bytes(), 0);
            assert_eq!(appended.row_metric_set.len(), end);
        }
        // A row without a batch size and with another set of metrics widens nothing.
        let mut other = rec("vllm", Some("A100"), 0);
        other.batch_size = None;
        appended.append(Index::build(&[other]));
        let a = batch(&appended);
        assert_eq!((a.codes.width(), a.codes.get(66_000), a.missing), (4, 0, 1));
        assert_eq!(appended.row_metric_set.width(), 1);
        assert_eq!(
            (
                appended.row_metric_set.get(0),
                appended.row_metric_set.get(66_000)
            ),
            (0, 1)
        );
        let ds = Dataset::new(records);
        let f = Filter::all().select(Dim::BatchSize, Some(DimValue::Num(65_535.0)));
        assert_eq!(ds.matching(&f), vec![65_535]);
        assert_eq!(ds.filter_pass(&f).rows, vec![65_535]);
    }

    #[test]
    fn empty_dataset() {
        let ds = Dataset::new(Vec::new());
        assert!(ds.matching(&Filter::all()).is_empty());
        assert!(ds.facets(&Filter::all()).is_empty());
    }
}
