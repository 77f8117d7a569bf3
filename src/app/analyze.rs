//! The SLO, distribution and regression views (the trade-off view is [`super::tradeoff`]'s),
//! and what they share with it. Each asks [`crate::analysis`] for its
//! numbers and figures ([`crate::views::analysis`] for its small rules) and only lays them out;
//! the series split follows the chart panel's choice.

use leptos::prelude::*;

use super::plotly;
use super::state::{AppState, FileStatus};
use super::widgets::{markdown_export, param_input, ChoiceMenu};
use crate::analysis::defaults::{default_layout, default_x};
use crate::analysis::distribution::{
    cdf_plot, distributions, histogram_plot, percentile_text_table, split_by, RequestQuantity,
};
use crate::analysis::export::TextTable;
use crate::analysis::regression::{regression, RegressionSpec};
use crate::analysis::slo::{
    limits_text as limits_text_of, slo, slo_coverage, slo_text_table, SloLimit, SloSpec,
};
use crate::model::{Dataset, DimKey, MetricKey};
use crate::views::analysis::{default_slo_load, parse_slo_limits, regression_pair, SLO_LOADS};

/// The distribution view's per-request quantity.
const QUANTITY_MENU: ChoiceMenu<RequestQuantity> = ChoiceMenu {
    id: "dist-quantity",
    param: "quantity",
    choices: &RequestQuantity::ALL,
    value_of: |q| q.name().to_string(),
    label_of: |q| q.label().to_string(),
};

/// How these views split records: the chart panel's series and panels (the point rule's
/// defaults unless the user chose the series), so two files of one sweep stay one series.
pub(super) fn series_by(state: AppState, ds: &Dataset) -> Vec<DimKey> {
    let chosen = state.chart.get().series_by;
    let x = state.chart.get().x.unwrap_or_else(|| default_x(ds));
    default_layout(ds, x, chosen, None).split_by()
}

/// An analysis table as HTML, numbers right-aligned, with its Markdown beside it.
pub fn text_table_view(table: TextTable, id: &'static str) -> impl IntoView {
    let markdown = table.to_markdown();
    view! {
        <div class="table-scroll" tabindex="0" role="region" aria-label="Table, scrolls">
            <table class="records" id=id>
                <thead><tr>
                    {table.columns.iter().map(|c| view! { <th class:num=c.numeric>{c.header.clone()}</th> }).collect_view()}
                </tr></thead>
                <tbody>
                    {table.rows.iter().map(|row| view! {
                        <tr>{row.iter().zip(&table.columns).map(|(cell, c)| view! {
                            <td class:num=c.numeric>{cell.text().to_string()}</td>
                        }).collect_view()}</tr>
                    }).collect_view()}
                </tbody>
            </table>
        </div>
        {markdown_export(None, 6, markdown)}
    }
}

/// The highest load per series that meets every latency limit.
#[component]
pub fn SloView() -> impl IntoView {
    let state = expect_context::<AppState>();
    let limits_text = RwSignal::new(
        state
            .param("slo")
            .unwrap_or_else(|| "p99_ttft_ms<=500, mean_tpot_ms<=50".to_string()),
    );
    let load = RwSignal::new(state.param("load").and_then(|l| DimKey::from_name(&l)));
    let result = Memo::new(move |_| {
        let limits = parse_slo_limits(&limits_text.get())?;
        state.with_filtered(|ds, indices| {
            let load = load.get().unwrap_or_else(|| default_slo_load(ds));
            // Limits on metrics no selected record has are named, not silently failed (once
            // there are records: a linked view opens before its files arrive).
            let coverage = if indices.is_empty() {
                Default::default()
            } else {
                slo_coverage(&limits, &ds.metrics_present(indices))
            };
            let limits: Vec<SloLimit> = limits
                .into_iter()
                .filter(|l| !coverage.unchecked.contains(l))
                .collect();
            let table = (!limits.is_empty()).then(|| {
                let spec = SloSpec {
                    limits,
                    load: load.clone(),
                    throughput: MetricKey::OutputThroughput,
                    series_by: series_by(state, ds),
                };
                slo_text_table(&slo(ds, indices, &spec), &spec)
            });
            Ok::<_, String>((load, table, coverage))
        })
    });
    let use_present = move |text: String| {
        state.set_param("slo", text.clone());
        limits_text.set(text);
    };
    view! {
        <div class="controls">
            <label>"Limits "
                {param_input(state, "slo-limits", "slo", "40", String::new(), limits_text)}
            </label>
            <label>"Load "
                <select id="slo-load" on:change=move |ev| {
                    let v = event_target_value(&ev);
                    load.set(DimKey::from_name(&v));
                    state.set_param("load", v);
                }>
                    {SLO_LOADS.into_iter().map(|d| {
                        let selected = move || result.with(|r| r.as_ref().is_ok_and(|(l, _, _)| *l == DimKey::Known(d)));
                        view! { <option value=d.name() selected=selected>{d.label()}</option> }
                    }).collect_view()}
                </select>
            </label>
        </div>
        <p class="muted">"Estimates between two measured loads are linear interpolations and are marked as such; they were not measured."</p>
        {move || result.with(|r| r.as_ref().ok().and_then(|(_, _, cov)| {
            let message = cov.message()?;
            let parsed = parse_slo_limits(&limits_text.get()).unwrap_or_default();
            let repaired = limits_text_of(&cov.repaired(&parsed));
            Some(view! {
                <p class="warning" id="slo-unchecked">
                    {message} " "
                    {(!repaired.is_empty()).then(|| {
                        let text = repaired.clone();
                        view! {
                            <button class="ghost" id="slo-use-present" on:click=move |_| use_present(text.clone())>
                                {format!("Check {repaired} instead")}
                            </button>
                        }
                    })}
                </p>
            })
        }))}
        {move || match result.get() {
            Err(e) => view! { <p class="error" id="slo-error">{e}</p> }.into_any(),
            Ok((_, Some(table), _)) => text_table_view(table, "slo-table").into_any(),
            Ok((_, None, _)) => view! {
                <p class="muted" id="slo-none">"None of these limits can be checked on the selected records."</p>
            }.into_any(),
        }}
    }
}

/// CDF and histogram of per-request quantities, when records carry per-request detail.
#[component]
pub fn DistributionView() -> impl IntoView {
    let state = expect_context::<AppState>();
    let quantity = RwSignal::new(QUANTITY_MENU.initial(state, RequestQuantity::TtftMs));
    let chart_error = RwSignal::new(None::<String>);
    let cdf_node = NodeRef::<leptos::html::Div>::new();
    let hist_node = NodeRef::<leptos::html::Div>::new();
    let result = Memo::new(move |_| {
        let theme = state.theme();
        let q = quantity.get();
        state.with_filtered(|ds, rows| {
            // A curve per run: never two request rates pooled into one.
            let by = split_by(ds, rows, q, &series_by(state, ds));
            let dists = distributions(ds, rows, q, &by);
            if dists.is_empty() {
                return None;
            }
            Some((
                cdf_plot(&dists, q, &by, theme),
                histogram_plot(&dists, q, 40, &by, theme),
                percentile_text_table(&dists, q, &[50.0, 90.0, 95.0, 99.0]),
            ))
        })
    });
    Effect::new(move |_| {
        let r = result.get();
        let cdf = plotly::draw(cdf_node, r.as_ref().map(|r| &r.0));
        let hist = plotly::draw(hist_node, r.as_ref().map(|r| &r.1));
        chart_error.set(cdf.and(hist).err());
    });
    view! {
        <div class="controls">
            <label>"Quantity "
                {QUANTITY_MENU.view(state, quantity)}
            </label>
        </div>
        {move || result.with(Option::is_none).then(|| view! {
            <p class="muted" id="dist-empty">
                "No filtered record carries per-request detail. vLLM result files saved with per-request arrays and benchlens run output have it."
            </p>
        })}
        {plotly::error_note(chart_error)}
        <div class="chart" id="cdf-chart" node_ref=cdf_node></div>
        <div class="chart" id="hist-chart" node_ref=hist_node></div>
        {move || result.get().map(|r| text_table_view(r.2, "percentile-table"))}
    }
}

/// Changes between two loaded files of the same configurations, beyond a threshold.
#[component]
pub fn RegressionView() -> impl IntoView {
    let state = expect_context::<AppState>();
    let old = RwSignal::new(None::<u32>);
    let new = RwSignal::new(None::<u32>);
    let threshold = RwSignal::new(
        state
            .param("threshold")
            .and_then(|t| t.parse::<f64>().ok())
            .filter(|t| t.is_finite() && *t >= 0.0)
            .unwrap_or(5.0),
    );
    let loaded = Memo::new(move |_| {
        state.files.with(|files| {
            files
                .iter()
                .filter_map(|f| match &f.status {
                    FileStatus::Loaded { rows, .. } => Some((f.id, f.name.clone(), rows.clone())),
                    _ => None,
                })
                .collect::<Vec<_>>()
        })
    });
    let result = Memo::new(move |_| {
        let files = loaded.get();
        let ids: Vec<u32> = files.iter().map(|f| f.0).collect();
        let (old_id, new_id) = regression_pair(&ids, old.get(), new.get())?;
        let (Some(o), Some(n)) = (
            files.iter().find(|f| f.0 == old_id),
            files.iter().find(|f| f.0 == new_id),
        ) else {
            return Err("choose two different files".to_string());
        };
        let spec = RegressionSpec {
            threshold_pct: threshold.get(),
            ..RegressionSpec::default()
        };
        state.dataset.with(|h| {
            let slice = |r: &std::ops::Range<usize>| h.dataset.records_in(r.clone());
            regression(&slice(&o.2), &slice(&n.2), &spec)
                .map(|report| (o.0, n.0, report.summary(), report.to_text_table()))
                .map_err(|e| e.to_string())
        })
    });
    let file_select = move |is_old: bool| {
        view! {
            <select id=if is_old { "regression-old" } else { "regression-new" } on:change=move |ev| {
                let id = event_target_value(&ev).parse().ok();
                if is_old { old.set(id) } else { new.set(id) }
            }>
                {move || {
                    let chosen = result.with(|r| r.as_ref().ok().map(|r| if is_old { r.0 } else { r.1 }));
                    loaded.get().into_iter().map(|(id, name, _)| {
                        view! { <option value=id.to_string() selected=Some(id) == chosen>{name}</option> }
                    }).collect_view()
                }}
            </select>
        }
    };
    view! {
        <div class="controls">
            <label>"Old " {file_select(true)}</label>
            <label>"New " {file_select(false)}</label>
            <label>"Threshold (%) "
                <input id="regression-threshold" type="number" min="0" step="0.5" size="5"
                    prop:value=move || threshold.get().to_string()
                    on:change=move |ev| {
                        if let Ok(v) = event_target_value(&ev).parse::<f64>() {
                            if v.is_finite() && v >= 0.0 {
                                threshold.set(v);
                                state.set_param("threshold", v.to_string());
                            }
                        }
                    }/>
            </label>
        </div>
        {move || match result.get() {
            Err(e) => view! { <p class="muted" id="regression-message">{e}</p> }.into_any(),
            Ok((_, _, summary, table)) => view! {
                <p class="muted" id="regression-summary">{summary}</p>
                {text_table_view(table, "regression-table")}
            }.into_any(),
        }}
    }
}
