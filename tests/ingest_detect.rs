//! Detection from content: every fixture is recognised as its format, also under a
//! misleading name.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod common;

use benchlens::ingest::{self, Format};
use common::fixture;

const EXPECTED: &[(&str, Format)] = &[
    ("seeds/000_258d36619a7af95a.txt", Format::PandasText),
    ("seeds/001_b815cef7710eda19.txt", Format::VllmServing),
    ("seeds/002_44f3a8b9f2336bbb.txt", Format::MarkdownTable),
    ("seeds/003_902df92d1b3a4732.txt", Format::VllmConsole),
    ("seeds/004_adfd865e97a7b47c.txt", Format::VllmPerfSuite),
    ("vllm/list.json", Format::VllmServing),
    ("vllm/runs.jsonl", Format::VllmServing),
    (
        "vllm/vllm-4qps-concurrency8-Llama-3.1-8B-Instruct-20250301-101500.json",
        Format::VllmServing,
    ),
    ("vllm/latency.json", Format::VllmLatency),
    ("vllm/throughput.json", Format::VllmThroughput),
    ("sglang/bench_serving.jsonl", Format::SglangServing),
    ("perfsuite/benchmark_results.json", Format::VllmPerfSuite),
    ("perfsuite/benchmark_results.md", Format::VllmPerfSuite),
    (
        "perfsuite/benchmark_results_tables.md",
        Format::VllmPerfSuite,
    ),
    ("tools/profile_export_genai_perf.json", Format::GenaiPerf),
    ("tools/profile_export_aiperf.json", Format::GenaiPerf),
    ("tools/profile_export_genai_perf.csv", Format::GenaiPerfCsv),
    (
        "tools/aiperf_run1_profile_export.jsonl",
        Format::AiperfRecords,
    ),
    (
        "tools/aiperf_qwen_concurrency1_profile_export.jsonl",
        Format::AiperfRecords,
    ),
    (
        "tools/genai_perf_raw_openai_profile_export.json",
        Format::GenaiPerfRaw,
    ),
    (
        "tools/genai_perf_raw_triton_profile_export.json",
        Format::GenaiPerfRaw,
    ),
    ("tools/guidellm_samples_benchmarks.json", Format::Guidellm),
    (
        "tools/meta-llama-Llama-2-7b-chat-hf_550_150_summary.json",
        Format::Llmperf,
    ),
    ("tools/benchmarks.json", Format::Guidellm),
    ("tools/hf_inference_benchmarker.json", Format::HfBenchmarker),
    ("tools/trtllm_report.json", Format::Trtllm),
    ("tables/tgi_benchmark.md", Format::TgiBenchmark),
    ("tables/tidy.csv", Format::GenericCsv),
    ("tables/wide.csv", Format::GenericCsv),
    ("tables/results.md", Format::MarkdownTable),
    ("real/llama-bench-readme-rtx4080.csv", Format::LlamaBench),
    (
        "real/llama-bench-powerinfer-rtx4080.csv",
        Format::LlamaBench,
    ),
    ("real/llama-bench-readme-rtx4080.json", Format::LlamaBench),
    (
        "real/llama-bench-powerinfer-rtx4080.jsonl",
        Format::LlamaBench,
    ),
    (
        "real/llama-bench-powerinfer-rtx4080.sql",
        Format::LlamaBench,
    ),
    (
        "real/mlperf-v4.1-nvidia-h100x8-mixtral-server-summary.txt",
        Format::MlperfLog,
    ),
    (
        "real/mlperf-v4.1-nvidia-h100x8-mixtral-server-detail.txt",
        Format::MlperfLog,
    ),
];

#[test]
fn every_fixture_is_detected_as_its_format_whatever_its_name() {
    for (path, format) in EXPECTED {
        let bytes = fixture(path);
        for name in [*path, "upload.bin", "results.json", "data.csv"] {
            let d = ingest::detect(name, &bytes);
            assert_eq!(d.format, Some(*format), "{path} as {name}: {}", d.reason);
            assert!(!d.reason.is_empty());
        }
    }
}

#[test]
fn every_fixture_reads_with_source_and_format_stamped() {
    for (path, format) in EXPECTED {
        let got = ingest::read("f", &fixture(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
        assert_eq!(got.format, *format, "{path}");
        for r in &got.records {
            assert_eq!(r.source.as_deref(), Some("f"));
            assert_eq!(r.format.as_deref(), Some(format.name()));
        }
        assert!(!got.records.is_empty() || got.note.is_some(), "{path}");
    }
}
