//! trtllm-bench `--report_json` files.

use serde_json::{Map, Value};

use super::push;
use crate::ingest::fields::{place, set_dim_json, set_metric_json, set_tag, stat_name};
use crate::ingest::Ingested;
use crate::model::{Dim, LatencyMetric, MetricKey, Record, Stat};

/// trtllm-bench `--report_json`.
pub(crate) fn read_trtllm(o: &Map<String, Value>, at: &str, out: &mut Ingested) {
    let mut r = Record {
        engine: Some("trtllm".into()),
        ..Record::default()
    };
    r.inferred
        .insert("engine".into(), "trtllm-bench report layout".into());
    let field = |section: &str, key: &str| o.get(section).and_then(|s| s.get(key));
    let dims: &[(&str, &str, Dim)] = &[
        ("engine", "model", Dim::Model),
        ("engine", "dtype", Dim::Precision),
        ("world_info", "tp_size", Dim::Tp),
        ("world_info", "pp_size", Dim::Pp),
        ("request_info", "num_requests", Dim::NumPrompts),
        ("request_info", "avg_input_length", Dim::InputLen),
        ("request_info", "avg_output_length", Dim::OutputLen),
    ];
    for (s, k, d) in dims {
        if let Some(v) = field(s, k) {
            set_dim_json(&mut r, *d, v, &place(at, &format!("{s}.{k}")), out);
        }
    }
    for (s, k) in [
        ("engine", "quantization"),
        ("engine", "backend"),
        ("world_info", "max_batch_size"),
    ] {
        if let Some(v) = field(s, k) {
            set_tag(&mut r, k, v);
        }
    }
    let metrics: &[(&str, &str, MetricKey)] = &[
        (
            "performance",
            "request_throughput_req_s",
            MetricKey::RequestThroughput,
        ),
        (
            "performance",
            "system_output_throughput_tok_s",
            MetricKey::OutputThroughput,
        ),
        (
            "performance",
            "system_total_throughput_tok_s",
            MetricKey::TotalTokenThroughput,
        ),
        (
            "performance",
            "output_throughput_per_user_tok_s",
            MetricKey::Extra("output_throughput_per_user_tok_s".into()),
        ),
        (
            "performance",
            "avg_request_latency_ms",
            MetricKey::Latency(LatencyMetric::E2el, Stat::Mean),
        ),
        ("performance", "total_latency_ms", MetricKey::DurationS),
        (
            "streaming_metrics",
            "avg_ttft_ms",
            MetricKey::Latency(LatencyMetric::Ttft, Stat::Mean),
        ),
        (
            "streaming_metrics",
            "avg_tpot_ms",
            MetricKey::Latency(LatencyMetric::Tpot, Stat::Mean),
        ),
    ];
    for (s, k, key) in metrics {
        if let Some(v) = field(s, k) {
            let scale = if *key == MetricKey::DurationS {
                0.001
            } else {
                1.0
            };
            set_metric_json(
                &mut r,
                key.clone(),
                v,
                scale,
                &place(at, &format!("{s}.{k}")),
                out,
            );
        }
    }
    for (k, f) in [
        ("ttft_percentiles", LatencyMetric::Ttft),
        ("tpot_percentiles", LatencyMetric::Tpot),
    ] {
        if let Some(p) = field("streaming_metrics", k).and_then(Value::as_object) {
            for (pk, pv) in p {
                let stat = match pk.as_str() {
                    "average" | "avg" => Some(Stat::Mean),
                    other => stat_name(other),
                };
                if let Some(s) = stat {
                    set_metric_json(
                        &mut r,
                        MetricKey::Latency(f, s),
                        pv,
                        1.0,
                        &place(at, &format!("streaming_metrics.{k}.{pk}")),
                        out,
                    );
                }
            }
        }
    }
    push(out, r);
}

/// The section title of a report line `= PERFORMANCE OVERVIEW` (after any log prefix).
fn section(line: &str) -> Option<&str> {
    let t = line.trim();
    let title = t.strip_prefix("= ")?;
    (!title.is_empty() && !title.starts_with('=')).then(|| title.trim())
}

/// Whether a text holds a trtllm-bench report printed to the console or a log: a
/// `= PERFORMANCE OVERVIEW` section under a `====` rule, with a throughput line in it.
pub(crate) fn detect_text(text: &str) -> bool {
    memchr::memmem::find(text.as_bytes(), b"= PERFORMANCE OVERVIEW").is_some()
        && memchr::memmem::find(text.as_bytes(), b"Throughput (").is_some()
}

/// Sections that open a new report: a second report in the same log starts with one of them.
fn opens_report(title: &str) -> bool {
    let t = title.to_ascii_uppercase();
    t.contains("ENGINE DETAILS")
        || t.contains("BACKEND")
        || t.contains("REQUEST DETAILS")
        || t.contains("WORLD + RUNTIME")
        || t == "PERFORMANCE OVERVIEW"
}

/// A `Label (unit): value` line of the report: the metric or dimension it sets.
enum Line {
    Dim(Dim),
    Tag(&'static str),
    Metric(MetricKey, f64),
}

fn line_kind(label: &str) -> Option<Line> {
    use LatencyMetric::{E2el, Tpot, Ttft};
    let l = label.trim();
    Some(match l {
        "Model" => Line::Dim(Dim::Model),
        "TensorRT-LLM Version" => Line::Dim(Dim::EngineVersion),
        "TP Size" => Line::Dim(Dim::Tp),
        "PP Size" => Line::Dim(Dim::Pp),
        "Number of requests" => Line::Dim(Dim::NumPrompts),
        "Average Input Length (tokens)" => Line::Dim(Dim::InputLen),
        "Average Output Length (tokens)" => Line::Dim(Dim::OutputLen),
        "Dtype" => Line::Tag("dtype"),
        "KV Cache Dtype" => Line::Tag("kv_cache_dtype"),
        "Quantization" => Line::Tag("quantization"),
        "EP Size" => Line::Tag("ep"),
        "Max Runtime Batch Size" => Line::Tag("max_batch_size"),
        "Max Runtime Tokens" => Line::Tag("max_num_tokens"),
        "Scheduling Policy" => Line::Tag("scheduling_policy"),
        "KV Memory Percentage" => Line::Tag("kv_memory_percentage"),
        "Request Throughput (req/sec)" => Line::Metric(MetricKey::RequestThroughput, 1.0),
        // The older report's "Token Throughput" is output tokens over the total latency.
        "Total Output Throughput (tokens/sec)" | "Token Throughput (tokens/sec)" => {
            Line::Metric(MetricKey::OutputThroughput, 1.0)
        }
        "Total Token Throughput (tokens/sec)" => Line::Metric(MetricKey::TotalTokenThroughput, 1.0),
        "Per User Output Throughput (tokens/sec/user)" => Line::Metric(
            MetricKey::Extra("output_throughput_per_user_tok_s".into()),
            1.0,
        ),
        "Per GPU Output Throughput (tokens/sec/gpu)" => Line::Metric(
            MetricKey::Extra("output_throughput_per_gpu_tok_s".into()),
            1.0,
        ),
        "Per User Output Speed [1/TPOT] (tokens/sec/user)" => {
            Line::Metric(MetricKey::Extra("output_speed_per_user_tok_s".into()), 1.0)
        }
        "Number of concurrent requests" => {
            Line::Metric(MetricKey::Extra("concurrency".into()), 1.0)
        }
        "Total Latency (ms)" => Line::Metric(MetricKey::DurationS, 0.001),
        "Average request latency (ms)" => Line::Metric(MetricKey::Latency(E2el, Stat::Mean), 1.0),
        "Average time-to-first-token [TTFT] (ms)" => {
            Line::Metric(MetricKey::Latency(Ttft, Stat::Mean), 1.0)
        }
        "Average time-per-output-token [TPOT] (ms)" => {
            Line::Metric(MetricKey::Latency(Tpot, Stat::Mean), 1.0)
        }
        _ => return None,
    })
}

/// `[TPOT] P50    : 204.0463`: the breakdown lines, in ms.
fn breakdown(r: &mut Record, line: &str) -> bool {
    let Some(rest) = line.trim().strip_prefix('[') else {
        return false;
    };
    let Some((family, rest)) = rest.split_once(']') else {
        return false;
    };
    let Some((stat, value)) = rest.split_once(':') else {
        return false;
    };
    let family = match family {
        "TPOT" => LatencyMetric::Tpot,
        "TTFT" => LatencyMetric::Ttft,
        "Latency" => LatencyMetric::E2el,
        "ITL" => LatencyMetric::Itl,
        _ => return false,
    };
    let Ok(v) = value.trim().parse::<f64>() else {
        return false;
    };
    let stat = stat.trim().to_ascii_lowercase();
    let key = match stat.as_str() {
        "average" => MetricKey::Latency(family, Stat::Mean),
        "minimum" | "maximum" => MetricKey::Extra(format!("{}_{}_ms", family.name(), &stat[..3])),
        other => match stat_name(other) {
            Some(s) => MetricKey::Latency(family, s),
            None => return false,
        },
    };
    r.set_metric(key, v);
    true
}

/// trtllm-bench's text report, as printed to the console or found inside a log: one record
/// per report (a log may hold several), sections `= PyTorch backend`, `= WORLD + RUNTIME
/// INFORMATION`, `= PERFORMANCE OVERVIEW` and the per-request breakdowns.
pub(crate) fn read_text(text: &str, out: &mut Ingested) {
    let mut r = new_record();
    let mut performance = false;
    let mut in_dataset = false;
    for (i, line) in text.lines().enumerate() {
        if let Some(title) = section(line) {
            if performance && opens_report(title) {
                push(out, std::mem::replace(&mut r, new_record()));
                performance = false;
            }
            performance |= title == "PERFORMANCE OVERVIEW";
            in_dataset = title.to_ascii_uppercase().contains("DATASET");
            continue;
        }
        if in_dataset || breakdown(&mut r, line) {
            continue;
        }
        let Some((label, value)) = line.split_once(':') else {
            continue;
        };
        let Some(kind) = line_kind(label) else {
            continue;
        };
        let value = value.trim();
        let here = format!("line {}", i + 1);
        match kind {
            Line::Dim(d) => set_dim_json(&mut r, d, &Value::String(value.to_string()), &here, out),
            Line::Tag(t) => {
                if !value.is_empty() && value != "None" {
                    r.tags.insert(t.to_string(), value.to_string());
                }
            }
            Line::Metric(key, scale) => set_metric_json(
                &mut r,
                key,
                &Value::String(value.to_string()),
                scale,
                &here,
                out,
            ),
        }
    }
    if performance {
        push(out, r);
    }
    for rec in &mut out.records {
        // The quantization when there is one, else the weights' dtype.
        let precision = rec
            .tags
            .get("quantization")
            .or_else(|| rec.tags.get("dtype"))
            .cloned();
        if let Some(p) = precision {
            if rec.precision.is_none() {
                rec.precision = Some(p.to_ascii_lowercase().into());
            }
        }
    }
}

fn new_record() -> Record {
    let mut r = Record {
        engine: Some("trtllm".into()),
        ..Record::default()
    };
    r.inferred
        .insert("engine".into(), "trtllm-bench report layout".into());
    r
}
