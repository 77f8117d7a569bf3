//! Getting bytes into the explorer: picked and dropped files (gloo-file), pasted text, URLs
//! (gloo-net, [`super::many::load_url`]) and the bundled samples. Each file is
//! read and parsed on its own; a failure marks that file failed and leaves every other file
//! loaded.

use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use super::browser::{human_size, js_error_text};
use super::state::{AppState, FileStatus, Origin};

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

/// Reads the files a link carried (each already listed as file `id`), one after the other, in
/// the parse worker.
pub async fn load_carried(state: AppState, queued: Vec<(u32, crate::share::LinkFile)>) {
    for (id, f) in queued {
        let data = js_sys::Uint8Array::from(f.text.as_bytes()).buffer();
        let job = super::worker::Job::Carried(&data, &f.format);
        if super::worker::parse_in_worker(state, id, &f.name, job)
            .await
            .is_err()
        {
            no_worker(state, id, &f.name);
        }
    }
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
