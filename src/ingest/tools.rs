//! Readers for the other tools' JSON and CSV: vLLM latency/throughput, genai-perf/AIPerf,
//! llmperf, guidellm, HF inference-benchmarker and trtllm-bench.

use serde_json::{Map, Value};

use super::Ingested;

/// `vllm bench latency --output-json`.
pub(crate) fn read_vllm_latency(_o: &Map<String, Value>, _at: &str, _out: &mut Ingested) {}
/// `vllm bench throughput --output-json`.
pub(crate) fn read_vllm_throughput(_o: &Map<String, Value>, _at: &str, _out: &mut Ingested) {}
/// genai-perf / AIPerf JSON.
pub(crate) fn read_genai_perf(_o: &Map<String, Value>, _at: &str, _out: &mut Ingested) {}
/// llmperf summary JSON.
pub(crate) fn read_llmperf(_o: &Map<String, Value>, _at: &str, _out: &mut Ingested) {}
/// guidellm benchmarks.json.
pub(crate) fn read_guidellm(_o: &Map<String, Value>, _at: &str, _out: &mut Ingested) {}
/// HF inference-benchmarker JSON.
pub(crate) fn read_hf(_o: &Map<String, Value>, _at: &str, _out: &mut Ingested) {}
/// trtllm-bench report JSON.
pub(crate) fn read_trtllm(_o: &Map<String, Value>, _at: &str, _out: &mut Ingested) {}
/// genai-perf / AIPerf two-block CSV.
pub(crate) fn read_genai_csv(_text: &str, _out: &mut Ingested) {}
