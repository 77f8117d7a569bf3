//! Readers for the other tools' JSON and CSV: vLLM latency/throughput, genai-perf/AIPerf
//! (JSON and the two-block CSV), llmperf, guidellm, HF inference-benchmarker and trtllm-bench.
//!
//! Each maps its tool's names onto canonical ones and converts units: vLLM latency and
//! llmperf report seconds, genai-perf/AIPerf carry a `unit` per metric, guidellm's
//! `inter_token_latency_ms` is vLLM's TPOT (its `time_per_output_token_ms` includes the
//! first token and stays `extra.*`).
//!
//! One file per tool: [`vllm`], [`genai_perf`], [`llmperf`], [`guidellm`],
//! [`inference_benchmarker`] and [`trtllm`]; the helpers they share are here. Per-request
//! exports: AIPerf's `profile_export.jsonl` ([`aiperf_records`]), genai-perf's raw
//! `profile_export.json` ([`genai_perf_raw`]) and guidellm's request samples
//! ([`guidellm_samples`]), with what they share in [`per_request`].

use serde_json::Value;

use super::fields::{scalar_text, set_tag};
use serde_json::Map;

use super::{Format, Ingested, Warning};
use crate::model::Record;

mod aiperf_records;
mod genai_perf;
mod genai_perf_raw;
mod guidellm;
mod guidellm_console;
mod guidellm_samples;
mod inference_benchmarker;
mod inferencex;
mod llmperf;
mod llmperf_requests;
mod per_request;
mod trtllm;
mod vllm;

pub(crate) use aiperf_records::read_aiperf_records;
pub(crate) use genai_perf_raw::read_genai_perf_raw;

pub(crate) use genai_perf::{read_genai_csv, read_genai_perf};
pub(crate) use guidellm::read_guidellm;
pub(crate) use guidellm_console::{detect_text as detect_guidellm_console, read_guidellm_console};
pub(crate) use inference_benchmarker::read_hf;
pub(crate) use inferencex::{looks_like as looks_like_inferencex, read_inferencex};
pub(crate) use llmperf::read_llmperf;
pub(crate) use llmperf_requests::read_llmperf_requests;
pub(crate) use trtllm::{
    detect_text as detect_trtllm_text, read_text as read_trtllm_text, read_trtllm,
};
pub(crate) use vllm::{read_vllm_latency, read_vllm_throughput};

/// The per-request export an object belongs to, with the evidence: a line of AIPerf's
/// `profile_export.jsonl` or genai-perf's raw `profile_export.json`. Asked after every other
/// JSON format, so it never takes a file another reader claims.
pub(crate) fn classify_per_request(o: &Map<String, Value>) -> Option<(Format, &'static str)> {
    if aiperf_records::looks_like(o) {
        Some((
            Format::AiperfRecords,
            "per-request \"metadata\" and \"metrics\" objects",
        ))
    } else if llmperf_requests::looks_like(o) {
        Some((
            Format::LlmperfRequests,
            "llmperf per-request \"ttft_s\" and \"end_to_end_latency_s\"",
        ))
    } else if genai_perf_raw::looks_like(o) {
        Some((
            Format::GenaiPerfRaw,
            "\"experiments\" with per-request \"response_timestamps\"",
        ))
    } else {
        None
    }
}

fn push(out: &mut Ingested, r: Record) {
    out.records.push(r);
}

fn unknown(r: &mut Record, k: &str, v: &Value, here: &str, out: &mut Ingested) {
    if scalar_text(v).is_some() {
        set_tag(r, k, v);
    } else if !v.is_null() {
        out.warnings
            .push(Warning::at(here, "unknown field, ignored"));
    }
}
