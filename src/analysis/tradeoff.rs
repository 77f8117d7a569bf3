//! Trade-off: throughput against latency per series, and each series' Pareto frontier — the
//! points no other point of the series beats on both axes at once — listed and drawn.
//!
//! Axes are chosen from [`ThroughputAxis`] (output or total tok/s, optionally per GPU when
//! `gpu_count` is known) and [`LatencyAxis`] (p99 TTFT, mean TPOT, or tokens/s per user =
//! 1000 / mean TPOT, where higher is better). A record lacking a value for either axis is
//! left out of its series.

use plotly::common::{HoverInfo, Line, LineShape, Marker, Mode, Title};
use plotly::layout::Legend;
use plotly::{Plot, Scatter};

use super::SeriesSlots;
use crate::charts::style::base_layout;
use crate::charts::style::{escape_html, format_value, series_title, Theme, PALETTE};
use crate::model::{Dataset, Dim, DimKey, LatencyMetric, MetricKey, Percentile, Record, Stat};

mod bins;

use bins::{bin_hover, bin_marker_size};
pub use bins::{bin_points, extent, PointBin, BIN_GRID, MAX_FRONTIER_DRAWN, MAX_POINT_MARKERS};

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

    /// The metric the axis reads.
    fn metric(self) -> MetricKey {
        match self {
            ThroughputAxis::OutputTokensPerS | ThroughputAxis::OutputTokensPerSPerGpu => {
                MetricKey::OutputThroughput
            }
            ThroughputAxis::TotalTokensPerS | ThroughputAxis::TotalTokensPerSPerGpu => {
                MetricKey::TotalTokenThroughput
            }
        }
    }

    fn per_gpu(self) -> bool {
        matches!(
            self,
            ThroughputAxis::OutputTokensPerSPerGpu | ThroughputAxis::TotalTokensPerSPerGpu
        )
    }

    /// The axis value from the metric's value and the GPU count.
    fn of(self, metric: Option<f64>, gpus: Option<u64>) -> Option<f64> {
        let v = if self.per_gpu() {
            let gpus = gpus.filter(|&g| g > 0)? as f64;
            metric.map(|v| v / gpus)
        } else {
            metric
        };
        v.filter(|v| v.is_finite())
    }

    /// The value for a record; per-GPU axes need `gpu_count` > 0.
    pub fn value(self, r: &Record) -> Option<f64> {
        self.of(r.metric(&self.metric()), r.gpu_count)
    }

    /// Each row's value ([`ThroughputAxis::value`] of its record), read from the dataset's
    /// index.
    fn reader(self, ds: &Dataset) -> impl Fn(usize) -> Option<f64> + '_ {
        let values = ds.metric_values(&self.metric());
        let gpus = if self.per_gpu() {
            ds.column(&Dim::GpuCount.into())
        } else {
            None
        };
        move |row| {
            let metric = values.as_ref().and_then(|v| v.get(row));
            // GPU counts are whole numbers (the dimension's kind).
            let gpus = gpus
                .and_then(|c| c.value(row))
                .and_then(|v| v.as_f64())
                .map(|g| g as u64);
            self.of(metric, gpus)
        }
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

    /// The metric the axis reads (`None`: one that cannot be named).
    fn metric(self) -> Option<MetricKey> {
        match self {
            LatencyAxis::P99TtftMs => {
                let p99 = Percentile::new(99.0).map(Stat::P)?;
                Some(MetricKey::latency(LatencyMetric::Ttft, p99))
            }
            LatencyAxis::MeanTpotMs | LatencyAxis::TokensPerSPerUser => {
                Some(MetricKey::latency(LatencyMetric::Tpot, Stat::Mean))
            }
        }
    }

    /// The axis value from the metric's value.
    fn of(self, metric: Option<f64>) -> Option<f64> {
        let v = match self {
            LatencyAxis::P99TtftMs | LatencyAxis::MeanTpotMs => metric,
            LatencyAxis::TokensPerSPerUser => metric.filter(|t| *t > 0.0).map(|t| 1000.0 / t),
        };
        v.filter(|v| v.is_finite())
    }

    /// The value for a record.
    pub fn value(self, r: &Record) -> Option<f64> {
        self.of(r.metric(&self.metric()?))
    }

    /// Each row's value ([`LatencyAxis::value`] of its record), read from the dataset's index.
    fn reader(self, ds: &Dataset) -> impl Fn(usize) -> Option<f64> + '_ {
        let values = self.metric().and_then(|m| ds.metric_values(&m));
        move |row| self.of(values.as_ref().and_then(|v| v.get(row)))
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
    let latency_of = spec.latency.reader(ds);
    let throughput_of = spec.throughput.reader(ds);
    let mut series = SeriesSlots::new(ds, &spec.series_by);
    let mut groups: Vec<Vec<TradeoffPoint>> = Vec::new();
    for &i in indices {
        let (Some(latency), Some(throughput)) = (latency_of(i), throughput_of(i)) else {
            continue;
        };
        series.group(&mut groups, i).push(TradeoffPoint {
            record: i,
            latency,
            throughput,
            on_frontier: false,
        });
    }
    let groups = series.named(groups);
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
    if p.on_frontier {
        lines.push("on the Pareto frontier".into());
    }
    if let Some(r) = ds.record(p.record) {
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
mod tests;
