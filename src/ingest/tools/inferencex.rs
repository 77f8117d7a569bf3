//! InferenceX (SemiAnalysis) aggregates: the per-point `agg_*.json` its `utils/process_result.py`
//! writes, the agentic aggregates of `utils/agentic/aggregation/process_agentic_result.py`
//! (nested `request_metrics.latency.ttft.p50`, measured power), and result files written in the
//! same units by its experiments (`median_ttft`, `p99_e2el` with `_ms` dropped).
//!
//! Units, as the writers compute them: every latency is in **seconds** under its vLLM name with
//! `_ms` dropped (`mean_ttft_ms / 1000` → `mean_ttft`), stored here in ms; `*_intvty` is
//! `1000 / *_tpot_ms`, tokens per second per user, kept as `extra.*_intvty`;
//! `tput_per_gpu`, `output_tput_per_gpu`, `input_tput_per_gpu` are token throughputs divided
//! by a GPU count (all GPUs, `tp × pp × pcp_size` on one node; on several nodes output over
//! the decode GPUs and input over the prefill GPUs), kept as `extra.*` with that count in a
//! `tag.*_gpus` beside them; `"false"`/`"true"` strings are booleans.

use serde_json::{Map, Value};

use super::{push, unknown};
use crate::ingest::fields::{
    infer_dim, latency_family, note, place, set_dim_json, set_metric_json, set_tag, stat_name,
};
use crate::ingest::Ingested;
use crate::model::canonical::number_from_json;
use crate::model::{Dim, DimValue, LatencyMetric, MetricKey, Record, Stat};

/// `{stat}_{family}` with the `_ms` dropped (`median_ttft`, `p99_e2el`, `p99.9_itl`): the
/// latency metric it names, in seconds.
fn seconds_latency(key: &str) -> Option<MetricKey> {
    let (stat, family) = key.split_once('_')?;
    if !matches!(family, "ttft" | "tpot" | "itl" | "e2el") {
        return None;
    }
    Some(MetricKey::Latency(
        latency_family(family)?,
        stat_name(stat)?,
    ))
}

/// The GPU of an InferenceX runner name when the name says more than the GPU:
/// `cluster:h100-dgxc` → `h100`, `mi355x-amds` → `mi355x`; `None` for a bare GPU name.
fn runner_gpu(hw: &str) -> Option<&str> {
    let name = hw.rsplit(':').next().unwrap_or(hw);
    let first = name.split(['-', '_']).next().unwrap_or(name);
    (first != hw && crate::ingest::words::is_gpu_word(first)).then_some(first)
}

/// Whether an object is an InferenceX aggregate, with the evidence.
pub(crate) fn looks_like(o: &Map<String, Value>) -> Option<&'static str> {
    if o.contains_key("infmax_model_prefix") || o.contains_key("tput_per_gpu") {
        return Some("InferenceX \"infmax_model_prefix\" / \"tput_per_gpu\"");
    }
    if o.get("request_metrics")
        .is_some_and(|m| m.get("latency").is_some())
        && o.contains_key("conc")
    {
        return Some("InferenceX agentic \"request_metrics.latency\"");
    }
    let seconds = o.keys().filter(|k| seconds_latency(k).is_some()).count();
    if seconds >= 2 && !o.keys().any(|k| k.ends_with("_ms")) {
        return Some("latencies named without \"_ms\" (InferenceX seconds)");
    }
    None
}

/// Whether a key the canonical names lack is a measurement (kept as `extra.*`), not a setting:
/// interactivity, per-GPU throughput, token totals, measured power and energy.
fn measured(key: &str) -> bool {
    key.ends_with("_intvty")
        || key.ends_with("tput_per_gpu")
        || key.ends_with("_power_w")
        || key.ends_with("_energy_j")
        || key.starts_with("joules_per_")
        || matches!(
            key,
            "total_input_tokens" | "total_output_tokens" | "num_requests_total" | "good_completed"
        )
}

/// A `"true"`/`"false"` string or a JSON boolean as text; other values as they are.
fn boolean_text(v: &Value) -> Option<String> {
    match v {
        Value::Bool(b) => Some(b.to_string()),
        Value::String(s) if s.eq_ignore_ascii_case("true") => Some("true".into()),
        Value::String(s) if s.eq_ignore_ascii_case("false") => Some("false".into()),
        _ => crate::ingest::fields::scalar_text(v),
    }
}

fn count(o: &Map<String, Value>, key: &str) -> Option<f64> {
    o.get(key).and_then(number_from_json).filter(|n| *n > 0.0)
}

/// The GPUs each per-GPU throughput divides by, as the writer computed them.
struct Divisors {
    total: Option<f64>,
    output: Option<f64>,
    input: Option<f64>,
    from: &'static str,
}

fn divisors(o: &Map<String, Value>) -> Divisors {
    if let Some(n) = count(o, "num_gpus") {
        return Divisors {
            total: Some(n),
            output: Some(n),
            input: Some(n),
            from: "num_gpus",
        };
    }
    let multinode = o.get("is_multinode").and_then(boolean_text).as_deref() == Some("true");
    if multinode {
        let prefill = count(o, "num_prefill_gpu");
        let decode = count(o, "num_decode_gpu");
        let total = match (prefill, decode) {
            (Some(p), Some(d)) => Some(p + d),
            (Some(p), None) => Some(p),
            _ => None,
        };
        return Divisors {
            total,
            output: decode.or(total),
            input: prefill,
            from: "num_prefill_gpu + num_decode_gpu",
        };
    }
    let tp = count(o, "tp");
    let n = tp.map(|tp| tp * count(o, "pp").unwrap_or(1.0) * count(o, "pcp_size").unwrap_or(1.0));
    Divisors {
        total: n,
        output: n,
        input: n,
        from: "tp × pp × pcp_size",
    }
}

/// One InferenceX aggregate (flat, agentic, or an experiment's seconds-named result).
pub(crate) fn read_inferencex(o: &Map<String, Value>, at: &str, out: &mut Ingested) {
    let mut r = Record::default();
    let gpus = divisors(o);
    let mut seconds = false;
    let mut nested_skipped = Vec::new();
    for (k, v) in o {
        let here = place(at, k);
        let key = k.as_str();
        if let Some(m) = seconds_latency(key) {
            set_metric_json(&mut r, m, v, 1000.0, &here, out);
            seconds = true;
            continue;
        }
        match key {
            "hw" => {
                // A runner name (`cluster:h100-dgxc`, `mi355x-amds`): the GPU is its first
                // word; the name stays as `tag.hw`.
                match v.as_str().and_then(runner_gpu) {
                    Some(gpu) => {
                        set_dim_json(&mut r, Dim::Gpu, &Value::String(gpu.into()), &here, out);
                        set_tag(&mut r, "hw", v);
                    }
                    None => set_dim_json(&mut r, Dim::Gpu, v, &here, out),
                }
            }
            "conc" | "max_concurrency" => set_dim_json(&mut r, Dim::MaxConcurrency, v, &here, out),
            "model" | "model_id" => set_dim_json(&mut r, Dim::Model, v, &here, out),
            "framework" => set_dim_json(&mut r, Dim::Engine, v, &here, out),
            "precision" => set_dim_json(&mut r, Dim::Precision, v, &here, out),
            "isl" => set_dim_json(&mut r, Dim::InputLen, v, &here, out),
            "osl" => set_dim_json(&mut r, Dim::OutputLen, v, &here, out),
            "tp" => set_dim_json(&mut r, Dim::Tp, v, &here, out),
            "pp" => set_dim_json(&mut r, Dim::Pp, v, &here, out),
            "num_gpus" => set_dim_json(&mut r, Dim::GpuCount, v, &here, out),
            "num_prompts" => set_dim_json(&mut r, Dim::NumPrompts, v, &here, out),
            "request_rate" => set_dim_json(&mut r, Dim::RequestRate, v, &here, out),
            "burstiness" => set_dim_json(&mut r, Dim::Burstiness, v, &here, out),
            "date" => set_dim_json(&mut r, Dim::Date, v, &here, out),
            "duration" => set_metric_json(&mut r, MetricKey::DurationS, v, 1.0, &here, out),
            "num_requests_successful" => {
                set_metric_json(&mut r, MetricKey::Completed, v, 1.0, &here, out)
            }
            "request_goodput:" => {
                set_metric_json(&mut r, MetricKey::RequestGoodput, v, 1.0, &here, out)
            }
            "request_accounting" => {
                if let Some(failed) = v.get("records_error_dropped") {
                    set_metric_json(
                        &mut r,
                        MetricKey::Failed,
                        failed,
                        1.0,
                        &place(&here, "records_error_dropped"),
                        out,
                    );
                }
            }
            "request_metrics" => read_request_metrics(&mut r, v, &here, out),
            "tokenizer_id" => {}
            _ if measured(key) && !v.is_null() => {
                set_metric_json(&mut r, MetricKey::Extra(key.into()), v, 1.0, &here, out)
            }
            _ if boolean_text(v).is_some() && !v.is_number() => {
                if let Some(t) = boolean_text(v) {
                    r.tags.insert(key.to_string(), t);
                }
            }
            _ => match MetricKey::from_name(key) {
                Some(m) if v.is_number() || v.is_string() => {
                    set_metric_json(&mut r, m, v, 1.0, &here, out)
                }
                _ if v.is_object() || v.is_array() => nested_skipped.push(key.to_string()),
                _ => unknown(&mut r, key, v, &here, out),
            },
        }
    }
    if seconds {
        note(
            out,
            "latencies converted from s to ms (InferenceX names them without _ms)",
        );
    }
    if !nested_skipped.is_empty() {
        note(
            out,
            format!(
                "InferenceX sections not read: {}",
                nested_skipped.join(", ")
            ),
        );
    }
    if let Some(n) = gpus.total {
        infer_dim(&mut r, Dim::GpuCount, DimValue::Num(n), gpus.from);
    }
    // Each per-GPU figure keeps the GPUs it divides by beside it, and the whole-system
    // throughput it came from is recovered by multiplying back.
    for (name, n, whole) in [
        ("tput_per_gpu", gpus.total, MetricKey::TotalTokenThroughput),
        (
            "output_tput_per_gpu",
            gpus.output,
            MetricKey::OutputThroughput,
        ),
        ("input_tput_per_gpu", gpus.input, MetricKey::InputThroughput),
    ] {
        let Some(v) = r.metric(&MetricKey::Extra(name.into())) else {
            continue;
        };
        let Some(n) = n else { continue };
        r.tags.insert(format!("{name}_gpus"), format!("{n}"));
        if r.metric(&whole).is_none() {
            note(out, format!("{} = {name} × its GPU count", whole.name()));
            r.set_metric(whole, v * n);
        }
    }
    push(out, r);
}

/// The agentic `request_metrics`: `latency.{ttft,tpot,itl,e2el}.{mean,p50,...}` in seconds,
/// `latency.intvty`, token counts per request and the throughputs.
fn read_request_metrics(r: &mut Record, v: &Value, at: &str, out: &mut Ingested) {
    let Some(m) = v.as_object() else { return };
    if let Some(lat) = m.get("latency").and_then(Value::as_object) {
        for (family, stats) in lat {
            let Some(stats) = stats.as_object() else {
                continue;
            };
            let fam = match family.as_str() {
                "ttft" => Some(LatencyMetric::Ttft),
                "tpot" => Some(LatencyMetric::Tpot),
                "itl" => Some(LatencyMetric::Itl),
                "e2el" => Some(LatencyMetric::E2el),
                _ => None,
            };
            for (s, x) in stats {
                let here = place(at, &format!("latency.{family}.{s}"));
                match (fam, stat_name(s)) {
                    (Some(f), Some(stat)) => {
                        set_metric_json(r, MetricKey::Latency(f, stat), x, 1000.0, &here, out)
                    }
                    (None, Some(stat)) => {
                        let prefix = match stat {
                            Stat::Mean => "mean".to_string(),
                            Stat::Median => "median".to_string(),
                            Stat::Std => "std".to_string(),
                            Stat::P(_) => s.to_string(),
                        };
                        set_metric_json(
                            r,
                            MetricKey::Extra(format!("{prefix}_{family}")),
                            x,
                            1.0,
                            &here,
                            out,
                        )
                    }
                    _ => {}
                }
            }
        }
        note(
            out,
            "latencies converted from s to ms (InferenceX request_metrics)",
        );
    }
    let get = |path: &[&str]| {
        let mut cur = v;
        for p in path {
            cur = cur.get(p)?;
        }
        Some(cur)
    };
    if let Some(x) = get(&["tokens", "input", "mean"]) {
        set_dim_json(r, Dim::InputLen, x, &place(at, "tokens.input.mean"), out);
    }
    if let Some(x) = get(&["tokens", "output_actual", "mean"]) {
        set_dim_json(
            r,
            Dim::OutputLen,
            x,
            &place(at, "tokens.output_actual.mean"),
            out,
        );
    }
    for (path, key) in [
        (
            &["throughput", "input", "tokens_per_second"][..],
            MetricKey::InputThroughput,
        ),
        (
            &["throughput", "output", "tokens_per_second"][..],
            MetricKey::OutputThroughput,
        ),
        (
            &["throughput", "total", "tokens_per_second"][..],
            MetricKey::TotalTokenThroughput,
        ),
        (
            &["throughput", "duration_seconds"][..],
            MetricKey::DurationS,
        ),
        (
            &["throughput", "per_gpu", "total_tput_tps"][..],
            MetricKey::Extra("tput_per_gpu".into()),
        ),
        (
            &["throughput", "per_gpu", "output_tput_tps"][..],
            MetricKey::Extra("output_tput_per_gpu".into()),
        ),
        (
            &["throughput", "per_gpu", "input_tput_tps"][..],
            MetricKey::Extra("input_tput_per_gpu".into()),
        ),
        (&["qps", "mean"][..], MetricKey::RequestThroughput),
    ] {
        if let Some(x) = get(path) {
            set_metric_json(r, key, x, 1.0, &place(at, &path.join(".")), out);
        }
    }
    if let Some(x) = get(&["cache", "theoretical_cache_hit_rate"]) {
        set_tag(r, "theoretical_cache_hit_rate", x);
    }
}

#[cfg(test)]
mod tests {
    use crate::ingest::{read, Format};
    use crate::model::{MetricKey, Record};

    fn one(name: &str, json: &str) -> (Record, Vec<String>) {
        let got = read(name, json.as_bytes()).unwrap();
        assert_eq!(got.format, Format::InferenceX, "{:?}", got.warnings);
        assert_eq!(got.records.len(), 1);
        let w = got.warnings.iter().map(ToString::to_string).collect();
        (got.records.into_iter().next().unwrap(), w)
    }

    fn m(r: &Record, name: &str) -> f64 {
        r.metric(&MetricKey::from_name(name).unwrap())
            .unwrap_or_else(|| panic!("{name} missing"))
    }

    /// An `agg_*.json` as `utils/process_result.py` writes it for one node: latencies in
    /// seconds under names without `_ms`, interactivity, per-GPU throughput over tp × pp ×
    /// pcp_size GPUs, `"false"` as a string.
    #[test]
    fn single_node_aggregate_units_and_gpu_counts() {
        let (r, w) = one(
            "agg_dsr1_1k1k_fp8_sglang_tp8_conc64_mi300x.json",
            r#"{"hw": "mi300x", "conc": 64, "image": "img", "model": "deepseek-ai/DeepSeek-R1",
            "infmax_model_prefix": "dsr1", "framework": "sglang", "precision": "fp8",
            "spec_decoding": "none", "disagg": false, "isl": 1024, "osl": 1024,
            "is_multinode": false, "tp": 4, "pp": 2, "dcp_size": 1, "pcp_size": 1, "ep": 1,
            "dp_attention": "false", "tput_per_gpu": 1500.0, "output_tput_per_gpu": 750.0,
            "input_tput_per_gpu": 750.0, "mean_ttft": 0.25, "p99.9_ttft": 1.5,
            "median_tpot": 0.02, "median_intvty": 50.0, "avg_power_w": 612.5,
            "joules_per_output_token": 0.8}"#,
        );
        assert_eq!(r.gpu.as_deref(), Some("mi300x"));
        assert_eq!(r.engine.as_deref(), Some("sglang"));
        assert_eq!((r.tp, r.pp, r.gpu_count), (Some(4), Some(2), Some(8)));
        assert!(r.is_inferred("gpu_count"));
        assert_eq!(r.max_concurrency, Some(64));
        assert_eq!(r.input_len, Some(1024.0));
        assert!((m(&r, "mean_ttft_ms") - 250.0).abs() < 1e-9);
        assert!((m(&r, "p99.9_ttft_ms") - 1500.0).abs() < 1e-9);
        assert!((m(&r, "median_tpot_ms") - 20.0).abs() < 1e-9);
        assert_eq!(m(&r, "extra.median_intvty"), 50.0);
        assert_eq!(m(&r, "extra.tput_per_gpu"), 1500.0);
        assert_eq!(
            r.tags.get("tput_per_gpu_gpus").map(String::as_str),
            Some("8")
        );
        assert_eq!(m(&r, "total_token_throughput"), 12000.0);
        assert_eq!(m(&r, "output_throughput"), 6000.0);
        assert_eq!(m(&r, "extra.avg_power_w"), 612.5);
        assert_eq!(m(&r, "extra.joules_per_output_token"), 0.8);
        assert_eq!(
            r.tags.get("dp_attention").map(String::as_str),
            Some("false")
        );
        assert_eq!(r.tags.get("disagg").map(String::as_str), Some("false"));
        assert!(w.iter().any(|w| w.contains("s to ms")), "{w:?}");
    }

    /// A multinode aggregate: output throughput is per decode GPU, input per prefill GPU.
    #[test]
    fn multinode_per_gpu_figures_keep_their_own_divisors() {
        let (r, _) = one(
            "agg.json",
            r#"{"hw": "gb200", "conc": 512, "infmax_model_prefix": "dsr1", "is_multinode": "true",
            "num_prefill_gpu": 20, "num_decode_gpu": 8, "tput_per_gpu": 100.0,
            "output_tput_per_gpu": 50.0, "input_tput_per_gpu": 30.0, "median_e2el": 12.0}"#,
        );
        assert_eq!(r.gpu_count, Some(28));
        assert_eq!(
            r.tags.get("output_tput_per_gpu_gpus").map(String::as_str),
            Some("8")
        );
        assert_eq!(
            r.tags.get("input_tput_per_gpu_gpus").map(String::as_str),
            Some("20")
        );
        assert_eq!(m(&r, "total_token_throughput"), 2800.0);
        assert_eq!(m(&r, "output_throughput"), 400.0);
        assert_eq!(m(&r, "input_throughput"), 600.0);
        assert_eq!(m(&r, "median_e2el_ms"), 12000.0);
    }

    /// The agentic aggregate (`process_agentic_result.py`): nested `request_metrics` in
    /// seconds, the request accounting, measured power.
    #[test]
    fn agentic_aggregate_nested_latencies_and_power() {
        let (r, w) = one(
            "agg_agentic.json",
            r#"{"hw": "cluster:h100-dgxc", "conc": 4, "model": "m", "framework": "sglang", "precision": "fp4",
            "scenario_type": "agentic-coding", "num_gpus": 8, "tp": 8,
            "num_requests_total": 156, "num_requests_successful": 112,
            "request_accounting": {"records_total": 156, "records_error_dropped": 3},
            "request_metrics": {
              "qps": {"mean": 0.034},
              "latency": {"ttft": {"mean": 102.0, "p50": 1.1},
                          "tpot": {"p90": 0.016},
                          "intvty": {"p50": 113.25}},
              "tokens": {"input": {"mean": 94525.9}, "output_actual": {"mean": 767.2}},
              "throughput": {"output": {"tokens_per_second": 26.1},
                             "duration_seconds": 3291.8,
                             "per_gpu": {"total_tput_tps": 405.3}}},
            "server_metrics": {"present": true},
            "avg_power_w": 295.666, "total_gpu_energy_j": 8609784.9}"#,
        );
        assert_eq!(r.gpu_count, Some(8));
        assert!(!r.is_inferred("gpu_count"));
        assert_eq!(r.gpu.as_deref(), Some("h100"));
        assert_eq!(
            r.tags.get("hw").map(String::as_str),
            Some("cluster:h100-dgxc")
        );
        let p50 = r
            .metric(&MetricKey::from_name("p50_ttft_ms").unwrap())
            .unwrap();
        assert!((p50 - 1100.0).abs() < 1e-6);
        assert!((m(&r, "mean_ttft_ms") - 102_000.0).abs() < 1e-6);
        assert!((m(&r, "p90_tpot_ms") - 16.0).abs() < 1e-9);
        assert_eq!(m(&r, "extra.p50_intvty"), 113.25);
        assert_eq!(m(&r, "completed"), 112.0);
        assert_eq!(m(&r, "failed"), 3.0);
        assert_eq!(r.input_len, Some(94525.9));
        assert_eq!(m(&r, "output_throughput"), 26.1);
        assert_eq!(m(&r, "duration_s"), 3291.8);
        assert_eq!(m(&r, "extra.tput_per_gpu"), 405.3);
        assert_eq!(m(&r, "total_token_throughput"), 405.3 * 8.0);
        assert_eq!(m(&r, "extra.total_gpu_energy_j"), 8609784.9);
        assert!(w.iter().any(|w| w.contains("server_metrics")), "{w:?}");
    }

    /// InferenceX's raw client file is vLLM's serving JSON (with its `"request_goodput:"`
    /// typo): read by the serving reader, with the GPU, parallelism and precision from the
    /// name InferenceX gives it.
    #[test]
    fn raw_client_file_takes_gpu_parallelism_and_precision_from_its_name() {
        let got = read(
            "dsr1_1k1k_fp4_sglang_tp4_ep1_dpa_false_conc128_b200.json",
            br#"{"backend": "vllm", "model_id": "nvidia/DeepSeek-R1-0528-FP4", "max_concurrency": 128,
            "completed": 1280, "request_throughput": 10.5, "request_goodput:": null,
            "output_throughput": 9000.0, "mean_ttft_ms": 812.5}"#,
        )
        .unwrap();
        assert_eq!(got.format, Format::VllmServing);
        let r = &got.records[0];
        assert_eq!(r.gpu.as_deref(), Some("b200"));
        assert_eq!(r.tp, Some(4));
        assert_eq!(r.precision.as_deref(), Some("fp4"));
        assert_eq!((r.input_len, r.output_len), (Some(1024.0), Some(1024.0)));
        assert!(r.is_inferred("gpu") && r.is_inferred("tp") && r.is_inferred("precision"));
        assert_eq!(m(r, "mean_ttft_ms"), 812.5);
        assert_eq!(r.max_concurrency, Some(128));
    }
}
