//! The result-file formats this crate reads: their names in canonical records and their
//! descriptions for people.

use std::fmt;

/// A result-file format this crate can read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Format {
    /// vLLM `benchmark_serving.py` / `vllm bench serve` JSON: one object, a list, JSON Lines,
    /// or JSON Lines fenced inside a markdown/HTML report.
    VllmServing,
    /// vLLM serving console summary blocks (`==== Serving Benchmark Result ====`).
    VllmConsole,
    /// `vllm bench latency --output-json`.
    VllmLatency,
    /// `vllm bench throughput --output-json`.
    VllmThroughput,
    /// vLLM performance-suite results: markdown tables, the column-dict JSON, or
    /// `benchmark_results.json`; also its unfilled description template.
    VllmPerfSuite,
    /// SGLang `bench_serving` JSON Lines.
    SglangServing,
    /// genai-perf or AIPerf `profile_export_*.json`.
    GenaiPerf,
    /// genai-perf or AIPerf two-block CSV export.
    GenaiPerfCsv,
    /// AIPerf `profile_export.jsonl`: one JSON object per request.
    AiperfRecords,
    /// genai-perf's raw `profile_export.json`: per-request timestamps by experiment.
    GenaiPerfRaw,
    /// llmperf `*_summary.json`.
    Llmperf,
    /// llmperf `*_individual_responses.json`: one object per request.
    LlmperfRequests,
    /// guidellm `benchmarks.json`.
    Guidellm,
    /// Hugging Face inference-benchmarker JSON.
    HfBenchmarker,
    /// TensorRT-LLM `trtllm-bench --report_json`.
    Trtllm,
    /// InferenceX (SemiAnalysis) aggregates: `agg_*.json`, agentic aggregates, and result
    /// files with its seconds-named latencies.
    InferenceX,
    /// TGI `text-generation-benchmark` markdown tables.
    TgiBenchmark,
    /// llama.cpp's `llama-bench` as `-o json`, `jsonl`, `csv` or `sql` (its `-o md` tables are
    /// [`Format::MarkdownTable`], read by the same column mapping).
    LlamaBench,
    /// MLPerf LoadGen's `mlperf_log_summary.txt` or `mlperf_log_detail.txt` (`:::MLLOG` lines).
    MlperfLog,
    /// A pandas DataFrame printed as text (fixed-width, index first), possibly wide.
    PandasText,
    /// Any other CSV/TSV table, one row per point (or wide, one column group per GPU).
    GenericCsv,
    /// Markdown tables, with context from the headings above them.
    MarkdownTable,
    /// benchlens's own canonical JSON.
    CanonicalJson,
    /// benchlens's own canonical CSV.
    CanonicalCsv,
}

impl Format {
    /// Every format, in a stable order.
    pub const ALL: &'static [Format] = &[
        Format::VllmServing,
        Format::VllmConsole,
        Format::VllmLatency,
        Format::VllmThroughput,
        Format::VllmPerfSuite,
        Format::SglangServing,
        Format::GenaiPerf,
        Format::GenaiPerfCsv,
        Format::AiperfRecords,
        Format::GenaiPerfRaw,
        Format::Llmperf,
        Format::LlmperfRequests,
        Format::Guidellm,
        Format::HfBenchmarker,
        Format::Trtllm,
        Format::InferenceX,
        Format::TgiBenchmark,
        Format::LlamaBench,
        Format::MlperfLog,
        Format::PandasText,
        Format::GenericCsv,
        Format::MarkdownTable,
        Format::CanonicalJson,
        Format::CanonicalCsv,
    ];

    /// The snake_case id written into each record's `format` (`vllm_serving`).
    pub fn name(&self) -> &'static str {
        match self {
            Format::VllmServing => "vllm_serving",
            Format::VllmConsole => "vllm_console",
            Format::VllmLatency => "vllm_latency",
            Format::VllmThroughput => "vllm_throughput",
            Format::VllmPerfSuite => "vllm_perf_suite",
            Format::SglangServing => "sglang_serving",
            Format::GenaiPerf => "genai_perf",
            Format::GenaiPerfCsv => "genai_perf_csv",
            Format::AiperfRecords => "aiperf_records",
            Format::GenaiPerfRaw => "genai_perf_raw",
            Format::Llmperf => "llmperf",
            Format::LlmperfRequests => "llmperf_requests",
            Format::Guidellm => "guidellm",
            Format::HfBenchmarker => "hf_inference_benchmarker",
            Format::Trtllm => "trtllm_bench",
            Format::InferenceX => "inferencex",
            Format::TgiBenchmark => "tgi_benchmark",
            Format::LlamaBench => "llama_bench",
            Format::MlperfLog => "mlperf_loadgen",
            Format::PandasText => "pandas_text",
            Format::GenericCsv => "generic_csv",
            Format::MarkdownTable => "markdown_table",
            Format::CanonicalJson => "canonical_json",
            Format::CanonicalCsv => "canonical_csv",
        }
    }

    /// A human label (`vLLM serving JSON`).
    pub fn label(&self) -> &'static str {
        match self {
            Format::VllmServing => "vLLM serving JSON",
            Format::VllmConsole => "vLLM serving console output",
            Format::VllmLatency => "vLLM latency JSON",
            Format::VllmThroughput => "vLLM throughput JSON",
            Format::VllmPerfSuite => "vLLM performance suite",
            Format::SglangServing => "SGLang bench_serving JSON Lines",
            Format::GenaiPerf => "genai-perf / AIPerf JSON",
            Format::GenaiPerfCsv => "genai-perf / AIPerf CSV",
            Format::AiperfRecords => "AIPerf per-request JSON Lines",
            Format::GenaiPerfRaw => "genai-perf per-request export",
            Format::Llmperf => "llmperf summary JSON",
            Format::LlmperfRequests => "llmperf per-request responses",
            Format::Guidellm => "guidellm report",
            Format::HfBenchmarker => "HF inference-benchmarker JSON",
            Format::Trtllm => "trtllm-bench report JSON",
            Format::InferenceX => "InferenceX aggregate JSON",
            Format::TgiBenchmark => "TGI benchmark tables",
            Format::LlamaBench => "llama-bench output",
            Format::MlperfLog => "MLPerf LoadGen log",
            Format::PandasText => "pandas text table",
            Format::GenericCsv => "CSV table",
            Format::MarkdownTable => "markdown tables",
            Format::CanonicalJson => "benchlens JSON",
            Format::CanonicalCsv => "benchlens CSV",
        }
    }

    /// The format with this [`name`](Format::name).
    pub fn from_name(name: &str) -> Option<Format> {
        Format::ALL.iter().copied().find(|f| f.name() == name)
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

impl Format {
    /// Whether a JSON list of this format's objects is read an item at a time, each as a
    /// document of its own: not for the formats that read a list or a file's documents
    /// together (canonical records, the performance suite's records, llama-bench's tests,
    /// per-request exports).
    pub(super) fn reads_each_item_alone(self) -> bool {
        self.is_json()
            && !matches!(
                self,
                Format::CanonicalJson
                    | Format::VllmPerfSuite
                    | Format::LlamaBench
                    | Format::AiperfRecords
                    | Format::LlmperfRequests
            )
    }

    /// Whether this format's reader takes JSON documents.
    pub(super) fn is_json(self) -> bool {
        matches!(
            self,
            Format::VllmServing
                | Format::SglangServing
                | Format::VllmLatency
                | Format::VllmThroughput
                | Format::GenaiPerf
                | Format::AiperfRecords
                | Format::GenaiPerfRaw
                | Format::Llmperf
                | Format::LlmperfRequests
                | Format::Guidellm
                | Format::HfBenchmarker
                | Format::Trtllm
                | Format::InferenceX
                | Format::CanonicalJson
        )
    }
}
