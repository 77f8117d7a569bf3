//! The run figure: the request timeline on top and the stage's time series in panels under it,
//! all on one time axis (zoom and pan move them together), with the steady-state window shaded
//! on every panel. Built as plotly.js JSON directly, because its many stacked y axes and
//! per-panel shapes are plain data.
//!
//! Its size is bounded whatever the request count: up to [`super::timeline::MAX_BARS`] bars
//! (a few `scattergl` traces with gaps between bars), else [`super::timeline::MAX_BINS`] bins.

use serde_json::{json, Map, Value};

use super::timeline::{Outcome, Panel, PhaseGrid, SeriesPanels, Span, Timeline};
use crate::charts::style::{escape_html, format_value, Theme, PALETTE};

/// Colour of the wait before a request is sent.
pub const WAITING_COLOR: &str = "#9aa0a6";
/// Colour of a successful request waiting for its first token.
pub const PREFILL_COLOR: &str = "#8ab4f8";
/// Colour of a successful request decoding.
pub const DECODING_COLOR: &str = "#1a73e8";
/// Colours of failed requests, one per failure kind in name order (repeating).
pub const FAILURE_COLORS: [&str; 4] = ["#d93025", "#e52592", "#f9ab00", "#9334e6"];
/// Fill of the steady-state window.
pub const WINDOW_FILL: &str = "rgba(128, 128, 128, 0.18)";

/// Trace names of the three phases.
pub const PHASES: [&str; 3] = ["waiting to be sent", "waiting for first token", "decoding"];

/// Lines with more points than this are drawn with WebGL.
const GL_FROM_POINTS: usize = 1000;

/// Title of the time axis.
const TIME_AXIS: &str = "seconds from the stage's start";

/// The name plotly gives the `k`-th y axis (0-based) in layout keys (`yaxis`, `yaxis2`).
fn axis_key(k: usize) -> String {
    if k == 0 {
        "yaxis".into()
    } else {
        format!("yaxis{}", k + 1)
    }
}

/// The name a trace uses to refer to the `k`-th y axis (`y`, `y2`).
fn axis_ref(k: usize) -> String {
    if k == 0 {
        "y".into()
    } else {
        format!("y{}", k + 1)
    }
}

fn trace_type(points: usize) -> &'static str {
    if points > GL_FROM_POINTS {
        "scattergl"
    } else {
        "scatter"
    }
}

/// A number as JSON, null for NaN and infinities (plotly leaves a gap).
fn num(v: f64) -> Value {
    serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
}

/// Horizontal segments `[a, b]` at height `y`, as one line trace's x and y with gaps.
#[derive(Default)]
struct Segments {
    x: Vec<Value>,
    y: Vec<Value>,
    text: Vec<Value>,
}

impl Segments {
    fn push(&mut self, a: f64, b: f64, y: usize, text: &str) {
        for x in [a, b] {
            self.x.push(num(x));
            self.y.push(json!(y));
            self.text.push(json!(text));
        }
        self.x.push(Value::Null);
        self.y.push(Value::Null);
        self.text.push(Value::Null);
    }

    fn trace(self, name: &str, color: &str, width: f64, group: &str) -> Value {
        json!({
            "type": trace_type(self.x.len()),
            "mode": "lines",
            "name": name,
            "legendgroup": group,
            "x": self.x,
            "y": self.y,
            "text": self.text,
            "hoverinfo": "text",
            "line": {"color": color, "width": width},
            "yaxis": "y",
        })
    }
}

fn span_text(s: &Span) -> String {
    let ms = |a: f64, b: f64| format!("{} ms", format_value((b - a) * 1e3));
    let mut t = format!(
        "request {}: {}<br>sent at {} s",
        s.index,
        escape_html(s.outcome.name()),
        format_value(s.sent_s)
    );
    if let Some(i) = s.intended_s {
        t.push_str(&format!(", {} after its intended time", ms(i, s.sent_s)));
    }
    if let Some(f) = s.first_token_s {
        t.push_str(&format!("<br>TTFT {}", ms(s.sent_s, f)));
    }
    if let Some(e) = s.end_s {
        t.push_str(&format!("<br>E2EL {}", ms(s.sent_s, e)));
    }
    t
}

/// The bar traces: the wait to be sent, then for successful requests the wait for the first
/// token and the decoding, and for failed ones their known span in the failure's colour with
/// a cross where it ended. Bars are stacked by send order (row 0 on top).
fn bar_traces(spans: &[Span]) -> Vec<Value> {
    // Thinner bars the more there are, so neighbours do not merge.
    let width = (360.0 / spans.len().max(1) as f64).clamp(1.0, 8.0);
    let mut waiting = Segments::default();
    let mut prefill = Segments::default();
    let mut decoding = Segments::default();
    let mut failed: std::collections::BTreeMap<&str, (Segments, Vec<f64>, Vec<usize>)> =
        Default::default();
    for (row, s) in spans.iter().enumerate() {
        let text = span_text(s);
        if let Some(i) = s.intended_s.filter(|i| *i < s.sent_s) {
            waiting.push(i, s.sent_s, row, &text);
        }
        match &s.outcome {
            Outcome::Ok => {
                let first = s.first_token_s.or(s.end_s).unwrap_or(s.sent_s);
                prefill.push(s.sent_s, first, row, &text);
                if let Some(e) = s.end_s {
                    decoding.push(first, e, row, &text);
                }
            }
            Outcome::Failed(kind) => {
                let f = failed.entry(kind.as_str()).or_default();
                f.0.push(s.sent_s, s.last_s(), row, &text);
                f.1.push(s.last_s());
                f.2.push(row);
            }
        }
    }
    let mut out = vec![
        waiting.trace(PHASES[0], WAITING_COLOR, width, "phase"),
        prefill.trace(PHASES[1], PREFILL_COLOR, width, "phase"),
        decoding.trace(PHASES[2], DECODING_COLOR, width, "phase"),
    ];
    for (k, (kind, (segments, ends, rows))) in failed.into_iter().enumerate() {
        let color = FAILURE_COLORS[k % FAILURE_COLORS.len()];
        let name = format!("failed: {}", escape_html(kind));
        out.push(segments.trace(&name, color, width, &name));
        out.push(json!({
            "type": trace_type(ends.len()),
            "mode": "markers",
            "name": name,
            "legendgroup": name,
            "showlegend": false,
            "hoverinfo": "skip",
            "x": ends,
            "y": rows,
            "marker": {"color": color, "symbol": "x", "size": (width * 1.5).clamp(5.0, 10.0)},
            "yaxis": "y",
        }));
    }
    out
}

/// The binned timeline: mean requests in each phase per bin, stacked.
fn grid_traces(g: &PhaseGrid) -> Vec<Value> {
    let x: Vec<Value> = g.centers_s().into_iter().map(num).collect();
    [
        (PHASES[0], WAITING_COLOR, &g.waiting),
        (PHASES[1], PREFILL_COLOR, &g.prefill),
        (PHASES[2], DECODING_COLOR, &g.decoding),
    ]
    .into_iter()
    .map(|(name, color, values)| {
        json!({
            "type": "scatter",
            "mode": "lines",
            "name": name,
            "legendgroup": "phase",
            "stackgroup": "phases",
            "x": x,
            "y": values.iter().map(|v| num(*v)).collect::<Vec<_>>(),
            "line": {"color": color, "width": 0.5},
            "fillcolor": color,
            "hovertemplate": format!("{name}: %{{y:.1f}} requests<extra></extra>"),
            "yaxis": "y",
        })
    })
    .collect()
}

/// A binned timeline's failures per second as a panel of its own, when any failed.
fn grid_failure_panel(g: &PhaseGrid) -> Option<(Vec<f64>, Panel)> {
    g.failed_per_s.iter().any(|v| *v > 0.0).then(|| {
        (
            g.centers_s(),
            Panel {
                title: "failed requests/s".into(),
                lines: vec![super::timeline::Line {
                    name: "failed/s".into(),
                    values: g.failed_per_s.clone(),
                }],
            },
        )
    })
}

/// The run figure of one stage (see the module doc). `title` names the stage; `window_s` is
/// its steady-state window, shaded on every panel.
pub fn run_figure(
    title: &str,
    timeline: Option<&Timeline>,
    series: Option<&SeriesPanels>,
    window_s: Option<(f64, f64)>,
    theme: Theme,
) -> Value {
    let colors = theme.colors();
    let mut data: Vec<Value> = Vec::new();
    // (y axis title, weight in height) of each panel, top to bottom.
    let mut rows: Vec<(String, f64, bool)> = Vec::new();
    let mut extra_panels: Vec<(Vec<f64>, Panel)> = Vec::new();
    match timeline {
        Some(Timeline::Bars(spans)) if !spans.is_empty() => {
            data.extend(bar_traces(spans));
            rows.push((format!("{} requests, by send time", spans.len()), 3.0, true));
        }
        Some(Timeline::Binned(g)) => {
            data.extend(grid_traces(g));
            rows.push((
                format!(
                    "requests (mean of {} per {} s bin)",
                    g.requests,
                    format_value(g.bin_s)
                ),
                3.0,
                false,
            ));
            extra_panels.extend(grid_failure_panel(g));
        }
        _ => {}
    }
    let mut panels: Vec<(&[f64], &Panel)> = Vec::new();
    if let Some(s) = series {
        panels.extend(s.panels.iter().map(|p| (s.x_s.as_slice(), p)));
    }
    panels.extend(extra_panels.iter().map(|(t, p)| (t.as_slice(), p)));
    let mut color = 0usize;
    for (t, p) in &panels {
        let k = rows.len();
        for l in &p.lines {
            data.push(json!({
                "type": trace_type(t.len()),
                "mode": if has_isolated_points(&l.values) { "lines+markers" } else { "lines" },
                "marker": {"size": 4},
                "name": escape_html(&l.name),
                "legendgroup": format!("panel{k}"),
                "showlegend": p.lines.len() > 1,
                "x": t.iter().map(|v| num(*v)).collect::<Vec<_>>(),
                "y": l.values.iter().map(|v| num(*v)).collect::<Vec<_>>(),
                "line": {"color": PALETTE[color % PALETTE.len()], "width": 1.5},
                "hovertemplate": format!("{}: %{{y:.4g}}<extra>{}</extra>", escape_html(&l.name), escape_html(&p.title)),
                "yaxis": axis_ref(k),
            }));
            color += 1;
        }
        rows.push((p.title.clone(), 1.0, false));
    }
    let mut layout = Map::new();
    let grid = colors.grid;
    let gap = 0.04;
    let total: f64 = rows.iter().map(|r| r.1).sum::<f64>().max(1.0);
    let usable = 1.0 - gap * rows.len().saturating_sub(1) as f64;
    let mut top = 1.0;
    let mut shapes = Vec::new();
    for (k, (axis_title, weight, reversed)) in rows.iter().enumerate() {
        let height = usable * weight / total;
        let bottom = (top - height).max(0.0);
        let mut axis = json!({
            "domain": [bottom, top],
            "title": {"text": escape_html(axis_title), "font": {"size": 11}},
            "gridcolor": grid, "linecolor": grid, "zerolinecolor": grid,
            "anchor": "x",
        });
        if *reversed {
            axis["autorange"] = json!("reversed");
            axis["showticklabels"] = json!(false);
        }
        layout.insert(axis_key(k), axis);
        if let Some((a, b)) = window_s {
            shapes.push(json!({
                "type": "rect", "xref": "x", "yref": format!("{} domain", axis_ref(k)),
                "x0": a, "x1": b, "y0": 0, "y1": 1,
                "fillcolor": WINDOW_FILL, "line": {"width": 0}, "layer": "below",
                "name": "steady-state window",
            }));
        }
        top = bottom - gap;
    }
    let bottom_axis = axis_ref(rows.len().saturating_sub(1));
    layout.insert(
        "xaxis".into(),
        json!({
            "title": {"text": TIME_AXIS},
            "anchor": bottom_axis,
            "gridcolor": grid, "linecolor": grid, "zerolinecolor": grid,
        }),
    );
    let mut annotations = Vec::new();
    if let Some((a, b)) = window_s {
        annotations.push(json!({
            "xref": "x", "yref": "paper", "x": (a + b) / 2.0, "y": 1.0,
            "yanchor": "bottom", "showarrow": false,
            "text": format!("steady state {}–{} s", format_value(a), format_value(b)),
            "font": {"size": 11},
        }));
    }
    let height = 140.0 + rows.iter().map(|r| r.1 * 140.0).sum::<f64>();
    layout.insert("title".into(), json!({"text": escape_html(title)}));
    layout.insert("shapes".into(), Value::Array(shapes));
    layout.insert("annotations".into(), Value::Array(annotations));
    layout.insert("height".into(), json!(height.round()));
    layout.insert("hovermode".into(), json!("closest"));
    layout.insert("showlegend".into(), json!(true));
    layout.insert(
        "legend".into(),
        json!({"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0, "font": {"size": 11}}),
    );
    layout.insert("margin".into(), json!({"l": 80, "r": 20, "t": 90, "b": 50}));
    layout.insert("paper_bgcolor".into(), json!(colors.background));
    layout.insert("plot_bgcolor".into(), json!(colors.background));
    layout.insert("font".into(), json!({"color": colors.text}));
    json!({"data": data, "layout": Value::Object(layout)})
}

/// Whether a series has a value with no value on either side (a sparse quantile: one first
/// token every few seconds): a line alone draws nothing there, so such series get markers.
fn has_isolated_points(values: &[f64]) -> bool {
    let ok = |i: Option<usize>| i.and_then(|i| values.get(i)).is_some_and(|v| v.is_finite());
    (0..values.len()).any(|i| ok(Some(i)) && !ok(i.checked_sub(1)) && !ok(Some(i + 1)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::timeline::{series_panels, timeline};
    use crate::model::{Record, RequestDetail};

    fn req(sent: f64, kind: Option<&str>) -> RequestDetail {
        RequestDetail {
            intended_s: Some(sent - 0.01),
            sent_s: Some(sent),
            ttft_ms: Some(20.0),
            e2el_ms: kind.is_none().then_some(60.0),
            error: kind.map(|k| format!("{k}: boom")),
            error_kind: kind.map(str::to_string),
            ..RequestDetail::default()
        }
    }

    fn record(n: usize, failing_every: usize) -> Record {
        let mut r = Record {
            requests: (0..n)
                .map(|i| {
                    req(
                        i as f64 * 1e-2,
                        (i % failing_every == 0).then_some("http_503"),
                    )
                })
                .collect(),
            ..Record::default()
        };
        let secs = (n as f64 * 1e-2).ceil() as usize + 1;
        r.series
            .insert("t_s".into(), (0..secs).map(|s| s as f64).collect());
        r.series.insert("sent".into(), vec![100.0; secs]);
        r.series
            .insert("server.kv_cache_usage".into(), vec![0.5; secs]);
        r
    }

    fn names(fig: &Value) -> Vec<String> {
        fig["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    }

    #[test]
    fn bars_are_coloured_by_outcome_and_every_panel_has_the_window() {
        let r = record(50, 7);
        let fig = run_figure(
            "stage 1",
            Some(&timeline(&r.requests)),
            series_panels(&r).as_ref(),
            Some((0.1, 0.4)),
            Theme::Light,
        );
        let n = names(&fig);
        assert!(n.iter().any(|n| n == "decoding"), "{n:?}");
        assert!(n.iter().any(|n| n == "failed: http_503"), "{n:?}");
        let failed = &fig["data"][3];
        assert_eq!(failed["line"]["color"], FAILURE_COLORS[0]);
        // 8 failures (0, 7, …, 49), 3 points each (start, end, gap).
        assert_eq!(failed["x"].as_array().unwrap().len(), 8 * 3);
        // Timeline + sent/s + telemetry panels, each shaded.
        let shapes = fig["layout"]["shapes"].as_array().unwrap();
        assert_eq!(shapes.len(), 3);
        assert_eq!(shapes[2]["yref"], "y3 domain");
        assert_eq!(fig["layout"]["yaxis"]["autorange"], "reversed");
        assert_eq!(fig["layout"]["xaxis"]["anchor"], "y3");
        assert!(fig["layout"]["yaxis3"]["title"]["text"]
            .as_str()
            .unwrap()
            .contains("server.kv_cache_usage"));
    }

    #[test]
    fn a_hundred_thousand_requests_give_a_bounded_figure() {
        let r = record(100_000, 10);
        let fig = run_figure(
            "big",
            Some(&timeline(&r.requests)),
            series_panels(&r).as_ref(),
            None,
            Theme::Dark,
        );
        let points: usize = fig["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["x"].as_array().map_or(0, Vec::len))
            .sum();
        // Three phases and the failure rate at 400 bins, plus 2 series of ~1,000 s.
        assert!(points < 10_000, "{points} points");
        assert!(names(&fig).contains(&"failed/s".to_string()));
        assert_eq!(fig["data"][0]["stackgroup"], "phases");
        assert!(fig["layout"]["shapes"].as_array().unwrap().is_empty());
    }

    #[test]
    fn hostile_failure_kinds_are_escaped() {
        let mut r = Record::default();
        r.requests.push(req(0.0, Some("<img src=x>")));
        let fig = run_figure("t", Some(&timeline(&r.requests)), None, None, Theme::Light);
        assert!(names(&fig).contains(&"failed: &lt;img src=x&gt;".to_string()));
    }

    #[test]
    fn sparse_series_get_markers_dense_ones_lines_only() {
        let nan = f64::NAN;
        assert!(has_isolated_points(&[nan, 30.0, nan, nan, 31.0]));
        assert!(has_isolated_points(&[30.0]));
        assert!(!has_isolated_points(&[30.0, 31.0, nan, 32.0, 33.0]));
        assert!(!has_isolated_points(&[nan, nan]));
        assert!(!has_isolated_points(&[]));
    }
}
