//! Loading many files at once: a dropped folder (walked through the drop's file-system
//! entries), a picked folder (`<input webkitdirectory>`) and an index file fetched by address
//! ([`crate::share::index`]), whose listed files are fetched one after the other. Only files
//! that may hold results are taken from folders ([`crate::share::index::is_result_file_name`]).

use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use super::load::{fetch_bytes, load_files, load_named_files, parse_into};
use super::state::{AppState, FileStatus, Origin};
use crate::share::index::{index_files_in, is_result_file_name, may_be_index, resolve_reference};
use crate::share::{decode_component, file_name_of, raw_url};

/// Index files larger than this are not looked at as indexes (an index of 10,000 files is
/// well under a megabyte; a big result file is not parsed twice).
const MAX_INDEX_BYTES: u32 = 4 << 20;

/// The method `name` of `obj`, called with `args`.
fn call(obj: &JsValue, name: &str, args: &[&JsValue]) -> Result<JsValue, JsValue> {
    let f: js_sys::Function = js_sys::Reflect::get(obj, &JsValue::from_str(name))?.dyn_into()?;
    match args {
        [] => f.call0(obj),
        [a] => f.call1(obj, a),
        [a, b, ..] => f.call2(obj, a, b),
    }
}

/// Calls a callback-style method (`readEntries(ok, err)`, `file(ok, err)`) as a promise.
async fn callback(obj: &JsValue, name: &str) -> Result<JsValue, JsValue> {
    let mut failed = None;
    let promise = js_sys::Promise::new(&mut |resolve, reject| {
        if let Err(e) = call(obj, name, &[&resolve, &reject]) {
            failed = Some(e);
        }
    });
    if let Some(e) = failed {
        return Err(e);
    }
    JsFuture::from(promise).await
}

fn flag(obj: &JsValue, name: &str) -> bool {
    js_sys::Reflect::get(obj, &JsValue::from_str(name))
        .map(|v| v.is_truthy())
        .unwrap_or(false)
}

/// The file-system entries of a drop (taken while the event lasts; they are gone after).
pub fn dropped_entries(ev: &web_sys::DragEvent) -> Vec<JsValue> {
    let Some(items) = ev
        .data_transfer()
        .and_then(|dt| js_sys::Reflect::get(&dt, &JsValue::from_str("items")).ok())
    else {
        return Vec::new();
    };
    let n = js_sys::Reflect::get(&items, &JsValue::from_str("length"))
        .ok()
        .and_then(|v| v.as_f64())
        .unwrap_or(0.0) as u32;
    (0..n)
        .filter_map(|i| js_sys::Reflect::get_u32(&items, i).ok())
        .filter_map(|item| call(&item, "webkitGetAsEntry", &[]).ok())
        .filter(|e| !e.is_null() && !e.is_undefined())
        .collect()
}

/// Whether any of the entries is a folder.
pub fn has_folder(entries: &[JsValue]) -> bool {
    entries.iter().any(|e| flag(e, "isDirectory"))
}

/// Every result file under the entries (folders walked) with its path, in path order.
async fn files_under(entries: Vec<JsValue>) -> Vec<(String, web_sys::File)> {
    let mut stack = entries;
    let mut found: Vec<(String, web_sys::File)> = Vec::new();
    while let Some(entry) = stack.pop() {
        let name = js_sys::Reflect::get(&entry, &JsValue::from_str("name"))
            .ok()
            .and_then(|v| v.as_string())
            .unwrap_or_default();
        if flag(&entry, "isDirectory") {
            if name.starts_with('.') {
                continue;
            }
            let Ok(reader) = call(&entry, "createReader", &[]) else {
                continue;
            };
            // readEntries gives a batch at a time until an empty one.
            while let Ok(batch) = callback(&reader, "readEntries").await {
                let batch: js_sys::Array = batch.unchecked_into();
                if batch.length() == 0 {
                    break;
                }
                stack.extend(batch.iter());
            }
        } else if flag(&entry, "isFile") && is_result_file_name(&name) {
            let path = js_sys::Reflect::get(&entry, &JsValue::from_str("fullPath"))
                .ok()
                .and_then(|v| v.as_string())
                .unwrap_or(name);
            if let Ok(f) = callback(&entry, "file").await {
                found.push((path.trim_start_matches('/').to_string(), f.unchecked_into()));
            }
        }
    }
    crate::model::order::sort_by(&mut found, |a, b| a.0.cmp(&b.0));
    found
}

/// Loads a drop: a folder's result files when it holds folders, else the dropped files.
pub async fn load_drop(state: AppState, entries: Vec<JsValue>, files: Vec<web_sys::File>) {
    if has_folder(&entries) {
        load_named_files(state, files_under(entries).await).await;
    } else if !files.is_empty() {
        load_files(state, files).await;
    }
}

/// The listed files of `data` when it is an index file (`None`: read it as results).
pub fn index_of(data: &js_sys::ArrayBuffer) -> Option<Result<Vec<String>, String>> {
    if data.byte_length() > MAX_INDEX_BYTES {
        return None;
    }
    let bytes = js_sys::Uint8Array::new(data).to_vec();
    if !may_be_index(&bytes) {
        return None;
    }
    // The browser's JSON reader: the page carries none (files are read by the worker).
    let doc = super::browser::JsJson::parse(&bytes).ok()?;
    index_files_in(doc).map(|r| r.map_err(|e| e.to_string()))
}

/// Fetches every file an index lists (resolved against the index's address `index_url`),
/// one after the other; the index's own row says how many it lists.
pub async fn load_index(state: AppState, index_id: u32, index_url: &str, listed: Vec<String>) {
    state.finish(
        index_id,
        "benchlens index".into(),
        Vec::new(),
        Vec::new(),
        Some(format!("lists {} files, loaded below", listed.len())),
    );
    let queued: Vec<(u32, String, String)> = listed
        .iter()
        .map(|reference| {
            let url = resolve_reference(index_url, reference);
            let name = decode_component(reference);
            let name = if name.is_empty() {
                file_name_of(&url)
            } else {
                name
            };
            (
                state.add_loading(&name, Origin::Listed(url.clone()), "waiting"),
                name,
                url,
            )
        })
        .collect();
    for (id, name, url) in queued {
        state.set_status(id, FileStatus::Loading("fetching".into()));
        match fetch_bytes(&url).await {
            Ok(bytes) => parse_into(state, id, &name, bytes).await,
            Err(e) => state.set_status(id, FileStatus::Failed(e)),
        }
    }
}

/// The page's address resolving `input` when it is a relative reference (`results/index.json`
/// on a published site); absolute addresses pass unchanged.
pub fn absolute_address(input: &str) -> String {
    let input = input.trim();
    if input.contains("://") {
        return input.to_string();
    }
    let here = web_sys::window()
        .and_then(|w| w.location().href().ok())
        .unwrap_or_default();
    if here.is_empty() {
        input.to_string()
    } else {
        resolve_reference(&here, input)
    }
}

/// A picked folder's file's path inside it (`webkitRelativePath`), else its name.
fn relative_path(f: &web_sys::File) -> String {
    js_sys::Reflect::get(f, &JsValue::from_str("webkitRelativePath"))
        .ok()
        .and_then(|v| v.as_string())
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| f.name())
}

/// A "choose a folder" button: every result file in the folder (and below) is loaded.
#[component]
pub fn FolderPicker() -> impl IntoView {
    let state = expect_context::<AppState>();
    let input = NodeRef::<leptos::html::Input>::new();
    // Not an attribute leptos knows; set on the element once it exists.
    Effect::new(move |_| {
        if let Some(el) = input.get() {
            let _ = el.set_attribute("webkitdirectory", "");
        }
    });
    view! {
        <label class="button">
            "Choose a folder…"
            <input
                type="file"
                id="folder-input"
                node_ref=input
                multiple=true
                on:change=move |ev| {
                    let mut files: Vec<(String, web_sys::File)> = super::load::picked_files(&ev)
                        .into_iter()
                        .filter(|f| is_result_file_name(&f.name()))
                        .map(|f| (relative_path(&f), f))
                        .collect();
                    crate::model::order::sort_by(&mut files, |a, b| a.0.cmp(&b.0));
                    if !files.is_empty() {
                        spawn_local(load_named_files(state, files));
                    }
                }
            />
        </label>
    }
}

/// Fetches and parses a file from an address typed or linked by the user; an index file
/// ([`crate::share::index`]) loads every file it lists instead.
pub async fn load_url(state: AppState, input: String) {
    let name = file_name_of(input.trim());
    // A relative address (`results/index.json` on a published site) is the page's.
    let url = match raw_url(&absolute_address(&input)) {
        Ok(u) => u,
        Err(e) => {
            let id = state.add_loading(&name, Origin::Url(input.clone()), "");
            state.set_status(id, FileStatus::Failed(format!("{input}: {e}")));
            return;
        }
    };
    let id = state.add_loading(&name, Origin::Url(input.trim().to_string()), "fetching");
    match fetch_bytes(&url).await {
        Ok(bytes) => match index_of(&bytes) {
            Some(Ok(listed)) => load_index(state, id, &url, listed).await,
            Some(Err(e)) => state.set_status(id, FileStatus::Failed(format!("{url}: {e}"))),
            None => parse_into(state, id, &name, bytes).await,
        },
        Err(e) => state.set_status(id, FileStatus::Failed(e)),
    }
}
