//! Parsing off the page's thread: each file goes to a fresh parse worker (the
//! `benchlens-worker` binary, started by `parse-worker.js`), which reads it (a dropped or
//! picked file as the `File` itself, read there a slice at a time) and sends the records back
//! in batches ([`crate::wire`]); a run's per-request detail read into columns comes after its
//! record, a few thousand requests a message ([`crate::wire::append_requests`]), their
//! inter-token gaps sent ahead while the worker reads the file ([`crate::wire::StreamedGaps`],
//! so the worker never holds them beside the page's copy); a table of dimensions and metrics
//! comes as its index's schema and then its rows' codes and values in batches, which the page
//! keeps as the index ([`crate::model::Dataset::extend_columnar`]) without a record a row. The
//! page decodes one batch per task and lets the browser paint in between, so scrolling, the
//! spinner and other files stay live while a big file is parsed, and the file's status shows
//! the stage and `n/N records`.
//!
//! A file that cannot be read, a panic in the parser, or a worker that fails to start ends as
//! that file's error; other files are not touched. Where `Worker` is unavailable the caller
//! parses on the page instead.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;
use std::task::{Poll, Waker};

use js_sys::{Array, ArrayBuffer, Object, Reflect, Uint8Array};
use leptos::prelude::WithUntracked;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::browser::{human_size, next_frame, yield_to_browser};
use super::state::{AppState, FileStatus};
use crate::model::{Index, Record};
use crate::wire::{append_requests, decode_index, decode_records, StreamedGaps, TableRows};

/// The worker's entry script, relative to the page's `<base>` (Trunk's public URL), so it
/// resolves under a sub-path too.
const WORKER_SCRIPT: &str = "parse-worker.js";

/// The browser cannot start workers here; parse on the page instead.
pub struct Unavailable;

thread_local! {
    /// A worker started ahead of time, its wasm already loading, for the next file.
    static SPARE: RefCell<Option<Running>> = const { RefCell::new(None) };
}

/// Starts a worker for the next file now, so the file does not wait for the parser's wasm to
/// load and compile. Does nothing if one is waiting already or workers are unavailable.
pub fn prepare() {
    SPARE.with(|s| {
        let mut s = s.borrow_mut();
        if s.is_none() {
            *s = Running::start().ok();
        }
    });
}

/// The waiting worker, or a new one.
fn take_worker() -> Result<Running, Unavailable> {
    match SPARE.with(|s| s.borrow_mut().take()) {
        Some(w) => Ok(w),
        None => Running::start(),
    }
}

enum Event {
    Message(JsValue),
    Failed(String),
}

#[derive(Default)]
struct Inbox {
    events: VecDeque<Event>,
    waker: Option<Waker>,
}

/// The worker with its handlers; terminated when dropped.
struct Running {
    worker: web_sys::Worker,
    inbox: Rc<RefCell<Inbox>>,
    _on_message: Closure<dyn FnMut(web_sys::MessageEvent)>,
    _on_error: Closure<dyn FnMut(web_sys::Event)>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.worker.set_onmessage(None);
        self.worker.set_onerror(None);
        self.worker.set_onmessageerror(None);
        self.worker.terminate();
    }
}

impl Running {
    fn start() -> Result<Running, Unavailable> {
        let worker = web_sys::Worker::new(WORKER_SCRIPT).map_err(|_| Unavailable)?;
        let inbox = Rc::new(RefCell::new(Inbox::default()));
        let push = {
            let inbox = inbox.clone();
            move |e: Event| {
                let mut i = inbox.borrow_mut();
                i.events.push_back(e);
                if let Some(w) = i.waker.take() {
                    w.wake();
                }
            }
        };
        let on_message = {
            let push = push.clone();
            Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |ev: web_sys::MessageEvent| {
                push(Event::Message(ev.data()))
            })
        };
        let on_error = Closure::<dyn FnMut(web_sys::Event)>::new(move |ev: web_sys::Event| {
            // Handled here: keep it out of the console as an uncaught error.
            ev.prevent_default();
            let what = ev
                .dyn_ref::<web_sys::ErrorEvent>()
                .map(|e| e.message())
                .filter(|m| !m.is_empty())
                .unwrap_or_else(|| "the parser could not be loaded".to_string());
            push(Event::Failed(what))
        });
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        worker.set_onmessageerror(Some(on_error.as_ref().unchecked_ref()));
        Ok(Running {
            worker,
            inbox,
            _on_message: on_message,
            _on_error: on_error,
        })
    }

    async fn next(&self) -> Event {
        std::future::poll_fn(|cx| {
            let mut i = self.inbox.borrow_mut();
            match i.events.pop_front() {
                Some(e) => Poll::Ready(e),
                None => {
                    i.waker = Some(cx.waker().clone());
                    Poll::Pending
                }
            }
        })
        .await
    }
}

fn field(msg: &JsValue, name: &str) -> JsValue {
    Reflect::get(msg, &name.into()).unwrap_or(JsValue::UNDEFINED)
}

fn text(msg: &JsValue, name: &str) -> Option<String> {
    field(msg, name).as_string()
}

/// What the worker said about the file before its records.
struct Meta {
    format: String,
    warnings: Vec<String>,
    note: Option<String>,
    total: usize,
    /// Per-request details to come in `requests` messages.
    requests: usize,
}

/// What the worker is to parse.
pub enum Job<'a> {
    /// Bytes the page has (moved to the worker: detached afterwards).
    Bytes(&'a ArrayBuffer),
    /// A file the user dropped or picked: the worker reads it a slice at a time.
    File(&'a web_sys::File),
    /// Records a link carried (canonical CSV or JSON, moved to the worker), shown as the
    /// format they were first read as.
    Carried(&'a ArrayBuffer, &'a str),
}

/// Parses `job` as file `name` and records the outcome on file `id`. `Err` only when no
/// worker could be started; bytes are then intact.
pub async fn parse_in_worker(
    state: AppState,
    id: u32,
    name: &str,
    job: Job<'_>,
) -> Result<(), Unavailable> {
    let outcome = run(state, id, name, job, take_worker()?).await;
    // This file's worker is gone (dropped in `run`); start the next file's.
    prepare();
    outcome
}

async fn run(
    state: AppState,
    id: u32,
    name: &str,
    job: Job<'_>,
    running: Running,
) -> Result<(), Unavailable> {
    let message = Object::new();
    let _ = Reflect::set(&message, &"name".into(), &name.into());
    let label = match job {
        Job::Carried(_, format) => Some(format.to_string()),
        _ => None,
    };
    let (size, posted) = match job {
        Job::Bytes(data) | Job::Carried(data, _) => {
            let _ = Reflect::set(&message, &"bytes".into(), data);
            (
                data.byte_length() as u64,
                running
                    .worker
                    .post_message_with_transfer(&message, &Array::of1(data)),
            )
        }
        Job::File(file) => {
            let _ = Reflect::set(&message, &"file".into(), file);
            (file.size() as u64, running.worker.post_message(&message))
        }
    };
    if posted.is_err() {
        return Err(Unavailable);
    }
    let size = human_size(size);
    state.set_status(
        id,
        FileStatus::Loading(format!("starting the parser for {size}")),
    );
    let fail = |why: String| state.set_status(id, FileStatus::Failed(why));
    let mut meta: Option<Meta> = None;
    let mut records: Vec<Record> = Vec::new();
    let mut index: Option<Index> = None;
    let mut table: Option<TableRows> = None;
    let mut panic: Option<String> = None;
    let mut shown = 0.0;
    let mut received = 0usize;
    let mut received_requests = 0usize;
    // A serving run's gaps, sent ahead while the worker reads the file.
    let mut gaps_ahead = StreamedGaps::default();
    loop {
        if !state.files.with_untracked(|f| f.iter().any(|f| f.id == id)) {
            return Ok(()); // removed while loading: stop the worker (on drop)
        }
        let msg = match running.next().await {
            Event::Message(msg) => msg,
            Event::Failed(what) => {
                let why = panic.take().unwrap_or(what);
                fail(format!("{name}: the parser failed ({why})"));
                return Ok(());
            }
        };
        // The binary messages' bytes, decoded by `wire`: a damaged one fails the file.
        let data = || Uint8Array::new(&field(&msg, "data")).to_vec();
        let decoded = match text(&msg, "kind").as_deref() {
            Some("parsing") => {
                state.set_status(id, FileStatus::Loading(format!("parsing {size}")));
                Ok(())
            }
            Some("meta") => {
                let total = field(&msg, "total").as_f64().unwrap_or(0.0) as usize;
                let warnings = field(&msg, "warnings")
                    .dyn_into::<Array>()
                    .map(|a| a.iter().filter_map(|w| w.as_string()).collect())
                    .unwrap_or_default();
                if !field(&msg, "gaps_ahead").is_truthy() {
                    // Gaps sent ahead for a reading the worker then gave up: not this file's.
                    gaps_ahead.clear();
                }
                meta = Some(Meta {
                    format: label
                        .clone()
                        .or_else(|| text(&msg, "format"))
                        .unwrap_or_default(),
                    warnings,
                    note: text(&msg, "note"),
                    total,
                    requests: field(&msg, "requests").as_f64().unwrap_or(0.0) as usize,
                });
                state.set_status(
                    id,
                    FileStatus::Loading(format!("receiving 0/{total} records")),
                );
                Ok(())
            }
            Some("table") => TableRows::new(&data()).map(|t| table = Some(t)),
            // Each message is a task of its own: the browser paints between batches.
            // A table's batch only counts rows: the page keeps the table as its index.
            Some("batch") => match (&mut table, field(&msg, "table").is_truthy()) {
                (Some(t), true) => t.skip_rows(&data()).map(|n| received += n),
                _ => decode_records(&data()).map(|batch| {
                    if records.is_empty() {
                        // Room for every record once they come as records: a table's rows
                        // never do (hundreds of bytes a row of wasm memory for nothing).
                        records.reserve(meta.as_ref().map_or(0, |m| m.total));
                    }
                    received += batch.len();
                    records.extend(batch);
                }),
            }
            .map(|()| {
                // The progress text every ~50 ms, not per batch: re-rendering costs too.
                let now = js_sys::Date::now();
                if now - shown >= 50.0 {
                    shown = now;
                    let total = meta.as_ref().map_or(0, |m| m.total);
                    state.set_status(
                        id,
                        FileStatus::Loading(format!("receiving {received}/{total} records")),
                    );
                }
            }),
            Some("gaps") => gaps_ahead.append(&data()).map(|_| {
                let now = js_sys::Date::now();
                if now - shown >= 50.0 {
                    shown = now;
                    let read = gaps_ahead.len();
                    state.set_status(
                        id,
                        FileStatus::Loading(format!("parsing {size}: {read} requests' gaps read")),
                    );
                }
            }),
            Some("requests") => {
                if let ([only], Some(m), 0) = (records.as_mut_slice(), &meta, received_requests) {
                    // Every request is this record's: room for all at once, not doubling
                    // (and leaving the smaller blocks behind: 16 MB for 100,000 requests).
                    only.requests.reserve_exact(m.requests);
                }
                append_requests(&data(), &mut records, &mut gaps_ahead)
            }
            .map(|n| {
                received_requests += n;
                let now = js_sys::Date::now();
                if now - shown >= 50.0 {
                    shown = now;
                    let total = meta.as_ref().map_or(0, |m| m.requests);
                    state.set_status(
                        id,
                        FileStatus::Loading(format!(
                            "receiving {received_requests}/{total} requests"
                        )),
                    );
                }
            }),
            Some("index") => decode_index(&data()).map(|i| index = Some(i)),
            Some("done") => {
                let Some(meta) = meta else {
                    fail(format!("{name}: the parser ended without a result"));
                    return Ok(());
                };
                if received_requests != meta.requests || !gaps_ahead.is_empty() {
                    fail(format!("{name}: the parser ended before its last requests"));
                    return Ok(());
                }
                state.set_status(
                    id,
                    FileStatus::Loading(format!("indexing {received} records")),
                );
                // Show that before joining the index and drawing the first chart.
                next_frame().await;
                yield_to_browser().await;
                if let Some(t) = table.take() {
                    if t.done() != t.len() {
                        fail(format!("{name}: the parser ended before its last rows"));
                        return Ok(());
                    }
                    // Rows of dimensions and metrics only: kept as the index.
                    state.finish_columnar(
                        id,
                        meta.format,
                        t.into_index(),
                        meta.warnings,
                        meta.note,
                    );
                    return Ok(());
                }
                match index {
                    // Indexed by the worker: the page only renumbers codes.
                    Some(index) => state.finish_indexed(
                        id,
                        meta.format,
                        records,
                        index,
                        meta.warnings,
                        meta.note,
                    ),
                    None => state.finish(id, meta.format, records, meta.warnings, meta.note),
                }
                return Ok(());
            }
            Some("error") => {
                fail(text(&msg, "message").unwrap_or_else(|| format!("{name}: unreadable")));
                return Ok(());
            }
            Some("panic") => {
                // The trap's `error` event follows; it reports this message.
                panic = text(&msg, "message");
                Ok(())
            }
            _ => Ok(()),
        };
        if let Err(e) = decoded {
            fail(format!("{name}: {e}"));
            return Ok(());
        }
    }
}
