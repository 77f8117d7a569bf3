//! Canonical JSON written straight to an output, record by record: the same bytes as
//! [`canonical::to_json`], without building the document as a `serde_json::Value` tree and a
//! `String` first (for a run with millions of per-request values those took about 14 times
//! the input file in memory). Each record is dropped once written; only one record's fields
//! (never its per-request detail) exist as a `Value` at a time.

use std::cell::RefCell;
use std::io::Write;

use serde::ser::{Error as _, SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};

use crate::model::{canonical, format_number, Record, RequestDetail, SCHEMA_VERSION};

/// Writes `records` as the canonical JSON document (pretty-printed, trailing newline), the
/// same text as [`canonical::to_json`].
pub fn write_json(records: Vec<Record>, mut out: impl Write) -> std::io::Result<()> {
    let doc = Doc {
        len: records.len(),
        records: RefCell::new(records.into_iter()),
    };
    serde_json::to_writer_pretty(&mut out, &doc).map_err(std::io::Error::other)?;
    out.write_all(b"\n")?;
    out.flush()
}

struct Doc {
    len: usize,
    records: RefCell<std::vec::IntoIter<Record>>,
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
        loop {
            let next = self
                .0
                .records
                .try_borrow_mut()
                .map_err(S::Error::custom)?
                .next();
            let Some(mut r) = next else { break };
            let requests = std::mem::take(&mut r.requests);
            let fields = canonical::record_to_json(&r);
            seq.serialize_element(&RecordOut {
                fields: &fields,
                requests: &requests,
            })?;
        }
        seq.end()
    }
}

struct RecordOut<'a> {
    fields: &'a serde_json::Value,
    requests: &'a [RequestDetail],
}

impl Serialize for RecordOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let fields = self.fields.as_object();
        let n = fields.map_or(0, |f| f.len()) + usize::from(!self.requests.is_empty());
        let mut m = s.serialize_map(Some(n))?;
        for (k, v) in fields.into_iter().flatten() {
            m.serialize_entry(k, v)?;
        }
        if !self.requests.is_empty() {
            m.serialize_entry("requests", &Requests(self.requests))?;
        }
        m.end()
    }
}

struct Requests<'a>(&'a [RequestDetail]);

impl Serialize for Requests<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for r in self.0 {
            seq.serialize_element(&RequestOut(r))?;
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

struct Nums<'a>(&'a [f64]);

impl Serialize for Nums<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for v in self.0 {
            seq.serialize_element(&Num(*v))?;
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
                itl_ms: vec![0.1, f64::INFINITY, 2.0],
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
        for records in [vec![], vec![plain.clone()], vec![r, plain]] {
            assert_eq!(written(&records), canonical::to_json(&records));
        }
    }
}
