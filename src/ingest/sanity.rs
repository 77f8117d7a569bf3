//! Values no benchmark can measure: a negative count, latency or throughput (`completed: -1`),
//! a non-finite number (`NaN`, `inf`), or one so large it is no measurement (`1e308`). Every
//! reader's metrics pass through one [`Impossible`] tally, record by record or column by
//! column, and the file gets one warning per metric and kind, with a count and an example:
//! bounded however many cells are wrong. The values are kept as read; the warning says so.
//! Pure: shared by both faces.

use std::collections::BTreeMap;

use super::Warning;
use crate::model::columns::MetricColumn;
use crate::model::{MetricKey, Record};

/// A canonical metric's value from which on it is no measurement: 10^15 ms is 31,000 years,
/// 10^15 tokens a second or requests more than any system serves.
const HUGE: f64 = 1e15;

/// What is wrong with a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    NonFinite,
    Negative,
    Huge,
}

impl Kind {
    /// The kind of `v` for `key`, if it is impossible. A metric the file names itself
    /// (`extra.*`, which may be a difference) is only checked for being a number at all.
    fn of(key: &MetricKey, v: f64) -> Option<Kind> {
        if !v.is_finite() {
            return Some(Kind::NonFinite);
        }
        if matches!(key, MetricKey::Extra(_)) {
            return None;
        }
        if v < 0.0 {
            Some(Kind::Negative)
        } else if v >= HUGE {
            Some(Kind::Huge)
        } else {
            None
        }
    }

    fn words(self) -> &'static str {
        match self {
            Kind::NonFinite => "not a finite number",
            Kind::Negative => "negative",
            Kind::Huge => "too large to be a measurement",
        }
    }
}

/// The impossible values seen so far, per metric and kind: how many, and the first.
#[derive(Debug, Default)]
pub(crate) struct Impossible {
    seen: BTreeMap<(String, Kind), (u64, f64)>,
}

impl Impossible {
    fn value(&mut self, key: &MetricKey, v: f64) {
        if let Some(kind) = Kind::of(key, v) {
            let e = self.seen.entry((key.name(), kind)).or_insert((0, v));
            e.0 += 1;
        }
    }

    /// Counts the impossible metrics of `records`.
    pub(crate) fn records(&mut self, records: &[Record]) {
        for r in records {
            for (key, v) in r.metrics.iter() {
                self.value(key, *v);
            }
        }
    }

    /// Counts the impossible values of metric columns.
    pub(crate) fn columns(&mut self, columns: &[MetricColumn]) {
        for c in columns {
            let valid = c.valid();
            for (i, v) in c.values().iter().enumerate() {
                if valid.get(i) {
                    self.value(&c.key, *v);
                }
            }
        }
    }

    /// One warning per metric and kind.
    pub(crate) fn warnings(self) -> impl Iterator<Item = Warning> {
        self.seen.into_iter().map(|((metric, kind), (n, example))| {
            let values = if n == 1 { "value" } else { "values" };
            let example = if example.is_finite() && example.abs() >= HUGE {
                format!("{example:e}")
            } else {
                example.to_string()
            };
            Warning::file(format!(
                "{metric}: {n} {values} {} (first: {example}), kept as read: an impossible measurement",
                kind.words()
            ))
        })
    }
}

/// Runs that completed no request: their latencies are no measurement, however the tool
/// wrote them (vLLM's summary of an all-failed run says `mean_ttft_ms: 0.0`). Every reader's
/// records and columns pass through one tally, which leaves such latencies out (no value,
/// never 0 ms) and keeps the completed and failed counts; the file gets one warning.
#[derive(Debug, Default)]
pub(crate) struct NoneCompleted {
    runs: usize,
    dropped: usize,
}

fn is_latency(key: &MetricKey) -> bool {
    matches!(key, MetricKey::Latency(..))
}

impl NoneCompleted {
    /// Leaves out the latencies of the records that completed no request.
    pub(crate) fn records(&mut self, records: &mut [Record]) {
        for r in records {
            if r.metric(&MetricKey::Completed) != Some(0.0) {
                continue;
            }
            let before = r.metrics.len();
            r.metrics.retain(|k, _| !is_latency(k));
            let dropped = before - r.metrics.len();
            if dropped > 0 {
                self.runs += 1;
                self.dropped += dropped;
            }
        }
    }

    /// The same over columns: the rows whose `completed` is 0 lose their latency values.
    pub(crate) fn columns(&mut self, columns: &mut crate::model::columns::Columns) {
        let Some(ci) = columns.metric_position(&MetricKey::Completed) else {
            return;
        };
        let none: Vec<bool> = {
            let c = &columns.metrics()[ci];
            (0..c.len()).map(|i| c.get(i) == Some(0.0)).collect()
        };
        if !none.contains(&true) {
            return;
        }
        let mut rows = vec![false; none.len()];
        for col in columns.metrics_mut() {
            if !is_latency(&col.key)
                || !(0..col.len()).any(|i| none.get(i) == Some(&true) && col.get(i).is_some())
            {
                continue;
            }
            let mut kept = MetricColumn::new(col.key.clone());
            for (i, is_none) in none.iter().enumerate().take(col.len()) {
                let v = col.get(i);
                if *is_none && v.is_some() {
                    self.dropped += 1;
                    rows[i] = true;
                    kept.push(None);
                } else {
                    kept.push(v);
                }
            }
            *col = kept;
        }
        self.runs += rows.iter().filter(|r| **r).count();
    }

    /// The warning, when a latency was left out.
    pub(crate) fn warning(self) -> Option<Warning> {
        (self.runs > 0).then(|| {
            let runs = if self.runs == 1 { "run" } else { "runs" };
            Warning::file(format!(
                "{} {runs} completed no request: {} latency values left out (a run that only failed measured no latency, never 0 ms); its completed and failed counts are kept",
                self.runs, self.dropped
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_that_completed_nothing_has_no_latency() {
        use crate::model::{LatencyMetric, Stat};
        let ttft = MetricKey::Latency(LatencyMetric::Ttft, Stat::Mean);
        let mut failed = Record::default();
        failed.set_metric(MetricKey::Completed, 0.0);
        failed.set_metric(MetricKey::Failed, 8.0);
        failed.set_metric(ttft.clone(), 0.0);
        failed.set_metric(MetricKey::RequestThroughput, 0.0);
        let mut ok = Record::default();
        ok.set_metric(MetricKey::Completed, 8.0);
        ok.set_metric(ttft.clone(), 0.0);
        let mut records = vec![failed, ok];
        let columns_before = crate::model::columns::Columns::from_records(&records);
        let mut t = NoneCompleted::default();
        t.records(&mut records);
        assert_eq!(records[0].metric(&ttft), None);
        assert_eq!(records[0].metric(&MetricKey::Failed), Some(8.0));
        assert_eq!(records[0].metric(&MetricKey::RequestThroughput), Some(0.0));
        assert_eq!(records[1].metric(&ttft), Some(0.0));
        let w = t.warning().unwrap().to_string();
        assert!(
            w.starts_with("1 run completed no request: 1 latency values left out"),
            "{w}"
        );
        // The same through columns.
        let mut columns = columns_before;
        let mut t = NoneCompleted::default();
        t.columns(&mut columns);
        let c = &columns.metrics()[columns.metric_position(&ttft).unwrap()];
        assert_eq!((c.get(0), c.get(1)), (None, Some(0.0)));
        assert!(t.warning().is_some());
        assert!(NoneCompleted::default().warning().is_none());
    }

    #[test]
    fn one_warning_per_metric_and_kind_with_a_count() {
        let mut records = Vec::new();
        for v in [-1.0, -2.0, f64::NAN, 1e308, 5.0] {
            let mut r = Record::default();
            r.metrics.insert(MetricKey::Completed, v);
            r.metrics.insert(
                MetricKey::Extra("delta".into()),
                if v == 5.0 { f64::INFINITY } else { -v },
            );
            records.push(r);
        }
        let mut t = Impossible::default();
        t.records(&records);
        let w: Vec<String> = t.warnings().map(|w| w.to_string()).collect();
        assert_eq!(
            w,
            [
                "completed: 1 value not a finite number (first: NaN), kept as read: an impossible measurement",
                "completed: 2 values negative (first: -1), kept as read: an impossible measurement",
                "completed: 1 value too large to be a measurement (first: 1e308), kept as read: an impossible measurement",
                "extra.delta: 2 values not a finite number (first: NaN), kept as read: an impossible measurement",
            ]
        );
        // The same through columns.
        let mut c = MetricColumn::new(MetricKey::Completed);
        for v in [Some(-1.0), None, Some(-2.0), Some(3.0)] {
            c.push(v);
        }
        let mut t = Impossible::default();
        t.columns(&[c]);
        let w: Vec<String> = t.warnings().map(|w| w.to_string()).collect();
        assert_eq!(
            w,
            ["completed: 2 values negative (first: -1), kept as read: an impossible measurement"]
        );
    }
}
