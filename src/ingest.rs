//! Format detection and readers: bytes of any benchmark result file in, canonical records out.
//!
//! Owns [`detect`] (what a file looks like, judged from its content, never from its extension
//! alone), [`read`] (detect, then run the one reader for that format),
//! [`read_with_mapping`] (re-read a table with a user-corrected column mapping) and
//! [`read_columnar`] (the same records as [`read`], as columns where the reader can append
//! to columns directly: generic CSV/TSV tables for now). Each format has
//! its own submodule; all of them turn their input into [`Record`]s, stamp `source` and
//! `format`, normalise units (latencies in ms) and report what they skipped or guessed as
//! [`Warning`]s. Bad input never panics: it becomes an [`IngestError`] or a warning naming the
//! file and the line or field.
//!
//! Shared by both faces and pure: bytes in, records out. It must not import tokio, leptos,
//! web-sys or an HTTP client, touch the filesystem, or read the clock.
//!
//! # Detection
//!
//! Text is decoded first (UTF-8 BOM stripped, UTF-16 with BOM decoded, binary rejected). Then,
//! in order:
//!
//! | content                                                        | format                      |
//! |----------------------------------------------------------------|-----------------------------|
//! | JSON (`{`/`[`, one document, a list, JSON Lines): by its keys  | see below                   |
//! | the performance-suite template placeholders                    | [`Format::VllmPerfSuite`]   |
//! | `Serving Benchmark Result` blocks                              | [`Format::VllmConsole`]     |
//! | a trtllm-bench text report (`= PERFORMANCE OVERVIEW`)          | [`Format::Trtllm`]          |
//! | guidellm's console report (`Benchmarks Stats` table)            | [`Format::Guidellm`]        |
//! | `:::MLLOG` lines, or `MLPerf Results Summary` at the top       | [`Format::MlperfLog`]       |
//! | YAML (`---` or a plain `key:` first): by its keys, as JSON     | see below                   |
//! | a fenced code block holding JSON (a report): by its keys       | see below                   |
//! | markdown tables with `Test name` / `Step`+`Batch Size` / other | perf suite / TGI / markdown |
//! | CSV starting `Metric` / with canonical names / other           | genai-perf / canonical / CSV|
//! | CSV or SQL `INSERT`s with llama-bench's `avg_ts`, `n_prompt`   | [`Format::LlamaBench`]      |
//! | a fixed-width table whose rows start with an index             | [`Format::PandasText`]      |
//!
//! JSON keys: `schema_version`+`records` → canonical; `latency`/`throughput`/`serving` column
//! dicts or records with `Test name` → perf suite; `benchmarks` → guidellm; `config`+`results`
//! → HF benchmarker; `performance`+`engine` → trtllm-bench; `{unit, avg}` metric objects or
//! `input_config` → genai-perf/AIPerf; `results_*` → llmperf; `avg_latency` → vLLM latency;
//! `requests_per_second`+`elapsed_time` → vLLM throughput; `infmax_model_prefix`, `tput_per_gpu`,
//! agentic `request_metrics`, or latencies named without `_ms` → InferenceX (asked before
//! genai-perf); `*_e2e_latency_ms`,
//! `random_input_len` → SGLang; `request_throughput`, `mean_ttft_ms`, `model_id` → vLLM serving;
//! asked last, per-request exports: `metadata`+`metrics` lines → AIPerf `profile_export.jsonl`,
//! objects with `ttft_s`+`end_to_end_latency_s` → llmperf `*_individual_responses.json`,
//! `experiments` with `requests` → genai-perf's raw `profile_export.json`.
//! Asked first: llama-bench's test objects (`avg_ts` with `n_prompt`/`n_gen`).
//!
//! A text starting `[` is JSON only when a JSON value follows the bracket (a log line
//! `[TensorRT-LLM][INFO]` is text).
//!
//! Dimensions the content lacks are then filled from the file name (`..._tp8_pp1_qps_16.json`,
//! InferenceX's `dsr1_1k1k_fp4_sglang_tp4_conc128_b200.json`,
//! `{label}-{rate}qps-concurrency{N}-{model}-{date}.json`, `<model>_<in>_<out>_summary.json`)
//! and marked inferred.

mod console;
mod fields;
mod format;
mod json;
/// Bare `NaN`/`Infinity` made strings, for the load generator's chunk decoders too.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) use json::rewrite_non_finite;
mod json_number;
mod mlperf;
mod names;
mod output;
mod perfsuite;
mod requests;
mod sanity;
mod serving;
mod stream;
mod table;
mod text;
mod tools;
mod words;
mod yaml;

use std::sync::Arc;

use crate::model::columns::{Columns, DimData};
use crate::model::Record;
use crate::model::{Dim, DimKey};

pub use format::Format;
pub use output::{Contents, Detection, IngestError, Ingested, IngestedColumns, Warning};
pub use stream::{
    read_json_stream, read_json_stream_columns, read_json_stream_gaps_apart, GapStream,
};
pub use table::ColumnMapping;

/// Detects the format of `bytes` (the content of the file named `source`) and reads it into
/// columns where its reader can (generic CSV/TSV tables whose every cell the row reader would
/// take as it is, and benchlens's canonical CSV; see `table::columnar`), into records
/// otherwise. Either way the rows are the
/// records [`read`] gives, with the same warnings, mapping and note.
pub fn read_columnar(source: &str, bytes: &[u8]) -> Result<Contents, IngestError> {
    let decoded = text::decode(source, bytes)?;
    if json::looks_json(&decoded.text) {
        return read_json(source, decoded);
    }
    let sniffed = sniff(source, &decoded.text)?;
    let plain_text =
        matches!(sniffed.body, Body::Text) && names::parse_file_name(source).values.is_empty();
    let columns = match sniffed.format {
        Format::GenericCsv | Format::CanonicalCsv if plain_text => table::read_csv_columns(
            source,
            sniffed.format,
            &decoded.text,
            sniffed.newlines,
            decoded.warnings.clone(),
        ),
        // One plain markdown table: its rows go into columns as a CSV's do.
        Format::MarkdownTable if plain_text => {
            match table::markdown_headers(&decoded.text).as_slice() {
                [t] => table::read_markdown_columns(
                    source,
                    sniffed.format,
                    t,
                    &decoded.text,
                    decoded.warnings.clone(),
                ),
                _ => None,
            }
        }
        _ => None,
    };
    if let Some(mut c) = columns {
        // As `Stamp` does for records.
        for d in c.columns.dims_mut() {
            if let (DimKey::Known(Dim::Engine), DimData::Text(t)) = (&d.key, &mut d.data) {
                t.map_values(|v| words::canonical_engine(v).filter(|c| *c != v));
            }
        }
        let mut none_completed = sanity::NoneCompleted::default();
        none_completed.columns(&mut c.columns);
        let mut impossible = sanity::Impossible::default();
        impossible.columns(c.columns.metrics());
        c.warnings.extend(impossible.warnings());
        c.warnings.extend(none_completed.warning());
        return Ok(Contents::Columns(Box::new(c)));
    }
    read_sniffed(source, decoded, sniffed, None).map(Contents::Records)
}

/// Bytes of a file enough to tell binary data ([`binary_head`]): the first 65,536 characters,
/// which the binary check looks at, in any encoding.
pub const BINARY_HEAD_BYTES: usize = 256 << 10;

/// The error [`read`] gives a binary file, from its first [`BINARY_HEAD_BYTES`] alone: a huge
/// or sparse non-text file is refused without reading it whole. `Ok` for anything else, even
/// what `read` would refuse for another reason.
pub fn binary_head(source: &str, head: &[u8]) -> Result<(), IngestError> {
    match text::decode(source, head) {
        Err(e @ IngestError::Binary { .. }) => Err(e),
        _ => Ok(()),
    }
}

/// Whether a file whose first bytes are `head` starts a JSON object: `{` after a byte-order
/// mark and whitespace, or only whitespace so far. The streaming JSON readers
/// ([`read_json_stream`]) are tried on such a file first, by the command line and the worker
/// alike.
pub fn starts_an_object(head: &[u8]) -> bool {
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    head.iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_none_or(|b| *b == b'{')
}

/// Detects the format of `bytes` (the content of the file named `source`) and reads it.
pub fn read(source: &str, bytes: &[u8]) -> Result<Ingested, IngestError> {
    read_inner(source, bytes, None, None)
}

/// Like [`read`], but tables (CSV, markdown, pandas text) use `mapping` for the columns it
/// names instead of the automatic one. Other formats ignore it.
pub fn read_with_mapping(
    source: &str,
    bytes: &[u8],
    mapping: &[ColumnMapping],
) -> Result<Ingested, IngestError> {
    read_inner(source, bytes, Some(mapping), None)
}

/// Says what `bytes` (the content of the file named `source`) look like, without reading
/// records.
pub fn detect(source: &str, bytes: &[u8]) -> Detection {
    let decoded = match text::decode(source, bytes) {
        Ok(d) => d,
        Err(e) => {
            return Detection {
                format: None,
                reason: e.to_string(),
            }
        }
    };
    match sniff(source, &decoded.text) {
        Ok(s) => Detection {
            format: Some(s.format),
            reason: s.reason,
        },
        Err(e) => Detection {
            format: None,
            reason: e.to_string(),
        },
    }
}

/// What [`sniff`] found: the format and, for JSON, the parsed documents so they are parsed once.
struct Sniffed {
    format: Format,
    reason: String,
    body: Body,
    /// A table's `\n` bytes, when detection counted them ([`text::Scan`]).
    newlines: Option<usize>,
}

enum Body {
    Text,
    Json(json::Docs),
}

fn sniff(source: &str, text: &str) -> Result<Sniffed, IngestError> {
    if text.trim_start().is_empty() {
        return Err(IngestError::Empty {
            file: source.to_string(),
        });
    }
    if json::looks_json(text) {
        let docs = json::parse_docs(source, text, 1)?;
        let (format, reason) = json::classify(&docs).ok_or_else(|| IngestError::Unrecognised {
            file: source.to_string(),
            why: "JSON without any known benchmark keys".into(),
        })?;
        return Ok(Sniffed {
            format,
            reason,
            body: Body::Json(docs),
            newlines: None,
        });
    }
    // Text: reports with a fenced JSON block, console output, tables. Templates need a `{`,
    // fences a backtick, markdown tables a `|`, console output its banner: one pass over the
    // text for all of them (and the line count a table reader makes room by), and a text
    // with none of them (a large CSV, say) is not scanned again for each.
    let scan = text::Scan::of(text);
    let marked = scan.marked;
    if marked && perfsuite::is_template(text) {
        return Ok(Sniffed {
            format: Format::VllmPerfSuite,
            reason: "vLLM performance-suite template placeholders".into(),
            body: Body::Text,
            newlines: None,
        });
    }
    if scan.console {
        return Ok(Sniffed {
            format: Format::VllmConsole,
            reason: "\"Serving Benchmark Result\" summary blocks".into(),
            body: Body::Text,
            newlines: None,
        });
    }
    if tools::detect_trtllm_text(text) {
        return Ok(Sniffed {
            format: Format::Trtllm,
            reason: "a trtllm-bench \"= PERFORMANCE OVERVIEW\" report in text".into(),
            body: Body::Text,
            newlines: None,
        });
    }
    if tools::detect_guidellm_console(text) {
        return Ok(Sniffed {
            format: Format::Guidellm,
            reason: "guidellm's console report (a \"Benchmarks Stats\" table)".into(),
            body: Body::Text,
            newlines: None,
        });
    }
    if let Some(reason) = mlperf::detect(text) {
        return Ok(Sniffed {
            format: Format::MlperfLog,
            reason: reason.into(),
            body: Body::Text,
            newlines: None,
        });
    }
    if let Some(docs) = json::yaml_docs(text) {
        if let Some((format, reason)) = json::classify(&docs) {
            return Ok(Sniffed {
                format,
                reason: format!("{reason}, in YAML"),
                body: Body::Json(docs),
                newlines: None,
            });
        }
    }
    if let Some(docs) = marked.then(|| json::fenced_docs(source, text)).flatten() {
        if let Some((format, reason)) = json::classify(&docs) {
            return Ok(Sniffed {
                format,
                reason: format!("{reason}, in a fenced block of a report"),
                body: Body::Json(docs),
                newlines: None,
            });
        }
    }
    if let Some((format, reason)) = table::classify_text(text, marked) {
        return Ok(Sniffed {
            format,
            reason,
            body: Body::Text,
            newlines: Some(scan.newlines),
        });
    }
    Err(IngestError::Unrecognised {
        file: source.to_string(),
        why: format!("{}; tried {}", text::describe(text), tried(text, marked)),
    })
}

/// Each text format detection tried on a file none of them took, and why each said no, in one
/// line.
fn tried(text: &str, marked: bool) -> String {
    let yaml = if json::looks_yaml(text) {
        "YAML: no known benchmark keys (or not valid YAML)"
    } else {
        "YAML: first line is not `key:` or `---`"
    };
    let fenced = if marked {
        "fenced JSON: no code block holding a known report"
    } else {
        "fenced JSON: no code fence"
    };
    [
        "JSON: does not start with `{` or a `[` list",
        "vLLM console: no \"Serving Benchmark Result\" banner",
        "trtllm-bench text: no \"= PERFORMANCE OVERVIEW\" section",
        "MLPerf LoadGen: no `:::MLLOG` line or \"MLPerf Results Summary\"",
        yaml,
        fenced,
        "tables: no markdown table, no delimiter shared by its lines, no fixed-width rows led by an index",
    ]
    .join("; ")
}

/// Reads `bytes` with the reader for `format`, whatever detection would say: for the UI's
/// "read as" choice when detection guessed wrong, and for fuzzing every reader.
pub fn read_as(format: Format, source: &str, bytes: &[u8]) -> Result<Ingested, IngestError> {
    read_inner(source, bytes, None, Some(format))
}

fn forced(source: &str, text: &str, format: Format) -> Result<Sniffed, IngestError> {
    let t = text.trim_start();
    if t.is_empty() {
        return Err(IngestError::Empty {
            file: source.to_string(),
        });
    }
    let looks_json = json::looks_json(t);
    let json_too = matches!(format, Format::VllmPerfSuite | Format::LlamaBench);
    let trtllm_text = (format == Format::Trtllm && tools::detect_trtllm_text(t)
        || format == Format::Guidellm && tools::detect_guidellm_console(t))
        && !looks_json;
    let body = if trtllm_text {
        Body::Text
    } else if format.is_json() || (json_too && looks_json) {
        if looks_json {
            Body::Json(json::parse_docs(source, text, 1)?)
        } else {
            Body::Json(
                json::fenced_docs(source, text)
                    .or_else(|| json::yaml_docs(text))
                    .ok_or_else(|| IngestError::Unrecognised {
                        file: source.to_string(),
                        why: format!("{} expects JSON", format.label()),
                    })?,
            )
        }
    } else {
        Body::Text
    };
    Ok(Sniffed {
        format,
        reason: "chosen by the caller".into(),
        body,
        newlines: None,
    })
}

fn read_inner(
    source: &str,
    bytes: &[u8],
    mapping: Option<&[ColumnMapping]>,
    format: Option<Format>,
) -> Result<Ingested, IngestError> {
    let decoded = text::decode(source, bytes)?;
    let sniffed = match format {
        Some(f) => forced(source, &decoded.text, f)?,
        None => sniff(source, &decoded.text)?,
    };
    read_sniffed(source, decoded, sniffed, mapping)
}

fn read_sniffed(
    source: &str,
    decoded: text::Decoded<'_>,
    sniffed: Sniffed,
    mapping: Option<&[ColumnMapping]>,
) -> Result<Ingested, IngestError> {
    let mut out = Ingested::new(sniffed.format);
    out.warnings.extend(decoded.warnings);
    let text = &decoded.text;
    match sniffed.body {
        Body::Json(docs) => {
            out.warnings.extend(docs.warnings.iter().cloned());
            json::read_docs(source, sniffed.format, docs, &mut out)?;
        }
        Body::Text => match sniffed.format {
            Format::VllmConsole => console::read(text, &mut out),
            Format::VllmPerfSuite => perfsuite::read_text(source, text, mapping, &mut out)?,
            Format::TgiBenchmark => table::read_tgi(text, &mut out),
            Format::MlperfLog => mlperf::read(source, text, &mut out),
            Format::Trtllm => tools::read_trtllm_text(text, &mut out),
            Format::Guidellm => tools::read_guidellm_console(text, &mut out),
            Format::LlamaBench => table::read_llama_bench_text(source, text, mapping, &mut out)?,
            Format::GenaiPerfCsv => tools::read_genai_csv(text, &mut out),
            Format::CanonicalCsv => table::read_canonical_csv(source, text, &mut out)?,
            Format::PandasText | Format::GenericCsv | Format::MarkdownTable => {
                table::read_table(source, sniffed.format, text, mapping, &mut out)?
            }
            other => {
                return Err(IngestError::Unrecognised {
                    file: source.to_string(),
                    why: format!("{} is not read from plain text", other.label()),
                })
            }
        },
    }
    finish(source, &mut out);
    Ok(out)
}

/// Stamps `source` and `format` and fills dimensions from the file name where missing.
fn finish(source: &str, out: &mut Ingested) {
    let mut stamp = Stamp::new(source, out.format);
    stamp.records(out.stamped, &mut out.records);
    stamp.end(out.records.is_empty(), out);
}

/// What [`finish`] does, a batch of records at a time: each record stamped with the file and
/// format and given the dimensions its file name tells, the inferred fields counted, and at
/// the end the counts as warnings and the note for a file without records.
struct Stamp {
    from_name: names::FromName,
    source: Arc<str>,
    format: Arc<str>,
    inferred: std::collections::BTreeMap<(String, String), usize>,
    impossible: sanity::Impossible,
    none_completed: sanity::NoneCompleted,
}

impl Stamp {
    fn new(source: &str, format: Format) -> Stamp {
        let mut from_name = names::parse_file_name(source);
        // vLLM's latency benchmark times one batch again and again (`--batch-size`): the
        // prompt count its file name states (dstack's `latency_test_…_np64`) is that batch.
        if format == Format::VllmLatency {
            for (d, _) in &mut from_name.values {
                if *d == Dim::NumPrompts {
                    *d = Dim::BatchSize;
                }
            }
        }
        Stamp {
            from_name,
            source: source.into(),
            format: format.name().into(),
            inferred: Default::default(),
            impossible: Default::default(),
            none_completed: Default::default(),
        }
    }

    /// Stamps `records`; `stamped`: their reader stamped them itself and inferred nothing.
    fn records(&mut self, stamped: bool, records: &mut [Record]) {
        self.none_completed.records(records);
        self.impossible.records(records);
        canonical_engines(records);
        fields::measured_lengths(records);
        // Records their reader stamped, with nothing inferred and nothing from the file name
        // to add, are done.
        if stamped && self.from_name.values.is_empty() {
            return;
        }
        let inferred = &mut self.inferred;
        for r in records {
            r.source = Some(Arc::clone(&self.source));
            r.format = Some(Arc::clone(&self.format));
            self.from_name.apply(r, "file name");
            for (field, from) in &r.inferred {
                if inferred.len() < 64 || inferred.contains_key(&(field.clone(), from.clone())) {
                    *inferred.entry((field.clone(), from.clone())).or_default() += 1;
                }
            }
        }
    }

    /// The note for a file without records (`empty`) and the warnings for inferred fields and
    /// impossible values.
    fn end(self, empty: bool, out: &mut Ingested) {
        if empty && out.note.is_none() {
            out.note = Some(format!(
                "no records: this {} holds no benchmark point",
                out.format.label()
            ));
        }
        for ((field, from), n) in self.inferred {
            let plural = if n == 1 { "" } else { "s" };
            out.warnings.push(Warning::file(format!(
                "{field} inferred from {from} ({n} record{plural})"
            )));
        }
        out.warnings.extend(self.impossible.warnings());
        out.warnings.extend(self.none_completed.warning());
    }
}

/// Each record's engine in its one spelling ([`words::canonical_engine`]: `TRT-LLM` and
/// `trt-llm` are `trtllm`), looked up once per run of records sharing a value.
fn canonical_engines(records: &mut [Record]) {
    let mut last: Option<(Arc<str>, Option<Arc<str>>)> = None;
    for r in records {
        let Some(e) = &r.engine else { continue };
        let to = match &last {
            Some((seen, to)) if seen == e => to.clone(),
            _ => {
                let to = words::canonical_engine(e)
                    .filter(|c| *c != &**e)
                    .map(Arc::from);
                last = Some((Arc::clone(e), to.clone()));
                to
            }
        };
        if let Some(to) = to {
            r.engine = Some(to);
        }
    }
}

/// Documents read a batch at a time into columns ([`read_json_columns`]).
const JSON_BATCH: usize = 1024;

/// Reads JSON text (one document, a list, JSON Lines) as [`read`] does, parsing it once: into
/// columns a batch of [`JSON_BATCH`] documents at a time when there are more than that, so that
/// a file of a million JSON lines is never held parsed whole nor as a million records; as
/// records otherwise (fewer documents, or a format whose documents are read together).
fn read_json(source: &str, decoded: text::Decoded<'_>) -> Result<Contents, IngestError> {
    let new_batch = || json::Docs {
        values: Vec::with_capacity(JSON_BATCH),
        arrays: Vec::with_capacity(JSON_BATCH),
        warnings: Vec::new(),
    };
    let fill = |batch: &mut json::Docs, docs: &mut json::DocStream<'_>, up_to: usize| {
        while batch.values.len() < up_to {
            let Some((line, doc)) = docs.next_doc() else {
                break;
            };
            batch.values.push((line, doc.value));
            batch.arrays.push(doc.arrays);
        }
    };
    let mut docs = json::DocStream::new(source, &decoded.text, 1);
    let mut batch = new_batch();
    // A list of objects: its items, as documents of their own, when there are more than a
    // batch of them and its format reads each item alone (as it reads each of JSON Lines);
    // otherwise the list is one document, read as it always was.
    let listed = docs.enter_list();
    fill(&mut batch, &mut docs, JSON_BATCH + 1);
    let mut list_format = None;
    if listed {
        let first: Vec<serde_json::Value> = batch
            .values
            .iter()
            .take(8)
            .map(|(_, v)| v.clone())
            .collect();
        let line = batch.values.first().map_or(1, |(l, _)| *l);
        list_format = json::classify_values(&[(line, serde_json::Value::Array(first))])
            .filter(|(f, _)| batch.values.len() > JSON_BATCH && f.reads_each_item_alone());
        if list_format.is_none() {
            docs = json::DocStream::new(source, &decoded.text, 1);
            batch = new_batch();
            fill(&mut batch, &mut docs, JSON_BATCH + 1);
        }
    }
    if batch.values.is_empty() {
        return Err(docs.error());
    }
    let (format, reason) = match list_format {
        Some(found) => found,
        None => json::classify_values(&batch.values).ok_or_else(|| IngestError::Unrecognised {
            file: source.to_string(),
            why: "JSON without any known benchmark keys".into(),
        })?,
    };
    if batch.values.len() <= JSON_BATCH
        || matches!(format, Format::AiperfRecords | Format::LlmperfRequests)
    {
        // Few documents, or documents read together: the parsed documents, read as `read` does.
        fill(&mut batch, &mut docs, usize::MAX);
        batch.warnings = std::mem::take(&mut docs.warnings);
        drop(docs);
        let sniffed = Sniffed {
            format,
            reason,
            body: Body::Json(batch),
            newlines: None,
        };
        return read_sniffed(source, decoded, sniffed, None).map(Contents::Records);
    }
    let mut out = Ingested::new(format);
    let mut stamp = Stamp::new(source, format);
    let mut columns = Columns::default();
    // The documents parsed to tell the format, then the rest a batch at a time.
    json::read_docs_of_many(source, format, batch, true, &mut out)?;
    loop {
        stamp.records(out.stamped, &mut out.records);
        columns.extend_records(&out.records);
        out.records.clear();
        if json::read_next_docs(source, format, &mut docs, JSON_BATCH, &mut out)? == 0 {
            break;
        }
    }
    // The order `read` gives: decoding, then skipped documents, then the reader's own.
    let mut warnings = decoded.warnings.clone();
    warnings.append(&mut docs.warnings);
    warnings.append(&mut out.warnings);
    out.warnings = warnings;
    stamp.end(columns.is_empty(), &mut out);
    columns.finish_rows_without_requests();
    Ok(Contents::Columns(Box::new(IngestedColumns {
        format,
        columns,
        warnings: out.warnings,
        mapping: out.mapping,
        note: out.note,
    })))
}

#[cfg(test)]
mod tests;
