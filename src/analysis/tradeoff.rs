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
pub fn pareto_frontier(
    points: &[(f64, f64)],
    x_higher_is_better: bool,
    y_higher_is_better: bool,
) -> Vec<usize> {
    (0..points.len())
        .filter(|&i| {
            !points
                .iter()
                .any(|&q| dominates(q, points[i], x_higher_is_better, y_higher_is_better))
        })
        .collect()
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

/// Scatter of every point plus, per series, its frontier as a line in the same colour.
pub fn tradeoff_plot(ds: &Dataset, series: &[TradeoffSeries], spec: &TradeoffSpec) -> Plot {
    let mut plot = Plot::new();
    for (si, s) in series.iter().enumerate() {
        let color = PALETTE[si % PALETTE.len()];
        let name = escape_html(&s.name);
        plot.add_trace(
            Scatter::new(
                s.points.iter().map(|p| p.latency).collect(),
                s.points.iter().map(|p| p.throughput).collect(),
            )
            .name(name.clone())
            .legend_group(name.clone())
            .mode(Mode::Markers)
            .hover_text_array(
                s.points
                    .iter()
                    .map(|p| hover(ds, &s.name, p, spec))
                    .collect::<Vec<_>>(),
            )
            .hover_info(HoverInfo::Text)
            .marker(Marker::new().color(color).size(8).opacity(0.6)),
        );
        let front: Vec<&TradeoffPoint> =
            s.frontier.iter().filter_map(|&i| s.points.get(i)).collect();
        plot.add_trace(
            Scatter::new(
                front.iter().map(|p| p.latency).collect(),
                front.iter().map(|p| p.throughput).collect(),
            )
            .name(format!("{name} frontier"))
            .legend_group(name)
            .mode(Mode::LinesMarkers)
            .line(Line::new().color(color).width(2.0).shape(LineShape::Linear))
            .marker(Marker::new().color(color).size(10))
            .hover_info(HoverInfo::Skip),
        );
    }
    let title = format!("{} vs {}", spec.throughput.label(), spec.latency.label());
    let layout = base_layout(
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
        }
    }
}
