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

mod shifts;

use std::collections::{BTreeMap, BTreeSet};

use super::export::{Cell, TextColumn, TextTable};
use super::matching::MatchKey;
use super::regression::Verdict;
use super::{default_ignored, AnalysisError};
use crate::charts::style::format_value;
pub use crate::model::civil::{iso_of_epoch_s, parse_date_s};
use crate::model::{Dataset, Dim, DimKey, DimKind, DimValue, Direction, MetricKey, Record};
pub use shifts::{
    detect_shifts, noise_sigma, Detection, NotEnoughHistory, Shift, DEFAULT_THRESHOLD_SIGMA,
    MIN_POINTS, MIN_SEGMENT_POINTS,
};

/// More distinct dates than this are a time stamp per row, not a history of runs
/// ([`is_history`]): ten years of nightly runs stay under it.
pub const MAX_HISTORY_DATES: usize = 5000;

/// The tags whose value names the commit a run measured, first present wins.
pub const COMMIT_TAGS: [&str; 5] = ["commit", "git_sha", "git_commit", "sha", "revision"];

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
        crate::model::order::sort_by(&mut v, |a, b| b.1.t.total_cmp(&a.1.t));
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

    /// The latest regressions as an exportable table: configuration, metric (its label with
    /// `labels`, as the page shows it, else its canonical name, as the CLI prints it), before,
    /// after, change %, shift in noise units, and the date (UTC, `2026-11-21 02:00`) and
    /// commit of the first bad point.
    pub fn regressions_table(&self, labels: bool) -> TextTable {
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
                    Cell::Text(if labels {
                        s.metric.label()
                    } else {
                        s.metric.name()
                    }),
                    Cell::number(c.before, format_value(c.before)),
                    Cell::number(c.after, format_value(c.after)),
                    match c.change_pct {
                        Some(x) => Cell::number(x, format!("{x:+.2}")),
                        None => Cell::Text("from 0".into()),
                    },
                    Cell::number(c.shift_sigma, format!("{:+.1}", c.shift_sigma)),
                    Cell::Text(utc_minutes(p.time_s)),
                    p.commit.clone().map_or(Cell::Empty, Cell::Text),
                ]
            })
            .collect();
        TextTable { columns, rows }
    }
}

/// A time as `2026-11-21 02:00 UTC`, the seconds only when there are some, the time only when
/// it is not midnight.
fn utc_minutes(time_s: i64) -> String {
    let iso = crate::model::civil::iso_of_epoch_s(time_s);
    if iso.ends_with(" 00:00:00") {
        iso[..10].to_string()
    } else if iso.ends_with(":00") {
        format!("{} UTC", &iso[..16])
    } else {
        format!("{iso} UTC")
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
///
/// The dates and the metric come from the dataset's index; records are read only when the
/// dates already make a history.
pub fn is_history(ds: &Dataset) -> bool {
    let mut dates: BTreeSet<i64> = BTreeSet::new();
    // Each distinct date text once: the dictionary of the `date` column.
    let texts = ds
        .column(&DimKey::Known(Dim::Date))
        .map_or(&[][..], |c| c.dict);
    for t in texts
        .iter()
        .filter_map(|v| v.as_str().and_then(parse_date_s))
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
    let Some(metric) = (0..ds.len()).find_map(|row| ds.first_metric(row)) else {
        return false;
    };
    let spec = TrendSpec {
        metrics: vec![metric.clone()],
        ..TrendSpec::default()
    };
    trends(&ds.records_in(0..ds.len()), &spec)
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
    let measured = crate::model::points::measured_dims_of(dated.iter().map(|(i, _)| records[*i]));
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
            let vals: BTreeSet<&Option<DimValue>> =
                crate::model::order::set_of(groups.keys().map(|k| &k[j]));
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
        let set: BTreeSet<&MetricKey> =
            crate::model::order::set_of(dated.iter().flat_map(|(i, _)| records[*i].metrics.keys()));
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
        crate::model::order::sort_by(&mut of_metric, |a, b| {
            crate::model::natural_cmp(&a.name, &b.name)
        });
        series.extend(of_metric);
    }
    let dates = crate::model::order::set_of(dated.iter().map(|(_, t)| *t)).len();
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
    let all: BTreeSet<&Option<DimValue>> = crate::model::order::set_of(at.values().flatten());
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
        value: super::stats::mean(&values)?,
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
    use super::shifts::tests::series;
    use super::*;
    use crate::model::{LatencyMetric, Stat};

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
        let md = t.regressions_table(false).to_markdown();
        assert!(
            md.contains("| request_rate=1 | output_throughput |"),
            "{md}"
        );
        assert!(md.contains("| 2026-11-21 02:00 UTC | c20 |"), "{md}");
        let md = t.regressions_table(true).to_markdown();
        assert!(
            md.contains("| request_rate=1 | Output token throughput (tok/s) |"),
            "{md}"
        );
        assert_eq!(utc_minutes(0), "1970-01-01");
        assert_eq!(utc_minutes(61), "1970-01-01 00:01:01 UTC");
        assert!(
            t.summary().contains("1 series ends at a regressed level"),
            "{}",
            t.summary()
        );
        assert!(is_history(&Dataset::new(recs.clone())));
        assert!(!is_history(&Dataset::new(recs[..8].to_vec())));
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
        assert!(!is_history(&Dataset::new(log)));
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
