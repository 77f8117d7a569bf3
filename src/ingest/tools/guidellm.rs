//! guidellm `benchmarks.json`: one record per benchmark, latency distributions per metric
//! (guidellm's `inter_token_latency_ms` is vLLM's TPOT), and the benchmark's request samples
//! as its requests ([`super::guidellm_samples`]).

use serde_json::{Map, Value};

use super::push;
use crate::ingest::fields::{place, set_dim_json, set_metric_json, stat_name};
use crate::ingest::text::snake;
use crate::ingest::{Ingested, Warning};
use crate::model::{Dim, LatencyMetric, MetricKey, Record, Stat};

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
    crate::ingest::fields::note(
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
        // guidellm ≥ 0.4 keeps the totals under `metrics`.
        if let Some(t) = b
            .pointer("/request_totals")
            .or_else(|| b.pointer("/metrics/request_totals"))
        {
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
        super::guidellm_samples::read_samples(b, &here, &mut r, out);
        push(out, r);
    }
}
