//! The trade-off, SLO, distribution and regression views. Each asks [`crate::analysis`] for its
//! numbers and figures ([`crate::views::analysis`] for its small rules) and only lays them out;
//! the series split follows the chart panel's choice.

use leptos::prelude::*;

use super::plotly;
use super::state::{AppState, FileStatus};
use super::widgets::{markdown_export, options, param_input, ChoiceMenu};
use crate::analysis::defaults::{default_layout, default_x};
use crate::analysis::distribution::{
    cdf_plot, distributions, histogram_plot, percentile_text_table, split_by, RequestQuantity,
};
use crate::analysis::economics::Assumptions;
use crate::analysis::export::TextTable;
use crate::analysis::regression::{regression, RegressionSpec};
use crate::analysis::slo::{
    limits_text as limits_text_of, slo, slo_coverage, slo_text_table, SloLimit, SloSpec,
};
use crate::analysis::tradeoff::{
    assumptions_used, at_target, overview_as_typed, target_text_table, tradeoff, tradeoff_plot,
    AssumedFor, LatencyAxis, Overview, ThroughputAxis, TradeoffSpec, MAX_FRONTIER_DRAWN,
};
use crate::charts::format_value;
use crate::model::{Dataset, DimKey, MetricKey};
use crate::views::analysis::{
    default_slo_load, frontier_rows, parse_numbers, parse_slo_limits, parse_target,
    regression_pair, SLO_LOADS,
};

/// The trade-off view's throughput axis (kept in the address by its label).
const THROUGHPUT_MENU: ChoiceMenu<ThroughputAxis> = ChoiceMenu {
    id: "tradeoff-throughput",
    param: "throughput",
    choices: &ThroughputAxis::ALL,
    value_of: |a| a.label().to_string(),
    label_of: |a| a.label().to_string(),
};

/// The trade-off view's latency axis (kept in the address by its label).
const LATENCY_MENU: ChoiceMenu<LatencyAxis> = ChoiceMenu {
    id: "tradeoff-latency",
    param: "latency",
    choices: &LatencyAxis::ALL,
    value_of: |a| a.label().to_string(),
    label_of: |a| a.label().to_string(),
};

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
fn series_by(state: AppState, ds: &Dataset) -> Vec<DimKey> {
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

/// Throughput (or its cost) against latency (or interactivity) per series, with each series'
/// Pareto frontier, the prices and powers it assumed, and the frontiers read at a target.
#[component]
pub fn TradeoffView() -> impl IntoView {
    let state = expect_context::<AppState>();
    let throughput =
        RwSignal::new(THROUGHPUT_MENU.initial(state, ThroughputAxis::OutputTokensPerS));
    let latency = RwSignal::new(LATENCY_MENU.initial(state, LatencyAxis::P99TtftMs));
    let text_param = |name: &str| RwSignal::new(state.param(name).unwrap_or_default());
    let (prices, powers, target, cap) = (
        text_param("price"),
        text_param("kw"),
        text_param("at"),
        text_param("cap"),
    );
    let (levels, band, baseline) = (
        text_param("levels"),
        text_param("band"),
        text_param("baseline"),
    );
    let sort_by = RwSignal::new(None::<usize>);
    let node = NodeRef::<leptos::html::Div>::new();
    let result = Memo::new(move |_| {
        let theme = state.theme();
        let assumptions = Assumptions {
            prices: Assumptions::parse_list(&prices.get()).map_err(|e| e.to_string())?,
            kw: Assumptions::parse_list(&powers.get()).map_err(|e| e.to_string())?,
        };
        let target = parse_target(&target.get(), "target")?;
        let cap = parse_target(&cap.get(), "limit")?;
        let levels = parse_numbers(&levels.get(), "level")?;
        let band = parse_numbers(&band.get(), "band end")?;
        let baseline = baseline.get();
        state.with_filtered(|ds, indices| {
            let spec = TradeoffSpec {
                throughput: throughput.get(),
                latency: latency.get(),
                series_by: series_by(state, ds),
                theme,
                assumptions,
            };
            let series = tradeoff(ds, indices, &spec);
            let figure = (!series.is_empty()).then(|| tradeoff_plot(ds, &series, &spec).to_json());
            let frontier = frontier_rows(&series, MAX_FRONTIER_DRAWN);
            let assumed: Vec<String> = assumptions_used(ds, indices, &spec)
                .iter()
                .map(AssumedFor::text)
                .collect();
            let at = target
                .map(|t| target_text_table(&at_target(&series, &spec, t, cap), &spec, t, cap));
            let summary = overview_as_typed(&series, &spec, levels, &band, &baseline)?
                .map(|o| (o, spec.throughput.higher_is_better()));
            Ok::<_, String>((figure, frontier, assumed, at, summary))
        })
    });
    let figure = move || result.get().ok().and_then(|r| r.0);
    let chart_error = plotly::draw_when(node, figure);
    let text_box = move |id, param, size, placeholder: &str, value| {
        param_input(state, id, param, size, placeholder.to_string(), value)
    };
    view! {
        <div class="controls">
            <label>"Throughput "
                {THROUGHPUT_MENU.view(state, throughput)}
            </label>
            <label>"Latency "
                {LATENCY_MENU.view(state, latency)}
            </label>
        </div>
        <div class="controls">
            <label title="Price of one GPU-hour, per GPU name or family; defaults fill the rest">"$/GPU-hour "
                {text_box("tradeoff-price", "price", "24", "H100=2.95, B200=5.25", prices)}
            </label>
            <label title="Power per GPU in kW; defaults are board power (TDP)">"kW/GPU "
                {text_box("tradeoff-kw", "kw", "16", "H100=0.7", powers)}
            </label>
            <label title="Read each frontier at this value of the x axis">"Read at x = "
                {text_box("tradeoff-at", "at", "6", "50", target)}
            </label>
            <label title="Also give the best x with the y axis within this limit">"y limit "
                {text_box("tradeoff-cap", "cap", "6", "2.0", cap)}
            </label>
        </div>
        {move || result.get().err().map(|e| view! { <p class="error" id="tradeoff-error">{e}</p> })}
        {move || (result.get().is_ok() && figure().is_none()).then(|| view! {
            <p class="muted">{format!("No filtered record has both axes' metrics{}.", throughput.get().needs())}</p>
        })}
        {plotly::error_note(chart_error)}
        <div class="chart" id="tradeoff-chart" node_ref=node></div>
        {move || result.get().ok().and_then(|r| r.4).map(|(o, y_hib)| view! {
            <OverviewTable overview=o y_hib=y_hib baseline=baseline levels=levels band=band sort_by=sort_by/>
        })}
        {move || result.get().ok().map(|(_, (frontier, more), assumed, at, _)| view! {
            {(!assumed.is_empty()).then(|| view! {
                <ul class="muted" id="tradeoff-assumed">
                    {assumed.into_iter().map(|a| view! { <li>{a}</li> }).collect_view()}
                </ul>
            })}
            {at.map(|table| view! {
                <h3>"Each frontier at the target"</h3>
                <p class="muted">"Read between measured frontier points by linear interpolation, never extrapolated."</p>
                {text_table_view(table, "tradeoff-at-table")}
            })}
            {(!frontier.is_empty()).then(|| view! {
                <h3>"Pareto frontier points"</h3>
                <table class="records" id="frontier-table">
                    <thead><tr><th>"Series"</th><th class="num">{latency.get().label()}</th><th class="num">{throughput.get().label()}</th><th class="num">"Records"</th></tr></thead>
                    <tbody>{frontier.into_iter().map(|(s, l, t, n)| view! {
                        <tr><td>{s}</td><td class="num">{format_value(l)}</td><td class="num">{format_value(t)}</td><td class="num">{n}</td></tr>
                    }).collect_view()}</tbody>
                </table>
                {(more > 0).then(|| view! {
                    <p class="muted" id="frontier-more">{format!("and {more} more frontier points (not listed)")}</p>
                })}
            })}
        })}
    }
}

/// One number per curve: each series' frontier at a few levels of x and its mean over a band,
/// against a chosen baseline as a heatmap, sortable by any column, with its Markdown and CSV.
#[component]
fn OverviewTable(
    overview: Overview,
    y_hib: bool,
    baseline: RwSignal<String>,
    levels: RwSignal<String>,
    band: RwSignal<String>,
    sort_by: RwSignal<Option<usize>>,
) -> impl IntoView {
    let state = expect_context::<AppState>();
    let table = overview.to_text_table();
    let (markdown, csv) = (table.to_markdown(), table.to_csv());
    let names: Vec<String> = overview.rows.iter().map(|r| r.series.clone()).collect();
    let current = overview.baseline.clone().unwrap_or_default();
    let shown_levels = overview
        .levels
        .iter()
        .map(|l| format_value(*l))
        .collect::<Vec<_>>()
        .join(", ");
    let shown_band = format!(
        "{}, {}",
        format_value(overview.band.0),
        format_value(overview.band.1)
    );
    view! {
        <h3>"Overview: one number per curve"</h3>
        <div class="controls">
            <label>"Levels of x "
                {param_input(state, "overview-levels", "levels", "16", shown_levels, levels)}
            </label>
            <label>"Band "
                {param_input(state, "overview-band", "band", "10", shown_band, band)}
            </label>
            <label>"Against "
                <select id="overview-baseline" on:change=move |ev| {
                    let v = event_target_value(&ev);
                    state.set_param("baseline", v.clone());
                    baseline.set(v);
                }>
                    {options(std::iter::once((String::new(), "no baseline".to_string())).chain(names.iter().map(|n| (n.clone(), n.clone()))), &current)}
                </select>
            </label>
        </div>
        <div class="table-scroll" tabindex="0" role="region" aria-label="Table, scrolls">
            <table class="records" id="overview-table">
                <thead><tr>
                    {table.columns.iter().enumerate().map(|(k, c)| {
                        let figure = k.checked_sub(1);
                        view! {
                            <th class:num=c.numeric>
                                {match figure {
                                    Some(f) => view! { <button class="ghost sort" title="Sort, best first" on:click=move |_| sort_by.set(Some(f))>{c.header.clone()}</button> }.into_any(),
                                    None => view! { <span>{c.header.clone()}</span> }.into_any(),
                                }}
                            </th>
                        }
                    }).collect_view()}
                </tr></thead>
                <tbody>
                    {move || {
                        let order = sort_by.get().map_or_else(
                            || (0..overview.rows.len()).collect(),
                            |c| overview.order_by(c, y_hib),
                        );
                        order.into_iter().map(|i| {
                            let row = &overview.rows[i];
                            view! {
                                <tr>{table.rows[i].iter().enumerate().map(|(k, cell)| {
                                    let heat = k.checked_sub(1)
                                        .and_then(|f| row.vs_baseline.get(f).copied().flatten())
                                        .and_then(|q| Overview::goodness(q, y_hib))
                                        .map(heat_style)
                                        .unwrap_or_default();
                                    let numeric = k > 0;
                                    view! { <td class:num=numeric style=heat>{cell.text().to_string()}</td> }
                                }).collect_view()}</tr>
                            }
                        }).collect_view()
                    }}
                </tbody>
            </table>
        </div>
        {markdown_export(None, 6, markdown)}
        <details class="export">
            <summary>"CSV"</summary>
            <textarea readonly rows=6>{csv}</textarea>
        </details>
    }
}

/// A cell's background for a goodness in −1..1: green for better than the baseline, red for
/// worse, stronger further away.
fn heat_style(goodness: f64) -> String {
    let alpha = (goodness.abs() * 0.45).min(0.45);
    let (r, g, b) = if goodness >= 0.0 {
        (30, 142, 62)
    } else {
        (217, 48, 37)
    };
    format!("background: rgba({r}, {g}, {b}, {alpha:.2})")
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
                cdf_plot(&dists, q, &by, theme).to_json(),
                histogram_plot(&dists, q, 40, &by, theme).to_json(),
                percentile_text_table(&dists, q, &[50.0, 90.0, 95.0, 99.0]),
            ))
        })
    });
    Effect::new(move |_| {
        let r = result.get();
        let cdf = plotly::draw(cdf_node, r.as_ref().map(|r| r.0.as_str()));
        let hist = plotly::draw(hist_node, r.as_ref().map(|r| r.1.as_str()));
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
