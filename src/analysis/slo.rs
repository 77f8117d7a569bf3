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

use super::capacity::{parse_item, Bounded};
use super::export::{Cell, TextColumn, TextTable};
use super::SeriesSlots;
use crate::charts::style::format_value;
use crate::model::points::MergeFinder;
use crate::model::spread::{
    is_repeat_dim, point_interval, short_number, Moments, NOT_DISTINGUISHABLE,
};
use crate::model::{format_number, Dataset, DimKey, DimValue, MetricKey, Stat};

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
    /// Parses one limit with the one objectives parser ([`parse_item`]): a figure the records
    /// hold, `p99_ttft_ms<=500` or `p99_ttft:500` (also `≤`, spaces allowed), `mean_tpot_ms<=50`.
    /// A per-request bound (`ttft:500`) needs each request, which records do not hold.
    pub fn parse(text: &str) -> Result<SloLimit, SloParseError> {
        let err = |why: String| SloParseError {
            text: text.to_string(),
            why,
        };
        let item = parse_item(text).map_err(|e| err(e.to_string()))?;
        let metric = match item.bounded {
            Bounded::Figure(k) => k,
            Bounded::Percentile(p, m) => MetricKey::from_name(&format!("p{p}_{}_ms", m.name()))
                .ok_or_else(|| err(format!("no figure p{p}_{}_ms", m.name())))?,
            Bounded::Request(m) => {
                return Err(err(format!(
                    "{} bounds every request; limits apply to recorded figures, e.g. \
                     p99_{}_ms<=500 or mean_{}_ms<=500",
                    m.name(),
                    m.name(),
                    m.name()
                )))
            }
        };
        Ok(SloLimit {
            metric,
            max_value: item.limit,
        })
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
    /// The limits whose value here is not distinguishable from the limit: the 95 % interval
    /// of the load's repeats holds it ([`crate::model::spread`]), so the verdict could go
    /// either way on a rerun (`p99_ttft_ms 95 % interval 480 – 530 holds 500`).
    pub noise: Vec<String>,
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

struct Acc {
    records: Vec<usize>,
    /// Per metric (as the list `slo` reads): the moments of its finite values.
    sums: Vec<Moments>,
}

impl Acc {
    /// The moments of metric `m` of `metrics` (the list the sums follow), when it has values.
    fn moments(&self, metrics: &[MetricKey], m: &MetricKey) -> Option<&Moments> {
        let at = metrics.iter().position(|k| k == m)?;
        self.sums.get(at).filter(|s| s.n > 0)
    }

    /// The mean of metric `m` of `metrics`.
    fn mean(&self, metrics: &[MetricKey], m: &MetricKey) -> Option<f64> {
        self.moments(metrics, m).map(Moments::mean)
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
    let values: Vec<_> = metrics.iter().map(|m| ds.metric_values(m)).collect();
    let Some(load) = ds.column(&spec.load) else {
        return Vec::new();
    };
    // Per series, per load's dictionary code.
    let mut series = SeriesSlots::new(ds, &spec.series_by);
    let mut by_code: Vec<BTreeMap<u32, Acc>> = Vec::new();
    for &i in indices {
        let code = load.codes.get(i);
        if load
            .value(i)
            .and_then(DimValue::as_f64)
            .is_none_or(f64::is_nan)
        {
            continue;
        }
        let acc = series
            .group(&mut by_code, i)
            .entry(code)
            .or_insert_with(|| Acc {
                records: Vec::new(),
                sums: vec![Moments::default(); metrics.len()],
            });
        acc.records.push(i);
        for (sum, v) in acc.sums.iter_mut().zip(&values) {
            if let Some(v) = v.as_ref().and_then(|v| v.get(i)).filter(|v| v.is_finite()) {
                sum.add(v);
            }
        }
    }
    let groups: BTreeMap<String, BTreeMap<DimValue, Acc>> =
        crate::model::order::map_of(series.named(by_code).into_iter().map(|(name, accs)| {
            let loads = crate::model::order::map_of(accs.into_iter().filter_map(|(code, acc)| {
                let value = load.dict.get((code as usize).checked_sub(1)?)?;
                Some((value.clone(), acc))
            }));
            (name, loads)
        }));
    let mut drawn = spec.series_by.clone();
    drawn.push(spec.load.clone());
    let finder = MergeFinder::new(ds, &drawn);
    super::in_value_order(groups)
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
                        .filter_map(|l| match acc.mean(&metrics, &l.metric) {
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
                    noise: noise(&finder, acc, &metrics, &spec.limits),
                })
                .collect();
            let best = checks.iter().rposition(SloCheck::passes);
            let measured = best.map(|b| SloPoint {
                load: points[b].0,
                throughput: points[b].1.mean(&metrics, &spec.throughput),
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
                    let (v0, v1) = (
                        a0.mean(&metrics, &lim.metric)?,
                        a1.mean(&metrics, &lim.metric),
                    );
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
                let throughput = match (
                    a0.mean(&metrics, &spec.throughput),
                    a1.mean(&metrics, &spec.throughput),
                ) {
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

/// The limits a load's repeats cannot tell from their value (see [`SloCheck::noise`]): only
/// when its records are repeats of one configuration ([`point_interval`]'s rule).
fn noise(
    finder: &MergeFinder<'_>,
    acc: &Acc,
    metrics: &[MetricKey],
    limits: &[SloLimit],
) -> Vec<String> {
    let merge = finder.merge(&acc.records);
    let repeats = merge.dims.iter().all(|d| is_repeat_dim(&d.dim));
    limits
        .iter()
        .filter_map(|l| {
            let i = point_interval(acc.moments(metrics, &l.metric)?, repeats, None)?;
            i.contains(l.max_value).then(|| {
                format!(
                    "{} 95 % interval {} – {} holds {}",
                    l.metric.name(),
                    short_number(i.low),
                    short_number(i.high),
                    format_number(l.max_value)
                )
            })
        })
        .collect()
}

impl SloOutcome {
    /// What the repeats leave open about the answer: the limits not distinguishable at the
    /// highest passing load or at the next load (the first to fail), `None` when nothing is.
    pub fn noise_text(&self) -> Option<String> {
        let at = self.checks.iter().rposition(SloCheck::passes);
        let next = at.map_or(0, |b| b + 1);
        let said: Vec<String> = [at, Some(next)]
            .into_iter()
            .flatten()
            .filter_map(|k| self.checks.get(k))
            .filter(|c| !c.noise.is_empty())
            .map(|c| format!("at {}: {}", format_number(c.load), c.noise.join("; ")))
            .collect();
        (!said.is_empty()).then(|| format!("{NOT_DISTINGUISHABLE} {}", said.join("; ")))
    }
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
    let noisy = outcomes.iter().any(|o| o.noise_text().is_some());
    let mut columns = columns;
    if noisy {
        columns.push(TextColumn::new("noise", "Noise", false));
    }
    let num = |v: Option<f64>| v.map_or(Cell::Empty, |v| Cell::number(v, format_value(v)));
    let rows = outcomes
        .iter()
        .map(|o| {
            let mut row = vec![
                Cell::Text(o.series.clone()),
                o.measured.as_ref().map_or(Cell::Text("none".into()), |p| {
                    Cell::number(p.load, format_number(p.load))
                }),
                num(o.measured.as_ref().and_then(|p| p.throughput)),
                num(o.estimate.as_ref().map(|p| p.load)),
                num(o.estimate.as_ref().and_then(|p| p.throughput)),
            ];
            if noisy {
                row.push(o.noise_text().map_or(Cell::Empty, Cell::Text));
            }
            row
        })
        .collect();
    TextTable { columns, rows }
}

/// Which limits the selected records can answer, and what they could be asked instead.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SloCoverage {
    /// Limits whose metric no selected record has: they cannot be checked.
    pub unchecked: Vec<SloLimit>,
    /// For each unchecked limit, the closest limit the records can answer: the same latency
    /// at the same statistic, else its highest percentile, median or mean.
    pub suggested: Vec<Option<SloLimit>>,
    /// The latency metrics the selected records have (milliseconds, a source's own `_ms`
    /// columns included), to offer.
    pub available: Vec<MetricKey>,
}

impl SloCoverage {
    /// Whether some limit cannot be checked.
    pub fn is_partial(&self) -> bool {
        !self.unchecked.is_empty()
    }

    /// `limits` with each unchecked one replaced by its suggestion (or left out when there is
    /// none), in their order.
    pub fn repaired(&self, limits: &[SloLimit]) -> Vec<SloLimit> {
        limits
            .iter()
            .filter_map(|l| match self.unchecked.iter().position(|u| u == l) {
                None => Some(l.clone()),
                Some(i) => self.suggested.get(i).cloned().flatten(),
            })
            .collect()
    }

    /// One sentence naming what cannot be checked, or `None` when every limit can be.
    pub fn message(&self) -> Option<String> {
        if self.unchecked.is_empty() {
            return None;
        }
        let names: Vec<String> = self.unchecked.iter().map(limit_text).collect();
        let offered = if self.available.is_empty() {
            "The selected records have no latency metric.".to_string()
        } else {
            format!(
                "Latency metrics present: {}.",
                self.available
                    .iter()
                    .map(MetricKey::name)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        Some(format!(
            "Not checked, no selected record has the metric: {}. {offered}",
            names.join(", ")
        ))
    }
}

/// A limit as it is typed: `p99_ttft_ms<=500`.
pub fn limit_text(limit: &SloLimit) -> String {
    format!(
        "{}<={}",
        limit.metric.name(),
        format_number(limit.max_value)
    )
}

/// Limits as they are typed, comma-separated.
pub fn limits_text(limits: &[SloLimit]) -> String {
    limits.iter().map(limit_text).collect::<Vec<_>>().join(", ")
}

/// Splits `limits` into those the `present` metrics can answer and those they cannot, with
/// a replacement for each of the latter.
pub fn slo_coverage(limits: &[SloLimit], present: &[MetricKey]) -> SloCoverage {
    let available: Vec<MetricKey> = present
        .iter()
        .filter(|m| match m {
            MetricKey::Latency(_, stat) => *stat != Stat::Std,
            // A source's own latency columns (`extra.average_latency_per_token_ms`).
            MetricKey::Extra(name) => name.ends_with("_ms"),
            _ => false,
        })
        .cloned()
        .collect();
    let unchecked: Vec<SloLimit> = limits
        .iter()
        .filter(|l| !present.contains(&l.metric))
        .cloned()
        .collect();
    let suggested = unchecked
        .iter()
        .map(|l| {
            closest_metric(&l.metric, &available).map(|metric| SloLimit {
                metric,
                max_value: l.max_value,
            })
        })
        .collect();
    SloCoverage {
        unchecked,
        suggested,
        available,
    }
}

/// The available metric of the same latency family closest to `wanted`.
fn closest_metric(wanted: &MetricKey, available: &[MetricKey]) -> Option<MetricKey> {
    let MetricKey::Latency(family, stat) = wanted else {
        return None;
    };
    let same: Vec<Stat> = available
        .iter()
        .filter_map(|m| match m {
            MetricKey::Latency(f, s) if f == family => Some(*s),
            _ => None,
        })
        .collect();
    let highest_percentile = same
        .iter()
        .filter_map(|s| match s {
            Stat::P(p) => Some(*p),
            _ => None,
        })
        .max()
        .map(Stat::P);
    [
        Some(*stat),
        highest_percentile,
        Some(Stat::Median),
        Some(Stat::Mean),
    ]
    .into_iter()
    .flatten()
    .find(|s| same.contains(s))
    .map(|s| MetricKey::Latency(*family, s))
}

#[cfg(test)]
mod tests;
