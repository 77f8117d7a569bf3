//! The trends figure: one line per configuration of a metric over date, the change points
//! marked (worse, better, of unknown direction) with their size written beside the worse ones.

use plotly::common::{HoverInfo, Line, Marker, MarkerSymbol, Mode};
use plotly::layout::Annotation;
use plotly::{Plot, Scatter};

use super::regression::Verdict;
use super::trend::{iso_of_epoch_s, ChangePoint, TrendSeries};
use crate::charts::style::{base_layout, escape_html, format_value, Theme, PALETTE};
use crate::model::MetricKey;

/// Marker colour of a worse change.
pub const WORSE_COLOR: &str = "#d62728";
/// Marker colour of a better change.
pub const BETTER_COLOR: &str = "#2ca02c";
/// Marker colour of a change of unknown direction.
const CHANGED_COLOR: &str = "#7f7f7f";

/// The trace name of each kind of change marker (tests and the legend read them).
pub fn marker_trace_name(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Worse => "change: worse",
        Verdict::Better => "change: better",
        Verdict::Changed => "change",
    }
}

/// The change's size in words: `−15.3 % (16.8σ)`.
pub fn change_text(c: &ChangePoint) -> String {
    let pct = c
        .change_pct
        .map_or("from 0".to_string(), |p| format!("{p:+.1} %"));
    format!("{pct} ({:.1}σ)", c.shift_sigma.abs())
}

fn hover_of_change(s: &TrendSeries, c: &ChangePoint) -> String {
    let p = &s.points[c.index];
    escape_html(&format!(
        "{}: {} from {}\n{} → {}, {}",
        s.name,
        c.verdict.name(),
        p.label(),
        format_value(c.before),
        format_value(c.after),
        change_text(c)
    ))
    .replace('\n', "<br>")
}

/// The figure of `series` (all of one metric).
pub fn trend_plot(series: &[TrendSeries], metric: &MetricKey, theme: Theme) -> Plot {
    let mut plot = Plot::new();
    let mut annotations = Vec::new();
    let mut changes: Vec<(Verdict, String, f64, String)> = Vec::new();
    for (si, s) in series.iter().enumerate() {
        let color = PALETTE[si % PALETTE.len()];
        let x: Vec<String> = s.points.iter().map(|p| iso_of_epoch_s(p.time_s)).collect();
        let hover: Vec<String> = s
            .points
            .iter()
            .map(|p| {
                let n = p.records.len();
                escape_html(&format!(
                    "{}<br>{}<br>{}{}",
                    s.name,
                    p.label(),
                    format_value(p.value),
                    if n > 1 {
                        format!(" (mean of {n})")
                    } else {
                        String::new()
                    }
                ))
                .replace("&lt;br&gt;", "<br>")
            })
            .collect();
        plot.add_trace(
            Scatter::new(x.clone(), s.points.iter().map(|p| p.value).collect())
                .name(escape_html(&s.name))
                .mode(Mode::LinesMarkers)
                .line(Line::new().color(color).width(2.0))
                .marker(Marker::new().color(color).size(6))
                .hover_text_array(hover)
                .hover_info(HoverInfo::Text),
        );
        for c in s.changes() {
            let p = &s.points[c.index];
            changes.push((
                c.verdict,
                x[c.index].clone(),
                p.value,
                hover_of_change(s, c),
            ));
            if c.verdict == Verdict::Worse {
                annotations.push(
                    Annotation::new()
                        .x(x[c.index].clone())
                        .y(p.value)
                        .text(escape_html(&change_text(c)))
                        .show_arrow(true)
                        .arrow_color(WORSE_COLOR)
                        .font(plotly::common::Font::new().color(WORSE_COLOR)),
                );
            }
        }
    }
    for verdict in [Verdict::Worse, Verdict::Better, Verdict::Changed] {
        let of: Vec<&(Verdict, String, f64, String)> =
            changes.iter().filter(|c| c.0 == verdict).collect();
        if of.is_empty() {
            continue;
        }
        let (color, symbol) = match verdict {
            Verdict::Worse => (WORSE_COLOR, MarkerSymbol::X),
            Verdict::Better => (BETTER_COLOR, MarkerSymbol::Diamond),
            Verdict::Changed => (CHANGED_COLOR, MarkerSymbol::Diamond),
        };
        plot.add_trace(
            Scatter::new(
                of.iter().map(|c| c.1.clone()).collect(),
                of.iter().map(|c| c.2).collect(),
            )
            .name(marker_trace_name(verdict))
            .mode(Mode::Markers)
            .marker(Marker::new().color(color).size(14).symbol(symbol))
            .hover_text_array(of.iter().map(|c| c.3.clone()).collect::<Vec<_>>())
            .hover_info(HoverInfo::Text),
        );
    }
    let title = format!("{} over time", metric.label());
    plot.set_layout(base_layout(&title, "Date", &metric.label(), theme).annotations(annotations));
    plot
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::trend::{trends, TrendSpec};
    use crate::model::Record;

    #[test]
    fn change_points_are_marked_at_their_date() {
        let recs: Vec<Record> = (0..12)
            .map(|d| {
                let mut r = Record {
                    date: Some(format!("2026-11-{:02}", d + 1).into()),
                    ..Record::default()
                };
                let v = if d >= 8 { 80.0 } else { 100.0 } + (d % 3) as f64 * 0.5;
                r.set_metric(MetricKey::OutputThroughput, v);
                r
            })
            .collect();
        let spec = TrendSpec {
            metrics: vec![MetricKey::OutputThroughput],
            ..TrendSpec::default()
        };
        let t = trends(&recs, &spec).unwrap();
        let json: serde_json::Value = serde_json::from_str(
            &trend_plot(&t.series, &MetricKey::OutputThroughput, Theme::Light).to_json(),
        )
        .unwrap();
        let traces = json["data"].as_array().unwrap();
        assert_eq!(traces.len(), 2);
        assert_eq!(traces[0]["x"][0], "2026-11-01 00:00:00");
        assert_eq!(traces[1]["name"], "change: worse");
        assert_eq!(traces[1]["x"], serde_json::json!(["2026-11-09 00:00:00"]));
        let note = json["layout"]["annotations"][0]["text"].as_str().unwrap();
        assert_eq!(note, "-19.7 % (10.0σ)");
    }
}
