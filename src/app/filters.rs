//! The filter panel: one checkbox list per dimension with counts under the other filters, or
//! a range of two sliders for long numeric dimensions.

use leptos::prelude::*;

use super::state::AppState;
use crate::charts;
use crate::model::points::measured_dims;
use crate::model::{DimValue, Facet, Filter};
use crate::views::filters::{
    panel_facets, panel_key, shown_values, shows_range, value_state, RangeFacetState,
};

/// One fieldset per dimension in [`panel_facets`] order, with the count of matching records
/// and a button that clears every filter.
#[component]
pub fn Filters() -> impl IntoView {
    let state = expect_context::<AppState>();
    let facets = Memo::new(move |_| panel_facets(state.facets()));
    let measured = Memo::new(move |_| state.dataset.with(|h| measured_dims(&h.dataset)));
    let matching =
        move || state.with_filtered(|ds, rows| format!("{} of {} records", rows.len(), ds.len()));
    // On a narrow screen the facets fold away under a button, so the chart keeps the width.
    let open = RwSignal::new(false);
    view! {
        <aside class="filters" id="filters" class:open=move || open.get()>
            <div class="filters-head">
                <h2>"Filters"</h2>
                <span id="match-count">{matching}</span>
                <button
                    class="ghost filters-toggle"
                    id="filters-toggle"
                    aria-controls="filters"
                    aria-expanded=move || if open.get() { "true" } else { "false" }
                    on:click=move |_| open.update(|o| *o = !*o)
                >
                    {move || if open.get() { "Hide filters" } else { "Show filters" }}
                </button>
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
                key=move |facet| {
                    let range = shows_range(facet, measured.with_untracked(|m| m.contains(&facet.key)));
                    panel_key(facet, range)
                }
                children=move |facet| {
                    let key = facet.key.clone();
                    let empty = facet.values.is_empty();
                    if shows_range(&facet, measured.with_untracked(|m| m.contains(&key))) {
                        return view! { <RangeFacet facet=facet/> }.into_any();
                    }
                    let labels = shown_values(
                        &facet.values.iter().map(|v| v.value.as_ref()).collect::<Vec<_>>(),
                        charts::NO_VALUE,
                    );
                    view! {
                        <fieldset class="facet" data-dim=key.name()>
                            <legend>{key.label()}</legend>
                            {empty.then(|| view! { <span class="muted">"not in the data"</span> })}
                            {facet
                                .values
                                .into_iter()
                                .zip(labels)
                                .map(|(fv, label)| {
                                    let key = key.clone();
                                    let value = fv.value.clone();
                                    let shown = value
                                        .as_ref()
                                        .map_or(charts::NO_VALUE.to_string(), DimValue::to_string);
                                    // Count and tick follow the filter in place.
                                    let state_of = {
                                        let (key, value) = (key.clone(), value.clone());
                                        move || facets.with(|fs| value_state(fs, &key, &value))
                                    };
                                    let (count_of, checked_of) = (state_of.clone(), state_of.clone());
                                    view! {
                                        <label class:zero=move || state_of().0 == 0>
                                            <input
                                                type="checkbox"
                                                data-value=shown.clone()
                                                prop:checked=move || checked_of().1
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
                                            <span class="value" title=shown.clone()>{label}</span>
                                            <span class="n">{move || count_of().0}</span>
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

/// A range filter over a numeric dimension's values (measured lengths, long sweeps): two
/// sliders over the sorted values; the selection is every value between them.
#[component]
fn RangeFacet(
    /// The dimension with its values, counts and selection.
    facet: Facet,
) -> impl IntoView {
    let state = expect_context::<AppState>();
    let key = facet.key.clone();
    let range = RangeFacetState::of(&facet);
    let (lo, hi, last) = (range.lo, range.hi, range.last());
    let labels = shown_values(
        &range.values.iter().map(Some).collect::<Vec<_>>(),
        charts::NO_VALUE,
    );
    let shown = |i: usize| labels.get(i).cloned().unwrap_or_default();
    let (lo_text, hi_text) = (shown(lo), shown(hi));
    let heading = format!(
        " ({} values, {} records)",
        range.values.len(),
        range.records
    );
    let set_range = {
        let key = key.clone();
        move |a: usize, b: usize| {
            let key = key.clone();
            let chosen = range.selection(a, b);
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
            <span class="muted">{heading}</span>
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
