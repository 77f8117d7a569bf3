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

/// The unread part of the input: `buf[pos..]`, refilled a chunk at a time, the read part
/// dropped as it goes.
struct Window<'g, R> {
    input: R,
    chunk: usize,
    buf: Vec<u8>,
    pos: usize,
    eof: bool,
    /// Where an `itls` array's lists go, when set apart ([`read_json_stream_columns`]).
    gaps: Option<&'g mut dyn SetApart>,
    /// The length of the first per-request array read: the others are as long, so their
    /// vectors start that large rather than doubling (and leaving the halves behind).
    hint: usize,
    /// One request's gaps as they are read, before they are copied to where they go.
    scratch: Vec<f64>,
}

/// `None` from a step: the content is not the plain case (or not JSON at all).
type Step<T> = std::io::Result<Option<T>>;

impl<R: BufRead> Window<'_, R> {
    /// Reads one more chunk; false at the end of the input.
    fn more(&mut self) -> std::io::Result<bool> {
        if self.eof {
            return Ok(false);
        }
        if self.pos > 0 && self.pos >= self.buf.len() / 2 {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        let have = self.buf.len();
        let mut got = 0;
        while got < self.chunk {
            let chunk = self.input.fill_buf()?;
            if chunk.is_empty() {
                self.eof = true;
                break;
            }
            let n = chunk.len().min(self.chunk - got);
            self.buf.extend_from_slice(&chunk[..n]);
            self.input.consume(n);
            got += n;
        }
        Ok(self.buf.len() > have)
    }

    /// The next byte that is not whitespace, left unread; `None` at the end.
    fn peek(&mut self) -> std::io::Result<Option<u8>> {
        loop {
            match self.buf[self.pos..]
                .iter()
                .position(|b| !b.is_ascii_whitespace())
            {
                Some(i) => {
                    self.pos += i;
                    return Ok(Some(self.buf[self.pos]));
                }
                None => {
                    self.pos = self.buf.len();
                    if !self.more()? {
                        return Ok(None);
                    }
                }
            }
        }
    }

    /// Expects `byte` next (after whitespace) and reads it.
    fn expect(&mut self, byte: u8) -> Step<()> {
        if self.peek()? == Some(byte) {
            self.pos += 1;
            Ok(Some(()))
        } else {
            Ok(None)
        }
    }

    /// The length of the JSON value starting at `pos` (its text ending at a structural
    /// byte), reading more input as needed; `None` when it does not end or nests too deep.
    fn value_len(&mut self) -> Step<usize> {
        let mut scanned = 0usize;
        let mut depth = 0usize;
        let mut in_string = false;
        let Some(&first) = self.buf.get(self.pos) else {
            return Ok(None);
        };
        let scalar = !matches!(first, b'[' | b'{' | b'"');
        loop {
            let rest = &self.buf[self.pos + scanned..];
            let mut i = 0;
            while i < rest.len() {
                let b = rest[i];
                if scalar {
                    if matches!(b, b',' | b']' | b'}') || b.is_ascii_whitespace() {
                        return Ok(Some(scanned + i));
                    }
                    i += 1;
                    continue;
                }
                if in_string {
                    // Jump to the next quote or backslash.
                    match memchr::memchr2(b'"', b'\\', &rest[i..]) {
                        None => {
                            i = rest.len();
                            continue;
                        }
                        Some(o) => i += o,
                    }
                    if rest[i] == b'\\' {
                        if i + 1 >= rest.len() {
                            break; // the escaped byte is in the next chunk
                        }
                        i += 2;
                        continue;
                    }
                    in_string = false;
                    i += 1;
                    if depth == 0 {
                        return Ok(Some(scanned + i));
                    }
                    continue;
                }
                // Outside strings: jump to the next byte that matters.
                match memchr::memchr3(b'"', b'[', b']', &rest[i..]) {
                    Some(o) if !rest[i..i + o].iter().any(|c| matches!(c, b'{' | b'}')) => {
                        i += o;
                    }
                    _ => {
                        // Braces around: byte by byte.
                        while i < rest.len() && !matches!(rest[i], b'"' | b'[' | b']' | b'{' | b'}')
                        {
                            i += 1;
                        }
                        if i == rest.len() {
                            continue;
                        }
                    }
                }
                match rest[i] {
                    b'"' => in_string = true,
                    b'[' | b'{' => {
                        depth += 1;
                        if depth > MAX_DEPTH {
                            return Ok(None);
                        }
                    }
                    _ => {
                        let Some(d) = depth.checked_sub(1) else {
                            return Ok(None);
                        };
                        depth = d;
                        if depth == 0 {
                            return Ok(Some(scanned + i + 1));
                        }
                    }
                }
                i += 1;
            }
            scanned += i;
            if !self.more()? {
                // A scalar may end the input; anything else is cut off.
                return Ok((scalar && scanned > 0).then_some(scanned));
            }
        }
    }

    /// The next value, parsed as `T` on its own.
    fn parse<T: DeserializeOwned>(&mut self) -> Step<T> {
        if self.peek()?.is_none() {
            return Ok(None);
        }
        let Some(len) = self.value_len()? else {
            return Ok(None);
        };
        let text = &self.buf[self.pos..self.pos + len];
        let parsed = serde_json::from_slice::<T>(text).ok();
        self.pos += len;
        Ok(parsed)
    }

    /// The elements of the array that comes next, each parsed as `T`; `Lenient(None)` for a
    /// value that is not an array, as the in-memory visitor does.
    fn lenient<T: DeserializeOwned>(&mut self) -> Step<Lenient<T>> {
        if self.peek()? != Some(b'[') {
            return self.parse::<Lenient<T>>();
        }
        self.pos += 1;
        Ok(self
            .elements(|w| w.parse::<T>())?
            .map(|items| Lenient(Some(items))))
    }

    /// The elements of the array whose `[` was just read, each read by `item`, through its
    /// `]`; `None` when an element or what follows it is not what an array holds. The first
    /// non-empty array's length is kept as the room to reserve for the next.
    fn elements<T>(&mut self, mut item: impl FnMut(&mut Self) -> Step<T>) -> Step<Vec<T>> {
        let mut items = Vec::with_capacity(self.hint);
        if self.peek()? == Some(b']') {
            self.pos += 1;
            return Ok(Some(items));
        }
        loop {
            let Some(x) = item(self)? else {
                return Ok(None);
            };
            items.push(x);
            match self.peek()? {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    if self.hint == 0 {
                        self.hint = items.len();
                    }
                    return Ok(Some(items));
                }
                _ => return Ok(None),
            }
        }
    }

    /// The number that comes next (after whitespace), read, when [`json_number::scan`] takes
    /// it; `None`, nothing read, for anything else (left to serde_json).
    #[inline]
    fn number(&mut self) -> std::io::Result<Option<f64>> {
        if self.peek()?.is_none() {
            return Ok(None);
        }
        loop {
            match json_number::scan(&self.buf[self.pos..]) {
                Scan::Number(v, n) => {
                    self.pos += n;
                    return Ok(Some(v));
                }
                Scan::Other => return Ok(None),
                Scan::Incomplete => {
                    if !self.more()? {
                        return Ok(None);
                    }
                }
            }
        }
    }

    /// A per-request array of numbers (`ttfts`, `input_lens`, ...) that comes next, as
    /// [`Window::lenient`] of [`OptF64`] gives it: each number read by
    /// [`json_number::scan`] as the array is read, any other element by serde_json.
    fn numbers(&mut self) -> Step<Option<Vec<f64>>> {
        if self.peek()? != Some(b'[') {
            return Ok(self.parse::<Lenient<OptF64>>()?.map(numbers));
        }
        self.pos += 1;
        Ok(self
            .elements(|w| match w.number()? {
                Some(v) => Ok(Some(v)),
                None => Ok(w.parse::<OptF64>()?.map(|x| x.0.unwrap_or(f64::NAN))),
            })?
            .map(Some))
    }

    /// One request's gaps (the array that comes next, after whitespace) into `out`, read in
    /// one pass, when every element is a number [`json_number::scan`] takes: true, the array
    /// read. Otherwise false and nothing read (`out` cleared), for serde_json to read it.
    fn plain_gaps(&mut self, out: &mut Vec<f64>) -> std::io::Result<bool> {
        out.clear();
        if self.peek()? != Some(b'[') {
            return Ok(false);
        }
        // Offsets from `pos`, which stays at the `[` until the array is read whole (`more`
        // keeps the bytes from `pos` on).
        let mut at = 1;
        let mut value_next = true;
        loop {
            let b = &self.buf[self.pos..];
            while b.get(at).is_some_and(u8::is_ascii_whitespace) {
                at += 1;
            }
            let Some(&c) = b.get(at) else {
                if self.more()? {
                    continue;
                }
                out.clear();
                return Ok(false);
            };
            if value_next {
                match json_number::scan(&b[at..]) {
                    Scan::Number(v, n) => {
                        out.push(v);
                        at += n;
                        // The common case, a comma right after the number, without a turn
                        // of the loop.
                        if b.get(at) == Some(&b',') {
                            at += 1;
                        } else {
                            value_next = false;
                        }
                        continue;
                    }
                    Scan::Incomplete => {
                        if self.more()? {
                            continue;
                        }
                    }
                    Scan::Other if c == b']' && out.is_empty() => {
                        self.pos += at + 1;
                        return Ok(true);
                    }
                    Scan::Other => {}
                }
            } else if c == b',' {
                at += 1;
                value_next = true;
                continue;
            } else if c == b']' {
                self.pos += at + 1;
                return Ok(true);
            }
            out.clear();
            return Ok(false);
        }
    }

    /// The array that comes next (its `[` the next byte), as the `Value` parsing it whole
    /// gives, its elements parsed one at a time into a vector of [`Window::hint`]'s size.
    fn value_array(&mut self) -> Step<Value> {
        let Some(Lenient(Some(items))) = self.lenient::<Value>()? else {
            return Ok(None);
        };
        Ok(Some(Value::Array(items)))
    }

    /// An `itls` array (next, its `[` not yet read), each request's gaps read as
    /// [`super::requests::GapValues`] reads them. With [`Window::gaps`], they are pushed there and
    /// each request gets a stand-in: one NaN when it has gaps, none else; without, each gets
    /// its gaps.
    fn gap_lists(&mut self) -> Step<Vec<Vec<f64>>> {
        let mut scratch = std::mem::take(&mut self.scratch);
        let got = self.gap_lists_with(&mut scratch);
        scratch.clear();
        self.scratch = scratch;
        got
    }

    /// [`Window::gap_lists`], `scratch` holding each request's gaps as they are read.
    fn gap_lists_with(&mut self, scratch: &mut Vec<f64>) -> Step<Vec<Vec<f64>>> {
        if self.expect(b'[')?.is_none() {
            return Ok(None);
        }
        let mut lists = Vec::with_capacity(self.hint);
        if self.peek()? == Some(b']') {
            self.pos += 1;
            return Ok(Some(lists));
        }
        loop {
            // Read into a reused buffer (by hand when plain, else by serde_json) and copied
            // once, to where it goes.
            let list = if self.plain_gaps(scratch)? {
                None
            } else {
                let Some(list) = self.parse::<ScratchGaps>()? else {
                    return Ok(None);
                };
                Some(list)
            };
            let gaps = list.as_ref().map_or(scratch.as_slice(), |l| l.0.as_slice());
            lists.push(match self.gaps.as_deref_mut() {
                Some(g) => {
                    g.push(gaps);
                    if gaps.is_empty() {
                        Vec::new()
                    } else {
                        vec![f64::NAN]
                    }
                }
                None => gaps.to_vec(),
            });
            if let Some(list) = list {
                list.recycle();
            }
            match self.peek()? {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    if self.gaps.is_none() && self.hint == 0 {
                        self.hint = lists.len();
                    }
                    return Ok(Some(lists));
                }
                _ => return Ok(None),
            }
        }
    }

    /// The members of the document's object (its `{` already read), per-request arrays
    /// lifted as [`Doc`]'s visitor lifts them.
    fn object(&mut self) -> Step<Doc> {
        let mut obj = Map::new();
        let mut arrays = RequestArrays::default();
        if self.peek()? == Some(b'}') {
            self.pos += 1;
            return Ok(Some(Doc {
                value: Value::Object(obj),
                arrays: None,
            }));
        }
        loop {
            if self.peek()? != Some(b'"') {
                return Ok(None);
            }
            let Some(key) = self.parse::<String>()? else {
                return Ok(None);
            };
            if self.expect(b':')?.is_none() {
                return Ok(None);
            }
            macro_rules! lift {
                ($t:ty) => {
                    match self.lenient::<$t>()? {
                        Some(l) => l,
                        None => return Ok(None),
                    }
                };
            }
            let lifted = match key.as_str() {
                "input_lens" | "output_lens" | "ttfts" | "start_times" => {
                    let Some(v) = self.numbers()? else {
                        return Ok(None);
                    };
                    let some = v.is_some();
                    match key.as_str() {
                        "input_lens" => arrays.input_lens = v,
                        "output_lens" => arrays.output_lens = v,
                        "ttfts" => arrays.ttfts = v,
                        _ => arrays.start_times = v,
                    }
                    some
                }
                "itls" => {
                    arrays.itls = if self.peek()? == Some(b'[') {
                        match self.gap_lists()? {
                            Some(lists) => Some(lists),
                            None => return Ok(None),
                        }
                    } else {
                        lift!(GapValues)
                            .0
                            .map(|v| v.into_iter().map(|g| g.0).collect())
                    };
                    arrays.itls.is_some()
                }
                "errors" => {
                    arrays.errors = lift!(OptText)
                        .0
                        .map(|v| v.into_iter().map(|e| e.0).collect());
                    arrays.errors.is_some()
                }
                "generated_texts" => {
                    lift!(IgnoredAny);
                    true
                }
                _ => {
                    // vLLM's `latencies`, one per request, parsed into a vector of that size.
                    let per_request = key == "latencies" && self.hint > 0;
                    let v = if per_request && self.peek()? == Some(b'[') {
                        self.value_array()?
                    } else {
                        self.parse::<Value>()?
                    };
                    let Some(v) = v else {
                        return Ok(None);
                    };
                    obj.insert(key, v);
                    match self.peek()? {
                        Some(b',') => {
                            self.pos += 1;
                            continue;
                        }
                        Some(b'}') => {
                            self.pos += 1;
                            break;
                        }
                        _ => return Ok(None),
                    }
                }
            };
            if !lifted {
                arrays.malformed.push(key.clone());
            }
            obj.insert(key, Value::Null);
            match self.peek()? {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    break;
                }
                _ => return Ok(None),
            }
        }
        let arrays = (!arrays.is_empty()).then(|| Box::new(arrays));
        Ok(Some(Doc {
            value: Value::Object(obj),
            arrays,
        }))
    }
}

#[cfg(test)]
mod tests;
