//! Trade-off: throughput (or what it costs) against latency (or interactivity) per series, and
//! each series' Pareto frontier — the points no other point of the series beats on both axes at
//! once — listed, drawn and read at a target ([`at_target`]).
//!
//! Axes are chosen from [`ThroughputAxis`] (output or total tok/s, per GPU, or $ per million
//! tokens and joules per token from the [`Assumptions`]) and [`LatencyAxis`] (p99 TTFT, mean
//! TPOT, or tokens/s per user = 1000 / TPOT, where higher is better). A record lacking a value
//! for either axis is left out of its series. GPUs are counted as [`economics::gpus_of`] says.

use super::economics::{self, Assumptions};
use super::SeriesSlots;
use crate::charts::style::{escape_html, format_value, Theme};
use crate::model::points::{configuration_dims, Combos};
use crate::model::spread::{is_repeat_dim, point_interval, Interval, Moments};
use crate::model::{Dataset, Dim, DimKey, Record};

mod axes;
mod bins;
mod overview;
mod plot;
mod target;

pub use axes::{LatencyAxis, ThroughputAxis};
pub use bins::{
    bin_points, extent, grid_for, PointBin, BIN_GRID, MAX_BINNED_MARKERS, MAX_FRONTIER_DRAWN,
    MAX_POINT_MARKERS,
};
pub use overview::{default_levels, overview, overview_as_typed, Overview, OverviewRow};
pub use plot::{assemble_plot, assumed_in, series_traces, tradeoff_plot, PlotFrame, SeriesTraces};
pub use target::{assumptions_used, at_target, target_text_table, AssumedFor, TargetRow};

/// What to draw.
#[derive(Clone, Debug, PartialEq)]
pub struct TradeoffSpec {
    /// The y axis.
    pub throughput: ThroughputAxis,
    /// The x axis.
    pub latency: LatencyAxis,
    /// Dimensions whose combined values name a series (engine, gpu, ...). Empty: one series.
    pub series_by: Vec<DimKey>,
    /// Prices and powers per GPU for the cost and energy axes.
    pub assumptions: Assumptions,
    /// Page theme.
    pub theme: Theme,
}

/// One record on the trade-off chart.
#[derive(Clone, Debug, PartialEq)]
pub struct TradeoffPoint {
    /// The record (index into the dataset).
    pub record: usize,
    /// The x value (latency axis).
    pub latency: f64,
    /// The y value (throughput axis).
    pub throughput: f64,
    /// Whether no other point of the series dominates it.
    pub on_frontier: bool,
    /// For a point off the frontier, a frontier point of its series that dominates it (its
    /// record), so the hover can say which deployment beats it.
    pub dominated_by: Option<usize>,
    /// The y value's 95 % interval when the point is the mean of repeats of one configuration
    /// ([`merge_repeats`]; the rule is [`crate::model::spread::point_interval`]).
    pub interval: Option<Interval>,
}

/// One series with its frontier.
#[derive(Clone, Debug, PartialEq)]
pub struct TradeoffSeries {
    /// Series name: the `series_by` values joined by " · ".
    pub name: String,
    /// Points in the order of their records as given.
    pub points: Vec<TradeoffPoint>,
    /// Indices into `points` of the frontier, sorted by latency value (then throughput).
    pub frontier: Vec<usize>,
}

impl TradeoffSeries {
    /// The frontier's points as `(x, y)`, in x order.
    pub fn frontier_xy(&self) -> Vec<(f64, f64)> {
        self.frontier
            .iter()
            .filter_map(|&i| self.points.get(i))
            .map(|p| (p.latency, p.throughput))
            .collect()
    }
}

/// Whether `a` dominates `b`: at least as good on both axes and strictly better on one.
pub fn dominates(
    a: (f64, f64),
    b: (f64, f64),
    x_higher_is_better: bool,
    y_higher_is_better: bool,
) -> bool {
    let better_eq = |u: f64, v: f64, hib: bool| if hib { u >= v } else { u <= v };
    let strictly = |u: f64, v: f64, hib: bool| if hib { u > v } else { u < v };
    better_eq(a.0, b.0, x_higher_is_better)
        && better_eq(a.1, b.1, y_higher_is_better)
        && (strictly(a.0, b.0, x_higher_is_better) || strictly(a.1, b.1, y_higher_is_better))
}

/// Indices of the points no other point dominates (identical points are all kept), in
/// input order.
///
/// A linear pass first sets aside the points that cannot be on the frontier (see
/// [`frontier_candidates`]); one sort and one sweep of the rest find it exactly. A million
/// points take milliseconds where comparing every pair would take hours, and the sort is of the
/// few candidates, not of the million. A point with a NaN coordinate neither dominates nor is
/// dominated (as [`dominates`] says), so it is always kept.
pub fn pareto_frontier(
    points: &[(f64, f64)],
    x_higher_is_better: bool,
    y_higher_is_better: bool,
) -> Vec<usize> {
    // Both axes turned "higher is better"; then q dominates p exactly when q >= p on both
    // axes and q != p.
    // (+ 0.0 makes -0.0 into 0.0, which it equals, so equal values sort together.)
    let up = |v: f64, hib: bool| if hib { v + 0.0 } else { -v + 0.0 };
    let mut kept: Vec<usize> = Vec::new();
    let mut order: Vec<(f64, f64, usize)> = Vec::with_capacity(points.len());
    for (i, &(x, y)) in points.iter().enumerate() {
        if x.is_nan() || y.is_nan() {
            kept.push(i);
        } else {
            order.push((up(x, x_higher_is_better), up(y, y_higher_is_better), i));
        }
    }
    let mut order = frontier_candidates(order);
    // Best x first; within one x, best y first.
    crate::model::order::sort_by(&mut order, |a, b| {
        b.0.total_cmp(&a.0).then(b.1.total_cmp(&a.1))
    });
    // The best y of the points with a strictly better x than the group being swept.
    let mut best_y_before: Option<f64> = None;
    let mut start = 0;
    while start < order.len() {
        let x = order[start].0;
        let end = start + order[start..].partition_point(|p| p.0 == x);
        let top_y = order[start].1;
        // Only the group's best y can survive (a lower y at the same x is dominated), and
        // only when no point with a better x reaches its y.
        if best_y_before.is_none_or(|b| top_y > b) {
            kept.extend(
                order[start..end]
                    .iter()
                    .take_while(|p| p.1 == top_y)
                    .map(|p| p.2),
            );
            best_y_before = Some(top_y);
        }
        start = end;
    }
    crate::model::order::sort(&mut kept);
    kept
}

/// How many x bins [`frontier_candidates`] sorts points into.
const CANDIDATE_BINS: usize = 1024;

/// The points of `up` (coordinates turned "higher is better", no NaN) that may be on the
/// frontier, found without sorting: the x range is cut into equal bins and each bin keeps its
/// best y. Equal x values fall in one bin, so every point of a later bin has a strictly better
/// x; a point whose y is not above the best y of all later bins is dominated by that point and
/// is dropped. What is left is a superset of the frontier (usually a few points per bin), for
/// the exact sort and sweep. With an infinite x, or few points, all are kept.
fn frontier_candidates(up: Vec<(f64, f64, usize)>) -> Vec<(f64, f64, usize)> {
    if up.len() <= CANDIDATE_BINS {
        return up;
    }
    let (lo, hi) = up
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| {
            (lo.min(p.0), hi.max(p.0))
        });
    let width = hi - lo;
    if !width.is_finite() || width <= 0.0 {
        return up;
    }
    let last = CANDIDATE_BINS - 1;
    let bin = |x: f64| (((x - lo) / width * last as f64) as usize).min(last);
    let mut best: Vec<Option<f64>> = vec![None; CANDIDATE_BINS];
    for p in &up {
        let b = &mut best[bin(p.0)];
        *b = Some(b.map_or(p.1, |y| y.max(p.1)));
    }
    // after[b]: the best y of the bins after b (None when they are empty).
    let mut after: Vec<Option<f64>> = vec![None; CANDIDATE_BINS];
    for b in (0..last).rev() {
        after[b] = match (after[b + 1], best[b + 1]) {
            (Some(u), Some(v)) => Some(u.max(v)),
            (u, v) => u.or(v),
        };
    }
    up.into_iter()
        .filter(|p| after[bin(p.0)].is_none_or(|a| p.1 > a))
        .collect()
}

/// Groups the records at `indices` into series and marks each series' Pareto frontier (each
/// axis says its own direction): [`TradeoffGroups`] over all of `indices`, then
/// [`finish_series`] of each series.
pub fn tradeoff(ds: &Dataset, indices: &[usize], spec: &TradeoffSpec) -> Vec<TradeoffSeries> {
    let mut groups = TradeoffGroups::default();
    groups.add(ds, indices, spec);
    groups
        .into_series(ds)
        .into_iter()
        .map(|(name, points)| finish_series(name, points, spec))
        .collect()
}

/// A trade-off's points gathered into series a run of rows at a time, so that the page can
/// take a million rows in steps between which it stays responsive: [`TradeoffGroups::add`]
/// each run, then [`finish_series`] each of [`TradeoffGroups::into_series`]. The points of
/// a series stay in the order their rows were added.
#[derive(Debug, Default)]
pub struct TradeoffGroups {
    groups: std::collections::BTreeMap<String, Vec<TradeoffPoint>>,
}

impl TradeoffGroups {
    /// Adds the records at `rows` to their series (a record lacking either axis is left out).
    pub fn add(&mut self, ds: &Dataset, rows: &[usize], spec: &TradeoffSpec) {
        let latency_of = spec.latency.reader(ds);
        let throughput_of = spec.throughput.reader(ds, &spec.assumptions);
        let mut series = SeriesSlots::new(ds, &spec.series_by);
        let mut groups: Vec<Vec<TradeoffPoint>> = Vec::new();
        for &i in rows {
            let (Some(latency), Some(throughput)) = (latency_of(i), throughput_of(i)) else {
                continue;
            };
            series.group(&mut groups, i).push(TradeoffPoint {
                record: i,
                latency,
                throughput,
                on_frontier: false,
                dominated_by: None,
                interval: None,
            });
        }
        for (name, mut points) in series.named(groups) {
            match self.groups.get_mut(&name) {
                Some(have) => have.append(&mut points),
                None => {
                    self.groups.insert(name, points);
                }
            }
        }
    }

    /// How many points have been added.
    pub fn len(&self) -> usize {
        self.groups.values().map(Vec::len).sum()
    }

    /// Whether no point has been added.
    pub fn is_empty(&self) -> bool {
        self.groups.values().all(Vec::is_empty)
    }

    /// The series, named, in the order of their values (80 before 10000), each with its
    /// repeats of one configuration made one point ([`merge_repeats`]).
    pub fn into_series(self, ds: &Dataset) -> Vec<(String, Vec<TradeoffPoint>)> {
        super::in_value_order(self.groups)
            .into_iter()
            .map(|(name, points)| (name, merge_repeats(ds, points)))
            .collect()
    }
}

/// Points of one configuration told apart only by where or when they ran (file, date, label,
/// a repeat tag: [`is_repeat_dim`]) made one point at their means, its y with the 95 %
/// interval of its mean ([`point_interval`], as the other charts' points). In the order of
/// each configuration's first point, which keeps its record. Unchanged when no repeat
/// dimension takes two values in the dataset (one file: no repeats, no work).
pub fn merge_repeats(ds: &Dataset, points: Vec<TradeoffPoint>) -> Vec<TradeoffPoint> {
    let dims = configuration_dims(ds);
    let varies = |k: &DimKey| ds.column(k).is_some_and(|c| c.dict.len() > 1);
    if !dims.iter().any(|k| is_repeat_dim(k) && varies(k)) {
        return points;
    }
    let mut combos = Combos::new(
        dims.iter()
            .filter(|k| !is_repeat_dim(k))
            .map(|k| ds.column(k).map(|c| (c.codes, c.dict.len()))),
    );
    let mut merged: Vec<(TradeoffPoint, Moments, Moments)> = Vec::new();
    for p in points {
        let id = combos.id(p.record) as usize;
        if id == merged.len() {
            merged.push((p.clone(), Moments::default(), Moments::default()));
        }
        let (_, x, y) = &mut merged[id];
        x.add(p.latency);
        y.add(p.throughput);
    }
    merged
        .into_iter()
        .map(|(mut p, x, y)| {
            p.latency = x.mean();
            p.throughput = y.mean();
            p.interval = point_interval(&y, true, None);
            p
        })
        .collect()
}

/// One series with its Pareto frontier marked, and each point off it linked to a frontier
/// point that beats it. The points keep their order; the frontier is listed in x order
/// (then y, then the points' order). Linear in the points but for the frontier's candidates
/// ([`pareto_frontier`]), so a series of a million points takes one pass, not a sort.
pub fn finish_series(
    name: String,
    mut points: Vec<TradeoffPoint>,
    spec: &TradeoffSpec,
) -> TradeoffSeries {
    let xy: Vec<(f64, f64)> = points.iter().map(|p| (p.latency, p.throughput)).collect();
    let mut frontier = pareto_frontier(
        &xy,
        spec.latency.higher_is_better(),
        spec.throughput.higher_is_better(),
    );
    crate::model::order::sort_by(&mut frontier, |&a, &b| {
        xy[a]
            .0
            .total_cmp(&xy[b].0)
            .then(xy[a].1.total_cmp(&xy[b].1))
            .then(a.cmp(&b))
    });
    for &f in &frontier {
        points[f].on_frontier = true;
    }
    mark_dominated(&mut points, &frontier, spec);
    TradeoffSeries {
        name,
        points,
        frontier,
    }
}

/// Sets each off-frontier point's `dominated_by`: the first frontier point, in the order of
/// the x axis turned "higher is better", at or past the point's x. The frontier's y falls as
/// its x rises, so that one has the best y of all frontier points at least as good on x: if it
/// does not dominate the point, none does (as for a NaN coordinate).
fn mark_dominated(points: &mut [TradeoffPoint], frontier: &[usize], spec: &TradeoffSpec) {
    let (x_hib, y_hib) = (
        spec.latency.higher_is_better(),
        spec.throughput.higher_is_better(),
    );
    let up = |v: f64, hib: bool| if hib { v } else { -v };
    let mut front: Vec<(f64, f64, usize)> = frontier
        .iter()
        .map(|&i| {
            let p = &points[i];
            (up(p.latency, x_hib), up(p.throughput, y_hib), p.record)
        })
        .filter(|f| !f.0.is_nan() && !f.1.is_nan())
        .collect();
    crate::model::order::sort_by(&mut front, |a, b| {
        a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1))
    });
    for p in points.iter_mut().filter(|p| !p.on_frontier) {
        let (x, y) = (up(p.latency, x_hib), up(p.throughput, y_hib));
        let at = front.partition_point(|f| f.0 < x);
        p.dominated_by = front
            .get(at)
            .filter(|f| f.1 >= y && (f.0 > x || f.1 > y))
            .map(|f| f.2);
    }
}

/// The frontier of every series' points together (each axis in its own direction): which
/// deployment is best at each x, whatever its series. `(x, y, record)` in x order.
pub fn global_frontier(series: &[TradeoffSeries], spec: &TradeoffSpec) -> Vec<(f64, f64, usize)> {
    let all: Vec<&TradeoffPoint> = series
        .iter()
        .flat_map(|s| s.frontier.iter().filter_map(|&i| s.points.get(i)))
        .collect();
    let xy: Vec<(f64, f64)> = all.iter().map(|p| (p.latency, p.throughput)).collect();
    let mut front: Vec<(f64, f64, usize)> = pareto_frontier(
        &xy,
        spec.latency.higher_is_better(),
        spec.throughput.higher_is_better(),
    )
    .into_iter()
    .map(|i| (all[i].latency, all[i].throughput, all[i].record))
    .collect();
    crate::model::order::sort_by(&mut front, |a, b| {
        a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1))
    });
    front
}

impl TradeoffSpec {
    /// The hover lines naming both axes with the texts given for a point (or a bin's ranges).
    fn axis_lines(&self, latency: String, throughput: String) -> [String; 2] {
        [
            format!("{}: {latency}", escape_html(self.latency.label())),
            format!("{}: {throughput}", escape_html(self.throughput.label())),
        ]
    }
}

fn hover(ds: &Dataset, series: &str, p: &TradeoffPoint, spec: &TradeoffSpec) -> String {
    let mut lines = vec![format!("<b>{}</b>", escape_html(series))];
    lines.extend(spec.axis_lines(format_value(p.latency), format_value(p.throughput)));
    let record = ds.record(p.record);
    if let Some(i) = &p.interval {
        lines.push(escape_html(&i.describe()));
    }
    if p.on_frontier {
        lines.push("on the Pareto frontier".into());
    } else if let (Some(by), Some(r)) = (p.dominated_by.and_then(|b| ds.record(b)), &record) {
        lines.push(format!(
            "beaten on both axes by the frontier point with {}",
            escape_html(&differing_dims(&by, r))
        ));
    }
    if let Some(r) = record {
        for (k, v) in r.dims() {
            lines.push(format!(
                "{}: {}",
                escape_html(&k.name()),
                escape_html(&v.to_string())
            ));
        }
    }
    lines.join("<br>")
}

/// The dimensions in which `a` differs from `b`, as `name value` (file and format aside):
/// what names the point that beats another.
fn differing_dims(a: &Record, b: &Record) -> String {
    let parts: Vec<String> = a
        .dims()
        .filter(|(k, _)| !matches!(k, DimKey::Known(Dim::Source | Dim::Format)))
        .filter(|(k, v)| b.dim(k).as_ref() != Some(v))
        .map(|(k, v)| format!("{} {v}", k.name()))
        .collect();
    if parts.is_empty() {
        "the same dimensions".to_string()
    } else {
        parts.join(", ")
    }
}

/// At most `max` of `items`, evenly spread, always with the first and the last.
pub fn evenly<T: Copy>(items: &[T], max: usize) -> Vec<T> {
    let n = items.len();
    if n <= max {
        return items.to_vec();
    }
    if max < 2 {
        return items.iter().take(max).copied().collect();
    }
    (0..max).map(|k| items[k * (n - 1) / (max - 1)]).collect()
}

/// The parallelism a record names, for labels along a frontier: `TP8`, `TP4·PP2`, `8 GPUs`.
pub fn parallelism_label(r: &Record) -> Option<String> {
    let parts: Vec<String> = [("TP", r.tp), ("PP", r.pp)]
        .into_iter()
        .filter_map(|(name, v)| v.map(|v| format!("{name}{v}")))
        .collect();
    if !parts.is_empty() {
        return Some(parts.join("·"));
    }
    r.gpu_count
        .map(|n| format!("{n} GPU{}", if n == 1 { "" } else { "s" }))
}

#[cfg(test)]
mod tests;
