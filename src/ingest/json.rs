//! JSON containers: tolerant parsing (bare `Infinity`, `-Infinity`, `NaN`), one document, a
//! list, JSON Lines or concatenated documents, JSON fenced in a markdown report; and the
//! content-based classification of a parsed document into a [`Format`].
//!
//! serde_json's recursion limit (128) bounds nesting, so a 10,000-level document is an error,
//! never a stack overflow.

use std::borrow::Cow;

use memchr::memmem;
use serde_json::Value;

use super::requests::{Doc, Flat, FlatDoc, RequestArrays};
use super::{perfsuite, serving, tools, Format, IngestError, Ingested, Warning};
use crate::model::canonical;

/// The JSON documents of one file, each with the 1-based line it starts on.
pub(crate) struct Docs {
    pub values: Vec<(usize, Value)>,
    /// Per-request arrays lifted out of each document (same order as `values`).
    pub arrays: Vec<Option<Box<RequestArrays>>>,
    pub warnings: Vec<Warning>,
}

/// Rewrites bare `Infinity`, `-Infinity` and `NaN` outside strings into the strings `"inf"`,
/// `"-inf"` and `"NaN"` (which the readers parse as numbers). One linear pass; borrowed
/// unchanged when neither token occurs anywhere.
pub(crate) fn rewrite_non_finite(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    if memmem::find(bytes, b"Infinity").is_none() && memmem::find(bytes, b"NaN").is_none() {
        return Cow::Borrowed(text);
    }
    let mut out: Vec<u8> = Vec::with_capacity(bytes.len() + 64);
    let mut i = 0;
    let mut changed = false;
    while i < bytes.len() {
        // Outside a string: jump to the next quote or token start.
        let Some(off) = memchr::memchr3(b'"', b'I', b'N', &bytes[i..]) else {
            out.extend_from_slice(&bytes[i..]);
            break;
        };
        out.extend_from_slice(&bytes[i..i + off]);
        i += off;
        match bytes[i] {
            b'"' => {
                // Copy the whole string, honouring escapes.
                let start = i;
                i += 1;
                loop {
                    match memchr::memchr2(b'"', b'\\', &bytes[i..]) {
                        None => {
                            i = bytes.len();
                            break;
                        }
                        Some(o) => {
                            i += o;
                            if bytes[i] == b'\\' {
                                i = (i + 2).min(bytes.len());
                            } else {
                                i += 1;
                                break;
                            }
                        }
                    }
                }
                out.extend_from_slice(&bytes[start..i]);
            }
            b'I' if bytes[i..].starts_with(b"Infinity") => {
                if out.last() == Some(&b'-') {
                    out.pop();
                    out.extend_from_slice(b"\"-inf\"");
                } else {
                    if out.last() == Some(&b'+') {
                        out.pop();
                    }
                    out.extend_from_slice(b"\"inf\"");
                }
                i += 8;
                changed = true;
            }
            b'N' if bytes[i..].starts_with(b"NaN") => {
                if matches!(out.last(), Some(b'-' | b'+')) {
                    out.pop();
                }
                out.extend_from_slice(b"\"NaN\"");
                i += 3;
                changed = true;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    if !changed {
        return Cow::Borrowed(text);
    }
    // Only ASCII was replaced by ASCII at ASCII boundaries, so this stays valid UTF-8.
    match String::from_utf8(out) {
        Ok(s) => Cow::Owned(s),
        Err(_) => Cow::Borrowed(text),
    }
}

/// Whether `text` is JSON to parse: its first non-blank byte opens an object, or a list whose
/// first item starts like a JSON value. A log whose lines start `[TensorRT-LLM][INFO]` or
/// `[11/29/2025-10:00:00]` is text, not a broken JSON list.
pub(crate) fn looks_json(text: &str) -> bool {
    let t = text.trim_start();
    match t.as_bytes().first() {
        Some(b'{') => true,
        Some(b'[') => {
            let rest = t[1..].trim_start();
            match rest.as_bytes().first() {
                None | Some(b'{' | b'[' | b'"' | b']') => true,
                Some(b'-' | b'0'..=b'9') => {
                    let end = rest
                        .find(|c: char| !(c.is_ascii_digit() || "+-.eE".contains(c)))
                        .unwrap_or(rest.len());
                    matches!(
                        rest[end..].trim_start().as_bytes().first(),
                        None | Some(b',' | b']')
                    ) || rest[1..].starts_with("Infinity")
                }
                Some(_) => ["true", "false", "null", "Infinity", "NaN"]
                    .iter()
                    .any(|w| rest.starts_with(w)),
            }
        }
        _ => false,
    }
}

/// Parses every JSON document in `text` (one, or several: JSON Lines / concatenated).
/// A bad document after good ones is skipped with a warning naming its line; the reader then
/// resumes at the next line that starts with `{` or `[`. `base_line` is the line of `text`'s
/// first line in the file.
pub(crate) fn parse_docs(source: &str, text: &str, base_line: usize) -> Result<Docs, IngestError> {
    let mut stream = DocStream::new(source, text, base_line);
    let mut docs = Docs {
        values: Vec::new(),
        arrays: Vec::new(),
        warnings: Vec::new(),
    };
    while let Some((line, doc)) = stream.next_doc() {
        docs.values.push((line, doc.value));
        docs.arrays.push(doc.arrays);
    }
    if docs.values.is_empty() {
        return Err(stream.error());
    }
    docs.warnings = stream.warnings;
    Ok(docs)
}

/// The JSON documents of a text parsed one at a time, as [`parse_docs`] parses them all: so a
/// file of a million JSON lines is read a batch of documents at a time, never held parsed whole.
pub(crate) struct DocStream<'t> {
    source: &'t str,
    text: Cow<'t, str>,
    /// Where the next document (or the whitespace before it) starts.
    pos: usize,
    /// The 1-based line at `pos`.
    line: usize,
    /// Documents given so far.
    given: usize,
    /// Whether the stream is inside a top-level list whose items it gives as documents
    /// ([`DocStream::enter_list`]).
    in_list: bool,
    /// The parse error of the first document, when none parsed before it.
    first_error: Option<IngestError>,
    /// Documents skipped, with their lines.
    pub warnings: Vec<Warning>,
}

impl<'t> DocStream<'t> {
    /// The documents of `text` (of the file `source`), whose first line is line `base_line`.
    pub(crate) fn new(source: &'t str, text: &'t str, base_line: usize) -> DocStream<'t> {
        DocStream {
            source,
            text: rewrite_non_finite(text),
            pos: 0,
            line: base_line,
            given: 0,
            in_list: false,
            first_error: None,
            warnings: Vec::new(),
        }
    }

    /// When the text is a list of objects (`[{…}, {…}]`, as a tool's `json.dump` of its runs
    /// writes), gives its items as the documents from here on, each with its own line, so a long
    /// list is read a batch of items at a time as JSON Lines are, never parsed whole. `false`
    /// (and nothing changed) for any other text.
    pub(crate) fn enter_list(&mut self) -> bool {
        let bytes = self.text.as_bytes();
        let skip = |mut at: usize| {
            while bytes.get(at).is_some_and(u8::is_ascii_whitespace) {
                at += 1;
            }
            at
        };
        let open = skip(self.pos);
        if bytes.get(open) != Some(&b'[') || bytes.get(skip(open + 1)) != Some(&b'{') {
            return false;
        }
        self.line += memchr::memchr_iter(b'\n', &bytes[self.pos..open]).count();
        self.pos = open + 1;
        self.in_list = true;
        true
    }

    /// The next document with the line it starts on; `None` at the end of the text.
    pub(crate) fn next_doc(&mut self) -> Option<(usize, Doc)> {
        self.next_flat().map(|(line, doc)| (line, doc.into_doc()))
    }

    /// [`DocStream::next_doc`] with an object's fields in a list, their keys borrowed from
    /// the text ([`FlatDoc`]).
    pub(crate) fn next_flat(&mut self) -> Option<(usize, FlatDoc<'_>)> {
        let bytes: &[u8] = self.text.as_bytes();
        loop {
            // Skip whitespace, counting lines.
            while self.pos < bytes.len() && bytes[self.pos].is_ascii_whitespace() {
                if bytes[self.pos] == b'\n' {
                    self.line += 1;
                }
                self.pos += 1;
            }
            if self.pos >= bytes.len() {
                return None;
            }
            // Between a list's items: the commas, and its end (after which any further text
            // is read as documents again).
            if self.in_list && matches!(bytes[self.pos], b',' | b']') {
                self.in_list = bytes[self.pos] == b',';
                self.pos += 1;
                continue;
            }
            let pos = self.pos;
            // From bytes, as every JSON reader of the worker parses (one instantiation of
            // serde_json's parser in the wasm: from `&str` the worker took 1.9 KB more gzip).
            let mut stream =
                serde_json::Deserializer::from_slice(&bytes[pos..]).into_iter::<FlatDoc<'_>>();
            match stream.next() {
                Some(Ok(doc)) => {
                    let end = pos + stream.byte_offset();
                    let line = self.line;
                    self.line += memchr::memchr_iter(b'\n', &bytes[pos..end]).count();
                    self.pos = end;
                    self.given += 1;
                    return Some((line, doc));
                }
                Some(Err(e)) => {
                    let line = self.line;
                    let err_line = line + e.line().saturating_sub(1);
                    let message = e.to_string();
                    let message = match message.rfind(" at line ") {
                        Some(i) => message[..i].to_string(),
                        None => message,
                    };
                    if self.given == 0 && self.first_error.is_none() {
                        self.first_error = Some(IngestError::Json {
                            file: self.source.to_string(),
                            line: err_line,
                            column: e.column(),
                            message: message.clone(),
                        });
                    }
                    let detail = if err_line == line {
                        format!("{message} at column {}", e.column())
                    } else {
                        format!("{message} at line {err_line}, column {}", e.column())
                    };
                    self.warnings.push(Warning::line(
                        line,
                        format!("invalid JSON ({detail}), skipped to the next document"),
                    ));
                    // Resume at the next line starting with '{' or '['.
                    match next_doc_start(bytes, pos + 1) {
                        Some(n) => {
                            self.line += memchr::memchr_iter(b'\n', &bytes[pos..n]).count();
                            self.pos = n;
                        }
                        None => {
                            self.pos = bytes.len();
                            return None;
                        }
                    }
                }
                None => {
                    self.pos = bytes.len();
                    return None;
                }
            }
        }
    }

    /// Why the text gave no document: its first parse error, or that it is empty.
    pub(crate) fn error(self) -> IngestError {
        self.first_error.unwrap_or_else(|| IngestError::Empty {
            file: self.source.to_string(),
        })
    }
}

fn next_doc_start(bytes: &[u8], from: usize) -> Option<usize> {
    let mut at = from;
    while at < bytes.len() {
        let nl = memchr::memchr(b'\n', &bytes[at..])? + at + 1;
        if matches!(bytes.get(nl), Some(b'{' | b'[')) {
            return Some(nl);
        }
        at = nl;
    }
    None
}

/// JSON inside markdown code fences (```` ```json ````, or any fence whose body starts with
/// `{`/`[`), e.g. the raw data at the end of a report. `None` when no fence holds JSON.
pub(crate) fn fenced_docs(source: &str, text: &str) -> Option<Docs> {
    // No fence at all (a large CSV, say): no need to look at every line.
    memchr::memmem::find(text.as_bytes(), b"```")?;
    let mut all = Docs {
        values: Vec::new(),
        arrays: Vec::new(),
        warnings: Vec::new(),
    };
    let mut in_fence = false;
    let mut body_start = 0usize;
    let mut body_line = 0usize;
    let mut offset = 0usize;
    for (i, raw) in text.split_inclusive('\n').enumerate() {
        let l = raw.trim();
        if let Some(rest) = l.strip_prefix("```") {
            if in_fence {
                absorb_fence(&mut all, source, &text[body_start..offset], body_line);
                in_fence = false;
            } else if !rest.contains("```") {
                in_fence = true;
                body_start = offset + raw.len();
                body_line = i + 2;
            }
        }
        offset += raw.len();
    }
    if in_fence {
        // A truncated report: read what the unclosed fence holds.
        let body = &text[body_start.min(text.len())..];
        if absorb_fence(&mut all, source, body, body_line) {
            all.warnings.push(Warning::line(
                body_line.saturating_sub(1),
                "code fence never closed (truncated file?)",
            ));
        }
    }
    (!all.values.is_empty()).then_some(all)
}

/// Adds a fence body's documents to `all` when the body is JSON (starts with `{`/`[` and
/// parses); whether it did.
fn absorb_fence(all: &mut Docs, source: &str, body: &str, body_line: usize) -> bool {
    if !looks_json(body) {
        return false;
    }
    let Ok(d) = parse_docs(source, body, body_line) else {
        return false;
    };
    all.values.extend(d.values);
    all.arrays.extend(d.arrays);
    all.warnings.extend(d.warnings);
    true
}

/// Whether `text` starts like a YAML mapping: its first line that is not blank or a comment is
/// `---` or `key:` / `key: value` with a plain key (guidellm's `benchmarks:`).
pub(crate) fn looks_yaml(text: &str) -> bool {
    let Some(first) = text
        .lines()
        .map(str::trim_end)
        .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
    else {
        return false;
    };
    if first == "---" {
        return true;
    }
    let Some((key, rest)) = first.split_once(':') else {
        return false;
    };
    !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        && (rest.is_empty() || rest.starts_with(' '))
}

/// The documents of a YAML report (guidellm's `benchmarks.yaml`), as the JSON values its JSON
/// report holds, so one reader serves both ([`super::yaml`]); `None` when the text does not
/// start like YAML, is not the YAML tools dump, or is not a mapping.
pub(crate) fn yaml_docs(text: &str) -> Option<Docs> {
    if !looks_yaml(text) {
        return None;
    }
    let value = super::yaml::parse(text).ok()?;
    value.is_object().then(|| Docs {
        values: vec![(1, value)],
        arrays: vec![None],
        warnings: Vec::new(),
    })
}

/// Reads parsed documents with the reader for `format`.
pub(crate) fn read_docs(
    source: &str,
    format: Format,
    docs: Docs,
    out: &mut Ingested,
) -> Result<(), IngestError> {
    if format == Format::LlamaBench {
        super::table::read_llama_bench_json(&docs.values, out);
        return Ok(());
    }
    if format == Format::LlmperfRequests {
        // One request per list item: the whole list goes into the one record.
        tools::read_llmperf_requests(&docs.values, out);
        return Ok(());
    }
    if format == Format::AiperfRecords {
        // One request per line: every line goes into the one record.
        tools::read_aiperf_records(&docs.values, out);
        return Ok(());
    }
    let many = docs.values.len() > 1;
    read_docs_of_many(source, format, docs, many, out)
}

/// [`read_docs`] for a format read a document at a time (any but [`Format::AiperfRecords`]),
/// of a batch of a file's documents: `many` when the file has more than one (each warning then
/// names its document's line).
pub(crate) fn read_docs_of_many(
    source: &str,
    format: Format,
    docs: Docs,
    many: bool,
    out: &mut Ingested,
) -> Result<(), IngestError> {
    let arrays = docs
        .arrays
        .into_iter()
        .chain(std::iter::repeat_with(|| None));
    for ((line, v), arrays) in docs.values.iter().zip(arrays) {
        let at = if many {
            format!("line {line}")
        } else {
            String::new()
        };
        read_value(source, format, v, arrays, &at, out)?;
    }
    Ok(())
}

/// Reads the next documents of `docs`, at most `n`, with the reader for `format` (a format
/// read a document at a time), each warning naming its document's line as
/// [`read_docs_of_many`] does; how many documents there were. A serving run's object goes to
/// its reader as the fields parsed from the text ([`FlatDoc`]), never as a map.
pub(crate) fn read_next_docs(
    source: &str,
    format: Format,
    docs: &mut DocStream<'_>,
    n: usize,
    out: &mut Ingested,
) -> Result<usize, IngestError> {
    use std::fmt::Write;
    let mut at = String::new();
    let mut given = 0;
    while given < n {
        let Some((line, doc)) = docs.next_flat() else {
            break;
        };
        given += 1;
        at.clear();
        let _ = write!(at, "line {line}");
        match (format, doc.body) {
            (Format::VllmServing | Format::SglangServing, Flat::Fields(fields)) => {
                let fields: Vec<(&str, &Value)> = fields.iter().map(|(k, v)| (&**k, v)).collect();
                serving::read_object(&fields, doc.arrays, &at, out);
            }
            (_, body) => {
                let doc = FlatDoc {
                    body,
                    arrays: doc.arrays,
                }
                .into_doc();
                read_value(source, format, &doc.value, doc.arrays, &at, out)?;
            }
        }
    }
    Ok(given)
}

fn join(at: &str, part: &str) -> String {
    if at.is_empty() {
        part.to_string()
    } else {
        format!("{at}: {part}")
    }
}

fn read_value(
    source: &str,
    format: Format,
    v: &Value,
    arrays: Option<Box<RequestArrays>>,
    at: &str,
    out: &mut Ingested,
) -> Result<(), IngestError> {
    match format {
        Format::CanonicalJson => {
            let decoded = canonical::from_json_value(v).map_err(|e| IngestError::Shape {
                file: source.to_string(),
                at: if at.is_empty() {
                    "document".into()
                } else {
                    at.to_string()
                },
                message: e.to_string(),
            })?;
            out.records.extend(decoded.records);
            for w in decoded.warnings {
                out.warnings.push(match w.split_once(": ") {
                    Some((place, msg)) => Warning::at(join(at, place), msg),
                    None => Warning::file(w),
                });
            }
        }
        Format::VllmPerfSuite => perfsuite::read_json(v, at, out),
        _ => match v {
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    let place = join(at, &format!("[{i}]"));
                    read_one(format, item, None, &place, out);
                }
            }
            _ => read_one(format, v, arrays, at, out),
        },
    }
    Ok(())
}

fn read_one(
    format: Format,
    v: &Value,
    arrays: Option<Box<RequestArrays>>,
    at: &str,
    out: &mut Ingested,
) {
    let Some(o) = v.as_object() else {
        out.warnings.push(Warning::at(
            if at.is_empty() { "document" } else { at },
            "not a JSON object, skipped",
        ));
        return;
    };
    match format {
        Format::VllmServing | Format::SglangServing => serving::read_map(o, arrays, at, out),
        Format::VllmLatency => tools::read_vllm_latency(o, at, out),
        Format::VllmThroughput => tools::read_vllm_throughput(o, at, out),
        Format::GenaiPerf => tools::read_genai_perf(o, at, out),
        Format::GenaiPerfRaw => tools::read_genai_perf_raw(o, at, out),
        Format::Llmperf => tools::read_llmperf(o, at, out),
        Format::Guidellm => tools::read_guidellm(o, at, out),
        Format::HfBenchmarker => tools::read_hf(o, at, out),
        Format::Trtllm => tools::read_trtllm(o, at, out),
        Format::InferenceX => tools::read_inferencex(o, at, out),
        _ => out.warnings.push(Warning::at(
            if at.is_empty() { "document" } else { at },
            format!("{} is not read from JSON, skipped", format.label()),
        )),
    }
}

mod classify;
pub(crate) use classify::{classify, classify_values};

#[cfg(test)]
mod tests;
