//! The improvement figures: bars of the mean improvement per value of one dimension and a
//! heatmap per cell of two, both from an [`ImprovementTable`] that [`super`] computed.

use crate::charts::plotly::common::{
    ColorBar, ColorScale, ColorScaleElement, HoverInfo, Marker, Title,
};
use crate::charts::plotly::layout::AxisType;
use crate::charts::plotly::{Bar, HeatMap, Plot};

use super::{ImprovementGroup, ImprovementHeatmap, ImprovementTable};
use crate::charts::style::{
    base_layout, escape_html, format_value, themed_axis, Theme, NO_VALUE, PALETTE,
};
use crate::model::{DimKey, DimValue};

fn value_text(v: &Option<DimValue>) -> String {
    v.as_ref().map_or(NO_VALUE.to_string(), |v| v.to_string())
}

fn comparison_title(table: &ImprovementTable) -> String {
    format!(
        "{} improvement of {} over {}",
        table.metric.label(),
        table.candidate,
        table.baseline
    )
}

/// Bars of the mean improvement per value of one dimension (from [`improvement_by`](crate::analysis::improvement::improvement_by));
/// positive bars in the first palette colour, negative ones in red.
pub fn improvement_bars_plot(
    table: &ImprovementTable,
    by: &DimKey,
    groups: &[ImprovementGroup],
    theme: Theme,
) -> Plot {
    let xs: Vec<String> = groups
        .iter()
        .map(|g| escape_html(&value_text(&g.value)))
        .collect();
    let ys: Vec<f64> = groups.iter().map(|g| g.mean_improvement_pct).collect();
    let colors: Vec<&str> = groups
        .iter()
        .map(|g| {
            if g.mean_improvement_pct >= 0.0 {
                PALETTE[1]
            } else {
                PALETTE[8]
            }
        })
        .collect();
    let hover: Vec<String> = groups
        .iter()
        .map(|g| {
            format!(
                "<b>{}</b><br>mean improvement: {} %<br>mean of {} configuration{}",
                escape_html(&value_text(&g.value)),
                format_value(g.mean_improvement_pct),
                g.rows,
                if g.rows == 1 { "" } else { "s" }
            )
        })
        .collect();
    let mut plot = Plot::new();
    plot.add_trace(
        Bar::new(xs, ys)
            .name(escape_html(&format!(
                "{} vs {}",
                table.candidate, table.baseline
            )))
            .hover_text_array(hover)
            .hover_info(HoverInfo::Text)
            .marker(Marker::new().color_array(colors)),
    );
    let mut layout = base_layout(
        &comparison_title(table),
        &by.label(),
        "Mean improvement (%)",
        theme,
    );
    layout = layout.x_axis(themed_axis(&by.label(), theme).type_(AxisType::Category));
    plot.set_layout(layout);
    plot
}

/// A heatmap of the mean improvement per cell (from [`improvement_heatmap`](crate::analysis::improvement::improvement_heatmap)), diverging
/// colours centred on 0 %: blue where the candidate is better, red where it is worse.
pub fn improvement_heatmap_plot(
    table: &ImprovementTable,
    heat: &ImprovementHeatmap,
    theme: Theme,
) -> Plot {
    let xs: Vec<String> = heat.x.iter().map(|v| escape_html(&value_text(v))).collect();
    let ys: Vec<String> = heat.y.iter().map(|v| escape_html(&value_text(v))).collect();
    let hover: Vec<Vec<String>> = heat
        .y
        .iter()
        .enumerate()
        .map(|(yi, yv)| {
            heat.x
                .iter()
                .enumerate()
                .map(|(xi, xv)| {
                    let cell = heat
                        .mean_improvement_pct
                        .get(yi)
                        .and_then(|r| r.get(xi))
                        .copied()
                        .flatten()
                        .map_or("no matched configuration".to_string(), |p| {
                            format!(
                                "mean improvement: {} %<br>mean of {}",
                                format_value(p),
                                heat.rows
                                    .get(yi)
                                    .and_then(|r| r.get(xi))
                                    .copied()
                                    .unwrap_or(0)
                            )
                        });
                    format!(
                        "{}: {}<br>{}: {}<br>{cell}",
                        escape_html(&heat.x_dim.label()),
                        escape_html(&value_text(xv)),
                        escape_html(&heat.y_dim.label()),
                        escape_html(&value_text(yv)),
                    )
                })
                .collect()
        })
        .collect();
    let scale = ColorScale::Vector(vec![
        ColorScaleElement(0.0, PALETTE[8].to_string()),
        ColorScaleElement(0.5, "#f1f3f4".to_string()),
        ColorScaleElement(1.0, PALETTE[1].to_string()),
    ]);
    let mut plot = Plot::new();
    plot.add_trace(
        HeatMap::new(xs, ys, heat.mean_improvement_pct.clone())
            .zmid(0.0)
            .color_scale(scale)
            .color_bar(ColorBar::new().title(Title::with_text("Improvement (%)")))
            .hover_text_matrix(hover)
            .hover_info(HoverInfo::Text),
    );
    // Category labels (model names) need room: let plotly size the margins to them.
    let cat = |t: &str| {
        themed_axis(t, theme)
            .type_(AxisType::Category)
            .auto_margin(true)
    };
    let layout = base_layout(&comparison_title(table), "", "", theme)
        .x_axis(cat(&heat.x_dim.label()))
        .y_axis(cat(&heat.y_dim.label()));
    plot.set_layout(layout);
    plot
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::improvement::tests::rec;
    use crate::analysis::improvement::ImprovementSpec;
    use crate::analysis::improvement::{improvement, improvement_by, improvement_heatmap};
    use crate::model::{Dataset, Dim, MetricKey, Record};

    fn table(records: Vec<Record>) -> ImprovementTable {
        let ds = Dataset::new(records);
        let all: Vec<usize> = (0..ds.len()).collect();
        let spec = ImprovementSpec::new(Dim::Gpu, "Tesla", "A100", MetricKey::OutputThroughput);
        improvement(&ds, &all, &spec).unwrap()
    }

    #[test]
    fn bars_and_heatmap_carry_the_means() {
        // Batch 1: +50 %; batch 8: 180 / 200 − 1 = −10 %.
        let t = table(vec![
            rec("Tesla", "a", 1, 100.0),
            rec("A100", "a", 1, 150.0),
            rec("Tesla", "a", 8, 200.0),
            rec("A100", "a", 8, 180.0),
        ]);
        let heat = improvement_heatmap(&t, &Dim::BatchSize.into(), &Dim::Model.into()).unwrap();
        let json: serde_json::Value =
            serde_json::from_str(&improvement_heatmap_plot(&t, &heat, Theme::Light).to_json())
                .unwrap();
        assert_eq!(json["data"][0]["type"], "heatmap");
        assert_eq!(json["data"][0]["zmid"], 0.0);
        assert_eq!(json["data"][0]["x"], serde_json::json!(["1", "8"]));
        let by = improvement_by(&t, &Dim::BatchSize.into()).unwrap();
        let json: serde_json::Value = serde_json::from_str(
            &improvement_bars_plot(&t, &Dim::BatchSize.into(), &by, Theme::Dark).to_json(),
        )
        .unwrap();
        assert_eq!(json["data"][0]["x"], serde_json::json!(["1", "8"]));
        assert_eq!(json["data"][0]["y"][0], 50.0);
        // Better in the first palette colour, worse in red.
        assert_eq!(
            json["data"][0]["marker"]["color"],
            serde_json::json!([PALETTE[1], PALETTE[8]])
        );
        assert_eq!(
            json["layout"]["title"]["text"],
            "Output token throughput (tok/s) improvement of A100 over Tesla"
        );
    }

    #[test]
    fn hostile_values_are_escaped_in_figures() {
        let t = table(vec![
            rec("Tesla", "<script>", 1, 1.0),
            rec("A100", "<script>", 1, 2.0),
        ]);
        let by = improvement_by(&t, &Dim::Model.into()).unwrap();
        let json = improvement_bars_plot(&t, &Dim::Model.into(), &by, Theme::Light).to_json();
        assert!(!json.contains("<script>"));
        assert!(json.contains("&lt;script&gt;"));
    }
}
