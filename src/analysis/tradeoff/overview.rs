//! The trade-off overview: one row per series (curve) with a few numbers that can be compared
//! at a glance: its frontier read at a few levels of the x axis ("throughput per GPU at 20, 50
//! and 100 tok/s per user") and the area under the frontier over a band of x (the mean y over
//! the band, so its unit stays the y axis's), each against a chosen baseline series as a ratio.
//! Readings follow [`economics::read_at`]: interpolated, never extrapolated.

use super::{TradeoffSeries, TradeoffSpec};
use crate::analysis::economics;
use crate::analysis::export::{Cell, TextColumn, TextTable};
use crate::charts::style::format_value;
use crate::model::round_significant;
use crate::model::spread::{distinguishable, Interval, Noisy, NOT_DISTINGUISHABLE};

/// One series in the overview.
#[derive(Clone, Debug, PartialEq)]
pub struct OverviewRow {
    /// The series.
    pub series: String,
    /// The frontier's y at each level (`None`: not reached, or no frontier).
    pub at: Vec<Option<f64>>,
    /// The mean y over the band (`None` when the frontier does not reach the band's far end).
    pub band_mean: Option<f64>,
    /// Each figure (levels, then the band) as a ratio to the baseline's, when both exist.
    pub vs_baseline: Vec<Option<f64>>,
    /// Each level's reading with its interval, from the frontier points' intervals (repeats)
    /// around it ([`interval_at`]); `None` where it has none.
    pub intervals: Vec<Option<Interval>>,
    /// Per figure, whether it can be told from the baseline's ([`distinguishable`]):
    /// `Some(false)` when their intervals overlap; `None` when neither has one (the band's
    /// mean never has).
    pub apart: Vec<Option<bool>>,
}

/// The interval of the frontier of `s` read at `x` (its value `value`): the half widths of the
/// frontier points' intervals (0 for a point without one) interpolated linearly in x between
/// the two points around `x`, the nearest end's outside them, as the reading itself is. `None`
/// when no frontier point has an interval.
pub fn interval_at(s: &TradeoffSeries, x: f64, value: f64) -> Option<Interval> {
    let front: Vec<(f64, f64)> = s
        .frontier
        .iter()
        .filter_map(|&i| s.points.get(i))
        .map(|p| (p.latency, p.interval.map_or(0.0, |i| i.half_width())))
        .collect();
    let basis = s
        .frontier
        .iter()
        .find_map(|&i| s.points.get(i)?.interval)?
        .basis;
    let k = front.partition_point(|p| p.0 < x);
    let half = match (k.checked_sub(1).and_then(|j| front.get(j)), front.get(k)) {
        (Some(a), Some(b)) if b.0 > a.0 => a.1 + (b.1 - a.1) * (x - a.0) / (b.0 - a.0),
        (_, Some(b)) => b.1,
        (Some(a), None) => a.1,
        (None, None) => return None,
    };
    Interval::new(value, half, basis)
}

/// The overview of every series.
#[derive(Clone, Debug, PartialEq)]
pub struct Overview {
    /// The x levels read.
    pub levels: Vec<f64>,
    /// The band `(from, to)` the mean is taken over.
    pub band: (f64, f64),
    /// The baseline series, when one was chosen and is present.
    pub baseline: Option<String>,
    /// Rows in series order.
    pub rows: Vec<OverviewRow>,
}

/// Levels when none are given: four round numbers spread over the x values every series'
/// frontier reaches together (from the largest of the series' worst x to the smallest of their
/// best), else over all frontier points.
pub fn default_levels(series: &[TradeoffSeries], spec: &TradeoffSpec) -> Vec<f64> {
    let x_hib = spec.latency.higher_is_better();
    let ranges: Vec<(f64, f64)> = series
        .iter()
        .filter_map(|s| {
            let xs = s
                .frontier
                .iter()
                .filter_map(|&i| s.points.get(i))
                .map(|p| p.latency)
                .filter(|x| x.is_finite());
            xs.fold(None, |r: Option<(f64, f64)>, x| {
                Some(r.map_or((x, x), |(lo, hi)| (lo.min(x), hi.max(x))))
            })
        })
        .collect();
    if ranges.is_empty() {
        return Vec::new();
    }
    // Every series reaches x when x is at or past its worse end and within its better end.
    let (lo, hi) = if x_hib {
        (
            ranges.iter().map(|r| r.0).fold(f64::INFINITY, f64::min),
            ranges.iter().map(|r| r.1).fold(f64::INFINITY, f64::min),
        )
    } else {
        (
            ranges.iter().map(|r| r.0).fold(f64::NEG_INFINITY, f64::max),
            ranges.iter().map(|r| r.1).fold(f64::NEG_INFINITY, f64::max),
        )
    };
    let (lo, hi) = if lo < hi {
        (lo, hi)
    } else {
        let all_lo = ranges.iter().map(|r| r.0).fold(f64::INFINITY, f64::min);
        let all_hi = ranges.iter().map(|r| r.1).fold(f64::NEG_INFINITY, f64::max);
        (all_lo, all_hi)
    };
    let mut levels: Vec<f64> = (1..=4)
        .map(|k| round_significant(lo + (hi - lo) * k as f64 / 5.0, 2))
        .filter(|v| v.is_finite())
        .collect();
    levels.dedup();
    levels
}

/// The mean of the frontier's y over x in `band`, from its piecewise-linear reading (clamped
/// ends read as [`economics::read_at`] reads them); `None` when any x in the band is not
/// reached or the band is empty.
fn band_mean(front: &[(f64, f64)], x_hib: bool, y_hib: bool, band: (f64, f64)) -> Option<f64> {
    let (a, b) = (band.0.min(band.1), band.0.max(band.1));
    if !(a.is_finite() && b.is_finite()) || a == b {
        return None;
    }
    let read = |x: f64| match economics::read_at(front, x_hib, y_hib, x) {
        Ok(Some(r)) => Some(r.value),
        _ => None,
    };
    // The frontier's own x values inside the band are where the reading bends.
    let mut xs: Vec<f64> = front
        .iter()
        .map(|p| p.0)
        .filter(|x| *x > a && *x < b)
        .collect();
    xs.push(a);
    xs.push(b);
    crate::model::order::sort_floats(&mut xs);
    xs.dedup();
    let mut area = 0.0;
    for w in xs.windows(2) {
        let (ya, yb) = (read(w[0])?, read(w[1])?);
        area += (w[1] - w[0]) * (ya + yb) / 2.0;
    }
    Some(area / (b - a))
}

/// The overview of `series` at `levels`, the mean over `band`, against `baseline` (a series
/// name; ignored when absent).
pub fn overview(
    series: &[TradeoffSeries],
    spec: &TradeoffSpec,
    levels: &[f64],
    band: (f64, f64),
    baseline: Option<&str>,
) -> Overview {
    let x_hib = spec.latency.higher_is_better();
    let y_hib = spec.throughput.higher_is_better();
    let mut rows: Vec<OverviewRow> = series
        .iter()
        .map(|s| {
            let front = s.frontier_xy();
            OverviewRow {
                series: s.name.clone(),
                at: levels
                    .iter()
                    .map(|&x| match economics::read_at(&front, x_hib, y_hib, x) {
                        Ok(Some(r)) => Some(r.value),
                        _ => None,
                    })
                    .collect(),
                band_mean: band_mean(&front, x_hib, y_hib, band),
                vs_baseline: Vec::new(),
                intervals: Vec::new(),
                apart: Vec::new(),
            }
        })
        .collect();
    for (row, s) in rows.iter_mut().zip(series) {
        row.intervals = levels
            .iter()
            .zip(&row.at)
            .map(|(&x, v)| interval_at(s, x, (*v)?))
            .collect();
    }
    let base = baseline
        .and_then(|b| rows.iter().find(|r| r.series == b))
        .cloned();
    for row in &mut rows {
        let figures = row.at.iter().copied().chain([row.band_mean]);
        row.vs_baseline = match &base {
            None => Vec::new(),
            Some(b) => figures
                .zip(b.at.iter().copied().chain([b.band_mean]))
                .map(|(v, bv)| match (v, bv) {
                    (Some(v), Some(bv)) if bv != 0.0 => Some(v / bv),
                    _ => None,
                })
                .collect(),
        };
        let noisy = |r: &OverviewRow, k: usize| {
            let value =
                r.at.iter()
                    .chain([&r.band_mean])
                    .nth(k)
                    .copied()
                    .flatten()?;
            Some(Noisy {
                value,
                interval: r.intervals.get(k).copied().flatten(),
            })
        };
        row.apart = match &base {
            Some(b) if b.series == row.series => Vec::new(),
            None => Vec::new(),
            Some(b) => (0..=row.at.len())
                .map(|k| distinguishable(&noisy(row, k)?, &noisy(b, k)?))
                .collect(),
        };
    }
    Overview {
        levels: levels.to_vec(),
        band: (band.0.min(band.1), band.0.max(band.1)),
        baseline: base.map(|b| b.series),
        rows,
    }
}

/// The overview the trade-off view shows, from what was typed: the `levels` (else
/// [`default_levels`]), the `band` as its two ends (else from the first level to the last),
/// against `baseline` (empty: none). `Ok(None)` with fewer than two series or no level; an
/// error for a band that is not two different numbers.
pub fn overview_as_typed(
    series: &[TradeoffSeries],
    spec: &TradeoffSpec,
    levels: Vec<f64>,
    band: &[f64],
    baseline: &str,
) -> Result<Option<Overview>, String> {
    let band = match band {
        [] => None,
        [a, b] if a != b => Some((*a, *b)),
        _ => return Err("give the band as two different numbers, e.g. 20, 80".to_string()),
    };
    let levels = if levels.is_empty() {
        default_levels(series, spec)
    } else {
        levels
    };
    let (Some(&first), Some(&last)) = (levels.first(), levels.last()) else {
        return Ok(None);
    };
    if series.len() < 2 {
        return Ok(None);
    }
    let base = Some(baseline).filter(|b| !b.is_empty());
    Ok(Some(overview(
        series,
        spec,
        &levels,
        band.unwrap_or((first, last)),
        base,
    )))
}

impl Overview {
    /// The overview as a table: a column per level and one for the band, each cell the value
    /// and, with a baseline, its ratio (`1520.00 (1.25×)`). Unreached cells say so.
    pub fn to_text_table(&self) -> TextTable {
        let mut columns = vec![TextColumn::new("series", "Series", false)];
        for (k, level) in self.levels.iter().enumerate() {
            columns.push(TextColumn::new(
                format!("at_{k}"),
                format!("at {}", format_value(*level)),
                true,
            ));
        }
        columns.push(TextColumn::new(
            "band_mean",
            format!(
                "mean over {}–{}",
                format_value(self.band.0),
                format_value(self.band.1)
            ),
            true,
        ));
        let rows = self
            .rows
            .iter()
            .map(|r| {
                let mut row = vec![Cell::Text(r.series.clone())];
                for (k, v) in r.at.iter().chain([&r.band_mean]).enumerate() {
                    let ratio = r.vs_baseline.get(k).copied().flatten();
                    let same = r.apart.get(k) == Some(&Some(false));
                    row.push(match v {
                        Some(v) => Cell::number(
                            *v,
                            match ratio {
                                Some(q) if same => {
                                    format!("{} ({q:.2}×, {NOT_DISTINGUISHABLE})", format_value(*v))
                                }
                                Some(q) => format!("{} ({q:.2}×)", format_value(*v)),
                                None => format_value(*v),
                            },
                        ),
                        None => Cell::Text("not reached".into()),
                    });
                }
                row
            })
            .collect();
        TextTable { columns, rows }
    }

    /// Row order sorted by figure `column` (the levels, then the band), best first for the
    /// y axis's direction, rows without that figure last; ties keep series order.
    pub fn order_by(&self, column: usize, y_higher_is_better: bool) -> Vec<usize> {
        let figure = |r: &OverviewRow| {
            r.at.iter()
                .chain([&r.band_mean])
                .nth(column)
                .copied()
                .flatten()
        };
        let mut order: Vec<usize> = (0..self.rows.len()).collect();
        crate::model::order::sort_by(&mut order, |&a, &b| {
            match (figure(&self.rows[a]), figure(&self.rows[b])) {
                (Some(x), Some(y)) if y_higher_is_better => y.total_cmp(&x),
                (Some(x), Some(y)) => x.total_cmp(&y),
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (None, None) => std::cmp::Ordering::Equal,
            }
        });
        order
    }

    /// How good a ratio to the baseline is, from −1 (much worse) to 1 (much better), for the
    /// heatmap's colour: the log2 of the ratio, turned for lower-is-better axes, clamped.
    pub fn goodness(ratio: f64, y_higher_is_better: bool) -> Option<f64> {
        if !(ratio.is_finite() && ratio > 0.0) {
            return None;
        }
        let l = ratio.log2();
        Some((if y_higher_is_better { l } else { -l }).clamp(-1.0, 1.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::economics::Assumptions;
    use crate::analysis::tradeoff::{LatencyAxis, ThroughputAxis, TradeoffPoint};
    use crate::charts::Theme;

    fn series(name: &str, pts: &[(f64, f64)]) -> TradeoffSeries {
        TradeoffSeries {
            name: name.into(),
            points: pts
                .iter()
                .enumerate()
                .map(|(i, &(x, y))| TradeoffPoint {
                    record: i,
                    latency: x,
                    throughput: y,
                    on_frontier: true,
                    dominated_by: None,
                    interval: None,
                })
                .collect(),
            frontier: (0..pts.len()).collect(),
        }
    }

    fn spec() -> TradeoffSpec {
        TradeoffSpec {
            throughput: ThroughputAxis::OutputTokensPerSPerGpu,
            latency: LatencyAxis::TokensPerSPerUser,
            series_by: vec![],
            theme: Theme::Light,
            assumptions: Assumptions::default(),
        }
    }

    #[test]
    fn each_series_is_read_at_the_levels_and_averaged_over_the_band() {
        let s = [
            series("h100", &[(10.0, 2000.0), (40.0, 1000.0), (100.0, 200.0)]),
            series("b200", &[(10.0, 4000.0), (60.0, 1500.0)]),
        ];
        let o = overview(&s, &spec(), &[20.0, 80.0], (10.0, 40.0), Some("h100"));
        let close = |v: Option<f64>, want: f64| v.is_some_and(|v| (v - want).abs() < 1e-9);
        assert!(
            close(o.rows[0].at[0], 2000.0 - 1000.0 / 3.0),
            "{:?}",
            o.rows[0].at
        );
        assert!(
            close(o.rows[0].at[1], 200.0 + 800.0 / 3.0),
            "{:?}",
            o.rows[0].at
        );
        // b200 never reaches 80 tok/s per user.
        assert_eq!(o.rows[1].at[1], None);
        // Over 10–40 the h100 frontier falls linearly from 2000 to 1000: mean 1500.
        assert_eq!(o.rows[0].band_mean, Some(1500.0));
        // b200 over 10–40: from 4000 to 2500 (at 40): mean 3250.
        assert_eq!(o.rows[1].band_mean, Some(3250.0));
        assert_eq!(o.rows[0].vs_baseline, [Some(1.0), Some(1.0), Some(1.0)]);
        assert_eq!(o.rows[1].vs_baseline[2], Some(3250.0 / 1500.0));
        assert_eq!(o.rows[1].vs_baseline[1], None);
        // Sorted by the first level, best first; by the second, the unreached last.
        assert_eq!(o.order_by(0, true), [1, 0]);
        assert_eq!(o.order_by(0, false), [0, 1]);
        assert_eq!(o.order_by(1, true), [0, 1]);
        let md = o.to_text_table().to_markdown();
        assert!(
            md.contains("| b200 | 3500.00 (2.10×) | not reached | 3250.00 (2.17×) |"),
            "{md}"
        );
        // A band past a frontier's reach has no mean.
        let o = overview(&s, &spec(), &[], (50.0, 90.0), None);
        assert_eq!(o.rows[1].band_mean, None);
        assert!(o.rows[0].vs_baseline.is_empty());
        assert_eq!(o.baseline, None);
    }

    #[test]
    fn what_was_typed_becomes_the_overview_or_says_what_is_wrong() {
        let s = [
            series("h100", &[(10.0, 2000.0), (40.0, 1000.0)]),
            series("b200", &[(10.0, 4000.0), (60.0, 1500.0)]),
        ];
        let o = overview_as_typed(&s, &spec(), vec![20.0, 30.0], &[], "b200")
            .unwrap()
            .unwrap();
        assert_eq!(
            (o.band, o.baseline.as_deref()),
            ((20.0, 30.0), Some("b200"))
        );
        let o = overview_as_typed(&s, &spec(), vec![], &[35.0, 15.0], "")
            .unwrap()
            .unwrap();
        assert_eq!((o.band, o.baseline), ((15.0, 35.0), None));
        assert!(!o.levels.is_empty());
        for bad in [&[20.0][..], &[20.0, 20.0], &[1.0, 2.0, 3.0]] {
            assert_eq!(
                overview_as_typed(&s, &spec(), vec![20.0], bad, ""),
                Err("give the band as two different numbers, e.g. 20, 80".to_string())
            );
        }
        // One series has nothing to compare.
        assert_eq!(
            overview_as_typed(&s[..1], &spec(), vec![20.0], &[], ""),
            Ok(None)
        );
    }

    #[test]
    fn default_levels_are_round_and_inside_every_series_reach() {
        let s = [
            series("a", &[(12.0, 1.0), (95.0, 0.5)]),
            series("b", &[(8.0, 1.0), (61.0, 0.5)]),
        ];
        // Every series reaches up to 61 (below its slowest point, read there): four round
        // levels between 8 and 61.
        assert_eq!(default_levels(&s, &spec()), [19.0, 29.0, 40.0, 50.0]);
        assert!(default_levels(&[], &spec()).is_empty());
    }

    #[test]
    fn the_heatmap_turns_for_lower_is_better_axes() {
        assert_eq!(Overview::goodness(2.0, true), Some(1.0));
        assert_eq!(Overview::goodness(2.0, false), Some(-1.0));
        assert_eq!(Overview::goodness(1.0, true), Some(0.0));
        assert_eq!(Overview::goodness(0.0, true), None);
        assert_eq!(Overview::goodness(8.0, true), Some(1.0));
    }
}
