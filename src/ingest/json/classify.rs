//! Which format a parsed JSON document is, from its keys alone ([`classify`]): the first
//! documents of a file decide, each by the first reader whose keys it has.

use serde_json::{Map, Value};

use super::Docs;
use crate::ingest::{tools, Format};
use crate::model::canonical;

fn has_any(o: &Map<String, Value>, keys: &[&str]) -> bool {
    keys.iter().any(|k| o.contains_key(*k))
}

fn is_column_dict(v: &Value) -> bool {
    v.as_object()
        .is_some_and(|o| !o.is_empty() && o.values().all(Value::is_object))
}

fn classify_object(v: &Value, o: &Map<String, Value>) -> Option<(Format, &'static str)> {
    if o.contains_key("avg_ts") && has_any(o, &["n_prompt", "n_gen"]) {
        return Some((
            Format::LlamaBench,
            "llama-bench's \"avg_ts\" and \"n_prompt\"",
        ));
    }
    if canonical::looks_canonical(v) {
        return Some((
            Format::CanonicalJson,
            "benchlens \"schema_version\" and \"records\"",
        ));
    }
    let suite = ["latency", "throughput", "serving"];
    if has_any(o, &suite)
        && o.iter()
            .filter(|(k, _)| suite.contains(&k.as_str()))
            .all(|(_, v)| is_column_dict(v))
    {
        return Some((
            Format::VllmPerfSuite,
            "performance-suite column dicts \"latency\"/\"throughput\"/\"serving\"",
        ));
    }
    if o.get("benchmarks").is_some_and(Value::is_array) {
        return Some((Format::Guidellm, "a \"benchmarks\" array"));
    }
    if o.get("results").is_some_and(Value::is_array) && o.contains_key("config") {
        return Some((Format::HfBenchmarker, "\"config\" and a \"results\" array"));
    }
    if o.contains_key("performance") && has_any(o, &["engine", "world_info", "request_info"]) {
        return Some((
            Format::Trtllm,
            "\"engine\", \"world_info\" and \"performance\"",
        ));
    }
    if let Some(why) = tools::looks_like_inferencex(o) {
        return Some((Format::InferenceX, why));
    }
    let metric_objects = o
        .values()
        .filter(|v| v.get("unit").is_some() && v.get("avg").is_some())
        .count();
    if o.contains_key("input_config") || metric_objects >= 2 {
        return Some((
            Format::GenaiPerf,
            "metrics as {unit, avg, p50, ...} objects",
        ));
    }
    if o.keys().any(|k| k.starts_with("results_")) {
        return Some((Format::Llmperf, "flat \"results_*\" keys"));
    }
    if o.contains_key("avg_latency") && has_any(o, &["latencies", "percentiles"]) {
        return Some((
            Format::VllmLatency,
            "\"avg_latency\", \"latencies\", \"percentiles\"",
        ));
    }
    if o.contains_key("requests_per_second") && has_any(o, &["elapsed_time", "tokens_per_second"]) {
        return Some((
            Format::VllmThroughput,
            "\"requests_per_second\" and \"elapsed_time\"",
        ));
    }
    let sglang_keys = o.keys().any(|k| k.ends_with("_e2e_latency_ms"))
        || has_any(
            o,
            &[
                "random_input_len",
                "total_output_tokens_retokenized",
                "accept_length",
                "sharegpt_output_len",
            ],
        )
        || o.get("backend").and_then(Value::as_str) == Some("sglang")
            && !o.contains_key("model_id");
    if sglang_keys {
        return Some((
            Format::SglangServing,
            "SGLang keys (\"*_e2e_latency_ms\", \"random_input_len\")",
        ));
    }
    let serving_keys = [
        "request_throughput",
        "mean_ttft_ms",
        "median_ttft_ms",
        "model_id",
        "output_throughput",
        "ttfts",
    ];
    if has_any(o, &serving_keys) {
        return Some((
            Format::VllmServing,
            "vLLM serving keys (\"request_throughput\", \"mean_ttft_ms\", ...)",
        ));
    }
    tools::classify_per_request(o)
}

fn canonical_record_keys(o: &Map<String, Value>) -> bool {
    use crate::model::{DimKey, MetricKey};
    !o.is_empty()
        && o.keys().all(|k| {
            k == "inferred"
                || k == "requests"
                || DimKey::from_name(k).is_some()
                || MetricKey::from_name(k).is_some()
        })
        && o.keys().any(|k| MetricKey::from_name(k).is_some())
        && (o.contains_key("source") || o.contains_key("format") || o.contains_key("inferred"))
}

/// What format the parsed documents are, and the evidence.
pub(crate) fn classify(docs: &Docs) -> Option<(Format, String)> {
    classify_values(&docs.values)
}

/// [`classify`] of the documents `values` (with their lines): the first eight decide.
pub(crate) fn classify_values(values: &[(usize, Value)]) -> Option<(Format, String)> {
    for (_, v) in values.iter().take(8) {
        let found = match v {
            Value::Object(o) => classify_object(v, o),
            Value::Array(items) => items.iter().take(8).find_map(|item| {
                let o = item.as_object()?;
                if o.contains_key("Test name") {
                    Some((
                        Format::VllmPerfSuite,
                        "performance-suite records with \"Test name\"",
                    ))
                } else if canonical_record_keys(o) {
                    Some((Format::CanonicalJson, "a list of benchlens records"))
                } else {
                    classify_object(item, o)
                }
            }),
            _ => None,
        };
        if let Some((f, why)) = found {
            return Some((f, why.to_string()));
        }
    }
    None
}
