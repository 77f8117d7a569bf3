//! The trends view: a metric over date per configuration, change points marked, and the table
//! of the latest regressions under it. The numbers and the figure are
//! [`crate::analysis::trend`]'s and [`crate::analysis::trend_plot`]'s; this only lays them out.

use leptos::prelude::*;

use super::analyze::text_table_view;
use super::plotly;
use super::state::AppState;
use super::widgets::options;
use crate::analysis::defaults::default_compare_metric;
use crate::analysis::export::TextTable;
use crate::analysis::trend::{trends_of, TrendSpec, DEFAULT_THRESHOLD_SIGMA};
use crate::analysis::trend_plot::trend_plot;
use crate::charts::plotly::Plot;
use crate::model::{MetricKey, Record};

/// What the view shows for the current filter and choices.
#[derive(Clone, Debug, PartialEq)]
struct TrendsShown {
    /// The metrics present, for the menu.
    metrics: Vec<MetricKey>,
    /// The metric followed.
    metric: MetricKey,
    /// The plotly figure.
    figure: Plot,
    /// The report's one-line summary.
    summary: String,
    /// The dimensions left out of the configurations (one value per date).
    run_dims: String,
    /// The latest regressions.
    table: TextTable,
}

/// The trends view.
#[component]
pub fn TrendsView() -> impl IntoView {
    let state = expect_context::<AppState>();
    let metric = RwSignal::new(
        state
            .param("trend_metric")
            .and_then(|m| MetricKey::from_name(&m)),
    );
    let noise = RwSignal::new(
        state
            .param("noise")
            .and_then(|t| t.parse::<f64>().ok())
            .filter(|t| t.is_finite() && *t > 0.0)
            .unwrap_or(DEFAULT_THRESHOLD_SIGMA),
    );
    let node = NodeRef::<leptos::html::Div>::new();
    let result = Memo::new(move |_| -> Result<TrendsShown, String> {
        let theme = state.theme();
        let chosen = metric.get();
        let threshold_sigma = noise.get();
        state.with_filtered(|ds, rows| {
            let rebuilt: Vec<std::borrow::Cow<'_, Record>> =
                rows.iter().filter_map(|&i| ds.record(i)).collect();
            let records: Vec<&Record> = rebuilt.iter().map(|r| &**r).collect();
            let present: std::collections::BTreeSet<&MetricKey> =
                crate::model::order::set_of(records.iter().flat_map(|r| r.metrics.keys()));
            let metrics: Vec<MetricKey> = present.into_iter().cloned().collect();
            let m = chosen
                .filter(|m| metrics.contains(m))
                .or_else(|| default_compare_metric(&metrics))
                .ok_or("No filtered record has a metric.")?;
            let spec = TrendSpec {
                metrics: vec![m.clone()],
                threshold_sigma,
                ..TrendSpec::default()
            };
            let report =
                trends_of(&records, &spec).map_err(|e| format!("Nothing to follow: {e}."))?;
            Ok(TrendsShown {
                figure: trend_plot(&report.series, &m, theme),
                summary: report.summary(),
                run_dims: crate::analysis::dim_names(&report.run_dims),
                table: report.regressions_table(true),
                metrics,
                metric: m,
            })
        })
    });
    let chart_error = plotly::draw_when(node, move || {
        result.with(|r| r.as_ref().ok().map(|s| s.figure.clone()))
    });
    view! {
        <div class="controls">
            {move || result.with(|r| r.as_ref().ok().map(|s| {
                let current = s.metric.name();
                view! {
                    <label>"Metric "
                        <select id="trend-metric" on:change=move |ev| {
                            let name = event_target_value(&ev);
                            metric.set(MetricKey::from_name(&name));
                            state.set_param("trend_metric", name);
                        }>
                            {options(s.metrics.iter().map(|m| (m.name(), m.label())), &current)}
                        </select>
                    </label>
                }
            }))}
            <label>"Change beyond (noise units) "
                <input id="trend-noise" type="number" min="1" step="0.5" size="4"
                    prop:value=move || noise.get().to_string()
                    on:change=move |ev| {
                        if let Ok(v) = event_target_value(&ev).parse::<f64>() {
                            if v.is_finite() && v > 0.0 {
                                noise.set(v);
                                state.set_param("noise", v.to_string());
                            }
                        }
                    }/>
            </label>
        </div>
        {plotly::error_note(chart_error)}
        {move || result.with(|r| match r {
            Err(e) => Some(view! { <p class="muted" id="trends-message">{e.clone()}</p> }),
            Ok(_) => None,
        })}
        <div class="chart" id="trends-chart" node_ref=node></div>
        {move || result.with(|r| r.as_ref().ok().map(|s| {
            let run_note = (!s.run_dims.is_empty() && s.run_dims != "none").then(|| view! {
                <p class="muted" id="trends-run-dims">
                    {format!("Not part of a configuration (one value per date): {}.", s.run_dims)}
                </p>
            });
            let table = s.table.clone();
            view! {
                <p id="trends-summary">{s.summary.clone()}</p>
                {run_note}
                <h3>"Latest regressions"</h3>
                {if table.rows.is_empty() {
                    view! { <p class="muted" id="trends-no-regressions">"No configuration ends at a regressed level."</p> }.into_any()
                } else {
                    text_table_view(table, "trends-table").into_any()
                }}
            }
        }))}
    }
}
