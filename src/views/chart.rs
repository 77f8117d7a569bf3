//! The latency, throughput and scaling chart's logic, shared and pure so it is tested
//! natively: the user's choices ([`ChartChoice`], with their link form) and what the chart
//! shows under them ([`chart_contents`]): the metric in force, the point rule's series and
//! panels ([`crate::analysis::defaults::default_layout`]) and the series from [`crate::charts`].

use std::sync::Arc;

use crate::analysis::defaults::{
    default_layout, default_metric, default_x, is_latency, is_throughput, PointLayout, View,
};
use crate::charts::plotly::Plot;
use crate::charts::{self, ChartSpec, PointIndex, Series, Theme};
use crate::model::{Dataset, DimKey, DimKind, MetricKey};
use crate::share::ViewState;

/// The user's chart choices; `None` fields follow the data (see [`crate::analysis::defaults`]).
#[derive(Clone, Debug, PartialEq)]
pub struct ChartChoice {
    /// The active view.
    pub view: View,
    /// The x dimension.
    pub x: Option<DimKey>,
    /// The latency metric of the latency view.
    pub latency_metric: Option<MetricKey>,
    /// The metric of the throughput view.
    pub throughput_metric: Option<MetricKey>,
    /// The metric of the scaling view.
    pub scaling_metric: Option<MetricKey>,
    /// What splits series.
    pub series_by: Option<Vec<DimKey>>,
    /// Log-2 x axis in the scaling view.
    pub log2_x: bool,
    /// Logarithmic y axis.
    pub log_y: bool,
}

impl Default for ChartChoice {
    fn default() -> Self {
        ChartChoice {
            view: View::Latency,
            x: None,
            latency_metric: None,
            throughput_metric: None,
            scaling_metric: None,
            series_by: None,
            log2_x: false,
            log_y: false,
        }
    }
}

impl ChartChoice {
    /// The metric chosen for the active view, if any.
    pub fn active_metric(&self) -> Option<&MetricKey> {
        match self.view {
            View::Latency => self.latency_metric.as_ref(),
            View::Throughput => self.throughput_metric.as_ref(),
            _ => self.scaling_metric.as_ref(),
        }
    }

    /// Sets the metric of the active view.
    pub fn set_active_metric(&mut self, metric: Option<MetricKey>) {
        match self.view {
            View::Latency => self.latency_metric = metric,
            View::Throughput => self.throughput_metric = metric,
            _ => self.scaling_metric = metric,
        }
    }

    /// The link form of these choices (filters and data are added by the caller).
    pub fn to_view_state(&self) -> ViewState {
        ViewState {
            view: Some(self.view.id().to_string()),
            x: self.x.as_ref().map(DimKey::name),
            metric: self.active_metric().map(MetricKey::name),
            series: self
                .series_by
                .as_ref()
                .map(|s| s.iter().map(DimKey::name).collect()),
            log2: self.log2_x,
            log_y: self.log_y,
            ..ViewState::default()
        }
    }

    /// Choices from a link; unknown names fall back to following the data.
    pub fn from_view_state(v: &ViewState) -> ChartChoice {
        let mut c = ChartChoice {
            view: v
                .view
                .as_deref()
                .and_then(View::from_id)
                .unwrap_or(View::Latency),
            x: v.x.as_deref().and_then(DimKey::from_name),
            series_by: v
                .series
                .as_ref()
                .map(|s| s.iter().filter_map(|n| DimKey::from_name(n)).collect()),
            log2_x: v.log2,
            log_y: v.log_y,
            ..ChartChoice::default()
        };
        c.set_active_metric(v.metric.as_deref().and_then(MetricKey::from_name));
        c
    }
}

/// What the latency, throughput and scaling chart shows: its spec, series and menus.
#[derive(Clone, Debug, PartialEq)]
pub struct ChartContents {
    /// What is drawn: view kind, axes, metric, series and panels, theme.
    pub spec: ChartSpec,
    /// The points of every series.
    pub series: Arc<Vec<Series>>,
    /// Metrics present in the filtered records (the metric menu).
    pub metrics: Vec<MetricKey>,
    /// Every dimension of the dataset (the x axis and series menus).
    pub dims: Vec<DimKey>,
    /// The dataset generation these were derived from.
    pub generation: u64,
    /// Filtered records not drawn: they lack the x value or the metric.
    pub left_out: usize,
    /// The filtered records.
    pub filtered: usize,
}

impl ChartContents {
    /// Says how many filtered records the chart leaves out and why, when it leaves any out.
    pub fn left_out_note(&self) -> Option<String> {
        (self.left_out > 0).then(|| {
            format!(
                "{} of {} filtered records are not drawn: they have no {} or no {}.",
                self.left_out,
                self.filtered,
                self.spec.x.label(),
                self.spec.metric.label()
            )
        })
    }
}

/// What the chart shows for the records at `indices` under `choice`; `None` when the dataset
/// is empty or no metric of the view is present. `generation` is the dataset's, kept so two
/// contents compare cheaply.
pub fn chart_contents(
    ds: &Dataset,
    indices: &[usize],
    choice: &ChartChoice,
    theme: Theme,
    generation: u64,
) -> Option<ChartContents> {
    chart_contents_cached(
        ds,
        indices,
        None,
        choice,
        theme,
        generation,
        &mut LayoutCache::default(),
    )
}

/// The last point layout worked out, with what it was worked out for. The layout follows the
/// whole dataset, not the filter, and finding it walks every record twice, so a filter click
/// on a million records reuses it ([`chart_contents_cached`]).
#[derive(Clone, Debug, Default)]
pub struct LayoutCache {
    last: Option<(LayoutKey, PointLayout)>,
    /// The default x axis of a dataset generation ([`default_x`] walks the length columns).
    x: Option<(u64, DimKey)>,
    /// Which point each row falls on, for the last chart drawn from most of the rows.
    points: Option<(PointsKey, Arc<PointIndex>)>,
}

/// What a [`PointIndex`] depends on: the dataset's generation, the x axis, the series, the
/// panels and the metric.
type PointsKey = (u64, DimKey, Vec<DimKey>, Option<DimKey>, MetricKey);

/// What a point layout depends on: the dataset's generation, the x axis, the chosen series
/// and the metric.
type LayoutKey = (u64, DimKey, Option<Vec<DimKey>>, MetricKey);

/// [`chart_contents`] keeping the point layout in `cache` for the next call on the same
/// dataset generation. `selected`, when `indices` are a filter's rows: which configurations
/// they are ([`crate::model::FilterPass::configurations`]), so that points the filter leaves
/// whole are not summed again ([`charts::build_series_selected`]).
#[allow(clippy::too_many_arguments)] // each is one thing the contents depend on
pub fn chart_contents_cached(
    ds: &Dataset,
    indices: &[usize],
    selected: Option<&[bool]>,
    choice: &ChartChoice,
    theme: Theme,
    generation: u64,
    cache: &mut LayoutCache,
) -> Option<ChartContents> {
    if ds.is_empty() {
        return None;
    }
    let metrics = ds.metrics_present(indices);
    // Defaults follow the whole dataset, so narrowing a filter never regroups the chart.
    let x = match (&choice.x, &cache.x) {
        (Some(x), _) => x.clone(),
        (None, Some((g, x))) if *g == generation => x.clone(),
        (None, _) => {
            let x = default_x(ds);
            cache.x = Some((generation, x.clone()));
            x
        }
    };
    let metric = choice
        .active_metric()
        .cloned()
        .filter(|m| metrics.contains(m))
        .or_else(|| default_metric(choice.view, &metrics))?;
    // The point rule: what would merge records into one point becomes series or panels.
    let key: LayoutKey = (generation, x, choice.series_by.clone(), metric.clone());
    let layout = match &cache.last {
        Some((k, layout)) if *k == key => layout.clone(),
        _ => {
            let layout = default_layout(ds, key.1.clone(), key.2.clone(), Some(&metric));
            cache.last = Some((key, layout.clone()));
            layout
        }
    };
    let spec = ChartSpec {
        kind: choice.view.kind(),
        x: layout.x,
        metric,
        series_by: layout.series_by,
        facet_by: layout.facet_by,
        log2_x: choice.log2_x,
        log_y: choice.log_y,
        theme,
        title: None,
    };
    // A filter's rows are summed into the points each row was found to fall on once per
    // dataset and chart; a few rows of many are grouped directly.
    let points_key: PointsKey = (
        generation,
        spec.x.clone(),
        spec.series_by.clone(),
        spec.facet_by.clone(),
        spec.metric.clone(),
    );
    let points = match &cache.points {
        Some((k, p)) if *k == points_key && p.fits(ds) => Some(p.clone()),
        _ if indices.len().saturating_mul(4) >= ds.len() => {
            let p = Arc::new(PointIndex::new(ds, &spec));
            cache.points = Some((points_key, p.clone()));
            Some(p)
        }
        _ => None,
    };
    let series = Arc::new(match (points, selected) {
        (Some(p), Some(selected)) => {
            charts::build_series_selected(ds, indices, selected, &spec, &p)
        }
        (Some(p), None) => charts::build_series_indexed(ds, indices, &spec, &p),
        (None, _) => charts::build_series(ds, indices, &spec),
    });
    let drawn: usize = series
        .iter()
        .flat_map(|s| &s.points)
        .map(|p| p.merge.records)
        .sum();
    Some(ChartContents {
        spec,
        series,
        metrics,
        dims: ds.dim_keys().cloned().collect(),
        generation,
        left_out: indices.len().saturating_sub(drawn),
        filtered: indices.len(),
    })
}

/// The metrics the metric menu offers in `view`.
pub fn metric_options(view: View, metrics: &[MetricKey]) -> Vec<MetricKey> {
    metrics
        .iter()
        .filter(|m| match view {
            View::Latency => is_latency(m),
            View::Throughput => is_throughput(m),
            _ => true,
        })
        .cloned()
        .collect()
}

/// The most metrics the metric menu lists at once. A file with 100,000 columns has as many
/// metrics, and a `<select>` of them all took seconds of the page's thread to build; beyond
/// this the menu lists the metrics matching what the user types.
pub const METRIC_MENU_LIMIT: usize = 200;

/// What the metric menu lists: the options matching the typed text, at most a limit, with the
/// chosen metric always among them.
#[derive(Clone, Debug, PartialEq)]
pub struct MetricMenu {
    /// The metrics listed, in the options' order (the chosen one first when it would not have
    /// been listed otherwise).
    pub shown: Vec<MetricKey>,
    /// How many options match the typed text.
    pub matching: usize,
    /// How many options there are.
    pub total: usize,
}

impl MetricMenu {
    /// Whether some matching options are not listed, so the menu needs its search box.
    pub fn is_cut(&self) -> bool {
        self.total > METRIC_MENU_LIMIT
    }
}

/// The metric menu for `options` under the typed `query` (case-insensitive, on the name or the
/// label), listing at most `limit` metrics and always `current`.
pub fn metric_menu(
    options: &[MetricKey],
    query: &str,
    current: &MetricKey,
    limit: usize,
) -> MetricMenu {
    let needle = query.trim().to_lowercase();
    let matches = |m: &MetricKey| {
        needle.is_empty()
            || m.name().to_lowercase().contains(&needle)
            || m.label().to_lowercase().contains(&needle)
    };
    let mut matching = 0;
    let mut shown = Vec::new();
    for m in options.iter().filter(|m| matches(m)) {
        matching += 1;
        if shown.len() < limit {
            shown.push(m.clone());
        }
    }
    if !shown.contains(current) && options.contains(current) {
        shown.insert(0, current.clone());
    }
    MetricMenu {
        shown,
        matching,
        total: options.len(),
    }
}

/// The dimensions the x axis menu offers: every one, the numeric well-known ones (rate,
/// concurrency, lengths: what an axis usually runs along) first, then the text ones and tags
/// (a model, a profile, a source file), which a bar chart can take as its categories and
/// which a first picture may already use.
pub fn x_dims(dims: &[DimKey]) -> Vec<DimKey> {
    let numeric = |k: &&DimKey| matches!(k, DimKey::Known(d) if d.kind() != DimKind::Text);
    let (mut first, rest): (Vec<&DimKey>, Vec<&DimKey>) = dims.iter().partition(numeric);
    first.extend(rest);
    first.into_iter().cloned().collect()
}

/// Small figures of the kind the explorer draws first for a file of many configurations, in
/// growing order: an empty one, lines of four engines in one panel, in two, then in four
/// panels (one per GPU: mean TTFT over max concurrency, what [`chart_contents`] makes of 32
/// made-up records), made by the same code as every chart. The page draws them once off-screen, one
/// task each, while it is idle after starting: plotly.js compiles its drawing code on its
/// first drawings, which otherwise land in the first chart of the first file (on this machine
/// the longest main-thread task of a 10^6-row load); in steps no one task is long.
pub fn warm_up_figures(theme: Theme) -> Vec<Plot> {
    use crate::model::{LatencyMetric, Record, Stat};
    const ENGINES: [&str; 4] = ["vllm", "sglang", "tgi", "trtllm"];
    const GPUS: [&str; 4] = ["A100", "H100", "L40S", "MI300X"];
    let figure = |gpus: usize| {
        let records = (0..8 * gpus)
            .map(|i| {
                let mut r = Record {
                    engine: Some(ENGINES[i % 4].into()),
                    gpu: Some(GPUS[i / 4 % gpus].into()),
                    max_concurrency: Some(1 << (i / (4 * gpus))),
                    ..Record::default()
                };
                r.set_metric(
                    MetricKey::latency(LatencyMetric::Ttft, Stat::Mean),
                    10.0 + i as f64,
                );
                r
            })
            .collect();
        let ds = Dataset::new(records);
        let all: Vec<usize> = (0..ds.len()).collect();
        let choice = ChartChoice {
            view: crate::analysis::defaults::default_view(&ds),
            ..ChartChoice::default()
        };
        let c = chart_contents(&ds, &all, &choice, theme, 0)?;
        Some(charts::plot(&ds, &c.series, &c.spec))
    };
    std::iter::once(Some(Plot::new()))
        .chain([figure(1), figure(2), figure(GPUS.len())])
        .flatten()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Dim, LatencyMetric, Record, Stat};

    #[test]
    fn the_metric_menu_lists_a_bounded_number_and_keeps_the_choice() {
        let options: Vec<MetricKey> = (0..100_000)
            .map(|i| MetricKey::Extra(format!("col_{i}")))
            .collect();
        let current = options[99_999].clone();
        let all = metric_menu(&options, "", &current, METRIC_MENU_LIMIT);
        assert_eq!(all.total, 100_000);
        assert_eq!(all.matching, 100_000);
        assert_eq!(all.shown.len(), METRIC_MENU_LIMIT + 1);
        assert_eq!(all.shown[0], current, "the chosen metric stays listed");
        assert!(all.is_cut());
        // Typing narrows: "col_4242" matches col_4242 and col_42420..col_42429.
        let some = metric_menu(&options, " COL_4242 ", &current, METRIC_MENU_LIMIT);
        assert_eq!(some.matching, 11);
        assert_eq!(some.shown.len(), 12);
        assert!(some.shown[1..]
            .iter()
            .all(|m| m.name().starts_with("extra.col_4242")));
        // Nothing matches: only the chosen metric, so the menu never goes empty.
        let none = metric_menu(&options, "ttft", &current, METRIC_MENU_LIMIT);
        assert_eq!((none.matching, none.shown), (0, vec![current.clone()]));
        // A few options: all listed, no search box.
        let few = metric_menu(&options[..3], "", &options[0], METRIC_MENU_LIMIT);
        assert_eq!(few.shown, options[..3].to_vec());
        assert!(!few.is_cut());
    }

    /// Two engines at two request rates, with mean TTFT and output throughput.
    fn engines() -> Dataset {
        let rec = |engine: &str, rate: f64, ttft_ms: f64| {
            let mut r = Record {
                engine: Some(engine.into()),
                request_rate: Some(rate),
                ..Record::default()
            };
            r.set_metric(MetricKey::latency(LatencyMetric::Ttft, Stat::Mean), ttft_ms);
            r.set_metric(MetricKey::OutputThroughput, 1000.0 / ttft_ms);
            r
        };
        Dataset::new(vec![
            rec("vllm", 1.0, 20.0),
            rec("vllm", 2.0, 30.0),
            rec("sgl", 1.0, 25.0),
            rec("sgl", 2.0, 35.0),
        ])
    }

    #[test]
    fn the_chart_follows_the_data_until_chosen() {
        let ds = engines();
        let all = [0, 1, 2, 3];
        let ttft = MetricKey::latency(LatencyMetric::Ttft, Stat::Mean);
        let chart = chart_contents(&ds, &all, &ChartChoice::default(), Theme::Light, 7).unwrap();
        assert_eq!(chart.spec.metric, ttft);
        assert_eq!(chart.spec.x, DimKey::Known(Dim::RequestRate));
        // Engines differ at each rate: they become the series, not one merged point.
        assert_eq!(chart.spec.series_by, [DimKey::Known(Dim::Engine)]);
        assert_eq!(chart.series.len(), 2);
        assert_eq!(chart.generation, 7);
        // A chosen metric the view has is kept; one no record has follows the data.
        let mut choice = ChartChoice {
            view: View::Throughput,
            ..ChartChoice::default()
        };
        choice.set_active_metric(Some(MetricKey::OutputThroughput));
        let chart = chart_contents(&ds, &all, &choice, Theme::Dark, 0).unwrap();
        assert_eq!(chart.spec.metric, MetricKey::OutputThroughput);
        assert_eq!(chart.spec.theme, Theme::Dark);
        choice.set_active_metric(Some(MetricKey::RequestThroughput));
        let chart = chart_contents(&ds, &all, &choice, Theme::Light, 0).unwrap();
        assert_eq!(chart.spec.metric, MetricKey::OutputThroughput);
        assert!(chart_contents(&Dataset::default(), &[], &choice, Theme::Light, 0).is_none());
    }

    #[test]
    fn records_the_chart_cannot_draw_are_counted_in_a_note() {
        let ds = engines();
        let all = [0, 1, 2, 3];
        let chart = chart_contents(&ds, &all, &ChartChoice::default(), Theme::Light, 0).unwrap();
        assert_eq!((chart.left_out, chart.left_out_note()), (0, None));
        // A fifth record without a request rate: not on the chart, and said so.
        let mut records: Vec<Record> = (0..4)
            .filter_map(|i| ds.record(i).map(std::borrow::Cow::into_owned))
            .collect();
        let mut no_rate = records[0].clone();
        no_rate.request_rate = None;
        records.push(no_rate);
        let ds = Dataset::new(records);
        let all = [0, 1, 2, 3, 4];
        let chart = chart_contents(&ds, &all, &ChartChoice::default(), Theme::Light, 0).unwrap();
        assert_eq!(chart.left_out, 1);
        assert_eq!(
            chart.left_out_note().as_deref(),
            Some(
                "1 of 5 filtered records are not drawn: they have no Request rate (req/s) or \
                 no Mean TTFT (ms)."
            )
        );
    }

    #[test]
    fn menus_offer_the_views_metrics_and_every_dimension_numeric_first() {
        let ttft = MetricKey::latency(LatencyMetric::Ttft, Stat::Mean);
        let present = [ttft.clone(), MetricKey::OutputThroughput];
        assert_eq!(metric_options(View::Latency, &present), [ttft]);
        assert_eq!(
            metric_options(View::Throughput, &present),
            [MetricKey::OutputThroughput]
        );
        assert_eq!(metric_options(View::Scaling, &present), present);
        let dims = [
            DimKey::Known(Dim::Engine),
            DimKey::Known(Dim::RequestRate),
            DimKey::Tag("node".into()),
        ];
        assert_eq!(
            x_dims(&dims),
            [
                DimKey::Known(Dim::RequestRate),
                DimKey::Known(Dim::Engine),
                DimKey::Tag("node".into())
            ]
        );
    }

    #[test]
    fn each_view_keeps_its_own_metric_and_choices_survive_a_link() {
        let ttft = MetricKey::latency(LatencyMetric::Ttft, Stat::Mean);
        let mut choice = ChartChoice::default();
        choice.set_active_metric(Some(ttft.clone()));
        choice.view = View::Throughput;
        assert_eq!(choice.active_metric(), None);
        choice.set_active_metric(Some(MetricKey::OutputThroughput));
        choice.view = View::Latency;
        assert_eq!(choice.active_metric(), Some(&ttft));
        choice.x = Some(DimKey::Known(Dim::MaxConcurrency));
        choice.series_by = Some(vec![DimKey::Known(Dim::Gpu)]);
        choice.log_y = true;
        let back = ViewState::from_query(&choice.to_view_state().to_query());
        let reopened = ChartChoice::from_view_state(&back);
        assert_eq!(reopened.view, View::Latency);
        assert_eq!(reopened.active_metric(), Some(&ttft));
        assert_eq!(reopened.x, choice.x);
        assert_eq!(reopened.series_by, choice.series_by);
        assert!(reopened.log_y && !reopened.log2_x);
    }
}

#[cfg(test)]
mod warm_up_tests {
    use super::*;

    #[test]
    fn the_warm_up_figures_grow_to_four_panels_of_four_lines() {
        let figures: Vec<serde_json::Value> = warm_up_figures(Theme::Light)
            .iter()
            .map(|f| serde_json::from_str(&f.to_json()).expect("JSON"))
            .collect();
        assert_eq!(figures.len(), 4);
        let traces = |f: &serde_json::Value| f["data"].as_array().map_or(0, Vec::len);
        let axes = |f: &serde_json::Value| -> Vec<String> {
            let set: std::collections::BTreeSet<String> = f["data"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|t| t["xaxis"].as_str().unwrap_or("x").to_string())
                .collect();
            set.into_iter().collect()
        };
        assert_eq!(traces(&figures[0]), 0);
        assert_eq!(
            (traces(&figures[1]), axes(&figures[1])),
            (4, vec!["x".to_string()])
        );
        assert_eq!((traces(&figures[2]), axes(&figures[2]).len()), (8, 2));
        assert_eq!(traces(&figures[3]), 16);
        assert_eq!(axes(&figures[3]), ["x", "x2", "x3", "x4"]);
        let data = figures[3]["data"].as_array().expect("traces");
        assert!(data
            .iter()
            .all(|t| t["x"].as_array().map(Vec::len) == Some(2)));
        assert_eq!(
            figures[3]["layout"]["yaxis"]["title"]["text"],
            "Mean TTFT (ms)"
        );
    }
}
