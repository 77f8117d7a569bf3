//! The trends figure: one line per configuration of a metric over date, the change points
//! marked (worse, better, of unknown direction) with their size written beside the worse ones.

use crate::charts::plotly::common::{HoverInfo, Line, Marker, MarkerSymbol, Mode};
use crate::charts::plotly::layout::Annotation;
use crate::charts::plotly::{Plot, Scatter};

use super::regression::Verdict;
use super::trend::{iso_of_epoch_s, ChangePoint, TrendSeries};
use crate::charts::style::{base_layout, escape_html, format_value, Theme, PALETTE};
use crate::charts::MAX_RICH_POINTS;
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

/// The figure of `series` (all of one metric). Past [`MAX_RICH_POINTS`] points in all, the
/// lines carry no markers and no hover text of their own (hover shows date, value and name);
/// change markers keep theirs.
pub fn trend_plot(series: &[TrendSeries], metric: &MetricKey, theme: Theme) -> Plot {
    let dense = series.iter().map(|s| s.points.len()).sum::<usize>() > MAX_RICH_POINTS;
    let mut plot = Plot::new();
    let mut annotations = Vec::new();
    let mut changes: Vec<(Verdict, String, f64, String)> = Vec::new();
    for (si, s) in series.iter().enumerate() {
        let color = PALETTE[si % PALETTE.len()];
        let x: Vec<String> = s.points.iter().map(|p| iso_of_epoch_s(p.time_s)).collect();
        let hover: Vec<String> = s
            .points
            .iter()
            .take(if dense { 0 } else { usize::MAX })
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
                .mode(if dense {
                    Mode::Lines
                } else {
                    Mode::LinesMarkers
                })
                .line(Line::new().color(color).width(2.0))
                .marker(Marker::new().color(color).size(6))
                .hover_text_array(hover)
                .hover_info(if dense {
                    HoverInfo::All
                } else {
                    HoverInfo::Text
                }),
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
                        .font(crate::charts::plotly::common::Font::new().color(WORSE_COLOR)),
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

    #[test]
    fn past_the_rich_point_cap_lines_lose_markers_and_hover_texts() {
        let figure = |n: i64| -> serde_json::Value {
            let recs: Vec<Record> = (0..n)
                .map(|h| {
                    let mut r = Record {
                        date: Some(iso_of_epoch_s(1_700_000_000 + h * 3600).into()),
                        ..Record::default()
                    };
                    r.set_metric(MetricKey::OutputThroughput, 100.0 + (h % 7) as f64);
                    r
                })
                .collect();
            let spec = TrendSpec {
                metrics: vec![MetricKey::OutputThroughput],
                ..TrendSpec::default()
            };
            let t = trends(&recs, &spec).unwrap();
            assert_eq!(t.series[0].points.len(), n as usize);
            serde_json::from_str(
                &trend_plot(&t.series, &MetricKey::OutputThroughput, Theme::Light).to_json(),
            )
            .unwrap()
        };
        let cap = MAX_RICH_POINTS as i64;
        let rich = figure(cap);
        assert_eq!(rich["data"][0]["mode"], "lines+markers");
        assert_eq!(
            rich["data"][0]["hovertext"].as_array().unwrap().len(),
            MAX_RICH_POINTS
        );
        let dense = figure(cap + 1);
        assert_eq!(dense["data"][0]["mode"], "lines");
        assert_eq!(dense["data"][0]["hoverinfo"], "all");
        assert_eq!(dense["data"][0]["hovertext"], serde_json::json!([]));
        assert_eq!(
            dense["data"][0]["x"].as_array().unwrap().len(),
            MAX_RICH_POINTS + 1
        );
    }
}
