//! One large JSON document read from a byte stream instead of from the whole file's bytes:
//! the native command line's way to read a vLLM serving JSON of millions of per-request values
//! without holding its text beside the records parsed from it.
//!
//! The document is lifted as the in-memory reader's visitor lifts it ([`super::requests`]:
//! per-request arrays straight into typed vectors, everything else as `Value`); the numbers of
//! the per-request arrays are read by hand as each array is read, in one pass
//! ([`super::json_number`], the values serde_json gives; anything else in them is left to
//! serde_json), and every other value is found whole and parsed by serde_json. Then through
//! the same classification, reader and finishing as [`super::read`], so for the files it takes
//! the result is the same. It takes only the plain case: one JSON document starting with `{`,
//! UTF-8 (with or without a byte-order mark), nothing but whitespace after it, no bare
//! `NaN`/`Infinity` tokens. For anything else (or any parse error) it answers `None` and the
//! caller reads the bytes with [`super::read`], which has the lenient rewriting, the recovery
//! and the error messages naming line and column.

use std::io::BufRead;

use serde::de::{DeserializeOwned, IgnoredAny};
use serde_json::{Map, Value};

use super::json::{self, Docs};
use super::json_number::{self, Scan};
use super::requests::{
    numbers, Doc, GapValues, Lenient, OptF64, OptText, RequestArrays, ScratchGaps,
};
use super::{finish, text, Contents, Format, Ingested, IngestedColumns};
use crate::model::columns::{self, NumberLists};
use crate::model::Gaps;

/// Bytes asked of the input per read.
const CHUNK: usize = 1 << 20;
/// Deeper nesting is left to the in-memory reader (serde_json's limit there is 128 for the
/// whole document; here each value is parsed on its own).
const MAX_DEPTH: usize = 100;

/// Reads the single JSON document in `input` (the content of the file named `source`).
/// `Ok(None)` when the content is not the plain case this reader takes (then read the bytes
/// with [`super::read`], which also gives the precise error for a malformed file); `Err` only
/// for a failing read.
pub fn read_json_stream(source: &str, input: impl BufRead) -> std::io::Result<Option<Ingested>> {
    read_in_chunks(source, input, CHUNK, None)
}

/// [`read_json_stream`], giving a serving run's per-request detail as columns
/// ([`columns::RequestArrays`]): the inter-token gaps of every request go into one chunked
/// list ([`NumberLists`]) as they are parsed, never into a vector per request. Other
/// documents it takes come back as records. `Ok(None)` as with [`read_json_stream`], and also
/// for the rare document whose gaps this reader set apart but could not give as columns (not
/// a serving run of one record): read those with [`read_json_stream`].
pub fn read_json_stream_columns(
    source: &str,
    input: impl BufRead,
) -> std::io::Result<Option<Contents>> {
    stream_columns(source, input, CHUNK)
}

fn stream_columns(
    source: &str,
    input: impl BufRead,
    chunk: usize,
) -> std::io::Result<Option<Contents>> {
    let mut gaps = NumberLists::new();
    Ok(match read_apart(source, input, chunk, &mut gaps)? {
        None => None,
        Some(Apart::Whole(out)) => Some(Contents::Records(out)),
        Some(Apart::Run(out, requests)) => {
            let itl = (gaps.values() > 0).then(|| {
                // As the serving reader converts every request's gaps (seconds to ms).
                gaps.scale(1000.0);
                gaps
            });
            columns_of(out, *requests, itl)
        }
    })
}

/// [`read_json_stream_columns`] for a reader that must not hold the gaps either (the page's
/// parse worker, whose memory the page's own copy of the run adds to): each request's gaps
/// go to `gaps` as they are parsed, which hands them on a batch at a time, in milliseconds,
/// keeping only each request's count ([`GapStream`]). `Ok(Some(Contents::Columns(_)))`: the
/// run, whose requests' gap lists are empty: request `q`'s are the `q`-th list handed on
/// ([`GapStream::lens`]), and the last batch has been handed on. Anything else (records, or
/// `None` as with [`read_json_stream_columns`]): the lists handed on, if any, are not this
/// result's and are to be dropped.
pub fn read_json_stream_gaps_apart<F: FnMut(&[Gaps])>(
    source: &str,
    input: impl BufRead,
    gaps: &mut GapStream<F>,
) -> std::io::Result<Option<Contents>> {
    stream_gaps_apart(source, input, CHUNK, gaps)
}

fn stream_gaps_apart<F: FnMut(&[Gaps])>(
    source: &str,
    input: impl BufRead,
    chunk: usize,
    gaps: &mut GapStream<F>,
) -> std::io::Result<Option<Contents>> {
    Ok(match read_apart(source, input, chunk, gaps)? {
        None => None,
        Some(Apart::Whole(out)) => Some(Contents::Records(out)),
        Some(Apart::Run(out, requests)) => {
            // No request keeps gaps here: they were handed on.
            let got = columns_of(out, *requests, Some(NumberLists::new()));
            if got.is_some() {
                gaps.hand_on();
            }
            got
        }
    })
}

/// Where the reader sets an `itls` array's lists apart as it reads them.
trait SetApart {
    /// Takes one request's gaps (in seconds, as the file has them).
    fn push(&mut self, list: &[f64]);
    /// Lists taken.
    fn lists(&self) -> usize;
    /// Values over all lists taken.
    fn values(&self) -> usize;
    /// Whether list `q` has values.
    fn has_values(&self, q: usize) -> bool;
}

impl SetApart for NumberLists {
    fn push(&mut self, list: &[f64]) {
        NumberLists::push(self, list);
    }

    fn lists(&self) -> usize {
        self.len()
    }

    fn values(&self) -> usize {
        NumberLists::values(self)
    }

    fn has_values(&self, q: usize) -> bool {
        !self.get(q).is_empty()
    }
}

/// Gap lists handed on a batch at a time as they are read ([`read_json_stream_gaps_apart`]):
/// `hand(lists)` gets the batch's lists in milliseconds (each value times 1000, as
/// [`read_json_stream_columns`] scales them), each held exactly in as few bytes as its values
/// allow ([`Gaps::ms_of_seconds`]: a file's three-digit seconds take 2 bytes a gap, not 8).
/// Only each list's length stays here.
pub struct GapStream<F> {
    hand: F,
    /// Values a batch gathers before it is handed on.
    batch_values: usize,
    lens: Vec<u32>,
    values: usize,
    /// The lists not yet handed on (the last `batch.len()` of `lens`) and their values.
    batch: Vec<Gaps>,
    batch_held: usize,
}

impl<F: FnMut(&[Gaps])> GapStream<F> {
    /// Hands a batch on once it holds `batch_values` values (at least one list a batch).
    pub fn new(batch_values: usize, hand: F) -> GapStream<F> {
        GapStream {
            hand,
            batch_values: batch_values.max(1),
            lens: Vec::new(),
            values: 0,
            batch: Vec::new(),
            batch_held: 0,
        }
    }

    /// Each list's length, in the order read.
    pub fn lens(&self) -> &[u32] {
        &self.lens
    }

    /// Hands on the lists not yet handed on.
    fn hand_on(&mut self) {
        if !self.batch.is_empty() {
            (self.hand)(&self.batch);
            self.batch.clear();
            self.batch_held = 0;
        }
    }
}

impl<F: FnMut(&[Gaps])> SetApart for GapStream<F> {
    fn push(&mut self, list: &[f64]) {
        // A list of 2^32 values (32 GiB) cannot be read into memory; saturate rather than wrap.
        let len = u32::try_from(list.len()).unwrap_or(u32::MAX);
        self.lens.push(len);
        self.values += list.len();
        self.batch_held += list.len();
        self.batch.push(Gaps::ms_of_seconds(list));
        if self.batch_held >= self.batch_values {
            self.hand_on();
        }
    }

    fn lists(&self) -> usize {
        self.lens.len()
    }

    fn values(&self) -> usize {
        self.values
    }

    fn has_values(&self, q: usize) -> bool {
        self.lens.get(q).is_some_and(|&n| n > 0)
    }
}

/// What [`read_apart`] read.
enum Apart {
    /// Records (not a serving run of one record): their requests are in them.
    Whole(Ingested),
    /// A serving run of one record and its requests as columns (each request holding a
    /// stand-in list of one value where its gaps were set apart).
    Run(Ingested, Box<columns::RequestArrays>),
}

/// Reads the document with its gaps set apart into `gaps` and a serving run's requests as
/// columns; `None` as [`read_json_stream`] does, and for gaps that cannot go with the
/// requests as columns.
fn read_apart(
    source: &str,
    input: impl BufRead,
    chunk: usize,
    gaps: &mut dyn SetApart,
) -> std::io::Result<Option<Apart>> {
    let Some(mut out) = read_in_chunks(source, input, chunk, Some(&mut *gaps))? else {
        return Ok(None);
    };
    let mut apart = out.requests_apart.take().unwrap_or_default();
    let run = matches!(out.format, Format::VllmServing | Format::SglangServing)
        && out.records.len() == 1
        && apart.len() == 1;
    // Taken only for a run: otherwise every record gets its own requests back.
    let taken = if run { apart.pop() } else { None };
    let Some((_, requests)) = taken else {
        if gaps.values() > 0 {
            return Ok(None);
        }
        out.requests_apart = Some(apart);
        out.requests_into_records();
        return Ok(Some(Apart::Whole(out)));
    };
    // Each request holds one stand-in value where its gaps were set apart, none otherwise.
    let stand_ins_match = gaps.values() == 0
        || (requests.total() == gaps.lists()
            && (0..requests.total())
                .all(|q| requests.gaps(q).len() == usize::from(gaps.has_values(q))));
    Ok(stand_ins_match.then(|| Apart::Run(out, Box::new(requests))))
}

/// The run `out` as columns with its `requests`; with `itl`, request `q`'s gaps are list `q`
/// of it (in place of the stand-ins).
fn columns_of(
    out: Ingested,
    mut requests: columns::RequestArrays,
    itl: Option<NumberLists>,
) -> Option<Contents> {
    let mut cols = columns::Columns::from_records(&out.records);
    if let Some(itl) = itl {
        if !requests.set_gaps(itl) {
            return None;
        }
    }
    if !cols.set_requests(requests) {
        return None;
    }
    Some(Contents::Columns(Box::new(IngestedColumns {
        format: out.format,
        columns: cols,
        warnings: out.warnings,
        mapping: out.mapping,
        note: out.note,
    })))
}

/// [`read_json_stream`] asking the input for `chunk` bytes at a time (tests use tiny chunks
/// to put every value across a chunk boundary). With `gaps`, the lists of an `itls` array go
/// there, each request keeping one stand-in value (NaN) in their place when it has gaps.
fn read_in_chunks(
    source: &str,
    mut input: impl BufRead,
    chunk: usize,
    gaps: Option<&mut dyn SetApart>,
) -> std::io::Result<Option<Ingested>> {
    let head = input.fill_buf()?;
    let bom = head.starts_with(b"\xEF\xBB\xBF");
    let head = if bom { &head[3..] } else { head };
    // Leading whitespace, then `{`: count the lines it spans (the document's line).
    let Some(start) = head.iter().position(|b| !b.is_ascii_whitespace()) else {
        return Ok(None);
    };
    if head[start] != b'{' {
        return Ok(None);
    }
    // Binary data, UTF-16 and invalid UTF-8 are the in-memory reader's to report: judge the
    // head as it does (up to its last ASCII byte, so no character is cut).
    let ascii_end = head.iter().rposition(u8::is_ascii).map_or(0, |i| i + 1);
    match text::decode(source, &head[..ascii_end]) {
        Ok(d) if d.warnings.is_empty() => {}
        _ => return Ok(None),
    }
    let line = 1 + memchr::memchr_iter(b'\n', &head[..start]).count();
    let skip = start + 1 + usize::from(bom) * 3;
    input.consume(skip);
    let mut w = Window {
        input,
        chunk: chunk.max(1),
        buf: Vec::new(),
        pos: 0,
        eof: false,
        gaps,
        hint: 0,
        scratch: Vec::new(),
    };
    let Some(doc) = w.object()? else {
        return Ok(None);
    };
    // Nothing but whitespace after the document.
    if w.peek()?.is_some() {
        return Ok(None);
    }
    // The buffers are not needed while the records are built.
    let wants_columns = w.gaps.is_some();
    drop(w);
    let docs = Docs {
        values: vec![(line, doc.value)],
        arrays: vec![doc.arrays],
        warnings: Vec::new(),
    };
    let Some((format, _)) = json::classify(&docs) else {
        return Ok(None);
    };
    let mut out = Ingested::new(format);
    if wants_columns {
        out.requests_apart = Some(Vec::new());
    }
    if json::read_docs(source, format, docs, &mut out).is_err() {
        return Ok(None);
    }
    finish(source, &mut out);
    Ok(Some(out))
}

mod window;
use window::Window;

#[cfg(test)]
mod tests;
