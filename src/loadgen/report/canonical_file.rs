//! The canonical result file written straight to disk by the one canonical writer
//! ([`canonical::write_json_made`]), each stage's per-request detail made from its
//! [`RequestRecord`]s one request at a time while it is written, so neither the whole text nor
//! a JSON tree of every request (nor a [`crate::model::RequestDetail`] per request) is ever held.
//!
//! Or, for a long run, that detail is made while the stage runs: [`DetailSpool`] writes each
//! request's item (the writer's own [`canonical::RequestOut`]), in the document's indentation,
//! to a scratch file beside the result as the request ends, and [`write_canonical_spooled`] has the
//! writer put a marker where each stage's detail goes and copies the spools in its place, so
//! the end of a stage makes no request's detail.

use std::io::Write;
use std::path::Path;

use super::record::request_detail;
use crate::loadgen::record::RequestRecord;
use crate::loadgen::scratch::{Scratch, ScratchWriter};
use crate::loadgen::LoadgenError;
use crate::model::canonical::{self, Made, RequestOut};
use crate::model::{Record, RequestDetail};

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
/// folder, then a rename), or to stdout when `path` is `-`, each stage's requests' detail
/// filled in from its requests.
pub fn write_canonical(path: &Path, stages: &[StageOut<'_>]) -> Result<(), LoadgenError> {
    super::write_atomic_with(path, |mut out| write_doc(&mut out, stages))
}

/// The document, pretty-printed as [`canonical::to_json`] prints it, and its final newline.
pub fn write_doc<W: Write>(out: &mut W, stages: &[StageOut<'_>]) -> std::io::Result<()> {
    let makers: Vec<_> = stages
        .iter()
        .map(|s| move |q: usize| s.requests.get(q).map(request_detail).unwrap_or_default())
        .collect();
    let records: Vec<(&Record, Made<'_>)> = stages
        .iter()
        .zip(&makers)
        .map(|(s, make)| (s.record, Made::Each(s.requests.len(), make)))
        .collect();
    canonical::write_json_made(out, &records)
}

/// How deep a request's detail lies in the document: `records[i].requests[j]`, 8 spaces.
const ITEM_INDENT: &[u8] = b"        ";

/// A stage's per-request detail written as its requests end: each request's item as the
/// canonical document prints it there, items separated as there (see the module doc), into a
/// [`ScratchWriter`] (a full disk moves the rest of it to memory: nothing is lost).
pub struct DetailSpool {
    out: ScratchWriter,
    count: usize,
    item: Vec<u8>,
}

impl DetailSpool {
    /// A spool writing to `out`.
    pub fn new(out: ScratchWriter) -> DetailSpool {
        DetailSpool {
            out,
            count: 0,
            item: Vec::new(),
        }
    }

    /// Appends the next request's detail (requests in the stage's order).
    pub fn push(&mut self, r: &RequestRecord) -> std::io::Result<()> {
        self.item.clear();
        serde_json::to_writer_pretty(&mut self.item, &RequestOut(&request_detail(r)))
            .map_err(std::io::Error::from)?;
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
    pub fn finish(self) -> SpooledDetail {
        SpooledDetail {
            scratch: self.out.finish(),
            count: self.count,
        }
    }
}

/// A stage's spooled per-request detail (see [`DetailSpool`]).
pub struct SpooledDetail {
    scratch: Scratch,
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

    /// Its scratch file (whose [`failure`](Scratch::failure) says whether the disk refused
    /// part of it, then held in memory).
    pub fn scratch(&self) -> &Scratch {
        &self.scratch
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
    let records: Vec<(&Record, Made<'_>)> = stages
        .iter()
        .zip(&markers)
        .map(|(s, m)| {
            let made = if s.detail.is_empty() {
                Made::Each(0, &|_| RequestDetail::default())
            } else {
                Made::Marker(m)
            };
            (s.record, made)
        })
        .collect();
    let mut text = Vec::new();
    canonical::write_json_made(&mut text, &records).map_err(|source| LoadgenError::Write {
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
        let copied = std::io::copy(&mut s.detail.scratch.reader()?, out)?;
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
