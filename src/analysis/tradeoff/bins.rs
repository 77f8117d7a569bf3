//! Binning a trade-off's points when there are too many to draw one marker each: a grid over
//! the chart's extent, one marker per occupied cell with the count and ranges on hover.

use super::{TradeoffPoint, TradeoffSeries, TradeoffSpec};
use crate::charts::style::{escape_html, format_value};

/// The most points the chart draws one marker each, with each record's dimensions on hover.
/// plotly's SVG scatter slows down past about ten thousand markers, and the page's plotly.js
/// bundle (the cartesian one) has no WebGL scatter, so past this many points in all every
/// series is drawn binned ([`bin_points`] on its [`grid_for`], as one shaded grid) and the
/// figure stays bounded whatever the record count. The frontier is always computed from every
/// point.
pub const MAX_POINT_MARKERS: usize = 10_000;

/// Columns (latency) and rows (throughput) of the grid binned points fall into: at most
/// 2,560 markers a series, cells of about 15 × 10 pixels on a 1,000 × 400 pixel plot.
pub const BIN_GRID: (usize, usize) = (64, 40);

/// The most grid cells a binned chart draws over all its series together. plotly.js styles
/// each SVG marker on its own (about 0.2 ms a marker in headless Chromium on this project's
/// machine: 16 series of full grids took 4.4 s to draw), so with many series each one's grid
/// is coarser ([`grid_for`]) and the drawing stays bounded by this, not by the series count.
pub const MAX_BINNED_MARKERS: usize = 2_000;

/// The grid for each of `series` binned series: [`BIN_GRID`], or that grid scaled down
/// evenly in both directions so that all series' cells together stay within
/// [`MAX_BINNED_MARKERS`] (at least 8 × 5).
pub fn grid_for(series: usize) -> (usize, usize) {
    let full = BIN_GRID.0 * BIN_GRID.1;
    if series * full <= MAX_BINNED_MARKERS {
        return BIN_GRID;
    }
    let f = (MAX_BINNED_MARKERS as f64 / (series * full) as f64).sqrt();
    let scale = |n: usize, least: usize| ((n as f64 * f).floor() as usize).max(least);
    (scale(BIN_GRID.0, 8), scale(BIN_GRID.1, 5))
}

/// The most frontier points drawn per series (and listed under the chart in all, see
/// [`crate::views::analysis::frontier_rows`]); past it the frontier line is drawn through this
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
    /// Its grid cell: column (latency) and row (throughput).
    pub cell: (usize, usize),
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
        let cell = (cell_of(p.latency, x, cols), cell_of(p.throughput, y, rows));
        let c = cell.0 * rows + cell.1;
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
                cell,
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

pub(super) fn bin_hover(series: &str, b: &PointBin, spec: &TradeoffSpec) -> String {
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
    ];
    lines.extend(spec.axis_lines(range(b.latency_range), range(b.throughput_range)));
    if b.on_frontier > 0 {
        lines.push(format!("{} on the Pareto frontier", b.on_frontier));
    }
    lines.join("<br>")
}

/// The centre of each of `cells` equal cells over `[lo, hi]` (one cell at `lo` for an empty
/// range), as [`cell_of`] divides it.
pub(super) fn cell_centres((lo, hi): (f64, f64), cells: usize) -> Vec<f64> {
    let cells = cells.max(1);
    if hi <= lo {
        return vec![lo; 1];
    }
    let w = (hi - lo) / cells as f64;
    (0..cells).map(|i| lo + (i as f64 + 0.5) * w).collect()
}

/// Cells by row then column, `None` where empty.
pub(super) type Grid<T> = Vec<Vec<Option<T>>>;

/// One series' bins as a grid (`[row][column]`, `None` where no point fell): the shade of a
/// cell (the log of its count, so one crowded cell does not wash out the rest) and its hover.
pub(super) fn bin_grid(
    bins: &[PointBin],
    grid: (usize, usize),
    hover: impl Fn(&PointBin) -> String,
) -> (Grid<f64>, Grid<String>) {
    let (cols, rows) = (grid.0.max(1), grid.1.max(1));
    let mut shade = vec![vec![None; cols]; rows];
    let mut text = vec![vec![None; cols]; rows];
    for b in bins {
        let (c, r) = b.cell;
        if let (Some(z), Some(t)) = (
            shade.get_mut(r).and_then(|row| row.get_mut(c)),
            text.get_mut(r).and_then(|row| row.get_mut(c)),
        ) {
            *z = Some(1.0 + (b.count.max(1) as f64).ln());
            *t = Some(hover(b));
        }
    }
    (shade, text)
}

/// `#rrggbb` as `rgba(r,g,b,alpha)` (black for anything else).
pub(super) fn rgba(hex: &str, alpha: f64) -> String {
    let hex = if hex.len() == 7 && hex.starts_with('#') {
        hex
    } else {
        "#000000"
    };
    let channel = |i: usize| {
        hex.get(i..i + 2)
            .and_then(|h| u8::from_str_radix(h, 16).ok())
            .unwrap_or(0)
    };
    format!("rgba({},{},{},{alpha})", channel(1), channel(3), channel(5))
}
