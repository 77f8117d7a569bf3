//! The trade-off chart: per series its points (or, past [`MAX_POINT_MARKERS`] points in all,
//! their shaded grid) and its frontier, then the frontier of all series and the layout with
//! its notes. Built in steps ([`PlotFrame`], [`series_traces`] of each series,
//! [`assemble_plot`]) so that the page can draw a million points' chart between which it
//! stays responsive; [`tradeoff_plot`] takes them all at once.

use crate::charts::figure::{error_bars, noise_note};
use crate::charts::plotly::common::{ColorScale, ColorScaleElement, DashType, Position};
use crate::charts::plotly::common::{HoverInfo, Line, LineShape, Marker, Mode, Title};
use crate::charts::plotly::layout::Legend;
use crate::charts::plotly::{HeatMap, Plot, Scatter};
use crate::charts::style::{base_layout, escape_html, series_title, PALETTE};
use crate::model::Dataset;

use super::bins::{bin_grid, bin_hover, cell_centres, rgba};
use super::{
    assumptions_used, bin_points, evenly, extent, global_frontier, grid_for, hover,
    parallelism_label, AssumedFor, TradeoffPoint, TradeoffSeries, TradeoffSpec, MAX_FRONTIER_DRAWN,
    MAX_POINT_MARKERS,
};

/// Frontiers up to this many drawn points carry their parallelism as text labels.
const MAX_FRONTIER_LABELS: usize = 24;

/// Frontiers of more drawn points than this (and no labels) are drawn as a line alone.
const MAX_FRONTIER_MARKERS: usize = 100;

/// What every series' traces share, worked out from all the series before any is drawn.
#[derive(Clone, Debug, PartialEq)]
pub struct PlotFrame {
    /// Points over all series.
    total: usize,
    /// The extent the binned series share, when there are too many points for a marker each.
    binned: Option<((f64, f64), (f64, f64))>,
    /// Each binned series' grid.
    grid: (usize, usize),
}

impl PlotFrame {
    /// The frame of `series`' chart: binned past [`MAX_POINT_MARKERS`] points in all.
    pub fn new(series: &[TradeoffSeries]) -> PlotFrame {
        let total: usize = series.iter().map(|s| s.points.len()).sum();
        PlotFrame {
            total,
            binned: (total > MAX_POINT_MARKERS)
                .then(|| extent(series))
                .flatten(),
            grid: grid_for(series.len()),
        }
    }
}

/// One series' traces: its points (or their grid) and its frontier.
#[derive(Clone, Debug, PartialEq)]
pub struct SeriesTraces {
    /// The traces, to be added to the figure in series order.
    traces: Plot,
    /// The grid cells drawn (binned series).
    cells: usize,
}

/// The traces of series number `index` (its colour) of the chart `frame` was made for.
///
/// Binned, the points are a shaded grid (one image for plotly.js, however many cells; hover
/// gives each cell's count and ranges) and the frontier carries each point's own hover, so
/// the deployments on it stay readable point by point. Else each point is a marker with its
/// hover. A frontier longer than [`MAX_FRONTIER_DRAWN`] is a line through that many of its
/// points, evenly spread.
pub fn series_traces(
    ds: &Dataset,
    frame: &PlotFrame,
    index: usize,
    s: &TradeoffSeries,
    spec: &TradeoffSpec,
) -> SeriesTraces {
    let mut traces = Plot::new();
    let mut cells = 0;
    let color = PALETTE[index % PALETTE.len()];
    let name = escape_html(&s.name);
    if let Some((x, y)) = frame.binned {
        let bins = bin_points(&s.points, x, y, frame.grid);
        cells = bins.len();
        let (shade, text) = bin_grid(&bins, frame.grid, |b| bin_hover(&s.name, b, spec));
        traces.add_trace(
            HeatMap::new(
                cell_centres(x, frame.grid.0),
                cell_centres(y, frame.grid.1),
                shade,
            )
            .hover_text_matrix(text)
            .color_scale(ColorScale::Vector(vec![
                ColorScaleElement(0.0, rgba(color, 0.2)),
                ColorScaleElement(1.0, rgba(color, 0.85)),
            ]))
            .show_scale(false)
            .name(name.clone())
            .legend_group(name.clone())
            .hover_info(HoverInfo::Text),
        );
    } else {
        traces.add_trace(
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
            .error_y_if(error_bars(
                &s.points.iter().map(|p| p.interval).collect::<Vec<_>>(),
                spec.theme.colors().text,
            ))
            .name(name.clone())
            .legend_group(name.clone())
            .mode(Mode::Markers)
            .hover_info(HoverInfo::Text),
        );
    }
    let front: Vec<&TradeoffPoint> = evenly(&s.frontier, MAX_FRONTIER_DRAWN)
        .into_iter()
        .filter_map(|i| s.points.get(i))
        .collect();
    // The parallelism along a short frontier (TP8, TP4·PP2): which deployment each point of
    // the curve is.
    let labels: Vec<String> = if front.len() <= MAX_FRONTIER_LABELS {
        front
            .iter()
            .map(|p| {
                ds.record(p.record)
                    .and_then(|r| parallelism_label(&r))
                    .unwrap_or_default()
            })
            .collect()
    } else {
        Vec::new()
    };
    let labelled = labels.iter().any(|l| !l.is_empty());
    // A long frontier is a line: a marker at each of its points would cost as much to draw as
    // the binned cloud, and say little more than the line.
    let front_mode = if s.frontier.len() > MAX_FRONTIER_DRAWN
        || (front.len() > MAX_FRONTIER_MARKERS && !labelled)
    {
        Mode::Lines
    } else if labelled {
        Mode::LinesMarkersText
    } else {
        Mode::LinesMarkers
    };
    let mut front_trace = Scatter::new(
        front.iter().map(|p| p.latency).collect(),
        front.iter().map(|p| p.throughput).collect(),
    );
    if labelled {
        front_trace = front_trace
            .text_array(labels.iter().map(|l| escape_html(l)).collect::<Vec<_>>())
            .text_position(Position::TopCenter);
    }
    // Drawn as markers, the points have their hover already; binned, the frontier gives it.
    front_trace = if frame.binned.is_some() {
        front_trace
            .hover_text_array(
                front
                    .iter()
                    .map(|p| hover(ds, &s.name, p, spec))
                    .collect::<Vec<_>>(),
            )
            .hover_info(HoverInfo::Text)
    } else {
        front_trace.hover_info(HoverInfo::Skip)
    };
    traces.add_trace(
        front_trace
            .name(format!("{name} frontier"))
            .legend_group(name)
            .mode(front_mode)
            .line(Line::new().color(color).width(2.0).shape(LineShape::Linear))
            .marker(Marker::new().color(color).size(10)),
    );
    SeriesTraces { traces, cells }
}

/// The chart of `series` from each one's [`series_traces`] (in series order): the frontier of
/// all series when there are several, and the layout, whose subtitle says how the points are
/// drawn and what prices or powers were `assumed` ([`assumed_in`]).
pub fn assemble_plot(
    frame: &PlotFrame,
    series: &[TradeoffSeries],
    traces: Vec<SeriesTraces>,
    assumed: &[AssumedFor],
    spec: &TradeoffSpec,
) -> Plot {
    let mut plot = Plot::new();
    let mut cells = 0;
    for t in traces {
        cells += t.cells;
        plot.append(t.traces);
    }
    // Across series: which deployment is best at each x, whatever its series.
    if series.len() > 1 {
        let all = global_frontier(series, spec);
        let all = evenly(&all, MAX_FRONTIER_DRAWN);
        plot.add_trace(
            Scatter::new(
                all.iter().map(|p| p.0).collect(),
                all.iter().map(|p| p.1).collect(),
            )
            .name("frontier of all series")
            .mode(Mode::Lines)
            .line(Line::new().color("#888888").width(1.5).dash(DashType::Dash))
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
    let mut notes = Vec::new();
    if frame.binned.is_some() {
        let front: usize = series.iter().map(|s| s.frontier.len()).sum();
        let drawn: usize = series
            .iter()
            .map(|s| s.frontier.len().min(MAX_FRONTIER_DRAWN))
            .sum();
        let exact = if drawn == front {
            format!("all {front} frontier points drawn")
        } else {
            format!("{drawn} of the {front} frontier points drawn, evenly spread")
        };
        notes.push(format!(
            "{} points drawn as {cells} grid cells (shade: points in the cell); {exact}",
            frame.total
        ));
    }
    if let Some(n) = noise_note(
        series
            .iter()
            .flat_map(|s| &s.points)
            .filter_map(|p| p.interval),
    ) {
        notes.push(n);
    }
    let assumed: Vec<String> = assumed.iter().map(AssumedFor::short).collect();
    if !assumed.is_empty() {
        notes.push(format!("assuming {}", assumed.join(", ")));
    }
    if !notes.is_empty() {
        layout = layout.title(Title::with_text(format!(
            "{}<br><sub>{}</sub>",
            escape_html(&title),
            notes
                .iter()
                .map(|n| escape_html(n))
                .collect::<Vec<_>>()
                .join("<br>")
        )));
    }
    plot.set_layout(layout);
    plot
}

/// What a cost or energy axis assumed for the GPUs of the records drawn on the chart
/// ([`assumptions_used`] of the series' points).
pub fn assumed_in(ds: &Dataset, series: &[TradeoffSeries], spec: &TradeoffSpec) -> Vec<AssumedFor> {
    if !spec.throughput.assumes() {
        return Vec::new();
    }
    let records: Vec<usize> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.record))
        .collect();
    assumptions_used(ds, &records, spec)
}

/// Scatter of every point plus, per series, its frontier as a line in the same colour, and
/// the frontier of all series: [`PlotFrame`], [`series_traces`] of each series and
/// [`assemble_plot`] at once. Past [`MAX_POINT_MARKERS`] points in all, each series is drawn
/// as its [`bin_points`].
pub fn tradeoff_plot(ds: &Dataset, series: &[TradeoffSeries], spec: &TradeoffSpec) -> Plot {
    let frame = PlotFrame::new(series);
    let traces = series
        .iter()
        .enumerate()
        .map(|(i, s)| series_traces(ds, &frame, i, s, spec))
        .collect();
    assemble_plot(&frame, series, traces, &assumed_in(ds, series, spec), spec)
}
