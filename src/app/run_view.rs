//! The run view: one stage as it unfolded, its request timeline over its time series, with a
//! stage menu when several filtered records have per-request timing or series. The numbers and
//! the figure are [`crate::analysis::timeline`]'s and [`crate::analysis::timeline_plot`]'s;
//! this only lays them out.

use leptos::prelude::*;

use super::plotly;
use super::state::AppState;
use super::widgets::options;
use crate::analysis::timeline::{
    has_run_detail, run_stages, series_panels, steady_window_s, timeline, timeline_summary,
};
use crate::analysis::timeline_plot::run_figure;
use crate::charts::plotly::Plot;

/// What the view shows for the current filter and stage.
#[derive(Clone, Debug, PartialEq)]
struct RunShown {
    /// (record index, label) of every stage that can be shown.
    stages: Vec<(usize, String)>,
    /// The stage shown.
    stage: usize,
    /// The plotly figure.
    figure: Plot,
    /// One line on what is drawn.
    summary: String,
}

/// Whether any filtered record can be shown in the run view (its tab is hidden otherwise).
pub fn run_available(state: AppState) -> Memo<bool> {
    // Whether any record at all has run detail: once per dataset change, so that a filter click
    // on a table without any (a million rows of a tidy CSV) does not walk its records.
    let any = Memo::new(move |_| {
        state
            .dataset
            .with(|h| h.dataset.kept_records().any(has_run_detail))
    });
    Memo::new(move |_| {
        any.get()
            && state.with_filtered(|ds, rows| {
                rows.iter()
                    .any(|&i| ds.kept_record(i).is_some_and(has_run_detail))
            })
    })
}

/// The run view.
#[component]
pub fn RunView() -> impl IntoView {
    let state = expect_context::<AppState>();
    let stage = RwSignal::new(state.param("stage").and_then(|s| s.parse::<usize>().ok()));
    let node = NodeRef::<leptos::html::Div>::new();
    let result = Memo::new(move |_| -> Result<RunShown, String> {
        let theme = state.theme();
        let chosen = stage.get();
        state.with_filtered(|ds, matching| {
            let chosen = run_stages(ds, matching, chosen).map_err(|e| e.to_string())?;
            let r = ds
                .kept_record(chosen.shown)
                .ok_or("The chosen stage is gone.")?;
            let tl = timeline(&r.requests);
            let series = series_panels(r);
            let window_s = steady_window_s(r);
            let summary = timeline_summary(&tl, window_s);
            let title = chosen.shown_label().to_string();
            Ok(RunShown {
                figure: Plot::of_figure(run_figure(
                    &title,
                    Some(&tl),
                    series.as_ref(),
                    window_s,
                    theme,
                )),
                stage: chosen.shown,
                stages: chosen.stages,
                summary,
            })
        })
    });
    let chart_error = plotly::draw_when(node, move || {
        result.with(|r| r.as_ref().ok().map(|s| s.figure.clone()))
    });
    view! {
        <div class="controls">
            {move || result.with(|r| r.as_ref().ok().filter(|s| s.stages.len() > 1).map(|s| {
                let current = s.stage.to_string();
                view! {
                    <label>"Stage "
                        <select id="run-stage" on:change=move |ev| {
                            let value = event_target_value(&ev);
                            stage.set(value.parse().ok());
                            state.set_param("stage", value);
                        }>
                            {options(s.stages.iter().map(|(i, l)| (i.to_string(), l.clone())), &current)}
                        </select>
                    </label>
                }
            }))}
        </div>
        {plotly::error_note(chart_error)}
        {move || result.with(|r| match r {
            Err(e) => view! { <p class="muted" id="run-message">{e.to_string()}</p> }.into_any(),
            Ok(s) => view! { <p id="run-summary">{s.summary.clone()}</p> }.into_any(),
        })}
        <div class="chart" id="run-chart" style="height: auto" node_ref=node></div>
    }
}
