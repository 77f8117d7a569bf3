//! The canonical result file written straight to disk: the same bytes as
//! [`canonical::to_json`], but each stage's per-request detail is made from its
//! [`RequestRecord`]s one request at a time while it is written, so neither the whole text nor
//! a JSON tree of every request (nor a [`crate::model::RequestDetail`] per request) is ever held.
//!
//! Or, for a long run, that detail is made while the stage runs: [`DetailSpool`] writes each
//! request's part of the document, in the document's own indentation, to a file beside the
//! result as the request ends, and [`write_canonical_spooled`] copies those files into the
//! document at the end (the same bytes again), so the end of a stage makes no request's detail.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use serde_json::Value;

use super::record::request_detail;
use crate::loadgen::record::RequestRecord;
use crate::loadgen::LoadgenError;
use crate::model::{canonical, Record};

/// A stage to write: its record and, when the record carries no per-request detail of its own,
/// the requests to make it from (in the record's order).
#[derive(Clone, Copy)]
pub struct StageOut<'a> {
    /// The stage's record.
    pub record: &'a Record,
    /// Its requests, when `record.requests` is empty.
    pub requests: &'a [RequestRecord],
}

/// Writes the canonical document of `stages` to `path` atomically (a temporary file in the same
/// folder, then a rename), or to stdout when `path` is `-`: byte for byte what
/// [`canonical::to_json`] gives for the records with their requests' detail filled in.
pub fn write_canonical(path: &Path, stages: &[StageOut<'_>]) -> Result<(), LoadgenError> {
    super::write_atomic_with(path, |mut out| write_doc(&mut out, stages))
}

/// The document, pretty-printed as [`canonical::to_json`] prints it, and its final newline.
pub fn write_doc<W: Write>(out: &mut W, stages: &[StageOut<'_>]) -> std::io::Result<()> {
    let stages: Vec<Out<'_>> = stages
        .iter()
        .map(|s| Out {
            record: s.record,
            detail: Detail::Records(s.requests),
        })
        .collect();
    write_outs(out, &stages)
}

fn write_outs<W: Write>(out: &mut W, stages: &[Out<'_>]) -> std::io::Result<()> {
    let mut ser = serde_json::Serializer::pretty(&mut *out);
    Doc(stages)
        .serialize(&mut ser)
        .map_err(std::io::Error::from)?;
    out.write_all(b"\n")
}

/// Where a stage's per-request detail comes from.
#[derive(Clone, Copy)]
enum Detail<'a> {
    /// Made from these requests as it is written (none: no detail).
    Records(&'a [RequestRecord]),
    /// A spooled stage's place: one string, replaced by the spool's text afterwards.
    Marker(&'a str),
}

/// A stage to write (see [`StageOut`]).
#[derive(Clone, Copy)]
struct Out<'a> {
    record: &'a Record,
    detail: Detail<'a>,
}

/// `{"schema_version": …, "records": [...]}`, in the keys' order of the canonical document.
struct Doc<'a>(&'a [Out<'a>]);

impl Serialize for Doc<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let empty = canonical::to_json_value(&[]);
        let keys = empty.as_object().cloned().unwrap_or_default();
        let mut map = s.serialize_map(Some(keys.len()))?;
        for (k, v) in &keys {
            if k == "records" {
                map.serialize_entry(k, &Stages(self.0))?;
            } else {
                map.serialize_entry(k, v)?;
            }
        }
        map.end()
    }
}

struct Stages<'a>(&'a [Out<'a>]);

impl Serialize for Stages<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for stage in self.0 {
            seq.serialize_element(&Stage(*stage))?;
        }
        seq.end()
    }
}

/// One record: its keys as [`canonical::record_to_json`] orders them, `requests` (the last
/// key there) made as it is written.
struct Stage<'a>(Out<'a>);

impl Serialize for Stage<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let value = canonical::record_to_json(self.0.record);
        let Value::Object(keys) = value else {
            return value.serialize(s);
        };
        let detail = self.0.record.requests.is_empty()
            && match self.0.detail {
                Detail::Records(r) => !r.is_empty(),
                Detail::Marker(_) => true,
            };
        let mut map = s.serialize_map(Some(keys.len() + usize::from(detail)))?;
        for (k, v) in &keys {
            map.serialize_entry(k, v)?;
        }
        if detail {
            match self.0.detail {
                Detail::Records(r) => map.serialize_entry("requests", &Details(r))?,
                Detail::Marker(m) => map.serialize_entry("requests", &[m])?,
            }
        }
        map.end()
    }
}

struct Details<'a>(&'a [RequestRecord]);

impl Serialize for Details<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        let mut one = Record::default();
        for r in self.0 {
            seq.serialize_element(&item_of(&mut one, r))?;
        }
        seq.end()
    }
}

/// The canonical form of one request: that of a record holding only it (`one`, reused).
fn item_of(one: &mut Record, r: &RequestRecord) -> Value {
    one.requests.clear();
    one.requests.push(request_detail(r));
    let mut v = canonical::record_to_json(one);
    match v.get_mut("requests").and_then(|a| a.get_mut(0)) {
        Some(item) => item.take(),
        None => Value::Null,
    }
}

/// How deep a request's detail lies in the document: `records[i].requests[j]`, 8 spaces.
const ITEM_INDENT: &[u8] = b"        ";

/// A spool file, removed when dropped.
struct SpoolFile(PathBuf);

impl Drop for SpoolFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A stage's per-request detail written as its requests end: each request's item as the
/// canonical document prints it there, items separated as there (see the module doc).
pub struct DetailSpool {
    file: SpoolFile,
    out: BufWriter<File>,
    count: usize,
    one: Record,
    item: Vec<u8>,
}

impl DetailSpool {
    /// Creates (or empties) the spool at `path`; it is removed once its [`SpooledDetail`] (or
    /// itself) is dropped.
    pub fn create(path: &Path) -> Result<DetailSpool, LoadgenError> {
        let out = File::create(path).map_err(|source| LoadgenError::Write {
            path: path.into(),
            source,
        })?;
        Ok(DetailSpool {
            file: SpoolFile(path.into()),
            out: BufWriter::with_capacity(1 << 16, out),
            count: 0,
            one: Record::default(),
            item: Vec::new(),
        })
    }

    /// Appends the next request's detail (requests in the stage's order).
    pub fn push(&mut self, r: &RequestRecord) -> std::io::Result<()> {
        let item = item_of(&mut self.one, r);
        self.item.clear();
        serde_json::to_writer_pretty(&mut self.item, &item).map_err(std::io::Error::from)?;
        if self.count > 0 {
            self.out.write_all(b",\n")?;
        }
        // JSON text has no line break inside a string: each line is indented alike.
        for (i, line) in self.item.split(|&b| b == b'\n').enumerate() {
            if i > 0 {
                self.out.write_all(b"\n")?;
            }
            self.out.write_all(ITEM_INDENT)?;
            self.out.write_all(line)?;
        }
        self.count += 1;
        Ok(())
    }

    /// The spool, its items written.
    pub fn finish(self) -> Result<SpooledDetail, LoadgenError> {
        let DetailSpool {
            file,
            mut out,
            count,
            ..
        } = self;
        out.flush().map_err(|source| LoadgenError::Write {
            path: file.0.clone(),
            source,
        })?;
        drop(out);
        Ok(SpooledDetail { file, count })
    }
}

/// A stage's spooled per-request detail (see [`DetailSpool`]); the file is removed when this
/// is dropped.
pub struct SpooledDetail {
    file: SpoolFile,
    count: usize,
}

impl SpooledDetail {
    /// Requests in it.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether it holds no request.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The error of a failed write to the spool.
    pub fn write_error(&self, source: std::io::Error) -> LoadgenError {
        LoadgenError::Write {
            path: self.file.0.clone(),
            source,
        }
    }
}

/// A stage whose per-request detail was spooled.
#[derive(Clone, Copy)]
pub struct StageSpooled<'a> {
    /// The stage's record (without per-request detail of its own).
    pub record: &'a Record,
    /// Its requests' detail.
    pub detail: &'a SpooledDetail,
}

/// [`write_canonical`] of stages whose detail was spooled: the document is made with a marker
/// where each stage's detail goes, then written with the spools copied in its place (the same
/// bytes as [`write_canonical`] of the stages' requests), to `path` atomically or to stdout
/// when `path` is `-`.
pub fn write_canonical_spooled(
    path: &Path,
    stages: &[StageSpooled<'_>],
) -> Result<(), LoadgenError> {
    let nonce = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let markers: Vec<String> = (0..stages.len())
        .map(|i| {
            format!(
                "benchlens-spooled-detail-{}-{nonce}-{i}",
                std::process::id()
            )
        })
        .collect();
    let outs: Vec<Out<'_>> = stages
        .iter()
        .zip(&markers)
        .map(|(s, m)| Out {
            record: s.record,
            detail: if s.detail.is_empty() {
                Detail::Records(&[])
            } else {
                Detail::Marker(m)
            },
        })
        .collect();
    let mut text = Vec::new();
    write_outs(&mut text, &outs).map_err(|source| LoadgenError::Write {
        path: path.into(),
        source,
    })?;
    super::write_atomic_with(path, |mut out| {
        copy_spooled(&mut out, &text, stages, &markers)
    })
}

/// Writes `text` (the document with `markers`) to `out`, each stage's spool in its marker's
/// place.
fn copy_spooled<W: Write>(
    out: &mut W,
    text: &[u8],
    stages: &[StageSpooled<'_>],
    markers: &[String],
) -> std::io::Result<()> {
    let mut rest = text;
    for (s, m) in stages
        .iter()
        .zip(markers)
        .filter(|(s, _)| !s.detail.is_empty())
    {
        let mut needle = ITEM_INDENT.to_vec();
        needle.extend_from_slice(format!("\"{m}\"").as_bytes());
        let at = find(rest, &needle)
            .ok_or_else(|| std::io::Error::other("the spooled detail's place was not found"))?;
        out.write_all(&rest[..at])?;
        let copied = std::io::copy(&mut File::open(&s.detail.file.0)?, out)?;
        if copied == 0 {
            return Err(std::io::Error::other("a spooled detail file is empty"));
        }
        rest = &rest[at + needle.len()..];
    }
    out.write_all(rest)
}

/// Where `needle` first occurs in `hay`.
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loadgen::record::{ChunkArrival, ChunkLog, Failure, FailureKind};
    use crate::model::MetricKey;

    fn request(index: usize, failed: bool) -> RequestRecord {
        RequestRecord {
            index,
            input_len: 7,
            max_tokens: 3,
            intended_at_s: index as f64 * 0.1,
            sent_at_s: index as f64 * 0.1 + 0.001,
            ttft_s: (!failed).then_some(0.05),
            e2el_s: (!failed).then_some(0.0612345),
            chunks: if failed {
                ChunkLog::new()
            } else {
                (0..3)
                    .map(|k| ChunkArrival {
                        at_s: 0.05 + f64::from(k) * 0.0051,
                        tokens: 1,
                        coalesced: k == 2,
                    })
                    .collect()
            },
            failure: failed.then(|| Failure::new(FailureKind::Http(503), "busy")),
            ..RequestRecord::default()
        }
    }

    #[test]
    fn streamed_document_is_the_canonical_text() {
        let reqs: Vec<RequestRecord> = (0..5).map(|i| request(i, i == 3)).collect();
        let mut bare = Record {
            model: Some("m".into()),
            ..Record::default()
        };
        bare.metrics.insert(MetricKey::Completed, 4.0);
        bare.tags.insert("stage".into(), "0".into());
        let mut full = bare.clone();
        full.requests = reqs.iter().map(request_detail).collect();
        let second = Record::default();
        let want = canonical::to_json(&[full.clone(), second.clone()]);
        let mut got = Vec::new();
        write_doc(
            &mut got,
            &[
                StageOut {
                    record: &bare,
                    requests: &reqs,
                },
                StageOut {
                    record: &second,
                    requests: &[],
                },
            ],
        )
        .unwrap();
        assert_eq!(String::from_utf8(got).unwrap(), want);
        // A record with its own detail is written as it is.
        let mut got = Vec::new();
        write_doc(
            &mut got,
            &[StageOut {
                record: &full,
                requests: &reqs,
            }],
        )
        .unwrap();
        assert_eq!(String::from_utf8(got).unwrap(), canonical::to_json(&[full]));
    }
}
