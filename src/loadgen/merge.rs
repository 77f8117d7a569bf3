//! `benchlens merge`: the result files of a sharded run (`run --shard I/N`) joined into one run.
//!
//! Each shard's per-request file (`<result>.requests.jsonl`) is read back, its requests are put
//! on one clock by the stages' wall-clock starts (`stage_start_unix_s`), and every figure is
//! computed again from all the requests together: the duration is the merged span, throughput
//! is over it, and percentiles are over every request (never averaged across shards). The
//! merged record keeps the shards' dimensions, without `tag.shard`, with the concurrency caps
//! and prompt counts added up.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use thiserror::Error;

use super::measure::compute;
use super::record::{ChunkArrival, Failure, FailureKind, RequestRecord};
use super::report::{self, PercentileMetric, StageInfo, SummaryView};
use super::shard::Shard;
use super::timeline;
use super::LoadgenError;
use crate::model::{canonical, MetricKey, Record};

/// Why shard files cannot be merged. Each names the file (and line) at fault.
#[derive(Debug, Error)]
pub enum MergeError {
    /// A file could not be read.
    #[error("{path}: cannot read it")]
    Read {
        /// The file.
        path: PathBuf,
        /// The system's reason.
        source: std::io::Error,
    },
    /// A result file that is not canonical JSON.
    #[error("{path}: not a benchlens result file")]
    Canonical {
        /// The file.
        path: PathBuf,
        /// The reader's reason.
        source: canonical::CanonicalError,
    },
    /// A per-request line that does not read.
    #[error("{path}, line {line}: {message}")]
    Line {
        /// The per-request file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A stage without the shard or start stamp a sharded run writes.
    #[error("{path}: stage {stage} has no {what} (was it written by `run --shard`?)")]
    NotAShard {
        /// The file.
        path: PathBuf,
        /// The stage.
        stage: usize,
        /// What is missing.
        what: &'static str,
    },
    /// The files do not make one whole run.
    #[error("the files are not the shards of one run: {0}")]
    Incomplete(String),
}

/// Options of `benchlens merge`.
#[derive(Clone, Debug, clap::Args)]
pub struct MergeArgs {
    /// The shards' canonical result files (each with its `.requests.jsonl` beside it).
    #[arg(required = true, num_args = 1..)]
    pub files: Vec<PathBuf>,
    /// The merged result file; its per-request file is written beside it.
    #[arg(short, long)]
    pub output: PathBuf,
}

/// Merges the files and writes the merged result and per-request files; returns the stages
/// and requests merged.
pub fn run_merge(args: &MergeArgs) -> Result<(usize, usize), LoadgenError> {
    let (records, lines) = merge_files(&args.files).map_err(LoadgenError::Merge)?;
    let stem = args
        .output
        .file_stem()
        .map_or_else(|| "merged".into(), |s| s.to_string_lossy().into_owned());
    let requests_path = args.output.with_file_name(format!("{stem}.requests.jsonl"));
    report::write_atomic(&args.output, &report::canonical_text(&records))?;
    report::write_atomic(&requests_path, &lines)?;
    Ok((records.len(), lines.lines().count()))
}

/// One shard's stage: its record and its requests.
struct ShardStage {
    record: Record,
    requests: Vec<RequestRecord>,
    start_unix_s: f64,
}

/// Merges the shard result files into one record per stage and the merged per-request lines.
pub fn merge_files(paths: &[PathBuf]) -> Result<(Vec<Record>, String), MergeError> {
    let mut stages: BTreeMap<usize, Vec<(String, ShardStage)>> = BTreeMap::new();
    for path in paths {
        for (stage, shard, s) in read_shard(path)? {
            stages.entry(stage).or_default().push((shard, s));
        }
    }
    let mut records = Vec::new();
    let mut lines = String::new();
    for (stage, shards) in stages {
        check_complete(stage, &shards)?;
        let (record, requests) = merge_stage(stage, shards);
        for r in &requests {
            lines.push_str(&report::request_line(stage, r));
            lines.push('\n');
        }
        records.push(record);
    }
    Ok((records, lines))
}

/// Every shard `0/N` … `N−1/N` exactly once.
fn check_complete(stage: usize, shards: &[(String, ShardStage)]) -> Result<(), MergeError> {
    let mut seen: Vec<(usize, usize)> = shards
        .iter()
        .filter_map(|(s, _)| s.parse::<Shard>().ok())
        .map(|s| (s.index, s.count))
        .collect();
    seen.sort_unstable();
    let count = seen.first().map_or(0, |s| s.1);
    let whole: Vec<(usize, usize)> = (0..count).map(|i| (i, count)).collect();
    if seen != whole {
        let have: Vec<String> = seen.iter().map(|(i, n)| format!("{i}/{n}")).collect();
        return Err(MergeError::Incomplete(format!(
            "stage {stage} has shards [{}], not each of 0/{count} … {}/{count} once",
            have.join(", "),
            count.saturating_sub(1)
        )));
    }
    Ok(())
}

fn read_shard(path: &Path) -> Result<Vec<(usize, String, ShardStage)>, MergeError> {
    let read = |p: &Path| {
        std::fs::read_to_string(p).map_err(|source| MergeError::Read {
            path: p.to_path_buf(),
            source,
        })
    };
    let decoded = canonical::from_json(&read(path)?).map_err(|source| MergeError::Canonical {
        path: path.to_path_buf(),
        source,
    })?;
    let stem = path
        .file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let jsonl = path.with_file_name(format!("{stem}.requests.jsonl"));
    let mut by_stage: BTreeMap<usize, Vec<RequestRecord>> = BTreeMap::new();
    for (i, line) in read(&jsonl)?.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let (stage, r) = parse_request_line(line).map_err(|message| MergeError::Line {
            path: jsonl.clone(),
            line: i + 1,
            message,
        })?;
        by_stage.entry(stage).or_default().push(r);
    }
    let mut out = Vec::new();
    for record in decoded.records {
        let stage: usize = record
            .tags
            .get("stage")
            .and_then(|s| s.parse().ok())
            .unwrap_or(out.len());
        let missing = |what| MergeError::NotAShard {
            path: path.to_path_buf(),
            stage,
            what,
        };
        let shard = record
            .tags
            .get("shard")
            .cloned()
            .ok_or_else(|| missing("tag.shard"))?;
        let start_unix_s = record
            .metrics
            .get(&MetricKey::Extra("stage_start_unix_s".into()))
            .copied()
            .ok_or_else(|| missing("stage_start_unix_s"))?;
        let requests = by_stage.remove(&stage).unwrap_or_default();
        out.push((
            stage,
            shard,
            ShardStage {
                record,
                requests,
                start_unix_s,
            },
        ));
    }
    Ok(out)
}

/// A per-request line (see [`report::request_line`]) read back. A chunk stamped like the one
/// before it came in the same read (that is what `coalesced` means), so the flag is restored.
fn parse_request_line(line: &str) -> Result<(usize, RequestRecord), String> {
    let v: Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
    let num = |k: &str| v.get(k).and_then(Value::as_f64);
    let count = |k: &str| v.get(k).and_then(Value::as_u64);
    let need = |k: &'static str| num(k).ok_or(format!("no number {k:?}"));
    let stage = count("stage").ok_or("no stage")? as usize;
    let mut chunks: Vec<ChunkArrival> = Vec::new();
    for c in v
        .get("chunks_ms_tokens")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice)
    {
        let (Some(at_ms), Some(tokens)) = (
            c.get(0).and_then(Value::as_f64),
            c.get(1).and_then(Value::as_u64),
        ) else {
            return Err("a chunk is not [ms, tokens]".into());
        };
        let at_s = at_ms / 1e3;
        chunks.push(ChunkArrival {
            at_s,
            tokens: u32::try_from(tokens).unwrap_or(u32::MAX),
            coalesced: chunks.last().is_some_and(|p| p.at_s == at_s),
        });
    }
    let failure = match v.get("error_kind").and_then(Value::as_str) {
        None => None,
        Some(kind) => Some(Failure {
            kind: FailureKind::from_name(kind).ok_or(format!("unknown error_kind {kind:?}"))?,
            message: v
                .get("error")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
        }),
    };
    let r = RequestRecord {
        index: count("index").ok_or("no index")? as usize,
        input_len: count("input_len").unwrap_or(0),
        max_tokens: count("max_tokens").unwrap_or(0),
        intended_at_s: need("intended_send_s")?,
        dispatched_at_s: need("dispatched_s")?,
        schedule_lag_s: num("schedule_lag_ms").unwrap_or(0.0) / 1e3,
        sent_at_s: need("sent_s")?,
        ttft_s: num("ttft_ms").map(|t| t / 1e3),
        write_delay_s: num("write_delay_ms").map(|t| t / 1e3),
        first_read_delay_s: num("read_delay_ms").map(|t| t / 1e3),
        e2el_s: num("e2el_ms").map(|t| t / 1e3),
        output_tokens_server: count("output_tokens_server"),
        input_tokens_server: count("input_tokens_server"),
        output_chunks_local: count("output_chunks_client").unwrap_or(chunks.len() as u64),
        coalesced_chunks: count("coalesced_chunks").unwrap_or(0),
        finish_reason_missing: v
            .get("finish_reason_missing")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        output_tokens_text: count("output_tokens_client"),
        ignore_eos: v.get("length_flag").and_then(Value::as_str) == Some("short_reply"),
        chunks: chunks.into_iter().collect(),
        failure,
        ..RequestRecord::default()
    };
    Ok((stage, r))
}

/// The benchlens build a record's tags name, as `version (commit)` (`?` for a missing part).
fn build_of(tags: &BTreeMap<String, String>) -> String {
    let get = |k: &str| tags.get(k).map_or("?", String::as_str);
    format!("{} ({})", get("benchlens_version"), get("benchlens_commit"))
}

/// Percentiles of the merged record: `run`'s defaults.
const PERCENTILES: [f64; 4] = [50.0, 90.0, 95.0, 99.0];

fn merge_stage(stage: usize, shards: Vec<(String, ShardStage)>) -> (Record, Vec<RequestRecord>) {
    let base = shards
        .iter()
        .map(|(_, s)| s.start_unix_s)
        .fold(f64::INFINITY, f64::min);
    let mut requests = Vec::new();
    let mut duration = 0.0f64;
    let mut num_prompts = 0u64;
    let mut concurrency: Option<u64> = None;
    let mut partial = false;
    // The benchlens builds that measured the shards, as `version (commit)`.
    let mut shard_builds: Vec<String> = Vec::new();
    let template = shards
        .first()
        .map(|(_, s)| s.record.clone())
        .unwrap_or_default();
    for (_, s) in shards {
        let offset = s.start_unix_s - base;
        let d = s
            .record
            .metrics
            .get(&MetricKey::DurationS)
            .copied()
            .unwrap_or(0.0);
        duration = duration.max(offset + d);
        num_prompts += s.record.num_prompts.unwrap_or(0);
        concurrency = match (concurrency, s.record.max_concurrency) {
            (a, Some(c)) => Some(a.unwrap_or(0) + c),
            (a, None) => a,
        };
        partial |= s.record.tags.get("partial").is_some_and(|p| p == "true");
        let build = build_of(&s.record.tags);
        if !shard_builds.contains(&build) {
            shard_builds.push(build);
        }
        for mut r in s.requests {
            r.intended_at_s += offset;
            r.dispatched_at_s += offset;
            r.sent_at_s += offset;
            requests.push(r);
        }
    }
    requests.sort_by_key(|r| r.index);
    let cancelled = |r: &RequestRecord| {
        r.failure
            .as_ref()
            .is_some_and(|f| f.kind == FailureKind::Cancelled)
    };
    let measured: Vec<RequestRecord> = requests.iter().filter(|r| !cancelled(r)).cloned().collect();
    let rate = template.request_rate.unwrap_or(f64::INFINITY);
    let m = compute(&measured, duration, rate, &PERCENTILES, None);
    let view = SummaryView::new(
        PercentileMetric::parse_list(PercentileMetric::DEFAULT).unwrap_or_default(),
        PERCENTILES.to_vec(),
        &measured,
        (requests.len() - measured.len()) as u64,
    );
    let mut tags = template.tags.clone();
    tags.remove("shard");
    tags.remove("partial");
    // The merged file records the build that wrote it, like every file benchlens writes; the
    // shards' builds are kept beside it when they were other ones.
    tags.insert("benchlens_version".into(), crate::VERSION.into());
    tags.insert("benchlens_commit".into(), crate::COMMIT.into());
    if shard_builds != [build_of(&tags)] {
        tags.insert("shards_benchlens".into(), shard_builds.join(", "));
    }
    let text = |s: &Option<std::sync::Arc<str>>| s.as_deref().map(str::to_string);
    let info = StageInfo {
        stage,
        model: text(&template.model).unwrap_or_default(),
        backend: tags.get("backend").cloned().unwrap_or_default(),
        engine: text(&template.engine),
        gpu: text(&template.gpu),
        gpu_count: template.gpu_count,
        label: text(&template.label),
        dataset: text(&template.dataset).unwrap_or_default(),
        request_rate: rate,
        burstiness: template.burstiness.unwrap_or(1.0),
        max_concurrency: concurrency,
        num_prompts,
        date: text(&template.date).unwrap_or_default(),
        endpoint: tags.get("endpoint").cloned().unwrap_or_default(),
        tags,
        partial,
    };
    let mut record = report::stage_record(&info, &m, &measured, &view);
    let series = timeline::series(&measured);
    record.series = series;
    record
        .metrics
        .insert(MetricKey::Extra("stage_start_unix_s".into()), base);
    (record, requests)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_lines_read_back_as_written() {
        let r = RequestRecord {
            index: 7,
            input_len: 12,
            max_tokens: 3,
            intended_at_s: 0.5,
            dispatched_at_s: 0.5,
            sent_at_s: 0.501,
            ttft_s: Some(0.02),
            e2el_s: Some(0.03),
            chunks: [
                ChunkArrival {
                    at_s: 0.02,
                    tokens: 1,
                    coalesced: false,
                },
                ChunkArrival {
                    at_s: 0.03,
                    tokens: 1,
                    coalesced: false,
                },
                ChunkArrival {
                    at_s: 0.03,
                    tokens: 1,
                    coalesced: true,
                },
            ]
            .into_iter()
            .collect(),
            ..RequestRecord::default()
        };
        let (stage, back) = parse_request_line(&report::request_line(2, &r)).unwrap();
        assert_eq!(stage, 2);
        assert_eq!(back.index, 7);
        assert_eq!(back.chunks, r.chunks);
        assert_eq!(
            (back.ttft_s, back.e2el_s, back.sent_at_s),
            (r.ttft_s, r.e2el_s, r.sent_at_s)
        );
        let failed = RequestRecord {
            failure: Some(Failure {
                kind: FailureKind::Http(503),
                message: "busy".into(),
            }),
            ..r
        };
        let (_, back) = parse_request_line(&report::request_line(0, &failed)).unwrap();
        assert_eq!(back.failure, failed.failure);
        assert_eq!(
            FailureKind::from_name("idle_timeout"),
            Some(FailureKind::IdleTimeout)
        );
        assert_eq!(FailureKind::from_name("http_x"), None);
        assert!(parse_request_line("{}").unwrap_err().contains("stage"));
    }
}
