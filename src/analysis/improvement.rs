//! Improvement: one dimension, two of its values (baseline and candidate), records matched on
//! every other dimension, and the improvement of a metric per matched configuration — the
//! "A100 vs Tesla, configuration by configuration" table — with its aggregates (mean per value
//! of one dimension as bars, per cell of two dimensions as a heatmap).
//!
//! **Rule.** For a higher-is-better metric (throughput), improvement % =
//! (candidate / baseline − 1) × 100. For a lower-is-better metric (latency) the sign is flipped,
//! (1 − candidate / baseline) × 100, so a positive number always means "the candidate is
//! better". A metric of unknown direction uses the plain ratio and says so in
//! [`ImprovementTable::rule`].
//!
//! **Match key.** Every dimension the compared records have, except the compared one, the
//! caller's `ignore` set ([`default_ignored`]: `source`, `format`, `date`, `label`) and
//! text dimensions (or tags) *tied to the compared one*: constant on each side but different
//! across sides (`engine_version` when comparing engines), since no pair could ever match on
//! them. Tied dimensions are listed in [`MatchSummary::tied_dims`] so the UI can say so.
//! Numeric dimensions (lengths, batch size, load, GPU count) never tie: a difference there
//! means different work, so such records stay unmatched unless the caller ignores the
//! dimension.
//!
//! **The file's own figure.** Some files print an improvement column next to the values it was
//! computed from (seed 000's `Improvement`, kept as [`MetricKey::reported_improvement`]). Those
//! values were computed before the file rounded its throughputs to six decimals, so a
//! recomputation from the printed values can differ in the sixth decimal (311.294326 % from
//! 126.342806 / 30.718344, where the file prints 311.294330 %). When both records of a pair carry
//! the same reported figure (they come from one source row) and it agrees with the recomputed
//! one within that rounding, the row shows it as [`ImprovementRow::reported_pct`], labelled as the
//! file's, beside the recomputed value. A figure of another comparison (the reverse direction,
//! another metric) does not agree and is never shown.
//!
//! **Noise.** Records of one side sharing a match key that differ only in where or when they
//! ran (the file, date, label or a repeat tag, [`crate::model::spread::is_repeat_dim`]) are
//! repeats: the row compares their means, each with its 95 % interval (mean ± t·s/√n), and a
//! single record whose file gives its standard deviation carries mean ± that deviation. When
//! the baseline's and the candidate's intervals overlap the row says "not distinguishable"
//! ([`ImprovementRow::noise_text`]). Records sharing a key that differ in anything else, or
//! not at all (a file loaded twice), stay ambiguous and are listed, not compared.
//!
//! The comparison and its table (sorting, summary, export) are here; the two aggregates the
//! figures draw (bars per value, heatmap per cell) in [`aggregate`], the figures themselves in
//! [`plot`] (`improvement_bars_plot`, `improvement_heatmap_plot`).

mod aggregate;
pub mod plot;

use std::collections::BTreeSet;

use super::export::{Cell, TextColumn, TextTable};
use super::matching::{match_rows, DuplicateKey, MatchKey, MatchSummary};
use super::stats::mean;
use super::{default_ignored, join_or_none, AnalysisError};
use crate::charts::format_value;
use crate::model::spread::{
    distinguishable, is_repeat_dim, short_number, spread_companions, Interval, Moments, Noisy,
    NOT_DISTINGUISHABLE,
};
use crate::model::{format_number, Dataset, DimKey, DimValue, Direction, MetricKey};
pub use aggregate::{improvement_by, improvement_heatmap, ImprovementGroup, ImprovementHeatmap};

/// What to compare.
#[derive(Clone, Debug, PartialEq)]
pub struct ImprovementSpec {
    /// The compared dimension (`gpu`, `engine`, any tag).
    pub dim: DimKey,
    /// The baseline value (`Tesla`).
    pub baseline: DimValue,
    /// The candidate value (`A100`).
    pub candidate: DimValue,
    /// The compared metric.
    pub metric: MetricKey,
    /// Dimensions left out of the match key besides the compared one.
    pub ignore: BTreeSet<DimKey>,
}

impl ImprovementSpec {
    /// A spec with the default ignore set ([`default_ignored`]).
    pub fn new(
        dim: impl Into<DimKey>,
        baseline: impl Into<DimValue>,
        candidate: impl Into<DimValue>,
        metric: MetricKey,
    ) -> ImprovementSpec {
        ImprovementSpec {
            dim: dim.into(),
            baseline: baseline.into(),
            candidate: candidate.into(),
            metric,
            ignore: default_ignored(),
        }
    }

    /// Also leaves `dim` out of the match key (e.g. `engine_version`).
    pub fn ignoring(mut self, dim: impl Into<DimKey>) -> ImprovementSpec {
        self.ignore.insert(dim.into());
        self
    }
}

/// The signed improvement of `candidate` over `baseline` in %, positive when the candidate is
/// better for a metric going in `direction`. `None` when the baseline is zero, either value is
/// not finite, or the ratio overflows (1e300 over 1e-300).
pub fn improvement_pct(baseline: f64, candidate: f64, direction: Direction) -> Option<f64> {
    if baseline == 0.0 || !baseline.is_finite() || !candidate.is_finite() {
        return None;
    }
    let change = (candidate / baseline - 1.0) * 100.0;
    if !change.is_finite() {
        return None;
    }
    Some(match direction {
        Direction::LowerIsBetter => -change,
        Direction::HigherIsBetter | Direction::Unknown => change,
    })
}

/// The rule text shown next to an improvement, for a metric.
pub fn improvement_rule(metric: &MetricKey) -> String {
    let label = metric.label();
    match metric.direction() {
        Direction::HigherIsBetter => format!(
            "improvement % = (candidate / baseline − 1) × 100; higher {label} is better, so a positive value means the candidate is better"
        ),
        Direction::LowerIsBetter => format!(
            "improvement % = (1 − candidate / baseline) × 100; lower {label} is better, so a positive value means the candidate is better"
        ),
        Direction::Unknown => format!(
            "improvement % = (candidate / baseline − 1) × 100; whether higher {label} is better is not known, so this is the plain change"
        ),
    }
}

/// One matched configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct ImprovementRow {
    /// The match-key values, aligned with [`MatchSummary::key_dims`].
    pub key: MatchKey,
    /// The baseline's value of the metric.
    pub baseline_value: f64,
    /// The candidate's value of the metric.
    pub candidate_value: f64,
    /// Signed improvement in % (see the module docs); `None` when the baseline is zero.
    pub improvement_pct: Option<f64>,
    /// The baseline record (index into the caller's dataset).
    pub baseline_record: usize,
    /// The candidate record (index into the caller's dataset).
    pub candidate_record: usize,
    /// The improvement % the source file itself prints for this pair, when it has one and it
    /// is this comparison (see the module docs).
    pub reported_pct: Option<f64>,
    /// The baseline's interval: of its repeats' mean, or the file's standard deviation.
    pub baseline_interval: Option<Interval>,
    /// The candidate's interval.
    pub candidate_interval: Option<Interval>,
}

impl ImprovementRow {
    /// Whether the baseline and candidate can be told apart (`None`: neither has an interval).
    pub fn distinguishable(&self) -> Option<bool> {
        distinguishable(
            &Noisy {
                value: self.baseline_value,
                interval: self.baseline_interval,
            },
            &Noisy {
                value: self.candidate_value,
                interval: self.candidate_interval,
            },
        )
    }

    /// `not distinguishable` when the intervals overlap, `distinguishable` when they do not,
    /// `None` when neither side has one.
    pub fn noise_text(&self) -> Option<&'static str> {
        self.distinguishable().map(|apart| {
            if apart {
                "distinguishable"
            } else {
                NOT_DISTINGUISHABLE
            }
        })
    }
}

/// `12.5` or `12.5 ± 1.2` (the half width of its interval).
pub fn value_with_interval(value: f64, interval: Option<&Interval>) -> String {
    match interval {
        Some(i) => format!("{} ± {}", format_value(value), format_value(i.half_width())),
        None => format_value(value),
    }
}

/// How far a file's printed improvement may sit from the one recomputed from its printed
/// values: each value rounded to six decimals moves the ratio by up to 0.5e-6 / value
/// (relative), and the printed improvement itself by 0.5e-6; twice that, for float noise.
fn rounding_bound(baseline: f64, candidate: f64) -> f64 {
    let ratio = (candidate / baseline).abs();
    2.0 * (100.0 * ratio * (0.5e-6 / baseline.abs() + 0.5e-6 / candidate.abs()) + 0.5e-6)
}

/// The file's own improvement figure for a pair, when both records carry the same one and it
/// is this comparison (it agrees with `computed` within the rounding of the printed values).
/// `reported`: the records' reported figures (baseline, candidate).
fn reported_for(
    reported: (Option<f64>, Option<f64>),
    (baseline_value, candidate_value): (f64, f64),
    computed: Option<f64>,
) -> Option<f64> {
    let (b, c) = (reported.0?, reported.1?);
    let computed = computed?;
    if b.to_bits() != c.to_bits() || !b.is_finite() {
        return None;
    }
    let bound = rounding_bound(baseline_value, candidate_value);
    (bound.is_finite() && (b - computed).abs() <= bound).then_some(b)
}

/// A column to sort an [`ImprovementTable`] by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImprovementSort {
    /// The n-th match-key dimension.
    Key(usize),
    /// The baseline value.
    Baseline,
    /// The candidate value.
    Candidate,
    /// The improvement.
    Improvement,
    /// The file's own improvement figure.
    Reported,
}

/// The improvement of the candidate over the baseline for every matched configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct ImprovementTable {
    /// The compared dimension.
    pub dim: DimKey,
    /// The baseline value.
    pub baseline: DimValue,
    /// The candidate value.
    pub candidate: DimValue,
    /// The compared metric.
    pub metric: MetricKey,
    /// The metric's direction, as used for the sign.
    pub direction: Direction,
    /// The rule, in words, for display next to the table.
    pub rule: String,
    /// The match key, tied dimensions, unmatched records and ambiguous keys.
    pub matching: MatchSummary,
    /// Dimensions the caller left out of the key (besides the compared one).
    pub ignored_dims: Vec<DimKey>,
    /// One row per matched configuration, sorted by key until [`sort`](Self::sort) is called.
    pub rows: Vec<ImprovementRow>,
    /// Records of either side that lack the metric (left out before matching).
    pub missing_metric: Vec<usize>,
}

impl ImprovementTable {
    /// Sorts the rows by a column; missing improvements go last either way.
    pub fn sort(&mut self, by: ImprovementSort, descending: bool) {
        crate::model::order::sort_by(&mut self.rows, |a, b| {
            let o = match by {
                ImprovementSort::Key(i) => a.key.get(i).cmp(&b.key.get(i)),
                ImprovementSort::Baseline => a.baseline_value.total_cmp(&b.baseline_value),
                ImprovementSort::Candidate => a.candidate_value.total_cmp(&b.candidate_value),
                ImprovementSort::Improvement | ImprovementSort::Reported => {
                    let pct = |r: &ImprovementRow| match by {
                        ImprovementSort::Reported => r.reported_pct,
                        _ => r.improvement_pct,
                    };
                    match (pct(a), pct(b)) {
                        (Some(x), Some(y)) => x.total_cmp(&y),
                        (Some(_), None) => return std::cmp::Ordering::Less,
                        (None, Some(_)) => return std::cmp::Ordering::Greater,
                        (None, None) => std::cmp::Ordering::Equal,
                    }
                }
            };
            if descending {
                o.reverse()
            } else {
                o
            }
        });
    }

    /// Whether any row knows its noise (an interval on either side).
    pub fn has_intervals(&self) -> bool {
        self.rows
            .iter()
            .any(|r| r.baseline_interval.is_some() || r.candidate_interval.is_some())
    }

    /// Whether any row carries the file's own improvement figure.
    pub fn has_reported(&self) -> bool {
        self.rows.iter().any(|r| r.reported_pct.is_some())
    }

    /// What the "Improvement in the file" column is, when some row has it: how many rows carry
    /// the file's figure and the largest difference from the recomputed one.
    pub fn reported_note(&self) -> Option<String> {
        let with: Vec<(f64, f64)> = self
            .rows
            .iter()
            .filter_map(|r| Some((r.reported_pct?, r.improvement_pct?)))
            .collect();
        if with.is_empty() {
            return None;
        }
        let max_diff = with
            .iter()
            .map(|(rep, got)| (rep - got).abs())
            .fold(0.0, f64::max);
        Some(format!(
            "Improvement in the file: the figure the file itself prints, for {} of {} rows. \
             The file computed it before rounding the values it shows, so the improvement \
             recomputed from those values differs from it by at most {max_diff:.1e} percentage points.",
            with.len(),
            self.rows.len()
        ))
    }

    /// The mean improvement over all rows that have a finite one.
    pub fn mean_improvement_pct(&self) -> Option<f64> {
        let pcts: Vec<f64> = self.rows.iter().filter_map(|r| r.improvement_pct).collect();
        mean(&pcts)
    }

    /// The row whose key has these values (in `key_dims` order), if matched.
    pub fn row(&self, key: &[Option<DimValue>]) -> Option<&ImprovementRow> {
        self.rows.iter().find(|r| r.key == key)
    }

    /// A one-line summary: counts of matched, unmatched and duplicate records.
    pub fn summary(&self) -> String {
        let dup_records: usize = self.matching.duplicates.iter().map(DuplicateKey::len).sum();
        let mut s = format!(
            "{} matched configuration{}; unmatched: {} baseline, {} candidate",
            self.rows.len(),
            if self.rows.len() == 1 { "" } else { "s" },
            self.matching.unmatched_baseline.len(),
            self.matching.unmatched_candidate.len()
        );
        if !self.matching.duplicates.is_empty() {
            s.push_str(&format!(
                "; {} duplicate key{} ({dup_records} records) not compared",
                self.matching.duplicates.len(),
                if self.matching.duplicates.len() == 1 {
                    ""
                } else {
                    "s"
                }
            ));
        }
        if !self.missing_metric.is_empty() {
            s.push_str(&format!(
                "; {} record{} without {}",
                self.missing_metric.len(),
                if self.missing_metric.len() == 1 {
                    ""
                } else {
                    "s"
                },
                self.metric.name()
            ));
        }
        s
    }

    /// The rows as an exportable table: key columns, baseline, candidate, improvement %
    /// (six decimals, as the seed tables print it).
    pub fn to_text_table(&self) -> TextTable {
        let unit = self
            .metric
            .unit()
            .filter(|u| !self.metric.label().contains(&format!("({u})")))
            .map(|u| format!(" ({u})"))
            .unwrap_or_default();
        let mut columns = self.matching.key_columns();
        columns.push(TextColumn::new(
            "baseline_value",
            format!(
                "{} = {}: {}{unit}",
                self.dim.name(),
                self.baseline,
                self.metric.label()
            ),
            true,
        ));
        columns.push(TextColumn::new(
            "candidate_value",
            format!(
                "{} = {}: {}{unit}",
                self.dim.name(),
                self.candidate,
                self.metric.label()
            ),
            true,
        ));
        columns.push(TextColumn::new("improvement_pct", "Improvement (%)", true));
        let reported = self.has_reported();
        if reported {
            columns.push(TextColumn::new(
                "reported_improvement_pct",
                "Improvement in the file (%)",
                true,
            ));
        }
        let noisy = self.has_intervals();
        if noisy {
            for (id, header) in [
                ("baseline_interval", "Baseline 95 % interval"),
                ("candidate_interval", "Candidate 95 % interval"),
                ("noise", "Noise"),
            ] {
                columns.push(TextColumn::new(id, header, false));
            }
        }
        let rows = self
            .rows
            .iter()
            .map(|r| {
                let mut cells: Vec<Cell> = r
                    .key
                    .iter()
                    .map(|v| match v {
                        Some(DimValue::Num(n)) => Cell::number(*n, format_number(*n)),
                        Some(DimValue::Text(t)) => Cell::Text(t.clone()),
                        None => Cell::Empty,
                    })
                    .collect();
                cells.push(Cell::number(
                    r.baseline_value,
                    format_number(r.baseline_value),
                ));
                cells.push(Cell::number(
                    r.candidate_value,
                    format_number(r.candidate_value),
                ));
                let pct = |p: Option<f64>| match p {
                    Some(p) => Cell::number(p, format!("{p:.6}")),
                    None => Cell::Empty,
                };
                cells.push(pct(r.improvement_pct));
                if reported {
                    cells.push(pct(r.reported_pct));
                }
                if noisy {
                    let range = |i: Option<Interval>| {
                        i.map_or(Cell::Empty, |i| {
                            Cell::Text(format!(
                                "{} – {}",
                                short_number(i.low),
                                short_number(i.high)
                            ))
                        })
                    };
                    cells.push(range(r.baseline_interval));
                    cells.push(range(r.candidate_interval));
                    cells.push(r.noise_text().map_or(Cell::Empty, |t| Cell::Text(t.into())));
                }
                cells
            })
            .collect();
        TextTable { columns, rows }
    }
}

/// The values `dim` takes on the rows, for "values present: ..." messages.
fn values_present(ds: &Dataset, rows: &[usize], dim: &DimKey) -> String {
    let Some(col) = ds.column(dim) else {
        return join_or_none(std::iter::empty());
    };
    let mut seen = vec![false; col.dict.len() + 1];
    for &row in rows {
        seen[col.codes.get(row) as usize] = true;
    }
    join_or_none(
        col.dict
            .iter()
            .zip(&seen[1..])
            .filter(|(_, s)| **s)
            .map(|(v, _)| v.to_string()),
    )
}

/// Compares `spec.candidate` against `spec.baseline` over the records at `indices` of `ds`.
/// Reads the dataset's index (dictionary codes and metric columns), never a record.
///
/// Errors when either value is absent (naming the values present), when both are the same,
/// or when neither side's records carry the metric.
pub fn improvement(
    ds: &Dataset,
    indices: &[usize],
    spec: &ImprovementSpec,
) -> Result<ImprovementTable, AnalysisError> {
    let chosen: Vec<usize> = indices.iter().copied().filter(|&i| i < ds.len()).collect();
    if chosen.is_empty() {
        return Err(AnalysisError::Empty {
            what: "compare".into(),
        });
    }
    if spec.baseline == spec.candidate {
        return Err(AnalysisError::SameValue {
            dim: spec.dim.name(),
            value: spec.baseline.to_string(),
        });
    }
    let column = ds.column(&spec.dim);
    let side = |value: &DimValue| -> Result<Vec<usize>, AnalysisError> {
        // By dictionary code: which codes hold the value, then no record is read.
        let side: Vec<usize> = match column {
            Some(col) => {
                let pass: Vec<bool> = std::iter::once(false)
                    .chain(col.dict.iter().map(|v| v == value))
                    .collect();
                chosen
                    .iter()
                    .copied()
                    .filter(|&i| {
                        let code = col.codes.get(i) as usize;
                        pass.get(code).copied().unwrap_or(false)
                    })
                    .collect()
            }
            None => Vec::new(),
        };
        if side.is_empty() {
            return Err(AnalysisError::NoSuchValue {
                dim: spec.dim.name(),
                value: value.to_string(),
                present: values_present(ds, &chosen, &spec.dim),
            });
        }
        Ok(side)
    };
    let base_all = side(&spec.baseline)?;
    let cand_all = side(&spec.candidate)?;
    let values = ds.metric_values(&spec.metric);
    let value = |row: usize| values.as_ref().and_then(|v| v.get(row));
    let mut missing_metric = Vec::new();
    let base = with_metric(
        ds,
        &base_all,
        value,
        "baseline",
        &spec.metric,
        &mut missing_metric,
    )?;
    let cand = with_metric(
        ds,
        &cand_all,
        value,
        "candidate",
        &spec.metric,
        &mut missing_metric,
    )?;
    crate::model::order::sort(&mut missing_metric);
    let mut exclude = spec.ignore.clone();
    exclude.insert(spec.dim.clone());
    // Repeat tags number runs of one configuration: repeats, not a key.
    exclude.extend(
        ds.dim_keys()
            .filter(|k| matches!(k, DimKey::Tag(_)) && is_repeat_dim(k))
            .cloned(),
    );
    let mut m = match_rows(ds, &base, &cand, &exclude);
    let file_sd = spread_companions(&spec.metric)
        .into_iter()
        .find_map(|k| ds.metric_values(&k));
    let file_sd = |row: usize| file_sd.as_ref().and_then(|v| v.get(row));
    // One side of a pair: its value and interval from its records (one, or repeats).
    let side_of = |rows: &[usize]| -> Option<(f64, Option<Interval>, usize)> {
        let first = *rows.first()?;
        if let [only] = rows {
            let v = value(*only)?;
            return Some((
                v,
                file_sd(*only).and_then(|sd| Interval::from_file_std(v, sd)),
                first,
            ));
        }
        let mut moments = Moments::default();
        for &r in rows {
            moments.add(value(r)?);
        }
        Some((moments.mean(), moments.interval(), first))
    };
    // Keys with several records on a side that are repeats become pairs of means: records
    // that agree on every ignored configuration dimension and are told apart by where or when
    // they ran. Two records alike in every dimension (one configuration, as a file loaded
    // twice gives) cannot be told from a copy: still ambiguous, not compared.
    let repeats_only = |rows: &[usize]| {
        let same_configuration = spec
            .ignore
            .iter()
            .filter(|k| !is_repeat_dim(k))
            .all(|k| match ds.column(k) {
                Some(c) => rows.iter().all(|&r| c.codes.get(r) == c.codes.get(rows[0])),
                None => true,
            });
        let mut seen = std::collections::HashSet::new();
        let mut distinct = true;
        ds.each_configuration(Some(rows), |_, c| distinct &= seen.insert(c));
        same_configuration && distinct
    };
    let mut sides = Vec::new();
    let mut still_ambiguous = Vec::new();
    for d in std::mem::take(&mut m.summary.duplicates) {
        let both = !d.baseline_records.is_empty() && !d.candidate_records.is_empty();
        if both && repeats_only(&d.baseline_records) && repeats_only(&d.candidate_records) {
            sides.push((d.key, d.baseline_records, d.candidate_records));
        } else {
            still_ambiguous.push(d);
        }
    }
    m.summary.duplicates = still_ambiguous;
    sides.extend(
        m.pairs
            .into_iter()
            .map(|(key, b, c)| (key, vec![b], vec![c])),
    );
    crate::model::order::sort_by(&mut sides, |a, b| a.0.cmp(&b.0));
    let reported = ds.metric_values(&MetricKey::reported_improvement());
    let reported = |row: usize| reported.as_ref().and_then(|v| v.get(row));
    let direction = spec.metric.direction();
    let rows = sides
        .into_iter()
        .filter_map(|(key, b, c)| {
            let (baseline_value, baseline_interval, b) = side_of(&b)?;
            let (candidate_value, candidate_interval, c) = side_of(&c)?;
            let improvement_pct = improvement_pct(baseline_value, candidate_value, direction);
            Some(ImprovementRow {
                key,
                baseline_value,
                candidate_value,
                improvement_pct,
                baseline_record: b,
                candidate_record: c,
                reported_pct: reported_for(
                    (reported(b), reported(c)),
                    (baseline_value, candidate_value),
                    improvement_pct,
                ),
                baseline_interval,
                candidate_interval,
            })
        })
        .collect();
    Ok(ImprovementTable {
        dim: spec.dim.clone(),
        baseline: spec.baseline.clone(),
        candidate: spec.candidate.clone(),
        metric: spec.metric.clone(),
        direction,
        rule: improvement_rule(&spec.metric),
        ignored_dims: spec.ignore.iter().cloned().collect(),
        rows,
        matching: m.summary,
        missing_metric,
    })
}

/// The rows of `all` whose `value` of the metric is a number (not NaN); the others go to
/// `missing`.
fn with_metric(
    ds: &Dataset,
    all: &[usize],
    value: impl Fn(usize) -> Option<f64>,
    side: &str,
    metric: &MetricKey,
    missing: &mut Vec<usize>,
) -> Result<Vec<usize>, AnalysisError> {
    let (has, lacks): (Vec<usize>, Vec<usize>) = all
        .iter()
        .partition(|&&i| value(i).is_some_and(|v| !v.is_nan()));
    missing.extend(lacks);
    if has.is_empty() {
        return Err(AnalysisError::NoMetric {
            side: side.to_string(),
            metric: metric.name(),
            present: join_or_none(ds.metrics_present(all).iter().map(MetricKey::name)),
        });
    }
    Ok(has)
}

#[cfg(test)]
pub(crate) mod tests;
