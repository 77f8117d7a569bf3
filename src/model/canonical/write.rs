//! The one canonical writer: JSON and CSV streamed to any writer from records, from columns
//! (a row at a time, its requests rebuilt one at a time), or from records whose requests are
//! made while they are written (a load generator's stages). Neither the text nor a JSON tree
//! of the requests is ever held; only one record's fields exist as a `Value` at a time.
//! [`super::to_json`] and [`super::to_csv`] are this writer into a string.

use std::collections::BTreeSet;
use std::io::{self, Write};
use std::ops::Range;

use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};

use super::super::columns::{Columns, DimData, MetricColumn, RequestArrays};
use super::super::dim::{number_into, DimKey};
use super::super::metric::MetricKey;
use super::super::record::{Record, RequestDetail};
use super::super::SCHEMA_VERSION;
use super::csv_text::Column;
use super::record_fields;

/// One input's rows, as records or as columns.
#[derive(Clone, Copy, Debug)]
pub enum Part<'a> {
    /// Records, each with its own requests.
    Records(&'a [Record]),
    /// Columns.
    Columns(&'a Columns),
}

impl Part<'_> {
    fn len(&self) -> usize {
        match self {
            Part::Records(r) => r.len(),
            Part::Columns(c) => c.len(),
        }
    }
}

/// Where a record's requests come from, for [`write_json_made`] (a record holding requests of
/// its own writes those instead).
#[derive(Clone, Copy)]
pub enum Made<'a> {
    /// Request `q` of `n` made by the function as it is written.
    Each(usize, &'a dyn Fn(usize) -> RequestDetail),
    /// One string where the requests go, for the caller to put them in place of afterwards
    /// (`"requests": ["<marker>"]`).
    Marker(&'a str),
}

/// Writes the canonical JSON document of every part's rows, in order (pretty-printed, final
/// newline).
pub fn write_json<W: Write>(w: W, parts: &[Part<'_>]) -> io::Result<()> {
    write_doc(w, PartsOut(parts))
}

/// Writes the canonical JSON document of `records`, each record's requests made as they are
/// written ([`Made`]).
pub fn write_json_made<W: Write>(w: W, records: &[(&Record, Made<'_>)]) -> io::Result<()> {
    write_doc(w, MadeOut(records))
}

/// [`write_json`] of records alone: the explorer writes only these, and this way carries none
/// of the columns' code.
pub(super) fn write_records_json<W: Write>(w: W, records: &[Record]) -> io::Result<()> {
    write_doc(w, RecordsOut(records))
}

fn write_doc<W: Write, R: RowsOut>(mut w: W, rows: R) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut w, &Doc(rows)).map_err(io::Error::from)?;
    w.write_all(b"\n")?;
    w.flush()
}

/// The rows of a document, each serialized as a [`RecordOut`] (a type per kind of source, so
/// a build writing records only carries nothing else).
trait RowsOut {
    fn len(&self) -> usize;
    fn each<S: SerializeSeq>(&self, seq: &mut S) -> Result<(), S::Error>;
}

struct RecordsOut<'a>(&'a [Record]);

impl RowsOut for RecordsOut<'_> {
    fn len(&self) -> usize {
        self.0.len()
    }

    fn each<S: SerializeSeq>(&self, seq: &mut S) -> Result<(), S::Error> {
        for r in self.0 {
            seq.serialize_element(&RecordOut(r, Own(&r.requests)))?;
        }
        Ok(())
    }
}

struct PartsOut<'a>(&'a [Part<'a>]);

impl RowsOut for PartsOut<'_> {
    fn len(&self) -> usize {
        self.0.iter().map(Part::len).sum()
    }

    fn each<S: SerializeSeq>(&self, seq: &mut S) -> Result<(), S::Error> {
        for part in self.0 {
            match part {
                Part::Records(records) => RecordsOut(records).each(seq)?,
                Part::Columns(c) => {
                    let arrays = c.requests();
                    for i in 0..c.len() {
                        if let Some(r) = c.record_without_requests(i) {
                            let from = FromColumns(arrays, arrays.row_range(i));
                            seq.serialize_element(&RecordOut(&r, from))?;
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

struct MadeOut<'a>(&'a [(&'a Record, Made<'a>)]);

impl RowsOut for MadeOut<'_> {
    fn len(&self) -> usize {
        self.0.len()
    }

    fn each<S: SerializeSeq>(&self, seq: &mut S) -> Result<(), S::Error> {
        for (r, made) in self.0 {
            match made {
                _ if !r.requests.is_empty() => {
                    seq.serialize_element(&RecordOut(r, Own(&r.requests)))?
                }
                Made::Each(n, f) => seq.serialize_element(&RecordOut(r, MadeEach(*n, *f)))?,
                Made::Marker(m) => seq.serialize_element(&RecordOut(r, MarkerOut(m)))?,
            }
        }
        Ok(())
    }
}

/// `{"schema_version": …, "records": [...]}`.
struct Doc<R>(R);

impl<R: RowsOut> Serialize for Doc<R> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("schema_version", &SCHEMA_VERSION)?;
        m.serialize_entry("records", &DocRecords(&self.0))?;
        m.end()
    }
}

struct DocRecords<'a, R>(&'a R);

impl<R: RowsOut> Serialize for DocRecords<'_, R> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        self.0.each(&mut seq)?;
        seq.end()
    }
}

/// A record's requests as they are written: a sequence that knows its length.
trait RequestsOut: Serialize {
    fn count(&self) -> usize;
}

/// The record's own.
struct Own<'a>(&'a [RequestDetail]);

impl Serialize for Own<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for q in self.0 {
            seq.serialize_element(&RequestOut(q))?;
        }
        seq.end()
    }
}

impl RequestsOut for Own<'_> {
    fn count(&self) -> usize {
        self.0.len()
    }
}

/// Rebuilt one at a time from columns.
struct FromColumns<'a>(&'a RequestArrays, Range<usize>);

impl Serialize for FromColumns<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.1.len()))?;
        for q in self.1.clone() {
            seq.serialize_element(&RequestOut(&self.0.request(q)))?;
        }
        seq.end()
    }
}

impl RequestsOut for FromColumns<'_> {
    fn count(&self) -> usize {
        self.1.len()
    }
}

/// Made one at a time.
struct MadeEach<'a>(usize, &'a dyn Fn(usize) -> RequestDetail);

impl Serialize for MadeEach<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0))?;
        for q in 0..self.0 {
            seq.serialize_element(&RequestOut(&(self.1)(q)))?;
        }
        seq.end()
    }
}

impl RequestsOut for MadeEach<'_> {
    fn count(&self) -> usize {
        self.0
    }
}

/// A marker string in their place.
struct MarkerOut<'a>(&'a str);

impl Serialize for MarkerOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(1))?;
        seq.serialize_element(self.0)?;
        seq.end()
    }
}

impl RequestsOut for MarkerOut<'_> {
    fn count(&self) -> usize {
        1
    }
}

/// One record: its fields in [`record_fields`]'s order, then `requests` when it has any.
struct RecordOut<'a, Q>(&'a Record, Q);

impl<Q: RequestsOut> Serialize for RecordOut<'_, Q> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let fields = record_fields(self.0);
        let some = self.1.count() > 0;
        let mut m = s.serialize_map(Some(fields.len() + usize::from(some)))?;
        for (k, v) in &fields {
            m.serialize_entry(k, v)?;
        }
        if some {
            m.serialize_entry("requests", &self.1)?;
        }
        m.end()
    }
}

/// A number as the canonical files hold it: finite as a number, else `"inf"`, `"-inf"` or
/// `"NaN"`.
pub(super) struct Num(pub f64);

impl Serialize for Num {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0.is_finite() {
            s.serialize_f64(self.0)
        } else {
            let mut text = String::new();
            number_into(&mut text, self.0);
            s.serialize_str(&text)
        }
    }
}

struct Nums<'a>(&'a crate::model::Gaps);

impl Serialize for Nums<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for v in self.0 {
            seq.serialize_element(&Num(v))?;
        }
        seq.end()
    }
}

/// One request, the fields and order of the canonical `requests` entries (the timing on the
/// stage's clock and the failure kind only when known, so files without them stay as they
/// were).
pub struct RequestOut<'a>(pub &'a RequestDetail);

impl Serialize for RequestOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let r = self.0;
        let n = 6
            + usize::from(r.intended_s.is_some())
            + usize::from(r.sent_s.is_some())
            + usize::from(r.error_kind.is_some());
        let mut m = s.serialize_map(Some(n))?;
        m.serialize_entry("input_len", &r.input_len)?;
        m.serialize_entry("output_len", &r.output_len)?;
        m.serialize_entry("ttft_ms", &r.ttft_ms.map(Num))?;
        m.serialize_entry("itl_ms", &Nums(&r.itl_ms))?;
        m.serialize_entry("e2el_ms", &r.e2el_ms.map(Num))?;
        m.serialize_entry("error", &r.error)?;
        if let Some(v) = r.intended_s {
            m.serialize_entry("intended_s", &Num(v))?;
        }
        if let Some(v) = r.sent_s {
            m.serialize_entry("sent_s", &Num(v))?;
        }
        if let Some(k) = &r.error_kind {
            m.serialize_entry("error_kind", k)?;
        }
        m.end()
    }
}

fn inferred_cell(map: &std::collections::BTreeMap<String, String>) -> String {
    map.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(";")
}

/// Writes the canonical CSV of every part's rows, in order: a column for each dimension and
/// metric some row has (canonical names, in canonical order), `inferred` last. Numeric
/// dimension values of columns are written once per distinct value, not once a row.
pub fn write_csv<W: Write>(mut w: W, parts: &[Part<'_>]) -> io::Result<()> {
    let mut used = Used::default();
    for part in parts {
        match part {
            Part::Records(records) => used.records(records),
            Part::Columns(c) => {
                for col in c.dims() {
                    let any = match &col.data {
                        DimData::Text(t) => !t.values().is_empty(),
                        DimData::Count(n) => !n.values().is_empty(),
                        DimData::Real(n) => !n.values().is_empty(),
                    };
                    if any {
                        used.dims.insert(col.key.clone());
                    }
                }
                for col in c.metrics() {
                    if col.count() > 0 {
                        used.metrics.insert(col.key.clone());
                    }
                }
                used.inferred |= c.any_inferred();
            }
        }
    }
    let columns = used.columns();
    let mut out = csv_with_header(&mut w, &columns)?;
    let mut cell = String::new();
    for part in parts {
        match part {
            Part::Records(records) => record_rows(&mut out, &columns, records, &mut cell)?,
            Part::Columns(c) => write_columns(&mut out, &columns, c, &mut cell)?,
        }
    }
    out.flush()?;
    drop(out);
    w.flush()
}

/// [`write_csv`] of records alone, into a string: the explorer's (no columns' code, and the
/// same `csv::Writer<Vec<u8>>` as the page's other CSV export, so the page carries one).
pub(super) fn records_csv(records: &[Record]) -> String {
    let mut used = Used::default();
    used.records(records);
    let columns = used.columns();
    let written = csv_with_header(Vec::new(), &columns).and_then(|mut out| {
        record_rows(&mut out, &columns, records, &mut String::new())?;
        out.into_inner().map_err(|e| e.into_error())
    });
    // Writing to a Vec cannot fail, and every cell is text already.
    written
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .unwrap_or_default()
}

/// The fields some row uses.
#[derive(Default)]
struct Used {
    dims: BTreeSet<DimKey>,
    metrics: BTreeSet<MetricKey>,
    inferred: bool,
}

impl Used {
    fn records(&mut self, records: &[Record]) {
        for r in records {
            for (k, _) in r.dims() {
                self.dims.insert(k);
            }
            for k in r.metrics.keys() {
                self.metrics.insert(k.clone());
            }
            self.inferred |= !r.inferred.is_empty();
        }
    }

    fn columns(self) -> Vec<Column> {
        let mut columns: Vec<Column> = self.dims.into_iter().map(Column::Dim).collect();
        columns.extend(self.metrics.into_iter().map(Column::Metric));
        if self.inferred {
            columns.push(Column::Inferred);
        }
        columns
    }
}

fn csv_with_header<W: Write>(w: W, columns: &[Column]) -> io::Result<csv::Writer<W>> {
    let mut out = csv::Writer::from_writer(w);
    let header: Vec<String> = columns.iter().map(Column::name).collect();
    out.write_record(&header)?;
    Ok(out)
}

fn record_rows<W: Write>(
    out: &mut csv::Writer<W>,
    columns: &[Column],
    records: &[Record],
    cell: &mut String,
) -> io::Result<()> {
    for r in records {
        for c in columns {
            record_cell(r, c, cell);
            out.write_field(&*cell)?;
        }
        out.write_record(None::<&[u8]>)?;
    }
    Ok(())
}

/// The text `r` has in column `c`, into `cell`.
fn record_cell(r: &Record, c: &Column, cell: &mut String) {
    match c {
        Column::Dim(k) => *cell = r.dim(k).map(|v| v.to_string()).unwrap_or_default(),
        Column::Metric(k) => match r.metric(k) {
            Some(v) => number_into(cell, v),
            None => cell.clear(),
        },
        Column::Inferred => *cell = inferred_cell(&r.inferred),
    }
}

/// Whether canonical CSV holds `records` exactly: it has a metric column (so a reader takes
/// it for canonical CSV), and every record's cells, read back by the reader's own cell rule
/// ([`Column::read_cell`]), make the same record (per-request detail, tags the CSV has no
/// column for, text with spaces at its ends or numbers a cell cannot keep do not). The CSV
/// quoting between writer and reader loses nothing, so this needs no CSV reader.
pub(super) fn csv_holds_records(records: &[Record]) -> bool {
    let mut used = Used::default();
    used.records(records);
    let columns = used.columns();
    if !columns.iter().any(|c| matches!(c, Column::Metric(_))) {
        return false;
    }
    let mut cell = String::new();
    records.iter().all(|r| {
        let mut back = Record::default();
        columns.iter().all(|c| {
            record_cell(r, c, &mut cell);
            c.read_cell(&cell, &mut back).is_ok()
        }) && back == *r
    })
}

/// Where an output column's cells come from in one [`Columns`].
enum Source<'a> {
    /// A dimension: its distinct values written out once (code `k + 1` is entry `k`).
    Dim(&'a DimData, Vec<String>),
    Metric(&'a MetricColumn),
    Inferred,
    Missing,
}

fn write_columns<W: Write>(
    out: &mut csv::Writer<W>,
    columns: &[Column],
    c: &Columns,
    cell: &mut String,
) -> io::Result<()> {
    let sources: Vec<Source<'_>> = columns
        .iter()
        .map(|col| match col {
            Column::Dim(k) => match c.dim(k) {
                Some(d) => {
                    let number = |v: f64| {
                        let mut s = String::new();
                        number_into(&mut s, v);
                        s
                    };
                    let texts = match &d.data {
                        DimData::Text(t) => t.values().iter().map(|v| v.to_string()).collect(),
                        DimData::Count(n) => n.values().iter().map(|v| number(*v as f64)).collect(),
                        DimData::Real(n) => n.values().iter().map(|v| number(*v)).collect(),
                    };
                    Source::Dim(&d.data, texts)
                }
                None => Source::Missing,
            },
            Column::Metric(k) => match c.metric_position(k) {
                Some(p) => Source::Metric(&c.metrics()[p]),
                None => Source::Missing,
            },
            Column::Inferred => Source::Inferred,
        })
        .collect();
    for i in 0..c.len() {
        for s in &sources {
            match s {
                Source::Dim(data, texts) => {
                    let text = (data.code(i) as usize)
                        .checked_sub(1)
                        .and_then(|k| texts.get(k))
                        .map_or("", String::as_str);
                    out.write_field(text)?;
                }
                Source::Metric(m) => {
                    match m.get(i) {
                        Some(v) => number_into(cell, v),
                        None => cell.clear(),
                    }
                    out.write_field(&*cell)?;
                }
                Source::Inferred => {
                    let text = c.inferred(i).map(inferred_cell).unwrap_or_default();
                    out.write_field(text)?;
                }
                Source::Missing => out.write_field("")?,
            }
        }
        out.write_record(None::<&[u8]>)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::to_json_value;
    use super::*;
    use crate::model::columns::Columns;

    /// The document as a `Value` tree, printed: the reference the writer is checked against.
    fn tree(records: &[Record]) -> String {
        serde_json::to_string_pretty(&to_json_value(records)).unwrap() + "\n"
    }

    fn with_requests() -> Record {
        let mut r = Record {
            model: Some("m".into()),
            request_rate: Some(f64::INFINITY),
            ..Record::default()
        };
        r.tags.insert("node".into(), "a7".into());
        r.metrics.insert(MetricKey::Extra("x".into()), f64::NAN);
        r.requests = vec![
            RequestDetail {
                input_len: Some(3),
                ttft_ms: Some(1.5),
                itl_ms: vec![0.1, f64::INFINITY, 2.0].into(),
                sent_s: Some(0.25),
                ..RequestDetail::default()
            },
            RequestDetail {
                error: Some("boom".into()),
                error_kind: Some("http_503".into()),
                e2el_ms: Some(f64::NEG_INFINITY),
                intended_s: Some(0.0),
                ..RequestDetail::default()
            },
        ];
        r
    }

    #[test]
    fn records_columns_and_made_requests_write_the_value_trees_text() {
        let r = with_requests();
        let plain = Record {
            gpu: Some("H100".into()),
            ..Record::default()
        };
        for records in [vec![], vec![plain.clone()], vec![r.clone(), plain.clone()]] {
            assert_eq!(super::super::to_json(&records), tree(&records));
        }
        // Columns (the requests rebuilt one at a time) and records, in order.
        let mid = crate::ingest::read("mid.csv", b"model,mean_ttft_ms\nm2,1.5\n").unwrap();
        let mut records = vec![r.clone(), plain.clone()];
        records.extend(mid.records.iter().cloned());
        records.push(r.clone());
        let (head, tail) = (
            Columns::from_records(&records[..2]),
            Columns::from_records(&records[3..]),
        );
        let parts = [
            Part::Columns(&head),
            Part::Records(&mid.records),
            Part::Columns(&tail),
        ];
        let mut out = Vec::new();
        write_json(&mut out, &parts).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), tree(&records));
        // Requests made as they are written; a record's own requests win.
        let bare = Record {
            requests: Vec::new(),
            ..r.clone()
        };
        let make = |q: usize| r.requests[q].clone();
        let made = [
            (&bare, Made::Each(2, &make)),
            (&r, Made::Each(0, &make)),
            (&plain, Made::Each(0, &make)),
        ];
        let mut out = Vec::new();
        write_json_made(&mut out, &made).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            tree(&[r.clone(), r.clone(), plain])
        );
        // A marker in the requests' place.
        let mut out = Vec::new();
        write_json_made(&mut out, &[(&bare, Made::Marker("here"))]).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains("\"requests\": [\n        \"here\"\n      ]"),
            "{text}"
        );
    }

    #[test]
    fn csv_of_records_has_a_column_per_field_used() {
        let r = with_requests();
        let text = super::super::to_csv(&[r, Record::default()]);
        assert_eq!(
            text,
            "model,request_rate,tag.node,extra.x\nm,inf,a7,NaN\n,,,\n"
        );
    }
}
