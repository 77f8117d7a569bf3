//! The chart panel: the view tabs, the latency/throughput/scaling chart with its controls and
//! comparison table, and the slots of the other views.

use leptos::prelude::*;
use leptos::task::spawn_local;

use super::analyze::{DistributionView, RegressionView, SloView};
use super::browser::yield_to_browser;
use super::capacity::CapacityView;
use super::exports::Exports;
use super::improve::ImproveView;
use super::plotly;
use super::record_table::TableView;
use super::state::{AppState, View, ViewPinned};
use super::tradeoff::TradeoffView;
use super::widgets::{markdown_export, options, shared_notes};
use crate::analysis::export::comparison_text_table;
use crate::analysis::quality::comparison_notes;
use crate::charts::{self, format_value};
use crate::model::{DimKey, DimValue, MetricKey};
use crate::views::chart::{metric_menu, metric_options, x_dims, ChartContents, METRIC_MENU_LIMIT};

/// The view tabs, the exports and the active view.
#[component]
pub fn ChartPanel() -> impl IntoView {
    let state = expect_context::<AppState>();
    let chart_ref = NodeRef::<leptos::html::Div>::new();
    let chart_error = RwSignal::new(None::<String>);
    let pinned = expect_context::<ViewPinned>();
    let set_view = move |v: View| {
        pinned.0.set(true);
        state.chart.update(|c| c.view = v);
    };
    let tabs = View::ALL;
    let is_view = move |v: View| state.chart.with(|c| c.view == v);
    let is_analysis = move || {
        is_view(View::Tradeoff)
            || is_view(View::Slo)
            || is_view(View::Distribution)
            || is_view(View::Regression)
            || is_view(View::Trends)
            || is_view(View::Capacity)
            || is_view(View::Run)
    };
    let run_available = super::run_view::run_available(state);
    let is_table = move || state.chart.with(|c| c.view == View::Table);
    let is_improve = move || state.chart.with(|c| c.view == View::Improvement);
    let chart_hidden = move || is_table() || is_improve() || is_analysis();
    // Worked out only while shown: another view's tab changes the chart's key, and the chart
    // of 200,000 distinct x values was worked out again in that tab's click, unseen.
    let contents = Memo::new(move |_| {
        if chart_hidden() {
            None
        } else {
            state.chart_contents()
        }
    });

    let image_name = Signal::derive(move || {
        contents
            .with(|c| {
                c.as_ref()
                    .map(|c| format!("benchlens-{}-by-{}", c.spec.metric.name(), c.spec.x.name()))
            })
            .unwrap_or_else(|| "benchlens-chart".into())
    });

    // The bridge to plotly.js: redraw in place whenever what is drawn changes. The first chart
    // of new data is drawn in a task of its own (plotly's first drawing is long, and the task
    // that showed the new data has work of its own); a later redraw supersedes it. While
    // another view hides the chart it is not drawn (opening the trade-off view of a million
    // rows redrew it, unseen, for 70–120 ms); it is drawn when it shows again.
    let drawn_generation = StoredValue::new(0u64);
    let draws = StoredValue::new(0u64);
    Effect::new(move |_| {
        if chart_hidden() {
            draws.set_value(draws.get_value().wrapping_add(1));
            return;
        }
        let figure = contents.get().map(|c| {
            state
                .dataset
                .with_untracked(|h| charts::plot(&h.dataset, &c.series, &c.spec))
        });
        let draw = draws.get_value().wrapping_add(1);
        draws.set_value(draw);
        let generation = contents.with_untracked(|c| c.as_ref().map(|c| c.generation));
        if generation.is_some_and(|g| g != drawn_generation.get_value()) {
            drawn_generation.set_value(generation.unwrap_or_default());
            spawn_local(async move {
                yield_to_browser().await;
                if draws.get_value() == draw {
                    chart_error.set(plotly::draw(chart_ref, figure.as_ref()).err());
                }
            });
        } else {
            chart_error.set(plotly::draw(chart_ref, figure.as_ref()).err());
        }
    });

    let improve_choice = state.improve;
    view! {
        <section class="chart-panel">
            <nav class="tabs" role="tablist" aria-label="Views" on:keydown=move |ev| {
                let current = state.chart.with_untracked(|c| c.view);
                let available = |v: View| v != View::Run || run_available.get_untracked();
                if let Some(next) = current.after_key(&ev.key(), available) {
                    ev.prevent_default();
                    set_view(next);
                    super::browser::focus_selector(&format!("button[data-view=\"{}\"]", next.id()));
                }
            }>
                {tabs
                    .into_iter()
                    .map(|v| view! {
                        <button
                            role="tab"
                            data-view=v.id()
                            class:active=move || state.chart.with(|c| c.view == v)
                            class:hidden=move || v == View::Run && !run_available.get()
                            aria-selected=move || if state.chart.with(|c| c.view == v) { "true" } else { "false" }
                            tabindex=move || if state.chart.with(|c| c.view == v) { "0" } else { "-1" }
                            on:click=move |_| set_view(v)
                        >
                            {v.label()}
                        </button>
                    })
                    .collect_view()}
            </nav>
            <Exports chart_ref=chart_ref image_name=image_name/>
            <Show when=is_table>
                <TableView/>
            </Show>
            <Show when=is_improve>
                <ImproveView choice=improve_choice/>
            </Show>
            <Show when=move || is_view(View::Tradeoff)>
                <TradeoffView/>
            </Show>
            <Show when=move || is_view(View::Slo)>
                <SloView/>
            </Show>
            <Show when=move || is_view(View::Distribution)>
                <DistributionView/>
            </Show>
            <Show when=move || is_view(View::Regression)>
                <RegressionView/>
            </Show>
            <Show when=move || is_view(View::Trends)>
                <super::trends::TrendsView/>
            </Show>
            <Show when=move || is_view(View::Capacity)>
                <CapacityView/>
            </Show>
            <Show when=move || is_view(View::Run)>
                <super::run_view::RunView/>
            </Show>
            <div class="chart-area" class:hidden=chart_hidden>
            <ChartControls contents=contents/>
            {plotly::error_note(chart_error)}
            {move || match contents.get() {
                None => Some(view! {
                    <p class="muted" id="no-chart">
                        "No metric of this kind in the filtered records. Try another view or clear filters."
                    </p>
                }.into_any()),
                Some(r) if r.series.is_empty() => Some(view! {
                    <p class="muted" id="no-chart">
                        {format!(
                            "No filtered record has both {} and {}. Choose another x axis or metric.",
                            r.spec.x.label(),
                            r.spec.metric.label()
                        )}
                    </p>
                }.into_any()),
                Some(r) => r.left_out_note().map(|note| view! {
                    <p class="muted" id="left-out">{note}</p>
                }.into_any()),
            }}
            <div class="chart" id="chart" node_ref=chart_ref></div>
            <ComparisonTableView contents=contents/>
            </div>
        </section>
    }
}

/// Metric, x axis, series and log-axis choices of the chart.
#[component]
fn ChartControls(
    /// The chart whose menus are shown.
    contents: Memo<Option<ChartContents>>,
) -> impl IntoView {
    let state = expect_context::<AppState>();
    let choice = move || state.chart.get();
    // What the user typed to narrow a metric menu too long to list whole.
    let metric_query = RwSignal::new(String::new());
    view! {
        {move || {
            let r = contents.get()?;
            let c = choice();
            let menu = metric_menu(
                &metric_options(c.view, &r.metrics),
                &metric_query.get(),
                &r.spec.metric,
                METRIC_MENU_LIMIT,
            );
            let metrics = &menu.shown;
            let current_metric = r.spec.metric.name();
            let current_x = r.spec.x.name();
            let current_series = r.spec.series_by.first().map(DimKey::name).unwrap_or_default();
            let x_dims = x_dims(&r.dims);
            let view_now = c.view;
            Some(view! {
                <div class="controls">
                    <label>"Metric "
                        <select id="metric-select" on:change=move |ev| {
                            let m = MetricKey::from_name(&event_target_value(&ev));
                            state.chart.update(|c| c.set_active_metric(m));
                        }>
                            {options(metrics.iter().map(|m| (m.name(), m.label())), &current_metric)}
                        </select>
                    </label>
                    {menu.is_cut().then(|| view! {
                        <label>
                            <input type="search" id="metric-search" placeholder="find a metric"
                                prop:value=metric_query.get_untracked()
                                on:change=move |ev| metric_query.set(event_target_value(&ev))/>
                            <span class="muted" id="metric-count">
                                {format!(
                                    " {} of {} matching ({} metrics)",
                                    menu.matching.min(METRIC_MENU_LIMIT),
                                    menu.matching,
                                    menu.total
                                )}
                            </span>
                        </label>
                    })}
                    <label>"X axis "
                        <select id="x-select" on:change=move |ev| {
                            let x = DimKey::from_name(&event_target_value(&ev));
                            state.chart.update(|c| c.x = x);
                        }>
                            {options(x_dims.iter().map(|k| (k.name(), k.label())), &current_x)}
                        </select>
                    </label>
                    <label>"Series by "
                        <select id="series-select" on:change=move |ev| {
                            let v = event_target_value(&ev);
                            let by = if v.is_empty() { Vec::new() } else { DimKey::from_name(&v).into_iter().collect() };
                            state.chart.update(|c| c.series_by = Some(by));
                        }>
                            <option value="" selected=current_series.is_empty()>"(one series)"</option>
                            {options(r.dims.iter().map(|k| (k.name(), k.label())), &current_series)}
                        </select>
                    </label>
                    <label class="check">
                        <input type="checkbox" id="logy-toggle" prop:checked=c.log_y
                            on:change=move |_| state.chart.update(|c| c.log_y = !c.log_y)/>
                        "log y axis"
                    </label>
                    {(view_now == View::Scaling).then(|| view! {
                        <label class="check">
                            <input type="checkbox" id="log2-toggle" prop:checked=c.log2_x
                                on:change=move |_| state.chart.update(|c| c.log2_x = !c.log2_x)/>
                            "log₂ x axis"
                        </label>
                    })}
                </div>
            })
        }}
    }
}

/// The "fastest / faster by %" table under the bars, with its Markdown and data-quality notes.
#[component]
fn ComparisonTableView(
    /// The chart whose series are compared.
    contents: Memo<Option<ChartContents>>,
) -> impl IntoView {
    let state = expect_context::<AppState>();
    move || {
        let r = contents.get()?;
        if !state.chart.with(|c| c.view.shows_comparison_table())
            || charts::series_names(&r.series).len() < 2
        {
            return None;
        }
        let table = charts::comparison_table(&r.series, &r.spec.metric);
        let facet = r.spec.facet_by.clone();
        let markdown =
            comparison_text_table(&table, facet.as_ref(), &r.spec.x, &r.spec.metric).to_markdown();
        let notes =
            state.with_filtered_untracked(|ds, rows| comparison_notes(ds, rows, &r.spec, &table));
        let unit = r
            .spec
            .metric
            .unit()
            .map(|u| format!(" ({u})"))
            .unwrap_or_default();
        let has_facets = facet.is_some() && table.rows.iter().any(|row| row.facet.is_some());
        let any_row_notes = notes.rows.iter().any(|n| !n.is_empty());
        let names = table.series.clone();
        let more = table.rows.len().saturating_sub(charts::MAX_LISTED_ROWS);
        Some(view! {
            {markdown_export(Some("comparison-markdown"), 8, markdown)}
            {shared_notes("comparison-shared-notes", &notes.shared)}
            <div class="table-scroll" tabindex="0" role="region" aria-label="Table, scrolls">
            <table class="comparison" id="comparison-table">
                <thead>
                    <tr>
                        {has_facets.then(|| view! { <th>{facet.as_ref().map(DimKey::label)}</th> })}
                        <th>{r.spec.x.label()}</th>
                        {table.series.iter().map(|s| view! { <th>{format!("{s}{unit}")}</th> }).collect_view()}
                        <th>{if table.lower_is_better { "Fastest" } else { "Best" }}</th>
                        <th>{if table.lower_is_better { "Faster by (%)" } else { "Better by (%)" }}</th>
                        {any_row_notes.then(|| view! { <th>"Data quality"</th> })}
                    </tr>
                </thead>
                <tbody>
                    {table.rows.into_iter().zip(notes.rows).take(charts::MAX_LISTED_ROWS).map(|(row, flags)| {
                        view! {
                        <tr>
                            {has_facets.then(|| view! {
                                <td>{row.facet.as_ref().map_or(charts::NO_VALUE.to_string(), DimValue::to_string)}</td>
                            })}
                            <td>{row.x.to_string()}</td>
                            {row.values.iter().map(|v| view! {
                                <td class="num">{v.map(format_value).unwrap_or_else(|| "—".into())}</td>
                            }).collect_view()}
                            <td class="fastest">{row.fastest_text(&names).unwrap_or_else(|| "—".into())}</td>
                            <td class="num">{row.faster_by_pct.map(|p| format!("{p:.2}%")).unwrap_or_else(|| "—".into())}</td>
                            {any_row_notes.then(|| view! { <td class="flags">{flags}</td> })}
                        </tr>
                    }}).collect_view()}
                </tbody>
            </table>
            </div>
            {(more > 0).then(|| view! {
                <p class="muted" id="comparison-more">
                    {format!("and {more} more rows, not listed here: the Markdown above has them all")}
                </p>
            })}
        })
    }
}
