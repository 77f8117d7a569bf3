//! The dataset store: records (or, for a table of dimensions and metrics, no records at all)
//! plus a dictionary-encoded index of every dimension and a column per metric, answering
//! "which records match this filter" and "which values does each dimension take, with counts
//! under the other filters" together: decided once per configuration (distinct combination of
//! dimension values and metric set, [`Dataset::configurations`]), then one pass over the
//! rows' configuration numbers.

mod configs;
mod filter;
mod index;

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

pub use filter::{Facet, FacetValue, Filter};
pub(crate) use index::Column;
pub use index::{Index, IndexError, MetricValues};

use super::columns::{CodeRows, Codes};
use super::dim::{DimKey, DimValue};
use super::metric::MetricKey;
use super::record::Record;

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
mod tests;
