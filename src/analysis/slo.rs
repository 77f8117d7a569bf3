//! SLO capacity: given limits such as p99 TTFT ≤ 500 ms and mean TPOT ≤ 50 ms, the highest
//! load (request rate or concurrency) per series that meets all of them, and the throughput
//! there.
//!
//! The answer is always a *measured* point first ([`SloOutcome::measured`]): the highest
//! measured load whose values meet every limit. When the next higher measured load breaks a
//! limit, the boundary between the two is estimated by linear interpolation of each broken
//! metric against load (the earliest crossing wins) and returned separately as
//! [`SloOutcome::estimate`] with `interpolated: true` — never presented as measured. Several
//! records at one load of a series are averaged. An infinite load (`request_rate = inf`) can
//! be a measured answer but is never interpolated towards.

use std::collections::BTreeMap;

use super::export::{Cell, TextColumn, TextTable};
use super::series_name;
use crate::charts::format_value;
use crate::model::{format_number, Dataset, DimKey, DimValue, MetricKey};

/// One limit: `metric ≤ max_value`.
#[derive(Clone, Debug, PartialEq)]
pub struct SloLimit {
    /// The limited metric (`p99_ttft_ms`).
    pub metric: MetricKey,
    /// The largest acceptable value, in the metric's unit.
    pub max_value: f64,
}

/// Why a limit could not be parsed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("cannot read SLO limit {text:?}: {why}")]
pub struct SloParseError {
    /// The text given.
    pub text: String,
    /// What is wrong, lowercase.
    pub why: String,
}

impl SloLimit {
    /// Parses `p99_ttft_ms<=500` (also `≤`, spaces allowed).
    pub fn parse(text: &str) -> Result<SloLimit, SloParseError> {
        let err = |why: &str| SloParseError {
            text: text.to_string(),
            why: why.to_string(),
        };
        let (name, value) = text
            .split_once("<=")
            .or_else(|| text.split_once('≤'))
            .ok_or_else(|| err("expected METRIC<=VALUE, e.g. p99_ttft_ms<=500"))?;
        let metric = MetricKey::from_name(name.trim())
            .ok_or_else(|| err(&format!("unknown metric {:?}", name.trim())))?;
        let max_value: f64 = value
            .trim()
            .parse()
            .map_err(|_| err(&format!("{:?} is not a number", value.trim())))?;
        if !max_value.is_finite() {
            return Err(err("the limit must be a finite number"));
        }
        Ok(SloLimit { metric, max_value })
    }
}

/// What to evaluate.
#[derive(Clone, Debug, PartialEq)]
pub struct SloSpec {
    /// Every limit must hold.
    pub limits: Vec<SloLimit>,
    /// The load dimension: `request_rate` or `max_concurrency` (any numeric dimension works).
    pub load: DimKey,
    /// The throughput reported at the answer (`output_throughput`).
    pub throughput: MetricKey,
    /// Dimensions whose combined values name a series. Empty: one series.
    pub series_by: Vec<DimKey>,
}

/// How one measured load fared.
#[derive(Clone, Debug, PartialEq)]
pub struct SloCheck {
    /// The load.
    pub load: f64,
    /// The records averaged at this load.
    pub records: Vec<usize>,
    /// The limits broken, as text (`p99_ttft_ms 620.00 > 500`), or missing (`p99_ttft_ms not
    /// measured`). Empty: every limit holds.
    pub violations: Vec<String>,
}

impl SloCheck {
    /// Whether every limit holds.
    pub fn passes(&self) -> bool {
        self.violations.is_empty()
    }
}

/// A load meeting the limits, with the throughput there.
#[derive(Clone, Debug, PartialEq)]
pub struct SloPoint {
    /// The load (request rate in req/s, or concurrency).
    pub load: f64,
    /// The throughput at that load, if measured (or interpolable).
    pub throughput: Option<f64>,
    /// `true` for an estimate between two measured loads; `false` for a measured point.
    pub interpolated: bool,
}

/// The answer for one series.
#[derive(Clone, Debug, PartialEq)]
pub struct SloOutcome {
    /// Series name.
    pub series: String,
    /// Every measured load, ascending.
    pub checks: Vec<SloCheck>,
    /// The highest measured load meeting every limit, if any.
    pub measured: Option<SloPoint>,
    /// The interpolated boundary between `measured` and the next (failing) load, if both have
    /// the values needed.
    pub estimate: Option<SloPoint>,
}

#[derive(Default)]
struct Acc {
    records: Vec<usize>,
    sums: BTreeMap<MetricKey, (f64, usize)>,
}

impl Acc {
    fn mean(&self, m: &MetricKey) -> Option<f64> {
        self.sums.get(m).map(|(s, n)| s / *n as f64)
    }
}

fn lerp(x0: f64, y0: f64, x1: f64, y1: f64, x: f64) -> f64 {
    if x1 == x0 {
        y0
    } else {
        y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    }
}

/// Evaluates the limits per series over the records at `indices` that have a numeric load.
pub fn slo(ds: &Dataset, indices: &[usize], spec: &SloSpec) -> Vec<SloOutcome> {
    let mut metrics: Vec<MetricKey> = spec.limits.iter().map(|l| l.metric.clone()).collect();
    metrics.push(spec.throughput.clone());
    let mut groups: BTreeMap<String, BTreeMap<DimValue, Acc>> = BTreeMap::new();
    for &i in indices {
        let Some(r) = ds.records().get(i) else {
            continue;
        };
        let Some(load) = r
            .dim(&spec.load)
            .filter(|v| v.as_f64().is_some_and(|x| !x.is_nan()))
        else {
            continue;
        };
        let acc = groups
            .entry(series_name(r, &spec.series_by))
            .or_default()
            .entry(load)
            .or_default();
        acc.records.push(i);
        for m in &metrics {
            if let Some(v) = r.metric(m).filter(|v| v.is_finite()) {
                let e = acc.sums.entry(m.clone()).or_default();
                e.0 += v;
                e.1 += 1;
            }
        }
    }
    groups
        .into_iter()
        .map(|(series, loads)| {
            let points: Vec<(f64, Acc)> = loads
                .into_iter()
                .filter_map(|(k, acc)| k.as_f64().map(|x| (x, acc)))
                .collect();
            let checks: Vec<SloCheck> = points
                .iter()
                .map(|(load, acc)| SloCheck {
                    load: *load,
                    records: acc.records.clone(),
                    violations: spec
                        .limits
                        .iter()
                        .filter_map(|l| match acc.mean(&l.metric) {
                            None => Some(format!("{} not measured", l.metric.name())),
                            Some(v) if v > l.max_value => Some(format!(
                                "{} {} > {}",
                                l.metric.name(),
                                format_value(v),
                                format_number(l.max_value)
                            )),
                            Some(_) => None,
                        })
                        .collect(),
                })
                .collect();
            let best = checks.iter().rposition(SloCheck::passes);
            let measured = best.map(|b| SloPoint {
                load: points[b].0,
                throughput: points[b].1.mean(&spec.throughput),
                interpolated: false,
            });
            let estimate = best.and_then(|b| {
                let (l0, a0) = points.get(b)?;
                let (l1, a1) = points.get(b + 1)?;
                if !l1.is_finite() {
                    return None;
                }
                let mut boundary = *l1;
                for lim in &spec.limits {
                    let (v0, v1) = (a0.mean(&lim.metric)?, a1.mean(&lim.metric));
                    match v1 {
                        Some(v1) if v1 > lim.max_value => {
                            // v0 ≤ max < v1: the crossing lies strictly after l0.
                            let t = (lim.max_value - v0) / (v1 - v0);
                            boundary = boundary.min(l0 + t * (l1 - l0));
                        }
                        Some(_) => {}
                        None => return None,
                    }
                }
                let throughput = match (a0.mean(&spec.throughput), a1.mean(&spec.throughput)) {
                    (Some(t0), Some(t1)) => Some(lerp(*l0, t0, *l1, t1, boundary)),
                    _ => None,
                };
                Some(SloPoint {
                    load: boundary,
                    throughput,
                    interpolated: true,
                })
            });
            SloOutcome {
                series,
                checks,
                measured,
                estimate,
            }
        })
        .collect()
}

/// The outcomes as an exportable table: series, highest measured load and its throughput,
/// and the interpolated estimate (marked "estimate").
pub fn slo_text_table(outcomes: &[SloOutcome], spec: &SloSpec) -> TextTable {
    let tput = spec.throughput.label();
    let columns = vec![
        TextColumn::new("series", "Series", false),
        TextColumn::new(
            "measured_load",
            format!("Highest load meeting the SLO ({})", spec.load.label()),
            true,
        ),
        TextColumn::new("measured_throughput", format!("{tput} there"), true),
        TextColumn::new("estimated_load", "Estimated boundary (interpolated)", true),
        TextColumn::new(
            "estimated_throughput",
            format!("{tput} at the boundary (interpolated)"),
            true,
        ),
    ];
    let num = |v: Option<f64>| v.map_or(Cell::Empty, |v| Cell::number(v, format_value(v)));
    let rows = outcomes
        .iter()
        .map(|o| {
            vec![
                Cell::Text(o.series.clone()),
                o.measured.as_ref().map_or(Cell::Text("none".into()), |p| {
                    Cell::number(p.load, format_number(p.load))
                }),
                num(o.measured.as_ref().and_then(|p| p.throughput)),
                num(o.estimate.as_ref().map(|p| p.load)),
                num(o.estimate.as_ref().and_then(|p| p.throughput)),
            ]
        })
        .collect();
    TextTable { columns, rows }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Dim, LatencyMetric, Percentile, Record, Stat};

    fn p99_ttft() -> MetricKey {
        MetricKey::latency(LatencyMetric::Ttft, Stat::P(Percentile::new(99.0).unwrap()))
    }

    fn rec(engine: &str, rate: f64, ttft: f64, tpot: f64, tput: f64) -> Record {
        let mut r = Record {
            engine: Some(engine.into()),
            request_rate: Some(rate),
            ..Record::default()
        };
        r.set_metric(p99_ttft(), ttft);
        r.set_metric(MetricKey::latency(LatencyMetric::Tpot, Stat::Mean), tpot);
        r.set_metric(MetricKey::OutputThroughput, tput);
        r
    }

    fn spec() -> SloSpec {
        SloSpec {
            limits: vec![
                SloLimit::parse("p99_ttft_ms <= 500").unwrap(),
                SloLimit::parse("mean_tpot_ms≤50").unwrap(),
            ],
            load: Dim::RequestRate.into(),
            throughput: MetricKey::OutputThroughput,
            series_by: vec![Dim::Engine.into()],
        }
    }

    #[test]
    fn highest_passing_load_and_interpolated_boundary() {
        let ds = Dataset::new(vec![
            rec("a", 1.0, 100.0, 20.0, 100.0),
            rec("a", 4.0, 300.0, 30.0, 400.0),
            rec("a", 8.0, 700.0, 40.0, 800.0),
            rec("a", f64::INFINITY, 9000.0, 90.0, 900.0),
            rec("b", 1.0, 600.0, 20.0, 90.0),
            rec("c", 1.0, 100.0, 20.0, 90.0),
            rec("c", f64::INFINITY, 200.0, 20.0, 95.0),
        ]);
        let all: Vec<usize> = (0..ds.len()).collect();
        let out = slo(&ds, &all, &spec());
        let a = &out[0];
        let m = a.measured.as_ref().unwrap();
        assert_eq!(
            (m.load, m.throughput, m.interpolated),
            (4.0, Some(400.0), false)
        );
        let e = a.estimate.as_ref().unwrap();
        // TTFT crosses 500 halfway between 300 (rate 4) and 700 (rate 8): rate 6.
        assert!(e.interpolated);
        assert!((e.load - 6.0).abs() < 1e-12);
        assert!((e.throughput.unwrap() - 600.0).abs() < 1e-9);
        assert_eq!(a.checks[2].violations, ["p99_ttft_ms 700.00 > 500"]);
        // b never meets the SLO.
        assert!(out[1].measured.is_none() && out[1].estimate.is_none());
        // c meets it even unbounded: measured inf, nothing to interpolate.
        assert_eq!(out[2].measured.as_ref().unwrap().load, f64::INFINITY);
        assert!(out[2].estimate.is_none());
        let md = slo_text_table(&out, &spec()).to_markdown();
        assert!(md.contains("| a | 4 | 400.00 | 6.00 | 600.00 |"), "{md}");
    }

    #[test]
    fn limits_parse_with_clear_errors() {
        assert_eq!(
            SloLimit::parse("p99_ttft_ms<=500").unwrap().max_value,
            500.0
        );
        let e = SloLimit::parse("ttft<500").unwrap_err();
        assert!(e.to_string().contains("expected METRIC<=VALUE"), "{e}");
        let e = SloLimit::parse("nope<=5").unwrap_err();
        assert!(e.to_string().contains("unknown metric \"nope\""), "{e}");
    }
}
