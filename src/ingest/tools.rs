//! Readers for the other tools' JSON and CSV: vLLM latency/throughput, genai-perf/AIPerf
//! (JSON and the two-block CSV), llmperf, guidellm, HF inference-benchmarker and trtllm-bench.
//!
//! Each maps its tool's names onto canonical ones and converts units: vLLM latency and
//! llmperf report seconds, genai-perf/AIPerf carry a `unit` per metric, guidellm's
//! `inter_token_latency_ms` is vLLM's TPOT (its `time_per_output_token_ms` includes the
//! first token and stays `extra.*`).

use serde_json::{Map, Value};

use super::fields::{
    latency_family, place, scalar_text, set_dim_json, set_metric_json, set_tag, stat_name,
};
use super::text::{parse_quantity, snake, to_ms_factor};
use super::{Ingested, Warning};
use crate::model::canonical::number_from_json;
use crate::model::{
    Dim, DimValue, LatencyMetric, MetricKey, Percentile, Record, RequestDetail, Stat,
};

fn push(out: &mut Ingested, r: Record) {
    out.records.push(r);
}

/// `vllm bench latency --output-json`: `avg_latency`, `latencies`, `percentiles` (seconds).
pub(crate) fn read_vllm_latency(o: &Map<String, Value>, at: &str, out: &mut Ingested) {
    let mut r = Record {
        engine: Some("vllm".into()),
        ..Record::default()
    };
    r.inferred
        .insert("engine".into(), "vLLM latency JSON layout".into());
    super::fields::note(out, "latencies converted from s to ms (end-to-end latency)");
    let e2el = |s: Stat| MetricKey::Latency(LatencyMetric::E2el, s);
    for (k, v) in o {
        let here = place(at, k);
        match k.as_str() {
            "avg_latency" => set_metric_json(&mut r, e2el(Stat::Mean), v, 1000.0, &here, out),
            "percentiles" => match v.as_object() {
                Some(p) => {
                    for (pk, pv) in p {
                        match pk.parse::<f64>().ok().and_then(Percentile::new) {
                            Some(pc) => set_metric_json(
                                &mut r,
                                e2el(Stat::P(pc)),
                                pv,
                                1000.0,
                                &place(&here, pk),
                                out,
                            ),
                            None => out
                                .warnings
                                .push(Warning::at(place(&here, pk), "not a percentile, ignored")),
                        }
                    }
                }
                None => out
                    .warnings
                    .push(Warning::at(here, "not an object, ignored")),
            },
            "latencies" => {
                if let Some(a) = v.as_array() {
                    r.requests = a
                        .iter()
                        .map(|s| RequestDetail {
                            e2el_ms: number_from_json(s).map(|s| s * 1000.0),
                            ..RequestDetail::default()
                        })
                        .collect();
                }
            }
            "model" => set_dim_json(&mut r, Dim::Model, v, &here, out),
            "batch_size" => set_dim_json(&mut r, Dim::BatchSize, v, &here, out),
            "input_len" => set_dim_json(&mut r, Dim::InputLen, v, &here, out),
            "output_len" => set_dim_json(&mut r, Dim::OutputLen, v, &here, out),
            "tensor_parallel_size" => set_dim_json(&mut r, Dim::Tp, v, &here, out),
            _ => unknown(&mut r, k, v, &here, out),
        }
    }
    push(out, r);
}

fn unknown(r: &mut Record, k: &str, v: &Value, here: &str, out: &mut Ingested) {
    if scalar_text(v).is_some() {
        set_tag(r, k, v);
    } else if !v.is_null() {
        out.warnings
            .push(Warning::at(here, "unknown field, ignored"));
    }
}

/// `vllm bench throughput --output-json`.
pub(crate) fn read_vllm_throughput(o: &Map<String, Value>, at: &str, out: &mut Ingested) {
    let mut r = Record {
        engine: Some("vllm".into()),
        ..Record::default()
    };
    r.inferred
        .insert("engine".into(), "vLLM throughput JSON layout".into());
    for (k, v) in o {
        let here = place(at, k);
        match k.as_str() {
            "elapsed_time" => set_metric_json(&mut r, MetricKey::DurationS, v, 1.0, &here, out),
            "num_requests" => {
                set_dim_json(&mut r, Dim::NumPrompts, v, &here, out);
                set_metric_json(&mut r, MetricKey::Completed, v, 1.0, &here, out);
            }
            "total_num_tokens" => set_metric_json(
                &mut r,
                MetricKey::Extra("total_num_tokens".into()),
                v,
                1.0,
                &here,
                out,
            ),
            "requests_per_second" => {
                set_metric_json(&mut r, MetricKey::RequestThroughput, v, 1.0, &here, out)
            }
            "tokens_per_second" => {
                set_metric_json(&mut r, MetricKey::TotalTokenThroughput, v, 1.0, &here, out)
            }
            "model" => set_dim_json(&mut r, Dim::Model, v, &here, out),
            _ => unknown(&mut r, k, v, &here, out),
        }
    }
    push(out, r);
}

/// A genai-perf metric name → canonical metric family or dimension.
enum GenaiTarget {
    Latency(LatencyMetric),
    Fixed(MetricKey),
    Dim(Dim),
    Extra(String),
}

fn genai_target(name: &str) -> GenaiTarget {
    let n = snake(name);
    let n = n
        .trim_end_matches("_ms")
        .trim_end_matches("_tokens_sec_user")
        .trim_end_matches("_tokens_sec")
        .trim_end_matches("_per_sec")
        .trim_end_matches("_tokens")
        .trim_end_matches("_count");
    match n {
        "time_to_first_token" => GenaiTarget::Latency(LatencyMetric::Ttft),
        "inter_token_latency" => GenaiTarget::Latency(LatencyMetric::Itl),
        "request_latency" => GenaiTarget::Latency(LatencyMetric::E2el),
        "request_throughput" => GenaiTarget::Fixed(MetricKey::RequestThroughput),
        "output_token_throughput" => GenaiTarget::Fixed(MetricKey::OutputThroughput),
        "request" => GenaiTarget::Fixed(MetricKey::Completed),
        "output_sequence_length" => GenaiTarget::Dim(Dim::OutputLen),
        "input_sequence_length" => GenaiTarget::Dim(Dim::InputLen),
        other => GenaiTarget::Extra(other.to_string()),
    }
}

fn set_genai_stat(
    r: &mut Record,
    metric: &str,
    stat: &str,
    value: f64,
    unit: &str,
    here: &str,
    out: &mut Ingested,
) {
    match genai_target(metric) {
        GenaiTarget::Latency(f) => {
            let scale = match to_ms_factor(unit) {
                Some(s) => s,
                None => {
                    if !unit.is_empty() {
                        super::fields::note(
                            out,
                            format!("{metric}: unknown unit {unit:?}, read as ms"),
                        );
                    }
                    1.0
                }
            };
            if scale != 1.0 {
                super::fields::note(out, format!("{metric}: converted from {unit} to ms"));
            }
            match stat_name(stat) {
                Some(s) => r.set_metric(MetricKey::Latency(f, s), value * scale),
                None => r.set_metric(
                    MetricKey::Extra(format!("{}_{}_ms", f.name(), snake(stat))),
                    value * scale,
                ),
            }
        }
        GenaiTarget::Fixed(k) => {
            if matches!(stat, "avg" | "value" | "Value") {
                r.set_metric(k, value);
            }
        }
        GenaiTarget::Dim(d) => {
            if matches!(stat, "avg" | "value" | "Value") {
                let _ = r.set_known(d, Some(DimValue::Num(value)));
            }
        }
        GenaiTarget::Extra(n) => {
            if n.is_empty() {
                out.warnings
                    .push(Warning::at(here, "metric without a name, ignored"));
                return;
            }
            let suffix = if matches!(stat, "avg" | "value" | "Value") {
                String::new()
            } else {
                format!("_{}", snake(stat))
            };
            r.set_metric(MetricKey::Extra(format!("{n}{suffix}")), value);
        }
    }
}

/// Looks for run settings anywhere in genai-perf/AIPerf `input_config` (nested at most as
/// deep as serde_json allows).
fn genai_config(v: &Value, r: &mut Record, at: &str, out: &mut Ingested) {
    let Some(o) = v.as_object() else { return };
    for (k, v) in o {
        let here = place(at, k);
        match k.as_str() {
            "model" | "model_names" | "model_name" => {
                let name = match v {
                    Value::Array(a) => a.first().cloned().unwrap_or(Value::Null),
                    other => other.clone(),
                };
                if name.is_string() && r.model.is_none() {
                    set_dim_json(r, Dim::Model, &name, &here, out);
                }
            }
            "concurrency" => set_dim_json(r, Dim::MaxConcurrency, v, &here, out),
            "request_rate" => set_dim_json(r, Dim::RequestRate, v, &here, out),
            "synthetic_input_tokens_mean" | "prompt_tokens_mean" => {
                if r.input_len.is_none() {
                    set_dim_json(r, Dim::InputLen, v, &here, out)
                }
            }
            "output_tokens_mean" => {
                if r.output_len.is_none() {
                    set_dim_json(r, Dim::OutputLen, v, &here, out)
                }
            }
            "backend" | "service_kind" | "endpoint_type" => set_tag(r, k, v),
            _ => {
                if v.is_object() {
                    genai_config(v, r, &here, out);
                }
            }
        }
    }
}

/// genai-perf / AIPerf JSON: metrics as `{unit, avg, p50, ...}` objects, `input_config`.
pub(crate) fn read_genai_perf(o: &Map<String, Value>, at: &str, out: &mut Ingested) {
    let mut r = Record::default();
    // The records, then the settings (so measured lengths win over configured ones).
    for (k, v) in o {
        let here = place(at, k);
        let Some(m) = v.as_object() else {
            continue;
        };
        if !m.contains_key("unit") {
            continue;
        }
        let unit = m.get("unit").and_then(Value::as_str).unwrap_or("");
        for (stat, sv) in m {
            if stat == "unit" {
                continue;
            }
            match number_from_json(sv) {
                Some(x) => set_genai_stat(&mut r, k, stat, x, unit, &place(&here, stat), out),
                None if sv.is_null() => {}
                None => out
                    .warnings
                    .push(Warning::at(place(&here, stat), "not a number, ignored")),
            }
        }
    }
    if let Some(cfg) = o.get("input_config") {
        genai_config(cfg, &mut r, &place(at, "input_config"), out);
    }
    push(out, r);
}

/// genai-perf / AIPerf two-block CSV: `Metric,avg,min,max,p99,...` rows, a blank line, then
/// `Metric,Value` rows. Metric names carry their unit (`Time To First Token (ms)`).
pub(crate) fn read_genai_csv(text: &str, out: &mut Ingested) {
    let mut r = Record::default();
    let mut header: Vec<String> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if line.trim().is_empty() {
            header.clear();
            continue;
        }
        let cells: Vec<String> = split_csv_line(line);
        if cells.first().map(String::as_str) == Some("Metric") {
            header = cells;
            continue;
        }
        if header.is_empty() {
            out.warnings
                .push(Warning::line(n, "row before any header, skipped"));
            continue;
        }
        let Some(name) = cells.first() else { continue };
        let (metric, unit) = match name.rfind('(') {
            Some(p) => (name[..p].trim(), name[p + 1..].trim_end_matches(')').trim()),
            None => (name.as_str(), ""),
        };
        for (j, cell) in cells.iter().enumerate().skip(1) {
            let Some(stat) = header.get(j) else {
                out.warnings.push(Warning::line(
                    n,
                    "more cells than the header, extra ignored",
                ));
                break;
            };
            if let Some((v, _)) = parse_quantity(cell) {
                set_genai_stat(&mut r, metric, stat, v, unit, &format!("line {n}"), out);
            }
        }
    }
    if r.metrics.is_empty() {
        out.note = Some("no records: no metric row held a number".into());
    } else {
        push(out, r);
    }
}

fn split_csv_line(line: &str) -> Vec<String> {
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(line.as_bytes());
    rdr.records()
        .next()
        .and_then(Result::ok)
        .map(|r| r.iter().map(|c| c.trim().to_string()).collect())
        .unwrap_or_default()
}

/// llmperf `*_summary.json`: flat, seconds.
pub(crate) fn read_llmperf(o: &Map<String, Value>, at: &str, out: &mut Ingested) {
    let mut r = Record::default();
    super::fields::note(out, "llmperf latencies (*_s) converted from s to ms");
    for (k, v) in o {
        let here = place(at, k);
        match k.as_str() {
            "model" => set_dim_json(&mut r, Dim::Model, v, &here, out),
            "num_concurrent_requests" => set_dim_json(&mut r, Dim::MaxConcurrency, v, &here, out),
            "mean_input_tokens" => set_dim_json(&mut r, Dim::InputLen, v, &here, out),
            "mean_output_tokens" => set_dim_json(&mut r, Dim::OutputLen, v, &here, out),
            "results_mean_output_throughput_token_per_s" => {
                set_metric_json(&mut r, MetricKey::OutputThroughput, v, 1.0, &here, out)
            }
            "results_num_completed_requests" => {
                set_metric_json(&mut r, MetricKey::Completed, v, 1.0, &here, out)
            }
            "results_num_requests_started" => set_dim_json(&mut r, Dim::NumPrompts, v, &here, out),
            "results_completed_requests_per_min" => set_metric_json(
                &mut r,
                MetricKey::RequestThroughput,
                v,
                1.0 / 60.0,
                &here,
                out,
            ),
            "results_end_to_end_time" | "results_total_time" => {
                set_metric_json(&mut r, MetricKey::DurationS, v, 1.0, &here, out)
            }
            _ => {
                let Some(rest) = k.strip_prefix("results_") else {
                    unknown(&mut r, k, v, &here, out);
                    continue;
                };
                let families = [
                    ("ttft_s_", LatencyMetric::Ttft),
                    ("inter_token_latency_s_", LatencyMetric::Itl),
                    ("end_to_end_latency_s_", LatencyMetric::E2el),
                ];
                if let Some((stat, f)) = families
                    .iter()
                    .find_map(|(p, f)| rest.strip_prefix(p).map(|s| (s, *f)))
                {
                    match stat_name(stat) {
                        Some(s) => {
                            set_metric_json(&mut r, MetricKey::Latency(f, s), v, 1000.0, &here, out)
                        }
                        None => set_metric_json(
                            &mut r,
                            MetricKey::Extra(format!("{}_{stat}_ms", f.name())),
                            v,
                            1000.0,
                            &here,
                            out,
                        ),
                    }
                } else if number_from_json(v).is_some() {
                    set_metric_json(
                        &mut r,
                        MetricKey::Extra(rest.to_string()),
                        v,
                        1.0,
                        &here,
                        out,
                    );
                } else {
                    unknown(&mut r, k, v, &here, out);
                }
            }
        }
    }
    push(out, r);
}

fn distribution(
    r: &mut Record,
    dist: &Value,
    family: Option<LatencyMetric>,
    extra_name: &str,
    scale: f64,
    here: &str,
    out: &mut Ingested,
) {
    let Some(d) = dist.as_object() else { return };
    for (stat, v) in d {
        if stat == "percentiles" {
            if let Some(p) = v.as_object() {
                for (pk, pv) in p {
                    if let (Some(f), Some(s)) = (family, stat_name(pk)) {
                        set_metric_json(
                            r,
                            MetricKey::Latency(f, s),
                            pv,
                            scale,
                            &place(here, pk),
                            out,
                        );
                    }
                }
            }
            continue;
        }
        match (family, stat_name(stat)) {
            (Some(f), Some(s)) => set_metric_json(
                r,
                MetricKey::Latency(f, s),
                v,
                scale,
                &place(here, stat),
                out,
            ),
            (None, Some(Stat::Mean)) => set_metric_json(
                r,
                MetricKey::Extra(extra_name.to_string()),
                v,
                scale,
                &place(here, stat),
                out,
            ),
            _ => {}
        }
    }
}

/// guidellm `benchmarks.json`: one record per benchmark.
pub(crate) fn read_guidellm(o: &Map<String, Value>, at: &str, out: &mut Ingested) {
    super::fields::note(
        out,
        "inter_token_latency_ms read as TPOT (guidellm's ITL is vLLM's TPOT); request_latency converted from s to ms",
    );
    let Some(benchmarks) = o.get("benchmarks").and_then(Value::as_array) else {
        return;
    };
    for (i, b) in benchmarks.iter().enumerate() {
        let here = place(at, &format!("benchmarks[{i}]"));
        let mut r = Record::default();
        let strategy = b
            .pointer("/args/strategy")
            .or_else(|| b.pointer("/config/strategy"));
        if let Some(s) = strategy {
            let kind = s
                .get("type_")
                .or_else(|| s.get("type"))
                .and_then(Value::as_str)
                .unwrap_or("");
            if !kind.is_empty() {
                r.tags.insert("strategy".into(), kind.to_string());
            }
            match kind {
                "throughput" => r.request_rate = Some(f64::INFINITY),
                "synchronous" => r.max_concurrency = Some(1),
                "concurrent" => {
                    if let Some(v) = s.get("streams") {
                        set_dim_json(&mut r, Dim::MaxConcurrency, v, &here, out);
                    }
                }
                _ => {
                    if let Some(v) = s.get("rate") {
                        set_dim_json(
                            &mut r,
                            Dim::RequestRate,
                            v,
                            &place(&here, "args.strategy.rate"),
                            out,
                        );
                    }
                }
            }
        }
        for p in [
            "/worker/backend_model",
            "/args/model",
            "/model",
            "/config/model",
        ] {
            if let Some(m) = b.pointer(p).filter(|m| m.is_string()) {
                set_dim_json(&mut r, Dim::Model, m, &here, out);
                break;
            }
        }
        if r.model.is_none() {
            if let Some(m) = o
                .get("args")
                .and_then(|a| a.get("model"))
                .filter(|m| m.is_string())
            {
                set_dim_json(&mut r, Dim::Model, m, &here, out);
            }
        }
        if let Some(t) = b.pointer("/request_totals") {
            if let Some(v) = t.get("successful") {
                set_metric_json(&mut r, MetricKey::Completed, v, 1.0, &here, out);
            }
            if let Some(v) = t.get("errored") {
                set_metric_json(&mut r, MetricKey::Failed, v, 1.0, &here, out);
            }
        }
        if let Some(metrics) = b.get("metrics").and_then(Value::as_object) {
            for (name, m) in metrics {
                let mhere = place(&here, &format!("metrics.{name}"));
                let dist = m.get("successful").unwrap_or(m);
                let (family, extra, scale) = match name.as_str() {
                    "request_latency" => (Some(LatencyMetric::E2el), "", 1000.0),
                    "time_to_first_token_ms" => (Some(LatencyMetric::Ttft), "", 1.0),
                    "inter_token_latency_ms" => (Some(LatencyMetric::Tpot), "", 1.0),
                    "requests_per_second" => (None, "", 1.0),
                    "output_tokens_per_second" => (None, "", 1.0),
                    "tokens_per_second" => (None, "", 1.0),
                    other => (None, other, 1.0),
                };
                let mean = dist.get("mean");
                match name.as_str() {
                    "requests_per_second" | "output_tokens_per_second" | "tokens_per_second" => {
                        let key = match name.as_str() {
                            "requests_per_second" => MetricKey::RequestThroughput,
                            "output_tokens_per_second" => MetricKey::OutputThroughput,
                            _ => MetricKey::TotalTokenThroughput,
                        };
                        if let Some(v) = mean {
                            set_metric_json(&mut r, key, v, 1.0, &mhere, out);
                        }
                    }
                    "prompt_token_count" => {
                        if let Some(v) = mean {
                            set_dim_json(&mut r, Dim::InputLen, v, &mhere, out);
                        }
                    }
                    "output_token_count" => {
                        if let Some(v) = mean {
                            set_dim_json(&mut r, Dim::OutputLen, v, &mhere, out);
                        }
                    }
                    _ => distribution(&mut r, dist, family, &snake(extra), scale, &mhere, out),
                }
            }
        } else {
            out.warnings
                .push(Warning::at(here.clone(), "no \"metrics\", skipped"));
            continue;
        }
        push(out, r);
    }
}

/// HF inference-benchmarker JSON: `config.model_name`, one record per `results[]` entry.
pub(crate) fn read_hf(o: &Map<String, Value>, at: &str, out: &mut Ingested) {
    let model = o
        .get("config")
        .and_then(|c| c.get("model_name").or_else(|| c.get("model")))
        .cloned();
    let Some(results) = o.get("results").and_then(Value::as_array) else {
        return;
    };
    for (i, res) in results.iter().enumerate() {
        let here = place(at, &format!("results[{i}]"));
        let Some(ro) = res.as_object() else {
            out.warnings
                .push(Warning::at(here, "not an object, skipped"));
            continue;
        };
        let mut r = Record::default();
        if let Some(m) = &model {
            set_dim_json(&mut r, Dim::Model, m, &here, out);
        }
        for (k, v) in ro {
            let kh = place(&here, k);
            match k.as_str() {
                "id" => set_dim_json(&mut r, Dim::Label, v, &kh, out),
                "executor_type" => set_tag(&mut r, "executor", v),
                "config" => {
                    if let Some(rate) = v.get("rate") {
                        set_dim_json(&mut r, Dim::RequestRate, rate, &place(&kh, "rate"), out);
                    }
                    if let Some(vus) = v.get("max_vus") {
                        set_dim_json(
                            &mut r,
                            Dim::MaxConcurrency,
                            vus,
                            &place(&kh, "max_vus"),
                            out,
                        );
                    }
                }
                "successful_requests" => {
                    set_metric_json(&mut r, MetricKey::Completed, v, 1.0, &kh, out)
                }
                "failed_requests" => set_metric_json(&mut r, MetricKey::Failed, v, 1.0, &kh, out),
                "request_rate" => {
                    set_metric_json(&mut r, MetricKey::RequestThroughput, v, 1.0, &kh, out)
                }
                "token_throughput_secs" => {
                    set_metric_json(&mut r, MetricKey::OutputThroughput, v, 1.0, &kh, out)
                }
                "duration_ms" => set_metric_json(&mut r, MetricKey::DurationS, v, 0.001, &kh, out),
                _ => {
                    let family = latency_family(k);
                    if let (Some(f), Some(d)) = (family, v.as_object()) {
                        for (stat, sv) in d {
                            if let Some(s) = stat_name(stat) {
                                set_metric_json(
                                    &mut r,
                                    MetricKey::Latency(f, s),
                                    sv,
                                    1.0,
                                    &place(&kh, stat),
                                    out,
                                );
                            }
                        }
                    } else if number_from_json(v).is_some() {
                        set_metric_json(&mut r, MetricKey::Extra(snake(k)), v, 1.0, &kh, out);
                    } else if !v.is_null() && !v.is_object() && !v.is_array() {
                        set_tag(&mut r, k, v);
                    }
                }
            }
        }
        push(out, r);
    }
}

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
