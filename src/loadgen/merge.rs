//! `benchlens merge`: the result files of a sharded run (`run --shard I/N`) joined into one run.
//!
//! Each shard's per-request file (`<result>.requests.jsonl`) is read back, its requests are put
//! on one clock by the stages' wall-clock starts (`stage_start_unix_s`), and every figure is
//! computed again from all the requests together: the duration is the merged span, throughput
//! is over it, and percentiles are over every request (never averaged across shards). The
//! merged record keeps the shards' dimensions, without `tag.shard`, with the concurrency caps
//! and prompt counts added up. Before that the files are checked to be one run: equal run
//! fingerprints, starts close together, each per-request file as long as its result file says,
//! and `-o` none of the inputs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use thiserror::Error;

use super::figures::{stage_figures, FigureOpts};
use super::record::{ChunkArrival, Failure, FailureKind, RequestRecord};
use super::report::{self, PercentileMetric, StageInfo};
use super::shard::{Shard, REQUEST_ROWS_METRIC, RUN_FINGERPRINT_TAG};
use super::LoadgenError;
use crate::model::provenance;
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
    /// Two shards were run with different options (their run fingerprints differ).
    #[error(
        "the files are not the shards of one run: {field} is {value} in {path} but {first_value} in {first}"
    )]
    Mismatch {
        /// The option that differs (a key of `tag.run_fingerprint`).
        field: String,
        /// The file that differs from the first.
        path: PathBuf,
        /// Its value.
        value: String,
        /// The first file with a fingerprint.
        first: PathBuf,
        /// Its value.
        first_value: String,
    },
    /// Two shards started too far apart to be one run.
    #[error(
        "the files are not the shards of one run: stage_start_unix_s of {path} is {gap_s:.1} s after that of {first} (more than --max-start-skew {limit_s} s)"
    )]
    Skew {
        /// The shard that started last.
        path: PathBuf,
        /// The shard that started first.
        first: PathBuf,
        /// Seconds between their starts.
        gap_s: f64,
        /// The largest gap allowed.
        limit_s: f64,
    },
    /// A per-request file with fewer (or more) rows than its result file records.
    #[error(
        "{path}: stage {stage} has {rows} request rows but the result file records {recorded} ({field}): the per-request file was cut short or is not this result's"
    )]
    CutShort {
        /// The per-request file.
        path: PathBuf,
        /// The stage.
        stage: usize,
        /// Rows found.
        rows: usize,
        /// Rows the result file records.
        recorded: u64,
        /// The field that records them.
        field: &'static str,
    },
    /// A `tag.run_fingerprint` that is not a JSON object.
    #[error("{path}: tag.run_fingerprint is not a JSON object")]
    BadFingerprint {
        /// The file.
        path: PathBuf,
    },
    /// `-o` names one of the inputs (or its per-request file).
    #[error("-o {path} is one of the files merged: choose another output")]
    OutputIsInput {
        /// The output named.
        path: PathBuf,
    },
}

/// Options of `benchlens merge`.
#[derive(Clone, Debug, clap::Args)]
pub struct MergeArgs {
    /// The shards' canonical result files (each with its `.requests.jsonl` beside it).
    #[arg(required = true, num_args = 1..)]
    pub files: Vec<PathBuf>,
    /// The merged result file; its per-request file is written beside it. Never one of the
    /// inputs.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Largest gap, in seconds, between the shards' starts: shards started further apart are
    /// not one run (their requests would not overlap as planned).
    #[arg(long, value_name = "SECONDS", default_value_t = 2.0, value_parser = seconds)]
    pub max_start_skew: f64,
}

/// A number of seconds as the command line gives it: finite and not negative.
fn seconds(text: &str) -> Result<f64, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s >= 0.0)
        .ok_or_else(|| format!("{text:?} is not a number of seconds (0 or more)"))
}

/// What [`run_merge`] did: the stages and requests merged, and its warnings (files written
/// before shards recorded their run fingerprint).
#[derive(Debug, Default)]
pub struct Merged {
    /// Stages merged.
    pub stages: usize,
    /// Requests merged.
    pub requests: usize,
    /// Things to tell the user, one line each.
    pub warnings: Vec<String>,
}

/// Merges the files and writes the merged result and per-request files.
pub fn run_merge(args: &MergeArgs) -> Result<Merged, LoadgenError> {
    let stem = args
        .output
        .file_stem()
        .map_or_else(|| "merged".into(), |s| s.to_string_lossy().into_owned());
    let requests_path = args.output.with_file_name(format!("{stem}.requests.jsonl"));
    check_output(&args.files, &[&args.output, &requests_path]).map_err(LoadgenError::Merge)?;
    let (records, lines, warnings) =
        merge_files(&args.files, args.max_start_skew).map_err(LoadgenError::Merge)?;
    report::write_atomic(&args.output, &report::canonical_text(&records))?;
    report::write_atomic(&requests_path, &lines)?;
    Ok(Merged {
        stages: records.len(),
        requests: lines.lines().count(),
        warnings,
    })
}

/// The per-request file beside a result file.
fn requests_path_of(path: &Path) -> PathBuf {
    let stem = path
        .file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    path.with_file_name(format!("{stem}.requests.jsonl"))
}

/// A path made absolute and free of `.`, `..` and links where it exists (its folder, when the
/// file does not), to compare with another.
fn same_file_key(path: &Path) -> PathBuf {
    if let Ok(p) = std::fs::canonicalize(path) {
        return p;
    }
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    match (std::fs::canonicalize(parent), path.file_name()) {
        (Ok(dir), Some(name)) => dir.join(name),
        _ => path.to_path_buf(),
    }
}

/// Refuses outputs that are one of the inputs or an input's per-request file.
fn check_output(inputs: &[PathBuf], outputs: &[&Path]) -> Result<(), MergeError> {
    let taken: Vec<PathBuf> = inputs
        .iter()
        .flat_map(|p| [same_file_key(p), same_file_key(&requests_path_of(p))])
        .collect();
    match outputs.iter().find(|o| taken.contains(&same_file_key(o))) {
        Some(o) => Err(MergeError::OutputIsInput {
            path: o.to_path_buf(),
        }),
        None => Ok(()),
    }
}

/// One shard's stage: its record and its requests.
struct ShardStage {
    record: Record,
    requests: Vec<RequestRecord>,
    start_unix_s: f64,
}

/// One stage of a shard: the stage's number, its `tag.shard` and what it holds.
type StageOfShard = (usize, String, ShardStage);

/// One shard file read: its stages, its fingerprint (`None` in files written before shards
/// recorded one) and the wall-clock start of its first stage.
struct ShardFile {
    path: PathBuf,
    stages: Vec<StageOfShard>,
    fingerprint: Option<BTreeMap<String, String>>,
    start_unix_s: f64,
}

/// Merges the shard result files after checking that they are one run: equal run fingerprints
/// (the first field that differs is named), starts at most `max_start_skew_s` apart, and every
/// per-request file as long as its result file records. Files without a fingerprint (written
/// before shards recorded one) are merged with a warning.
pub fn merge_files(
    paths: &[PathBuf],
    max_start_skew_s: f64,
) -> Result<(Vec<Record>, String, Vec<String>), MergeError> {
    let files = paths
        .iter()
        .map(|p| read_shard(p))
        .collect::<Result<Vec<_>, _>>()?;
    let warnings = check_one_run(&files, max_start_skew_s)?;
    let mut stages: BTreeMap<usize, Vec<(String, ShardStage)>> = BTreeMap::new();
    for file in files {
        for (stage, shard, s) in file.stages {
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
    Ok((records, lines, warnings))
}

/// The first field in which two fingerprints differ, with both values (`(none)` for a field
/// one of them lacks).
fn first_difference(
    a: &BTreeMap<String, String>,
    b: &BTreeMap<String, String>,
) -> Option<(String, String, String)> {
    let none = || "(none)".to_string();
    a.keys()
        .chain(b.keys())
        .find(|k| a.get(*k) != b.get(*k))
        .map(|k| {
            (
                k.clone(),
                a.get(k).cloned().unwrap_or_else(none),
                b.get(k).cloned().unwrap_or_else(none),
            )
        })
}

/// Checks that the files are one run (see [`merge_files`]); returns the warnings.
fn check_one_run(files: &[ShardFile], max_start_skew_s: f64) -> Result<Vec<String>, MergeError> {
    let mut warnings = Vec::new();
    let mut first: Option<&ShardFile> = None;
    for f in files {
        let Some(fp) = &f.fingerprint else {
            warnings.push(format!(
                "{}: no run fingerprint (written by an older benchlens): its options, seed and \
                 start are not checked against the other shards",
                f.path.display()
            ));
            continue;
        };
        match first {
            None => first = Some(f),
            Some(a) => {
                let afp = a.fingerprint.as_ref().unwrap_or(fp);
                if let Some((field, first_value, value)) = first_difference(afp, fp) {
                    return Err(MergeError::Mismatch {
                        field,
                        path: f.path.clone(),
                        value,
                        first: a.path.clone(),
                        first_value,
                    });
                }
            }
        }
    }
    let earliest = files
        .iter()
        .filter(|f| f.start_unix_s.is_finite())
        .min_by(|a, b| a.start_unix_s.total_cmp(&b.start_unix_s));
    let latest = files
        .iter()
        .filter(|f| f.start_unix_s.is_finite())
        .max_by(|a, b| a.start_unix_s.total_cmp(&b.start_unix_s));
    if let (Some(a), Some(b)) = (earliest, latest) {
        let gap_s = b.start_unix_s - a.start_unix_s;
        if gap_s > max_start_skew_s {
            return Err(MergeError::Skew {
                path: b.path.clone(),
                first: a.path.clone(),
                gap_s,
                limit_s: max_start_skew_s,
            });
        }
    }
    Ok(warnings)
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

fn read_shard(path: &Path) -> Result<ShardFile, MergeError> {
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
    let jsonl = requests_path_of(path);
    let text = read(&jsonl)?;
    let mut by_stage: BTreeMap<usize, Vec<RequestRecord>> = BTreeMap::new();
    let count = text.lines().count();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let (stage, r) = parse_request_line(line).map_err(|message| MergeError::Line {
            path: jsonl.clone(),
            line: i + 1,
            message: match i + 1 == count && !text.ends_with('\n') {
                true => format!("cut short (the file ends inside this row): {message}"),
                false => message,
            },
        })?;
        by_stage.entry(stage).or_default().push(r);
    }
    let mut out = Vec::new();
    let mut fingerprint = None;
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
        if let Some(f) = record.tags.get(RUN_FINGERPRINT_TAG) {
            fingerprint.get_or_insert(parse_fingerprint(f).ok_or_else(|| {
                MergeError::BadFingerprint {
                    path: path.to_path_buf(),
                }
            })?);
        }
        let requests = by_stage.remove(&stage).unwrap_or_default();
        check_rows(&jsonl, stage, &record, requests.len())?;
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
    let start_unix_s = out
        .iter()
        .map(|(_, _, s)| s.start_unix_s)
        .fold(f64::INFINITY, f64::min);
    Ok(ShardFile {
        path: path.to_path_buf(),
        stages: out,
        fingerprint,
        start_unix_s,
    })
}

/// A `tag.run_fingerprint` read back: each field's value as text.
fn parse_fingerprint(text: &str) -> Option<BTreeMap<String, String>> {
    let Value::Object(map) = serde_json::from_str(text).ok()? else {
        return None;
    };
    Some(
        map.into_iter()
            .map(|(k, v)| match v {
                Value::String(s) => (k, s),
                v => (k, v.to_string()),
            })
            .collect(),
    )
}

/// A stage's rows against what its record says it wrote: `request_rows` exactly when recorded
/// (shards written since it is), else at least the completed and failed requests it counts.
fn check_rows(jsonl: &Path, stage: usize, record: &Record, rows: usize) -> Result<(), MergeError> {
    let metric = |k: &str| record.metrics.get(&MetricKey::Extra(k.into())).copied();
    let (recorded, exact, field) = match metric(REQUEST_ROWS_METRIC) {
        Some(n) => (n, true, REQUEST_ROWS_METRIC),
        None => {
            let m = |k: &MetricKey| record.metrics.get(k).copied().unwrap_or(0.0);
            (
                m(&MetricKey::Completed) + m(&MetricKey::Failed),
                false,
                "completed + failed",
            )
        }
    };
    let recorded = if recorded.is_finite() && recorded >= 0.0 {
        recorded as u64
    } else {
        0
    };
    let fits = match exact {
        true => rows as u64 == recorded,
        false => rows as u64 >= recorded,
    };
    match fits {
        true => Ok(()),
        false => Err(MergeError::CutShort {
            path: jsonl.to_path_buf(),
            stage,
            rows,
            recorded,
            field,
        }),
    }
}

/// A per-request line (see [`report::request_line`]) read back. A chunk stamped like the one
/// before it came in the same read (that is what `coalesced` means), so the flag is restored.
fn parse_request_line(line: &str) -> Result<(usize, RequestRecord), String> {
    let v: Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
    let num = |k: &str| v.get(k).and_then(Value::as_f64);
    let count = |k: &str| v.get(k).and_then(Value::as_u64);
    let flag = |k: &str| v.get(k).and_then(Value::as_bool).unwrap_or(false);
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
        finish_reason_missing: flag("finish_reason_missing"),
        retried_unsent: flag("retried_unsent"),
        usage_ignored: flag("usage_ignored"),
        output_tokens_text: count("output_tokens_client"),
        ignore_eos: v.get("length_flag").and_then(Value::as_str) == Some("short_reply"),
        chunks: chunks.into_iter().collect(),
        failure,
        ..RequestRecord::default()
    };
    Ok((stage, r))
}

/// The benchlens build a record's tags name, as `version (commit)` (`? (?)` for none).
fn build_of(tags: &BTreeMap<String, String>) -> String {
    provenance::build_of_tags(tags).unwrap_or_else(|| "? (?)".into())
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
    let rate = template.request_rate.unwrap_or(f64::INFINITY);
    // The figures of the requests together, as `run` makes a stage's.
    let mut measured = requests.clone();
    let figures = stage_figures(
        &mut measured,
        FigureOpts {
            duration_s: duration,
            target_rate: rate,
            percentiles: &PERCENTILES,
            slo: None,
            percentile_metrics: PercentileMetric::parse_list(PercentileMetric::DEFAULT)
                .unwrap_or_default(),
            steady: false,
        },
    );
    let mut tags = template.tags.clone();
    tags.remove("shard");
    tags.remove("partial");
    // The merged file records the build that wrote it, like every file benchlens writes; the
    // shards' builds are kept beside it when they were other ones.
    tags.insert(provenance::VERSION_TAG.into(), crate::VERSION.into());
    tags.insert(provenance::COMMIT_TAG.into(), crate::COMMIT.into());
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
    let mut record = report::stage_record(&info, &figures.metrics, &measured, &figures.view);
    record.series = figures.series;
    record
        .metrics
        .insert(MetricKey::Extra("stage_start_unix_s".into()), base);
    (record, requests)
}

#[cfg(test)]
mod tests;
