//! The canonical result file written straight to disk: the same bytes as
//! [`canonical::to_json`], but each stage's per-request detail is made from its
//! [`RequestRecord`]s one request at a time while it is written, so neither the whole text nor
//! a JSON tree of every request (nor a [`crate::model::RequestDetail`] per request) is ever held.

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
    let err = |source| LoadgenError::Write {
        path: path.into(),
        source,
    };
    if path == Path::new("-") {
        let mut out = BufWriter::new(std::io::stdout().lock());
        return write_doc(&mut out, stages)
            .and_then(|()| out.flush())
            .map_err(err);
    }
    let name = path
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    let tmp: PathBuf = path.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
    let result = File::create(&tmp)
        .and_then(|f| {
            let mut out = BufWriter::with_capacity(1 << 16, f);
            write_doc(&mut out, stages)?;
            out.into_inner().map_err(|e| e.into_error())?.sync_all()
        })
        .and_then(|()| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(err)
}

/// The document, pretty-printed as [`canonical::to_json`] prints it, and its final newline.
pub fn write_doc<W: Write>(out: &mut W, stages: &[StageOut<'_>]) -> std::io::Result<()> {
    let mut ser = serde_json::Serializer::pretty(&mut *out);
    Doc(stages)
        .serialize(&mut ser)
        .map_err(std::io::Error::from)?;
    out.write_all(b"\n")
}

/// `{"schema_version": …, "records": [...]}`, in the keys' order of the canonical document.
struct Doc<'a>(&'a [StageOut<'a>]);

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

struct Stages<'a>(&'a [StageOut<'a>]);

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
struct Stage<'a>(StageOut<'a>);

impl Serialize for Stage<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let value = canonical::record_to_json(self.0.record);
        let Value::Object(keys) = value else {
            return value.serialize(s);
        };
        let detail = self.0.record.requests.is_empty() && !self.0.requests.is_empty();
        let mut map = s.serialize_map(Some(keys.len() + usize::from(detail)))?;
        for (k, v) in &keys {
            map.serialize_entry(k, v)?;
        }
        if detail {
            map.serialize_entry("requests", &Details(self.0.requests))?;
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
            // The canonical form of one request: that of a record holding only it.
            one.requests.clear();
            one.requests.push(request_detail(r));
            let v = canonical::record_to_json(&one);
            match v.get("requests").and_then(|a| a.get(0)) {
                Some(item) => seq.serialize_element(item)?,
                None => seq.serialize_element(&Value::Null)?,
            }
        }
        seq.end()
    }
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
