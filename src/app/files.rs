//! The file list: each loaded, loading or failed file with its format, record count, the
//! benchlens build that wrote it (when it says), its data notes (failed requests, low
//! completion, repeated configurations, unknown GPUs), warnings and a form to set a dimension
//! the file lacks.

use leptos::prelude::*;

use super::state::{AppState, FileStatus};
use crate::model::{Dim, DimKey};

/// More files than this make the list scroll in a box of its own.
const MANY_FILES: usize = 8;

/// The loaded, loading and failed files, each with its status and a remove button.
#[component]
pub fn FileList() -> impl IntoView {
    let state = expect_context::<AppState>();
    view! {
        <section class="files">
            <ul id="file-list" class:many=move || state.files.with(|f| f.len() > MANY_FILES)>
                <For
                    each=move || state.files.get()
                    key=|f| (f.id, f.revision)
                    children=move |f| {
                        let id = f.id;
                        let (class, detail) = match &f.status {
                            FileStatus::Loading(what) => {
                                ("loading", view! {
                                    <span class="spinner" aria-hidden="true"></span>
                                    <span class="status">{what.clone()} "…"</span>
                                }.into_any())
                            }
                            FileStatus::Loaded { format, rows, warnings, note, written_by, notes } => {
                                let warnings = warnings.clone();
                                let n_warn = warnings.len();
                                ("loaded", view! {
                                    <span class="format">{format.clone()}</span>
                                    <span class="count">{format!("{} record{}", rows.len(), if rows.len() == 1 { "" } else { "s" })}</span>
                                    {note.clone().map(|n| view! { <span class="note">{n}</span> })}
                                    {written_by.clone().map(|b| view! { <span class="build" title="The benchlens build that wrote this file">{b}</span> })}
                                    {(!notes.is_empty()).then(|| {
                                        let notes = notes.clone();
                                        view! {
                                            <details class="warnings quality">
                                                <summary>{format!("{} data note{}", notes.len(), if notes.len() == 1 { "" } else { "s" })}</summary>
                                                <ul>{notes.into_iter().map(|n| view! { <li>{n}</li> }).collect_view()}</ul>
                                            </details>
                                        }
                                    })}
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
fn Annotate(
    /// The file whose records get the value.
    id: u32,
) -> impl IntoView {
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
                    bind:value=value
                />
                <button type="submit">"Apply"</button>
                {move || error.get().map(|e| view! { <span class="error">{e}</span> })}
            </form>
        </details>
    }
}
