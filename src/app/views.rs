//! The explorer's components: page shell, loaders, file list, filters and the chart panel.
//! They present state and forward user actions; computations live in the shared modules.

use std::sync::Arc;

use leptos::prelude::*;
use leptos::task::spawn_local;

use super::analyze::{DistributionView, RegressionView, SloView, TradeoffView};
use super::improve::ImproveView;
use super::links::{CopyLink, NeedsFiles};
use super::load::{self, SAMPLES};
use super::plotly;
use super::state::{AppState, FileStatus, View};
use crate::analysis::defaults::{
    default_layout, default_metric, default_view, default_x, is_latency, is_throughput,
};
use crate::analysis::export::comparison_text_table;
use crate::analysis::points::measured_dims;
use crate::analysis::quality::{comparison_notes, record_flags};
use crate::charts::{self, format_value, ChartSpec, Series, Theme};
use crate::model::canonical;
use crate::model::{Dim, DimKey, DimValue, Filter, MetricKey};
use crate::columns::{self, Column};

/// Whether the view was picked by the user or a link (`false`: it follows the data).
#[derive(Clone, Copy)]
struct ViewPinned(RwSignal<bool>);

fn prefers_dark() -> bool {
    web_sys::window()
        .and_then(|w| w.match_media("(prefers-color-scheme: dark)").ok().flatten())
        .is_some_and(|m| m.matches())
}

/// The whole page.
#[component]
pub fn App() -> impl IntoView {
    let state = AppState::new(prefers_dark());
    provide_context(state);
    let dragging = RwSignal::new(false);
    let pinned = ViewPinned(RwSignal::new(false));
    provide_context(pinned);

    // A shared link reopens its view: chart choices, filters, and its files (addresses,
    // samples, records carried in the fragment; missing ones are asked for).
    pinned.0.set(load::open_link(state));
    // Until the user (or a link) picks a view, the view follows the data: one that answers the
    // files' question and has something to show.
    Effect::new(move |_| {
        let generation = state.dataset.with(|h| h.generation);
        if generation == 0 || pinned.0.get_untracked() {
            return;
        }
        let view = state.dataset.with_untracked(|h| default_view(&h.dataset));
        if state.chart.with_untracked(|c| c.view != view) {
            state.chart.update(|c| c.view = view);
        }
    });
    // ... and the address follows the view, so reloading or copying it keeps the view.
    Effect::new(move |_| {
        let query = state.address_link().to_query();
        if let Some(w) = web_sys::window() {
            let path = w.location().pathname().unwrap_or_default();
            let url = if query.is_empty() {
                path
            } else {
                format!("{path}?{query}")
            };
            if let Ok(history) = w.history() {
                let _ =
                    history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url));
            }
        }
    });

    let has_files =
        move || state.files.with(|f| !f.is_empty()) || state.needed.with(|n| !n.is_empty());
    view! {
        <div
            class="page"
            class:dark=move || state.dark.get()
            class:dragging=move || dragging.get()
            on:dragover=move |ev: web_sys::DragEvent| {
                ev.prevent_default();
                dragging.set(true);
            }
            on:dragleave=move |ev: web_sys::DragEvent| {
                if ev.related_target().is_none() {
                    dragging.set(false);
                }
            }
            on:drop=move |ev: web_sys::DragEvent| {
                ev.prevent_default();
                dragging.set(false);
                let files = load::dropped_files(&ev);
                if !files.is_empty() {
                    spawn_local(load::load_files(state, files));
                }
            }
        >
            <Header/>
            <main>
                <Loaders/>
                <NeedsFiles/>
                <Show when=has_files fallback=|| view! { <EmptyState/> }>
                    <FileList/>
                    <div class="workspace">
                        <Filters/>
                        <ChartPanel/>
                    </div>
                </Show>
            </main>
            <div class="drop-overlay" aria-hidden="true">"Drop result files to load them"</div>
        </div>
    }
}

#[component]
fn Header() -> impl IntoView {
    let state = expect_context::<AppState>();
    view! {
        <header class="topbar">
            <h1>"benchlens"</h1>
            <span class="tagline">"LLM inference benchmark explorer"</span>
            <span class="spacer"></span>
            <button
                class="ghost"
                id="theme-toggle"
                on:click=move |_| state.dark.update(|d| *d = !*d)
            >
                {move || if state.dark.get() { "Light theme" } else { "Dark theme" }}
            </button>
        </header>
    }
}

/// File picker, paste box and URL box.
#[component]
fn Loaders() -> impl IntoView {
    let state = expect_context::<AppState>();
    let pasted = RwSignal::new(String::new());
    let url = RwSignal::new(String::new());
    let show_paste = RwSignal::new(false);
    view! {
        <section class="loaders" id="drop-zone">
            <div class="drop-hint">
                <strong>"Drop result files anywhere on the page"</strong>
                " — vLLM / SGLang JSON and JSON Lines, CSV, markdown tables, console output. "
                <load::FilePicker id="file-input" label="Choose files…"/>
                <button class="ghost" on:click=move |_| show_paste.update(|s| *s = !*s)>
                    "Paste text"
                </button>
            </div>
            <form
                class="url-row"
                on:submit=move |ev| {
                    ev.prevent_default();
                    let u = url.get_untracked();
                    if !u.trim().is_empty() {
                        url.set(String::new());
                        spawn_local(load::load_url(state, u));
                    }
                }
            >
                <input
                    type="url"
                    id="url-input"
                    placeholder="https://… result file, GitHub file or gist link"
                    prop:value=move || url.get()
                    on:input=move |ev| url.set(event_target_value(&ev))
                />
                <button type="submit">"Fetch"</button>
            </form>
            <Show when=move || show_paste.get()>
                <div class="paste">
                    <textarea
                        id="paste-input"
                        rows="6"
                        placeholder="Paste console output, a markdown table, CSV or JSON"
                        prop:value=move || pasted.get()
                        on:input=move |ev| pasted.set(event_target_value(&ev))
                    ></textarea>
                    <button
                        id="paste-load"
                        on:click=move |_| {
                            let text = pasted.get_untracked();
                            pasted.set(String::new());
                            show_paste.set(false);
                            spawn_local(load::load_text(state, text));
                        }
                    >
                        "Load pasted text"
                    </button>
                </div>
            </Show>
        </section>
    }
}

#[component]
fn EmptyState() -> impl IntoView {
    let state = expect_context::<AppState>();
    view! {
        <section class="empty" id="empty-state">
            <h2>"Compare inference servers in your browser"</h2>
            <p>
                "Nothing leaves this page: files are read and charted locally. "
                "Start with one of the bundled examples:"
            </p>
            <ul class="samples">
                {SAMPLES
                    .iter()
                    .map(|s| {
                        let file = s.file;
                        view! {
                            <li>
                                <button
                                    class="sample"
                                    data-sample=file
                                    on:click=move |_| spawn_local(load::load_sample(state, file))
                                >
                                    <strong>{s.title}</strong>
                                    <span>{s.about}</span>
                                </button>
                            </li>
                        }
                    })
                    .collect_view()}
            </ul>
        </section>
    }
}

#[component]
fn FileList() -> impl IntoView {
    let state = expect_context::<AppState>();
    view! {
        <section class="files">
            <ul id="file-list">
                <For
                    each=move || state.files.get()
                    key=|f| (f.id, format!("{:?}", f.status).len())
                    children=move |f| {
                        let id = f.id;
                        let (class, detail) = match &f.status {
                            FileStatus::Loading(what) => {
                                ("loading", view! {
                                    <span class="spinner" aria-hidden="true"></span>
                                    <span class="status">{what.clone()} "…"</span>
                                }.into_any())
                            }
                            FileStatus::Loaded { format, rows, warnings, note } => {
                                let warnings = warnings.clone();
                                let n_warn = warnings.len();
                                ("loaded", view! {
                                    <span class="format">{format.clone()}</span>
                                    <span class="count">{format!("{} record{}", rows.len(), if rows.len() == 1 { "" } else { "s" })}</span>
                                    {note.clone().map(|n| view! { <span class="note">{n}</span> })}
                                    {(n_warn > 0).then(|| view! {
                                        <details class="warnings">
                                            <summary>{format!("{n_warn} warnings")}</summary>
                                            <ul>{warnings.into_iter().map(|w| view! { <li>{w}</li> }).collect_view()}</ul>
                                        </details>
                                    })}
                                    <Annotate id=id/>
                                }.into_any())
                            }
                            FileStatus::Failed(msg) => {
                                ("failed", view! { <span class="error">{msg.clone()}</span> }.into_any())
                            }
                        };
                        view! {
                            <li class=format!("file {class}") data-file=f.name.clone()>
                                <span class="name">{f.name.clone()}</span>
                                {detail}
                                <button
                                    class="remove ghost"
                                    title="Remove this file"
                                    on:click=move |_| state.remove(id)
                                >
                                    "✕"
                                </button>
                            </li>
                        }
                    }
                />
            </ul>
        </section>
    }
}

/// Lets the user set a missing dimension for every record of one file.
#[component]
fn Annotate(id: u32) -> impl IntoView {
    let state = expect_context::<AppState>();
    let dim = RwSignal::new(Dim::Engine);
    let value = RwSignal::new(String::new());
    let error = RwSignal::new(None::<String>);
    const CHOICES: [Dim; 7] = [
        Dim::Engine,
        Dim::Gpu,
        Dim::Model,
        Dim::GpuCount,
        Dim::EngineVersion,
        Dim::Precision,
        Dim::Dataset,
    ];
    view! {
        <details class="annotate">
            <summary>"set…"</summary>
            <form on:submit=move |ev| {
                ev.prevent_default();
                let result = state.annotate(id, &DimKey::Known(dim.get_untracked()), &value.get_untracked());
                error.set(result.err());
            }>
                <select on:change=move |ev| {
                    if let Some(d) = Dim::from_name(&event_target_value(&ev)) {
                        dim.set(d);
                    }
                }>
                    {CHOICES.iter().map(|d| view! { <option value=d.name()>{d.label()}</option> }).collect_view()}
                </select>
                <input
                    placeholder="value for every record"
                    prop:value=move || value.get()
                    on:input=move |ev| value.set(event_target_value(&ev))
                />
                <button type="submit">"Apply"</button>
                {move || error.get().map(|e| view! { <span class="error">{e}</span> })}
            </form>
        </details>
    }
}

/// Dimensions whose filter is always shown, present in the data or not.
const ALWAYS_FILTERED: [Dim; 5] = [
    Dim::Model,
    Dim::Engine,
    Dim::Gpu,
    Dim::BatchSize,
    Dim::MaxConcurrency,
];

#[component]
fn Filters() -> impl IntoView {
    let state = expect_context::<AppState>();
    let facets = Memo::new(move |_| {
        let filter = state.filter.get();
        let mut facets = state.dataset.with(|h| h.dataset.facets(&filter));
        for d in ALWAYS_FILTERED {
            if !facets.iter().any(|f| f.key == DimKey::Known(d)) {
                facets.push(crate::model::Facet {
                    key: DimKey::Known(d),
                    values: Vec::new(),
                });
            }
        }
        // The always-present dimensions first, then the rest in canonical order.
        facets.sort_by_key(|f| {
            let pos = match &f.key {
                DimKey::Known(d) => ALWAYS_FILTERED.iter().position(|a| a == d),
                DimKey::Tag(_) => None,
            };
            (pos.unwrap_or(usize::MAX), f.key.clone())
        });
        facets
    });
    let measured = Memo::new(move |_| state.dataset.with(|h| measured_dims(&h.dataset)));
    let matching = move || {
        let filter = state.filter.get();
        state.dataset.with(|h| {
            let n = h.dataset.matching(&filter).len();
            format!("{n} of {} records", h.dataset.len())
        })
    };
    view! {
        <aside class="filters" id="filters">
            <div class="filters-head">
                <h2>"Filters"</h2>
                <span id="match-count">{matching}</span>
                <button
                    class="ghost"
                    id="clear-filters"
                    on:click=move |_| state.filter.set(Filter::default())
                >
                    "Clear all"
                </button>
            </div>
            <For
                each=move || facets.get()
                key=|f| format!("{:?}", f)
                children=move |facet| {
                    let key = facet.key.clone();
                    let empty = facet.values.is_empty();
                    let ranged = measured.with_untracked(|m| m.contains(&key))
                        || (facet.values.len() > RANGE_FROM_VALUES
                            && facet.values.iter().all(|v| v.value.as_ref().is_none_or(|v| v.as_f64().is_some())));
                    if ranged {
                        return view! { <RangeFacet facet=facet/> }.into_any();
                    }
                    view! {
                        <fieldset class="facet" data-dim=key.name()>
                            <legend>{key.label()}</legend>
                            {empty.then(|| view! { <span class="muted">"not in the data"</span> })}
                            {facet
                                .values
                                .into_iter()
                                .map(|fv| {
                                    let key = key.clone();
                                    let value = fv.value.clone();
                                    let shown = value
                                        .as_ref()
                                        .map_or(charts::NO_VALUE.to_string(), DimValue::to_string);
                                    view! {
                                        <label class:zero=fv.count == 0>
                                            <input
                                                type="checkbox"
                                                data-value=shown.clone()
                                                prop:checked=fv.selected
                                                on:change=move |_| {
                                                    let key = key.clone();
                                                    let value = value.clone();
                                                    state.filter.update(move |f| {
                                                        let set = f.selected.entry(key).or_default();
                                                        if !set.remove(&value) {
                                                            set.insert(value);
                                                        }
                                                    });
                                                }
                                            />
                                            <span class="value">{shown}</span>
                                            <span class="n">{fv.count}</span>
                                        </label>
                                    }
                                })
                                .collect_view()}
                        </fieldset>
                    }.into_any()
                }
            />
        </aside>
    }
}

/// Numeric dimensions with more values than this are filtered by a range, not checkboxes.
const RANGE_FROM_VALUES: usize = 12;

/// A range filter over a numeric dimension's values (measured lengths, long sweeps): two
/// sliders over the sorted values; the selection is every value between them.
#[component]
fn RangeFacet(facet: crate::model::Facet) -> impl IntoView {
    let state = expect_context::<AppState>();
    let key = facet.key.clone();
    let values: Vec<DimValue> = facet
        .values
        .iter()
        .filter_map(|v| v.value.clone())
        .collect();
    let last = values.len().saturating_sub(1);
    // The current bounds: the first and last selected value, or everything.
    let selected: Vec<usize> = facet
        .values
        .iter()
        .enumerate()
        .filter(|(_, v)| v.selected)
        .map(|(i, _)| i.min(last))
        .collect();
    let lo = selected.first().copied().unwrap_or(0);
    let hi = selected.last().copied().unwrap_or(last);
    let shown = |i: usize| values.get(i).map(DimValue::to_string).unwrap_or_default();
    let (lo_text, hi_text) = (shown(lo), shown(hi));
    let count: usize = facet
        .values
        .iter()
        .filter(|v| v.value.is_some())
        .map(|v| v.count)
        .sum();
    let set_range = {
        let key = key.clone();
        let values = values.clone();
        move |lo: usize, hi: usize| {
            let (lo, hi) = (lo.min(hi), lo.max(hi));
            let key = key.clone();
            let chosen: std::collections::BTreeSet<Option<DimValue>> = if lo == 0 && hi >= last {
                Default::default()
            } else {
                values[lo..=hi.min(last)]
                    .iter()
                    .cloned()
                    .map(Some)
                    .collect()
            };
            state.filter.update(move |f| {
                if chosen.is_empty() {
                    f.selected.remove(&key);
                } else {
                    f.selected.insert(key, chosen);
                }
            });
        }
    };
    let set_lo = set_range.clone();
    view! {
        <fieldset class="facet range" data-dim=key.name()>
            <legend>{key.label()}</legend>
            <span class="range-values" data-range=format!("{lo_text}–{hi_text}")>
                {format!("{lo_text} – {hi_text}")}
            </span>
            <span class="muted">{format!(" ({} values, {count} records)", values.len())}</span>
            <input type="range" class="range-lo" min="0" max=last.to_string() step="1" prop:value=lo.to_string()
                on:change=move |ev| {
                    if let Ok(v) = event_target_value(&ev).parse::<usize>() {
                        set_lo(v, hi);
                    }
                }/>
            <input type="range" class="range-hi" min="0" max=last.to_string() step="1" prop:value=hi.to_string()
                on:change=move |ev| {
                    if let Ok(v) = event_target_value(&ev).parse::<usize>() {
                        set_range(lo, v);
                    }
                }/>
        </fieldset>
    }
}

/// Everything the chart panel draws, derived from state.
#[derive(Clone, Debug, PartialEq)]
struct Resolved {
    spec: ChartSpec,
    series: Arc<Vec<Series>>,
    metrics: Vec<MetricKey>,
    dims: Vec<DimKey>,
    generation: u64,
}

fn resolve(state: AppState) -> Option<Resolved> {
    let filter = state.filter.get();
    let choice = state.chart.get();
    let theme = if state.dark.get() {
        Theme::Dark
    } else {
        Theme::Light
    };
    state.dataset.with(|handle| {
        let ds = &handle.dataset;
        if ds.is_empty() {
            return None;
        }
        let indices = ds.matching(&filter);
        let metrics = ds.metrics_present(&indices);
        // Defaults follow the whole dataset, so narrowing a filter never regroups the chart.
        let x = choice.x.clone().unwrap_or_else(|| default_x(ds));
        let metric = choice
            .active_metric()
            .cloned()
            .filter(|m| metrics.contains(m))
            .or_else(|| default_metric(choice.view, &metrics))?;
        // The point rule: what would merge records into one point becomes series or panels.
        let layout = default_layout(ds, x, choice.series_by.clone(), Some(&metric));
        let spec = ChartSpec {
            kind: choice.view.kind(),
            x: layout.x,
            metric,
            series_by: layout.series_by,
            facet_by: layout.facet_by,
            log2_x: choice.log2_x,
            log_y: choice.log_y,
            theme,
            title: None,
        };
        let series = Arc::new(charts::build_series(ds, &indices, &spec));
        Some(Resolved {
            spec,
            series,
            metrics,
            dims: ds.dim_keys().cloned().collect(),
            generation: handle.generation,
        })
    })
}

#[component]
fn ChartPanel() -> impl IntoView {
    let state = expect_context::<AppState>();
    let resolved = Memo::new(move |_| resolve(state));
    let chart_ref = NodeRef::<leptos::html::Div>::new();
    let chart_error = RwSignal::new(None::<String>);

    // The bridge to plotly.js: redraw in place whenever what is drawn changes.
    Effect::new(move |_| {
        let Some(div) = chart_ref.get() else { return };
        match resolved.get() {
            Some(r) => {
                let figure = state
                    .dataset
                    .with_untracked(|h| charts::plot(&h.dataset, &r.series, &r.spec).to_json());
                chart_error.set(plotly::react(&div, &figure).err());
            }
            None => plotly::purge(&div),
        }
    });

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
    };
    let is_table = move || state.chart.with(|c| c.view == View::Table);
    let is_improve = move || state.chart.with(|c| c.view == View::Improvement);
    let improve_choice = state.improve;
    view! {
        <section class="chart-panel">
            <nav class="tabs" role="tablist">
                {tabs
                    .into_iter()
                    .map(|v| view! {
                        <button
                            role="tab"
                            data-view=v.id()
                            class:active=move || state.chart.with(|c| c.view == v)
                            on:click=move |_| set_view(v)
                        >
                            {v.label()}
                        </button>
                    })
                    .collect_view()}
            </nav>
            <Exports chart_ref=chart_ref resolved=resolved/>
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
            <div class="chart-area" class:hidden=move || is_table() || is_improve() || is_analysis()>
            <ChartControls resolved=resolved/>
            {move || chart_error.get().map(|e| view! { <p class="error">{e}</p> })}
            {move || match resolved.get() {
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
                _ => None,
            }}
            <div class="chart" id="chart" node_ref=chart_ref></div>
            <ComparisonTableView resolved=resolved/>
            </div>
        </section>
    }
}

fn metric_options(view: View, metrics: &[MetricKey]) -> Vec<MetricKey> {
    metrics
        .iter()
        .filter(|m| match view {
            View::Latency => is_latency(m),
            View::Throughput => is_throughput(m),
            _ => true,
        })
        .cloned()
        .collect()
}

#[component]
fn ChartControls(resolved: Memo<Option<Resolved>>) -> impl IntoView {
    let state = expect_context::<AppState>();
    let choice = move || state.chart.get();
    view! {
        {move || {
            let r = resolved.get()?;
            let c = choice();
            let options = metric_options(c.view, &r.metrics);
            let current_metric = r.spec.metric.name();
            let current_x = r.spec.x.name();
            let current_series = r.spec.series_by.first().map(DimKey::name).unwrap_or_default();
            let numeric_dims: Vec<DimKey> = r.dims.iter().filter(|k| match k {
                DimKey::Known(d) => d.kind() != crate::model::DimKind::Text,
                DimKey::Tag(_) => false,
            }).cloned().collect();
            let view_now = c.view;
            Some(view! {
                <div class="controls">
                    <label>"Metric "
                        <select id="metric-select" on:change=move |ev| {
                            let m = MetricKey::from_name(&event_target_value(&ev));
                            state.chart.update(|c| c.set_active_metric(m));
                        }>
                            {options.into_iter().map(|m| {
                                let name = m.name();
                                let selected = name == current_metric;
                                view! { <option value=name selected=selected>{m.label()}</option> }
                            }).collect_view()}
                        </select>
                    </label>
                    <label>"X axis "
                        <select id="x-select" on:change=move |ev| {
                            let x = DimKey::from_name(&event_target_value(&ev));
                            state.chart.update(|c| c.x = x);
                        }>
                            {numeric_dims.into_iter().map(|k| {
                                let name = k.name();
                                let selected = name == current_x;
                                view! { <option value=name selected=selected>{k.label()}</option> }
                            }).collect_view()}
                        </select>
                    </label>
                    <label>"Series by "
                        <select id="series-select" on:change=move |ev| {
                            let v = event_target_value(&ev);
                            let by = if v.is_empty() { Vec::new() } else { DimKey::from_name(&v).into_iter().collect() };
                            state.chart.update(|c| c.series_by = Some(by));
                        }>
                            <option value="" selected=current_series.is_empty()>"(one series)"</option>
                            {r.dims.iter().map(|k| {
                                let name = k.name();
                                let selected = name == current_series;
                                view! { <option value=name selected=selected>{k.label()}</option> }
                            }).collect_view()}
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

#[component]
fn ComparisonTableView(resolved: Memo<Option<Resolved>>) -> impl IntoView {
    let state = expect_context::<AppState>();
    move || {
        let r = resolved.get()?;
        if state.chart.with(|c| c.view == View::Scaling)
            || charts::series_names(&r.series).len() < 2
        {
            return None;
        }
        let table = charts::comparison_table(&r.series, &r.spec.metric);
        let facet = r.spec.facet_by.clone();
        let markdown =
            comparison_text_table(&table, facet.as_ref(), &r.spec.x, &r.spec.metric).to_markdown();
        let notes = state
            .dataset
            .with_untracked(|h| comparison_notes(&h.dataset, &r.series, &table));
        let unit = r
            .spec
            .metric
            .unit()
            .map(|u| format!(" ({u})"))
            .unwrap_or_default();
        let has_facets = facet.is_some() && table.rows.iter().any(|row| row.facet.is_some());
        let any_row_notes = notes.rows.iter().any(|n| !n.is_empty());
        Some(view! {
            <details class="export">
                <summary>"Markdown for a pull request"</summary>
                <textarea id="comparison-markdown" readonly rows="8">{markdown}</textarea>
            </details>
            {(!notes.shared.is_empty()).then(|| view! {
                <p class="muted" id="comparison-shared-notes">
                    {format!("Every row: {}.", notes.shared.join("; "))}
                </p>
            })}
            <div class="table-scroll">
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
                    {table.rows.into_iter().zip(notes.rows).map(|(row, flags)| {
                        view! {
                        <tr>
                            {has_facets.then(|| view! {
                                <td>{row.facet.as_ref().map_or(charts::NO_VALUE.to_string(), DimValue::to_string)}</td>
                            })}
                            <td>{row.x.to_string()}</td>
                            {row.values.iter().map(|v| view! {
                                <td class="num">{v.map(format_value).unwrap_or_else(|| "—".into())}</td>
                            }).collect_view()}
                            <td class="fastest">{row.fastest.unwrap_or_else(|| "—".into())}</td>
                            <td class="num">{row.faster_by_pct.map(|p| format!("{p:.2}%")).unwrap_or_else(|| "—".into())}</td>
                            {any_row_notes.then(|| view! { <td class="flags">{flags}</td> })}
                        </tr>
                    }}).collect_view()}
                </tbody>
            </table>
            </div>
        })
    }
}

/// Rows shown at once in the table view; sorting and filtering still cover every record.
const TABLE_ROWS: usize = 500;

#[component]
fn TableView() -> impl IntoView {
    let state = expect_context::<AppState>();
    let chosen = RwSignal::new(None::<Vec<Column>>);
    let sort = RwSignal::new(None::<(Column, bool)>);
    let data = Memo::new(move |_| {
        let filter = state.filter.get();
        let (chosen, sort) = (chosen.get(), sort.get());
        state.dataset.with(|handle| {
            let ds = &handle.dataset;
            let mut indices = ds.matching(&filter);
            let available = columns::available_columns(ds, &indices);
            let columns: Vec<Column> = chosen
                .map(|c| c.into_iter().filter(|c| available.contains(c)).collect())
                .unwrap_or_else(|| columns::default_columns(&available));
            if let Some((col, desc)) = sort {
                columns::sort_indices(ds, &mut indices, &col, desc);
            }
            let total = indices.len();
            let rows: Vec<Vec<String>> = indices
                .iter()
                .take(TABLE_ROWS)
                .map(|&i| {
                    let r = &ds.records()[i];
                    let mut row: Vec<String> = columns.iter().map(|c| c.cell(r)).collect();
                    let flags: Vec<String> = record_flags(r).into_iter().map(|f| f.text).collect();
                    row.push(flags.join("; "));
                    row
                })
                .collect();
            (available, columns, rows, total)
        })
    });
    let toggle_column = move |col: Column| {
        let current = data.with_untracked(|d| d.1.clone());
        let mut next = current;
        if let Some(pos) = next.iter().position(|c| c == &col) {
            next.remove(pos);
        } else {
            next.push(col);
        }
        chosen.set(Some(next));
    };
    view! {
        {move || {
            let (available, columns, rows, total) = data.get();
            let sorted = sort.get();
            view! {
                <details class="column-chooser">
                    <summary>"Columns…"</summary>
                    <div class="column-list">
                        {available.into_iter().map(|c| {
                            let on = columns.contains(&c);
                            let header = c.header();
                            let name = c.name();
                            view! {
                                <label>
                                    <input type="checkbox" data-column=name prop:checked=on
                                        on:change=move |_| toggle_column(c.clone())/>
                                    {header}
                                </label>
                            }
                        }).collect_view()}
                    </div>
                </details>
                <p class="muted" id="table-count">
                    {if total > TABLE_ROWS {
                        format!("first {TABLE_ROWS} of {total} records (sorting covers all)")
                    } else {
                        format!("{total} records")
                    }}
                </p>
                <div class="table-scroll">
                    <table class="records" id="records-table">
                        <thead><tr>
                            {columns.iter().map(|c| {
                                let col = c.clone();
                                let arrow = match &sorted {
                                    Some((s, desc)) if s == c => if *desc { " ▼" } else { " ▲" },
                                    _ => "",
                                };
                                let numeric = c.is_numeric();
                                view! {
                                    <th class:num=numeric data-column=c.name() on:click=move |_| {
                                        let col = col.clone();
                                        sort.update(|s| {
                                            *s = match s.take() {
                                                Some((c, desc)) if c == col => Some((c, !desc)),
                                                _ => Some((col, false)),
                                            }
                                        });
                                    }>{c.header()}{arrow}</th>
                                }
                            }).collect_view()}
                            <th data-column="flags">"Data quality"</th>
                        </tr></thead>
                        <tbody>
                            {rows.into_iter().map(|row| view! {
                                <tr>{row.into_iter().zip(columns.iter().map(Column::is_numeric).chain([false])).map(|(cell, numeric)| view! {
                                    <td class:num=numeric>{cell}</td>
                                }).collect_view()}</tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                </div>
            }
        }}
    }
}

/// Saves text as a file through a temporary object URL.
fn download(name: &str, mime: &str, text: &str) {
    let parts = js_sys::Array::of1(&wasm_bindgen::JsValue::from_str(text));
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type(mime);
    let Ok(blob) = web_sys::Blob::new_with_str_sequence_and_options(&parts, &opts) else {
        return;
    };
    let Ok(url) = web_sys::Url::create_object_url_with_blob(&blob) else {
        return;
    };
    let anchor = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.create_element("a").ok())
        .and_then(|a| wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlAnchorElement>(a).ok());
    if let Some(a) = anchor {
        a.set_href(&url);
        a.set_download(name);
        a.click();
    }
    let _ = web_sys::Url::revoke_object_url(&url);
}

/// Downloads of the filtered records and the chart, and the shareable link.
#[component]
fn Exports(
    chart_ref: NodeRef<leptos::html::Div>,
    resolved: Memo<Option<Resolved>>,
) -> impl IntoView {
    let state = expect_context::<AppState>();
    let filtered = move || {
        let filter = state.filter.get_untracked();
        state
            .dataset
            .with_untracked(|h| h.dataset.filtered(&filter).cloned().collect::<Vec<_>>())
    };
    let image = move |format: &'static str| {
        let Some(div) = chart_ref.get_untracked() else {
            return;
        };
        let name = resolved
            .get_untracked()
            .map(|r| format!("benchlens-{}-by-{}", r.spec.metric.name(), r.spec.x.name()))
            .unwrap_or_else(|| "benchlens-chart".into());
        plotly::download_image(&div, format, &name);
    };
    view! {
        <div class="exports" id="exports">
            <span class="muted">"Export:"</span>
            <button class="ghost" id="export-csv" on:click=move |_| download("benchlens-records.csv", "text/csv", &canonical::to_csv(&filtered()))>"records CSV"</button>
            <button class="ghost" id="export-json" on:click=move |_| download("benchlens-records.json", "application/json", &canonical::to_json(&filtered()))>"records JSON"</button>
            <button class="ghost" id="export-png" on:click=move |_| image("png")>"chart PNG"</button>
            <button class="ghost" id="export-svg" on:click=move |_| image("svg")>"chart SVG"</button>
            <CopyLink/>
        </div>
    }
}
