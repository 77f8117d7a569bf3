//! Readers for the other tools' JSON and CSV: vLLM latency/throughput, genai-perf/AIPerf
//! (JSON and the two-block CSV), llmperf, guidellm, HF inference-benchmarker and trtllm-bench.
//!
//! Each maps its tool's names onto canonical ones and converts units: vLLM latency and
//! llmperf report seconds, genai-perf/AIPerf carry a `unit` per metric, guidellm's
//! `inter_token_latency_ms` is vLLM's TPOT (its `time_per_output_token_ms` includes the
//! first token and stays `extra.*`).
//!
//! One file per tool: [`vllm`], [`genai_perf`], [`llmperf`], [`guidellm`],
//! [`inference_benchmarker`] and [`trtllm`]; the helpers they share are here.

use serde_json::Value;

use super::fields::{scalar_text, set_tag};
use super::{Ingested, Warning};
use crate::model::Record;

mod genai_perf;
mod guidellm;
mod inference_benchmarker;
mod llmperf;
mod trtllm;
mod vllm;

pub(crate) use genai_perf::{read_genai_csv, read_genai_perf};
pub(crate) use guidellm::read_guidellm;
pub(crate) use inference_benchmarker::read_hf;
pub(crate) use llmperf::read_llmperf;
pub(crate) use trtllm::read_trtllm;
pub(crate) use vllm::{read_vllm_latency, read_vllm_throughput};

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
