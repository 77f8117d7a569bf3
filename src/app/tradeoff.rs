//! The trade-off view: throughput (or what it costs) against latency (or interactivity) per
//! series with their Pareto frontiers, read at a target and summed up one number per curve.
//! Its numbers and figure come from [`crate::analysis::tradeoff`], worked out in steps so that
//! a million points never hold the page for long.

use std::sync::Arc;

use leptos::prelude::*;
use leptos::task::spawn_local;

use super::analyze::{series_by, text_table_view};
use super::browser::yield_to_browser;
use super::plotly;
use super::state::AppState;
use super::widgets::{markdown_export, options, param_input, ChoiceMenu};
use crate::analysis::economics::Assumptions;
use crate::analysis::tradeoff::{
    assemble_plot, assumed_in, assumptions_used, at_target, finish_series, overview_as_typed,
    series_traces, target_text_table, AssumedFor, LatencyAxis, Overview, PlotFrame, ThroughputAxis,
    TradeoffGroups, TradeoffSeries, TradeoffSpec, MAX_FRONTIER_DRAWN,
};
use crate::charts::format_value;
use crate::charts::plotly::Plot;
use crate::model::{Dataset, FilterPass};
use crate::views::analysis::{frontier_rows, parse_numbers, parse_target, FrontierRow};

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

/// The trade-off's series and what the view shows of them that the target and the overview's
/// settings do not change, worked out by [`compute_tradeoff`].
struct Computed {
    spec: TradeoffSpec,
    series: Vec<TradeoffSeries>,
    /// The chart's figure, when any series has a point.
    figure: Option<Plot>,
    /// The frontier table's rows and how many more there are.
    frontier: (Vec<FrontierRow>, usize),
    /// What the cost or energy axis assumed, one line per GPU.
    assumed: Vec<String>,
}

/// Most milliseconds of work [`compute_tradeoff`] does before letting the browser run (paint,
/// take a click): with its steps' own length, what keeps every task of a million points'
/// trade-off short.
const STEP_MS: f64 = 25.0;

/// Rows grouped into series in one step of [`compute_tradeoff`].
const ROWS_PER_STEP: usize = 20_000;

/// Yields to the browser once [`STEP_MS`] have gone by since it last did; `None` when the
/// work has been superseded meanwhile (`current()` no longer holds).
struct Pace {
    since: f64,
}

impl Pace {
    fn new() -> Pace {
        Pace {
            since: js_sys::Date::now(),
        }
    }

    async fn step(&mut self, current: &impl Fn() -> bool) -> Option<()> {
        if js_sys::Date::now() - self.since < STEP_MS {
            return Some(());
        }
        yield_to_browser().await;
        self.since = js_sys::Date::now();
        current().then_some(())
    }
}

/// The trade-off of the filtered `pass` of dataset `generation` in steps between which the
/// browser runs, none long: rows grouped a run at a time, each series' frontier, each series'
/// traces, then the figure and the tables ([`crate::analysis::tradeoff`]'s pieces, which
/// `tradeoff` and `tradeoff_plot` take at once). `None` when superseded (`current()` false)
/// or the dataset changed on the way.
async fn compute_tradeoff(
    state: AppState,
    spec: TradeoffSpec,
    generation: u64,
    pass: Arc<FilterPass>,
    current: impl Fn() -> bool,
) -> Option<Computed> {
    let at = |f: &mut dyn FnMut(&Dataset)| state.with_dataset_at(generation, f);
    let mut pace = Pace::new();
    let mut groups = TradeoffGroups::default();
    for rows in pass.rows.chunks(ROWS_PER_STEP) {
        at(&mut |ds| groups.add(ds, rows, &spec))?;
        pace.step(&current).await?;
    }
    let (mut series, mut named, mut groups) = (Vec::new(), Vec::new(), Some(groups));
    at(&mut |ds| named = groups.take().map_or_else(Vec::new, |g| g.into_series(ds)))?;
    for (name, points) in named {
        series.push(finish_series(name, points, &spec));
        pace.step(&current).await?;
    }
    let mut figure = None;
    if !series.is_empty() {
        let frame = PlotFrame::new(&series);
        let mut traces = Vec::with_capacity(series.len());
        for (i, s) in series.iter().enumerate() {
            at(&mut |ds| traces.push(series_traces(ds, &frame, i, s, &spec)))?;
            pace.step(&current).await?;
        }
        let mut assumed = Vec::new();
        at(&mut |ds| assumed = assumed_in(ds, &series, &spec))?;
        figure = Some(assemble_plot(&frame, &series, traces, &assumed, &spec));
        pace.step(&current).await?;
    }
    let frontier = frontier_rows(&series, MAX_FRONTIER_DRAWN);
    let mut assumed = Vec::new();
    at(&mut |ds| assumed = assumptions_used(ds, &pass.rows, &spec))?;
    Some(Computed {
        spec,
        series,
        figure,
        frontier,
        assumed: assumed.iter().map(AssumedFor::text).collect(),
    })
}

/// Throughput (or its cost) against latency (or interactivity) per series, with each series'
/// Pareto frontier, the prices and powers it assumed, and the frontiers read at a target.
///
/// The series and the chart are worked out in steps ([`compute_tradeoff`]) whenever the
/// axes, the split, the prices or the filtered records change, and drawn in a task of their
/// own; a newer change supersedes work under way, so an earlier one never overwrites it. The
/// readings at a target and the overview follow the series without working them out again.
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
    let computed = RwSignal::new(None::<Arc<Computed>>);
    let busy = RwSignal::new(false);
    let spec_error = RwSignal::new(None::<String>);
    let chart_error = RwSignal::new(None::<String>);
    let jobs = StoredValue::new(0u64);
    Effect::new(move |_| {
        let assumptions = Assumptions::parse_list(&prices.get()).and_then(|prices| {
            Ok(Assumptions {
                prices,
                kw: Assumptions::parse_list(&powers.get())?,
            })
        });
        let (generation, pass) = state.filtered_rows();
        let job = jobs.get_value().wrapping_add(1);
        jobs.set_value(job);
        let assumptions = match assumptions {
            Ok(a) => a,
            Err(e) => {
                spec_error.set(Some(e.to_string()));
                computed.set(None);
                busy.set(false);
                plotly::purge_node(node);
                return;
            }
        };
        spec_error.set(None);
        let spec = TradeoffSpec {
            throughput: throughput.get(),
            latency: latency.get(),
            series_by: state.dataset.with(|h| series_by(state, &h.dataset)),
            theme: state.theme(),
            assumptions,
        };
        busy.set(true);
        spawn_local(async move {
            let current = move || jobs.get_value() == job;
            yield_to_browser().await;
            if !current() {
                return;
            }
            let Some(c) = compute_tradeoff(state, spec, generation, pass, current).await else {
                return;
            };
            // The chart, then the tables: each a task of its own.
            yield_to_browser().await;
            if !current() {
                return;
            }
            chart_error.set(plotly::draw(node, c.figure.as_ref()).err());
            yield_to_browser().await;
            if current() {
                computed.set(Some(Arc::new(c)));
                busy.set(false);
            }
        });
    });
    // Read from the series as they are: a target or an overview setting changes only these.
    let readings = move || {
        let target = parse_target(&target.get(), "target")?;
        let cap = parse_target(&cap.get(), "limit")?;
        let levels = parse_numbers(&levels.get(), "level")?;
        let band = parse_numbers(&band.get(), "band end")?;
        let baseline = baseline.get();
        computed.with(|c| {
            let Some(c) = c else {
                return Ok((None, None));
            };
            let (series, spec) = (&c.series, &c.spec);
            let at =
                target.map(|t| target_text_table(&at_target(series, spec, t, cap), spec, t, cap));
            let summary = overview_as_typed(series, spec, levels, &band, &baseline)?
                .map(|o| (o, spec.throughput.higher_is_better()));
            Ok::<_, String>((at, summary))
        })
    };
    let error = move || spec_error.get().or_else(|| readings().err());
    // What the view is doing instead of showing a chart, if anything.
    let status = move || {
        if busy.get() {
            Some(("tradeoff-busy", "Working out the trade-off…".to_string()))
        } else if computed.with(|c| c.as_ref().is_some_and(|c| c.figure.is_none())) {
            Some((
                "tradeoff-none",
                format!(
                    "No filtered record has both axes' metrics{}.",
                    throughput.get().needs()
                ),
            ))
        } else {
            None
        }
    };
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
        {move || error().map(|e| view! { <p class="error" id="tradeoff-error">{e}</p> })}
        {move || status().map(|(id, text)| view! { <p class="muted" id=id role="status">{text}</p> })}
        {plotly::error_note(chart_error)}
        <div class="chart" id="tradeoff-chart" node_ref=node aria-busy=move || busy.get().to_string()></div>
        {move || readings().ok().and_then(|r| r.1).map(|(o, y_hib)| view! {
            <OverviewTable overview=o y_hib=y_hib baseline=baseline levels=levels band=band sort_by=sort_by/>
        })}
        {move || computed.get().map(|c| {
            let (frontier, more) = c.frontier.clone();
            let assumed = c.assumed.clone();
            let at = readings().ok().and_then(|r| r.0);
            view! {
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
                    <thead><tr><th>"Series"</th><th class="num">{c.spec.latency.label()}</th><th class="num">{c.spec.throughput.label()}</th><th class="num">"Records"</th></tr></thead>
                    <tbody>{frontier.into_iter().map(|(s, l, t, n)| view! {
                        <tr><td>{s}</td><td class="num">{format_value(l)}</td><td class="num">{format_value(t)}</td><td class="num">{n}</td></tr>
                    }).collect_view()}</tbody>
                </table>
                {(more > 0).then(|| view! {
                    <p class="muted" id="frontier-more">{format!("and {more} more frontier points (not listed)")}</p>
                })}
            })}
        }})}
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
                                    // Not distinguishable from the baseline: no colour.
                                    let heat = k.checked_sub(1)
                                        .filter(|&f| row.apart.get(f) != Some(&Some(false)))
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
