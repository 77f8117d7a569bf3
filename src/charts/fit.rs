//! Layout that survives real data: every figure is fitted just before it is drawn, so tick
//! labels, axis titles and legends keep out of each other's way at any page width.
//!
//! Works on the plotly JSON of any chart (the main chart, trade-off, improvement,
//! distributions), so the views need not each repeat it:
//! - every axis lets plotly grow the margin to its tick labels and title (`automargin`), so a
//!   rotated label never runs into the axis title or off the edge; so no label can run past the
//!   chart either, and every axis says so (`ticklabeloverflow: "allow"`): plotly's default
//!   check for such labels measures every tick label once for each label it places (a square
//!   of text measurements per axis, redone on every redraw, about a fifth of a filter click's
//!   redraw of the four-panel chart);
//! - x tick labels that cannot sit side by side are turned to a fixed angle
//!   ([`X_TICK_ANGLE_DEG`]) instead of plotly's guess;
//! - long legend entries (file names) are shortened in the middle, with the full name kept in
//!   the hover text, and a legend that would take a large share of the width moves below the
//!   plot in rows ([`LegendPlace::Below`]), with the bottom margin it will need given in
//!   advance when the chart's width is known ([`legend_below_margin`]): plotly.js otherwise
//!   grows the margin after drawing and draws the whole figure again.

use std::collections::BTreeSet;

use serde_json::{json, Map, Value};

/// Legend entries longer than this many characters are shortened in the middle.
pub const MAX_LEGEND_CHARS: usize = 40;

/// Longest legend entry (characters) still drawn in a column right of the plot; a longer one,
/// or more than [`MAX_SIDE_LEGEND_ENTRIES`] entries, puts the legend below the plot.
pub const MAX_SIDE_LEGEND_CHARS: usize = 18;

/// Most legend entries kept in a column right of the plot.
pub const MAX_SIDE_LEGEND_ENTRIES: usize = 12;

/// Angle of x tick labels that do not fit side by side (plotly counts clockwise; negative
/// reads bottom-left to top-right and ends at its tick).
pub const X_TICK_ANGLE_DEG: f64 = -40.0;

/// Width in pixels the x tick labels may take side by side before they are turned: the plot
/// area of the narrowest page the explorer is laid out for (1,000 px wide, minus the filter
/// column, the margins and a side legend).
pub const X_LABELS_BUDGET_PX: f64 = 520.0;

/// Average width of one tick-label character at plotly's default 12 px font.
const CHAR_PX: f64 = 7.0;

/// Space between two tick labels.
const LABEL_GAP_PX: f64 = 8.0;

/// Average width of one legend character at plotly's default 12 px font (a little generous).
const LEGEND_CHAR_PX: f64 = 6.0;

/// What a legend entry takes besides its text: the symbol and the gap to the next entry.
const LEGEND_SYMBOL_PX: f64 = 46.0;

/// Height of one row of a legend below the plot.
const LEGEND_ROW_PX: f64 = 30.0;

/// Room under the plot for unturned x tick labels and the x axis title, above the legend.
const X_AXIS_ROOM_PX: f64 = 54.0;

/// Where the legend of a fitted figure sits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LegendPlace {
    /// Plotly's default: a column right of the plot.
    Side,
    /// Horizontal rows under the plot and its x axis title, so the plot keeps the full width.
    Below,
}

/// Shortens `name` to at most `max` characters by cutting its middle (`…` stands for what was
/// cut), keeping the start and the end, where file names differ (`…-qps16.json`). Names
/// with HTML entities are left whole, so an entity is never cut in half.
pub fn shorten_middle(name: &str, max: usize) -> String {
    let n = name.chars().count();
    if n <= max || max < 5 || name.contains('&') {
        return name.to_string();
    }
    let keep = max - 1;
    // The end gets the odd character: that is where file names of one sweep differ.
    let head = keep / 2;
    let tail = keep - head;
    let start: String = name.chars().take(head).collect();
    let end: String = name.chars().skip(n - tail).collect();
    format!("{start}…{end}")
}

/// Where the legend goes for entries with these (displayed) names.
pub fn legend_place(names: &[&str]) -> LegendPlace {
    let longest = names.iter().map(|n| n.chars().count()).max().unwrap_or(0);
    if longest > MAX_SIDE_LEGEND_CHARS || names.len() > MAX_SIDE_LEGEND_ENTRIES {
        LegendPlace::Below
    } else {
        LegendPlace::Side
    }
}

/// Whether x tick labels this long need turning to fit [`X_LABELS_BUDGET_PX`].
pub fn x_labels_need_angle(labels: &[&str]) -> bool {
    let width: f64 = labels
        .iter()
        .map(|l| l.chars().count() as f64 * CHAR_PX + LABEL_GAP_PX)
        .sum();
    width > X_LABELS_BUDGET_PX
}

/// The bottom margin a legend below the plot needs in a chart `width_px` wide: its `names`
/// (and `title`) placed left to right in rows as plotly.js places them, from estimated text
/// widths, with the x axis's tick labels and title above. Generous rather than short: too
/// little and plotly.js grows the margin and draws the figure a second time (half of a
/// 16-series trade-off chart's drawing); too much leaves a few pixels empty.
pub fn legend_below_margin(names: &[&str], title: &str, width_px: f64) -> f64 {
    let text = |s: &str| s.chars().count() as f64 * LEGEND_CHAR_PX;
    let title_px = if title.is_empty() {
        0.0
    } else {
        text(title) + 30.0
    };
    // The legend starts 1 % in from the left (`x: 0.01`); rows start right of the title.
    let room = (width_px * 0.99 - title_px).max(1.0);
    let mut rows = 1;
    let mut used = 0.0;
    for name in names {
        let entry = text(name) + LEGEND_SYMBOL_PX;
        if used > 0.0 && used + entry > room {
            rows += 1;
            used = 0.0;
        }
        used += entry;
    }
    X_AXIS_ROOM_PX + rows as f64 * LEGEND_ROW_PX
}

/// Fits the plotly figure `doc` (`{"data", "layout"}`; see the module docs) for a chart
/// `width_px` wide when known; anything else is left as it is. The page's figures are fitted
/// as values ([`super::plotly::Plot::to_fitted_json`]), never read back from JSON text.
pub fn fit_figure_value(doc: &mut Value, width_px: Option<f64>) {
    let Some(obj) = doc.as_object_mut() else {
        return;
    };
    let x_labels = category_x_labels(obj.get("data"));
    let names = fit_legend_names(obj.get_mut("data"));
    let shown = legend_entries(obj.get("data"));
    let layout = obj
        .entry("layout")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(layout) = layout.as_object_mut() else {
        return;
    };
    for axis in ["xaxis", "yaxis"] {
        layout
            .entry(axis)
            .or_insert_with(|| Value::Object(Map::new()));
    }
    // Every panel's axes (`xaxis2`, `yaxis3`...): small multiples have one pair each.
    let panel_axes: Vec<String> = layout.keys().filter(|k| is_axis_key(k)).cloned().collect();
    let label_refs: Vec<&str> = x_labels.iter().map(String::as_str).collect();
    let turn = x_labels_need_angle(&label_refs);
    for axis in &panel_axes {
        if let Some(a) = layout.get_mut(axis).and_then(Value::as_object_mut) {
            a.entry("automargin").or_insert(Value::Bool(true));
            a.entry("ticklabeloverflow").or_insert(json!("allow"));
            if turn && axis.starts_with('x') {
                a.insert("tickangle".into(), json!(X_TICK_ANGLE_DEG));
            }
        }
    }
    let name_refs: Vec<&str> = names.iter().map(String::as_str).collect();
    if legend_place(&name_refs) == LegendPlace::Below {
        let legend = layout
            .entry("legend")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(legend) = legend.as_object_mut() {
            // Anchored to the bottom of the whole figure: plotly then keeps that strip free
            // of the plot, its tick labels and its x axis title.
            for (k, v) in [
                ("orientation", json!("h")),
                ("xref", json!("container")),
                ("x", json!(0.01)),
                ("xanchor", json!("left")),
                ("yref", json!("container")),
                ("y", json!(0.0)),
                ("yanchor", json!("bottom")),
            ] {
                legend.insert(k.into(), v);
            }
        }
        let title = layout
            .get("legend")
            .and_then(|l| l.pointer("/title/text"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let unturned = !turn;
        if let (Some(width), true) = (width_px, unturned) {
            let shown: Vec<&str> = shown.iter().map(String::as_str).collect();
            let need = legend_below_margin(&shown, &title, width);
            let margin = layout
                .entry("margin")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Some(margin) = margin.as_object_mut() {
                let given = margin.get("b").and_then(Value::as_f64).unwrap_or(0.0);
                margin.insert("b".into(), json!(given.max(need).ceil()));
            }
        }
    }
}

/// The names plotly.js lists in the legend: traces with a name, not hidden from it, heatmaps
/// only when asked (`showlegend: true`; plotly.js leaves them out otherwise).
fn legend_entries(data: Option<&Value>) -> Vec<String> {
    data.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|t| match t.get("showlegend") {
            Some(Value::Bool(b)) => *b,
            _ => t.get("type").and_then(Value::as_str) != Some("heatmap"),
        })
        .filter_map(|t| t.get("name").and_then(Value::as_str).map(str::to_string))
        .collect()
}

/// `xaxis`, `yaxis`, `xaxis2`, `yaxis12`...: plotly's axis keys.
fn is_axis_key(k: &str) -> bool {
    ["xaxis", "yaxis"].iter().any(|p| {
        k.strip_prefix(p)
            .is_some_and(|rest| rest.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// The distinct x labels of category traces (bars, or lines over text x values), in order.
fn category_x_labels(data: Option<&Value>) -> Vec<String> {
    let mut seen = BTreeSet::new();
    let mut labels = Vec::new();
    for trace in data.and_then(Value::as_array).into_iter().flatten() {
        for x in trace
            .get("x")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(s) = x.as_str() {
                if seen.insert(s.to_string()) {
                    labels.push(s.to_string());
                }
            }
        }
    }
    labels
}

/// Shortens long legend entries (when that keeps them distinct) and returns the names the
/// legend shows. A shortened trace keeps its full name in its hover text.
fn fit_legend_names(data: Option<&mut Value>) -> Vec<String> {
    let Some(traces) = data.and_then(Value::as_array_mut) else {
        return Vec::new();
    };
    let in_legend = |t: &Value| {
        t.get("showlegend") != Some(&Value::Bool(false))
            && t.get("name").is_some_and(Value::is_string)
    };
    let full: Vec<Option<String>> = traces
        .iter()
        .map(|t| {
            in_legend(t)
                .then(|| t.get("name").and_then(Value::as_str).map(str::to_string))
                .flatten()
        })
        .collect();
    let short: Vec<Option<String>> = full
        .iter()
        .map(|n| n.as_deref().map(|n| shorten_middle(n, MAX_LEGEND_CHARS)))
        .collect();
    let distinct_full: BTreeSet<&String> = crate::model::order::set_of(full.iter().flatten());
    let distinct_short: BTreeSet<&String> = crate::model::order::set_of(short.iter().flatten());
    let names = if distinct_short.len() == distinct_full.len() {
        for (t, (f, s)) in traces.iter_mut().zip(full.iter().zip(&short)) {
            let (Some(f), Some(s), Some(t)) = (f, s, t.as_object_mut()) else {
                continue;
            };
            if f != s {
                t.insert("name".into(), Value::String(s.clone()));
                // Traces drawn with their own hover text already name their series there.
                if !t.contains_key("hovertext") && !t.contains_key("hovertemplate") {
                    t.insert(
                        "hovertemplate".into(),
                        Value::String(format!("<b>{f}</b><br>%{{x}}, %{{y}}<extra></extra>")),
                    );
                }
            }
        }
        short
    } else {
        full
    };
    names.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`fit_figure_value`] of the figure JSON `figure`; text that is not JSON unchanged.
    fn fit_figure(figure: &str, width_px: Option<f64>) -> String {
        let Ok(mut doc) = serde_json::from_str::<Value>(figure) else {
            return figure.to_string();
        };
        fit_figure_value(&mut doc, width_px);
        serde_json::to_string(&doc).unwrap_or_else(|_| figure.to_string())
    }

    #[test]
    fn names_are_shortened_in_the_middle() {
        assert_eq!(shorten_middle("vllm", 10), "vllm");
        let long = "benchmark-results-llama-3.1-8b-instruct-tp1-qps16.json";
        let s = shorten_middle(long, 20);
        assert_eq!(s.chars().count(), 20);
        assert_eq!(s, "benchmark…qps16.json");
        assert_eq!(
            shorten_middle("a &amp; b and a very long tail", 8),
            "a &amp; b and a very long tail"
        );
    }

    fn figure(names: &[&str], xs: &[&str]) -> Value {
        json!({
            "data": names.iter().map(|n| json!({
                "type": "bar", "name": n, "x": xs, "y": xs.iter().map(|_| 1.0).collect::<Vec<_>>(),
                "hovertext": xs.iter().map(|_| format!("<b>{n}</b>")).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "layout": {"xaxis": {"title": {"text": "Request rate"}}, "margin": {"b": 60}},
        })
    }

    #[test]
    fn a_plot_fitted_in_place_is_the_figure_fitted_from_its_json() {
        // The page fits a `Plot` without writing it out and reading it back; the figure must
        // be the one `fit_figure` makes of the written figure, at every width and legend place.
        let a = "sglang-bench-serving-llama-3.1-8b-instruct-h100-tp1-2024-11-01.jsonl";
        for names in [&["sgl", "vllm"][..], &[a, "b"][..]] {
            let plot = super::super::plotly::Plot::of_figure(figure(names, &["1", "10", "inf"]));
            for width in [None, Some(390.0), Some(1200.0)] {
                let direct: Value =
                    serde_json::from_str(&plot.to_fitted_json(width)).expect("fitted JSON");
                let mut written: Value =
                    serde_json::from_str(&fit_figure(&plot.to_json(), width)).expect("JSON");
                // `to_json` adds plotly's empty config, which the page does not pass on.
                written.as_object_mut().map(|o| o.remove("config"));
                assert_eq!(direct, written, "{names:?} at {width:?}");
            }
        }
    }

    #[test]
    fn short_names_and_labels_keep_plotly_defaults_with_automargin() {
        let mut f = figure(&["sgl", "vllm"], &["1", "10", "inf"]);
        fit_figure_value(&mut f, None);
        assert_eq!(f["layout"]["xaxis"]["automargin"], true);
        assert_eq!(f["layout"]["yaxis"]["automargin"], true);
        assert_eq!(f["layout"]["xaxis"]["ticklabeloverflow"], "allow");
        assert_eq!(f["layout"]["yaxis"]["ticklabeloverflow"], "allow");
        assert!(f["layout"]["xaxis"].get("tickangle").is_none());
        assert!(f["layout"].get("legend").is_none());
        assert_eq!(f["layout"]["xaxis"]["title"]["text"], "Request rate");
        assert_eq!(f["data"][1]["name"], "vllm");
    }

    #[test]
    fn long_file_names_go_below_shortened_with_the_full_name_in_hover() {
        let a = "sglang-bench-serving-llama-3.1-8b-instruct-h100-tp1-2024-11-01.jsonl";
        let b = "sglang-bench-serving-llama-3.1-8b-instruct-h100-tp1-2024-11-02.jsonl";
        let mut f = figure(&[a, b], &["1", "2"]);
        fit_figure_value(&mut f, None);
        let legend = &f["layout"]["legend"];
        assert_eq!(legend["orientation"], "h");
        assert_eq!(legend["yref"], "container");
        assert_eq!(legend["yanchor"], "bottom");
        let shown = f["data"][0]["name"].as_str().unwrap();
        assert_eq!(shown.chars().count(), MAX_LEGEND_CHARS);
        assert!(shown.ends_with("11-01.jsonl"), "{shown}");
        assert_ne!(f["data"][0]["name"], f["data"][1]["name"]);
        // The hover text the chart wrote still has the full name.
        assert!(f["data"][0]["hovertext"][0].as_str().unwrap().contains(a));

        // Traces without hover text get one naming the full series.
        let mut g = json!({"data": [{"type": "scatter", "name": a, "x": [1.0], "y": [2.0]}]});
        fit_figure_value(&mut g, None);
        assert!(g["data"][0]["hovertemplate"].as_str().unwrap().contains(a));
    }

    #[test]
    fn names_that_would_collide_when_shortened_stay_whole() {
        let a = format!("{}-a-{}", "x".repeat(30), "y".repeat(30));
        let b = format!("{}-b-{}", "x".repeat(30), "y".repeat(30));
        let mut f = figure(&[&a, &b], &["1"]);
        fit_figure_value(&mut f, None);
        assert_eq!(f["data"][0]["name"], a.as_str());
        assert_eq!(f["layout"]["legend"]["orientation"], "h");
    }

    #[test]
    fn many_short_entries_also_go_below() {
        let names: Vec<String> = (0..20).map(|i| format!("m{i}")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        assert_eq!(legend_place(&refs), LegendPlace::Below);
        assert_eq!(legend_place(&refs[..3]), LegendPlace::Side);
    }

    #[test]
    fn a_legend_below_gets_the_bottom_margin_it_will_need() {
        // The 16-series trade-off chart: rows of five entries in a 1,054 px chart (as drawn),
        // four rows, the heatmaps (not in plotly's legend) not counted.
        let engines = ["sglang", "tgi", "trtllm", "vllm"];
        let gpus = ["A100", "H100", "L40S", "MI300X"];
        let mut data = Vec::new();
        for e in engines {
            for g in gpus {
                data.push(json!({"type": "heatmap", "name": format!("{e} · {g}")}));
                data.push(json!({"type": "scatter", "name": format!("{e} · {g} frontier")}));
            }
        }
        data.push(json!({"type": "scatter", "name": "frontier of all series"}));
        let mut f = json!({
            "data": data,
            "layout": {"legend": {"title": {"text": "Engine · GPU"}}, "margin": {"b": 60}},
        });
        fit_figure_value(&mut f, Some(1054.0));
        // plotly.js itself grew it to 165.4 px when drawing this figure.
        assert_eq!(f["layout"]["margin"]["b"], 174.0);
        assert_eq!(f["layout"]["legend"]["title"]["text"], "Engine · GPU");
        // Narrower, more rows; without a width, the figure's own margin.
        let narrow =
            legend_below_margin(&["a long series name frontier"; 17], "Engine · GPU", 390.0);
        assert_eq!(narrow, X_AXIS_ROOM_PX + 17.0 * LEGEND_ROW_PX);
        let mut g = figure(&["a"; 20], &["1"]);
        fit_figure_value(&mut g, None);
        assert_eq!(g["layout"]["margin"]["b"], 60);
        // A margin already larger is kept.
        assert_eq!(
            legend_below_margin(&[], "", 1000.0),
            X_AXIS_ROOM_PX + LEGEND_ROW_PX
        );
        let mut h = figure(&["a"; 20], &["1"]);
        h["layout"]["margin"]["b"] = json!(400);
        fit_figure_value(&mut h, Some(1000.0));
        assert_eq!(h["layout"]["margin"]["b"], 400.0);
    }

    #[test]
    fn crowded_x_labels_are_turned() {
        let models: Vec<String> = (0..20).map(|i| format!("Llama-2-{i}b-chat-hf")).collect();
        let refs: Vec<&str> = models.iter().map(String::as_str).collect();
        let mut f = figure(&["A100"], &refs);
        fit_figure_value(&mut f, None);
        assert_eq!(f["layout"]["xaxis"]["tickangle"], X_TICK_ANGLE_DEG);
        assert_eq!(f["layout"]["xaxis"]["automargin"], true);
        // Numeric x (lines over a numeric axis) is left to plotly's own tick spacing.
        let mut g =
            json!({"data": [{"type": "scatter", "name": "a", "x": [1.0, 2.0], "y": [1.0, 2.0]}]});
        fit_figure_value(&mut g, None);
        assert!(g["layout"]["xaxis"].get("tickangle").is_none());
    }

    #[test]
    fn text_that_is_not_a_figure_passes_unchanged() {
        assert_eq!(fit_figure("not json", None), "not json");
        assert_eq!(fit_figure("[1,2]", None), "[1,2]");
    }

    #[test]
    fn every_panel_axis_is_fitted() {
        let names: Vec<String> = (0..20)
            .map(|i| format!("Codellama-{i}b-instruct-hf"))
            .collect();
        let xs: Vec<&str> = names.iter().map(String::as_str).collect();
        let mut f = figure(&["A100"], &xs);
        f["layout"]["xaxis2"] = json!({"anchor": "y2"});
        f["layout"]["yaxis2"] = json!({"anchor": "x2"});
        fit_figure_value(&mut f, None);
        for axis in ["xaxis", "xaxis2"] {
            assert_eq!(f["layout"][axis]["automargin"], true, "{axis}");
            assert_eq!(f["layout"][axis]["ticklabeloverflow"], "allow", "{axis}");
            assert_eq!(f["layout"][axis]["tickangle"], X_TICK_ANGLE_DEG, "{axis}");
        }
        assert_eq!(f["layout"]["yaxis2"]["automargin"], true);
        assert!(f["layout"]["yaxis2"].get("tickangle").is_none());
        assert!(!is_axis_key("xaxis_title") && is_axis_key("yaxis12"));
    }
}
