//! Regression check: two runs (files or record sets) of the same configurations, matched on
//! their dimensions, every shared metric compared, changes beyond a threshold reported as
//! better or worse according to the metric's direction, largest first.
//!
//! Matching is [`improvement`](super::improvement)'s: every dimension except `source`,
//! `format`, `date`, `label` (and the caller's extra ignores); a dimension constant on each
//! side but different across them (the engine version that was upgraded, a commit tag) leaves
//! the key by itself and is reported in [`MatchSummary::tied_dims`].

use std::collections::BTreeSet;

use super::export::{Cell, TextColumn, TextTable};
use super::matching::{match_sides, MatchKey, MatchSummary};
use super::{default_ignored, AnalysisError};
use crate::charts::style::format_value;
use crate::model::{DimKey, Direction, MetricKey, Record};

/// Slack when comparing a change with a threshold, so 20 → 21 (5.0000000000000044 % in
/// floating point) is not "more than 5 %".
const THRESHOLD_SLACK_PCT: f64 = 1e-9;

/// The default threshold of a regression check, in %.
pub const DEFAULT_THRESHOLD_PCT: f64 = 5.0;

/// How to check.
#[derive(Clone, Debug, PartialEq)]
pub struct RegressionSpec {
    /// Changes at or below this size (in %, absolute) are not reported.
    pub threshold_pct: f64,
    /// Dimensions left out of the match key.
    pub ignore: BTreeSet<DimKey>,
    /// The metrics to compare; empty compares every metric both runs have.
    pub metrics: Vec<MetricKey>,
}

impl Default for RegressionSpec {
    /// 5 % and [`default_ignored`].
    fn default() -> Self {
        RegressionSpec {
            threshold_pct: DEFAULT_THRESHOLD_PCT,
            ignore: default_ignored(),
            metrics: Vec::new(),
        }
    }
}

/// Whether a change is good news.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    /// Better per the metric's direction.
    Better,
    /// Worse per the metric's direction.
    Worse,
    /// The metric's direction is unknown.
    Changed,
}

impl Verdict {
    /// `better`, `worse`, `changed`.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::Changed => "changed",
        }
    }
}

/// One metric of one matched configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct MetricChange {
    /// The match-key values, aligned with [`MatchSummary::key_dims`].
    pub key: MatchKey,
    /// The metric.
    pub metric: MetricKey,
    /// Its value in the old run.
    pub old_value: f64,
    /// Its value in the new run.
    pub new_value: f64,
    /// (new / old − 1) × 100; `None` when old is 0 and new is not (an unbounded change).
    pub change_pct: Option<f64>,
    /// Better or worse per the metric's direction (or `Changed`).
    pub verdict: Verdict,
    /// The old record (index into the old slice).
    pub old_record: usize,
    /// The new record (index into the new slice).
    pub new_record: usize,
}

impl MetricChange {
    /// The size of the change in % (absolute); infinite when old was 0.
    pub fn size_pct(&self) -> f64 {
        self.change_pct.map_or(f64::INFINITY, f64::abs)
    }
}

/// The result of a regression check.
#[derive(Clone, Debug, PartialEq)]
pub struct RegressionReport {
    /// The threshold used, in %.
    pub threshold_pct: f64,
    /// Matched configurations.
    pub matched: usize,
    /// Metric values compared (pairs where both runs have the metric).
    pub compared: usize,
    /// Every change with size above the threshold, largest first.
    pub changes: Vec<MetricChange>,
    /// The match key, tied dimensions, unmatched records and ambiguous keys (the old run is
    /// the baseline, the new run the candidate).
    pub matching: MatchSummary,
}

impl RegressionReport {
    /// The changes that got worse by more than `pct` %.
    pub fn worse_than(&self, pct: f64) -> Vec<&MetricChange> {
        self.changes
            .iter()
            .filter(|c| c.verdict == Verdict::Worse && c.size_pct() > pct + THRESHOLD_SLACK_PCT)
            .collect()
    }

    /// A one-line summary.
    pub fn summary(&self) -> String {
        let worse = self
            .changes
            .iter()
            .filter(|c| c.verdict == Verdict::Worse)
            .count();
        let better = self
            .changes
            .iter()
            .filter(|c| c.verdict == Verdict::Better)
            .count();
        format!(
            "{} matched configurations, {} metric values compared; beyond {} %: {worse} worse, {better} better, {} of unknown direction; unmatched: {} old, {} new{}",
            self.matched,
            self.compared,
            format_value(self.threshold_pct),
            self.changes.len() - worse - better,
            self.matching.unmatched_baseline.len(),
            self.matching.unmatched_candidate.len(),
            if self.matching.duplicates.is_empty() {
                String::new()
            } else {
                format!("; {} duplicate keys not compared", self.matching.duplicates.len())
            }
        )
    }

    /// The changes as an exportable table: key columns, metric, old, new, change %, verdict.
    pub fn to_text_table(&self) -> TextTable {
        let mut columns = self.matching.key_columns();
        columns.push(TextColumn::new("metric", "Metric", false));
        columns.push(TextColumn::new("old_value", "Old", true));
        columns.push(TextColumn::new("new_value", "New", true));
        columns.push(TextColumn::new("change_pct", "Change (%)", true));
        columns.push(TextColumn::new("verdict", "Verdict", false));
        let rows = self
            .changes
            .iter()
            .map(|c| {
                let mut cells: Vec<Cell> = c.key.iter().map(|v| Cell::dim(v.as_ref())).collect();
                cells.push(Cell::Text(c.metric.name()));
                cells.push(Cell::number(c.old_value, format_value(c.old_value)));
                cells.push(Cell::number(c.new_value, format_value(c.new_value)));
                cells.push(match c.change_pct {
                    Some(p) => Cell::number(p, format!("{p:+.2}")),
                    None => Cell::Text("from 0".into()),
                });
                cells.push(Cell::Text(c.verdict.name().into()));
                cells
            })
            .collect();
        TextTable { columns, rows }
    }
}

/// Compares every metric both runs have for each matched configuration.
///
/// Errors when either side is empty. Records without a match are listed, not compared.
pub fn regression(
    old: &[Record],
    new: &[Record],
    spec: &RegressionSpec,
) -> Result<RegressionReport, AnalysisError> {
    if old.is_empty() || new.is_empty() {
        return Err(AnalysisError::Empty {
            what: format!(
                "compare: the {} run has no records",
                if old.is_empty() { "old" } else { "new" }
            ),
        });
    }
    let o: Vec<(usize, &Record)> = old.iter().enumerate().collect();
    let n: Vec<(usize, &Record)> = new.iter().enumerate().collect();
    let m = match_sides(&o, &n, &spec.ignore);
    let mut changes = Vec::new();
    let mut compared = 0;
    for (key, oi, ni) in &m.pairs {
        let (ro, rn) = (&old[*oi], &new[*ni]);
        for (metric, &old_value) in &ro.metrics {
            if !spec.metrics.is_empty() && !spec.metrics.contains(metric) {
                continue;
            }
            let Some(new_value) = rn.metric(metric) else {
                continue;
            };
            if !old_value.is_finite() || !new_value.is_finite() {
                continue;
            }
            compared += 1;
            let change_pct = if old_value == 0.0 {
                if new_value == 0.0 {
                    Some(0.0)
                } else {
                    None
                }
            } else {
                Some((new_value / old_value - 1.0) * 100.0)
            };
            let size = change_pct.map_or(f64::INFINITY, f64::abs);
            if size <= spec.threshold_pct + THRESHOLD_SLACK_PCT {
                continue;
            }
            let up = new_value > old_value;
            let verdict = match metric.direction() {
                Direction::HigherIsBetter if up => Verdict::Better,
                Direction::HigherIsBetter => Verdict::Worse,
                Direction::LowerIsBetter if up => Verdict::Worse,
                Direction::LowerIsBetter => Verdict::Better,
                Direction::Unknown => Verdict::Changed,
            };
            changes.push(MetricChange {
                key: key.clone(),
                metric: metric.clone(),
                old_value,
                new_value,
                change_pct,
                verdict,
                old_record: *oi,
                new_record: *ni,
            });
        }
    }
    crate::model::order::sort_by(&mut changes, |a, b| {
        b.size_pct()
            .total_cmp(&a.size_pct())
            .then_with(|| a.key.cmp(&b.key))
            .then_with(|| a.metric.cmp(&b.metric))
    });
    Ok(RegressionReport {
        threshold_pct: spec.threshold_pct,
        matched: m.pairs.len(),
        compared,
        changes,
        matching: m.summary,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{LatencyMetric, Stat};

    fn rec(rate: f64, tput: f64, ttft: f64, version: &str) -> Record {
        let mut r = Record {
            request_rate: Some(rate),
            engine_version: Some(version.into()),
            date: Some(version.into()),
            ..Record::default()
        };
        r.set_metric(MetricKey::OutputThroughput, tput);
        r.set_metric(
            MetricKey::latency(
                LatencyMetric::Ttft,
                Stat::P(crate::model::Percentile::new(99.0).unwrap()),
            ),
            ttft,
        );
        r
    }

    #[test]
    fn changes_beyond_threshold_sorted_and_judged() {
        let old = vec![rec(1.0, 100.0, 50.0, "a"), rec(4.0, 400.0, 80.0, "a")];
        let new = vec![
            rec(1.0, 104.0, 60.0, "b"),
            rec(4.0, 300.0, 78.0, "b"),
            rec(8.0, 1.0, 1.0, "b"),
        ];
        let r = regression(&old, &new, &RegressionSpec::default()).unwrap();
        // 100 → 105 is exactly 5 %: not beyond the 5 % threshold despite floating point.
        let only_tput = RegressionSpec {
            metrics: vec![MetricKey::OutputThroughput],
            ..RegressionSpec::default()
        };
        let r_tput = regression(&old, &new, &only_tput).unwrap();
        assert_eq!((r_tput.compared, r_tput.changes.len()), (2, 1));
        let five = regression(
            &[rec(1.0, 20.0, 1.0, "a")],
            &[rec(1.0, 21.0, 1.0, "b")],
            &RegressionSpec::default(),
        )
        .unwrap();
        assert!(five.changes.is_empty());
        assert_eq!(r.matched, 2);
        assert_eq!(r.compared, 4);
        assert_eq!(r.matching.tied_dims.len(), 1);
        assert_eq!(r.matching.unmatched_candidate, vec![2]);
        let shown: Vec<(String, Verdict)> = r
            .changes
            .iter()
            .map(|c| (format!("{:.0}", c.change_pct.unwrap()), c.verdict))
            .collect();
        assert_eq!(
            shown,
            [
                ("-25".to_string(), Verdict::Worse),
                ("20".to_string(), Verdict::Worse)
            ]
        );
        assert_eq!(r.worse_than(20.0).len(), 1);
        assert!(r
            .to_text_table()
            .to_markdown()
            .contains("| -25.00 | worse |"));
    }

    #[test]
    fn empty_side_is_an_error() {
        let e =
            regression(&[], &[rec(1.0, 1.0, 1.0, "a")], &RegressionSpec::default()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "no records to compare: the old run has no records"
        );
    }
}
