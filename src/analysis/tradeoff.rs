//! Trade-off: throughput against latency per series, and each series' Pareto frontier — the
//! points no other point of the series beats on both axes at once — listed and drawn.
//!
//! Axes are chosen from [`ThroughputAxis`] (output or total tok/s, optionally per GPU when
//! `gpu_count` is known) and [`LatencyAxis`] (p99 TTFT, mean TPOT, or tokens/s per user =
//! 1000 / mean TPOT, where higher is better). A record lacking a value for either axis is
//! left out of its series.

use std::collections::BTreeMap;

use plotly::common::{HoverInfo, Line, LineShape, Marker, Mode, Title};
use plotly::layout::Legend;
use plotly::{Plot, Scatter};

use super::series_name;
use crate::charts::style::base_layout;
use crate::charts::style::{escape_html, format_value, series_title, Theme, PALETTE};
use crate::model::{Dataset, DimKey, LatencyMetric, MetricKey, Percentile, Record, Stat};

/// The throughput axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThroughputAxis {
    /// `output_throughput` (tok/s).
    OutputTokensPerS,
    /// `total_token_throughput` (tok/s).
    TotalTokensPerS,
    /// `output_throughput` / `gpu_count` (tok/s per GPU).
    OutputTokensPerSPerGpu,
    /// `total_token_throughput` / `gpu_count` (tok/s per GPU).
    TotalTokensPerSPerGpu,
}

impl ThroughputAxis {
    /// Every choice, for a selector.
    pub const ALL: [ThroughputAxis; 4] = [
        ThroughputAxis::OutputTokensPerS,
        ThroughputAxis::TotalTokensPerS,
        ThroughputAxis::OutputTokensPerSPerGpu,
        ThroughputAxis::TotalTokensPerSPerGpu,
    ];

    /// Axis title with unit.
    pub fn label(self) -> &'static str {
        match self {
            ThroughputAxis::OutputTokensPerS => "Output token throughput (tok/s)",
            ThroughputAxis::TotalTokensPerS => "Total token throughput (tok/s)",
            ThroughputAxis::OutputTokensPerSPerGpu => "Output token throughput per GPU (tok/s/GPU)",
            ThroughputAxis::TotalTokensPerSPerGpu => "Total token throughput per GPU (tok/s/GPU)",
        }
    }

    /// The value for a record; per-GPU axes need `gpu_count` > 0.
    pub fn value(self, r: &Record) -> Option<f64> {
        let per_gpu = |v: Option<f64>| {
            let gpus = r.gpu_count.filter(|&g| g > 0)? as f64;
            v.map(|v| v / gpus)
        };
        let v = match self {
            ThroughputAxis::OutputTokensPerS => r.metric(&MetricKey::OutputThroughput),
            ThroughputAxis::TotalTokensPerS => r.metric(&MetricKey::TotalTokenThroughput),
            ThroughputAxis::OutputTokensPerSPerGpu => {
                per_gpu(r.metric(&MetricKey::OutputThroughput))
            }
            ThroughputAxis::TotalTokensPerSPerGpu => {
                per_gpu(r.metric(&MetricKey::TotalTokenThroughput))
            }
        };
        v.filter(|v| v.is_finite())
    }
}

/// The latency axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LatencyAxis {
    /// `p99_ttft_ms` (lower is better).
    P99TtftMs,
    /// `mean_tpot_ms` (lower is better).
    MeanTpotMs,
    /// 1000 / `mean_tpot_ms`: decode speed one user sees, tok/s (higher is better).
    TokensPerSPerUser,
}

impl LatencyAxis {
    /// Every choice, for a selector.
    pub const ALL: [LatencyAxis; 3] = [
        LatencyAxis::P99TtftMs,
        LatencyAxis::MeanTpotMs,
        LatencyAxis::TokensPerSPerUser,
    ];

    /// Axis title with unit.
    pub fn label(self) -> &'static str {
        match self {
            LatencyAxis::P99TtftMs => "P99 TTFT (ms)",
            LatencyAxis::MeanTpotMs => "Mean TPOT (ms)",
            LatencyAxis::TokensPerSPerUser => {
                "Tokens per second per user (tok/s, 1000 / mean TPOT)"
            }
        }
    }

    /// Whether larger values are better on this axis.
    pub fn higher_is_better(self) -> bool {
        self == LatencyAxis::TokensPerSPerUser
    }

    /// The value for a record.
    pub fn value(self, r: &Record) -> Option<f64> {
        let tpot = || r.metric(&MetricKey::latency(LatencyMetric::Tpot, Stat::Mean));
        let v = match self {
            LatencyAxis::P99TtftMs => {
                let p99 = Percentile::new(99.0).map(Stat::P)?;
                r.metric(&MetricKey::latency(LatencyMetric::Ttft, p99))
            }
            LatencyAxis::MeanTpotMs => tpot(),
            LatencyAxis::TokensPerSPerUser => tpot().filter(|t| *t > 0.0).map(|t| 1000.0 / t),
        };
        v.filter(|v| v.is_finite())
    }
}

/// What to draw.
#[derive(Clone, Debug, PartialEq)]
pub struct TradeoffSpec {
    /// The y axis.
    pub throughput: ThroughputAxis,
    /// The x axis.
    pub latency: LatencyAxis,
    /// Dimensions whose combined values name a series (engine, gpu, ...). Empty: one series.
    pub series_by: Vec<DimKey>,
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
}

/// One series with its frontier.
#[derive(Clone, Debug, PartialEq)]
pub struct TradeoffSeries {
    /// Series name: the `series_by` values joined by " · ".
    pub name: String,
    /// Points sorted by latency value.
    pub points: Vec<TradeoffPoint>,
    /// Indices into `points` of the frontier, sorted by latency value.
    pub frontier: Vec<usize>,
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
/// One sort and one sweep, O(n log n): a million points take a fraction of a second where
/// comparing every pair would take hours. A point with a NaN coordinate neither dominates nor
/// is dominated (as [`dominates`] says), so it is always kept.
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
    // Best x first; within one x, best y first.
    order.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(b.1.total_cmp(&a.1)));
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
    kept.sort_unstable();
    kept
}

/// Groups the records at `indices` into series and marks each series' Pareto frontier
/// (throughput is always higher-is-better; the latency axis says its own direction).
pub fn tradeoff(ds: &Dataset, indices: &[usize], spec: &TradeoffSpec) -> Vec<TradeoffSeries> {
    let mut groups: BTreeMap<String, Vec<TradeoffPoint>> = BTreeMap::new();
    for &i in indices {
        let Some(r) = ds.records().get(i) else {
            continue;
        };
        let (Some(latency), Some(throughput)) = (spec.latency.value(r), spec.throughput.value(r))
        else {
            continue;
        };
        groups
            .entry(series_name(r, &spec.series_by))
            .or_default()
            .push(TradeoffPoint {
                record: i,
                latency,
                throughput,
                on_frontier: false,
            });
    }
    super::in_value_order(groups)
        .into_iter()
        .map(|(name, mut points)| {
            points.sort_by(|a, b| {
                a.latency
                    .total_cmp(&b.latency)
                    .then(a.throughput.total_cmp(&b.throughput))
            });
            let xy: Vec<(f64, f64)> = points.iter().map(|p| (p.latency, p.throughput)).collect();
            let frontier = pareto_frontier(&xy, spec.latency.higher_is_better(), true);
            for &f in &frontier {
                points[f].on_frontier = true;
            }
            TradeoffSeries {
                name,
                points,
                frontier,
            }
        })
        .collect()
}

fn hover(ds: &Dataset, series: &str, p: &TradeoffPoint, spec: &TradeoffSpec) -> String {
    let mut lines = vec![
        format!("<b>{}</b>", escape_html(series)),
        format!(
            "{}: {}",
            escape_html(spec.latency.label()),
            format_value(p.latency)
        ),
        format!(
            "{}: {}",
            escape_html(spec.throughput.label()),
            format_value(p.throughput)
        ),
    ];
    if p.on_frontier {
        lines.push("on the Pareto frontier".into());
    }
    if let Some(r) = ds.records().get(p.record) {
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

/// The most points the chart draws one marker each, with each record's dimensions on hover.
/// plotly's SVG scatter slows down past about ten thousand markers, and the page's plotly.js
/// bundle (the cartesian one) has no WebGL scatter, so past this many points in all every
/// series is drawn binned ([`bin_points`] on a [`BIN_GRID`]) and the figure stays bounded
/// whatever the record count. The frontier is always computed from every point.
pub const MAX_POINT_MARKERS: usize = 10_000;

/// Columns (latency) and rows (throughput) of the grid binned points fall into: at most
/// 2,560 markers a series, cells of about 15 × 10 pixels on a 1,000 × 400 pixel plot.
pub const BIN_GRID: (usize, usize) = (64, 40);

/// The most frontier points drawn per series (and listed under the chart in all, see
/// [`crate::analysis_views::frontier_rows`]); past it the frontier line is drawn through this
/// many of its points, evenly spread and always with both ends.
pub const MAX_FRONTIER_DRAWN: usize = 2_000;

/// The points of one grid cell of a binned series.
#[derive(Clone, Debug, PartialEq)]
pub struct PointBin {
    /// Mean latency of its points (where the marker is drawn; a lone point's own value).
    pub latency: f64,
    /// Mean throughput of its points.
    pub throughput: f64,
    /// Smallest and largest latency of its points.
    pub latency_range: (f64, f64),
    /// Smallest and largest throughput of its points.
    pub throughput_range: (f64, f64),
    /// Points in the cell.
    pub count: usize,
    /// Of which on the series' Pareto frontier.
    pub on_frontier: usize,
}

/// The smallest and largest latency and throughput over every series' points, when any.
pub fn extent(series: &[TradeoffSeries]) -> Option<((f64, f64), (f64, f64))> {
    let mut points = series.iter().flat_map(|s| &s.points);
    let first = points.next()?;
    let init = (
        (first.latency, first.latency),
        (first.throughput, first.throughput),
    );
    Some(points.fold(init, |((x0, x1), (y0, y1)), p| {
        (
            (x0.min(p.latency), x1.max(p.latency)),
            (y0.min(p.throughput), y1.max(p.throughput)),
        )
    }))
}

/// The cell (column or row) of `v` among `cells` equal cells over `[lo, hi]`; the upper edge
/// belongs to the last cell, and an empty range is one cell.
fn cell_of(v: f64, (lo, hi): (f64, f64), cells: usize) -> usize {
    let cells = cells.max(1);
    if hi <= lo {
        return 0;
    }
    let i = ((v - lo) / (hi - lo) * cells as f64).floor();
    if i >= cells as f64 {
        cells - 1
    } else if i > 0.0 {
        i as usize
    } else {
        0
    }
}

/// `points` gathered into a grid of `grid.0` columns over the latency range `x` and `grid.1`
/// rows over the throughput range `y`: one [`PointBin`] per cell holding any point, in column
/// then row order. Memory and output are bounded by the grid, not the point count.
pub fn bin_points(
    points: &[TradeoffPoint],
    x: (f64, f64),
    y: (f64, f64),
    grid: (usize, usize),
) -> Vec<PointBin> {
    let (cols, rows) = (grid.0.max(1), grid.1.max(1));
    // Per cell: sums of latency and throughput, then the bin being built.
    let mut cells: Vec<Option<(f64, f64, PointBin)>> = vec![None; cols * rows];
    for p in points {
        let c = cell_of(p.latency, x, cols) * rows + cell_of(p.throughput, y, rows);
        let (sx, sy, bin) = cells[c].get_or_insert((
            0.0,
            0.0,
            PointBin {
                latency: p.latency,
                throughput: p.throughput,
                latency_range: (p.latency, p.latency),
                throughput_range: (p.throughput, p.throughput),
                count: 0,
                on_frontier: 0,
            },
        ));
        *sx += p.latency;
        *sy += p.throughput;
        bin.count += 1;
        bin.on_frontier += usize::from(p.on_frontier);
        bin.latency_range = (
            bin.latency_range.0.min(p.latency),
            bin.latency_range.1.max(p.latency),
        );
        bin.throughput_range = (
            bin.throughput_range.0.min(p.throughput),
            bin.throughput_range.1.max(p.throughput),
        );
    }
    cells
        .into_iter()
        .flatten()
        .map(|(sx, sy, mut bin)| {
            bin.latency = sx / bin.count as f64;
            bin.throughput = sy / bin.count as f64;
            bin
        })
        .collect()
}

fn bin_hover(series: &str, b: &PointBin, spec: &TradeoffSpec) -> String {
    let range = |(lo, hi): (f64, f64)| {
        if lo == hi {
            format_value(lo)
        } else {
            format!("{} – {}", format_value(lo), format_value(hi))
        }
    };
    let mut lines = vec![
        format!("<b>{}</b>", escape_html(series)),
        format!("{} record{}", b.count, if b.count == 1 { "" } else { "s" }),
        format!(
            "{}: {}",
            escape_html(spec.latency.label()),
            range(b.latency_range)
        ),
        format!(
            "{}: {}",
            escape_html(spec.throughput.label()),
            range(b.throughput_range)
        ),
    ];
    if b.on_frontier > 0 {
        lines.push(format!("{} on the Pareto frontier", b.on_frontier));
    }
    lines.join("<br>")
}

/// Marker size of a bin: 5 px for one point up to 13 px for the fullest bin (log scale).
fn bin_marker_size(count: usize, fullest: usize) -> usize {
    if fullest <= 1 {
        return 5;
    }
    let share = (count.max(1) as f64).ln() / (fullest as f64).ln();
    5 + (share * 8.0).round() as usize
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

/// Scatter of every point plus, per series, its frontier as a line in the same colour. Past
/// [`MAX_POINT_MARKERS`] points in all, each series is drawn as its [`bin_points`] (one
/// marker per grid cell, sized by count, hover giving the count and ranges), and a frontier
/// longer than [`MAX_FRONTIER_DRAWN`] as a line through that many of its points.
pub fn tradeoff_plot(ds: &Dataset, series: &[TradeoffSeries], spec: &TradeoffSpec) -> Plot {
    let mut plot = Plot::new();
    let total: usize = series.iter().map(|s| s.points.len()).sum();
    let binned = (total > MAX_POINT_MARKERS)
        .then(|| extent(series))
        .flatten();
    let mut cells = 0;
    for (si, s) in series.iter().enumerate() {
        let color = PALETTE[si % PALETTE.len()];
        let name = escape_html(&s.name);
        let points = if let Some((x, y)) = binned {
            let bins = bin_points(&s.points, x, y, BIN_GRID);
            cells += bins.len();
            let fullest = bins.iter().map(|b| b.count).max().unwrap_or(1);
            Scatter::new(
                bins.iter().map(|b| b.latency).collect(),
                bins.iter().map(|b| b.throughput).collect(),
            )
            .hover_text_array(
                bins.iter()
                    .map(|b| bin_hover(&s.name, b, spec))
                    .collect::<Vec<_>>(),
            )
            .marker(
                Marker::new()
                    .color(color)
                    .size_array(
                        bins.iter()
                            .map(|b| bin_marker_size(b.count, fullest))
                            .collect(),
                    )
                    .opacity(0.6),
            )
        } else {
            Scatter::new(
                s.points.iter().map(|p| p.latency).collect(),
                s.points.iter().map(|p| p.throughput).collect(),
            )
            .hover_text_array(
                s.points
                    .iter()
                    .map(|p| hover(ds, &s.name, p, spec))
                    .collect::<Vec<_>>(),
            )
            .marker(Marker::new().color(color).size(8).opacity(0.6))
        };
        plot.add_trace(
            points
                .name(name.clone())
                .legend_group(name.clone())
                .mode(Mode::Markers)
                .hover_info(HoverInfo::Text),
        );
        let front: Vec<&TradeoffPoint> = evenly(&s.frontier, MAX_FRONTIER_DRAWN)
            .into_iter()
            .filter_map(|i| s.points.get(i))
            .collect();
        let front_mode = if s.frontier.len() > MAX_FRONTIER_DRAWN {
            Mode::Lines
        } else {
            Mode::LinesMarkers
        };
        plot.add_trace(
            Scatter::new(
                front.iter().map(|p| p.latency).collect(),
                front.iter().map(|p| p.throughput).collect(),
            )
            .name(format!("{name} frontier"))
            .legend_group(name)
            .mode(front_mode)
            .line(Line::new().color(color).width(2.0).shape(LineShape::Linear))
            .marker(Marker::new().color(color).size(10))
            .hover_info(HoverInfo::Skip),
        );
    }
    let title = format!("{} vs {}", spec.throughput.label(), spec.latency.label());
    let mut layout = base_layout(
        &title,
        spec.latency.label(),
        spec.throughput.label(),
        spec.theme,
    )
    .legend(
        Legend::new().title(Title::with_text(escape_html(&series_title(
            &spec.series_by,
        )))),
    );
    if binned.is_some() {
        layout = layout.title(Title::with_text(format!(
            "{}<br><sub>{} points drawn as {} grid cells (marker size: points in the cell)</sub>",
            escape_html(&title),
            total,
            cells
        )));
    }
    plot.set_layout(layout);
    plot
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Dim;
    use proptest::prelude::*;

    fn rec(engine: &str, tput: f64, tpot: f64, gpus: u64) -> Record {
        let mut r = Record {
            engine: Some(engine.into()),
            gpu_count: Some(gpus),
            ..Record::default()
        };
        r.set_metric(MetricKey::OutputThroughput, tput);
        r.set_metric(MetricKey::latency(LatencyMetric::Tpot, Stat::Mean), tpot);
        r
    }

    #[test]
    fn frontier_per_series() {
        let ds = Dataset::new(vec![
            rec("a", 100.0, 10.0, 2),
            rec("a", 300.0, 20.0, 2),
            rec("a", 250.0, 25.0, 2), // dominated by (20, 300)
            rec("a", 500.0, 50.0, 2),
            rec("b", 50.0, 5.0, 1),
        ]);
        let spec = TradeoffSpec {
            throughput: ThroughputAxis::OutputTokensPerSPerGpu,
            latency: LatencyAxis::MeanTpotMs,
            series_by: vec![Dim::Engine.into()],
            theme: Theme::Light,
        };
        let s = tradeoff(&ds, &[0, 1, 2, 3, 4], &spec);
        assert_eq!(s.len(), 2);
        let front: Vec<usize> = s[0]
            .frontier
            .iter()
            .map(|&i| s[0].points[i].record)
            .collect();
        assert_eq!(front, [0, 1, 3]);
        assert_eq!(s[0].points[1].throughput, 150.0);
        let json: serde_json::Value =
            serde_json::from_str(&tradeoff_plot(&ds, &s, &spec).to_json()).unwrap();
        assert_eq!(json["data"].as_array().unwrap().len(), 4);
        assert_eq!(json["data"][1]["x"], serde_json::json!([10.0, 20.0, 50.0]));

        let per_user = TradeoffSpec {
            latency: LatencyAxis::TokensPerSPerUser,
            ..spec
        };
        let s = tradeoff(&ds, &[0, 1, 2, 3], &per_user);
        assert_eq!(s[0].points[0].latency, 20.0);
        assert_eq!(s[0].frontier.len(), 3);
    }

    #[test]
    fn series_come_in_the_order_of_their_values() {
        // Seed 003's input lengths as the series: text order would put 80 last.
        let lens = [10000.0, 128000.0, 16000.0, 80.0];
        let ds = Dataset::new(
            lens.iter()
                .map(|&l| {
                    let mut r = rec("vllm", 100.0, 10.0, 1);
                    r.input_len = Some(l);
                    r
                })
                .collect(),
        );
        let spec = TradeoffSpec {
            throughput: ThroughputAxis::OutputTokensPerS,
            latency: LatencyAxis::MeanTpotMs,
            series_by: vec![Dim::InputLen.into()],
            theme: Theme::Light,
        };
        let names: Vec<String> = tradeoff(&ds, &[0, 1, 2, 3], &spec)
            .into_iter()
            .map(|s| s.name)
            .collect();
        assert_eq!(names, ["80", "10000", "16000", "128000"]);
    }

    /// The definition itself, every pair compared: what [`pareto_frontier`] must equal.
    fn frontier_by_pairs(points: &[(f64, f64)], xh: bool, yh: bool) -> Vec<usize> {
        (0..points.len())
            .filter(|&i| !points.iter().any(|&q| dominates(q, points[i], xh, yh)))
            .collect()
    }

    #[test]
    fn frontier_keeps_ties_zero_signs_and_nan_as_the_definition_does() {
        let pts = [
            (1.0, 5.0),
            (1.0, 5.0),  // identical: both kept
            (-0.0, 2.0), // equals x 0.0 below, lower y: dominated
            (0.0, 3.0),
            (1.0, 4.0), // same x, lower y: dominated
            (f64::NAN, 0.0),
            (f64::INFINITY, 9.0),
            (2.0, f64::NEG_INFINITY),
        ];
        for (xh, yh) in [(true, true), (false, true), (true, false), (false, false)] {
            assert_eq!(
                pareto_frontier(&pts, xh, yh),
                frontier_by_pairs(&pts, xh, yh),
                "{xh} {yh}"
            );
        }
        // Lower latency better, higher throughput better: (inf, 9) has the best throughput.
        assert_eq!(pareto_frontier(&pts, false, true), [0, 1, 3, 5, 6]);
        assert!(pareto_frontier(&[], false, true).is_empty());
    }

    /// A million points: every (a, b) of 0..1000 squared, at latency max(a, b) / 2 + 10 and
    /// throughput min(a, b) × 3. Only the diagonal a == b is on the frontier (lower latency
    /// and higher throughput than a point of the diagonal is only that point itself).
    fn million() -> TradeoffSeries {
        let mut points: Vec<TradeoffPoint> = (0..1_000_000usize)
            .map(|i| {
                let (a, b) = (i % 1000, i / 1000);
                TradeoffPoint {
                    record: i,
                    latency: a.max(b) as f64 / 2.0 + 10.0,
                    throughput: a.min(b) as f64 * 3.0,
                    on_frontier: false,
                }
            })
            .collect();
        points.sort_by(|a, b| {
            a.latency
                .total_cmp(&b.latency)
                .then(a.throughput.total_cmp(&b.throughput))
        });
        let xy: Vec<(f64, f64)> = points.iter().map(|p| (p.latency, p.throughput)).collect();
        let frontier = pareto_frontier(&xy, false, true);
        for &f in &frontier {
            points[f].on_frontier = true;
        }
        TradeoffSeries {
            name: "all".into(),
            points,
            frontier,
        }
    }

    #[test]
    fn a_million_points_keep_an_exact_frontier_and_draw_bounded() {
        let s = million();
        let front: Vec<(f64, f64)> = s
            .frontier
            .iter()
            .map(|&i| (s.points[i].latency, s.points[i].throughput))
            .collect();
        let diagonal: Vec<(f64, f64)> = (0..1000)
            .map(|a| (a as f64 / 2.0 + 10.0, a as f64 * 3.0))
            .collect();
        assert_eq!(front, diagonal);
        let spec = TradeoffSpec {
            throughput: ThroughputAxis::OutputTokensPerS,
            latency: LatencyAxis::P99TtftMs,
            series_by: vec![],
            theme: Theme::Light,
        };
        let series = [s];
        let bins = bin_points(&series[0].points, (10.0, 509.5), (0.0, 2997.0), BIN_GRID);
        assert_eq!(extent(&series), Some(((10.0, 509.5), (0.0, 2997.0))));
        assert!(bins.len() <= BIN_GRID.0 * BIN_GRID.1, "{}", bins.len());
        assert_eq!(bins.iter().map(|b| b.count).sum::<usize>(), 1_000_000);
        assert_eq!(bins.iter().map(|b| b.on_frontier).sum::<usize>(), 1000);
        let plot = tradeoff_plot(&Dataset::new(vec![]), &series, &spec).to_json();
        let json: serde_json::Value = serde_json::from_str(&plot).unwrap();
        let data = json["data"].as_array().unwrap();
        assert_eq!(data.len(), 2);
        assert_eq!(data[0]["x"].as_array().unwrap().len(), bins.len());
        assert_eq!(data[0]["hovertext"].as_array().unwrap().len(), bins.len());
        assert_eq!(
            data[0]["marker"]["size"].as_array().unwrap().len(),
            bins.len()
        );
        let fullest = (0..bins.len()).max_by_key(|&i| bins[i].count).unwrap();
        assert_eq!(data[0]["marker"]["size"][fullest], 13);
        // The frontier is drawn whole and exact: 1000 points, under the cap.
        let fx: Vec<f64> = data[1]["x"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        assert_eq!(fx, diagonal.iter().map(|p| p.0).collect::<Vec<_>>());
        assert_eq!(data[1]["mode"], "lines+markers");
        assert_eq!(
            json["layout"]["title"]["text"],
            format!(
                "Output token throughput (tok/s) vs P99 TTFT (ms)<br><sub>1000000 points drawn \
                 as {} grid cells (marker size: points in the cell)</sub>",
                bins.len()
            )
        );
        // Bounded by the grid, not the million points (each cell's hover is under 300 bytes).
        assert!(plot.len() < BIN_GRID.0 * BIN_GRID.1 * 400, "{}", plot.len());
    }

    #[test]
    fn bins_keep_lone_points_exact_and_average_the_rest() {
        let p = |latency: f64, throughput: f64, on_frontier: bool| TradeoffPoint {
            record: 0,
            latency,
            throughput,
            on_frontier,
        };
        let pts = [
            p(0.0, 0.0, true),
            p(0.4, 0.2, false),
            p(10.0, 10.0, true), // the upper edges fall in the last cell
            p(7.3, 2.1, false),
        ];
        let bins = bin_points(&pts, (0.0, 10.0), (0.0, 10.0), (2, 2));
        assert_eq!(
            bins,
            [
                PointBin {
                    latency: 0.2,
                    throughput: 0.1,
                    latency_range: (0.0, 0.4),
                    throughput_range: (0.0, 0.2),
                    count: 2,
                    on_frontier: 1,
                },
                PointBin {
                    latency: 7.3,
                    throughput: 2.1,
                    latency_range: (7.3, 7.3),
                    throughput_range: (2.1, 2.1),
                    count: 1,
                    on_frontier: 0,
                },
                PointBin {
                    latency: 10.0,
                    throughput: 10.0,
                    latency_range: (10.0, 10.0),
                    throughput_range: (10.0, 10.0),
                    count: 1,
                    on_frontier: 1,
                },
            ]
        );
        // One value on an axis: one cell.
        assert_eq!(
            bin_points(&pts[..1], (0.0, 0.0), (0.0, 0.0), BIN_GRID).len(),
            1
        );
        assert_eq!(evenly(&[1, 2, 3, 4, 5, 6, 7], 3), [1, 4, 7]);
        assert_eq!(evenly(&[1, 2], 3), [1, 2]);
        assert_eq!(evenly(&[1, 2, 3], 1), [1]);
    }

    #[test]
    fn a_long_frontier_is_drawn_through_evenly_spread_points() {
        // Every point on the frontier: latency and throughput rise together.
        let n = MAX_FRONTIER_DRAWN * 3 + 1;
        let points: Vec<TradeoffPoint> = (0..n)
            .map(|i| TradeoffPoint {
                record: i,
                latency: i as f64,
                throughput: i as f64,
                on_frontier: true,
            })
            .collect();
        let series = [TradeoffSeries {
            name: "a".into(),
            points,
            frontier: (0..n).collect(),
        }];
        let xy: Vec<(f64, f64)> = series[0]
            .points
            .iter()
            .map(|p| (p.latency, p.throughput))
            .collect();
        assert_eq!(pareto_frontier(&xy, false, true).len(), n);
        let spec = TradeoffSpec {
            throughput: ThroughputAxis::OutputTokensPerS,
            latency: LatencyAxis::MeanTpotMs,
            series_by: vec![],
            theme: Theme::Light,
        };
        let json: serde_json::Value =
            serde_json::from_str(&tradeoff_plot(&Dataset::new(vec![]), &series, &spec).to_json())
                .unwrap();
        let fx = json["data"][1]["x"].as_array().unwrap();
        assert_eq!(fx.len(), MAX_FRONTIER_DRAWN);
        assert_eq!(fx[0], 0.0);
        assert_eq!(fx[MAX_FRONTIER_DRAWN - 1], (n - 1) as f64);
        assert_eq!(json["data"][1]["mode"], "lines");
        // 6,001 points: under the marker cap, so each point is drawn.
        assert_eq!(json["data"][0]["x"].as_array().unwrap().len(), n);
    }

    proptest! {
        #[test]
        fn frontier_is_non_dominated_and_dominates_the_rest(
            // Few distinct values, so ties and duplicates are common.
            pts in prop::collection::vec(((0u8..8).prop_map(f64::from), (0u8..8).prop_map(f64::from)), 0..60),
            xh in any::<bool>(),
            yh in any::<bool>(),
        ) {
            let f = pareto_frontier(&pts, xh, yh);
            for &i in &f {
                for &j in &f {
                    prop_assert!(!dominates(pts[i], pts[j], xh, yh));
                }
            }
            for k in 0..pts.len() {
                if !f.contains(&k) {
                    prop_assert!(f.iter().any(|&i| dominates(pts[i], pts[k], xh, yh)));
                }
            }
            prop_assert!(pts.is_empty() || !f.is_empty());
            prop_assert_eq!(f, frontier_by_pairs(&pts, xh, yh));
        }

        #[test]
        fn frontier_equals_the_definition_with_odd_values(
            pts in prop::collection::vec((
                prop::sample::select(vec![0.0, -0.0, 1.0, 2.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY]),
                prop::sample::select(vec![0.0, -0.0, 1.0, 2.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY]),
            ), 0..40),
            xh in any::<bool>(),
            yh in any::<bool>(),
        ) {
            prop_assert_eq!(pareto_frontier(&pts, xh, yh), frontier_by_pairs(&pts, xh, yh));
        }
    }
}
