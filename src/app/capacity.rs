//! The capacity view: a sweep's goodput and objectives against the load, stacked panels on one
//! load axis, and the capacity in words under them. The curves, the figure and the words come
//! from [`crate::analysis::capacity_curve`] and [`crate::analysis::capacity_figure`]; this only
//! lays them out over the filtered records.

use leptos::prelude::*;

use super::plotly;
use super::state::AppState;
use crate::analysis::capacity_curve::{capacity_curves, capacity_words, selection_notes};
use crate::analysis::capacity_figure::{capacity_figure_height_px, capacity_plot};

/// The capacity curve of the filtered sweep probes, with the capacity of each sweep in words.
#[component]
pub fn CapacityView() -> impl IntoView {
    let state = expect_context::<AppState>();
    let node = NodeRef::<leptos::html::Div>::new();
    let result = Memo::new(move |_| {
        let theme = state.theme();
        state.with_filtered(|ds, rows| {
            let curves = capacity_curves(ds, rows);
            let figure = (!curves.sweeps.is_empty()).then(|| {
                (
                    capacity_plot(&curves, theme),
                    capacity_figure_height_px(&curves),
                )
            });
            (figure, capacity_words(&curves), selection_notes(&curves))
        })
    });
    let chart_error = plotly::draw_when(node, move || {
        result.with(|r| r.0.as_ref().map(|f| f.0.clone()))
    });
    let height = move || {
        result.with(|r| {
            r.0.as_ref()
                .map_or("0px".to_string(), |f| format!("{}px", f.1))
        })
    };
    view! {
        {move || result.with(|r| r.0.is_none()).then(|| view! {
            <p class="muted" id="capacity-empty">
                "No filtered record is a probe of a capacity sweep. `benchlens sweep` files have one record per probe, with its verdict (tag.verdict)."
            </p>
        })}
        {move || {
            let notes = result.with(|r| r.2.clone());
            (!notes.is_empty()).then(|| view! {
                <ul class="warning" id="capacity-notes">
                    {notes.into_iter().map(|n| view! { <li>{n}</li> }).collect_view()}
                </ul>
            })
        }}
        {plotly::error_note(chart_error)}
        <div class="chart" id="capacity-chart" node_ref=node style:height=height></div>
        <div id="capacity-words">
            {move || result.with(|r| r.1.clone()).into_iter().map(|w| view! {
                <div class="capacity-sweep">
                    <p class="capacity-headline">
                        <strong>{w.name}</strong>": "{w.capacity}
                    </p>
                    <ul class="muted">
                        {w.notes.into_iter().map(|n| view! { <li>{n}</li> }).collect_view()}
                    </ul>
                </div>
            }).collect_view()}
        </div>
    }
}
