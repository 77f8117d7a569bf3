//! The one canonical writer: JSON and CSV streamed to any writer from records, from columns
//! (a row at a time, its requests rebuilt one at a time), or from records whose requests are
//! made while they are written (a load generator's stages). Neither the text nor a JSON tree
//! of the requests is ever held; only one record's fields exist as a `Value` at a time.
//! [`super::to_json`] and [`super::to_csv`] are this writer into a string.

use std::cell::Cell;
use std::collections::BTreeSet;
use std::io::{self, Write};
use std::ops::Range;

use serde::ser::{Error as _, SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};

use super::super::columns::{Columns, DimData, MetricColumn, RequestArrays};
use super::super::dim::{number_into, DimKey};
use super::super::metric::MetricKey;
use super::super::record::{Record, RequestDetail};
use super::super::SCHEMA_VERSION;
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
    let len = parts.iter().map(Part::len).sum();
    write_doc(w, len, Rows::Parts(parts))
}

/// Writes the canonical JSON document of `records`, each record's requests made as they are
/// written ([`Made`]).
pub fn write_json_made<W: Write>(w: W, records: &[(&Record, Made<'_>)]) -> io::Result<()> {
    write_doc(w, records.len(), Rows::Made(records))
}

fn write_doc<W: Write>(mut w: W, len: usize, rows: Rows<'_>) -> io::Result<()> {
    let doc = Doc {
        len,
        rows: Cell::new(Some(rows)),
    };
    serde_json::to_writer_pretty(&mut w, &doc).map_err(io::Error::from)?;
    w.write_all(b"\n")?;
    w.flush()
}

#[derive(Clone, Copy)]
enum Rows<'a> {
    Parts(&'a [Part<'a>]),
    Made(&'a [(&'a Record, Made<'a>)]),
}

struct Doc<'a> {
    len: usize,
    rows: Cell<Option<Rows<'a>>>,
}

impl Serialize for Doc<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("schema_version", &SCHEMA_VERSION)?;
        m.serialize_entry("records", &RecordsOut(self))?;
        m.end()
    }
}

struct RecordsOut<'d, 'a>(&'d Doc<'a>);

impl Serialize for RecordsOut<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let rows = self
            .0
            .rows
            .take()
            .ok_or_else(|| S::Error::custom("the records were written already"))?;
        let mut seq = s.serialize_seq(Some(self.0.len))?;
        let own = |r: &Record| Requests::Slice(0..r.requests.len());
        match rows {
            Rows::Parts(parts) => {
                for part in parts {
                    match part {
                        Part::Records(records) => {
                            for r in *records {
                                seq.serialize_element(&RecordOut(r, own(r)))?;
                            }
                        }
                        Part::Columns(c) => {
                            let arrays = c.requests();
                            for i in 0..c.len() {
                                if let Some(r) = c.record_without_requests(i) {
                                    let from = Requests::Columns(arrays, arrays.row_range(i));
                                    seq.serialize_element(&RecordOut(&r, from))?;
                                }
                            }
                        }
                    }
                }
            }
            Rows::Made(records) => {
                for (r, made) in records {
                    let from = match made {
                        _ if !r.requests.is_empty() => own(r),
                        Made::Each(n, f) => Requests::Made(*n, *f),
                        Made::Marker(m) => Requests::Marker(m),
                    };
                    seq.serialize_element(&RecordOut(r, from))?;
                }
            }
        }
        seq.end()
    }
}

/// A record's requests as they are written.
enum Requests<'a> {
    /// The record's own, these of them.
    Slice(Range<usize>),
    /// Rebuilt one at a time from columns.
    Columns(&'a RequestArrays, Range<usize>),
    /// Made one at a time.
    Made(usize, &'a dyn Fn(usize) -> RequestDetail),
    /// A marker string in their place.
    Marker(&'a str),
}

impl Requests<'_> {
    fn len(&self) -> usize {
        match self {
            Requests::Slice(range) | Requests::Columns(_, range) => range.len(),
            Requests::Made(n, _) => *n,
            Requests::Marker(_) => 1,
        }
    }
}

/// One record: its fields in [`record_fields`]'s order, then `requests` when it has any.
struct RecordOut<'a>(&'a Record, Requests<'a>);

impl Serialize for RecordOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let fields = record_fields(self.0);
        let some = self.1.len() > 0;
        let mut m = s.serialize_map(Some(fields.len() + usize::from(some)))?;
        for (k, v) in &fields {
            m.serialize_entry(k, v)?;
        }
        if some {
            m.serialize_entry("requests", &RequestsOut(self.0, &self.1))?;
        }
        m.end()
    }
}

struct RequestsOut<'a>(&'a Record, &'a Requests<'a>);

impl Serialize for RequestsOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.1.len()))?;
        match self.1 {
            Requests::Slice(range) => {
                for q in &self.0.requests[range.clone()] {
                    seq.serialize_element(&RequestOut(q))?;
                }
            }
            Requests::Columns(arrays, range) => {
                for q in range.clone() {
                    seq.serialize_element(&RequestOut(&arrays.request(q)))?;
                }
            }
            Requests::Made(n, f) => {
                for q in 0..*n {
                    seq.serialize_element(&RequestOut(&f(q)))?;
                }
            }
            Requests::Marker(m) => seq.serialize_element(m)?,
        }
        seq.end()
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

/// A canonical CSV column.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Column {
    Dim(DimKey),
    Metric(MetricKey),
    Inferred,
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
    let mut dims: BTreeSet<DimKey> = BTreeSet::new();
    let mut metrics: BTreeSet<MetricKey> = BTreeSet::new();
    let mut any_inferred = false;
    for part in parts {
        match part {
            Part::Records(records) => {
                for r in *records {
                    for (k, _) in r.dims() {
                        dims.insert(k);
                    }
                    for k in r.metrics.keys() {
                        metrics.insert(k.clone());
                    }
                    any_inferred |= !r.inferred.is_empty();
                }
            }
            Part::Columns(c) => {
                for col in c.dims() {
                    let used = match &col.data {
                        DimData::Text(t) => !t.values().is_empty(),
                        DimData::Count(n) => !n.values().is_empty(),
                        DimData::Real(n) => !n.values().is_empty(),
                    };
                    if used {
                        dims.insert(col.key.clone());
                    }
                }
                for col in c.metrics() {
                    if col.count() > 0 {
                        metrics.insert(col.key.clone());
                    }
                }
                any_inferred |= c.any_inferred();
            }
        }
    }
    let mut columns: Vec<Column> = dims.into_iter().map(Column::Dim).collect();
    columns.extend(metrics.into_iter().map(Column::Metric));
    if any_inferred {
        columns.push(Column::Inferred);
    }
    let mut out = csv::Writer::from_writer(&mut w);
    let header: Vec<String> = columns
        .iter()
        .map(|c| match c {
            Column::Dim(k) => k.name(),
            Column::Metric(k) => k.name(),
            Column::Inferred => "inferred".into(),
        })
        .collect();
    out.write_record(&header)?;
    let mut cell = String::new();
    for part in parts {
        match part {
            Part::Records(records) => {
                for r in *records {
                    for c in &columns {
                        match c {
                            Column::Dim(k) => {
                                cell = r.dim(k).map(|v| v.to_string()).unwrap_or_default()
                            }
                            Column::Metric(k) => match r.metric(k) {
                                Some(v) => number_into(&mut cell, v),
                                None => cell.clear(),
                            },
                            Column::Inferred => cell = inferred_cell(&r.inferred),
                        }
                        out.write_field(&cell)?;
                    }
                    out.write_record(None::<&[u8]>)?;
                }
            }
            Part::Columns(c) => write_columns(&mut out, &columns, c, &mut cell)?,
        }
    }
    out.flush()?;
    drop(out);
    w.flush()
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
