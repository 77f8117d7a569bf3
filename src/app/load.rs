//! Getting bytes into the explorer: picked and dropped files (gloo-file), pasted text, URLs
//! (gloo-net), the bundled samples and the records a link carries ([`open_link`]). Each file is
//! read and parsed on its own; a failure marks that file failed and leaves every other file
//! loaded.

use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use super::browser::{human_size, js_error_text};
use super::state::{AppState, FileStatus, Origin, View};
use crate::chart_view::ChartChoice;
use crate::improvement_view::ImproveChoice;
use crate::share::{self, file_name_of, raw_url, ViewState};

/// A bundled sample: file under `samples/` and what it shows.
pub struct Sample {
    /// File name under `samples/`.
    pub file: &'static str,
    /// Button title.
    pub title: &'static str,
    /// One line on what it is.
    pub about: &'static str,
}

/// The bundled samples: the user-supplied example files, and a capacity sweep made against the
/// mock (`scripts/make-sample-sweep.sh`).
pub const SAMPLES: [Sample; 6] = [
    Sample {
        file: "001_b815cef7710eda19.txt",
        title: "vLLM vs SGLang report",
        about: "Llama-3.1-8B, request rates 1–inf, vLLM serving JSON Lines inside a report",
    },
    Sample {
        file: "000_258d36619a7af95a.txt",
        title: "A100 vs Tesla table",
        about: "pandas printout, 20 models, batch sizes 1–1028, two GPUs per row",
    },
    Sample {
        file: "002_44f3a8b9f2336bbb.txt",
        title: "vLLM vs TGI markdown",
        about: "Mistral-7B AWQ on A100 40G, input/output length grid",
    },
    Sample {
        file: "003_902df92d1b3a4732.txt",
        title: "vLLM console summaries",
        about: "serving benchmark blocks pasted from a terminal, 1–2048 prompts",
    },
    Sample {
        file: "004_adfd865e97a7b47c.txt",
        title: "vLLM suite template",
        about: "the performance-suite description (a template without numbers)",
    },
    Sample {
        file: "005_benchlens_sweep.json",
        title: "Capacity sweep against the mock",
        about: "benchlens sweep: goodput and SLOs per request rate, the knee, per-request detail and server telemetry",
    },
];

/// Parses `data` as file `name` in the parse worker ([`super::worker`]) and records the outcome
/// on file `id`. The page carries no reader of its own: every file, pasted text and fetched URL
/// is read by the worker, so where no worker can start the file is marked failed, saying why.
pub async fn parse_into(state: AppState, id: u32, name: &str, data: js_sys::ArrayBuffer) {
    let job = super::worker::Job::Bytes(&data);
    if super::worker::parse_in_worker(state, id, name, job)
        .await
        .is_err()
    {
        no_worker(state, id, name);
    }
}

/// Marks file `id` failed because no parse worker could be started.
fn no_worker(state: AppState, id: u32, name: &str) {
    state.set_status(
        id,
        FileStatus::Failed(format!(
            "{name}: this browser could not start the parse worker (benchlens reads files \
             in a Web Worker running WebAssembly)"
        )),
    );
}

/// Reads and parses files the user picked or dropped, one after the other.
pub async fn load_files(state: AppState, files: Vec<web_sys::File>) {
    load_named_files(state, files.into_iter().map(|f| (f.name(), f)).collect()).await;
}

/// Like [`load_files`], each file shown and read under the given name (its path in a folder).
pub async fn load_named_files(state: AppState, files: Vec<(String, web_sys::File)>) {
    let queued: Vec<(u32, String, web_sys::File)> = files
        .into_iter()
        .map(|(name, f)| {
            let id = state.add_loading(&name, Origin::Local, "waiting");
            (id, name, f)
        })
        .collect();
    for (id, name, file) in queued {
        state.set_status(
            id,
            FileStatus::Loading(format!("reading {}", human_size(file.size() as u64))),
        );
        // The file itself to the worker, which reads it a slice at a time.
        let job = super::worker::Job::File(&file);
        if super::worker::parse_in_worker(state, id, &name, job)
            .await
            .is_err()
        {
            no_worker(state, id, &name);
        }
    }
}

/// The files of a `FileList` (from a picker or a drop).
pub fn files_of(list: Option<web_sys::FileList>) -> Vec<web_sys::File> {
    let Some(list) = list else { return Vec::new() };
    (0..list.length()).filter_map(|i| list.get(i)).collect()
}

/// Parses pasted text.
pub async fn load_text(state: AppState, text: String) {
    if text.trim().is_empty() {
        return;
    }
    let id = state.add_loading("pasted text", Origin::Local, "parsing");
    let data = js_sys::Uint8Array::from(text.as_bytes()).buffer();
    parse_into(state, id, "pasted text", data).await;
}

/// Fetches and parses a file from an address typed or linked by the user; an index file
/// ([`crate::share::index`]) loads every file it lists instead.
pub async fn load_url(state: AppState, input: String) {
    let name = file_name_of(input.trim());
    // A relative address (`results/index.json` on a published site) is the page's.
    let url = match raw_url(&super::many::absolute_address(&input)) {
        Ok(u) => u,
        Err(e) => {
            let id = state.add_loading(&name, Origin::Url(input.clone()), "");
            state.set_status(id, FileStatus::Failed(format!("{input}: {e}")));
            return;
        }
    };
    let id = state.add_loading(&name, Origin::Url(input.trim().to_string()), "fetching");
    match fetch_bytes(&url).await {
        Ok(bytes) => match super::many::index_of(&bytes) {
            Some(Ok(listed)) => super::many::load_index(state, id, &url, listed).await,
            Some(Err(e)) => state.set_status(id, FileStatus::Failed(format!("{url}: {e}"))),
            None => parse_into(state, id, &name, bytes).await,
        },
        Err(e) => state.set_status(id, FileStatus::Failed(e)),
    }
}

/// Fetches one of the bundled samples.
pub async fn load_sample(state: AppState, file: &'static str) {
    let id = state.add_loading(file, Origin::Sample(file.to_string()), "fetching");
    match fetch_bytes(&format!("samples/{file}")).await {
        Ok(bytes) => parse_into(state, id, file, bytes).await,
        Err(e) => state.set_status(id, FileStatus::Failed(e)),
    }
}

/// GETs an address, explaining failures in plain words with what to do.
pub(super) async fn fetch_bytes(url: &str) -> Result<js_sys::ArrayBuffer, String> {
    let response = gloo_net::http::Request::get(url)
        .send()
        .await
        .map_err(|e| {
            format!(
                "{url}: the request failed before any answer ({e}). Either the server is \
             unreachable, or it does not allow other sites to read the file (CORS). \
             Download the file and drop it here instead, or host it where CORS is allowed \
             (GitHub raw files and gists are)."
            )
        })?;
    let status = response.status();
    if status == 404 {
        return Err(format!(
            "{url}: not found (HTTP 404). Check the address; private repositories and \
             expired links also answer 404."
        ));
    }
    if !(200..300).contains(&status) {
        return Err(format!(
            "{url}: the server answered HTTP {status} {}. Try again later or download \
             the file and drop it here.",
            response.status_text()
        ));
    }
    let body = web_sys::Response::from(response)
        .array_buffer()
        .map_err(|e| js_error_text(&e))
        .map(JsFuture::from);
    let body = match body {
        Ok(f) => f.await.map_err(|e| js_error_text(&e)),
        Err(e) => Err(e),
    };
    body.map(JsCast::unchecked_into)
        .map_err(|e| format!("{url}: the download broke off ({e}). Try again."))
}

/// The files carried by a drop event.
pub fn dropped_files(ev: &web_sys::DragEvent) -> Vec<web_sys::File> {
    files_of(ev.data_transfer().and_then(|dt| dt.files()))
}

/// The files chosen in an `<input type=file>` that fired `ev`.
pub fn picked_files(ev: &web_sys::Event) -> Vec<web_sys::File> {
    let input = ev
        .target()
        .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok());
    let files = files_of(input.as_ref().and_then(|i| i.files()));
    if let Some(i) = input {
        // Picking the same file again must fire `change` again.
        i.set_value("");
    }
    files
}

/// Loads one of the bundled samples by its file name (from a link); unknown names get a
/// failed row saying so.
pub fn load_sample_named(state: AppState, name: &str) {
    match SAMPLES.iter().find(|s| s.file == name) {
        Some(s) => spawn_local(load_sample(state, s.file)),
        None => {
            let id = state.add_loading(name, Origin::Sample(name.to_string()), "");
            state.set_status(
                id,
                FileStatus::Failed(format!(
                    "{name}: the link names a sample this explorer does not bundle"
                )),
            );
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
    let mut carried = Vec::new();
    let hash = location.hash().unwrap_or_default();
    if let Some(data) = share::link_data_of_fragment(&hash) {
        match share::decode_link_data(data) {
            Ok(files) => {
                for f in files {
                    let id = state.add_loading(&f.name, Origin::Local, "opening");
                    carried.push(f.name.clone());
                    state.finish(id, f.format, f.records, f.warnings, None);
                }
            }
            Err(e) => {
                let id = state.add_loading("data in the link", Origin::Local, "");
                state.set_status(id, FileStatus::Failed(e.to_string()));
            }
        }
    }
    let mut needed: Vec<String> = Vec::new();
    for n in link.needs {
        if !carried.contains(&n) && !needed.contains(&n) {
            needed.push(n);
        }
    }
    state.needed.set(needed);
    for name in &link.samples {
        load_sample_named(state, name);
    }
    let names_view = link.view.is_some();
    for url in link.data {
        spawn_local(load_url(state, url));
    }
    names_view
}

/// A "choose files" button: the picked files are loaded like dropped ones.
#[component]
pub fn FilePicker(
    /// The input's element id (tests set files through it).
    id: &'static str,
    /// The button's text.
    label: &'static str,
) -> impl IntoView {
    let state = expect_context::<AppState>();
    view! {
        <label class="button">
            {label}
            <input
                type="file"
                id=id
                multiple=true
                on:change=move |ev| {
                    let files = picked_files(&ev);
                    if !files.is_empty() {
                        spawn_local(load_files(state, files));
                    }
                }
            />
        </label>
    }
}
