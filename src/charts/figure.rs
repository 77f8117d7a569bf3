//! The main chart's plotly figure ([`plot`]): one trace per series in value order, a
//! categorical or numeric (log-2) x axis, small multiples with shared y ranges, "mean of N"
//! on points that average several configurations and a note saying which dimensions they mix,
//! and error bars where a point knows its noise ([`SeriesPoint::interval`]: the 95 % interval
//! of repeats, or the file's standard deviation), said in its hover text and under the title.

use crate::charts::plotly::common::{
    Anchor, ErrorData, ErrorType, HoverInfo, Marker, Mode, Position, TextPosition, Title,
};
use crate::charts::plotly::layout::{
    Annotation, Axis, AxisType, BarMode, CategoryOrder, HoverMode, Layout, Legend, Margin,
};
use crate::charts::plotly::{Bar, Plot, Scatter};

use super::series::{facets, series_names, ChartKind, ChartSpec, Series, SeriesPoint};
use super::style::{escape_html, format_value, series_title, themed_axis, NO_VALUE, PALETTE};
use crate::model::points;
use crate::model::spread::Interval;
use crate::model::{Dataset, DimKey, DimValue, MetricKey};

fn axis_title_for_metric(metric: &MetricKey) -> String {
    let label = metric.label();
    match metric.unit() {
        Some(u) if !label.contains(&format!("({u})")) => format!("{label} ({u})"),
        _ => label,
    }
}

fn hover_text(ds: &Dataset, s: &Series, p: &SeriesPoint, spec: &ChartSpec) -> String {
    let unit = spec.metric.unit().unwrap_or("");
    let mut lines = vec![
        format!("<b>{}</b>", escape_html(&s.name)),
        format!(
            "{}: {} {}",
            escape_html(&axis_title_for_metric(&spec.metric)),
            format_value(p.y),
            unit
        ),
        format!(
            "{}: {}",
            escape_html(&spec.x.label()),
            escape_html(&p.x.to_string())
        ),
    ];
    if let (Some(k), Some(f)) = (&spec.facet_by, &s.facet) {
        lines.push(format!(
            "{}: {}",
            escape_html(&k.label()),
            escape_html(&f.to_string())
        ));
    }
    let merge = p.merge.text();
    if !merge.is_empty() {
        lines.push(format!("<b>{}</b>", escape_html(&merge)));
    }
    if let Some(i) = &p.interval {
        lines.push(escape_html(&i.describe()));
    }
    for flag in p.flags.texts(p.merge.records) {
        lines.push(format!("⚠ {}", escape_html(&flag)));
    }
    if let Some(r) = ds.record(p.first_record) {
        let merged: Vec<&DimKey> = p.merge.dims.iter().map(|d| &d.dim).collect();
        for (k, v) in r.dims() {
            if k == spec.x || spec.facet_by.as_ref() == Some(&k) || merged.contains(&&k) {
                continue;
            }
            lines.push(format!(
                "{}: {}",
                escape_html(&k.label()),
                escape_html(&v.to_string())
            ));
        }
    }
    lines.join("<br>")
}

/// Panels per row of small multiples.
const PANELS_PER_ROW: usize = 4;

/// Most panels of small multiples ([`with_axes`] lays out up to eight axes); the defaults
/// never split into more.
pub const MAX_PANELS: usize = 8;

/// Sets the n-th (1-based) x and y axes of a layout; plotly numbers them `xaxis`, `xaxis2`, ...
pub(crate) fn with_axes(layout: Layout, n: usize, x: Axis, y: Axis) -> Layout {
    let n = n.clamp(1, MAX_PANELS);
    layout.x_axis_n(n, x).y_axis_n(n, y)
}

/// The plotly axis ids of panel `n` (1-based): `("x", "y")`, `("x2", "y2")`, ...
fn axis_ids(n: usize) -> (String, String) {
    if n <= 1 {
        ("x".into(), "y".into())
    } else {
        (format!("x{n}"), format!("y{n}"))
    }
}

/// The plotly figure for `series` under `spec`. Series keep their order (value order) in the
/// legend and colours; a categorical x axis lists its values in value order, whatever order
/// the series bring them in; each panel of `spec.facet_by` gets its own axes (y shared).
/// Points that average several configurations carry "mean of N" on the chart and the full
/// note in their hover text. Past [`MAX_RICH_POINTS`] points in all, points carry no text of
/// their own (hover shows x, y and the series) and lines no markers.
pub fn plot(ds: &Dataset, series: &[Series], spec: &ChartSpec) -> Plot {
    let numeric_x = series
        .iter()
        .flat_map(|s| &s.points)
        .all(|p| p.x.as_f64().is_some_and(f64::is_finite));
    let categorical = spec.kind == ChartKind::Bars || !numeric_x;
    let names = series_names(series);
    let panels: Vec<Option<DimValue>> = facets(series).into_iter().take(MAX_PANELS).collect();
    let merged_points = series
        .iter()
        .flat_map(|s| &s.points)
        .filter(|p| p.merge.records > 1)
        .count();
    let merged_anywhere = merged_points > 0;
    // "mean of N" on the points themselves only while it stays legible: with many merged
    // points the note under the title says it once and each hover says which records.
    let label_points = merged_points <= MAX_LABELLED_MERGED_POINTS;
    let dense = series.iter().map(|s| s.points.len()).sum::<usize>() > MAX_RICH_POINTS;
    let mut plot = Plot::new();
    let mut in_legend: Vec<&str> = Vec::new();
    for s in series {
        let Some(panel) = panels.iter().position(|f| *f == s.facet) else {
            continue;
        };
        let si = names.iter().position(|n| *n == s.name).unwrap_or(0);
        let (xa, ya) = axis_ids(panel + 1);
        let show_legend = !in_legend.contains(&s.name.as_str());
        in_legend.push(&s.name);
        let xs: Vec<String> = s.points.iter().map(|p| p.x.to_string()).collect();
        let xs_num: Vec<f64> = s.points.iter().filter_map(|p| p.x.as_f64()).collect();
        let ys: Vec<f64> = s.points.iter().map(|p| p.y).collect();
        let hover: Vec<String> = if dense {
            Vec::new()
        } else {
            s.points
                .iter()
                .map(|p| hover_text(ds, s, p, spec))
                .collect()
        };
        let notes: Vec<String> = if dense {
            Vec::new()
        } else {
            s.points
                .iter()
                .map(|p| {
                    if label_points {
                        p.merge.short_text()
                    } else {
                        String::new()
                    }
                })
                .collect()
        };
        let color = PALETTE[si % PALETTE.len()];
        let name = escape_html(&s.name);
        let intervals: Vec<Option<Interval>> = s.points.iter().map(|p| p.interval).collect();
        let errors = error_bars(&intervals, spec.theme.colors().text);
        match spec.kind {
            ChartKind::Bars => plot.add_trace(
                Bar::new(xs, ys)
                    .error_y_if(errors)
                    .name(&name)
                    .legend_group(&name)
                    .show_legend(show_legend)
                    .x_axis(&xa)
                    .y_axis(&ya)
                    .text_array(notes)
                    .text_position(TextPosition::Outside)
                    .hover_text_array(hover)
                    .hover_info(if dense {
                        HoverInfo::All
                    } else {
                        HoverInfo::Text
                    })
                    .marker(Marker::new().color(color)),
            ),
            ChartKind::Lines => {
                let mode = if dense {
                    Mode::Lines
                } else if merged_anywhere && label_points {
                    Mode::LinesMarkersText
                } else {
                    Mode::LinesMarkers
                };
                let line = LineStyle {
                    name: &name,
                    show_legend,
                    x_axis: &xa,
                    y_axis: &ya,
                    mode,
                    notes,
                    hover,
                    color,
                    errors,
                };
                if categorical {
                    plot.add_trace(line.apply(Scatter::new(xs, ys)));
                } else {
                    plot.add_trace(line.apply(Scatter::new(xs_num, ys)));
                }
            }
        }
    }
    let colors = spec.theme.colors();
    // Every x value once, in value order (numbers numerically, inf last).
    let categories: Vec<String> =
        crate::model::order::set_of(series.iter().flat_map(|s| s.points.iter().map(|p| &p.x)))
            .into_iter()
            .map(DimValue::to_string)
            .collect();
    let mut x_axis = themed_axis(&spec.x.label(), spec.theme);
    if categorical {
        x_axis = x_axis
            .type_(AxisType::Category)
            .category_order(CategoryOrder::Array)
            .category_array(categories);
    } else if spec.log2_x {
        x_axis = x_axis.type_(AxisType::Log).dtick(std::f64::consts::LOG10_2);
    }
    let mut y_axis = themed_axis(&axis_title_for_metric(&spec.metric), spec.theme);
    if spec.log_y {
        y_axis = y_axis.type_(AxisType::Log);
    }
    let mut title = spec.title.clone().unwrap_or_else(|| {
        format!(
            "{} by {}",
            axis_title_for_metric(&spec.metric),
            spec.x.label().to_lowercase()
        )
    });
    if let Some(k) = &spec.facet_by {
        title.push_str(&format!(", one panel per {}", points::dim_phrase(k)));
    }
    let mut title = escape_html(&title);
    let mut notes = Vec::new();
    if merged_anywhere {
        notes.push(merged_note(series, merged_points, label_points));
    }
    if let Some(n) = noise_note(
        series
            .iter()
            .flat_map(|s| &s.points)
            .filter_map(|p| p.interval),
    ) {
        notes.push(n);
    }
    if !notes.is_empty() {
        title.push_str(&format!(
            "<br><sup>{}</sup>",
            escape_html(&notes.join("; "))
        ));
    }
    // Room for the note under the title and the panel titles above the plots.
    let top_margin = if !notes.is_empty() || panels.len() > 1 {
        100
    } else {
        60
    };
    let mut layout = Layout::new()
        .title(Title::with_text(title))
        .bar_mode(BarMode::Group)
        .hover_mode(HoverMode::Closest)
        .legend(Legend::new().title(Title::with_text(series_title(&spec.series_by))))
        .margin(Margin::new().left(70).right(20).top(top_margin).bottom(60))
        .paper_background_color(colors.background)
        .plot_background_color(colors.background)
        .font(crate::charts::plotly::common::Font::new().color(colors.text));
    if panels.len() <= 1 {
        layout = layout.x_axis(x_axis).y_axis(y_axis);
    } else {
        layout = facet_layout(layout, spec, &panels, x_axis, y_axis);
    }
    plot.set_layout(layout);
    plot
}

/// Everything a line trace carries besides its points.
struct LineStyle<'a> {
    name: &'a str,
    show_legend: bool,
    x_axis: &'a str,
    y_axis: &'a str,
    mode: Mode,
    notes: Vec<String>,
    hover: Vec<String>,
    color: &'static str,
    errors: Option<ErrorData>,
}

impl LineStyle<'_> {
    /// Styles a line whose x values are text (categories) or numbers alike.
    fn apply(self, trace: Box<Scatter>) -> Box<Scatter> {
        trace
            .name(self.name)
            .legend_group(self.name)
            .show_legend(self.show_legend)
            .x_axis(self.x_axis)
            .y_axis(self.y_axis)
            .mode(self.mode)
            .text_array(self.notes)
            .text_position(Position::TopCenter)
            .hover_info(if self.hover.is_empty() {
                HoverInfo::All
            } else {
                HoverInfo::Text
            })
            .hover_text_array(self.hover)
            .marker(Marker::new().color(self.color))
            .error_y_if(self.errors)
    }
}

/// Error bars of a trace's points: each point's half interval (`null`, no bar, where it has
/// none); `None` when no point has an interval. Drawn in the text colour: in the series' own
/// colour a bar's lower half vanishes into the bar.
pub(crate) fn error_bars(intervals: &[Option<Interval>], color: &str) -> Option<ErrorData> {
    intervals.iter().any(Option::is_some).then(|| {
        ErrorData::new(ErrorType::Data)
            .array(
                intervals
                    .iter()
                    .map(|i| i.map_or(f64::NAN, |i| i.half_width()))
                    .collect(),
            )
            .color(color)
            .thickness(1.5)
            .width(6)
    })
}

/// What the error bars are, when some point has one: the 95 % interval of repeats and/or the
/// file's standard deviation.
pub(crate) fn noise_note(intervals: impl Iterator<Item = Interval>) -> Option<String> {
    use crate::model::spread::Basis;
    let (mut repeats, mut file) = (false, false);
    for i in intervals {
        match i.basis {
            Basis::Repeats { .. } => repeats = true,
            Basis::FileStd { .. } => file = true,
        }
    }
    match (repeats, file) {
        (false, false) => None,
        (true, false) => {
            Some("error bars: 95 % interval of the mean of repeated runs (t·s/√n)".into())
        }
        (false, true) => Some("error bars: ± the file's standard deviation".into()),
        (true, true) => Some(
            "error bars: 95 % interval of repeated runs (t·s/√n), or ± the file's standard deviation"
                .into(),
        ),
    }
}

/// The most points in all a chart gives a hover text of their own (the record's dimensions)
/// and markers. A point per distinct x value stays far below it in the sweeps benchlens reads,
/// but a million records with a million x values would otherwise build a million hover texts
/// for an SVG chart that then takes seconds to draw.
pub const MAX_RICH_POINTS: usize = 10_000;

/// Most merged points that each carry a "mean of N" label; beyond it only the note says so.
const MAX_LABELLED_MERGED_POINTS: usize = 24;

/// The chart note for points averaging several configurations: which dimensions they mix.
/// `labelled`: the points carry their own "mean of N"; else the note counts them and points
/// to the hover text.
fn merged_note(series: &[Series], merged_points: usize, labelled: bool) -> String {
    let mut dims: Vec<&DimKey> = Vec::new();
    // Runs of one configuration (file, date, label, run tag) are repeats, not a mix.
    for d in series
        .iter()
        .flat_map(|s| &s.points)
        .flat_map(|p| &p.merge.dims)
        .filter(|d| !crate::model::spread::is_repeat_dim(&d.dim))
    {
        if !dims.contains(&&d.dim) {
            dims.push(&d.dim);
        }
    }
    let what = if dims.is_empty() {
        "repeated runs of one configuration".to_string()
    } else {
        let phrases: Vec<String> = dims.iter().map(|k| points::dim_phrase(k)).collect();
        format!("records of different {}", phrases.join(", "))
    };
    if labelled {
        format!("points marked “mean of N” average {what}")
    } else {
        format!("{merged_points} points average {what} (their hover text says which)")
    }
}

/// Lays out one pair of axes per panel, [`PANELS_PER_ROW`] to a row, y ranges shared (the y
/// title and tick labels on each row's first panel only), each panel titled with its value.
fn facet_layout(
    mut layout: Layout,
    spec: &ChartSpec,
    panels: &[Option<DimValue>],
    x_axis: Axis,
    y_axis: Axis,
) -> Layout {
    let cols = panels.len().min(PANELS_PER_ROW);
    let rows = panels.len().div_ceil(cols);
    let (gap_x, gap_y) = (0.04, 0.12);
    let width = (1.0 - gap_x * (cols - 1) as f64) / cols as f64;
    let height = (1.0 - gap_y * (rows - 1) as f64) / rows as f64;
    // Short panel titles ("output length 512"): a full label with unit collides at four across.
    let facet_label = spec
        .facet_by
        .as_ref()
        .map(points::dim_phrase)
        .unwrap_or_default();
    let mut annotations = Vec::new();
    for (i, value) in panels.iter().enumerate() {
        let (row, col) = (i / cols, i % cols);
        let x0 = col as f64 * (width + gap_x);
        let y1 = 1.0 - row as f64 * (height + gap_y);
        let (xa, ya) = axis_ids(i + 1);
        let mut x = x_axis.clone().domain(&[x0, x0 + width]).anchor(&ya);
        let mut y = y_axis.clone().domain(&[y1 - height, y1]).anchor(&xa);
        if i > 0 {
            y = y.matches("y");
        }
        if col > 0 {
            // The first panel of the row labels the shared y range; the others repeat nothing
            // (and plotly.js has three fewer sets of tick labels to measure on every redraw).
            y = y.title(Title::with_text("")).show_tick_labels(false);
        }
        if row + 1 < rows {
            x = x.title(Title::with_text(""));
        }
        layout = with_axes(layout, i + 1, x, y);
        let shown = value
            .as_ref()
            .map_or(NO_VALUE.to_string(), DimValue::to_string);
        annotations.push(
            Annotation::new()
                .text(escape_html(&format!("{facet_label} {shown}")))
                .x_ref("paper")
                .y_ref("paper")
                .x(x0 + width / 2.0)
                .y(y1)
                .y_anchor(Anchor::Bottom)
                .show_arrow(false),
        );
    }
    layout.annotations(annotations)
}
