//! Canonical JSON written straight to an output, record by record: the same bytes as
//! [`canonical::to_json`], without building the document as a `serde_json::Value` tree and a
//! `String` first (for a run with millions of per-request values those took about 14 times
//! the input file in memory). Each record is dropped once written; only one record's fields
//! (never its per-request detail) exist as a `Value` at a time.

use std::cell::RefCell;
use std::io::Write;

use serde::ser::{Error as _, SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};

use crate::ingest::{Contents, IngestedColumns};
use crate::model::columns::RequestArrays;
use crate::model::{canonical, format_number, Gaps, Record, RequestDetail, SCHEMA_VERSION};

/// Writes `records` as the canonical JSON document (pretty-printed, trailing newline), the
/// same text as [`canonical::to_json`].
pub fn write_json(records: Vec<Record>, out: impl Write) -> std::io::Result<()> {
    write_parts(vec![Source::Records(records)], out)
}

/// Writes the rows of `contents` (records and columns, in order) as [`write_json`] writes
/// records: a row of columns is rebuilt as a record without its per-request detail, and its
/// requests are rebuilt one at a time as they are written.
pub fn write_json_contents(contents: Vec<Contents>, out: impl Write) -> std::io::Result<()> {
    let parts = contents
        .into_iter()
        .map(|c| match c {
            Contents::Records(r) => Source::Records(r.records),
            Contents::Columns(c) => Source::Columns(c),
        })
        .collect();
    write_parts(parts, out)
}

/// Rows to write.
enum Source {
    Records(Vec<Record>),
    Columns(Box<IngestedColumns>),
}

impl Source {
    fn len(&self) -> usize {
        match self {
            Source::Records(r) => r.len(),
            Source::Columns(c) => c.columns.len(),
        }
    }
}

fn write_parts(parts: Vec<Source>, mut out: impl Write) -> std::io::Result<()> {
    let doc = Doc {
        len: parts.iter().map(Source::len).sum(),
        parts: RefCell::new(parts.into_iter()),
    };
    serde_json::to_writer_pretty(&mut out, &doc).map_err(std::io::Error::other)?;
    out.write_all(b"\n")?;
    out.flush()
}

struct Doc {
    len: usize,
    parts: RefCell<std::vec::IntoIter<Source>>,
}

impl Serialize for Doc {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("schema_version", &SCHEMA_VERSION)?;
        m.serialize_entry("records", &Records(self))?;
        m.end()
    }
}

struct Records<'a>(&'a Doc);

impl Serialize for Records<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.len))?;
        let mut parts = self.0.parts.try_borrow_mut().map_err(S::Error::custom)?;
        for part in parts.by_ref() {
            match part {
                // Each record is dropped once written.
                Source::Records(records) => {
                    for mut r in records {
                        let requests = std::mem::take(&mut r.requests);
                        let fields = canonical::record_to_json(&r);
                        seq.serialize_element(&RecordOut {
                            fields: &fields,
                            requests: RequestsOf::Slice(&requests),
                        })?;
                    }
                }
                Source::Columns(c) => {
                    let arrays = c.columns.requests();
                    for i in 0..c.columns.len() {
                        let Some(r) = c.columns.record_without_requests(i) else {
                            continue;
                        };
                        let fields = canonical::record_to_json(&r);
                        seq.serialize_element(&RecordOut {
                            fields: &fields,
                            requests: RequestsOf::Columns(arrays, arrays.row_range(i)),
                        })?;
                    }
                }
            }
        }
        seq.end()
    }
}

/// A record's requests: held, or rebuilt one at a time from columns.
enum RequestsOf<'a> {
    Slice(&'a [RequestDetail]),
    Columns(&'a RequestArrays, std::ops::Range<usize>),
}

impl RequestsOf<'_> {
    fn len(&self) -> usize {
        match self {
            RequestsOf::Slice(s) => s.len(),
            RequestsOf::Columns(_, range) => range.len(),
        }
    }
}

struct RecordOut<'a> {
    fields: &'a serde_json::Value,
    requests: RequestsOf<'a>,
}

impl Serialize for RecordOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let fields = self.fields.as_object();
        let some = self.requests.len() > 0;
        let n = fields.map_or(0, |f| f.len()) + usize::from(some);
        let mut m = s.serialize_map(Some(n))?;
        for (k, v) in fields.into_iter().flatten() {
            m.serialize_entry(k, v)?;
        }
        if some {
            m.serialize_entry("requests", &Requests(&self.requests))?;
        }
        m.end()
    }
}

struct Requests<'a>(&'a RequestsOf<'a>);

impl Serialize for Requests<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        match self.0 {
            RequestsOf::Slice(requests) => {
                for r in *requests {
                    seq.serialize_element(&RequestOut(r))?;
                }
            }
            RequestsOf::Columns(arrays, range) => {
                for q in range.clone() {
                    seq.serialize_element(&RequestOut(&arrays.request(q)))?;
                }
            }
        }
        seq.end()
    }
}

/// A number as [`canonical::number_to_json`] writes it: finite as a number, else a string.
struct Num(f64);

impl Serialize for Num {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0.is_finite() {
            s.serialize_f64(self.0)
        } else {
            s.serialize_str(&format_number(self.0))
        }
    }
}

struct Nums<'a>(&'a Gaps);

impl Serialize for Nums<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for v in self.0 {
            seq.serialize_element(&Num(v))?;
        }
        seq.end()
    }
}

/// One request, the fields and order of the canonical `requests` entries.
struct RequestOut<'a>(&'a RequestDetail);

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

#[cfg(test)]
mod tests {
    use super::*;

    fn written(records: &[Record]) -> String {
        let mut out = Vec::new();
        let wrote = write_json(records.to_vec(), &mut out);
        assert!(wrote.is_ok(), "{wrote:?}");
        String::from_utf8(out).unwrap_or_default()
    }

    #[test]
    fn the_same_text_as_the_value_tree() {
        let mut r = Record {
            model: Some("m".into()),
            request_rate: Some(f64::INFINITY),
            ..Record::default()
        };
        r.tags.insert("node".into(), "a7".into());
        r.metrics
            .insert(crate::model::MetricKey::Extra("x".into()), f64::NAN);
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
        let plain = Record {
            gpu: Some("H100".into()),
            ..Record::default()
        };
        for records in [vec![], vec![plain.clone()], vec![r.clone(), plain.clone()]] {
            assert_eq!(written(&records), canonical::to_json(&records));
        }
        // Columns (the requests rebuilt one at a time) and records, in order.
        let columns = |records: &[Record]| {
            Contents::Columns(Box::new(IngestedColumns {
                format: crate::ingest::Format::VllmServing,
                columns: crate::model::columns::Columns::from_records(records),
                warnings: Vec::new(),
                mapping: Vec::new(),
                note: None,
            }))
        };
        let mid = crate::ingest::read("mid.csv", b"model,mean_ttft_ms\nm2,1.5\n").unwrap();
        let mut records = vec![r.clone(), plain];
        records.extend(mid.records.iter().cloned());
        records.push(r);
        let contents = vec![
            columns(&records[..2]),
            Contents::Records(mid),
            columns(&records[3..]),
        ];
        let mut out = Vec::new();
        write_json_contents(contents, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            canonical::to_json(&records)
        );
    }
}
