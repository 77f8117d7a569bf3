//! The compact binary form in which the parse worker hands records to the page.
//!
//! The page decodes records batch by batch between frames, so decoding must be cheap: a batch
//! names each dimension and metric it uses once, in a key table, and records then refer to
//! keys by number, with numbers as raw little-endian `f64`, time-series columns as packed
//! runs, and per-request inter-token latencies as packed runs of integers where their values
//! are short decimals (else `f64`: [`Gaps`]). Decoding is copying bytes and setting fields through
//! [`Record`]'s public API; nothing is parsed from text. On the browser bench's files this
//! decodes several times faster than canonical JSON text (measured by `benches/wire.rs`:
//! `cargo bench --bench wire`).
//!
//! Shared and pure: no browser types; the worker and the page wrap the bytes in an
//! `ArrayBuffer` themselves.

use std::collections::HashMap;
use std::sync::Arc;

use crate::model::columns::{with_codes, Codes, Columns, DimData};
use crate::model::{
    Dim, DimKey, DimKind, DimValue, Gaps, GapsParts, Index, IndexColumn as Column, IndexError,
    MetricKey, Metrics, Record, RequestDetail, SetDimError,
};

mod index;
mod requests;

pub use index::{decode_index, encode_index, TableEncoder, TableRows};
pub use requests::{append_requests, encode_gaps, encode_requests, GapsIn, StreamedGaps};

/// Why a batch could not be decoded (only a bug or a truncated buffer gives one). Every
/// variant names the byte offset of the problem ([`WireError::at`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WireError {
    /// The buffer ends inside a field.
    #[error("record batch is damaged at byte {at}: the buffer ends early")]
    EndsEarly {
        /// Byte offset of the field that is cut.
        at: usize,
    },
    /// A key-table entry of an unknown kind or name.
    #[error("record batch is damaged at byte {at}: an unknown key")]
    UnknownKey {
        /// Byte offset of the entry.
        at: usize,
    },
    /// A record's dimension refers to a key that is not a dimension.
    #[error("record batch is damaged at byte {at}: not a dimension key")]
    NotADimensionKey {
        /// Byte offset of the reference.
        at: usize,
    },
    /// A record's metric refers to a key that is not a metric.
    #[error("record batch is damaged at byte {at}: not a metric key")]
    NotAMetricKey {
        /// Byte offset of the reference.
        at: usize,
    },
    /// A dimension value of an unknown kind.
    #[error("record batch is damaged at byte {at}: an unknown value kind")]
    UnknownValueKind {
        /// Byte offset of the dimension.
        at: usize,
    },
    /// A dimension value the record refused (text for a count, say).
    #[error("record batch is damaged at byte {at}: a dimension value its record refused")]
    RefusedValue {
        /// Byte offset of the dimension.
        at: usize,
        /// What the record said.
        #[source]
        source: SetDimError,
    },
    /// Text that is not UTF-8.
    #[error("record batch is damaged at byte {at}: text that is not UTF-8")]
    NotUtf8 {
        /// Byte offset of the text.
        at: usize,
        /// Where the UTF-8 breaks.
        #[source]
        source: std::str::Utf8Error,
    },
    /// Bytes after the last record.
    #[error("record batch is damaged at byte {at}: bytes left after the last record")]
    TrailingBytes {
        /// Byte offset of the first extra byte.
        at: usize,
    },
    /// A batch of rows running past the rows its index has.
    #[error("record batch is damaged at byte {at}: more rows than the index has")]
    RowsPastEnd {
        /// Byte offset of the row count.
        at: usize,
    },
    /// A batch of requests for a record that was not sent.
    #[error("request batch is damaged at byte {at}: its record was not sent")]
    NoSuchRecord {
        /// Byte offset of the record's number.
        at: usize,
    },
    /// A batch of requests whose gaps were to be sent ahead, and are not (fewer lists wait,
    /// or of other lengths).
    #[error("request batch is damaged at byte {at}: its gaps were not sent ahead")]
    GapsNotAhead {
        /// Byte offset of the requests' counts of gaps.
        at: usize,
    },
    /// An index whose parts do not fit together.
    #[error("record index is damaged at byte {at}: {source}")]
    BadIndex {
        /// Byte offset of the end of the index.
        at: usize,
        /// What does not fit.
        #[source]
        source: IndexError,
    },
}

impl WireError {
    /// Byte offset of the problem.
    pub fn at(&self) -> usize {
        match self {
            WireError::EndsEarly { at }
            | WireError::UnknownKey { at }
            | WireError::NotADimensionKey { at }
            | WireError::NotAMetricKey { at }
            | WireError::UnknownValueKind { at }
            | WireError::RefusedValue { at, .. }
            | WireError::NotUtf8 { at, .. }
            | WireError::TrailingBytes { at }
            | WireError::RowsPastEnd { at }
            | WireError::NoSuchRecord { at }
            | WireError::GapsNotAhead { at }
            | WireError::BadIndex { at, .. } => *at,
        }
    }

    /// The same error with its offset moved by `by` bytes (for a part read from inside a
    /// message).
    pub(crate) fn shifted(mut self, by: usize) -> WireError {
        match &mut self {
            WireError::EndsEarly { at }
            | WireError::UnknownKey { at }
            | WireError::NotADimensionKey { at }
            | WireError::NotAMetricKey { at }
            | WireError::UnknownValueKind { at }
            | WireError::RefusedValue { at, .. }
            | WireError::NotUtf8 { at, .. }
            | WireError::TrailingBytes { at }
            | WireError::RowsPastEnd { at }
            | WireError::NoSuchRecord { at }
            | WireError::GapsNotAhead { at }
            | WireError::BadIndex { at, .. } => *at += by,
        }
        self
    }
}

const KEY_DIM: u8 = 0;
const KEY_TAG: u8 = 1;
const KEY_METRIC: u8 = 2;

const VALUE_NUM: u8 = 0;
const VALUE_TEXT: u8 = 1;

/// Encodes records, in order.
pub fn encode_records(records: &[Record]) -> Vec<u8> {
    let mut dims: HashMap<DimKey, u32> = HashMap::new();
    let mut metrics: HashMap<MetricKey, u32> = HashMap::new();
    let mut keys = Vec::new();
    let mut n_keys = 0u32;
    let mut body = Vec::with_capacity(64 * records.len() + 8);
    put_u32(&mut body, records.len() as u32);
    for r in records {
        let fields: Vec<(DimKey, DimValue)> = r.dims().collect();
        put_u32(&mut body, fields.len() as u32);
        for (key, value) in fields {
            let id = *dims.entry(key).or_insert_with_key(|key| {
                match key {
                    DimKey::Known(d) => {
                        keys.push(KEY_DIM);
                        put_str(&mut keys, d.name());
                    }
                    DimKey::Tag(t) => {
                        keys.push(KEY_TAG);
                        put_str(&mut keys, t);
                    }
                }
                n_keys += 1;
                n_keys - 1
            });
            put_u32(&mut body, id);
            match value {
                DimValue::Num(v) => {
                    body.push(VALUE_NUM);
                    put_f64(&mut body, v);
                }
                DimValue::Text(t) => {
                    body.push(VALUE_TEXT);
                    put_str(&mut body, &t);
                }
            }
        }
        put_u32(&mut body, r.metrics.len() as u32);
        for (key, value) in r.metrics.iter() {
            let id = match metrics.get(key) {
                Some(id) => *id,
                None => {
                    keys.push(KEY_METRIC);
                    put_str(&mut keys, &key.name());
                    metrics.insert(key.clone(), n_keys);
                    n_keys += 1;
                    n_keys - 1
                }
            };
            put_u32(&mut body, id);
            put_f64(&mut body, *value);
        }
        put_u32(&mut body, r.inferred.len() as u32);
        for (field, from) in &r.inferred {
            put_str(&mut body, field);
            put_str(&mut body, from);
        }
        put_u32(&mut body, r.requests.len() as u32);
        for q in &r.requests {
            put_opt_u64(&mut body, q.input_len);
            put_opt_u64(&mut body, q.output_len);
            put_opt_f64(&mut body, q.ttft_ms);
            put_opt_f64(&mut body, q.e2el_ms);
            put_u32(&mut body, q.itl_ms.len() as u32);
            put_gaps(&mut body, &q.itl_ms);
            match &q.error {
                Some(e) => {
                    body.push(1);
                    put_str(&mut body, e);
                }
                None => body.push(0),
            }
            put_opt_f64(&mut body, q.intended_s);
            put_opt_f64(&mut body, q.sent_s);
            match &q.error_kind {
                Some(k) => {
                    body.push(1);
                    put_str(&mut body, k);
                }
                None => body.push(0),
            }
        }
        // The run's time series, column by column.
        put_u32(&mut body, r.series.len() as u32);
        for (name, column) in &r.series {
            put_str(&mut body, name);
            put_u32(&mut body, column.len() as u32);
            body.reserve(8 * column.len());
            for v in column {
                put_f64(&mut body, *v);
            }
        }
    }
    let mut out = Vec::with_capacity(4 + keys.len() + body.len());
    put_u32(&mut out, n_keys);
    out.extend_from_slice(&keys);
    out.extend_from_slice(&body);
    out
}

/// An entry of a batch's key table: what the numbers records use stand for.
enum KeyEntry {
    Dim(DimKey),
    Metric(MetricKey),
}

/// Decodes what [`encode_records`] wrote.
pub fn decode_records(bytes: &[u8]) -> Result<Vec<Record>, WireError> {
    let mut reader = Reader { bytes, at: 0 };
    let n_keys = reader.u32()? as usize;
    let mut keys = Vec::with_capacity(n_keys.min(bytes.len()));
    for _ in 0..n_keys {
        let at = reader.at;
        let kind = reader.u8()?;
        let name = reader.str()?;
        let key = match kind {
            KEY_DIM => DimKey::from_name(name)
                .filter(|k| matches!(k, DimKey::Known(_)))
                .map(KeyEntry::Dim),
            KEY_TAG => Some(KeyEntry::Dim(DimKey::Tag(name.to_string()))),
            KEY_METRIC => MetricKey::from_name(name).map(KeyEntry::Metric),
            _ => None,
        };
        keys.push(key.ok_or(WireError::UnknownKey { at })?);
    }
    let n = reader.u32()? as usize;
    let mut records = Vec::with_capacity(n.min(bytes.len()));
    // The text of well-known dimensions, one shared copy per distinct value and key in the
    // batch: a column of a million rows repeats a few values, and an allocation per cell made
    // decoding slower and the page's memory larger.
    let mut shared: Vec<HashMap<&[u8], Arc<str>>> = keys.iter().map(|_| HashMap::new()).collect();
    for _ in 0..n {
        let mut record = Record::default();
        for _ in 0..reader.u32()? {
            let at = reader.at;
            let id = reader.u32()? as usize;
            let key = match keys.get(id) {
                Some(KeyEntry::Dim(k)) => k,
                _ => return Err(WireError::NotADimensionKey { at }),
            };
            let value = match reader.u8()? {
                VALUE_NUM => DimValue::Num(reader.f64()?),
                VALUE_TEXT => {
                    let text = reader.str()?;
                    if let DimKey::Known(d) = key {
                        if let (DimKind::Text, Some(cache)) = (d.kind(), shared.get_mut(id)) {
                            let value = cache
                                .entry(text.as_bytes())
                                .or_insert_with(|| Arc::from(text))
                                .clone();
                            set_text(&mut record, *d, value);
                            continue;
                        }
                    }
                    DimValue::Text(text.to_string())
                }
                _ => return Err(WireError::UnknownValueKind { at }),
            };
            record
                .set_dim(key, Some(value))
                .map_err(|source| WireError::RefusedValue { at, source })?;
        }
        for _ in 0..reader.u32()? {
            let at = reader.at;
            let key = match keys.get(reader.u32()? as usize) {
                Some(KeyEntry::Metric(k)) => k,
                _ => return Err(WireError::NotAMetricKey { at }),
            };
            record.set_metric(key.clone(), reader.f64()?);
        }
        for _ in 0..reader.u32()? {
            let field = reader.str()?.to_string();
            let from = reader.str()?.to_string();
            record.inferred.insert(field, from);
        }
        let n_requests = reader.u32()? as usize;
        record
            .requests
            .reserve(n_requests.min(bytes.len() - reader.at));
        for _ in 0..n_requests {
            let input_len = reader.opt_u64()?;
            let output_len = reader.opt_u64()?;
            let ttft_ms = reader.opt_f64()?;
            let e2el_ms = reader.opt_f64()?;
            let n_itl = reader.u32()? as usize;
            let itl_ms = gaps(&mut reader, n_itl)?;
            let error = match reader.u8()? {
                0 => None,
                _ => Some(reader.str()?.to_string()),
            };
            let intended_s = reader.opt_f64()?;
            let sent_s = reader.opt_f64()?;
            let error_kind = match reader.u8()? {
                0 => None,
                _ => Some(reader.str()?.to_string()),
            };
            record.requests.push(RequestDetail {
                input_len,
                output_len,
                ttft_ms,
                itl_ms,
                e2el_ms,
                error,
                intended_s,
                sent_s,
                error_kind,
            });
        }
        for _ in 0..reader.u32()? {
            let name = reader.str()?.to_string();
            let len = reader.u32()? as usize;
            let raw = reader.take(len.saturating_mul(8))?;
            record
                .series
                .insert(name, raw.chunks_exact(8).map(f64_of).collect());
        }
        records.push(record);
    }
    if reader.at != bytes.len() {
        return Err(WireError::TrailingBytes { at: reader.at });
    }
    Ok(records)
}

/// Sets a text dimension to a shared value.
fn set_text(record: &mut Record, d: Dim, value: Arc<str>) {
    if let Some(slot) = record.text_field_mut(d) {
        *slot = Some(value);
    }
}

/// A list of gaps whose length went before: `f64` values, or integers with the two powers of
/// ten they are read back with ([`Gaps`]).
const GAPS_F64: u8 = 0;
const GAPS_U16: u8 = 1;
const GAPS_I32: u8 = 2;

/// Writes one list of gaps as integers where its values allow ([`Gaps`]): a kind byte, the
/// powers of ten for integers, then the values (the length goes apart).
fn put_gaps(out: &mut Vec<u8>, gaps: &Gaps) {
    // A list of `f64` whose values allow integers goes as integers (one that does not is
    // written as it is, not copied first).
    let tighter = match gaps.parts() {
        GapsParts::Raw(values) => Gaps::as_integers(values),
        _ => None,
    };
    let gaps = tighter.as_ref().unwrap_or(gaps);
    match gaps.parts() {
        GapsParts::Raw(values) => {
            out.push(GAPS_F64);
            for v in values {
                put_f64(out, *v);
            }
        }
        GapsParts::Small { div, mul, ints } => {
            out.extend([GAPS_U16, div, mul]);
            for n in ints {
                out.extend_from_slice(&n.to_le_bytes());
            }
        }
        GapsParts::Wide { div, mul, ints } => {
            out.extend([GAPS_I32, div, mul]);
            for n in ints {
                out.extend_from_slice(&n.to_le_bytes());
            }
        }
    }
}

/// Reads a list [`put_gaps`] wrote, of `len` values.
fn gaps(reader: &mut Reader<'_>, len: usize) -> Result<Gaps, WireError> {
    let at = reader.at;
    let kind = reader.u8()?;
    let made = match kind {
        GAPS_F64 => {
            let raw = reader.take(len.saturating_mul(8))?;
            let values: Vec<f64> = raw.chunks_exact(8).map(f64_of).collect();
            Ok(Gaps::from(values))
        }
        GAPS_U16 => {
            let (div, mul, raw) = int_parts(reader, len, 2)?;
            let ints: Vec<u16> = raw
                .chunks_exact(2)
                .map(|b| u16::from_le_bytes([b[0], b[1]]))
                .collect();
            Gaps::from_parts(GapsParts::Small {
                div,
                mul,
                ints: &ints,
            })
        }
        GAPS_I32 => {
            let (div, mul, raw) = int_parts(reader, len, 4)?;
            let ints: Vec<i32> = raw
                .chunks_exact(4)
                .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            Gaps::from_parts(GapsParts::Wide {
                div,
                mul,
                ints: &ints,
            })
        }
        _ => return Err(WireError::UnknownValueKind { at }),
    };
    made.map_err(|_| WireError::UnknownValueKind { at })
}

/// The powers of ten and the bytes of `len` integers `width` bytes wide.
fn int_parts<'a>(
    reader: &mut Reader<'a>,
    len: usize,
    width: usize,
) -> Result<(u8, u8, &'a [u8]), WireError> {
    let (div, mul) = (reader.u8()?, reader.u8()?);
    Ok((div, mul, reader.take(len.saturating_mul(width))?))
}

fn put_u32s(out: &mut Vec<u8>, values: &[u32]) {
    out.reserve(4 * values.len());
    for v in values {
        out.extend_from_slice(&v.to_le_bytes());
    }
}

/// Codes `rows` of `codes` as raw little-endian `u32` (whatever width they are held in).
fn put_codes(out: &mut Vec<u8>, codes: &Codes, rows: std::ops::Range<usize>) {
    out.reserve(4 * rows.len());
    with_codes!(codes, s => {
        for i in rows {
            out.extend_from_slice(&s.at(i).to_le_bytes());
        }
    });
}

fn put_u32(out: &mut Vec<u8>, n: u32) {
    out.extend_from_slice(&n.to_le_bytes());
}

fn put_f64(out: &mut Vec<u8>, v: f64) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_u32(out, s.len() as u32);
    out.extend_from_slice(s.as_bytes());
}

fn put_opt_u64(out: &mut Vec<u8>, v: Option<u64>) {
    match v {
        Some(v) => {
            out.push(1);
            out.extend_from_slice(&v.to_le_bytes());
        }
        None => out.push(0),
    }
}

fn put_opt_f64(out: &mut Vec<u8>, v: Option<f64>) {
    match v {
        Some(v) => {
            out.push(1);
            put_f64(out, v);
        }
        None => out.push(0),
    }
}

fn f64_of(b: &[u8]) -> f64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(b);
    f64::from_le_bytes(a)
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let Some(end) = end else {
            return Err(WireError::EndsEarly { at: self.at });
        };
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn u32s(&mut self, n: usize) -> Result<Vec<u32>, WireError> {
        let raw = self.take(n.saturating_mul(4))?;
        Ok(raw
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect())
    }

    /// `n` codes sent as `u32`, held as narrow as they allow (never `n` `u32` at once).
    fn codes(&mut self, n: usize) -> Result<Codes, WireError> {
        let raw = self.take(n.saturating_mul(4))?;
        Ok(Codes::from_codes(
            raw.chunks_exact(4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        ))
    }

    fn u8(&mut self) -> Result<u8, WireError> {
        Ok(self.take(1)?[0])
    }

    fn u32(&mut self) -> Result<u32, WireError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn f64(&mut self) -> Result<f64, WireError> {
        Ok(f64_of(self.take(8)?))
    }

    fn opt_u64(&mut self) -> Result<Option<u64>, WireError> {
        Ok(match self.u8()? {
            0 => None,
            _ => Some(u64::from_le_bytes(self.f64()?.to_le_bytes())),
        })
    }

    fn opt_f64(&mut self) -> Result<Option<f64>, WireError> {
        Ok(match self.u8()? {
            0 => None,
            _ => Some(self.f64()?),
        })
    }

    fn str(&mut self) -> Result<&'a str, WireError> {
        let n = self.u32()? as usize;
        let at = self.at;
        std::str::from_utf8(self.take(n)?).map_err(|source| WireError::NotUtf8 { at, source })
    }
}
