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
