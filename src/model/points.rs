//! The rule for what a chart point means: **a point is one configuration.**
//!
//! Records that land on one point (same x, same series, same panel) and still differ in some
//! dimension were measured under different configurations; averaging them silently draws a
//! number nobody measured. This module finds such dimensions ([`merged_dims`]), lets the
//! defaults turn them into series or panels (small multiples), and describes what is left
//! ([`PointMerge`]: "mean of 4: output length 128 – 1024") for the chart and its hover text.
//!
//! Two kinds of columns never count as configuration:
//! - provenance (`format`): where a result was written, not what was measured;
//! - measured token lengths ([`is_measured_column`]): a mean of what the run produced (seed
//!   003's output length 58.43115234375), one value per record. Those are measurements, not
//!   dimensions: they never split points, series or filters into one-record choices.

use std::collections::{BTreeSet, HashMap};

use crate::model::columns::Codes;
use crate::model::{ColumnRef, Dataset, Dim, DimKey, DimValue, MetricKey, Record};

/// Dimensions tried first, in order, to split series or panels; every other configuration
/// dimension follows in canonical order, `source` last. `date` and `label` are never chosen:
/// records differing only there are runs of one configuration.
pub const SERIES_PREFERENCE: [Dim; 16] = [
    Dim::Engine,
    Dim::Gpu,
    Dim::Model,
    Dim::EngineVersion,
    Dim::GpuCount,
    Dim::Tp,
    Dim::Pp,
    Dim::Precision,
    Dim::Dataset,
    Dim::InputLen,
    Dim::OutputLen,
    Dim::BatchSize,
    Dim::MaxConcurrency,
    Dim::RequestRate,
    Dim::NumPrompts,
    Dim::Burstiness,
];

/// Token-length dimensions that a reader may fill with a measured mean rather than a setting.
pub(crate) const LENGTH_DIMS: [Dim; 2] = [Dim::InputLen, Dim::OutputLen];

/// Whether a dimension only says where a result was written (`format`). Differing formats
/// always come with differing `source`, which is reported instead.
pub fn is_format(k: &DimKey) -> bool {
    *k == DimKey::Known(Dim::Format)
}

/// Whether a token-length column holds measurements: some value has a fraction (a mean of
/// token counts, not a requested length) and nearly every record has its own value (at least
/// four distinct values for every five records that have one).
pub fn is_measured_column(distinct: &[DimValue], records_with_value: usize) -> bool {
    let fractional = distinct
        .iter()
        .filter_map(DimValue::as_f64)
        .any(|v| v.is_finite() && v.fract() != 0.0);
    fractional && distinct.len() >= 3 && distinct.len() * 5 >= records_with_value * 4
}

/// The token-length dimensions of `ds` whose values are measured (see [`is_measured_column`]).
pub fn measured_dims(ds: &Dataset) -> Vec<DimKey> {
    LENGTH_DIMS
        .iter()
        .map(|d| DimKey::Known(*d))
        .filter(|k| {
            ds.column(k).is_some_and(|c| {
                let with_value = c.codes.len() - c.codes.count(0);
                is_measured_column(c.dict, with_value)
            })
        })
        .collect()
}

/// [`measured_dims`] for a plain list of records (the matching of compared sides).
pub fn measured_dims_of<'a>(records: impl Iterator<Item = &'a Record> + Clone) -> Vec<DimKey> {
    LENGTH_DIMS
        .iter()
        .map(|d| DimKey::Known(*d))
        .filter(|k| {
            let values: Vec<DimValue> = records.clone().filter_map(|r| r.dim(k)).collect();
            let distinct: BTreeSet<&DimValue> = crate::model::order::set_of(values.iter());
            let distinct: Vec<DimValue> = distinct.into_iter().cloned().collect();
            is_measured_column(&distinct, values.len())
        })
        .collect()
}

/// Tags naming the system a result was measured on (MLPerf's `sut`, a `system` column):
/// like the engine, the GPU and the model, never one line across two of them.
pub const SYSTEM_TAGS: [&str; 4] = ["sut", "system", "system_name", "submitter"];

/// Whether a dimension names the system measured ([`SYSTEM_TAGS`], engine, GPU, model).
pub fn is_system_dim(k: &DimKey) -> bool {
    match k {
        DimKey::Known(d) => matches!(d, Dim::Engine | Dim::Gpu | Dim::Model),
        DimKey::Tag(t) => SYSTEM_TAGS.contains(&t.to_ascii_lowercase().as_str()),
    }
}

/// The system dimensions ([`is_system_dim`]) taking two or more values among the records at
/// `indices` that are drawn (with a value of `x` and, when given, of `metric`): records of
/// different systems, even at different x values, are different lines. Canonical order.
pub fn varying_systems(
    ds: &Dataset,
    indices: &[usize],
    x: &DimKey,
    metric: Option<&MetricKey>,
) -> Vec<DimKey> {
    let x_col = ds.column(x);
    let values = metric.map(|m| ds.metric_values(m));
    let drawn = |i: usize| {
        x_col.is_some_and(|c| c.codes.get(i) != 0)
            && values
                .as_ref()
                .is_none_or(|v| v.as_ref().and_then(|v| v.get(i)).is_some())
    };
    configuration_dims(ds)
        .into_iter()
        .filter(|k| k != x && is_system_dim(k))
        .filter(|k| {
            let Some(c) = ds.column(k) else { return false };
            let mut first: Option<u32> = None;
            indices.iter().filter(|&&i| drawn(i)).any(|&i| {
                let code = c.codes.get(i);
                *first.get_or_insert(code) != code
            })
        })
        .collect()
}

/// The dimensions that describe a configuration in `ds`: every indexed dimension except
/// `format` and measured token lengths, in canonical order.
pub fn configuration_dims(ds: &Dataset) -> Vec<DimKey> {
    let measured = measured_dims(ds);
    ds.dim_keys()
        .filter(|k| !is_format(k) && !measured.contains(k))
        .cloned()
        .collect()
}

/// The configuration dimensions (other than `group_by`) that take two or more values
/// (a missing value counts as one) among the records of some group, where a group is the
/// records at `indices` sharing their values of `group_by`. Records without a value for the
/// first `group_by` dimension (the x axis) or without `metric` are not drawn, so not counted.
/// Canonical order.
pub fn merged_dims(
    ds: &Dataset,
    indices: &[usize],
    group_by: &[DimKey],
    metric: Option<&MetricKey>,
) -> Vec<DimKey> {
    let candidates: Vec<DimKey> = configuration_dims(ds)
        .into_iter()
        .filter(|k| !group_by.contains(k))
        .collect();
    let group_cols: Vec<_> = group_by.iter().map(|k| ds.column(k)).collect();
    let cand_cols: Vec<_> = candidates
        .iter()
        .map(|k| ds.column(k).map(|c| c.codes))
        .collect();
    // Per group: the first record's candidate codes; a candidate is merged once any record
    // of a group disagrees with that first record.
    let mut groups = Combos::new(
        group_cols
            .iter()
            .map(|c| c.map(|c| (c.codes, c.dict.len()))),
    );
    let mut firsts: Vec<Vec<u32>> = Vec::new();
    let mut merged = vec![false; candidates.len()];
    let values = metric.map(|m| ds.metric_values(m));
    for &i in indices {
        if group_cols
            .first()
            .is_some_and(|c| c.map_or(0, |c| c.codes.get(i)) == 0)
        {
            continue;
        }
        // Records without the metric are not drawn (a metric no record has: none is).
        if let Some(values) = &values {
            if values.as_ref().and_then(|v| v.get(i)).is_none() {
                continue;
            }
        }
        let codes = cand_cols.iter().map(|c| c.map_or(0, |c| c.get(i)));
        let g = groups.id(i) as usize;
        match firsts.get(g) {
            Some(first) => {
                for ((m, &f), c) in merged.iter_mut().zip(first).zip(codes) {
                    *m |= f != c;
                }
            }
            None => firsts.push(codes.collect()),
        }
    }
    candidates
        .into_iter()
        .zip(merged)
        .filter_map(|(k, m)| m.then_some(k))
        .collect()
}

/// Numbers the distinct combinations of a few dictionary-coded columns' codes, in order of
/// first appearance, for grouping a million rows without building and hashing a key per row:
/// the codes make one mixed-radix number, looked up in a flat table when the combinations
/// are few (as chart groups are), else hashed as that number.
pub struct Combos<'a> {
    /// The columns' codes (`None`: a column no record has, always code 0).
    columns: Vec<Option<&'a Codes>>,
    /// Per column: its dictionary's length + 1 (the codes it can hold).
    radix: Vec<u64>,
    table: ComboTable,
    next: u32,
}

enum ComboTable {
    Flat(Vec<u32>),
    Hashed(HashMap<u64, u32>),
    Keys(HashMap<Vec<u32>, u32>),
}

/// Most cells of a flat table (4 MiB of `u32`).
const FLAT_COMBOS: u64 = 1 << 20;

impl<'a> Combos<'a> {
    /// Groups by `columns`: each its codes and its dictionary's length.
    pub fn new(columns: impl Iterator<Item = Option<(&'a Codes, usize)>>) -> Combos<'a> {
        let (columns, radix): (Vec<_>, Vec<u64>) = columns
            .map(|c| match c {
                Some((codes, dict)) => (Some(codes), dict as u64 + 1),
                None => (None, 1),
            })
            .unzip();
        let cells = radix.iter().try_fold(1u64, |acc, &r| acc.checked_mul(r));
        let table = match cells {
            Some(n) if n <= FLAT_COMBOS => ComboTable::Flat(vec![u32::MAX; n as usize]),
            Some(_) => ComboTable::Hashed(HashMap::new()),
            None => ComboTable::Keys(HashMap::new()),
        };
        Combos {
            columns,
            radix,
            table,
            next: 0,
        }
    }

    fn code(&self, column: usize, row: usize) -> u32 {
        self.columns[column].map_or(0, |c| c.get(row))
    }

    fn number(&self, row: usize) -> u64 {
        (0..self.columns.len()).fold(0u64, |acc, c| {
            acc.wrapping_mul(self.radix[c])
                .wrapping_add(u64::from(self.code(c, row)))
        })
    }

    /// How many distinct combinations have been seen.
    pub fn len(&self) -> usize {
        self.next as usize
    }

    /// Whether no row has been seen.
    pub fn is_empty(&self) -> bool {
        self.next == 0
    }

    /// The combination at `row`: 0 for the first one seen, 1 for the next new one, ...
    pub fn id(&mut self, row: usize) -> u32 {
        let fresh = self.next;
        let id = match &self.table {
            ComboTable::Flat(_) | ComboTable::Hashed(_) => {
                let n = self.number(row);
                match &mut self.table {
                    ComboTable::Flat(t) => {
                        let slot = &mut t[n as usize];
                        if *slot == u32::MAX {
                            *slot = fresh;
                        }
                        *slot
                    }
                    ComboTable::Hashed(t) => *t.entry(n).or_insert(fresh),
                    ComboTable::Keys(_) => fresh,
                }
            }
            ComboTable::Keys(_) => {
                let key: Vec<u32> = (0..self.columns.len()).map(|c| self.code(c, row)).collect();
                match &mut self.table {
                    ComboTable::Keys(t) => *t.entry(key).or_insert(fresh),
                    _ => fresh,
                }
            }
        };
        if id == fresh {
            self.next += 1;
        }
        id
    }
}

/// One dimension whose values differ among the records of a point.
#[derive(Clone, Debug, PartialEq)]
pub struct MergedDim {
    /// The dimension.
    pub dim: DimKey,
    /// Its distinct values among the point's records, sorted (`None`: a record without one).
    pub values: Vec<Option<DimValue>>,
}

/// The lowercase dimension name used in point notes: the label without its unit
/// ("output length" for `Output length (tokens)`).
pub fn dim_phrase(k: &DimKey) -> String {
    let label = k.label();
    let bare = label.split(" (").next().unwrap_or(&label);
    match k {
        // Acronyms keep their case.
        DimKey::Known(Dim::Gpu) => "GPU".to_string(),
        DimKey::Known(Dim::GpuCount) => "GPU count".to_string(),
        _ => bare.to_lowercase(),
    }
}

impl MergedDim {
    /// `output length 128 – 1024` for numbers, `engine sgl, vllm` for text (at most three
    /// values listed, then `+N more`).
    pub fn text(&self) -> String {
        let shown = |v: &Option<DimValue>| {
            v.as_ref()
                .map_or(super::NO_VALUE.to_string(), DimValue::to_string)
        };
        let numeric = self
            .values
            .iter()
            .all(|v| v.as_ref().is_some_and(|v| v.as_f64().is_some()));
        let values = if numeric && self.values.len() > 2 {
            format!(
                "{} – {}",
                shown(&self.values[0]),
                shown(&self.values[self.values.len() - 1])
            )
        } else if self.values.len() > 3 {
            let listed: Vec<String> = self.values.iter().take(3).map(shown).collect();
            format!("{}, +{} more", listed.join(", "), self.values.len() - 3)
        } else {
            let listed: Vec<String> = self.values.iter().map(shown).collect();
            listed.join(", ")
        };
        format!("{} {values}", dim_phrase(&self.dim))
    }
}

/// What one point stands for: how many records, and which configuration dimensions differ
/// among them (empty when the point is one configuration).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct PointMerge {
    /// Records averaged into the point.
    pub records: usize,
    /// Dimensions whose values differ among those records, canonical order.
    pub dims: Vec<MergedDim>,
}

impl PointMerge {
    /// Whether the point averages records of different configurations.
    pub fn is_merged(&self) -> bool {
        !self.dims.is_empty()
    }

    /// `mean of 4: output length 128 – 1024; engine sgl, vllm`, or `mean of 2 records`
    /// (repeated runs of one configuration), or empty for a single record.
    pub fn text(&self) -> String {
        if self.records < 2 {
            return String::new();
        }
        if self.dims.is_empty() {
            return format!("mean of {} records", self.records);
        }
        let parts: Vec<String> = self.dims.iter().map(MergedDim::text).collect();
        format!("mean of {}: {}", self.records, parts.join("; "))
    }

    /// `mean of 4`, short enough to print on a bar; empty for a single record.
    pub fn short_text(&self) -> String {
        if self.records >= 2 {
            format!("mean of {}", self.records)
        } else {
            String::new()
        }
    }
}

/// Describes points: which configuration dimensions outside the drawn ones (x, series, panel)
/// differ among a point's records. Built once per chart, so describing a point costs only
/// its own records.
#[derive(Clone, Debug)]
pub struct MergeFinder<'a> {
    columns: Vec<(DimKey, ColumnRef<'a>)>,
}

impl<'a> MergeFinder<'a> {
    /// A finder for the points of a chart drawing `drawn` over `ds`.
    pub fn new(ds: &'a Dataset, drawn: &[DimKey]) -> MergeFinder<'a> {
        MergeFinder {
            columns: configuration_dims(ds)
                .into_iter()
                .filter(|k| !drawn.contains(k))
                .filter_map(|k| ds.column(&k).map(|c| (k, c)))
                .collect(),
        }
    }

    /// The point made of `records` (dataset indices).
    pub fn merge(&self, records: &[usize]) -> PointMerge {
        self.merge_of(records, records.len())
    }

    /// The point made of `count` records of which `records` (dataset indices) include one of
    /// each configuration: rows of one configuration share every dimension's value, so one
    /// row of each says what the point merges as well as all of them.
    pub fn merge_of(&self, records: &[usize], count: usize) -> PointMerge {
        let mut merge = PointMerge {
            records: count,
            dims: Vec::new(),
        };
        if records.len() < 2 {
            return merge;
        }
        for (k, col) in &self.columns {
            let first = col.codes.get(records[0]);
            if records.iter().all(|&i| col.codes.get(i) == first) {
                continue;
            }
            // Which codes occur: a flag per dictionary entry, not a set of a million codes.
            let mut seen = vec![false; col.dict.len() + 1];
            for &i in records {
                let c = col.codes.get(i) as usize;
                if let Some(s) = seen.get_mut(c) {
                    *s = true;
                }
            }
            // Code order is value order; "no value" (code 0) goes last.
            let mut values: Vec<Option<DimValue>> = seen
                .iter()
                .enumerate()
                .skip(1)
                .filter(|(_, s)| **s)
                .map(|(c, _)| col.dict.get(c - 1).cloned())
                .collect();
            if seen[0] {
                values.push(None);
            }
            merge.dims.push(MergedDim {
                dim: k.clone(),
                values,
            });
        }
        merge
    }
}

/// Describes the point made of `records` (dataset indices): every configuration dimension
/// outside `drawn` (x, series, panel) whose values differ among them.
pub fn point_merge(ds: &Dataset, records: &[usize], drawn: &[DimKey]) -> PointMerge {
    MergeFinder::new(ds, drawn).merge(records)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{LatencyMetric, Stat};

    /// A record from a row of a table: engine, request rate, output length, TTFT.
    fn row(engine: &str, rate: f64, output_len: f64, ttft: f64) -> Record {
        let mut r = Record {
            engine: Some(engine.into()),
            request_rate: Some(rate),
            output_len: Some(output_len),
            ..Record::default()
        };
        r.set_metric(ttft_key(), ttft);
        r
    }

    fn ttft_key() -> MetricKey {
        MetricKey::latency(LatencyMetric::Ttft, Stat::Mean)
    }

    fn k(d: Dim) -> DimKey {
        DimKey::Known(d)
    }

    #[test]
    fn a_dimension_varying_inside_a_point_is_merged() {
        // engine | rate | output len | ttft
        let ds = Dataset::new(vec![
            row("tgi", 1.0, 128.0, 16.47),
            row("tgi", 1.0, 512.0, 16.32),
            row("tgi", 1.0, 1024.0, 16.34),
            row("tgi", 1.0, 2048.0, 16.90),
            row("vllm", 1.0, 128.0, 12.0),
            row("vllm", 2.0, 128.0, 13.0),
        ]);
        let all: Vec<usize> = (0..ds.len()).collect();
        let x = [k(Dim::RequestRate)];
        assert_eq!(
            merged_dims(&ds, &all, &x, Some(&ttft_key())),
            [k(Dim::Engine), k(Dim::OutputLen)]
        );
        let by_engine = [k(Dim::RequestRate), k(Dim::Engine)];
        assert_eq!(
            merged_dims(&ds, &all, &by_engine, None),
            [k(Dim::OutputLen)]
        );
        let everything = [k(Dim::RequestRate), k(Dim::Engine), k(Dim::OutputLen)];
        assert!(merged_dims(&ds, &all, &everything, None).is_empty());

        let merge = point_merge(&ds, &[0, 1, 2, 3], &by_engine);
        assert!(merge.is_merged());
        assert_eq!(merge.text(), "mean of 4: output length 128 – 2048");
        assert_eq!(merge.short_text(), "mean of 4");
        let two = point_merge(&ds, &[0, 4], &x);
        assert_eq!(two.text(), "mean of 2: engine tgi, vllm");
    }

    #[test]
    fn repeated_runs_of_one_configuration_are_not_a_merge() {
        let ds = Dataset::new(vec![
            row("vllm", 1.0, 128.0, 10.0),
            row("vllm", 1.0, 128.0, 12.0),
        ]);
        let merge = point_merge(&ds, &[0, 1], &[k(Dim::RequestRate)]);
        assert!(!merge.is_merged());
        assert_eq!(merge.text(), "mean of 2 records");
        // Still said on the chart: a reader should know a point is not one run.
        assert_eq!(merge.short_text(), "mean of 2");
        assert_eq!(point_merge(&ds, &[0], &[]).text(), "");
    }

    #[test]
    fn records_not_drawn_do_not_count() {
        // The second record has no rate: it never reaches the chart, so it merges nothing.
        let mut no_rate = row("sgl", 1.0, 128.0, 1.0);
        no_rate.request_rate = None;
        let mut no_metric = row("tgi", 1.0, 128.0, 1.0);
        no_metric.metrics.clear();
        let ds = Dataset::new(vec![row("vllm", 1.0, 128.0, 1.0), no_rate, no_metric]);
        let all = [0, 1, 2];
        assert!(merged_dims(&ds, &all, &[k(Dim::RequestRate)], Some(&ttft_key())).is_empty());
        // Without the metric condition the TGI record shares the point.
        assert_eq!(
            merged_dims(&ds, &all, &[k(Dim::RequestRate)], None),
            [k(Dim::Engine)]
        );
    }

    #[test]
    fn a_missing_value_differs_from_a_present_one() {
        let mut a = row("vllm", 1.0, 128.0, 1.0);
        a.gpu = Some("A100".into());
        let b = row("vllm", 1.0, 128.0, 2.0);
        let ds = Dataset::new(vec![a, b]);
        let merge = point_merge(&ds, &[0, 1], &[k(Dim::RequestRate)]);
        assert_eq!(merge.text(), "mean of 2: GPU A100, (none)");
    }

    #[test]
    fn measured_lengths_are_metrics_not_dimensions() {
        // Seed 003's shape: output length is a per-record mean of generated tokens.
        let lens = [85.0, 63.5, 72.0, 58.43115234375, 61.2, 66.9];
        let ds = Dataset::new(
            lens.iter()
                .enumerate()
                .map(|(i, &l)| row("vllm", i as f64, l, 1.0))
                .collect(),
        );
        assert_eq!(measured_dims(&ds), [k(Dim::OutputLen)]);
        assert!(!configuration_dims(&ds).contains(&k(Dim::OutputLen)));
        let records: Vec<_> = ds.records().collect();
        assert_eq!(
            measured_dims_of(records.iter().map(|r| &**r)),
            [k(Dim::OutputLen)]
        );
        // Two records at one rate differing only in a measured length: one configuration.
        let ds = Dataset::new(lens.iter().map(|&l| row("vllm", 1.0, l, 1.0)).collect());
        let all: Vec<usize> = (0..ds.len()).collect();
        assert!(merged_dims(&ds, &all, &[k(Dim::RequestRate)], None).is_empty());
    }

    #[test]
    fn requested_lengths_stay_dimensions() {
        // Seed 002's shape: requested whole-number lengths, repeated across engines.
        let ds = Dataset::new(
            [128.0, 512.0, 1024.0, 2048.0]
                .iter()
                .flat_map(|&l| [row("vllm", 1.0, l, 1.0), row("tgi", 1.0, l, 1.0)])
                .collect(),
        );
        assert!(measured_dims(&ds).is_empty());
        // A fraction alone is not enough: few distinct values repeat across records.
        assert!(!is_measured_column(
            &[DimValue::Num(0.5), DimValue::Num(1.5), DimValue::Num(2.5)],
            12
        ));
        assert!(is_measured_column(
            &[DimValue::Num(0.5), DimValue::Num(1.5), DimValue::Num(2.5)],
            3
        ));
    }

    #[test]
    fn long_value_lists_are_shortened() {
        let d = MergedDim {
            dim: k(Dim::Model),
            values: ["a", "b", "c", "d", "e"]
                .iter()
                .map(|s| Some(DimValue::from(*s)))
                .collect(),
        };
        assert_eq!(d.text(), "model a, b, c, +2 more");
        let n = MergedDim {
            dim: k(Dim::BatchSize),
            values: vec![Some(1.0.into()), Some(2.0.into())],
        };
        assert_eq!(n.text(), "batch size 1, 2");
    }
}
