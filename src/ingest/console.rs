//! vLLM serving console summaries: `==== Serving Benchmark Result ====` blocks of
//! `Label:<padding>value` lines, with the free lines before them as context.
//!
//! Context lines between blocks form a group that applies to the blocks after it: an engine
//! name on its own (`vllm`) stays until another is named; `key: a, b, c` lists give one value
//! to each following block in order (`num_prompts: 1, 2, 4`); `key: v` applies to every block
//! of the group (`seq_length: 80` → input length). A new group replaces the previous one's
//! lists and values. Context values are marked inferred (`context line N`).

use super::fields::{infer_dim, lengths_from_totals};
use super::table::ENGINES;
use super::{Ingested, Warning};
use crate::model::canonical::parse_number_text;
use crate::model::{Dim, DimValue, LatencyMetric, MetricKey, Record, Stat};

/// The banner of a summary block: a text holding it is console output.
pub(crate) const BANNER: &str = "Serving Benchmark Result";

/// One context value: applies to every block, or one list item per block.
struct ContextValue {
    key: String,
    values: Vec<String>,
    line: usize,
}

fn context_dim(key: &str) -> Option<Dim> {
    match key {
        "num_prompts" | "num_prompt" | "prompts" | "num_requests" => Some(Dim::NumPrompts),
        "seq_length" | "seq_len" | "input_len" | "input_length" | "prompt_len" => {
            Some(Dim::InputLen)
        }
        "output_len" | "output_length" | "max_tokens" => Some(Dim::OutputLen),
        "request_rate" | "qps" | "rate" => Some(Dim::RequestRate),
        "max_concurrency" | "concurrency" => Some(Dim::MaxConcurrency),
        "model" | "model_id" => Some(Dim::Model),
        "gpu" => Some(Dim::Gpu),
        "tp" | "tp_size" => Some(Dim::Tp),
        "batch_size" | "bs" => Some(Dim::BatchSize),
        "dataset" | "dataset_name" => Some(Dim::Dataset),
        _ => None,
    }
}

fn summary_key(label: &str) -> Option<MetricKey> {
    let l = label.trim();
    let fixed = match l {
        "Successful requests" => Some(MetricKey::Completed),
        "Failed requests" => Some(MetricKey::Failed),
        "Benchmark duration (s)" => Some(MetricKey::DurationS),
        "Request throughput (req/s)" => Some(MetricKey::RequestThroughput),
        "Request goodput (req/s)" => Some(MetricKey::RequestGoodput),
        "Output token throughput (tok/s)" => Some(MetricKey::OutputThroughput),
        "Total Token throughput (tok/s)" | "Total token throughput (tok/s)" => {
            Some(MetricKey::TotalTokenThroughput)
        }
        "Input token throughput (tok/s)" => Some(MetricKey::InputThroughput),
        "Total input tokens" => Some(MetricKey::Extra("total_input_tokens".into())),
        "Total generated tokens" => Some(MetricKey::Extra("total_output_tokens".into())),
        "Peak output token throughput (tok/s)" => {
            Some(MetricKey::Extra("max_output_tokens_per_s".into()))
        }
        "Peak concurrent requests" => Some(MetricKey::Extra("max_concurrent_requests".into())),
        _ => None,
    };
    if fixed.is_some() {
        return fixed;
    }
    // "Mean TTFT (ms)", "P99.9 ITL (ms)", "Median E2EL (ms)"
    let body = l.strip_suffix("(ms)")?.trim();
    let (stat, family) = body.split_once(' ')?;
    let stat = match stat.to_ascii_lowercase().as_str() {
        "mean" => Stat::Mean,
        "median" => Stat::Median,
        "std" => Stat::Std,
        s => Stat::P(crate::model::Percentile::parse(s.strip_prefix('p')?)?),
    };
    let family = match family.trim().to_ascii_lowercase().as_str() {
        "ttft" => LatencyMetric::Ttft,
        "tpot" => LatencyMetric::Tpot,
        "itl" => LatencyMetric::Itl,
        "e2el" | "e2e latency" => LatencyMetric::E2el,
        _ => return None,
    };
    Some(MetricKey::Latency(family, stat))
}

/// Settings a summary block states itself (dimensions, not metrics).
fn summary_dim(label: &str) -> Option<Dim> {
    match label.trim() {
        "Maximum request concurrency" => Some(Dim::MaxConcurrency),
        "Request rate configured (RPS)" => Some(Dim::RequestRate),
        "Backend" => Some(Dim::Engine),
        "Model" | "Model ID" => Some(Dim::Model),
        _ => None,
    }
}

/// Reads every summary block.
pub(crate) fn read(text: &str, out: &mut Ingested) {
    let mut engine: Option<(String, usize)> = None;
    let mut group: Vec<ContextValue> = Vec::new();
    let mut group_open = false; // context lines seen since the last block
    let mut index_in_group = 0usize;
    let mut block: Option<(Record, usize)> = None;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.trim();
        if line.contains(BANNER) {
            if let Some((r, start)) = block.take() {
                finish_block(r, start, out);
            }
            if group_open {
                group_open = false;
                index_in_group = 0;
            }
            let mut r = Record::default();
            if let Some((e, at)) = &engine {
                infer_dim(
                    &mut r,
                    Dim::Engine,
                    DimValue::Text(e.clone()),
                    &format!("context line {at}"),
                );
            }
            for c in &group {
                let value = if c.values.len() > 1 {
                    match c.values.get(index_in_group) {
                        Some(v) => v,
                        None => {
                            out.warnings.push(Warning::line(
                                n,
                                format!(
                                    "block {} has no value in the {} list of line {} ({} values)",
                                    index_in_group + 1,
                                    c.key,
                                    c.line,
                                    c.values.len()
                                ),
                            ));
                            continue;
                        }
                    }
                } else {
                    &c.values[0]
                };
                let from = format!("context line {}", c.line);
                match context_dim(&c.key) {
                    Some(d) => {
                        let v = parse_number_text(value)
                            .map(DimValue::Num)
                            .unwrap_or_else(|| DimValue::Text(value.clone()));
                        if r.known(d).is_none() && r.set_known(d, Some(v)).is_ok() {
                            r.inferred.insert(d.name().to_string(), from);
                        }
                    }
                    None => {
                        r.tags.insert(super::text::snake(&c.key), value.clone());
                        r.inferred
                            .insert(format!("tag.{}", super::text::snake(&c.key)), from);
                    }
                }
            }
            index_in_group += 1;
            block = Some((r, n));
            continue;
        }
        if line.is_empty() {
            continue;
        }
        if line.bytes().all(|b| b == b'=') {
            if let Some((r, start)) = block.take() {
                finish_block(r, start, out);
            }
            continue;
        }
        if let Some((r, _)) = block.as_mut() {
            if line.starts_with('-') {
                continue; // section rule: "----Time to First Token----"
            }
            let Some((label, value)) = line.split_once(':') else {
                out.warnings.push(Warning::line(
                    n,
                    "unexpected line in a summary block, ignored",
                ));
                continue;
            };
            let value = value.trim();
            if let Some(d) = summary_dim(label) {
                let v = parse_number_text(value)
                    .map(DimValue::Num)
                    .unwrap_or_else(|| DimValue::Text(value.to_string()));
                if let Err(e) = r.set_known(d, Some(v)) {
                    out.warnings.push(Warning::line(n, format!("{e}, ignored")));
                }
            } else if let Some(key) = summary_key(label) {
                match parse_number_text(value) {
                    Some(v) => r.set_metric(key, v),
                    None => out.warnings.push(Warning::line(
                        n,
                        format!("{:?} is not a number, ignored", value),
                    )),
                }
            } else {
                out.warnings.push(Warning::line(
                    n,
                    format!("unknown summary line {:?}, ignored", label.trim()),
                ));
            }
            continue;
        }
        // A context line.
        if !group_open {
            group.clear();
            group_open = true;
        }
        let lower = line.to_ascii_lowercase();
        if ENGINES.contains(&lower.as_str()) {
            engine = Some((lower, n));
        } else if let Some((k, v)) = line.split_once(':') {
            let key = super::text::snake(k);
            let values: Vec<String> = v
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect();
            if key.is_empty() || values.is_empty() {
                out.warnings
                    .push(Warning::line(n, "context line without a value, ignored"));
            } else {
                group.push(ContextValue {
                    key,
                    values,
                    line: n,
                });
            }
        } else {
            out.warnings.push(Warning::line(
                n,
                format!("free text {:?} not understood, ignored", truncate(line)),
            ));
        }
    }
    if let Some((r, start)) = block.take() {
        finish_block(r, start, out);
    }
}

fn truncate(s: &str) -> String {
    s.chars().take(40).collect()
}

fn finish_block(mut r: Record, start: usize, out: &mut Ingested) {
    if r.metrics.is_empty() {
        out.warnings.push(Warning::line(
            start,
            "summary block without values, skipped",
        ));
        return;
    }
    lengths_from_totals(
        &mut r,
        [
            "total input tokens",
            "total generated tokens",
            "successful requests",
        ],
    );
    out.records.push(r);
}
