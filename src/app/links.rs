//! Sharing a view: the "copy link" button, which puts local files' records inside the link
//! when they fit ([`crate::share::share_link`]); opening a link ([`open_link`]); and the "this
//! view needs: ..." banner shown when an opened link could not carry them.

use leptos::prelude::*;
use leptos::task::spawn_local;

use super::deflate::{self, InflateError};
use super::state::{AppState, FileStatus, Origin, View};
use super::{load, many};
use crate::share::{self, LinkDataError, LinkStep, ShareFile, SharedLink, ViewState};
use crate::views::chart::ChartChoice;
use crate::views::improvement::ImproveChoice;

/// The link to the current view, with the local files' records inside when they fit.
pub async fn current_link(state: AppState) -> Option<SharedLink> {
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
    let step = share::share_link(&base, &view, &files, share::SAFE_LINK_CHARS);
    drop(files);
    Some(match step {
        LinkStep::Done(link) => link,
        LinkStep::Deflate(draft) => {
            // Not compressible here (no CompressionStream): the files are named instead.
            let deflated = deflate::deflate_raw(draft.envelope()).await.ok();
            draft.finish(deflated.as_deref())
        }
    })
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
            on:click=move |_| spawn_local(async move {
                let Some(link) = current_link(state).await else { return };
                if let Some(w) = web_sys::window() {
                    let _ = w.navigator().clipboard().write_text(&link.url);
                }
                note.set(Some(link.note()));
                href.set(link.url);
            })
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

/// Opens the files carried inside a link's fragment (`data`, after `data=`), or says why
/// they cannot be.
async fn open_carried(state: AppState, data: String) {
    let files = match share::link_payload(&data) {
        Ok(deflated) => match deflate::inflate_raw(&deflated, share::MAX_LINK_DATA_BYTES).await {
            // The browser's JSON reader: the page carries none.
            Ok(json) => super::browser::JsJson::parse(&json)
                .map_err(LinkDataError::Json)
                .and_then(share::link_files_in),
            Err(InflateError::TooLarge) => Err(LinkDataError::TooLarge {
                max_bytes: share::MAX_LINK_DATA_BYTES,
            }),
            Err(InflateError::Damaged(status)) => Err(LinkDataError::Inflate { status }),
        },
        Err(e) => Err(e),
    };
    match files {
        Ok(files) => {
            // A carried file is not asked for, whatever the link's list of needs says.
            state
                .needed
                .update(|n| n.retain(|name| files.iter().all(|f| &f.name != name)));
            let queued = files
                .into_iter()
                .map(|f| (state.add_loading(&f.name, Origin::Local, "opening"), f))
                .collect();
            load::load_carried(state, queued).await;
        }
        Err(e) => {
            let id = state.add_loading("data in the link", Origin::Local, "");
            state.set_status(id, FileStatus::Failed(e.to_string()));
        }
    }
}

/// Reopens the view a link describes: chart choices, view settings and filters from the query;
/// files from their addresses (`data=`), bundled samples (`sample=`) and the records carried
/// in the fragment (`#data=`); files it could not carry (`need=`) are asked for. Returns
/// whether the link names a view (which then stays put while data arrives).
pub fn open_link(state: AppState) -> bool {
    let Some(location) = web_sys::window().map(|w| w.location()) else {
        return false;
    };
    let link = ViewState::from_query(&location.search().unwrap_or_default());
    state.chart.set(ChartChoice::from_view_state(&link));
    state.view_params.set(link.params.clone());
    if link.view.as_deref() == Some(View::Improvement.id()) {
        state.improve.set(ImproveChoice::from_link(&link));
    }
    state.filter.set(link.filter());
    let hash = location.hash().unwrap_or_default();
    if let Some(data) = share::link_data_of_fragment(&hash) {
        spawn_local(open_carried(state, data.to_string()));
    }
    let mut needed: Vec<String> = Vec::new();
    for n in link.needs {
        if !needed.contains(&n) {
            needed.push(n);
        }
    }
    state.needed.set(needed);
    for name in &link.samples {
        load::load_sample_named(state, name);
    }
    let names_view = link.view.is_some();
    for url in link.data {
        spawn_local(many::load_url(state, url));
    }
    names_view
}
