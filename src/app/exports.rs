//! Downloads of the filtered records (CSV, JSON) and the chart (PNG, SVG), and the link.

use leptos::prelude::*;

use super::browser::download;
use super::links::CopyLink;
use super::plotly;
use super::state::AppState;
use crate::model::canonical;

/// Downloads of the filtered records and the chart, and the shareable link.
#[component]
pub fn Exports(
    /// The chart an image is made of.
    chart_ref: NodeRef<leptos::html::Div>,
    /// The image's file name without extension.
    #[prop(into)]
    image_name: Signal<String>,
) -> impl IntoView {
    let state = expect_context::<AppState>();
    let image_error = RwSignal::new(None::<String>);
    let filtered = move || {
        let filter = state.filter.get_untracked();
        state.dataset.with_untracked(|h| {
            h.dataset
                .filtered(&filter)
                .map(std::borrow::Cow::into_owned)
                .collect::<Vec<_>>()
        })
    };
    let image = move |format: &'static str| {
        // The chart on show: an analysis view's own, else the main one.
        let Some(div) = plotly::shown_chart().or_else(|| chart_ref.get_untracked().map(Into::into))
        else {
            return;
        };
        let name = image_name.get_untracked();
        image_error.set(plotly::download_image(&div, format, &name).err());
    };
    view! {
        <div class="exports" id="exports">
            <span class="muted">"Export:"</span>
            <button class="ghost" id="export-csv" on:click=move |_| download("benchlens-records.csv", "text/csv", &canonical::to_csv(&filtered()))>"records CSV"</button>
            <button class="ghost" id="export-json" on:click=move |_| download("benchlens-records.json", "application/json", &canonical::to_json(&filtered()))>"records JSON"</button>
            <button class="ghost" id="export-png" on:click=move |_| image("png")>"chart PNG"</button>
            <button class="ghost" id="export-svg" on:click=move |_| image("svg")>"chart SVG"</button>
            <CopyLink/>
            {move || image_error.get().map(|e| view! { <p class="error" id="export-error">{e}</p> })}
        </div>
    }
}
