//! What the explorer and `benchlens compare` show before anyone chooses: the view, the metric,
//! the x axis, the series and panels, and the two compared values. One place, so the page and
//! the command line agree, and every choice follows [`crate::model::points`]' rule that a point is
//! one configuration.
//!
//! - **x axis**: the first of request rate, concurrency, batch size, number of prompts, input
//!   and output length that varies (measured lengths excluded).
//! - **series, then panels**: dimensions that would otherwise merge records into one point
//!   become the series (engine, GPU, model, ... first), then the panels of small multiples;
//!   what still merges is said on the point. Files of one sweep (same configuration but for
//!   the load) therefore stay one series; `source` splits series only when two files measured
//!   the same points.
//! - **view**: the capacity curve when every record is a probe of a `benchlens sweep`;
//!   improvement when one dimension takes two values and the matched pairs vary in
//!   more dimensions than a chart shows (x, series and panels), or the file prints its own
//!   improvement figures; otherwise latency bars, throughput bars, or lines when there would
//!   be more bars than a reader can compare.
//! - **baseline and candidate**: the two values of the compared dimension, oriented so the
//!   candidate is the one that is better in most matched configurations (seed 000: A100 over
//!   Tesla).
//!
//! The rules are kept in one file (about 580 lines; their tests are in `defaults/tests.rs`) on
//! purpose: the choices feed each other (the view depends on the comparison and the series
//! layout, the sides on the metric), and reading them together is how one checks that the page
//! and `benchlens compare` agree.

use super::improvement::{improvement, ImprovementSpec, ImprovementTable};
use crate::charts::figure::MAX_PANELS;
use crate::charts::series::ChartKind;
use crate::model::points::{
    configuration_dims, measured_dims, merged_dims, varying_systems, Combos, SERIES_PREFERENCE,
};
use crate::model::{Dataset, Dim, DimKey, DimValue, Direction, LatencyMetric, MetricKey, Stat};

/// Which view the explorer shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum View {
    /// A latency metric as grouped bars with a comparison table.
    Latency,
    /// A throughput metric as grouped bars with a comparison table.
    Throughput,
    /// Any metric as lines against a scaling dimension.
    Scaling,
    /// The filtered records as a sortable table.
    Table,
    /// Candidate vs baseline over matched configurations.
    Improvement,
    /// Throughput against latency with Pareto frontiers.
    Tradeoff,
    /// Highest load meeting latency limits.
    Slo,
    /// Per-request distributions.
    Distribution,
    /// Changes between two runs of the same configurations.
    Regression,
    /// Many runs of the same configurations over time, with their change points.
    Trends,
    /// A capacity sweep's goodput and objectives against the load, with its knee.
    Capacity,
    /// One stage as it unfolded: its request timeline and time series.
    Run,
}

impl View {
    /// The chart kind drawn for this view.
    pub fn kind(self) -> ChartKind {
        match self {
            View::Latency | View::Throughput => ChartKind::Bars,
            _ => ChartKind::Lines,
        }
    }

    /// Whether the "fastest / faster by %" comparison table goes under this view's chart: only
    /// under the bars. The other views hide the chart area (or, for scaling lines, compare
    /// along the curve), and a hidden table is wasted work (with many x values it was a
    /// million elements laid out again on every draw).
    pub fn shows_comparison_table(self) -> bool {
        self.kind() == ChartKind::Bars
    }

    /// Tab label.
    pub fn label(self) -> &'static str {
        match self {
            View::Latency => "Latency",
            View::Throughput => "Throughput",
            View::Scaling => "Scaling",
            View::Table => "Table",
            View::Improvement => "Improvement",
            View::Tradeoff => "Trade-off",
            View::Slo => "SLO",
            View::Distribution => "Distribution",
            View::Regression => "Regression",
            View::Trends => "Trends",
            View::Capacity => "Capacity",
            View::Run => "Run",
        }
    }

    /// Every view, in tab order.
    pub const ALL: [View; 12] = [
        View::Latency,
        View::Throughput,
        View::Scaling,
        View::Table,
        View::Improvement,
        View::Tradeoff,
        View::Slo,
        View::Distribution,
        View::Regression,
        View::Trends,
        View::Capacity,
        View::Run,
    ];

    /// The tab a key moves to from `self` (ArrowRight/ArrowDown next, ArrowLeft/ArrowUp
    /// previous, both wrapping; Home first, End last), skipping views that are not
    /// `available`; `None` for other keys.
    pub fn after_key(self, key: &str, available: impl Fn(View) -> bool) -> Option<View> {
        let tabs: Vec<View> = View::ALL.into_iter().filter(|v| available(*v)).collect();
        let at = tabs.iter().position(|v| *v == self);
        let n = tabs.len();
        match key {
            "Home" => tabs.first().copied(),
            "End" => tabs.last().copied(),
            "ArrowRight" | "ArrowDown" => tabs.get(at.map_or(0, |i| (i + 1) % n)).copied(),
            "ArrowLeft" | "ArrowUp" => tabs.get(at.map_or(0, |i| (i + n - 1) % n)).copied(),
            _ => None,
        }
    }

    /// The view with this id.
    pub fn from_id(id: &str) -> Option<View> {
        View::ALL.into_iter().find(|v| v.id() == id)
    }

    /// Id used in URLs and test selectors.
    pub fn id(self) -> &'static str {
        match self {
            View::Latency => "latency",
            View::Throughput => "throughput",
            View::Scaling => "scaling",
            View::Table => "table",
            View::Improvement => "improvement",
            View::Tradeoff => "tradeoff",
            View::Slo => "slo",
            View::Distribution => "distribution",
            View::Regression => "regression",
            View::Trends => "trends",
            View::Capacity => "capacity",
            View::Run => "run",
        }
    }
}

/// Dimensions tried, in order, for the x axis.
pub const X_CANDIDATES: [Dim; 6] = [
    Dim::RequestRate,
    Dim::MaxConcurrency,
    Dim::BatchSize,
    Dim::NumPrompts,
    Dim::InputLen,
    Dim::OutputLen,
];

/// Dimensions tried, in order, as the compared one of the improvement view.
pub const COMPARE_CANDIDATES: [Dim; 6] = [
    Dim::Gpu,
    Dim::Engine,
    Dim::Source,
    Dim::EngineVersion,
    Dim::Model,
    Dim::GpuCount,
];

/// Most series a default splits into (more would not be told apart by colour).
pub const MAX_SERIES: usize = 10;
/// Most bars per panel before lines read better than grouped bars.
pub const MAX_BARS: usize = 30;

/// Whether a metric belongs in the latency view.
pub fn is_latency(m: &MetricKey) -> bool {
    matches!(m, MetricKey::Latency(..))
        || matches!(m, MetricKey::Extra(n) if n.ends_with("_ms") || n.contains("latency"))
}

/// Whether a metric belongs in the throughput view.
pub fn is_throughput(m: &MetricKey) -> bool {
    matches!(
        m,
        MetricKey::RequestThroughput
            | MetricKey::RequestGoodput
            | MetricKey::InputThroughput
            | MetricKey::OutputThroughput
            | MetricKey::TotalTokenThroughput
    ) || matches!(m, MetricKey::Extra(n) if n.contains("throughput") || n.ends_with("per_s"))
}

/// The preferred default metric among `present` for a view: mean TTFT (then median TTFT,
/// mean TPOT, mean E2E latency) for latency and scaling, output token throughput (then total
/// token and request throughput) for throughput and comparisons, else the first metric that
/// fits the view. A file's own improvement figure is chosen only when nothing else is there.
pub fn default_metric(view: View, present: &[MetricKey]) -> Option<MetricKey> {
    let latency = [
        MetricKey::latency(LatencyMetric::Ttft, Stat::Mean),
        MetricKey::latency(LatencyMetric::Ttft, Stat::Median),
        MetricKey::latency(LatencyMetric::Tpot, Stat::Mean),
        MetricKey::latency(LatencyMetric::E2el, Stat::Mean),
    ];
    let throughput = [
        MetricKey::OutputThroughput,
        MetricKey::TotalTokenThroughput,
        MetricKey::RequestThroughput,
    ];
    let preferred: Vec<MetricKey> = match view {
        View::Latency => latency.to_vec(),
        View::Scaling => latency.iter().chain(&throughput).cloned().collect(),
        _ => throughput.to_vec(),
    };
    let reported = MetricKey::reported_improvement();
    let fits = |m: &&MetricKey| match view {
        View::Latency => is_latency(m),
        View::Throughput => is_throughput(m),
        View::Scaling => true,
        // Comparisons prefer throughputs, then anything with a known direction.
        _ => is_throughput(m) || m.direction() == Direction::HigherIsBetter,
    };
    preferred
        .into_iter()
        .find(|m| present.contains(m))
        .or_else(|| {
            present
                .iter()
                .filter(fits)
                .find(|m| **m != reported)
                .cloned()
        })
        .or_else(|| match view {
            View::Latency | View::Throughput => present.iter().find(fits).cloned(),
            _ => present
                .iter()
                .find(|m| **m != reported)
                .or(present.first())
                .cloned(),
        })
}

/// The metric compared by the improvement view and `benchlens compare` when none is chosen:
/// output, total token or request throughput, else any throughput or higher-is-better metric,
/// else any metric (the file's own improvement figure last).
pub fn default_compare_metric(present: &[MetricKey]) -> Option<MetricKey> {
    default_metric(View::Improvement, present)
}

/// The x dimension when the user has not chosen one: the first of [`X_CANDIDATES`] that
/// varies over the whole dataset (so narrowing a filter never changes it) and is not a
/// measured length; when none varies, the GPU count if it varies (h2oGPT's speeds on 1, 2, 4
/// and 8 GPUs: how a run scales); else the first of them the records have at all (one x value, the
/// runs side by side at it, rather than an axis no record has); when the records have none of
/// them (a single report naming only its engine), the first of [`X_FALLBACKS`] they have, so
/// the first chart is a bar per value rather than empty; else request rate.
pub fn default_x(ds: &Dataset) -> DimKey {
    let measured = measured_dims(ds);
    let candidates = || {
        X_CANDIDATES
            .iter()
            .map(|d| DimKey::Known(*d))
            .filter(|k| !measured.contains(k))
    };
    let gpus = DimKey::Known(Dim::GpuCount);
    candidates()
        .find(|k| ds.distinct_len(k) > 1)
        .or_else(|| Some(gpus).filter(|k| ds.distinct_len(k) > 1 && !measured.contains(k)))
        .or_else(|| candidates().find(|k| ds.distinct_len(k) == 1))
        .or_else(|| {
            X_FALLBACKS
                .iter()
                .filter(|d| **d != Dim::Source)
                .map(|d| DimKey::Known(*d))
                .find(|k| ds.distinct_len(k) > 0)
        })
        .or_else(|| naming_tag(ds))
        .or_else(|| Some(DimKey::Known(Dim::Source)).filter(|k| ds.distinct_len(k) > 0))
        .unwrap_or(DimKey::Known(Dim::RequestRate))
}

/// The tag that names the runs when nothing else does (guidellm's `Profile` column:
/// `Synchronous`, `Concurrent (4)`, …): the configuration tag with the most values, two or
/// more, never a repeat tag (runs of one configuration).
fn naming_tag(ds: &Dataset) -> Option<DimKey> {
    let tags = configuration_dims(ds)
        .into_iter()
        .filter(|k| matches!(k, DimKey::Tag(_)) && !crate::model::spread::is_repeat_dim(k));
    let mut best: Option<(usize, DimKey)> = None;
    for k in tags {
        let n = ds.distinct_len(&k);
        if n > 1 && best.as_ref().is_none_or(|(b, _)| n > *b) {
            best = Some((n, k));
        }
    }
    best.map(|(_, k)| k)
}

/// The x dimension of records that have no load or length: what names the run, most telling
/// first (`source`, the file, is always there).
pub const X_FALLBACKS: [Dim; 4] = [Dim::Model, Dim::Engine, Dim::Gpu, Dim::Source];

/// How a chart's records become points: the x axis, the series and the panels.
#[derive(Clone, Debug, PartialEq)]
pub struct PointLayout {
    /// The x dimension.
    pub x: DimKey,
    /// Dimensions whose combined values name a series. Empty: one series.
    pub series_by: Vec<DimKey>,
    /// The dimension with one panel per value (small multiples), if any.
    pub facet_by: Option<DimKey>,
}

impl PointLayout {
    /// Series and panel dimensions together: how the views without an x axis (trade-off, SLO,
    /// distributions) split their records.
    pub fn split_by(&self) -> Vec<DimKey> {
        let mut d = self.series_by.clone();
        d.extend(self.facet_by.iter().cloned());
        d
    }
}

/// The first of `merged` in [`SERIES_PREFERENCE`] order (then canonical order, `source` last)
/// with at most `max_values` values; never `format`, `date`, `label` or a repeat tag
/// ([`crate::model::spread::REPEAT_TAGS`]: runs of one configuration are averaged, with their
/// interval drawn as error bars, not split into a series per run).
fn pick(ds: &Dataset, merged: &[DimKey], max_values: usize) -> Option<DimKey> {
    ranked(ds, merged, max_values).next()
}

/// Every dimension [`pick`] could choose, its choice first.
fn ranked<'a>(
    ds: &'a Dataset,
    merged: &'a [DimKey],
    max_values: usize,
) -> impl Iterator<Item = DimKey> + 'a {
    let never = [Dim::Format, Dim::Date, Dim::Label, Dim::Source];
    let rank = |k: &DimKey| match k {
        DimKey::Known(d) => SERIES_PREFERENCE
            .iter()
            .position(|p| p == d)
            .unwrap_or(SERIES_PREFERENCE.len()),
        DimKey::Tag(_) => SERIES_PREFERENCE.len() + 1,
    };
    let mut ordered: Vec<&DimKey> = merged
        .iter()
        .filter(|k| !matches!(k, DimKey::Known(d) if never.contains(d)))
        .filter(|k| !(matches!(k, DimKey::Tag(_)) && crate::model::spread::is_repeat_dim(k)))
        .collect();
    crate::model::order::sort_by_key(&mut ordered, |k| rank(k));
    let source = DimKey::Known(Dim::Source);
    ordered
        .into_iter()
        .chain(merged.iter().filter(move |k| **k == source))
        .filter(move |k| ds.distinct_len(k) <= max_values)
        .cloned()
}

/// The series and panels for a chart of `metric` against `x` over the whole dataset, by the
/// point rule: a dimension merging records into one point becomes the series (unless the user
/// chose `series_by`), the next one the panels. Whatever still merges is said on the points.
pub fn default_layout(
    ds: &Dataset,
    x: DimKey,
    series_by: Option<Vec<DimKey>>,
    metric: Option<&MetricKey>,
) -> PointLayout {
    // One row of each configuration answers which dimensions merge as every row would.
    let rows = ds.configurations();
    let chosen = series_by.is_some();
    let series_by = series_by.unwrap_or_else(|| {
        let merged = merged_dims(ds, &rows, std::slice::from_ref(&x), metric);
        // Two systems are two lines even where no point of theirs meets.
        pick(ds, &merged, MAX_SERIES)
            .or_else(|| pick(ds, &varying_systems(ds, &rows, &x, metric), MAX_SERIES))
            .into_iter()
            .collect()
    });
    let mut group = vec![x.clone()];
    group.extend(series_by.iter().cloned());
    let merged = merged_dims(ds, &rows, &group, metric);
    let facet_by = pick(ds, &merged, MAX_PANELS);
    if chosen {
        return PointLayout {
            x,
            series_by,
            facet_by,
        };
    }
    // Dimensions that still merge join the series (their values combined), while the series
    // stay few, so no point averages configurations: llama-bench's runs (flash attention and
    // the test side by side in each GPU's panel, rather than both tests averaged), h2oGPT's
    // precisions beside its engines in each GPU's panel. Whether anything is left merging.
    let grow = |series_by: &mut Vec<DimKey>, facet_by: &Option<DimKey>| loop {
        let mut group = vec![x.clone()];
        group.extend(series_by.iter().cloned());
        group.extend(facet_by.iter().cloned());
        let merged = merged_dims(ds, &rows, &group, metric);
        let series: usize = series_by
            .iter()
            .map(|k| ds.distinct_len(k).max(1))
            .product();
        match pick(ds, &merged, MAX_SERIES / series.max(1)) {
            Some(next) if !series_by.contains(&next) => series_by.push(next),
            _ => break pick(ds, &merged, usize::MAX).is_some(),
        }
    };
    // The first panel dimension that leaves no point merged (dstack's latency curve: a panel
    // per input length, as its blog draws it, with the GPU and its count in the series,
    // rather than a panel per GPU count averaging the lengths), else the first; what still
    // merges is said on the points.
    let facets = std::iter::once(facet_by.clone()).chain(ranked(ds, &merged, MAX_PANELS).map(Some));
    let mut first = None;
    for facet in facets {
        let mut series = series_by.clone();
        if !grow(&mut series, &facet) {
            return PointLayout {
                x,
                series_by: series,
                facet_by: facet,
            };
        }
        first.get_or_insert((series, facet));
    }
    let (series_by, facet_by) = first.unwrap_or((series_by, facet_by));
    PointLayout {
        x,
        series_by,
        facet_by,
    }
}

/// The default comparison: a dimension, its baseline and its candidate.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// The compared dimension.
    pub dim: DimKey,
    /// The baseline value.
    pub baseline: DimValue,
    /// The candidate value (better in most matched configurations).
    pub candidate: DimValue,
}

/// The compared dimension when none is chosen: the first of [`COMPARE_CANDIDATES`] with
/// exactly two values, else the first with more, else a tag with two or more values
/// (`tag.deployment`), else any configuration dimension with two or more (never `date` or
/// `label`: runs are compared through what they ran).
pub fn default_compare_dim(ds: &Dataset) -> Option<DimKey> {
    let varying = |k: &DimKey| ds.distinct_len(k) >= 2;
    let candidates = || COMPARE_CANDIDATES.iter().map(|d| DimKey::Known(*d));
    let config = configuration_dims(ds);
    candidates()
        .find(|k| ds.distinct_len(k) == 2)
        .or_else(|| candidates().find(varying))
        .or_else(|| {
            config
                .iter()
                .find(|k| {
                    matches!(k, DimKey::Tag(_))
                        && !crate::model::spread::is_repeat_dim(k)
                        && varying(k)
                })
                .cloned()
        })
        .or_else(|| {
            config
                .into_iter()
                .filter(|k| !matches!(k, DimKey::Known(Dim::Date | Dim::Label)))
                .filter(|k| {
                    !(matches!(k, DimKey::Tag(_)) && crate::model::spread::is_repeat_dim(k))
                })
                .find(varying)
        })
}

/// Baseline and candidate among the values of `dim` when not chosen: the first and last
/// value, oriented so the candidate is better in more matched configurations of `metric`
/// than it is worse (ties keep the first value as baseline).
pub fn default_sides(
    ds: &Dataset,
    indices: &[usize],
    dim: &DimKey,
    metric: &MetricKey,
) -> Option<(DimValue, DimValue)> {
    let col = ds.column(dim)?;
    let (first, last) = (col.dict.first()?.clone(), col.dict.last()?.clone());
    if first == last {
        return None;
    }
    let spec = ImprovementSpec::new(dim.clone(), first.clone(), last.clone(), metric.clone());
    let (better, worse) = match improvement(ds, indices, &spec) {
        Ok(t) => t
            .rows
            .iter()
            .fold((0usize, 0usize), |(b, w), r| match r.improvement_pct {
                Some(p) if p > 0.0 => (b + 1, w),
                Some(p) if p < 0.0 => (b, w + 1),
                _ => (b, w),
            }),
        Err(_) => (0, 0),
    };
    Some(if worse > better {
        (last, first)
    } else {
        (first, last)
    })
}

/// The default comparison over the records at `indices`, with the default metric.
pub fn default_comparison(ds: &Dataset, indices: &[usize]) -> Option<Comparison> {
    let dim = default_compare_dim(ds)?;
    let metric = default_compare_metric(&ds.metrics_present(indices))?;
    let (baseline, candidate) = default_sides(ds, indices, &dim, &metric)?;
    Some(Comparison {
        dim,
        baseline,
        candidate,
    })
}

/// The match-key dimensions that take more than one value across an improvement table's rows.
pub fn varying_key_dims(t: &ImprovementTable) -> Vec<DimKey> {
    t.matching
        .key_dims
        .iter()
        .enumerate()
        .filter(|(i, _)| {
            crate::model::order::set_of(t.rows.iter().map(|r| r.key.get(*i).cloned().flatten()))
                .len()
                > 1
        })
        .map(|(_, k)| k.clone())
        .collect()
}

/// The improvement view's default bars grouping (the first varying key dimension: the model
/// in seed 000) and heatmap axes (load or size across, the first other varying dimension down).
pub fn default_improvement_groups(
    t: &ImprovementTable,
) -> (Option<DimKey>, Option<(DimKey, DimKey)>) {
    let vary = varying_key_dims(t);
    let bars_by = vary.first().cloned();
    let heat = X_CANDIDATES
        .iter()
        .map(|d| DimKey::Known(*d))
        .find(|k| vary.contains(k))
        .or_else(|| vary.get(1).cloned())
        .and_then(|x| {
            let y = vary.iter().find(|k| **k != x)?.clone();
            Some((x, y))
        });
    (bars_by, heat)
}

/// The view that answers the question a set of files asks (see the module docs). Never a view
/// without data: latency only with a latency metric, throughput only with a throughput metric.
pub fn default_view(ds: &Dataset) -> View {
    let metrics = ds.metric_keys();
    if metrics.is_empty() {
        return View::Table;
    }
    // Many dates of the same configurations: a history, whose question is what changed.
    if super::trend::is_history(ds) {
        return View::Trends;
    }
    if super::capacity_curve::is_sweep_data(ds) {
        return View::Capacity;
    }
    let all: Vec<usize> = (0..ds.len()).collect();
    // The default comparison's table. Its two sides in either order match the same records
    // into the same rows, so the table of the first and last value answers without orienting
    // them first (which [`default_comparison`] does, with a table of its own).
    let compared = default_compare_dim(ds).and_then(|dim| {
        let col = ds.column(&dim)?;
        let (first, last) = (col.dict.first()?.clone(), col.dict.last()?.clone());
        let metric = default_compare_metric(metrics)?;
        (first != last).then(|| ImprovementSpec::new(dim, first, last, metric))
    });
    if let Some(spec) = compared {
        let reported = metrics.contains(&MetricKey::reported_improvement());
        let table = improvement(ds, &all, &spec).ok();
        // A chart shows x, series and panels: three dimensions. More need the improvement view.
        let wide = table
            .as_ref()
            .is_some_and(|t| !t.rows.is_empty() && varying_key_dims(t).len() >= 3);
        if wide || (reported && table.is_some_and(|t| !t.rows.is_empty())) {
            return View::Improvement;
        }
    }
    let view = if metrics.iter().any(is_latency) {
        View::Latency
    } else if metrics.iter().any(is_throughput) {
        View::Throughput
    } else {
        return View::Scaling;
    };
    let x = default_x(ds);
    let metric = default_metric(view, metrics);
    let layout = default_layout(ds, x.clone(), None, metric.as_ref());
    let series = if layout.series_by.is_empty() {
        1
    } else {
        // Distinct combinations of the series dimensions' values over every record: over one
        // row of each configuration, the same combinations.
        let mut seen = Combos::new(
            layout
                .series_by
                .iter()
                .map(|k| ds.column(k).map(|c| (c.codes, c.dict.len()))),
        );
        for &row in ds.configurations().iter() {
            seen.id(row);
        }
        seen.len()
    };
    if series * ds.distinct_len(&x).max(1) > MAX_BARS {
        View::Scaling
    } else {
        view
    }
}

#[cfg(test)]
mod tab_keys {
    use super::View;

    #[test]
    fn arrow_keys_move_between_available_tabs_and_wrap() {
        let all = |_: View| true;
        assert_eq!(
            View::Latency.after_key("ArrowRight", all),
            Some(View::Throughput)
        );
        assert_eq!(View::Latency.after_key("ArrowLeft", all), Some(View::Run));
        assert_eq!(View::Run.after_key("ArrowRight", all), Some(View::Latency));
        assert_eq!(View::Slo.after_key("Home", all), Some(View::Latency));
        assert_eq!(View::Slo.after_key("End", all), Some(View::Run));
        assert_eq!(View::Slo.after_key("Enter", all), None);
        let no_run = |v: View| v != View::Run;
        assert_eq!(
            View::Capacity.after_key("ArrowRight", no_run),
            Some(View::Latency)
        );
        assert_eq!(
            View::Latency.after_key("ArrowLeft", no_run),
            Some(View::Capacity)
        );
        assert_eq!(View::Latency.after_key("End", no_run), Some(View::Capacity));
    }
}

#[cfg(test)]
mod tests;
