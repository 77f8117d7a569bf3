//! llmperf `*_summary.json`: flat keys, latencies in seconds.

use serde_json::{Map, Value};

use super::{push, unknown};
use crate::ingest::fields::{place, set_dim_json, set_metric_json, stat_name};
use crate::ingest::{Ingested, Warning};
use crate::model::canonical::number_from_json;
use crate::model::{Dim, LatencyMetric, MetricKey, Record};

/// llmperf `*_summary.json`: flat, seconds.
pub(crate) fn read_llmperf(o: &Map<String, Value>, at: &str, out: &mut Ingested) {
    let mut r = Record::default();
    crate::ingest::fields::note(out, "llmperf latencies (*_s) converted from s to ms");
    for (k, v) in o {
        let here = place(at, k);
        match k.as_str() {
            "model" => set_dim_json(&mut r, Dim::Model, v, &here, out),
            // The LLMPerf leaderboard's summaries name the provider or engine measured here.
            "framework" => set_dim_json(&mut r, Dim::Engine, v, &here, out),
            // When the run ended (Unix seconds): it differs from run to run, so as a tag it
            // would make each repeat a configuration of its own.
            "timestamp" if number_from_json(v).is_some() => out.warnings.push(Warning::at(
                here,
                "a clock reading of the run, not a setting: ignored",
            )),
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
            "results_completed_requests_per_min" | "results_num_completed_requests_per_min" => {
                set_metric_json(
                    &mut r,
                    MetricKey::RequestThroughput,
                    v,
                    1.0 / 60.0,
                    &here,
                    out,
                )
            }
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
