//! The other tools' formats: vLLM latency/throughput, SGLang, genai-perf/AIPerf, llmperf,
//! guidellm, HF inference-benchmarker, trtllm-bench.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod common;

use benchlens::ingest::Format;
use common::{close, metric, read_fixture};

#[test]
fn vllm_latency_json_in_seconds_becomes_ms() {
    let got = read_fixture("vllm/latency.json");
    assert_eq!(got.format, Format::VllmLatency);
    let r = &got.records[0];
    close(metric(r, "mean_e2el_ms"), 1234.5);
    close(metric(r, "p99_e2el_ms"), 1253.4);
    close(metric(r, "p10_e2el_ms"), 1205.0);
    assert_eq!(r.requests.len(), 3);
    close(r.requests[1].e2el_ms, 1250.0);
    assert_eq!(r.engine.as_deref(), Some("vllm"));
}

#[test]
fn vllm_throughput_json() {
    let got = read_fixture("vllm/throughput.json");
    assert_eq!(got.format, Format::VllmThroughput);
    let r = &got.records[0];
    close(metric(r, "request_throughput"), 38.76);
    close(metric(r, "total_token_throughput"), 17756.7);
    close(metric(r, "duration_s"), 25.8);
    assert_eq!(r.num_prompts, Some(1000));
}

#[test]
fn sglang_json_lines_with_bare_infinity_and_old_subsets() {
    let got = read_fixture("sglang/bench_serving.jsonl");
    assert_eq!(got.format, Format::SglangServing);
    assert_eq!(got.records.len(), 3, "{:?}", got.warnings);
    let r = &got.records[0];
    assert_eq!(r.engine.as_deref(), Some("sglang"));
    assert_eq!(r.request_rate, Some(f64::INFINITY));
    assert_eq!(r.max_concurrency, Some(64));
    assert_eq!(r.dataset.as_deref(), Some("random"));
    assert_eq!(r.input_len, Some(1024.0));
    assert!(!r.is_inferred("input_len"));
    assert_eq!(r.output_len, Some(512.0));
    close(metric(r, "mean_e2el_ms"), 7612.3);
    close(metric(r, "p99_e2el_ms"), 8010.9);
    close(metric(r, "p95_ttft_ms"), 450.2);
    close(metric(r, "input_throughput"), 8516.3);
    close(metric(r, "total_token_throughput"), 12774.4);
    close(metric(r, "extra.concurrency"), 63.4);
    assert!(metric(r, "extra.accept_length").unwrap().is_nan());
    let old = &got.records[1];
    close(metric(old, "median_ttft_ms"), 120.5);
    close(metric(old, "median_itl_ms"), 13.9);
    assert_eq!(old.model, None);
    assert_eq!(got.records[2].output_len, Some(256.0));
}

#[test]
fn genai_perf_json_with_units_and_input_config() {
    let got = read_fixture("tools/profile_export_genai_perf.json");
    assert_eq!(got.format, Format::GenaiPerf);
    let r = &got.records[0];
    assert_eq!(r.model.as_deref(), Some("meta-llama/Llama-3.1-8B-Instruct"));
    assert_eq!(r.max_concurrency, Some(16));
    assert_eq!(r.input_len, Some(550.0));
    assert_eq!(r.output_len, Some(126.4), "measured beats configured");
    close(metric(r, "mean_ttft_ms"), 45.6);
    close(metric(r, "p99_ttft_ms"), 80.3);
    close(metric(r, "std_ttft_ms"), 9.8);
    close(metric(r, "p50_itl_ms"), 7.3);
    close(metric(r, "mean_e2el_ms"), 1530.2);
    close(metric(r, "request_throughput"), 12.5);
    close(metric(r, "output_throughput"), 1580.3);
    close(metric(r, "completed"), 750.0);
    // A duration without a canonical name keeps its unit in its name.
    close(metric(r, "extra.time_to_second_token_ms"), 12.1);
}

#[test]
fn aiperf_json_converts_ns_and_s_and_reads_nested_config() {
    let got = read_fixture("tools/profile_export_aiperf.json");
    assert_eq!(got.format, Format::GenaiPerf);
    let r = &got.records[0];
    close(metric(r, "mean_ttft_ms"), 52.0);
    close(metric(r, "p99_ttft_ms"), 91.0);
    close(metric(r, "mean_e2el_ms"), 1750.0);
    assert_eq!(r.model.as_deref(), Some("Qwen/Qwen3-8B"));
    assert_eq!(r.max_concurrency, Some(32));
}

#[test]
fn genai_perf_two_block_csv() {
    let got = read_fixture("tools/profile_export_genai_perf.csv");
    assert_eq!(got.format, Format::GenaiPerfCsv);
    assert_eq!(got.records.len(), 1);
    let r = &got.records[0];
    close(metric(r, "mean_ttft_ms"), 45.6);
    close(metric(r, "p25_ttft_ms"), 40.0);
    close(metric(r, "mean_e2el_ms"), 1530.2);
    close(metric(r, "p99_e2el_ms"), 2010.4);
    close(metric(r, "output_throughput"), 1580.3);
    close(metric(r, "request_throughput"), 12.5);
    close(metric(r, "completed"), 750.0);
    assert_eq!(r.input_len, Some(550.0));
}

#[test]
fn llmperf_summary_in_seconds() {
    let got = read_fixture("tools/meta-llama-Llama-2-7b-chat-hf_550_150_summary.json");
    assert_eq!(got.format, Format::Llmperf);
    let r = &got.records[0];
    assert_eq!(r.model.as_deref(), Some("meta-llama/Llama-2-7b-chat-hf"));
    assert_eq!(r.max_concurrency, Some(10));
    assert_eq!(r.input_len, Some(550.0));
    assert!(!r.is_inferred("input_len"));
    close(metric(r, "mean_ttft_ms"), 432.1);
    close(metric(r, "p90_ttft_ms"), 620.0);
    close(metric(r, "p50_itl_ms"), 23.5);
    close(metric(r, "std_itl_ms"), 4.0);
    close(metric(r, "p99_e2el_ms"), 6200.0);
    close(metric(r, "output_throughput"), 362.5);
    close(metric(r, "completed"), 100.0);
    close(metric(r, "extra.itl_min_ms"), 15.0);
}

#[test]
fn guidellm_benchmarks_with_itl_as_tpot() {
    let got = read_fixture("tools/benchmarks.json");
    assert_eq!(got.format, Format::Guidellm);
    assert_eq!(got.records.len(), 2);
    let sync = &got.records[0];
    assert_eq!(sync.model.as_deref(), Some("Qwen/Qwen2.5-7B-Instruct"));
    assert_eq!(sync.max_concurrency, Some(1));
    assert_eq!(
        sync.tags.get("strategy").map(String::as_str),
        Some("synchronous")
    );
    close(metric(sync, "mean_e2el_ms"), 512.0);
    close(metric(sync, "p99_e2el_ms"), 580.0);
    close(metric(sync, "mean_ttft_ms"), 25.3);
    close(metric(sync, "mean_tpot_ms"), 3.9);
    close(metric(sync, "p99_tpot_ms"), 4.6);
    assert_eq!(metric(sync, "mean_itl_ms"), None);
    close(metric(sync, "request_throughput"), 1.95);
    close(metric(sync, "output_throughput"), 250.4);
    close(metric(sync, "total_token_throughput"), 760.9);
    close(metric(sync, "completed"), 120.0);
    close(metric(sync, "extra.time_per_output_token_ms"), 4.1);
    assert_eq!(sync.input_len, Some(256.0));
    assert_eq!(got.records[1].request_rate, Some(5.0));
    close(metric(&got.records[1], "p99_ttft_ms"), 45.5);
}

#[test]
fn hf_inference_benchmarker_results() {
    let got = read_fixture("tools/hf_inference_benchmarker.json");
    assert_eq!(got.format, Format::HfBenchmarker);
    assert_eq!(got.records.len(), 2);
    let r = &got.records[1];
    assert_eq!(r.model.as_deref(), Some("meta-llama/Llama-3.1-8B-Instruct"));
    assert_eq!(r.label.as_deref(), Some("constant@5.00req/s"));
    assert_eq!(r.request_rate, Some(5.0));
    assert_eq!(r.max_concurrency, Some(800));
    close(metric(r, "request_throughput"), 4.98);
    close(metric(r, "output_throughput"), 512.3);
    close(metric(r, "mean_ttft_ms"), 60.2);
    close(metric(r, "p99_ttft_ms"), 120.7);
    close(metric(r, "p50_itl_ms"), 10.1);
    close(metric(r, "p99_e2el_ms"), 1500.0);
    close(metric(r, "failed"), 2.0);
    assert_eq!(got.records[0].request_rate, None);
}

#[test]
fn trtllm_bench_report() {
    let got = read_fixture("tools/trtllm_report.json");
    assert_eq!(got.format, Format::Trtllm);
    let r = &got.records[0];
    assert_eq!(r.engine.as_deref(), Some("trtllm"));
    assert_eq!(r.model.as_deref(), Some("meta-llama/Llama-3.1-8B"));
    assert_eq!(r.precision.as_deref(), Some("bfloat16"));
    assert_eq!(r.tp, Some(2));
    assert_eq!(r.pp, Some(1));
    assert_eq!(r.num_prompts, Some(3000));
    assert_eq!(r.input_len, Some(128.0));
    assert_eq!(r.tags.get("quantization").map(String::as_str), Some("FP8"));
    close(metric(r, "request_throughput"), 119.4);
    close(metric(r, "output_throughput"), 15286.1);
    close(metric(r, "total_token_throughput"), 30572.2);
    close(metric(r, "mean_e2el_ms"), 14000.2);
    close(metric(r, "mean_ttft_ms"), 8010.5);
    close(metric(r, "p99_ttft_ms"), 14500.9);
    close(metric(r, "p99_tpot_ms"), 60.2);
    close(metric(r, "duration_s"), 25.1234);
}

#[test]
fn conversions_and_inferences_are_reported_as_warnings() {
    let w = |path: &str| -> Vec<String> {
        read_fixture(path)
            .warnings
            .iter()
            .map(|w| w.to_string())
            .collect()
    };
    assert!(w("tools/profile_export_aiperf.json")
        .contains(&"time_to_first_token: converted from ns to ms".to_string()));
    assert!(w("vllm/latency.json")
        .iter()
        .any(|m| m.contains("converted from s to ms")));
    assert!(w("tables/tgi_benchmark.md")
        .iter()
        .any(|m| m.contains("Decode (total) latencies in s converted to ms")));
    assert!(w("tables/tidy.csv")
        .iter()
        .any(|m| m.contains("\"tpot_s\" → mean_tpot_ms: values multiplied by 1000")));
    assert!(w("seeds/001_b815cef7710eda19.txt").contains(
        &"input_len inferred from total_input_tokens / completed (12 records)".to_string()
    ));
}

/// guidellm writes its YAML report (`--outputs yaml`, `benchmarks.yaml`, `benchmarks:` on
/// its first line) by dumping the same report its JSON holds: both layouts here (the 0.5
/// report with request samples, the older `benchmarks.json`) read as YAML give the records
/// the JSON gives, value for value.
#[test]
fn guidellm_yaml_reports_read_as_their_json() {
    for path in [
        "tools/benchmarks.json",
        "tools/guidellm_samples_benchmarks.json",
    ] {
        let json_bytes = common::fixture(path);
        let value: serde_json::Value = serde_json::from_slice(&json_bytes).unwrap();
        let yaml = serde_yaml_ng::to_string(&value).unwrap();
        let from_json = benchlens::ingest::read("benchmarks.json", &json_bytes).unwrap();
        let from_yaml = benchlens::ingest::read("benchmarks.yaml", yaml.as_bytes())
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        assert_eq!(from_yaml.format, Format::Guidellm, "{path}");
        assert_eq!(from_yaml.records.len(), from_json.records.len(), "{path}");
        assert!(!from_yaml.records.is_empty());
        for (y, j) in from_yaml.records.iter().zip(&from_json.records) {
            let mut y = y.clone();
            y.source = j.source.clone();
            assert_eq!(&y, j, "{path}");
        }
        let detected = benchlens::ingest::detect("benchmarks.yaml", yaml.as_bytes());
        assert!(detected.reason.ends_with("in YAML"), "{}", detected.reason);
        // PyYAML's dump (sequences at their key's indent, long strings wrapped).
        let pyyaml = common::fixture(&path.replace(".json", ".yaml"));
        let from_pyyaml = benchlens::ingest::read("benchmarks.yaml", &pyyaml)
            .unwrap_or_else(|e| panic!("{path} (PyYAML): {e}"));
        assert_eq!(from_pyyaml.records.len(), from_json.records.len(), "{path}");
        for (y, j) in from_pyyaml.records.iter().zip(&from_json.records) {
            let mut y = y.clone();
            y.source = j.source.clone();
            assert_eq!(&y, j, "{path} (PyYAML)");
        }
    }
    // A YAML file of no known tool is still refused, not misread.
    let e = benchlens::ingest::read("config.yaml", b"model: llama\nport: 8000\n")
        .err()
        .unwrap();
    assert!(e.to_string().starts_with("config.yaml:"), "{e}");
}
