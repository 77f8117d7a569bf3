//! The filter panel: one checkbox list per dimension with counts under the other filters, or
//! a range of two sliders for long numeric dimensions.

use leptos::prelude::*;

use super::state::AppState;
use crate::analysis::points::measured_dims;
use crate::charts;
use crate::model::{Dim, DimKey, DimValue, Filter};

/// Dimensions whose filter is always shown, present in the data or not.
const ALWAYS_FILTERED: [Dim; 5] = [
    Dim::Model,
    Dim::Engine,
    Dim::Gpu,
    Dim::BatchSize,
    Dim::MaxConcurrency,
];

#[component]
pub fn Filters() -> impl IntoView {
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
