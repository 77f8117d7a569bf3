//! Trends: many runs of the same configurations over time (a folder of nightly results), one
//! series per configuration and metric, with the shifts that stand out of the run-to-run noise
//! (change points) and the latest regressions.
//!
//! **Time axis.** Records are ordered by their `date` dimension, parsed from the formats the
//! readers produce ([`parse_date_s`]: vLLM's `20261123-194756`, ISO 8601 dates and times with
//! an optional offset). A commit (`tag.commit`, `tag.git_sha`, `tag.git_commit`, `tag.sha` or
//! `tag.revision`) only labels a point: commits carry no order of their own, the date does.
//! Records without a parsable date are left out and counted ([`TrendReport::undated`]).
//! Records of one configuration with the same date are one point, their mean.
//!
//! **Configurations.** Records are grouped on matching's key (every dimension except `source`,
//! `format`, `date`, `label`, measured token lengths and the caller's ignores), less the *run
//! dimensions*: text dimensions and tags that are constant at every date but change between
//! dates (the engine version of a nightly build, a commit, a host name; never the model). They
//! describe the run,
//! not the configuration, as a tied dimension does in a two-run comparison; they are listed in
//! [`TrendReport::run_dims`].
//!
//! **Change points.** The noise σ of a series is measured from the data: the median absolute
//! deviation of successive differences, scaled to a standard deviation (×1.4826/√2). A level
//! shift moves one difference only, so σ stays the run-to-run noise however many shifts there
//! are. Binary segmentation then looks for the split with the largest mean-shift statistic
//! t = |mean(after) − mean(before)| / (σ·√(1/n₁ + 1/n₂)) and splits while t exceeds the threshold
//! (default [`DEFAULT_THRESHOLD_SIGMA`]); every segment but the series' last has at least
//! [`MIN_SEGMENT_POINTS`] points, so last night's run alone can be a shift. Each change is
//! judged better or worse by the metric's [`Direction`], with its size (before → after, %), its
//! size in noise units and its t. Fewer than [`MIN_POINTS`] points give
//! [`SeriesAnalysis::NotEnoughHistory`], not a guess.
//!
//! Why not a crate: the `pelt` crate (PELT, a port of ruptures) needs a penalty in cost units,
//! that is a noise estimate anyway, and reports no significance per change; Bayesian online
//! detection (`changepoint`) needs a hazard rate and priors tuned per metric. Binary
//! segmentation on a robust σ is a few dozen lines, has one parameter in noise units and is
//! tested below for its detection and false-positive rates.

use std::collections::{BTreeMap, BTreeSet};

use super::export::{Cell, TextColumn, TextTable};
use super::matching::MatchKey;
use super::regression::Verdict;
use super::{default_ignored, AnalysisError};
use crate::charts::style::format_value;
use crate::model::civil::{civil_from_days, days_from_civil};
use crate::model::{Dim, DimKey, DimKind, DimValue, Direction, MetricKey, Record};

/// The default change threshold: a shift whose t statistic (shift over its standard error, in
/// noise units) exceeds this is a change point. 5 keeps the false-positive rate of a 30-point
/// series of pure noise under 1 % (tested), and finds a 5σ step after 20 points every time.
pub const DEFAULT_THRESHOLD_SIGMA: f64 = 5.0;

/// The fewest points of a series that are analysed; fewer say "not enough history".
pub const MIN_POINTS: usize = 6;

/// The fewest points of a segment between two change points (and before the first).
pub const MIN_SEGMENT_POINTS: usize = 2;

/// More distinct dates than this are a time stamp per row, not a history of runs
/// ([`is_history`]): ten years of nightly runs stay under it.
pub const MAX_HISTORY_DATES: usize = 5000;

/// The tags whose value names the commit a run measured, first present wins.
pub const COMMIT_TAGS: [&str; 5] = ["commit", "git_sha", "git_commit", "sha", "revision"];

/// Scales the median absolute deviation of normal data to its standard deviation.
const MAD_TO_SIGMA: f64 = 1.4826;

/// Seconds since 1970-01-01T00:00:00Z of a date as the readers write it, `None` when it is not
/// one of: `YYYYMMDD-HHMMSS` (vLLM), `YYYYMMDD`, `YYYY-MM-DD`, `YYYY-MM-DD[T ]HH:MM[:SS[.fff]]`
/// with an optional `Z` or `±HH[:]MM` offset. Dates without an offset are taken as UTC.
pub fn parse_date_s(text: &str) -> Option<i64> {
    let t = text.trim();
    let b = t.as_bytes();
    let num = |s: &[u8]| -> Option<i64> {
        if s.is_empty() || !s.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(s).ok()?.parse().ok()
    };
    // Compact forms: 20261123, 20261123-194756, 20261123_194756, 20261123T194756.
    if b.len() >= 8
        && b[..8].iter().all(u8::is_ascii_digit)
        && b.get(8).is_none_or(|c| !c.is_ascii_digit())
    {
        let (y, mo, d) = (num(&b[0..4])?, num(&b[4..6])?, num(&b[6..8])?);
        let (h, mi, s) = match b.len() {
            8 => (0, 0, 0),
            15 if matches!(b[8], b'-' | b'_' | b'T') => {
                (num(&b[9..11])?, num(&b[11..13])?, num(&b[13..15])?)
            }
            _ => return None,
        };
        return to_epoch_s(y, mo, d, h, mi, s, 0);
    }
    // ISO 8601: 2026-11-23, 2026-11-23T19:47:56.123+01:00, 2026-11-23 19:47.
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let (y, mo, d) = (num(&b[0..4])?, num(&b[5..7])?, num(&b[8..10])?);
    if b.len() == 10 {
        return to_epoch_s(y, mo, d, 0, 0, 0, 0);
    }
    if !matches!(b[10], b'T' | b't' | b' ') || b.len() < 16 || b[13] != b':' {
        return None;
    }
    let (h, mi) = (num(&b[11..13])?, num(&b[14..16])?);
    let mut rest = &b[16..];
    let mut s = 0;
    if rest.first() == Some(&b':') {
        s = num(rest.get(1..3)?)?;
        rest = &rest[3..];
        if rest.first() == Some(&b'.') || rest.first() == Some(&b',') {
            let digits = rest[1..].iter().take_while(|c| c.is_ascii_digit()).count();
            if digits == 0 {
                return None;
            }
            rest = &rest[1 + digits..];
        }
    }
    let offset_s = match rest {
        [] | [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), oh1, oh2, tail @ ..] => {
            let oh = num(&[*oh1, *oh2])?;
            let om = match tail {
                [] => 0,
                [b':', m1, m2] | [m1, m2] => num(&[*m1, *m2])?,
                _ => return None,
            };
            let o = oh * 3600 + om * 60;
            if *sign == b'+' {
                o
            } else {
                -o
            }
        }
        _ => return None,
    };
    to_epoch_s(y, mo, d, h, mi, s, offset_s)
}

/// `YYYY-MM-DD HH:MM:SS` (UTC) of seconds since the epoch, the form plotly reads as a date.
pub fn iso_of_epoch_s(time_s: i64) -> String {
    let days = time_s.div_euclid(86_400);
    let secs = time_s.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

/// Seconds since the epoch of a checked civil date and time (UTC minus `offset_s`).
fn to_epoch_s(y: i64, mo: i64, d: i64, h: i64, mi: i64, s: i64, offset_s: i64) -> Option<i64> {
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days_in_month = match mo {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    };
    if !(1..=days_in_month).contains(&d) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let days = days_from_civil(y, mo, d);
    Some(days * 86_400 + h * 3600 + mi * 60 + s - offset_s)
}

/// A series too short to tell a shift from noise.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not enough history: {points} points, at least {needed} needed")]
pub struct NotEnoughHistory {
    /// Points in the series.
    pub points: usize,
    /// Points needed ([`MIN_POINTS`]).
    pub needed: usize,
}

/// A level shift found in a series of values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shift {
    /// The first point of the new level (index into the values).
    pub index: usize,
    /// The mean of the segment before.
    pub before: f64,
    /// The mean of the segment from `index` on.
    pub after: f64,
    /// (after − before) / σ: the signed size of the shift in noise units.
    pub shift_sigma: f64,
    /// |after − before| / (σ·√(1/n₁ + 1/n₂)): the shift over its standard error.
    pub t: f64,
}

/// The change points of one series of values.
#[derive(Clone, Debug, PartialEq)]
pub struct Detection {
    /// The run-to-run noise σ measured from the data (same unit as the values).
    pub noise: f64,
    /// The shifts, in order.
    pub shifts: Vec<Shift>,
}

/// The median of non-empty finite values.
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

/// The run-to-run noise σ of a series (see the module doc), never 0: when over half the
/// successive differences are equal the mean absolute deviation stands in for the median
/// one, and σ is at least 1e-9 of the series' median magnitude, so float rounding in a
/// constant series is no shift.
pub fn noise_sigma(values: &[f64]) -> f64 {
    let mut diffs: Vec<f64> = values.windows(2).map(|w| w[1] - w[0]).collect();
    let mut magnitudes: Vec<f64> = values.iter().map(|v| v.abs()).collect();
    let floor = if magnitudes.is_empty() {
        f64::MIN_POSITIVE
    } else {
        (median(&mut magnitudes) * 1e-9).max(f64::MIN_POSITIVE)
    };
    if diffs.is_empty() {
        return floor;
    }
    let centre = median(&mut diffs);
    let mut dev: Vec<f64> = diffs.iter().map(|d| (d - centre).abs()).collect();
    let mad = MAD_TO_SIGMA * median(&mut dev) / std::f64::consts::SQRT_2;
    if mad > floor {
        return mad;
    }
    // Over half the differences equal (quantized or repeating values): the mean absolute
    // deviation, scaled to a σ for normal data, still sees the spread the median ignores.
    let mean_dev = mean_of(&dev) * (std::f64::consts::PI / 2.0).sqrt() / std::f64::consts::SQRT_2;
    mean_dev.max(floor)
}

fn mean_of(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// The mean-shift statistic of splitting `v` at `k`.
fn t_at(v: &[f64], k: usize, noise: f64) -> f64 {
    let (a, b) = v.split_at(k);
    let se = noise * (1.0 / a.len() as f64 + 1.0 / b.len() as f64).sqrt();
    (mean_of(b) - mean_of(a)).abs() / se
}

/// Binary segmentation of `v[lo..hi]`; `at_end`: the segment ends the series, so its last
/// point may be a segment of its own.
fn segment(
    v: &[f64],
    lo: usize,
    hi: usize,
    noise: f64,
    threshold: f64,
    at_end: bool,
    out: &mut Vec<usize>,
) {
    let tail = if at_end { 1 } else { MIN_SEGMENT_POINTS };
    if hi - lo < MIN_SEGMENT_POINTS + tail {
        return;
    }
    let part = &v[lo..hi];
    let best = (MIN_SEGMENT_POINTS..=part.len() - tail)
        .map(|k| (k, t_at(part, k, noise)))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    if let Some((k, t)) = best {
        if t > threshold {
            out.push(lo + k);
            segment(v, lo, lo + k, noise, threshold, false, out);
            segment(v, lo + k, hi, noise, threshold, at_end, out);
        }
    }
}

/// Finds the level shifts of `values` (in time order) that exceed `threshold_sigma` (t, in
/// noise units). Non-finite values must have been left out by the caller.
pub fn detect_shifts(values: &[f64], threshold_sigma: f64) -> Result<Detection, NotEnoughHistory> {
    if values.len() < MIN_POINTS {
        return Err(NotEnoughHistory {
            points: values.len(),
            needed: MIN_POINTS,
        });
    }
    let noise = noise_sigma(values);
    let mut cuts = Vec::new();
    segment(
        values,
        0,
        values.len(),
        noise,
        threshold_sigma,
        true,
        &mut cuts,
    );
    cuts.sort_unstable();
    // Each change is judged against its neighbours' segments; ones that fall below the
    // threshold there (a split found inside a wider segment) are dropped until none does.
    loop {
        let bounds: Vec<usize> = std::iter::once(0)
            .chain(cuts.iter().copied())
            .chain(std::iter::once(values.len()))
            .collect();
        let weakest = (1..bounds.len() - 1)
            .map(|i| {
                (
                    i,
                    t_at(
                        &values[bounds[i - 1]..bounds[i + 1]],
                        bounds[i] - bounds[i - 1],
                        noise,
                    ),
                )
            })
            .filter(|(_, t)| *t <= threshold_sigma)
            .min_by(|a, b| a.1.total_cmp(&b.1));
        match weakest {
            Some((i, _)) => {
                cuts.remove(i - 1);
            }
            None => break,
        }
    }
    let bounds: Vec<usize> = std::iter::once(0)
        .chain(cuts.iter().copied())
        .chain(std::iter::once(values.len()))
        .collect();
    let shifts = (1..bounds.len() - 1)
        .map(|i| {
            let before = mean_of(&values[bounds[i - 1]..bounds[i]]);
            let after = mean_of(&values[bounds[i]..bounds[i + 1]]);
            Shift {
                index: bounds[i],
                before,
                after,
                shift_sigma: (after - before) / noise,
                t: t_at(
                    &values[bounds[i - 1]..bounds[i + 1]],
                    bounds[i] - bounds[i - 1],
                    noise,
                ),
            }
        })
        .collect();
    Ok(Detection { noise, shifts })
}

/// How to look for trends.
#[derive(Clone, Debug, PartialEq)]
pub struct TrendSpec {
    /// The metrics to follow; empty follows every metric present.
    pub metrics: Vec<MetricKey>,
    /// Dimensions left out of the configuration key.
    pub ignore: BTreeSet<DimKey>,
    /// The change threshold, t in noise units.
    pub threshold_sigma: f64,
}

impl Default for TrendSpec {
    /// Every metric, [`default_ignored`], [`DEFAULT_THRESHOLD_SIGMA`].
    fn default() -> Self {
        TrendSpec {
            metrics: Vec::new(),
            ignore: default_ignored(),
            threshold_sigma: DEFAULT_THRESHOLD_SIGMA,
        }
    }
}

/// One date of one configuration's series.
#[derive(Clone, Debug, PartialEq)]
pub struct TrendPoint {
    /// Seconds since the epoch (UTC).
    pub time_s: i64,
    /// The date as the first record wrote it.
    pub date: String,
    /// The commit, when a record names one ([`COMMIT_TAGS`]).
    pub commit: Option<String>,
    /// The metric: the mean over `records`.
    pub value: f64,
    /// The records of this configuration and date with the metric (caller's indices).
    pub records: Vec<usize>,
}

impl TrendPoint {
    /// The date, with the commit after it when there is one.
    pub fn label(&self) -> String {
        match &self.commit {
            Some(c) => format!("{} ({c})", self.date),
            None => self.date.clone(),
        }
    }
}

/// A change point of a configuration's series.
#[derive(Clone, Debug, PartialEq)]
pub struct ChangePoint {
    /// The first point at the new level (index into [`TrendSeries::points`]).
    pub index: usize,
    /// The mean level before.
    pub before: f64,
    /// The mean level from `index` on (until the next change).
    pub after: f64,
    /// (after / before − 1) × 100; `None` when before is 0.
    pub change_pct: Option<f64>,
    /// (after − before) / σ.
    pub shift_sigma: f64,
    /// The shift over its standard error (the significance; flagged above the threshold).
    pub t: f64,
    /// Better or worse per the metric's direction.
    pub verdict: Verdict,
}

/// The analysis of one series.
#[derive(Clone, Debug, PartialEq)]
pub enum SeriesAnalysis {
    /// Too few points to separate shifts from noise.
    NotEnoughHistory(NotEnoughHistory),
    /// Analysed.
    Analysed {
        /// The run-to-run noise σ, in the metric's unit.
        noise: f64,
        /// The change points, in time order.
        changes: Vec<ChangePoint>,
    },
}

/// One configuration's metric over time.
#[derive(Clone, Debug, PartialEq)]
pub struct TrendSeries {
    /// The configuration's key values, aligned with [`TrendReport::key_dims`].
    pub key: MatchKey,
    /// The configuration in words: the `dim=value` of the key dimensions that differ between
    /// configurations, joined by " · " ("all" when there is one configuration).
    pub name: String,
    /// The metric.
    pub metric: MetricKey,
    /// The points, in time order.
    pub points: Vec<TrendPoint>,
    /// Change points or "not enough history".
    pub analysis: SeriesAnalysis,
}

impl TrendSeries {
    /// The change points (none when not analysed).
    pub fn changes(&self) -> &[ChangePoint] {
        match &self.analysis {
            SeriesAnalysis::Analysed { changes, .. } => changes,
            SeriesAnalysis::NotEnoughHistory(_) => &[],
        }
    }

    /// The last change point when it made the metric worse: the series' latest point is at
    /// a regressed level.
    pub fn latest_regression(&self) -> Option<&ChangePoint> {
        self.changes()
            .last()
            .filter(|c| c.verdict == Verdict::Worse)
    }
}

/// Every configuration's series and what was left out.
#[derive(Clone, Debug, PartialEq)]
pub struct TrendReport {
    /// The configuration key's dimensions.
    pub key_dims: Vec<DimKey>,
    /// Text dimensions and tags constant at each date but changing between dates, left out
    /// of the key (engine version, commit, host).
    pub run_dims: Vec<DimKey>,
    /// One series per configuration and metric, by metric then configuration.
    pub series: Vec<TrendSeries>,
    /// Records without a parsable date (caller's indices), left out.
    pub undated: Vec<usize>,
    /// Distinct dates among the dated records.
    pub dates: usize,
    /// The change threshold used, t in noise units.
    pub threshold_sigma: f64,
}

impl TrendReport {
    /// The series whose latest point is at a regressed level, with that change, largest
    /// change first.
    pub fn latest_regressions(&self) -> Vec<(&TrendSeries, &ChangePoint)> {
        let mut v: Vec<(&TrendSeries, &ChangePoint)> = self
            .series
            .iter()
            .filter_map(|s| s.latest_regression().map(|c| (s, c)))
            .collect();
        v.sort_by(|a, b| b.1.t.total_cmp(&a.1.t));
        v
    }

    /// Series with too few points to analyse.
    pub fn short_series(&self) -> usize {
        self.series
            .iter()
            .filter(|s| matches!(s.analysis, SeriesAnalysis::NotEnoughHistory(_)))
            .count()
    }

    /// A one-line summary.
    pub fn summary(&self) -> String {
        let changes: usize = self.series.iter().map(|s| s.changes().len()).sum();
        let plural =
            |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        let mut s = format!(
            "{} over {}; {} beyond {} noise units; {} at a regressed level",
            plural(self.series.len(), "series", "series"),
            plural(self.dates, "date", "dates"),
            plural(changes, "change point", "change points"),
            format_value(self.threshold_sigma),
            plural(self.latest_regressions().len(), "series ends", "series end"),
        );
        let short = self.short_series();
        if short > 0 {
            s.push_str(&format!(
                "; {short} series with not enough history (fewer than {MIN_POINTS} dates)"
            ));
        }
        if !self.undated.is_empty() {
            s.push_str(&format!(
                "; {} records without a readable date left out",
                self.undated.len()
            ));
        }
        s
    }

    /// The latest regressions as an exportable table: configuration, metric, before, after,
    /// change %, shift in noise units, t, and the date and commit of the first bad point.
    pub fn regressions_table(&self) -> TextTable {
        let columns = vec![
            TextColumn::new("configuration", "Configuration", false),
            TextColumn::new("metric", "Metric", false),
            TextColumn::new("before", "Before", true),
            TextColumn::new("after", "After", true),
            TextColumn::new("change_pct", "Change (%)", true),
            TextColumn::new("shift_sigma", "Shift (σ)", true),
            TextColumn::new("first_bad_date", "First bad date", false),
            TextColumn::new("first_bad_commit", "Commit", false),
        ];
        let rows = self
            .latest_regressions()
            .into_iter()
            .map(|(s, c)| {
                let p = &s.points[c.index];
                vec![
                    Cell::Text(s.name.clone()),
                    Cell::Text(s.metric.name()),
                    Cell::number(c.before, format_value(c.before)),
                    Cell::number(c.after, format_value(c.after)),
                    match c.change_pct {
                        Some(x) => Cell::number(x, format!("{x:+.2}")),
                        None => Cell::Text("from 0".into()),
                    },
                    Cell::number(c.shift_sigma, format!("{:+.1}", c.shift_sigma)),
                    Cell::Text(p.date.clone()),
                    p.commit.clone().map_or(Cell::Empty, Cell::Text),
                ]
            })
            .collect();
        TextTable { columns, rows }
    }
}

/// The commit a record names, if any.
pub fn commit_of(r: &Record) -> Option<String> {
    COMMIT_TAGS
        .iter()
        .find_map(|t| r.tags.get(*t))
        .filter(|c| !c.is_empty())
        .cloned()
}

/// Whether the records span several dates (at least [`MIN_POINTS`], at most
/// [`MAX_HISTORY_DATES`]) with at least one configuration seen at [`MIN_POINTS`] of them: the
/// data is a history, and the trends view is its first picture.
pub fn is_history(records: &[Record]) -> bool {
    let mut dates: BTreeSet<i64> = BTreeSet::new();
    for t in records
        .iter()
        .filter_map(|r| r.date.as_deref().and_then(parse_date_s))
    {
        dates.insert(t);
        // A time stamp per row (a request log) is not a history of runs.
        if dates.len() > MAX_HISTORY_DATES {
            return false;
        }
    }
    if dates.len() < MIN_POINTS {
        return false;
    }
    // One metric is enough to see the configurations' lengths.
    let Some(metric) = records.iter().find_map(|r| r.metrics.keys().next()) else {
        return false;
    };
    let spec = TrendSpec {
        metrics: vec![metric.clone()],
        ..TrendSpec::default()
    };
    trends(records, &spec)
        .map(|t| t.series.iter().any(|s| s.points.len() >= MIN_POINTS))
        .unwrap_or(false)
}

/// The series of every configuration and metric over the records' dates, with their change
/// points. Errors when no record has a readable date.
pub fn trends(records: &[Record], spec: &TrendSpec) -> Result<TrendReport, AnalysisError> {
    trends_of(&records.iter().collect::<Vec<&Record>>(), spec)
}

/// [`trends`] of borrowed records (a filtered selection); indices refer to `records`.
pub fn trends_of(records: &[&Record], spec: &TrendSpec) -> Result<TrendReport, AnalysisError> {
    let mut undated = Vec::new();
    let mut dated: Vec<(usize, i64)> = Vec::new();
    for (i, r) in records.iter().enumerate() {
        match r.date.as_deref().and_then(parse_date_s) {
            Some(t) => dated.push((i, t)),
            None => undated.push(i),
        }
    }
    if dated.is_empty() {
        return Err(AnalysisError::Empty {
            what: "follow over time: no record has a readable date".into(),
        });
    }
    let measured = super::points::measured_dims_of(dated.iter().map(|(i, _)| records[*i]));
    let mut dims: BTreeSet<DimKey> = BTreeSet::new();
    for (i, _) in &dated {
        dims.extend(records[*i].dims().map(|(k, _)| k));
    }
    let mut key_dims = Vec::new();
    let mut run_dims = Vec::new();
    for d in dims
        .into_iter()
        .filter(|d| !spec.ignore.contains(d) && !measured.contains(d))
    {
        if is_run_dim(records, &dated, &d) {
            run_dims.push(d);
        } else {
            key_dims.push(d);
        }
    }
    // key → date → records.
    let mut groups: BTreeMap<MatchKey, BTreeMap<i64, Vec<usize>>> = BTreeMap::new();
    for (i, t) in &dated {
        let key: MatchKey = key_dims.iter().map(|d| records[*i].dim(d)).collect();
        groups
            .entry(key)
            .or_default()
            .entry(*t)
            .or_default()
            .push(*i);
    }
    // Name configurations by the key values that differ between them.
    let varying: Vec<usize> = (0..key_dims.len())
        .filter(|&j| {
            let vals: BTreeSet<&Option<DimValue>> = groups.keys().map(|k| &k[j]).collect();
            vals.len() > 1
        })
        .collect();
    let name_of = |key: &MatchKey| -> String {
        if varying.is_empty() {
            return "all".into();
        }
        varying
            .iter()
            .map(|&j| {
                key[j]
                    .as_ref()
                    .map_or(crate::charts::style::NO_VALUE.to_string(), |v| {
                        format!("{}={v}", key_dims[j].name())
                    })
            })
            .collect::<Vec<_>>()
            .join(" · ")
    };
    let metrics: Vec<MetricKey> = if spec.metrics.is_empty() {
        let set: BTreeSet<&MetricKey> = dated
            .iter()
            .flat_map(|(i, _)| records[*i].metrics.keys())
            .collect();
        set.into_iter().cloned().collect()
    } else {
        spec.metrics.clone()
    };
    let mut series = Vec::new();
    for metric in &metrics {
        let mut of_metric = Vec::new();
        for (key, by_date) in &groups {
            let points: Vec<TrendPoint> = by_date
                .iter()
                .filter_map(|(t, idx)| point_of(records, *t, idx, metric))
                .collect();
            if points.is_empty() {
                continue;
            }
            let values: Vec<f64> = points.iter().map(|p| p.value).collect();
            let analysis = match detect_shifts(&values, spec.threshold_sigma) {
                Err(e) => SeriesAnalysis::NotEnoughHistory(e),
                Ok(d) => SeriesAnalysis::Analysed {
                    noise: d.noise,
                    changes: d
                        .shifts
                        .iter()
                        .map(|s| change_point(s, metric.direction()))
                        .collect(),
                },
            };
            of_metric.push(TrendSeries {
                key: key.clone(),
                name: name_of(key),
                metric: metric.clone(),
                points,
                analysis,
            });
        }
        of_metric.sort_by(|a, b| crate::model::natural_cmp(&a.name, &b.name));
        series.extend(of_metric);
    }
    let dates = dated.iter().map(|(_, t)| *t).collect::<BTreeSet<_>>().len();
    Ok(TrendReport {
        key_dims,
        run_dims,
        series,
        undated,
        dates,
        threshold_sigma: spec.threshold_sigma,
    })
}

/// Whether `d` is a run dimension: text or tag, one value at each date, several overall.
fn is_run_dim(records: &[&Record], dated: &[(usize, i64)], d: &DimKey) -> bool {
    let text = match d {
        DimKey::Known(k) => k.kind() == DimKind::Text && *k != Dim::Model,
        DimKey::Tag(_) => true,
    };
    if !text {
        return false;
    }
    let mut at: BTreeMap<i64, BTreeSet<Option<DimValue>>> = BTreeMap::new();
    for (i, t) in dated {
        at.entry(*t).or_default().insert(records[*i].dim(d));
    }
    let all: BTreeSet<&Option<DimValue>> = at.values().flatten().collect();
    all.len() > 1 && at.values().all(|v| v.len() == 1)
}

/// One configuration's point at one date: the mean of the records that have the metric.
fn point_of(
    records: &[&Record],
    time_s: i64,
    idx: &[usize],
    metric: &MetricKey,
) -> Option<TrendPoint> {
    let with: Vec<usize> = idx
        .iter()
        .copied()
        .filter(|i| records[*i].metric(metric).is_some_and(f64::is_finite))
        .collect();
    let first = *records.get(*with.first()?)?;
    let values: Vec<f64> = with
        .iter()
        .filter_map(|i| records[*i].metric(metric))
        .collect();
    Some(TrendPoint {
        time_s,
        date: first.date.as_deref().unwrap_or_default().to_string(),
        commit: with.iter().find_map(|i| commit_of(records[*i])),
        value: mean_of(&values),
        records: with,
    })
}

fn change_point(s: &Shift, direction: Direction) -> ChangePoint {
    let up = s.after > s.before;
    let verdict = match direction {
        Direction::HigherIsBetter if up => Verdict::Better,
        Direction::HigherIsBetter => Verdict::Worse,
        Direction::LowerIsBetter if up => Verdict::Worse,
        Direction::LowerIsBetter => Verdict::Better,
        Direction::Unknown => Verdict::Changed,
    };
    ChangePoint {
        index: s.index,
        before: s.before,
        after: s.after,
        change_pct: (s.before != 0.0).then(|| (s.after / s.before - 1.0) * 100.0),
        shift_sigma: s.shift_sigma,
        t: s.t,
        verdict,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{LatencyMetric, Stat};

    /// A small deterministic generator (xorshift64*) with normal draws by Box–Muller.
    struct Noise(u64);

    impl Noise {
        fn uniform(&mut self) -> f64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            let x = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
            ((x >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        }
        fn normal(&mut self) -> f64 {
            let (u, v) = (self.uniform(), self.uniform());
            (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
        }
    }

    /// `n` points around 100 with relative noise `sigma_pct`, times `1 + step` from `at`.
    fn series(seed: u64, n: usize, sigma_pct: f64, at: usize, step: f64) -> Vec<f64> {
        let mut g = Noise(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        (0..n)
            .map(|i| {
                let level = if i >= at { 100.0 * (1.0 + step) } else { 100.0 };
                level + g.normal() * sigma_pct
            })
            .collect()
    }

    #[test]
    fn a_planted_shift_is_found_where_it_is_and_nowhere_else() {
        for seed in 1..=50 {
            // 2 % noise, +15 % from point 20.
            let v = series(seed, 30, 2.0, 20, 0.15);
            let d = detect_shifts(&v, DEFAULT_THRESHOLD_SIGMA).unwrap();
            let at: Vec<usize> = d.shifts.iter().map(|s| s.index).collect();
            assert_eq!(at, vec![20], "seed {seed}: {v:?}");
            let s = d.shifts[0];
            assert!(
                (s.after / s.before - 1.15).abs() < 0.03,
                "seed {seed}: {s:?}"
            );
            assert!(s.shift_sigma > 4.0 && s.t > DEFAULT_THRESHOLD_SIGMA);
            assert!(
                (d.noise - 2.0).abs() < 1.2,
                "seed {seed}: noise {}",
                d.noise
            );
        }
    }

    #[test]
    fn pure_noise_rarely_raises_a_flag() {
        let runs = 2000;
        let flagged = (0..runs)
            .filter(|seed| {
                let v = series(*seed + 1000, 30, 3.0, 30, 0.0);
                !detect_shifts(&v, DEFAULT_THRESHOLD_SIGMA)
                    .unwrap()
                    .shifts
                    .is_empty()
            })
            .count() as u64;
        eprintln!("pure noise: {flagged} of {runs} series flagged");
        // Under 1 % of pure-noise series get any change point.
        assert!(flagged * 100 < runs, "{flagged} of {runs} flagged");
    }

    #[test]
    fn a_step_smaller_than_the_noise_is_not_a_change() {
        for seed in 1..=50 {
            // 3 % noise, a 1.5 % step: half a σ.
            let v = series(seed, 30, 3.0, 15, 0.015);
            let d = detect_shifts(&v, DEFAULT_THRESHOLD_SIGMA).unwrap();
            assert!(d.shifts.is_empty(), "seed {seed}: {:?}", d.shifts);
        }
    }

    #[test]
    fn a_shift_at_the_latest_point_alone_is_found() {
        let mut v = series(7, 30, 1.0, 30, 0.0);
        v[29] = 115.0;
        let d = detect_shifts(&v, DEFAULT_THRESHOLD_SIGMA).unwrap();
        assert_eq!(
            d.shifts.iter().map(|s| s.index).collect::<Vec<_>>(),
            vec![29]
        );
    }

    #[test]
    fn too_few_points_say_so() {
        for n in 0..MIN_POINTS {
            let e = detect_shifts(&vec![1.0; n], DEFAULT_THRESHOLD_SIGMA).unwrap_err();
            assert_eq!(e.points, n);
            assert_eq!(
                e.to_string(),
                format!("not enough history: {n} points, at least {MIN_POINTS} needed")
            );
        }
        // Repeating values whose differences are mostly equal still have a noise.
        assert!(noise_sigma(&[0.0, 0.5, 1.0, 0.0, 0.5, 1.0, 0.0, 0.5]) > 0.3);
        // A constant series has no shift, and an exact step in it is one.
        let flat = detect_shifts(&[5.0; 10], DEFAULT_THRESHOLD_SIGMA).unwrap();
        assert!(flat.shifts.is_empty());
        let step = detect_shifts(&[5.0, 5.0, 5.0, 5.0, 6.0, 6.0, 6.0, 6.0], 5.0).unwrap();
        assert_eq!(step.shifts.len(), 1);
        assert_eq!(step.shifts[0].index, 4);
    }

    #[test]
    fn dates_in_the_readers_formats() {
        let iso = parse_date_s("2026-11-23T19:47:56Z").unwrap();
        assert_eq!(parse_date_s("20261123-194756"), Some(iso));
        assert_eq!(parse_date_s("2026-11-23 19:47:56"), Some(iso));
        assert_eq!(parse_date_s("2026-11-23T19:47:56.250"), Some(iso));
        assert_eq!(parse_date_s("2026-11-23T20:47:56+01:00"), Some(iso));
        assert_eq!(parse_date_s("2026-11-23T18:47:56-0100"), Some(iso));
        assert_eq!(parse_date_s("1970-01-02"), Some(86_400));
        assert_eq!(
            parse_date_s("20240229"),
            Some(parse_date_s("2024-02-29").unwrap())
        );
        assert_eq!(iso, 1_795_463_276);
        assert_eq!(iso_of_epoch_s(iso), "2026-11-23 19:47:56");
        assert_eq!(iso_of_epoch_s(0), "1970-01-01 00:00:00");
        assert_eq!(
            iso_of_epoch_s(parse_date_s("2024-02-29").unwrap()),
            "2024-02-29 00:00:00"
        );
        for bad in [
            "",
            "yesterday",
            "2026-13-01",
            "2023-02-29",
            "20261123-25",
            "2026-11-23T19",
            "2026-11-23T19:47:56+1",
        ] {
            assert_eq!(parse_date_s(bad), None, "{bad}");
        }
    }

    fn nightly(day: usize, rate: f64, tput: f64, ttft: f64) -> Record {
        let mut r = Record {
            model: Some("m".into()),
            request_rate: Some(rate),
            date: Some(format!("202611{:02}-020000", day + 1).into()),
            engine_version: Some(format!("0.{day}").into()),
            source: Some(format!("night{day}.json").into()),
            ..Record::default()
        };
        r.tags.insert("commit".into(), format!("c{day:02}"));
        r.set_metric(MetricKey::OutputThroughput, tput);
        r.set_metric(MetricKey::latency(LatencyMetric::Ttft, Stat::Mean), ttft);
        r
    }

    #[test]
    fn configurations_over_nights_with_the_latest_regressions() {
        let a = series(3, 30, 1.0, 20, -0.15);
        let b = series(4, 30, 1.0, 30, 0.0);
        let mut recs = Vec::new();
        for day in 0..30 {
            // Rate 1 loses 15 % throughput from night 20; rate 4 stays put.
            recs.push(nightly(day, 1.0, a[day], 50.0));
            recs.push(nightly(day, 4.0, 4.0 * b[day], 80.0));
        }
        recs.push(Record {
            date: Some("last tuesday".into()),
            ..nightly(0, 1.0, 1.0, 1.0)
        });
        let spec = TrendSpec {
            metrics: vec![MetricKey::OutputThroughput],
            ..TrendSpec::default()
        };
        let t = trends(&recs, &spec).unwrap();
        assert_eq!(t.undated, vec![60]);
        assert_eq!(t.dates, 30);
        assert!(t.run_dims.contains(&DimKey::Known(Dim::EngineVersion)));
        assert!(t.run_dims.contains(&DimKey::Tag("commit".into())));
        assert_eq!(t.series.len(), 2);
        let names: Vec<&str> = t.series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["request_rate=1", "request_rate=4"]);
        let regs = t.latest_regressions();
        assert_eq!(regs.len(), 1);
        let (s, c) = regs[0];
        assert_eq!(s.name, "request_rate=1");
        assert_eq!(c.index, 20);
        assert_eq!(c.verdict, Verdict::Worse);
        assert_eq!(s.points[20].commit.as_deref(), Some("c20"));
        let md = t.regressions_table().to_markdown();
        assert!(
            md.contains("| request_rate=1 | output_throughput |"),
            "{md}"
        );
        assert!(md.contains("| 20261121-020000 | c20 |"), "{md}");
        assert!(
            t.summary().contains("1 series ends at a regressed level"),
            "{}",
            t.summary()
        );
        assert!(is_history(&recs));
        assert!(!is_history(&recs[..8]));
        let log: Vec<Record> = (0..=MAX_HISTORY_DATES as i64)
            .map(|s| Record {
                date: Some(
                    format!(
                        "2026-11-01T{:02}:{:02}:{:02}Z",
                        s / 3600,
                        s / 60 % 60,
                        s % 60
                    )
                    .into(),
                ),
                ..nightly(0, 1.0, 1.0, 1.0)
            })
            .collect();
        assert!(!is_history(&log));
        let ds = crate::model::Dataset::new(recs.clone());
        assert_eq!(
            crate::analysis::defaults::default_view(&ds),
            crate::analysis::defaults::View::Trends
        );
    }

    #[test]
    fn lower_is_better_metrics_regress_upwards_and_recoveries_clear() {
        let mut v = series(9, 24, 1.0, 8, 0.2);
        // Back to the old level from point 16: the latest level is not a regression.
        for x in v.iter_mut().skip(16) {
            *x -= 20.0;
        }
        let recs: Vec<Record> = v
            .iter()
            .enumerate()
            .map(|(d, x)| nightly(d, 1.0, 1.0, *x))
            .collect();
        let spec = TrendSpec {
            metrics: vec![MetricKey::latency(LatencyMetric::Ttft, Stat::Mean)],
            ..TrendSpec::default()
        };
        let t = trends(&recs, &spec).unwrap();
        let changes = t.series[0].changes();
        let got: Vec<(usize, Verdict)> = changes.iter().map(|c| (c.index, c.verdict)).collect();
        assert_eq!(got, vec![(8, Verdict::Worse), (16, Verdict::Better)]);
        assert!(t.latest_regressions().is_empty());
    }

    #[test]
    fn no_dates_is_an_error_and_short_series_are_counted() {
        let e = trends(&[Record::default()], &TrendSpec::default()).unwrap_err();
        assert!(e.to_string().contains("no record has a readable date"));
        let recs: Vec<Record> = (0..3).map(|d| nightly(d, 1.0, 10.0, 1.0)).collect();
        let t = trends(&recs, &TrendSpec::default()).unwrap();
        assert_eq!(t.short_series(), t.series.len());
        assert!(t.summary().contains("not enough history"));
    }
}
