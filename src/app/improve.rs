//! The improvement view: pick a dimension and two of its values, see how much better the
//! candidate is than the baseline on every matched configuration (bars, heatmap, table).
//! All numbers come from [`crate::analysis`]; this file only presents them.

use leptos::prelude::*;

use super::plotly;
use super::state::{AppState, ImproveChoice};
use super::widgets::{markdown_export, options, shared_notes};
use crate::analysis::defaults::{
    default_compare_dim, default_compare_metric, default_improvement_groups, default_sides,
};
use crate::analysis::improvement::{
    self as analysis, ImprovementSort, ImprovementSpec, ImprovementTable,
};
use crate::analysis::quality::{improvement_notes, TableNotes};
use crate::charts::format_value;
use crate::model::{Dataset, DimKey, DimValue, MetricKey};

/// Everything the improvement view shows: the menus, the sides and metric in force, the
/// comparison (or why there is none), its notes and how its charts group.
#[derive(Clone, Debug, PartialEq)]
struct ImprovementContents {
    dims: Vec<(DimKey, Vec<String>)>,
    metrics: Vec<MetricKey>,
    dim: DimKey,
    baseline: String,
    candidate: String,
    metric: MetricKey,
    outcome: Result<ImprovementTable, String>,
    /// Data-quality notes (failed requests, inferred values, length mismatch): those of every
    /// row once, the rest per row.
    notes: TableNotes,
    bars_by: Option<DimKey>,
    heat: Option<(DimKey, DimKey)>,
}

fn value_of(ds: &Dataset, key: &DimKey, shown: &str) -> Option<DimValue> {
    ds.column(key)?
        .dict
        .iter()
        .find(|v| v.to_string() == shown)
        .cloned()
}

fn derive(ds: &Dataset, indices: &[usize], c: &ImproveChoice) -> Option<ImprovementContents> {
    let dims: Vec<(DimKey, Vec<String>)> = ds
        .dim_keys()
        .filter_map(|k| {
            let col = ds.column(k)?;
            (col.dict.len() >= 2)
                .then(|| (k.clone(), col.dict.iter().map(|v| v.to_string()).collect()))
        })
        .collect();
    let dim = c
        .dim
        .clone()
        .filter(|d| dims.iter().any(|(k, _)| k == d))
        .or_else(|| default_compare_dim(ds))
        .or_else(|| dims.first().map(|(k, _)| k.clone()))?;
    let values = &dims.iter().find(|(k, _)| *k == dim)?.1;
    let metrics = ds.metrics_present(indices);
    let metric = c
        .metric
        .clone()
        .filter(|m| metrics.contains(m))
        .or_else(|| default_compare_metric(&metrics))?;
    // Sides the user has not chosen: the first and last value, the candidate being the one that
    // is better in more matched pairs than it is worse; with nothing matched, first and last.
    let (default_base, default_cand) = default_sides(ds, indices, &dim, &metric)
        .map(|(b, c)| (b.to_string(), c.to_string()))
        .unwrap_or_else(|| (values[0].clone(), values[values.len() - 1].clone()));
    let pick = |chosen: &Option<String>, fallback: &String| {
        chosen
            .clone()
            .filter(|v| values.contains(v))
            .unwrap_or_else(|| fallback.clone())
    };
    let baseline = pick(&c.baseline, &default_base);
    let candidate = pick(&c.candidate, &default_cand);
    let mut spec = ImprovementSpec::new(
        dim.clone(),
        value_of(ds, &dim, &baseline)?,
        value_of(ds, &dim, &candidate)?,
        metric.clone(),
    );
    for d in &c.ignore {
        spec = spec.ignoring(d.clone());
    }
    let outcome = analysis::improvement(ds, indices, &spec).map(|mut t| {
        if let Some((col, desc)) = c.sort {
            let by = match col {
                usize::MAX => ImprovementSort::Improvement,
                n if n == usize::MAX - 1 => ImprovementSort::Baseline,
                n if n == usize::MAX - 2 => ImprovementSort::Candidate,
                n if n == usize::MAX - 3 => ImprovementSort::Reported,
                n => ImprovementSort::Key(n),
            };
            t.sort(by, desc);
        }
        t
    });
    let (bars_by, heat) = match &outcome {
        Ok(t) => {
            let (bars_default, heat_default) = default_improvement_groups(t);
            let bars_by = c
                .bars_by
                .clone()
                .filter(|k| t.key_dims.contains(k))
                .or(bars_default);
            let heat = c
                .heat
                .clone()
                .filter(|(x, y)| t.key_dims.contains(x) && t.key_dims.contains(y))
                .or(heat_default);
            (bars_by, heat)
        }
        Err(_) => (None, None),
    };
    let notes = match &outcome {
        Ok(t) => improvement_notes(ds, &t.rows),
        Err(_) => TableNotes::default(),
    };
    Some(ImprovementContents {
        notes,
        dims,
        metrics,
        dim,
        baseline,
        candidate,
        metric,
        outcome: outcome.map_err(|e| e.to_string()),
        bars_by,
        heat,
    })
}

/// The improvement view.
#[component]
pub fn ImproveView(
    /// The baseline, candidate and grouping the user picked.
    choice: RwSignal<ImproveChoice>,
) -> impl IntoView {
    let state = expect_context::<AppState>();
    let contents = Memo::new(move |_| {
        let filter = state.filter.get();
        let c = choice.get();
        state.dataset.with(|h| {
            let indices = h.dataset.matching(&filter);
            derive(&h.dataset, &indices, &c)
        })
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
                Some(analysis::improvement_bars_plot(t, &by, &groups, theme).to_json())
            });
        let heat = table
            .zip(contents.as_ref().and_then(|d| d.heat.clone()))
            .and_then(|(t, (x, y))| {
                let cells = analysis::improvement_heatmap(t, &x, &y).ok()?;
                Some(analysis::improvement_heatmap_plot(t, &cells, theme).to_json())
            });
        let drawn_bars = plotly::draw(bars_ref, bars.as_deref());
        let drawn_heat = plotly::draw(heat_ref, heat.as_deref());
        chart_error.set(drawn_bars.and(drawn_heat).err());
    });

    view! {
        <div class="improve" id="improve-view">
            {move || contents.get().map(|d| {
                let dim_now = d.dim.name();
                let values = d.dims.iter().find(|(k, _)| *k == d.dim).map(|(_, v)| v.clone()).unwrap_or_default();
                let key_dims: Vec<DimKey> = d.outcome.as_ref().map(|t| t.key_dims.clone()).unwrap_or_default();
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
                                {(!t.tied_dims.is_empty()).then(|| format!(
                                    "; not matched on {} (one value per side)",
                                    t.tied_dims.iter().map(DimKey::name).collect::<Vec<_>>().join(", ")
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

fn improvement_table(
    t: ImprovementTable,
    notes: TableNotes,
    choice: RwSignal<ImproveChoice>,
) -> impl IntoView {
    let any_row_notes = notes.rows.iter().any(|n| !n.is_empty());
    let flags = notes.rows;
    let sort_by = move |col: usize| {
        choice.update(|c| {
            c.sort = match c.sort {
                Some((s, desc)) if s == col => Some((s, !desc)),
                _ => Some((col, col == usize::MAX)),
            }
        })
    };
    let markdown = t.to_text_table().to_markdown();
    let total = t.rows.len();
    let reported = t.has_reported();
    let header = |label: String, col: usize| {
        view! { <th data-col=col.to_string() on:click=move |_| sort_by(col)>{label}</th> }
    };
    view! {
        {markdown_export(Some("improve-markdown"), 8, markdown)}
        {shared_notes("improve-shared-notes", &notes.shared)}
        <p class="muted">{if total > ROWS { format!("first {ROWS} of {total} rows (sorting covers all)") } else { format!("{total} rows") }}</p>
        <div class="table-scroll">
            <table class="records" id="improve-table">
                <thead><tr>
                    {t.key_dims.iter().enumerate().map(|(i, k)| header(k.label(), i)).collect_view()}
                    {header(format!("{} (baseline)", t.baseline), usize::MAX - 1)}
                    {header(format!("{} (candidate)", t.candidate), usize::MAX - 2)}
                    {header("Improvement (%)".to_string(), usize::MAX)}
                    {reported.then(|| header("Improvement in the file (%)".to_string(), usize::MAX - 3))}
                    {any_row_notes.then(|| view! { <th>"Data quality"</th> })}
                </tr></thead>
                <tbody>
                    {t.rows.iter().zip(flags).take(ROWS).map(|(r, flag)| view! {
                        <tr>
                            {r.key.iter().map(|v| view! { <td>{v.as_ref().map(|v| v.to_string()).unwrap_or_default()}</td> }).collect_view()}
                            <td class="num">{format_value(r.baseline_value)}</td>
                            <td class="num">{format_value(r.candidate_value)}</td>
                            <td class="num" class:better=r.improvement_pct.is_some_and(|p| p > 0.0) class:worse=r.improvement_pct.is_some_and(|p| p < 0.0)>
                                {r.improvement_pct.map(|p| format!("{p:.6}")).unwrap_or_else(|| "—".into())}
                            </td>
                            {reported.then(|| view! {
                                <td class="num reported">{r.reported_pct.map(|p| format!("{p:.6}")).unwrap_or_else(|| "—".into())}</td>
                            })}
                            {any_row_notes.then(|| view! { <td class="flags">{flag}</td> })}
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
        </div>
    }
}
