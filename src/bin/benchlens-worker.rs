//! The parse worker: a second, small wasm binary that Trunk builds as a web worker
//! (`data-type="worker"` in index.html) and `public/parse-worker.js` loads. It parses one
//! file off the page's thread with [`benchlens::ingest::read`] and posts back, in order:
//!
//! - `{kind: "parsing"}` when it starts;
//! - `{kind: "meta", format, warnings, note, total}` once the file is read;
//! - for a table read into columns ([`benchlens::ingest::read_columnar`]) whose rows carry
//!   only dimensions and metrics ([`benchlens::wire::TableEncoder`]): `{kind: "table", data}`,
//!   the rows' schema (dictionaries, metric keys), then `{kind: "batch", data, count, table:
//!   true}` per run of rows, their codes and metric values (the page appends them to the
//!   index it keeps), then `{kind: "done"}`; neither side builds a record. Otherwise:
//! - `{kind: "batch", data, count}` per batch of records, `data` an `ArrayBuffer` (transferred,
//!   not copied) in [`benchlens::wire`]'s encoding, small enough for the page to decode
//!   between two frames;
//! - `{kind: "index", data}`: the records' [`benchlens::model::Index`] in
//!   [`benchlens::wire::encode_index`]'s form, built here after the batches are posted (so the
//!   page decodes batches meanwhile) and not on the page's thread;
//! - `{kind: "done"}`;
//!
//! or `{kind: "error", message}` for a file that cannot be read, and `{kind: "panic",
//! message}` just before a panic traps (the page then also sees the worker's `error` event).
//! The page uses one worker per file and terminates it afterwards.
//!
//! Natively this binary does nothing: it exists for the browser build.

#[cfg(target_arch = "wasm32")]
mod worker {
    use benchlens::ingest::{self, Contents};
    use benchlens::model::{Index, Record};
    use benchlens::wire::{encode_index, encode_records, TableEncoder};
    use js_sys::{Array, Object, Reflect, Uint8Array};
    use wasm_bindgen::prelude::*;
    use web_sys::DedicatedWorkerGlobalScope;

    /// Decoding cost units per batch: a record is 4, a per-request detail 1, so a batch is
    /// about 2,000 plain records or 8,000 requests (a few milliseconds on the page).
    const BATCH_COST: usize = 8_000;

    /// Rows per batch of a table: the page appends a batch's codes and values to its index
    /// (about 60 bytes a row), a few milliseconds at 10,000 rows.
    const TABLE_BATCH_ROWS: usize = 10_000;

    fn scope() -> DedicatedWorkerGlobalScope {
        js_sys::global().unchecked_into()
    }

    fn message(kind: &str, fields: &[(&str, JsValue)]) -> Object {
        let o = Object::new();
        let _ = Reflect::set(&o, &"kind".into(), &kind.into());
        for (k, v) in fields {
            let _ = Reflect::set(&o, &(*k).into(), v);
        }
        o
    }

    fn post(kind: &str, fields: &[(&str, JsValue)]) {
        let _ = scope().post_message(&message(kind, fields));
    }

    /// Posts `bytes` as the message's `data`, an `ArrayBuffer` moved (not copied) to the page.
    fn send(kind: &str, bytes: &[u8], fields: &[(&str, JsValue)]) {
        let data = Uint8Array::from(bytes).buffer();
        let msg = message(kind, &[("data", data.clone().into())]);
        for (k, v) in fields {
            let _ = Reflect::set(&msg, &(*k).into(), v);
        }
        let _ = scope().post_message_with_transfer(&msg, &Array::of1(&data));
    }

    /// Tells the page what panicked before the trap ends this worker.
    pub fn report_panics() {
        std::panic::set_hook(Box::new(|info| {
            post("panic", &[("message", info.to_string().into())]);
        }));
    }

    fn batches(records: &[Record]) -> impl Iterator<Item = &[Record]> {
        let mut rest = records;
        std::iter::from_fn(move || {
            if rest.is_empty() {
                return None;
            }
            let mut cost = 0;
            let mut end = 0;
            while end < rest.len() && (end == 0 || cost < BATCH_COST) {
                cost += 4 + rest[end].requests.len();
                end += 1;
            }
            let (batch, tail) = rest.split_at(end);
            rest = tail;
            Some(batch)
        })
    }

    /// Parses file `name`; called by `parse-worker.js` for each file the page posts.
    #[wasm_bindgen]
    pub fn parse(name: String, bytes: Uint8Array) {
        post("parsing", &[]);
        let bytes = bytes.to_vec();
        let contents = match ingest::read_columnar(&name, &bytes) {
            Ok(c) => c,
            Err(e) => {
                post("error", &[("message", e.to_string().into())]);
                return;
            }
        };
        drop(bytes);
        let warnings: Array = contents
            .warnings()
            .iter()
            .map(|w| JsValue::from(w.to_string()))
            .collect();
        let meta = [
            ("format", contents.format().label().into()),
            ("warnings", warnings.into()),
            ("note", contents.note().map_or(JsValue::NULL, JsValue::from)),
            ("total", (contents.len() as f64).into()),
        ];
        if let Contents::Columns(c) = &contents {
            if let Some(table) = TableEncoder::new(&c.columns) {
                post("meta", &meta);
                send("table", &table.head(), &[]);
                let mut start = 0;
                while start < table.len() {
                    let end = (start + TABLE_BATCH_ROWS).min(table.len());
                    let count = ((end - start) as f64).into();
                    send(
                        "batch",
                        &table.rows(start..end),
                        &[("count", count), ("table", true.into())],
                    );
                    start = end;
                }
                post("done", &[]);
                return;
            }
        }
        let done = contents.into_ingested();
        post("meta", &meta);
        for batch in batches(&done.records) {
            let data = Uint8Array::from(&encode_records(batch)[..]).buffer();
            let msg = message(
                "batch",
                &[
                    ("data", data.clone().into()),
                    ("count", (batch.len() as f64).into()),
                ],
            );
            let _ = scope().post_message_with_transfer(&msg, &Array::of1(&data));
        }
        let index = Uint8Array::from(&encode_index(&Index::build(&done.records))[..]).buffer();
        let msg = message("index", &[("data", index.clone().into())]);
        let _ = scope().post_message_with_transfer(&msg, &Array::of1(&index));
        post("done", &[]);
    }
}

#[cfg(target_arch = "wasm32")]
fn main() {
    worker::report_panics();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("benchlens-worker is the explorer's parse worker; it runs only in the browser");
    std::process::exit(2);
}
