//! The page shell: the whole page with its drop target, the header with the theme switch, the
//! loaders (file picker, paste box, URL box) and the start page with the bundled samples. It
//! keeps the view following the data until the user picks one, and the address following the
//! view.

use leptos::prelude::*;
use leptos::task::spawn_local;

use super::browser::prefers_dark;
use super::chart_panel::ChartPanel;
use super::files::FileList;
use super::filters::Filters;
use super::links::{self, NeedsFiles};
use super::load::{self, SAMPLES};
use super::many;
use super::state::{AppState, ViewPinned};

/// The whole page.
#[component]
pub fn App() -> impl IntoView {
    let state = AppState::new(prefers_dark());
    provide_context(state);
    let dragging = RwSignal::new(false);
    let pinned = ViewPinned(state.view_pinned);
    provide_context(pinned);

    // A shared link reopens its view: chart choices, filters, and its files (addresses,
    // samples, records carried in the fragment; missing ones are asked for).
    pinned.0.set(links::open_link(state));
    // Until the user (or a link) picks a view, the view follows the data: one that answers the
    // files' question and has something to show.
    Effect::new(move |_| {
        let generation = state.dataset.with(|h| h.generation);
        if generation == 0 || pinned.0.get_untracked() {
            return;
        }
        let view = state.default_view();
        if state.chart.with_untracked(|c| c.view != view) {
            state.chart.update(|c| c.view = view);
        }
    });
    // ... and the address follows the view, so reloading or copying it keeps the view: in a
    // task of its own after the one that redraws the chart (a filter click's redraw waits for
    // nothing else), and only the latest of the changes made meanwhile.
    let address_changes = std::rc::Rc::new(std::cell::Cell::new(0u64));
    Effect::new(move |_| {
        let query = state.address_bar().to_query();
        let change = address_changes.get().wrapping_add(1);
        address_changes.set(change);
        let latest = address_changes.clone();
        spawn_local(async move {
            super::browser::yield_to_browser().await;
            if latest.get() == change {
                set_address(&query);
            }
        });
    });

    // plotly.js's one-time start while the empty page is idle, not in the first file's first
    // chart; a page opened on files draws their chart soon enough.
    spawn_local(async move {
        super::browser::next_frame().await;
        super::browser::yield_to_browser().await;
        let busy = move || state.files.with_untracked(|f| !f.is_empty());
        super::plotly::warm_up(state.dark.get_untracked(), busy).await;
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
                // Entries first: a dropped folder is walked, its files loaded.
                let entries = many::dropped_entries(&ev);
                let files = load::dropped_files(&ev);
                spawn_local(many::load_drop(state, entries, files));
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
                <many::FolderPicker/>
                <button class="ghost" on:click=move |_| show_paste.update(|s| *s = !*s)>
                    "Paste text"
                </button>
            </div>
            <form
                class="url-row"
                on:submit=move |ev| {
                    ev.prevent_default();
                    let u = take_text(url);
                    if !u.trim().is_empty() {
                        spawn_local(many::load_url(state, u));
                    }
                }
            >
                <input
                    type="url"
                    id="url-input"
                    placeholder="https://… result file, GitHub file or gist link"
                    bind:value=url
                />
                <button type="submit">"Fetch"</button>
            </form>
            <Show when=move || show_paste.get()>
                <div class="paste">
                    <textarea
                        id="paste-input"
                        rows="6"
                        placeholder="Paste console output, a markdown table, CSV or JSON"
                        bind:value=pasted
                    ></textarea>
                    <button
                        id="paste-load"
                        on:click=move |_| {
                            let text = take_text(pasted);
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

/// The text typed into an input so far, leaving the input empty.
fn take_text(input: RwSignal<String>) -> String {
    input.try_update(std::mem::take).unwrap_or_default()
}

/// Puts `query` in the page's address without a new history entry.
fn set_address(query: &str) {
    let Some(w) = web_sys::window() else {
        return;
    };
    let path = w.location().pathname().unwrap_or_default();
    let url = if query.is_empty() {
        path
    } else {
        format!("{path}?{query}")
    };
    if let Ok(history) = w.history() {
        let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url));
    }
}
