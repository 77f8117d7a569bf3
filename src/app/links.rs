//! Sharing a view: the "copy link" button, which puts local files' records inside the link
//! when they fit ([`crate::share::share_link`]), and the "this view needs: ..." banner shown
//! when an opened link could not carry them.

use leptos::prelude::*;

use super::load;
use super::state::AppState;
use crate::share::{self, ShareFile, SharedLink};

/// The link to the current view, with the local files' records inside when they fit.
pub fn current_link(state: AppState) -> Option<SharedLink> {
    let location = web_sys::window()?.location();
    let base = format!(
        "{}{}",
        location.origin().ok()?,
        location.pathname().unwrap_or_default()
    );
    let view = state.address_link_untracked();
    let locals = state.local_files();
    let files: Vec<ShareFile<'_>> = locals
        .iter()
        .map(|(name, format, records)| ShareFile {
            name,
            format,
            records,
        })
        .collect();
    Some(share::share_link(
        &base,
        &view,
        &files,
        share::SAFE_LINK_CHARS,
    ))
}

/// The "copy link" button with its note. The link is also kept in the button's `data-href`.
#[component]
pub fn CopyLink() -> impl IntoView {
    let state = expect_context::<AppState>();
    let note = RwSignal::new(None::<String>);
    let href = RwSignal::new(String::new());
    view! {
        <button
            class="ghost"
            id="copy-link"
            data-href=move || href.get()
            on:click=move |_| {
                let Some(link) = current_link(state) else { return };
                if let Some(w) = web_sys::window() {
                    let _ = w.navigator().clipboard().write_text(&link.url);
                }
                note.set(Some(link.note()));
                href.set(link.url);
            }
        >
            {move || if note.with(Option::is_some) { "link copied" } else { "copy link" }}
        </button>
        {move || note.get().map(|n| view! { <p class="link-note" id="copy-link-note">{n}</p> })}
    }
}

/// "This view needs: a.json, b.csv — drop them here", while an opened link's files are
/// missing. Dropping anywhere on the page or choosing them here loads them; each name
/// disappears once its file is loaded.
#[component]
pub fn NeedsFiles() -> impl IntoView {
    let state = expect_context::<AppState>();
    view! {
        <Show when=move || state.needed.with(|n| !n.is_empty())>
            <section class="needs" id="needs">
                <p>
                    <strong>"This view needs: "</strong>
                    <span id="needs-list">{move || state.needed.get().join(", ")}</span>
                    " — drop them here."
                </p>
                <p class="muted">
                    "The view was made from local files that did not travel with its address. "
                    "They are read in this page only; nothing is uploaded."
                </p>
                <load::FilePicker id="needs-input" label="Choose them…"/>
            </section>
        </Show>
    }
}
