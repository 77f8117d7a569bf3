//! The capacity curve's plotly figure ([`capacity_plot`]): one panel for goodput (or request
//! throughput) and one per objective, stacked on a shared load axis; each sweep a colour, its
//! probes as points (● passed, ✕ failed, ○ cut short) and the mean per load as a line with the
//! repeats' spread as error bars; each objective's limit as a horizontal line; the knee shaded
//! from the capacity to the first failing load, and the capacity starred.

use crate::charts::plotly::common::{
    DashType, ErrorData, ErrorType, HoverInfo, Line, Marker, MarkerSymbol, Mode, Title,
};
use crate::charts::plotly::layout::{
    AxisType, HoverMode, Layout, Legend, Margin, Shape, ShapeLine, ShapeType,
};
use crate::charts::plotly::{Plot, Scatter};

use super::capacity_curve::{CapacityCurves, LoadAxis, Probe, ProbeVerdict, Sweep};
use crate::charts::figure::with_axes;
use crate::charts::style::{escape_html, format_value, series_title, themed_axis, Theme, PALETTE};

/// Height of one panel, pixels.
pub const PANEL_HEIGHT_PX: usize = 230;
/// Room for the title, the x axis and a legend below, pixels.
const FRAME_HEIGHT_PX: usize = 190;
/// Colour of limit lines shared by every sweep.
const LIMIT_COLOR: &str = "#d93025";
/// Loads spanning at least this ratio are drawn on a log axis (a bracketing sweep from
/// 1 req/s doubles to 64 and beyond; a linear axis would crush the knee).
const LOG_X_RATIO: f64 = 10.0;

/// The figure's height for `c`: one [`PANEL_HEIGHT_PX`] per panel plus the frame.
pub fn capacity_figure_height_px(c: &CapacityCurves) -> usize {
    FRAME_HEIGHT_PX + PANEL_HEIGHT_PX * (1 + c.panels.len())
}

/// The plotly axis ids of panel `n` (1-based, top to bottom).
fn axis_ids(n: usize) -> (String, String) {
    if n <= 1 {
        ("x".into(), "y".into())
    } else {
        (format!("x{n}"), format!("y{n}"))
    }
}

fn verdict_word(v: ProbeVerdict) -> &'static str {
    match v {
        ProbeVerdict::Passed => "passed",
        ProbeVerdict::Failed => "failed",
        ProbeVerdict::Unjudged => "cut short, not judged",
    }
}

/// A probe's hover text: its number, load, verdict and `what`'s value.
fn probe_hover(s: &Sweep, p: &Probe, axis: LoadAxis, what: &str, value: f64) -> String {
    let number = p.number.map(|n| format!("probe {n} ")).unwrap_or_default();
    format!(
        "<b>{}</b><br>{number}at {} {}: {}<br>{}: {}",
        escape_html(&s.name),
        format_value(p.load),
        axis.unit(),
        verdict_word(p.verdict),
        escape_html(what),
        format_value(value)
    )
}

/// What a panel draws for one sweep.
struct PanelSeries<'a> {
    sweep: &'a Sweep,
    color: &'static str,
    x_axis: &'a str,
    y_axis: &'a str,
    what: &'a str,
    show_legend: bool,
}

impl PanelSeries<'_> {
    /// The mean per load as a line with the repeats' spread as error bars, then the probes
    /// as points by verdict.
    fn add(&self, plot: &mut Plot, axis: LoadAxis, value: impl Fn(&Probe) -> Option<f64>) {
        let s = self.sweep;
        let name = escape_html(&s.name);
        let spread = s.by_load(&value);
        if spread.is_empty() {
            return;
        }
        let hover: Vec<String> = spread
            .iter()
            .map(|l| {
                let of = if l.probes > 1 {
                    format!(
                        "mean of {} probes: {} (from {} to {})",
                        l.probes,
                        format_value(l.mean),
                        format_value(l.min),
                        format_value(l.max)
                    )
                } else {
                    format_value(l.mean)
                };
                format!(
                    "<b>{name}</b><br>at {} {}<br>{}: {of}",
                    format_value(l.load),
                    axis.unit(),
                    escape_html(self.what)
                )
            })
            .collect();
        plot.add_trace(
            Scatter::new(
                spread.iter().map(|l| l.load).collect(),
                spread.iter().map(|l| l.mean).collect(),
            )
            .name(&name)
            .legend_group(&name)
            .show_legend(self.show_legend)
            .x_axis(self.x_axis)
            .y_axis(self.y_axis)
            .mode(Mode::Lines)
            .line(Line::new().color(self.color).width(2.0))
            .error_y(
                ErrorData::new(ErrorType::Data)
                    .array(spread.iter().map(|l| l.max - l.mean).collect())
                    .array_minus(spread.iter().map(|l| l.mean - l.min).collect())
                    .color(self.color)
                    .thickness(1.5)
                    .width(6),
            )
            .hover_text_array(hover)
            .hover_info(HoverInfo::Text),
        );
        for (verdict, symbol) in [
            (ProbeVerdict::Passed, MarkerSymbol::Circle),
            (ProbeVerdict::Failed, MarkerSymbol::X),
            (ProbeVerdict::Unjudged, MarkerSymbol::CircleOpen),
        ] {
            let points: Vec<(&Probe, f64)> = s
                .probes
                .iter()
                .filter(|p| p.verdict == verdict)
                .filter_map(|p| Some((p, value(p).filter(|v| v.is_finite())?)))
                .collect();
            if points.is_empty() {
                continue;
            }
            plot.add_trace(
                Scatter::new(
                    points.iter().map(|(p, _)| p.load).collect(),
                    points.iter().map(|(_, v)| *v).collect(),
                )
                .name(format!("{name}: {} probes", verdict_word(verdict)))
                .legend_group(&name)
                .show_legend(false)
                .x_axis(self.x_axis)
                .y_axis(self.y_axis)
                .mode(Mode::Markers)
                .marker(
                    Marker::new()
                        .color(self.color)
                        .symbol(symbol)
                        .size(9)
                        .opacity(0.8),
                )
                .hover_text_array(
                    points
                        .iter()
                        .map(|(p, v)| probe_hover(s, p, axis, self.what, *v))
                        .collect::<Vec<_>>(),
                )
                .hover_info(HoverInfo::Text),
            );
        }
    }
}

/// The goodput panel's label for the whole figure: goodput when any sweep has it.
fn first_panel_title(c: &CapacityCurves) -> &'static str {
    use super::capacity_curve::GoodputSource;
    if c.sweeps.iter().any(|s| s.goodput != GoodputSource::Absent) {
        "Goodput (req/s)"
    } else {
        "Request throughput (req/s)"
    }
}

/// The capacity curve of `c` (see the module docs). Panel 1 is goodput; panels 2.. follow
/// `c.panels`. Every panel's x axis matches the first, and only the bottom one is labelled.
pub fn capacity_plot(c: &CapacityCurves, theme: Theme) -> Plot {
    let mut plot = Plot::new();
    let n_panels = 1 + c.panels.len();
    let loads: Vec<f64> = c
        .sweeps
        .iter()
        .flat_map(|s| s.probes.iter().map(|p| p.load))
        .filter(|l| l.is_finite())
        .collect();
    let lo = loads.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = loads.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let log_x = lo > 0.0 && hi / lo >= LOG_X_RATIO;
    // Limit lines run across the loads drawn, a little beyond on both sides.
    let (line_lo, line_hi) = if log_x {
        (lo / 1.1, hi * 1.1)
    } else {
        let pad = ((hi - lo) * 0.05).max(hi.abs() * 0.01);
        (lo - pad, hi + pad)
    };
    let first_title = first_panel_title(c);
    for (si, s) in c.sweeps.iter().enumerate() {
        let color = PALETTE[si % PALETTE.len()];
        let what = match s.goodput {
            super::capacity_curve::GoodputSource::Absent => "request throughput (req/s)",
            _ => "goodput (req/s)",
        };
        PanelSeries {
            sweep: s,
            color,
            x_axis: "x",
            y_axis: "y",
            what,
            show_legend: true,
        }
        .add(&mut plot, c.axis, |p| s.first_panel_value(p));
        // With goodput drawn, request throughput is its dotted companion.
        if s.goodput != super::capacity_curve::GoodputSource::Absent {
            let tp = s.by_load(|p| p.throughput);
            if !tp.is_empty() {
                let name = escape_html(&s.name);
                plot.add_trace(
                    Scatter::new(
                        tp.iter().map(|l| l.load).collect(),
                        tp.iter().map(|l| l.mean).collect(),
                    )
                    .name(format!("{name}: request throughput"))
                    .legend_group(&name)
                    .show_legend(false)
                    .mode(Mode::Lines)
                    .line(Line::new().color(color).width(1.0).dash(DashType::Dot))
                    .hover_text_array(
                        tp.iter()
                            .map(|l| {
                                format!(
                                    "<b>{name}</b><br>at {} {}<br>request throughput: {} req/s",
                                    format_value(l.load),
                                    c.axis.unit(),
                                    format_value(l.mean)
                                )
                            })
                            .collect::<Vec<_>>(),
                    )
                    .hover_info(HoverInfo::Text),
                );
            }
        }
        // The capacity, starred on the first panel.
        if let Some((load, _)) = s.knee() {
            if let Some(at) = s
                .by_load(|p| s.first_panel_value(p))
                .into_iter()
                .find(|l| l.load == load)
            {
                let name = escape_html(&s.name);
                plot.add_trace(
                    Scatter::new(vec![load], vec![at.mean])
                        .name(format!(
                            "{}capacity {} {}",
                            // One sweep: the legend needs no name (long file names get cut).
                            if c.sweeps.len() > 1 {
                                format!("{name}: ")
                            } else {
                                String::new()
                            },
                            format_value(load),
                            c.axis.unit()
                        ))
                        .legend_group(&name)
                        .mode(Mode::Markers)
                        .marker(
                            Marker::new()
                                .color(color)
                                .symbol(MarkerSymbol::Star)
                                .size(16)
                                .line(
                                    crate::charts::plotly::common::Line::new()
                                        .color(theme.colors().text)
                                        .width(1.0),
                                ),
                        )
                        .hover_text(format!(
                            "<b>{name}</b><br>capacity: {} {}",
                            format_value(load),
                            c.axis.unit()
                        ))
                        .hover_info(HoverInfo::Text),
                );
            }
        }
        for (pi, panel) in c.panels.iter().enumerate() {
            let (xa, ya) = axis_ids(pi + 2);
            PanelSeries {
                sweep: s,
                color,
                x_axis: &xa,
                y_axis: &ya,
                what: &panel.title,
                show_legend: false,
            }
            .add(&mut plot, c.axis, |p| p.values.get(pi).copied().flatten());
        }
    }
    // Limit lines: one shared line when every sweep has the same limit, else one per sweep.
    for (pi, panel) in c.panels.iter().enumerate() {
        let (xa, ya) = axis_ids(pi + 2);
        let mut limits: Vec<(usize, f64, &str)> = panel
            .limits
            .iter()
            .zip(&panel.limit_labels)
            .enumerate()
            .filter_map(|(si, (l, label))| Some((si, (*l)?, label.as_deref()?)))
            .collect();
        let shared = limits.windows(2).all(|w| w[0].1 == w[1].1);
        if shared {
            limits.truncate(1);
        }
        for (si, limit, label) in limits {
            let (color, name) = if shared {
                (LIMIT_COLOR, format!("limit: {}", escape_html(label)))
            } else {
                (
                    PALETTE[si % PALETTE.len()],
                    format!(
                        "limit ({}): {}",
                        escape_html(&c.sweeps[si].name),
                        escape_html(label)
                    ),
                )
            };
            plot.add_trace(
                Scatter::new(vec![line_lo, line_hi], vec![limit, limit])
                    .name(&name)
                    .x_axis(&xa)
                    .y_axis(&ya)
                    .mode(Mode::Lines)
                    .line(Line::new().color(color).width(1.5).dash(DashType::Dash))
                    .hover_text(name.clone())
                    .hover_info(HoverInfo::Text),
            );
        }
    }

    let colors = theme.colors();
    let gap = 0.05;
    let height = (1.0 - gap * (n_panels - 1) as f64) / n_panels as f64;
    let mut shapes = Vec::new();
    let dotted = if first_title.starts_with("Goodput") {
        "; dotted: request throughput"
    } else {
        ""
    };
    let mut layout = Layout::new()
        .title(Title::with_text(format!(
            "Capacity: {} and objectives by {}<br><sup>● passed ✕ failed probe; \
             line: mean per load, bars: its repeats' spread{dotted}</sup><br><sup>shaded: \
             the knee, from the capacity (★) to the first failing load</sup>",
            escape_html(&first_title.replace(" (req/s)", "").to_lowercase()),
            escape_html(&c.axis.label().to_lowercase()),
        )))
        .height(capacity_figure_height_px(c))
        .hover_mode(HoverMode::Closest)
        .legend(Legend::new().title(Title::with_text(escape_html(&series_title(&c.series_by)))))
        .margin(Margin::new().left(70).right(20).top(110).bottom(60))
        .paper_background_color(colors.background)
        .plot_background_color(colors.background)
        .font(crate::charts::plotly::common::Font::new().color(colors.text));
    let titles: Vec<&str> = std::iter::once(first_title)
        .chain(c.panels.iter().map(|p| p.title.as_str()))
        .collect();
    for (i, title) in titles.iter().enumerate() {
        let n = i + 1;
        let (xa, ya) = axis_ids(n);
        let top = 1.0 - i as f64 * (height + gap);
        let bottom = (top - height).max(0.0);
        let last = n == n_panels;
        let mut x = themed_axis(if last { c.axis.label() } else { "" }, theme)
            .domain(&[0.0, 1.0])
            .anchor(&ya)
            .show_tick_labels(last);
        if n > 1 {
            x = x.matches("x");
        }
        if log_x {
            x = x.type_(AxisType::Log);
        }
        let y = themed_axis(title, theme).domain(&[bottom, top]).anchor(&xa);
        layout = with_axes(layout, n, x, y);
        for (si, s) in c.sweeps.iter().enumerate() {
            let Some((cap, failed_at)) = s.knee() else {
                continue;
            };
            let color = PALETTE[si % PALETTE.len()];
            let y_ref = format!("{ya} domain");
            if let Some(f) = failed_at {
                shapes.push(
                    Shape::new()
                        .shape_type(ShapeType::Rect)
                        .name(format!("knee {}", escape_html(&s.name)))
                        .x_ref(&xa)
                        .y_ref(&y_ref)
                        .x0(cap)
                        .x1(f)
                        .y0(0.0)
                        .y1(1.0)
                        .fill_color(color)
                        .opacity(0.15)
                        .line(ShapeLine::new().width(0.0)),
                );
            }
            shapes.push(
                Shape::new()
                    .shape_type(ShapeType::Line)
                    .name(format!("capacity {}", escape_html(&s.name)))
                    .x_ref(&xa)
                    .y_ref(&y_ref)
                    .x0(cap)
                    .x1(cap)
                    .y0(0.0)
                    .y1(1.0)
                    .line(
                        ShapeLine::new()
                            .color(color)
                            .width(1.5)
                            .dash(DashType::Dash),
                    ),
            );
        }
    }
    plot.set_layout(layout.shapes(shapes));
    plot
}
