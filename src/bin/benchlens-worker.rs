//! The parse worker: a second, small wasm binary that Trunk builds as a web worker
//! (`data-type="worker"` in index.html) and `public/parse-worker.js` loads. It parses one
//! file off the page's thread and posts back, in order:
//!
//! - `{kind: "parsing"}` when it starts;
//! - `{kind: "meta", format, warnings, note, total, requests}` once the file is read
//!   (`requests`: the per-request details that follow in `requests` messages);
//! - for a table read into columns ([`benchlens::ingest::read_columnar`]) whose rows carry
//!   only dimensions and metrics ([`benchlens::wire::TableEncoder`]): `{kind: "table", data}`,
//!   the rows' schema (dictionaries, metric keys), then `{kind: "batch", data, count, table:
//!   true}` per run of rows, their codes and metric values (the page appends them to the
//!   index it keeps), then `{kind: "done"}`; neither side builds a record. Otherwise:
//! - `{kind: "batch", data, count}` per batch of records, `data` an `ArrayBuffer` (transferred,
//!   not copied) in [`benchlens::wire`]'s encoding, small enough for the page to decode
//!   between two frames;
//! - for a run whose per-request detail was read into columns (a vLLM serving JSON's
//!   requests and their inter-token gaps, [`benchlens::ingest::read_json_stream_gaps_apart`]):
//!   the records go without it, and then `{kind: "requests", data, count}` per few thousand
//!   requests ([`benchlens::wire::encode_requests`]: each field a column of raw numbers), which
//!   the page appends to their record; no message, and no task on the page, holds the whole
//!   run. The requests' inter-token gaps, most of such a file, went ahead while the file was
//!   read: `{kind: "gaps", data}` per 2^18 of them ([`benchlens::wire::encode_gaps`]), so this
//!   worker never holds them beside the page's copy; `meta`'s `gaps_ahead` says whether the
//!   `requests` take those (when false, any `gaps` sent are the page's to drop);
//! - `{kind: "index", data}`: the records' [`benchlens::model::Index`] in
//!   [`benchlens::wire::encode_index`]'s form, built here after the batches are posted (so the
//!   page decodes batches meanwhile) and not on the page's thread;
//! - `{kind: "done"}`;
//!
//! or `{kind: "error", message}` for a file that cannot be read, and `{kind: "panic",
//! message}` just before a panic traps (the page then also sees the worker's `error` event).
//! The page uses one worker per file and terminates it afterwards.
//!
//! A file comes either as a `Blob` (`parse_file`: a dropped or picked
//! file), read here a slice at a time (`Blob.slice` and `FileReaderSync`), or as bytes the
//! page already had (`parse`: pasted text, a fetched address, a sample). A
//! JSON document (the content starts with `{`) goes to the streaming reader first
//! ([`benchlens::ingest::read_json_stream_gaps_apart`]), so a 100 MB serving JSON is never whole
//! in the worker's memory, nor its gaps; what that reader does not take, and every
//! other format, is read whole with [`benchlens::ingest::read_columnar`].
//!
//! Natively this binary does nothing: it exists for the browser build.

#[cfg(target_arch = "wasm32")]
mod worker {
    use std::io::{BufReader, Read};

    use benchlens::ingest::{self, Contents, GapStream, IngestedColumns};
    use benchlens::model::{Gaps, Index, Record, RequestDetail};
    use benchlens::wire::{
        encode_gaps, encode_index, encode_records, encode_requests, GapsIn, TableEncoder,
    };
    use js_sys::{Array, ArrayBuffer, Object, Reflect, Uint8Array};
    use wasm_bindgen::prelude::*;
    use web_sys::{Blob, DedicatedWorkerGlobalScope};

    #[wasm_bindgen]
    extern "C" {
        /// The synchronous file reader of workers.
        type FileReaderSync;

        #[wasm_bindgen(constructor, catch)]
        fn new() -> Result<FileReaderSync, JsValue>;

        #[wasm_bindgen(method, catch, js_name = readAsArrayBuffer)]
        fn read_as_array_buffer(this: &FileReaderSync, blob: &Blob)
            -> Result<ArrayBuffer, JsValue>;
    }

    /// Decoding cost units per batch: a record is 4, a per-request detail 1, so a batch is
    /// about 2,000 plain records or 8,000 requests (a few milliseconds on the page).
    const BATCH_COST: usize = 8_000;

    /// Rows per batch of a table: the page appends a batch's codes and values to its index
    /// (about 60 bytes a row), a few milliseconds at 10,000 rows.
    const TABLE_BATCH_ROWS: usize = 10_000;

    /// Bytes per message of per-request detail (about 1,300 requests of 196 gaps): the page
    /// decodes one in a few milliseconds, and neither side holds more than one at a time.
    const REQUEST_BATCH_BYTES: usize = 2 << 20;
    /// Inter-token gaps a `gaps` message carries (2 MiB of them as `f64`, a quarter of that
    /// for three-digit gaps held as integers), sent as they are read.
    const GAP_BATCH_VALUES: usize = 1 << 18;

    /// Bytes read from the file at a time.
    const SLICE: usize = 1 << 20;

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

    /// Where the file's bytes are.
    enum Source {
        /// A file: read with `FileReaderSync`, a slice at a time.
        Blob(Blob, FileReaderSync),
        /// Bytes the page sent.
        Bytes(Uint8Array),
    }

    /// The file as a reader: each read copies the next slice (at most the buffer's size)
    /// into wasm memory.
    struct Slices {
        source: Source,
        at: f64,
        len: f64,
    }

    fn js_io(e: JsValue) -> std::io::Error {
        let text = e
            .dyn_ref::<js_sys::Error>()
            .map(|e| String::from(e.message()))
            .or_else(|| e.as_string())
            .unwrap_or_else(|| format!("{e:?}"));
        std::io::Error::other(text)
    }

    impl Slices {
        fn new(source: Source) -> Slices {
            let len = match &source {
                Source::Blob(b, _) => b.size(),
                Source::Bytes(b) => f64::from(b.length()),
            };
            Slices {
                source,
                at: 0.0,
                len,
            }
        }

        /// Bytes `start..end` of the file (clamped to it), as a JS array.
        fn range(&self, start: f64, end: f64) -> std::io::Result<Uint8Array> {
            let end = end.min(self.len);
            let start = start.min(end);
            match &self.source {
                Source::Bytes(b) => Ok(b.subarray(start as u32, end as u32)),
                Source::Blob(blob, reader) => {
                    let part = blob.slice_with_f64_and_f64(start, end).map_err(js_io)?;
                    let buffer = reader.read_as_array_buffer(&part).map_err(js_io)?;
                    Ok(Uint8Array::new(&buffer))
                }
            }
        }

        /// Back to the file's start.
        fn rewound(self) -> Slices {
            Slices { at: 0.0, ..self }
        }

        /// The whole file.
        fn whole(&self) -> std::io::Result<Vec<u8>> {
            Ok(self.range(0.0, self.len)?.to_vec())
        }

        /// Whether the file's first 4 KiB start a JSON object ([`ingest::starts_an_object`]).
        fn starts_an_object(&self) -> std::io::Result<bool> {
            Ok(ingest::starts_an_object(&self.range(0.0, 4096.0)?.to_vec()))
        }
    }

    impl Read for Slices {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.at >= self.len || buf.is_empty() {
                return Ok(0);
            }
            let part = self.range(self.at, self.at + buf.len() as f64)?;
            let n = (part.length() as usize).min(buf.len());
            if n < part.length() as usize {
                return Err(std::io::Error::other("the file grew while it was read"));
            }
            part.copy_to(&mut buf[..n]);
            self.at += n as f64;
            Ok(n)
        }
    }

    /// Parses file `name` from bytes the page had; called by `parse-worker.js`.
    #[wasm_bindgen]
    pub fn parse(name: String, bytes: Uint8Array) {
        parse_from(&name, Slices::new(Source::Bytes(bytes)));
    }

    /// Parses a file the user dropped or picked, reading it a slice at a time; called by
    /// `parse-worker.js`.
    #[wasm_bindgen]
    pub fn parse_file(name: String, file: Blob) {
        match FileReaderSync::new() {
            Ok(reader) => parse_from(&name, Slices::new(Source::Blob(file, reader))),
            Err(e) => post(
                "error",
                &[(
                    "message",
                    format!("{name}: the browser could not read the file ({})", js_io(e)).into(),
                )],
            ),
        }
    }

    fn parse_from(name: &str, source: Slices) {
        post("parsing", &[]);
        match read(name, source) {
            Ok((contents, ahead)) => send_contents(contents, ahead.as_deref()),
            Err(message) => post("error", &[("message", message.into())]),
        }
    }

    /// Reads the file: a JSON document streamed (into columns where it is a serving run with
    /// per-request detail, its gaps posted ahead as they are read: then each request's count
    /// of gaps comes back too), anything else whole.
    fn read(name: &str, source: Slices) -> Result<(Contents, Option<Vec<u32>>), String> {
        let unreadable =
            |e: std::io::Error| format!("{name}: the browser could not read the file ({e})");
        let mut source = source;
        if source.starts_an_object().map_err(unreadable)? {
            let mut input = BufReader::with_capacity(SLICE, source);
            let mut gaps = GapStream::new(GAP_BATCH_VALUES, |lists: &[Gaps]| {
                send("gaps", &encode_gaps(lists), &[]);
            });
            let got = ingest::read_json_stream_gaps_apart(name, &mut input, &mut gaps)
                .map_err(unreadable)?;
            match got {
                Some(Contents::Columns(c)) => {
                    return Ok((Contents::Columns(c), Some(gaps.lens().to_vec())))
                }
                Some(records) => return Ok((records, None)),
                None => {}
            }
            drop(gaps);
            // Declined as columns (rare: see the reader): as records, then whole.
            let mut input = BufReader::with_capacity(SLICE, input.into_inner().rewound());
            if let Some(got) = ingest::read_json_stream(name, &mut input).map_err(unreadable)? {
                return Ok((Contents::Records(got), None));
            }
            source = input.into_inner();
        }
        let bytes = source.whole().map_err(unreadable)?;
        ingest::read_columnar(name, &bytes)
            .map(|c| (c, None))
            .map_err(|e| e.to_string())
    }

    /// Posts what was read: a table as its index, a run with per-request columns as records
    /// and request batches (`ahead`: each request's count of gaps, when they went ahead),
    /// anything else as records.
    fn send_contents(contents: Contents, ahead: Option<&[u32]>) {
        let warnings: Array = contents
            .warnings()
            .iter()
            .map(|w| JsValue::from(w.to_string()))
            .collect();
        let requests = match &contents {
            Contents::Columns(c) => c.columns.requests().total(),
            Contents::Records(_) => 0,
        };
        let meta = [
            ("format", contents.format().label().into()),
            ("warnings", warnings.into()),
            ("note", contents.note().map_or(JsValue::NULL, JsValue::from)),
            ("total", (contents.len() as f64).into()),
            ("requests", (requests as f64).into()),
            ("gaps_ahead", ahead.is_some().into()),
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
            if requests > 0 {
                post("meta", &meta);
                send_with_requests(c, ahead);
                return;
            }
        }
        let done = contents.into_ingested();
        post("meta", &meta);
        send_records(&done.records);
        post("done", &[]);
    }

    /// The records in batches, then their index.
    fn send_records(records: &[Record]) {
        for batch in batches(records) {
            let count = (batch.len() as f64).into();
            send("batch", &encode_records(batch), &[("count", count)]);
        }
        send("index", &encode_index(&Index::build(records)), &[]);
    }

    /// The rows as records without their per-request detail, then that detail a batch of
    /// requests at a time, rebuilt from the columns only for the batch (`ahead`: request
    /// `q`'s count of gaps, sent ahead, when the columns do not hold them).
    fn send_with_requests(c: &IngestedColumns, ahead: Option<&[u32]>) {
        let columns = &c.columns;
        let records: Vec<Record> = (0..columns.len())
            .filter_map(|i| columns.record_without_requests(i))
            .collect();
        send_records(&records);
        let arrays = columns.requests();
        let mut batch: Vec<RequestDetail> = Vec::new();
        for row in 0..records.len() {
            let range = arrays.row_range(row);
            let mut q = range.start;
            while q < range.end {
                let mut bytes = 0;
                let first = q;
                while q < range.end && (batch.is_empty() || bytes < REQUEST_BATCH_BYTES) {
                    let detail = arrays.request(q);
                    bytes += 64 + 8 * detail.itl_ms.len();
                    batch.push(detail);
                    q += 1;
                }
                let gaps_in = match ahead.and_then(|lens| lens.get(first..q)) {
                    Some(lens) => GapsIn::Ahead(lens),
                    None => GapsIn::Requests,
                };
                let count = (batch.len() as f64).into();
                send(
                    "requests",
                    &encode_requests(row, &batch, gaps_in),
                    &[("count", count)],
                );
                batch.clear();
            }
        }
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
