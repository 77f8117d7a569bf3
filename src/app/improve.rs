//! The improvement view: pick a dimension and two of its values, see how much better the
//! candidate is than the baseline on every matched configuration (bars, heatmap, table).
//! What it shows comes from [`crate::views::improvement`] and [`crate::analysis`]; this file
//! only presents it.

use leptos::prelude::*;

use super::plotly;
use super::state::AppState;
use super::widgets::{markdown_export, options, shared_notes};
use crate::analysis::improvement::{
    self as analysis, value_with_interval, ImprovementSort, ImprovementTable,
};
use crate::analysis::quality::TableNotes;
use crate::model::{DimKey, MetricKey};
use crate::views::improvement::improvement_contents;
use crate::views::improvement::ImproveChoice;

/// The improvement view.
#[component]
pub fn ImproveView(
    /// The baseline, candidate and grouping the user picked.
    choice: RwSignal<ImproveChoice>,
) -> impl IntoView {
    let state = expect_context::<AppState>();
    let contents = Memo::new(move |_| {
        let c = choice.get();
        state.with_filtered(|ds, rows| improvement_contents(ds, rows, &c))
    });
    let bars_ref = NodeRef::<leptos::html::Div>::new();
    let heat_ref = NodeRef::<leptos::html::Div>::new();
    let chart_error = RwSignal::new(None::<String>);
    Effect::new(move |_| {
        let theme = state.theme();
        let contents = contents.get();
        let table = contents.as_ref().and_then(|d| d.outcome.as_ref().ok());
        let bars = table
            .zip(contents.as_ref().and_then(|d| d.bars_by.clone()))
            .and_then(|(t, by)| {
                let groups = analysis::improvement_by(t, &by).ok()?;
                Some(crate::analysis::improvement::plot::improvement_bars_plot(
                    t, &by, &groups, theme,
                ))
            });
        let heat = table
            .zip(contents.as_ref().and_then(|d| d.heat.clone()))
            .and_then(|(t, (x, y))| {
                let cells = analysis::improvement_heatmap(t, &x, &y).ok()?;
                Some(crate::analysis::improvement::plot::improvement_heatmap_plot(t, &cells, theme))
            });
        let drawn_bars = plotly::draw(bars_ref, bars.as_ref());
        let drawn_heat = plotly::draw(heat_ref, heat.as_ref());
        chart_error.set(drawn_bars.and(drawn_heat).err());
    });

    view! {
        <div class="improve" id="improve-view">
            {move || contents.get().map(|d| {
                let dim_now = d.dim.name();
                let values = d.dims.iter().find(|(k, _)| *k == d.dim).map(|(_, v)| v.clone()).unwrap_or_default();
                let key_dims: Vec<DimKey> = d.outcome.as_ref().map(|t| t.matching.key_dims.clone()).unwrap_or_default();
                let pinned_dim = d.dim.clone();
                let select_value = move |is_base: bool, current: String, values: Vec<String>| {
                    let id = if is_base { "baseline-select" } else { "candidate-select" };
                    let pinned_dim = pinned_dim.clone();
                    view! {
                        <select id=id on:change=move |ev| {
                            let v = Some(event_target_value(&ev));
                            // Pin the compared dimension too, so a shared link is complete.
                            let dim = Some(pinned_dim.clone());
                            choice.update(|c| {
                                c.dim = dim;
                                if is_base { c.baseline = v } else { c.candidate = v }
                            });
                        }>
                            {options(values.into_iter().map(|v| (v.clone(), v)), &current)}
                        </select>
                    }
                };
                view! {
                    <div class="controls">
                        <label>"Compare "
                            <select id="compare-dim" on:change=move |ev| {
                                let k = DimKey::from_name(&event_target_value(&ev));
                                choice.update(|c| { c.dim = k; c.baseline = None; c.candidate = None; c.sort = None; });
                            }>
                                {options(d.dims.iter().map(|(k, _)| (k.name(), k.label())), &dim_now)}
                            </select>
                        </label>
                        <label>"baseline " {select_value(true, d.baseline.clone(), values.clone())}</label>
                        <label>"candidate " {select_value(false, d.candidate.clone(), values)}</label>
                        <label>"Metric "
                            <select id="improve-metric" on:change=move |ev| {
                                let m = MetricKey::from_name(&event_target_value(&ev));
                                choice.update(|c| c.metric = m);
                            }>
                                {options(d.metrics.iter().map(|m| (m.name(), m.label())), &d.metric.name())}
                            </select>
                        </label>
                    </div>
                    <details class="match-key">
                        <summary>"Match key…"</summary>
                        <p class="muted">"Records are matched on these dimensions; untick one to ignore it."</p>
                        {key_dims.iter().chain(d.outcome.as_ref().map(|t| t.ignored_dims.clone()).unwrap_or_default().iter()).map(|k| {
                            let k = k.clone();
                            let ignored = choice.with_untracked(|c| c.ignore.contains(&k));
                            let name = k.name();
                            let label = k.label();
                            view! {
                                <label class="check">
                                    <input type="checkbox" data-key=name prop:checked=!ignored on:change=move |_| {
                                        let k = k.clone();
                                        choice.update(move |c| { if !c.ignore.remove(&k) { c.ignore.insert(k); } });
                                    }/>
                                    {label}
                                </label>
                            }
                        }).collect_view()}
                    </details>
                    {match &d.outcome {
                        Err(e) => view! { <p class="error" id="improve-error">{e.clone()}</p> }.into_any(),
                        Ok(t) => view! {
                            <p class="rule" id="improve-rule">{t.rule.clone()}</p>
                            {t.reported_note().map(|n| view! { <p class="muted" id="improve-reported">{n}</p> })}
                            <p class="muted" id="improve-summary">
                                {t.summary()}
                                {(!t.matching.tied_dims.is_empty()).then(|| format!(
                                    "; not matched on {} (one value per side)",
                                    t.matching.tied_dims.iter().map(DimKey::name).collect::<Vec<_>>().join(", ")
                                ))}
                                {t.mean_improvement_pct().map(|m| format!("; mean improvement {m:.2}%"))}
                            </p>
                        }.into_any(),
                    }}
                }
            })}
            {plotly::error_note(chart_error)}
            <div class="chart small" id="improve-bars" node_ref=bars_ref></div>
            <div class="chart" id="improve-heatmap" node_ref=heat_ref></div>
            {move || contents.get().and_then(|d| d.outcome.ok().map(|t| improvement_table(t, d.notes, choice)))}
        </div>
    }
}

/// Rows shown at once; sorting covers every row.
const ROWS: usize = 300;

/// The matched configurations as a sortable table, with its Markdown and notes.
fn improvement_table(
    t: ImprovementTable,
    notes: TableNotes,
    choice: RwSignal<ImproveChoice>,
) -> impl IntoView {
    let any_row_notes = notes.rows.iter().any(|n| !n.is_empty());
    let flags = notes.rows;
    let sort_by = move |column: ImprovementSort| choice.update(|c| c.sort = c.next_sort(column));
    let markdown = t.to_text_table().to_markdown();
    let total = t.rows.len();
    let reported = t.has_reported();
    let noisy = t.has_intervals();
    let header = |label: String, column: ImprovementSort| {
        view! { <th on:click=move |_| sort_by(column)>{label}</th> }
    };
    view! {
        {markdown_export(Some("improve-markdown"), 8, markdown)}
        {shared_notes("improve-shared-notes", &notes.shared)}
        <p class="muted">{if total > ROWS { format!("first {ROWS} of {total} rows (sorting covers all)") } else { format!("{total} rows") }}</p>
        <div class="table-scroll" tabindex="0" role="region" aria-label="Table, scrolls">
            <table class="records" id="improve-table">
                <thead><tr>
                    {t.matching.key_dims.iter().enumerate().map(|(i, k)| header(k.label(), ImprovementSort::Key(i))).collect_view()}
                    {header(format!("{} (baseline)", t.baseline), ImprovementSort::Baseline)}
                    {header(format!("{} (candidate)", t.candidate), ImprovementSort::Candidate)}
                    {header("Improvement (%)".to_string(), ImprovementSort::Improvement)}
                    {reported.then(|| header("Improvement in the file (%)".to_string(), ImprovementSort::Reported))}
                    {noisy.then(|| view! { <th title="95 % intervals of repeated runs (mean ± t·s/√n) or the file's standard deviation; overlapping intervals cannot be told apart">"Noise"</th> })}
                    {any_row_notes.then(|| view! { <th>"Data quality"</th> })}
                </tr></thead>
                <tbody>
                    {t.rows.iter().zip(flags).take(ROWS).map(|(r, flag)| view! {
                        <tr>
                            {r.key.iter().map(|v| view! { <td>{v.as_ref().map(|v| v.to_string()).unwrap_or_default()}</td> }).collect_view()}
                            <td class="num" title=r.baseline_interval.map(|i| i.describe())>{value_with_interval(r.baseline_value, r.baseline_interval.as_ref())}</td>
                            <td class="num" title=r.candidate_interval.map(|i| i.describe())>{value_with_interval(r.candidate_value, r.candidate_interval.as_ref())}</td>
                            <td class="num" class:better=r.improvement_pct.is_some_and(|p| p > 0.0) class:worse=r.improvement_pct.is_some_and(|p| p < 0.0)>
                                {r.improvement_pct.map(|p| format!("{p:.6}")).unwrap_or_else(|| "—".into())}
                            </td>
                            {reported.then(|| view! {
                                <td class="num reported">{r.reported_pct.map(|p| format!("{p:.6}")).unwrap_or_else(|| "—".into())}</td>
                            })}
                            {noisy.then(|| view! { <td class="noise">{r.noise_text().unwrap_or("—")}</td> })}
                            {any_row_notes.then(|| view! { <td class="flags">{flag}</td> })}
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
        </div>
    }
}
