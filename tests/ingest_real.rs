//! Result files from public repositories nobody here wrote (tests/fixtures/real/README.md says
//! where each comes from), read with exact values: the format, the record count, the
//! dimensions that tell the configurations apart and two metric values each.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod common;

use benchlens::ingest::Format;
use benchlens::model::Record;
use common::{close, metric, read_fixture};

fn tag<'a>(r: &'a Record, key: &str) -> Option<&'a str> {
    r.tags.get(key).map(String::as_str)
}

/// SGLang `bench_serving` summaries pasted into a README: "Traffic request rate" is the
/// run's rate (it was dropped, so the three rates' runs could not be told apart), "Max
/// request concurrency: not set" is no value, SGLang's own figures keep their names, and
/// the HTML table's header cell over each block is `tag.column`.
#[test]
fn sglang_console_blocks_keep_their_request_rate() {
    let got = read_fixture("real/kvcached-sglang-console-overhead.md");
    assert_eq!(got.format, Format::VllmConsole);
    assert_eq!(got.records.len(), 6);
    let rates: Vec<_> = got.records.iter().map(|r| r.request_rate).collect();
    assert_eq!(
        rates,
        [32.0, 32.0, 16.0, 16.0, 8.0, 8.0].map(Some).to_vec(),
        "{:?}",
        got.warnings
    );
    for r in &got.records {
        assert_eq!(r.engine.as_deref(), Some("sglang-oai"));
        assert_eq!(r.max_concurrency, None);
        assert!(!r.is_inferred("request_rate"));
    }
    // The blocks stand side by side in an HTML table headed "with kvcached" / "without
    // kvcached": that header is what tells the two runs of a rate apart.
    let columns: Vec<_> = got.records.iter().map(|r| tag(r, "column")).collect();
    assert_eq!(
        columns,
        [Some("with kvcached"), Some("without kvcached")].repeat(3)
    );
    let first = &got.records[0];
    assert_eq!(tag(first, "section"), Some("Request rate = 32"));
    close(metric(first, "mean_ttft_ms"), 112043.40);
    close(metric(first, "p95_itl_ms"), 561.59);
    close(metric(first, "extra.max_itl_ms"), 151008.49);
    close(metric(first, "extra.concurrency"), 1418.05);
    close(
        metric(first, "extra.total_output_tokens_retokenized"),
        156230.0,
    );
    let last = &got.records[5];
    close(metric(last, "total_token_throughput"), 8554.30);
    close(metric(last, "median_e2el_ms"), 864.35);
    // Every line of every block is understood now.
    assert!(
        got.warnings
            .iter()
            .all(|w| !w.message.contains("unknown summary line")),
        "{:?}",
        got.warnings
    );
}

/// The older SGLang summary: "Total throughput (tok/s)" is the total token throughput; the
/// block's own rate wins over the heading's and is not marked inferred.
#[test]
fn older_sglang_console_total_throughput() {
    let got = read_fixture("real/sglang-dlora-console-results.md");
    assert_eq!(got.format, Format::VllmConsole);
    assert_eq!(got.records.len(), 2);
    let r = &got.records[1];
    assert_eq!(r.engine.as_deref(), Some("sglang"));
    assert_eq!(r.request_rate, Some(4.0));
    assert!(!r.is_inferred("request_rate"));
    close(metric(r, "total_token_throughput"), 2155.46);
    close(metric(r, "p99_ttft_ms"), 12291.71);
    close(metric(&got.records[0], "mean_e2el_ms"), 2098.07);
}

/// An SGLang JSON line with `total_generated_tokens`: a token total (the output length comes
/// from it), not a tag that would make the run a configuration of its own.
#[test]
fn sglang_total_generated_tokens_is_the_output_total() {
    let got = read_fixture("real/sglang-dlora-static-rate8.jsonl");
    assert_eq!(got.format, Format::SglangServing);
    assert_eq!(got.records.len(), 1);
    let r = &got.records[0];
    assert!(!r.tags.contains_key("total_generated_tokens"));
    close(metric(r, "extra.total_output_tokens"), 173506.0);
    close(r.output_len, 173506.0 / 797.0);
    assert_eq!(r.request_rate, Some(8.0));
    assert_eq!(tag(r, "routing_strategy"), Some("static"));
    close(metric(r, "median_ttft_ms"), 21039.79084896855);
    close(metric(r, "request_throughput"), 4.103260084117425);
}

/// A vLLM serving JSON with ramp-up settings and two wall-clock readings: the settings are
/// tags, the clock readings are not (each run would be its own configuration).
#[test]
fn vllm_serving_clock_readings_are_not_dimensions() {
    let got = read_fixture("real/kvcached-vllm-ramp-up-down.json");
    assert_eq!(got.format, Format::VllmServing);
    assert_eq!(got.records.len(), 1);
    let r = &got.records[0];
    assert_eq!(r.model.as_deref(), Some("meta-llama/Llama-3.1-8B-Instruct"));
    assert_eq!(r.request_rate, Some(f64::INFINITY));
    assert_eq!(r.num_prompts, Some(198));
    assert_eq!(tag(r, "ramp_up_strategy"), Some("ramp-up-down"));
    assert_eq!(tag(r, "ramp_peak_rps"), Some("12"));
    assert!(!r.tags.contains_key("unified_start_time"));
    assert!(!r.tags.contains_key("global_start_timestamp"));
    close(metric(r, "p99_ttft_ms"), 94.61940753215458);
    close(metric(r, "mean_e2el_ms"), 4766.761600499681);
}

/// Markdown tables of four engines, each under its engine's heading, then a comparison table
/// whose first column (`框架`, "framework") names the engine of each row: those rows keep
/// their own engines instead of the last heading's, and `# lmdeploy serve ...` inside a code
/// fence and the title `# Benchmark` are not headings that name anything.
#[test]
fn markdown_engine_sections_close_and_an_engine_column_wins() {
    let got = read_fixture("real/zhjunqin-engines-comparison.md");
    assert_eq!(got.format, Format::MarkdownTable);
    // The comparison table quotes the rate-5 rows of the vLLM, lmdeploy and TRT-LLM tables
    // above it: those three are read once; its mlc-llm row (no table of its own) stays.
    assert_eq!(got.records.len(), 14, "{:?}", got.warnings);
    let said: Vec<String> = got.warnings.iter().map(|w| w.to_string()).collect();
    assert!(
        said.contains(&"3 rows repeating a row of another table of the file (a summary quoting its sources) read once".to_string()),
        "{said:?}"
    );
    assert!(got.records.iter().all(|r| r.model.is_none()));
    // One spelling per engine: the comparison's "TRT-LLM" and the heading's "TRT-LLM" alike.
    let engines: std::collections::BTreeSet<_> = got
        .records
        .iter()
        .filter_map(|r| r.engine.as_deref())
        .collect();
    assert_eq!(
        engines.into_iter().collect::<Vec<_>>(),
        ["lmdeploy", "mlc-llm", "trtllm", "vllm"]
    );
    let mlc = got
        .records
        .iter()
        .find(|r| r.engine.as_deref() == Some("mlc-llm"))
        .unwrap();
    assert!(!mlc.is_inferred("engine"));
    assert_eq!(mlc.num_prompts, Some(1000));
    close(metric(mlc, "p90_ttft_ms"), 6156.20);
    // The lmdeploy rows: their engine from the `### lmdeploy` heading, not the fenced line.
    let lmdeploy: Vec<_> = got
        .records
        .iter()
        .filter(|r| r.engine.as_deref() == Some("lmdeploy"))
        .collect();
    assert_eq!(lmdeploy.len(), 4);
    assert_eq!(lmdeploy[0].inferred["engine"], "heading line 43");
    let trt = |rate: f64| {
        got.records
            .iter()
            .filter(|r| r.engine.as_deref() == Some("trtllm") && r.request_rate == Some(rate))
            .collect::<Vec<_>>()
    };
    close(metric(trt(8.0)[0], "p99_ttft_ms"), 67850.86);
    close(metric(trt(8.0)[0], "p50_tpot_ms"), 45.30);
    assert_eq!(trt(5.0).len(), 1, "the quoted TRT-LLM row is the same run");
}

/// vLLM summaries in a README, each after the `benchmark_serving.py` command that ran it:
/// the command's flags give model, dataset, lengths and prompt count; the `####` heading of
/// each test stays as `tag.section` over all its runs; log lines and links are no settings.
#[test]
fn console_blocks_take_settings_from_the_command_above() {
    let got = read_fixture("real/vllm-benchmarking-console-commands.md");
    assert_eq!(got.format, Format::VllmConsole);
    assert_eq!(got.records.len(), 3);
    for r in &got.records {
        assert_eq!(r.model.as_deref(), Some("Qwen2-7B-Instruct"));
        assert_eq!(r.dataset.as_deref(), Some("random"));
        assert_eq!(
            r.tags.keys().collect::<Vec<_>>(),
            ["section"],
            "{:?}",
            r.tags
        );
    }
    let lens: Vec<_> = got
        .records
        .iter()
        .map(|r| (r.input_len, r.output_len, r.num_prompts))
        .collect();
    assert_eq!(
        lens,
        [
            (Some(1024.0), Some(1024.0), Some(10)),
            (Some(4096.0), Some(4096.0), Some(10)),
            (Some(1024.0), Some(1024.0), Some(1)),
        ]
    );
    let test1 = "Test 1: 2 GPU pods host 7B model in 2 different nodes \
                 (Available KV cache memory in each GPU: 11.03 GiB)";
    assert_eq!(tag(&got.records[0], "section"), Some(test1));
    assert_eq!(tag(&got.records[1], "section"), Some(test1));
    assert!(tag(&got.records[2], "section")
        .unwrap()
        .starts_with("Test 2: 2 GPU pods host 7B model in the same node"));
    close(metric(&got.records[1], "mean_ttft_ms"), 5713.39);
    close(metric(&got.records[1], "p99_itl_ms"), 53.34);
    close(metric(&got.records[2], "output_throughput"), 113.07);
}

/// Files read correctly before: the vLLM performance suite's `benchmark_results.json` of one
/// deployment (GPU text `1xStandard_ND96asr_v4 x 1`) ...
#[test]
fn perf_suite_json_of_one_deployment() {
    let got = read_fixture("real/llm-k8s-tp8-benchmark_results.json");
    assert_eq!(got.format, Format::VllmPerfSuite);
    assert_eq!(got.records.len(), 4);
    let rates: Vec<_> = got.records.iter().map(|r| r.request_rate).collect();
    assert_eq!(rates, [1.0, 4.0, 16.0, f64::INFINITY].map(Some).to_vec());
    for r in &got.records {
        assert_eq!(r.gpu.as_deref(), Some("Standard_ND96asr_v4 x 1"));
        assert_eq!(r.gpu_count, Some(1));
        assert_eq!((r.tp, r.pp), (Some(8), Some(1)));
        assert_eq!(r.num_prompts, Some(200));
    }
    close(metric(&got.records[1], "mean_ttft_ms"), 50.32546663501307);
    close(metric(&got.records[2], "p99_tpot_ms"), 36.510955727119054);
}

/// ... and a markdown table of three deployments, told apart by test name (tp, pp) and GPU.
#[test]
fn perf_suite_markdown_of_three_deployments() {
    let got = read_fixture("real/llm-k8s-cumulative_results.md");
    assert_eq!(got.format, Format::VllmPerfSuite);
    assert_eq!(got.records.len(), 12);
    let mut configs: Vec<_> = got
        .records
        .iter()
        .map(|r| {
            (
                r.gpu.as_deref().unwrap().to_string(),
                r.tp,
                r.pp,
                r.request_rate.map(|x| x.to_string()),
            )
        })
        .collect();
    configs.sort();
    configs.dedup();
    assert_eq!(configs.len(), 12, "every record its own configuration");
    let ib_inf = got
        .records
        .iter()
        .find(|r| r.label.as_deref() == Some("tp4_pp2_IB_qps_inf"))
        .unwrap();
    assert_eq!(
        ib_inf.gpu.as_deref(),
        Some("Standard_ND96asr_v4-GPUDirect-RDMA-Infiniband x 2")
    );
    assert_eq!((ib_inf.tp, ib_inf.pp), (Some(4), Some(2)));
    assert_eq!(ib_inf.request_rate, Some(f64::INFINITY));
    close(metric(&got.records[0], "mean_ttft_ms"), 65.2578);
    close(metric(&got.records[0], "p99_itl_ms"), 42.9578);
}

/// vLLM summaries pasted into a shell script as comments (`# Mean TTFT (ms): ...`): read as
/// the plain ones (no record was read before), with the rate, burstiness and concurrency
/// printed above each.
#[test]
fn console_summaries_pasted_as_comments() {
    let got = read_fixture("real/vllm-fork-console-as-comments.sh");
    assert_eq!(got.format, Format::VllmConsole);
    assert_eq!(got.records.len(), 2, "{:?}", got.warnings);
    for r in &got.records {
        assert_eq!(r.request_rate, Some(f64::INFINITY));
        assert_eq!(r.max_concurrency, Some(32));
        assert_eq!(r.burstiness, Some(1.0));
        assert_eq!((r.input_len, r.output_len), (Some(2048.0), Some(2048.0)));
    }
    close(metric(&got.records[0], "mean_ttft_ms"), 7279.56);
    close(metric(&got.records[1], "median_itl_ms"), 91.76);
    close(metric(&got.records[1], "total_token_throughput"), 659.72);
}

/// llama-bench's markdown, three tables (`### GPU 0 ONLY ###`, `### GPU 1 ONLY ###`, `### DUAL
/// GPU ###`) of the same columns: the heading of each, the `fa` column and the test (pp512,
/// tg128) are what tell the twelve runs apart, so all three are dimensions (they were nothing,
/// a metric and the label, and the runs looked like four configurations measured three
/// times, the two tests averaged into one point); `backend` is ggml's backend and the engine
/// llama.cpp; `size` and `params` describe the model; `t/s` is tokens a second.
#[test]
fn llama_bench_tables_keep_their_gpu_sections_and_settings() {
    let got = read_fixture("real/llama-bench-vulkan-two-gpus.txt");
    assert_eq!(got.format, Format::MarkdownTable);
    assert_eq!(got.records.len(), 12);
    let mut configs: Vec<_> = got
        .records
        .iter()
        .map(|r| {
            (
                tag(r, "section").unwrap().to_string(),
                tag(r, "fa").unwrap().to_string(),
                tag(r, "test").unwrap().to_string(),
            )
        })
        .collect();
    configs.sort();
    configs.dedup();
    assert_eq!(configs.len(), 12, "every run its own configuration");
    for r in &got.records {
        assert_eq!(r.model.as_deref(), Some("llama 7B Q4_0"));
        assert_eq!(r.engine.as_deref(), Some("llama.cpp"));
        assert_eq!(tag(r, "backend"), Some("Vulkan"));
        assert_eq!(tag(r, "ngl"), Some("100"));
        assert_eq!(r.batch_size, Some(256));
        // What the model is, as written, not a metric to chart.
        assert_eq!(tag(r, "size"), Some("3.56 GiB"));
        assert_eq!(tag(r, "params"), Some("6.74 B"));
        assert_eq!(
            r.metrics.keys().map(|k| k.to_string()).collect::<Vec<_>>(),
            ["extra.tokens_per_s", "extra.tokens_per_s_stddev"]
        );
    }
    let dual_fa1_pp = got
        .records
        .iter()
        .find(|r| {
            tag(r, "section") == Some("DUAL GPU")
                && tag(r, "fa") == Some("1")
                && tag(r, "test") == Some("pp512")
        })
        .unwrap();
    close(metric(dual_fa1_pp, "extra.tokens_per_s"), 2043.45);
    close(metric(dual_fa1_pp, "extra.tokens_per_s_stddev"), 19.39);
    let gpu1_fa0_tg = &got.records[5];
    assert_eq!(tag(gpu1_fa0_tg, "section"), Some("GPU 1 ONLY"));
    close(metric(gpu1_fa0_tg, "extra.tokens_per_s"), 32.03);
    close(metric(gpu1_fa0_tg, "extra.tokens_per_s_stddev"), 0.02);
}

/// One llama-bench run (prompt processing, then generation) as each of its machine-readable
/// outputs writes it: the same records as its markdown would give (the test as a dimension,
/// t/s with its spread, the settings as tags), whatever the output.
fn llama_bench_rtx4080(path: &str, ngl: &str, tps: [(f64, f64); 2]) {
    let got = read_fixture(path);
    assert_eq!(got.format, Format::LlamaBench, "{path}");
    assert_eq!(got.records.len(), 2, "{path}: {:?}", got.warnings);
    let tests: Vec<_> = got
        .records
        .iter()
        .map(|r| tag(r, "test").unwrap())
        .collect();
    assert_eq!(tests, ["pp512", "tg128"], "{path}");
    for (r, (mean, spread)) in got.records.iter().zip(tps) {
        assert_eq!(r.model.as_deref(), Some("qwen2 7B Q4_K - Medium"));
        assert_eq!(r.gpu.as_deref(), Some("NVIDIA GeForce RTX 4080"));
        assert_eq!(r.engine.as_deref(), Some("llama.cpp"));
        assert_eq!(r.batch_size, Some(2048));
        assert_eq!(tag(r, "backend"), Some("CUDA"));
        assert_eq!(tag(r, "build_commit"), Some("8cf427ff"));
        assert_eq!(tag(r, "build_number"), Some("5163"));
        assert_eq!(tag(r, "threads"), Some("8"));
        assert_eq!(tag(r, "ngl"), Some(ngl));
        assert_eq!(tag(r, "n_ubatch"), Some("512"));
        assert_eq!(
            tag(r, "cpu_info"),
            Some("AMD Ryzen 7 7800X3D 8-Core Processor")
        );
        assert_eq!(tag(r, "model_size"), Some("4677120000"));
        assert_eq!(
            r.metrics.keys().map(|k| k.to_string()).collect::<Vec<_>>(),
            ["extra.tokens_per_s", "extra.tokens_per_s_stddev"],
            "{path}: only t/s is measured"
        );
        close(metric(r, "extra.tokens_per_s"), mean);
        close(metric(r, "extra.tokens_per_s_stddev"), spread);
    }
}

#[test]
fn llama_bench_csv_json_jsonl_and_sql_read_alike() {
    llama_bench_rtx4080(
        "real/llama-bench-powerinfer-rtx4080.csv",
        "99",
        [(7285.676949, 100.064434), (119.915244, 0.430617)],
    );
    llama_bench_rtx4080(
        "real/llama-bench-readme-rtx4080.json",
        "-1",
        [(7100.002165, 140.341520), (118.881588, 1.041811)],
    );
    llama_bench_rtx4080(
        "real/llama-bench-powerinfer-rtx4080.jsonl",
        "99",
        [(7263.609157, 90.940578), (119.844681, 0.699739)],
    );
    llama_bench_rtx4080(
        "real/llama-bench-powerinfer-rtx4080.sql",
        "99",
        [(7324.546977, 54.032613), (120.346696, 0.504647)],
    );
    // The settings the newer JSON adds stay settings: a flag of 0 is not a measured zero.
    let json = read_fixture("real/llama-bench-readme-rtx4080.json");
    assert_eq!(tag(&json.records[0], "fa"), Some("-1"));
    assert_eq!(tag(&json.records[0], "n_cpu_moe"), Some("0"));
    assert_eq!(tag(&json.records[0], "fit_min_ctx"), Some("0"));
    // llama.cpp's README shows the newer CSV header over rows of the older schema, one cell
    // short. llama-bench writes the test and its results last in every version, so those
    // are read from the row's end (each row's time stands where `test_time` says): the tests
    // are pp512 and tg128 again, with their t/s, and every row says what it did.
    llama_bench_rtx4080(
        "real/llama-bench-readme-rtx4080.csv",
        "-1",
        [(7285.676949, 100.064434), (119.915244, 0.430617)],
    );
    let ragged = read_fixture("real/llama-bench-readme-rtx4080.csv");
    assert_eq!(ragged.format, Format::LlamaBench);
    let said: Vec<String> = ragged.warnings.iter().map(|w| w.to_string()).collect();
    for line in [2, 3] {
        assert!(
            said.contains(&format!(
                "line {line}: 41 cells under 42 column names: the test and its results read from \
                 the row's end, where llama-bench writes them (no value for fit_min_ctx)"
            )),
            "{said:?}"
        );
    }
    assert_eq!(
        tag(&ragged.records[1], "n_gen"),
        None,
        "n_gen is the test, not a tag"
    );
}

/// MLPerf LoadGen summaries: the scenario, mode and validity as tags, samples and tokens a
/// second as the request and output throughputs, TTFT and TPOT (ns in the file) in ms.
#[test]
fn mlperf_server_summary_with_token_latencies() {
    let got = read_fixture("real/mlperf-v4.1-nvidia-h100x8-mixtral-server-summary.txt");
    assert_eq!(got.format, Format::MlperfLog);
    assert_eq!(got.records.len(), 1);
    let r = &got.records[0];
    assert_eq!(tag(r, "sut"), Some("mixtral-8x7b-Server-SUT"));
    assert_eq!(tag(r, "scenario"), Some("Server"));
    assert_eq!(tag(r, "mode"), Some("PerformanceOnly"));
    assert_eq!(tag(r, "validity"), Some("VALID"));
    assert_eq!(r.request_rate, Some(348.0));
    close(metric(r, "request_throughput"), 348.06);
    close(metric(r, "output_throughput"), 50795.57);
    close(metric(r, "mean_ttft_ms"), 180.021403);
    close(metric(r, "p50_ttft_ms"), 154.281665);
    close(metric(r, "p99_ttft_ms"), 628.885054);
    close(metric(r, "p99.9_ttft_ms"), 1940.936589);
    close(metric(r, "mean_tpot_ms"), 102.590339);
    close(metric(r, "p50_tpot_ms"), 102.777619);
    close(metric(r, "p90_tpot_ms"), 112.472224);
    close(metric(r, "p99_tpot_ms"), 123.136641);
    close(metric(r, "mean_e2el_ms"), 15015.963772);
    close(metric(r, "p99_e2el_ms"), 61040.681082);
    // Six statistics of three families, two throughputs; min and max have no canonical name.
    assert_eq!(r.metrics.len(), 3 * 7 + 2);
    // Read at its place in a submission, the path names the benchmark and the system.
    let text = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/real/mlperf-v4.1-nvidia-h100x8-mixtral-server-summary.txt"
    ))
    .unwrap();
    let at = "closed/NVIDIA/results/DGX-H100_H100-SXM-80GBx8_TRT/mixtral-8x7b/Server/performance/run_1/mlperf_log_summary.txt";
    let placed = benchlens::ingest::read(at, &text).unwrap();
    let r = &placed.records[0];
    assert_eq!(r.model.as_deref(), Some("mixtral-8x7b"));
    assert_eq!(tag(r, "system"), Some("DGX-H100_H100-SXM-80GBx8_TRT"));
}

#[test]
fn mlperf_detail_log_reads_as_its_summary() {
    let got = read_fixture("real/mlperf-v4.1-nvidia-h100x8-mixtral-server-detail.txt");
    assert_eq!(got.format, Format::MlperfLog);
    assert_eq!(got.records.len(), 1, "{:?}", got.warnings);
    assert!(got.warnings.is_empty(), "{:?}", got.warnings);
    let d = &got.records[0];
    let s = &read_fixture("real/mlperf-v4.1-nvidia-h100x8-mixtral-server-summary.txt").records[0];
    assert_eq!(d.tags.get("validity"), s.tags.get("validity"));
    assert_eq!(d.tags.get("scenario"), s.tags.get("scenario"));
    assert_eq!(d.date.as_deref(), Some("2024-07-23T17:57:59Z"));
    assert_eq!(d.request_rate, Some(348.0));
    // The detail log keeps more digits of the throughputs than the summary prints.
    close(metric(d, "request_throughput"), 348.059);
    close(metric(d, "output_throughput"), 50795.6);
    for k in [
        "mean_ttft_ms",
        "p99.9_ttft_ms",
        "mean_tpot_ms",
        "p97_tpot_ms",
        "p95_e2el_ms",
    ] {
        close(metric(d, k), metric(s, k).unwrap());
    }
    assert_eq!(d.metrics.len(), s.metrics.len());
}

#[test]
fn mlperf_offline_summaries_leave_the_one_query_latency_out() {
    let got = read_fixture("real/mlperf-v4.1-amd-mi300x8-llama2-70b-offline-summary.txt");
    let r = &got.records[0];
    assert_eq!(tag(r, "scenario"), Some("Offline"));
    assert_eq!(tag(r, "sut"), Some("PySUT"));
    assert_eq!(tag(r, "validity"), Some("VALID"));
    close(metric(r, "request_throughput"), 80.15);
    close(metric(r, "output_throughput"), 23514.8);
    // 900 s is how long the run's one query took, not a request's latency; target_qps sizes
    // that query, it is no arrival rate.
    assert_eq!(r.metrics.len(), 2);
    assert_eq!(r.request_rate, None);
    let got = read_fixture("real/mlperf-cm-example-offline-summary.txt");
    let r = &got.records[0];
    assert_eq!(tag(r, "scenario"), Some("Offline"));
    close(metric(r, "request_throughput"), 0.165037);
    assert_eq!(r.metrics.len(), 1);
}

/// InferenceX's token-position experiment results: vLLM serving figures written in
/// InferenceX's units (seconds, `_ms` dropped from the names), the precision, the engine and
/// the sequence lengths only in the file name.
#[test]
fn inferencex_seconds_named_results_are_ms_with_the_name_s_settings() {
    let got = read_fixture("real/inferencex-glm5_fp8_vllm_tp8_isl8192_osl128_conc64.json");
    assert_eq!(got.format, Format::InferenceX);
    assert_eq!(got.records.len(), 1);
    let r = &got.records[0];
    assert_eq!(r.model.as_deref(), Some("zai-org/GLM-5-FP8"));
    assert_eq!(r.max_concurrency, Some(64));
    assert_eq!(r.num_prompts, Some(640));
    assert_eq!(r.request_rate, Some(f64::INFINITY));
    // From the file name, marked inferred.
    assert_eq!(r.precision.as_deref(), Some("fp8"));
    assert_eq!(r.engine.as_deref(), Some("vllm"));
    assert_eq!(r.tp, Some(8));
    assert_eq!((r.input_len, r.output_len), (Some(8192.0), Some(128.0)));
    assert!(r.is_inferred("input_len") && r.is_inferred("precision"));
    close(metric(r, "median_ttft_ms"), 40179.269942454994);
    close(metric(r, "p99_e2el_ms"), 84303.47274420784);
    close(metric(r, "median_tpot_ms"), 210.91479159832938);
    close(metric(r, "output_throughput"), 120.66745473046097);
    close(metric(r, "duration_s"), 678.8905938472599);
    close(metric(r, "completed"), 640.0);

    let got = read_fixture("real/inferencex-minimax_m25_vllm_tep8_isl32768_osl128_conc4.json");
    assert_eq!(got.format, Format::InferenceX);
    let r = &got.records[0];
    assert_eq!(r.model.as_deref(), Some("MiniMaxAI/MiniMax-M2.5"));
    assert_eq!((r.input_len, r.max_concurrency), (Some(32768.0), Some(4)));
    // `tep8` in the name: tensor and expert parallelism over 8 GPUs.
    assert_eq!(r.gpu_count, Some(8));
    let dep = read_fixture("real/inferencex-minimax_m25_vllm_dep8_isl1024_osl128_conc16.json");
    assert_eq!(dep.records[0].gpu_count, Some(8));
    close(metric(r, "median_ttft_ms"), 5132.922445423901);
    close(metric(r, "p99_tpot_ms"), 54.844_431_027_506);
    close(metric(r, "output_throughput"), 52.85685794539469);

    // The four files of the corpus are four configurations, not repeats.
    let mut keys = Vec::new();
    for f in [
        "real/inferencex-glm5_fp8_vllm_tp8_isl1024_osl128_conc16.json",
        "real/inferencex-glm5_fp8_vllm_tp8_isl8192_osl128_conc64.json",
        "real/inferencex-minimax_m25_vllm_dep8_isl1024_osl128_conc16.json",
        "real/inferencex-minimax_m25_vllm_tep8_isl32768_osl128_conc4.json",
    ] {
        let r = read_fixture(f).records.remove(0);
        keys.push((
            r.model.clone(),
            r.input_len.map(|x| x as u64),
            r.max_concurrency,
        ));
    }
    keys.dedup();
    assert_eq!(keys.len(), 4);
    close(
        metric(
            &read_fixture("real/inferencex-glm5_fp8_vllm_tp8_isl1024_osl128_conc16.json").records
                [0],
            "median_ttft_ms",
        ),
        291.39942955225706,
    );
}

/// trtllm-bench's text reports as its documentation prints them (a markdown page holding two
/// reports in shell blocks, around markdown tables): one record per report, the older
/// report's "Token Throughput" as output throughput, "Total Latency" as the duration.
#[test]
fn trtllm_bench_text_reports_inside_a_document() {
    let got = read_fixture("real/trtllm-bench-docs-pytorch-and-multimodal.md");
    assert_eq!(got.format, Format::Trtllm, "{:?}", got.warnings);
    assert_eq!(got.records.len(), 2);
    let torch = &got.records[0];
    assert_eq!(torch.model.as_deref(), Some("meta-llama/Llama-3.1-8B"));
    assert_eq!(torch.engine.as_deref(), Some("trtllm"));
    assert_eq!(torch.engine_version.as_deref(), Some("0.17.0"));
    assert_eq!(torch.precision.as_deref(), Some("fp8"));
    assert_eq!((torch.tp, torch.pp), (Some(1), Some(1)));
    assert_eq!(torch.num_prompts, Some(3000));
    assert_eq!(
        (torch.input_len, torch.output_len),
        (Some(128.0), Some(128.0))
    );
    assert_eq!(tag(torch, "max_batch_size"), Some("2048"));
    close(metric(torch, "output_throughput"), 20685.5510);
    close(metric(torch, "request_throughput"), 161.6059);
    close(metric(torch, "duration_s"), 18.5636825);
    let mm = &got.records[1];
    assert_eq!(mm.model, None);
    assert_eq!(mm.num_prompts, Some(10));
    assert_eq!((mm.input_len, mm.output_len), (Some(411.6), Some(128.7)));
    close(metric(mm, "extra.concurrency"), 5.3019);
    close(metric(mm, "total_token_throughput"), 780.1607);
    close(
        metric(mm, "extra.output_throughput_per_gpu_tok_s"),
        185.8351,
    );
    close(metric(mm, "mean_e2el_ms"), 3671.8441);
    close(metric(mm, "p50_e2el_ms"), 3936.3022);
    close(metric(mm, "p99_e2el_ms"), 5514.4701);
    close(metric(mm, "extra.e2el_min_ms"), 2397.1047);
    // The dataset section's percentile table is the dataset's, not the run's.
    assert_eq!(metric(mm, "p50_ttft_ms"), None);
}

/// The streaming report of trtllm-bench's performance overview page, starting with its
/// `====` rule: TTFT and TPOT breakdowns in ms.
#[test]
fn trtllm_bench_streaming_report_breakdowns() {
    let got = read_fixture("real/trtllm-bench-perf-overview-streaming.txt");
    assert_eq!(got.format, Format::Trtllm);
    assert_eq!(got.records.len(), 1);
    let r = &got.records[0];
    close(metric(r, "request_throughput"), 43.2089);
    close(metric(r, "output_throughput"), 5530.7382);
    close(metric(r, "mean_ttft_ms"), 52667.0339);
    close(metric(r, "p90_ttft_ms"), 96583.7187);
    close(metric(r, "p99_tpot_ms"), 206.5821);
    close(metric(r, "mean_tpot_ms"), 182.9639);
    close(metric(r, "extra.tpot_max_ms"), 208.4667);
    close(metric(r, "p95_e2el_ms"), 111302.9101);
    close(metric(r, "duration_s"), 115.7169214);
    close(metric(r, "extra.output_speed_per_user_tok_s"), 5.4656);
}

/// A trtllm-bench log whose lines start with the logger's `[TensorRT-LLM][INFO]` prefix is
/// text to read, not a JSON list that fails at "line 1, column 2".
#[test]
fn a_log_starting_with_a_bracketed_prefix_is_not_json() {
    let mut log =
        b"[TensorRT-LLM][INFO] Engine loaded\n[11/29/2025-10:00:00] [TRT-LLM] [I] \n".to_vec();
    log.extend(common::fixture(
        "real/trtllm-bench-perf-overview-streaming.txt",
    ));
    let got = benchlens::ingest::read("trtllm-bench.log", &log).unwrap();
    assert_eq!(got.format, Format::Trtllm);
    close(metric(&got.records[0], "p50_ttft_ms"), 52269.7072);
}

/// A SingleStream LoadGen summary: queries go one after another, so `target_qps : 1000` is no
/// request rate (kept as `tag.target_qps`); the rate LoadGen measured ("QPS w/ loadgen
/// overhead") is the request throughput; latencies from ns to ms.
#[test]
fn mlperf_singlestream_summary_target_is_not_a_rate() {
    let got = read_fixture("real/mlperf-singlestream-pysut-summary.txt");
    assert_eq!(got.format, Format::MlperfLog);
    let r = &got.records[0];
    assert_eq!(tag(r, "scenario"), Some("SingleStream"));
    assert_eq!(tag(r, "validity"), Some("VALID"));
    assert_eq!(r.request_rate, None);
    assert_eq!(tag(r, "target_qps"), Some("1000"));
    close(metric(r, "request_throughput"), 20.88);
    close(metric(r, "mean_e2el_ms"), 47.877956);
    close(metric(r, "p90_e2el_ms"), 50.798);
    close(metric(r, "p99.9_e2el_ms"), 190.141625);
}

/// The LLMPerf leaderboard's summaries (one provider, one model each): llmperf's seconds are
/// ms here, `framework` names the provider measured (the engine dimension the leaderboard's
/// own charts compare), completed requests a minute are requests a second, and the run's end
/// time is no setting.
#[test]
fn llmperf_leaderboard_summaries() {
    let cases = [
        // (file, model, provider, mean TTFT s, output tok/s, completed)
        ("groq_70b", "llama2-70b-4096", "groq", 0.22786034579078357, 441.84737788500206, 150.0),
        ("anyscale_70b", "meta-llama/Llama-2-70b-chat-hf", "anyscale", 0.24890269464666667, 207.52121071152493, 150.0),
        ("bedrock_70b", "meta.llama2-70b-chat-v1", "bedrock", 0.40837363779203295, 62.867056292903534, 101.0),
        ("fireworks_70b", "accounts/fireworks/models/llama-v2-70b-chat", "fireworks", 0.5115081730199972, 162.86950633872, 150.0),
        ("lepton_70b", "llama2-70b", "lepton", 0.899458765500001, 53.02189174249291, 20.0),
        ("perplexity_70b", "llama-2-70b-chat", "perplexity", 0.4190719783040514, 126.05102586791163, 148.0),
        ("replicate_70b", "meta/llama-2-70b-chat:02e509c789964a7ea8736978a43525956ef40397be9033abf9fd2badfe68c9e3", "replicate", 5.083249257606895, 29.434595028687124, 145.0),
        ("together_70b", "together_ai/togethercomputer/llama-2-70b-chat", "together", 0.622329721273333, 216.45553311958628, 150.0),
        ("anyscale_13b", "meta-llama/Llama-2-13b-chat-hf", "anyscale", 0.22044049145333625, 338.52437255956016, 150.0),
        ("together_13b", "together_ai/togethercomputer/llama-2-13b-chat", "together", 1.8956155178858847, 86.2774490346918, 149.0),
        ("anyscale_7b", "meta-llama/Llama-2-7b-chat-hf", "anyscale", 0.22518338954666584, 198.25122608178637, 150.0),
        ("fireworks_7b", "accounts/fireworks/models/llama-v2-7b-chat", "fireworks", 0.3299350498733285, 260.3967163149623, 150.0),
    ];
    for (name, model, provider, ttft_s, tps, completed) in cases {
        let got = read_fixture(&format!("real/llmperf-leaderboard-summary-{name}.json"));
        assert_eq!(got.format, Format::Llmperf, "{name}");
        assert_eq!(got.records.len(), 1, "{name}");
        let r = &got.records[0];
        assert_eq!(r.model.as_deref(), Some(model), "{name}");
        assert_eq!(r.engine.as_deref(), Some(provider), "{name}");
        assert_eq!(r.input_len, Some(550.0), "{name}");
        assert_eq!(r.output_len, Some(150.0), "{name}");
        assert_eq!(r.max_concurrency, Some(5), "{name}");
        close(metric(r, "mean_ttft_ms"), ttft_s * 1000.0);
        close(metric(r, "output_throughput"), tps);
        close(metric(r, "completed"), completed);
        assert_eq!(
            tag(r, "timestamp"),
            None,
            "{name}: a clock reading is no dimension"
        );
        assert_eq!(tag(r, "framework"), None, "{name}");
    }
    let got = read_fixture("real/llmperf-leaderboard-summary-groq_70b.json");
    let r = &got.records[0];
    // "results_num_completed_requests_per_min": 176.73895115400083
    close(metric(r, "request_throughput"), 176.73895115400083 / 60.0);
    close(metric(r, "p99_e2el_ms"), 992.2714155726133);
    close(metric(r, "p50_itl_ms"), 5.320808651546638);
    assert_eq!(r.num_prompts, Some(150));
}

/// llmperf's per-request responses, cut to their first 12 requests: failed requests
/// (`error_code` -100, "Output too few tokens") are counted as failed, never averaged in.
#[test]
fn llmperf_leaderboard_individual_responses() {
    let got = read_fixture("real/llmperf-leaderboard-individual-groq_70b.json");
    assert_eq!(got.format, Format::LlmperfRequests);
    assert_eq!(got.records.len(), 1);
    let r = &got.records[0];
    assert_eq!(r.requests.len(), 12);
    close(metric(r, "completed"), 12.0);
    close(metric(r, "failed"), 0.0);
    assert_eq!(r.input_len, Some(550.0));
    assert_eq!(r.output_len, Some(150.0));
    close(r.requests[0].ttft_ms, 297.977801412344);
    close(metric(r, "mean_ttft_ms"), 243.83661709725857);
    close(metric(r, "median_ttft_ms"), 225.09778011590242);

    let got = read_fixture("real/llmperf-leaderboard-individual-bedrock_70b.json");
    let r = &got.records[0];
    assert_eq!(r.requests.len(), 12);
    close(metric(r, "completed"), 8.0);
    close(metric(r, "failed"), 4.0);
    // The mean of the eight that succeeded.
    close(metric(r, "mean_ttft_ms"), 552.3886121250143);
    close(metric(r, "median_ttft_ms"), 557.4822620001214);
}

/// The leaderboard's README: one table per statistic and model size, the provider in the
/// `Framework` column.
#[test]
fn llmperf_leaderboard_readme_tables() {
    let got = read_fixture("real/llmperf-leaderboard-readme.md");
    assert_eq!(got.format, Format::MarkdownTable);
    assert_eq!(got.records.len(), 38);
    let groq = got
        .records
        .iter()
        .find(|r| r.engine.as_deref() == Some("groq"))
        .unwrap();
    // | groq | llama2-70b-4096 | 185 | 184 | 148 | 208 | 174 | 195 | 207 | 208 |
    assert_eq!(groq.model.as_deref(), Some("llama2-70b-4096"));
    assert_eq!(tag(groq, "section"), Some("70B Models"));
    // Its bare statistics (`Median`, `Mean`, `P99`) measure what the heading above says:
    // `### Output Tokens Throughput (tokens/s)` here, `### Time to First Token (seconds)`
    // for the tables under the second "70B Models", whose rows stay apart from these.
    close(
        metric(groq, "extra.output_tokens_throughput_tokens_s_median"),
        185.0,
    );
    close(
        metric(groq, "extra.output_tokens_throughput_tokens_s_mean"),
        184.0,
    );
    close(
        metric(groq, "extra.output_tokens_throughput_tokens_s_p99"),
        208.0,
    );
    assert!(groq
        .metric(&benchlens::model::MetricKey::Extra("median".into()))
        .is_none());
    let ttft: Vec<_> = got
        .records
        .iter()
        .filter(|r| r.engine.as_deref() == Some("groq") && tag(r, "section") == Some("70B Models"))
        .filter(|r| r.metrics.keys().any(|k| k.to_string() == "median_ttft_ms"))
        .collect();
    assert_eq!(ttft.len(), 1);
    // | groq | llama2-70b-4096 | 0.22 | 0.23 | 0.17 | 0.36 | 0.19 | 0.24 | 0.3 | 0.35 |
    close(metric(ttft[0], "median_ttft_ms"), 220.0);
    close(metric(ttft[0], "p99_ttft_ms"), 350.0);
    close(
        metric(ttft[0], "extra.time_to_first_token_seconds_max"),
        0.36,
    );
    assert_eq!(ttft[0].metrics.len(), 8, "only the TTFT table's figures");
    let engines: std::collections::BTreeSet<_> = got
        .records
        .iter()
        .filter_map(|r| r.engine.as_deref())
        .collect();
    assert_eq!(engines.len(), 8, "{engines:?}");
}

/// MLPerf v5.0, AMD's 8×MI325X Llama-2-70B (99.9) Server and Offline runs.
#[test]
fn mlperf_v5_amd_llama2_server_and_offline() {
    let got = read_fixture("real/mlperf-v5.0-amd-mi325x8-llama2-70b-server-summary.txt");
    assert_eq!(got.format, Format::MlperfLog);
    assert_eq!(got.records.len(), 1);
    let r = &got.records[0];
    assert_eq!(tag(r, "scenario"), Some("Server"));
    assert_eq!(tag(r, "validity"), Some("VALID"));
    assert_eq!(r.request_rate, Some(104.2));
    close(metric(r, "request_throughput"), 103.83);
    close(metric(r, "output_throughput"), 30724.51);
    // "Mean First Token latency (ns) : 1060314084", "99.00 percentile time to output token
    // (ns) : 199404544".
    close(metric(r, "mean_ttft_ms"), 1060.314084);
    close(metric(r, "p99_tpot_ms"), 199.404544);
    close(metric(r, "p50_e2el_ms"), 41777.872514);

    let got = read_fixture("real/mlperf-v5.0-amd-mi325x8-llama2-70b-offline-summary.txt");
    let r = &got.records[0];
    assert_eq!(tag(r, "scenario"), Some("Offline"));
    close(metric(r, "request_throughput"), 114.262);
    close(metric(r, "output_throughput"), 33928.1);
    assert_eq!(r.metrics.len(), 2);
    assert_eq!(r.request_rate, None);
}

/// MLPerf v4.0, Google's 8×H100 Llama-2-70B (99.9): its Server summary gives the token rate
/// only under "Additional Stats".
#[test]
fn mlperf_v4_google_llama2_server_and_offline() {
    let got = read_fixture("real/mlperf-v4.0-google-h100x8-llama2-70b-server-summary.txt");
    assert_eq!(got.records.len(), 1);
    let r = &got.records[0];
    assert_eq!(tag(r, "sut"), Some("llama2-70b-Server-SUT-LoadGen"));
    assert_eq!(r.request_rate, Some(71.875));
    close(metric(r, "request_throughput"), 69.50);
    close(metric(r, "output_throughput"), 20287.78);
    close(metric(r, "p99_ttft_ms"), 671.174358);
    close(metric(r, "mean_tpot_ms"), 146.225437);

    let got = read_fixture("real/mlperf-v4.0-google-h100x8-llama2-70b-offline-summary.txt");
    let r = &got.records[0];
    assert_eq!(tag(r, "scenario"), Some("Offline"));
    close(metric(r, "request_throughput"), 71.9176);
    close(metric(r, "output_throughput"), 20992.0);
    assert_eq!(r.metrics.len(), 2);
}

/// AIPerf's example artifacts (one run of gpt-oss-20b, 100 requests at concurrency 100, 11
/// cancelled): the JSON export (metrics under `records`, each naming itself), the CSV export
/// and the per-request records read alike.
#[test]
fn aiperf_example_run_json_csv_and_records() {
    let got = read_fixture("real/aiperf-example-run1-profile_export_aiperf.json");
    assert_eq!(got.format, Format::GenaiPerf);
    assert_eq!(got.records.len(), 1);
    let r = &got.records[0];
    assert_eq!(r.model.as_deref(), Some("openai/gpt-oss-20b"));
    assert_eq!(r.max_concurrency, Some(100));
    assert_eq!(r.input_len, Some(550.0));
    close(metric(r, "mean_ttft_ms"), 2343.219436988764);
    close(metric(r, "p99_ttft_ms"), 3833.3894000399996);
    close(metric(r, "mean_itl_ms"), 27.763065454471807);
    close(metric(r, "p99_e2el_ms"), 9297.609933759999);
    close(metric(r, "request_throughput"), 9.551622221540914);
    close(metric(r, "output_throughput"), 2320.7222350404572);
    close(metric(r, "completed"), 89.0);
    close(metric(r, "failed"), 11.0);
    close(metric(r, "duration_s"), 9.317788951);
    assert!(
        got.warnings
            .iter()
            .all(|w| !w.message.contains("not a number")),
        "{:?}",
        got.warnings
    );

    let got = read_fixture("real/aiperf-example-run1-profile_export_aiperf.csv");
    assert_eq!(got.format, Format::GenaiPerfCsv);
    let r = &got.records[0];
    close(metric(r, "mean_ttft_ms"), 2343.22);
    close(metric(r, "p99_ttft_ms"), 3833.39);
    close(metric(r, "request_throughput"), 9.55);
    close(metric(r, "output_throughput"), 2320.72);
    close(metric(r, "completed"), 89.0);
    close(metric(r, "failed"), 11.0);

    // Cut to its first 30 lines: 11 cancelled requests, then 19 that completed.
    let got = read_fixture("real/aiperf-example-run1-profile_export.jsonl");
    assert_eq!(got.format, Format::AiperfRecords);
    let r = &got.records[0];
    assert_eq!(r.requests.len(), 30);
    close(metric(r, "completed"), 19.0);
    close(metric(r, "failed"), 11.0);
    close(metric(r, "mean_ttft_ms"), 1133.9957052105262);
    close(metric(r, "median_ttft_ms"), 863.225388);
}

/// vLLM 0.25.1 `bench serve` results from er0080/vllm-benchmarking's fixtures: a run whose 8
/// requests all failed keeps its counts and has no latency (not 0 ms), and the sweep's runs
/// keep their server setting; their run number is no setting.
#[test]
fn vllm_bench_serve_failed_run_and_sweep() {
    let got = read_fixture("real/vllmbench-er0080-bench_serve_all_requests_failed_v0.25.1.json");
    assert_eq!(got.format, Format::VllmServing);
    let r = &got.records[0];
    close(metric(r, "completed"), 0.0);
    close(metric(r, "failed"), 8.0);
    assert_eq!(metric(r, "mean_ttft_ms"), None);
    assert_eq!(metric(r, "p99_itl_ms"), None);

    let got = read_fixture("real/vllmbench-er0080-bench_serve_v0.25.1.json");
    let r = &got.records[0];
    assert_eq!(r.model.as_deref(), Some("facebook/opt-125m"));
    assert_eq!(r.engine.as_deref(), Some("vllm"));
    assert_eq!(r.max_concurrency, Some(2));
    assert_eq!(r.request_rate, Some(f64::INFINITY));
    close(metric(r, "mean_ttft_ms"), 215.53594200008774);
    close(metric(r, "output_throughput"), 82.89297074037474);

    for (n, ttft0) in [(4, 217.27289337468392), (8, 46.89306787258829)] {
        let got = read_fixture(&format!(
            "real/vllmbench-er0080-sweep-max_num_seqs={n}-summary.json"
        ));
        assert_eq!(got.records.len(), 2, "{n}");
        // Runs 0 and 1 repeat one configuration: their index is no setting, so they are
        // repeats (one point, a mean of 2), not two configurations.
        assert!(got.records.iter().all(|r| tag(r, "run_number").is_none()));
        assert!(got
            .warnings
            .iter()
            .any(|w| w.message.contains("among repeats of one configuration")));
        for r in &got.records {
            assert_eq!(tag(r, "max_num_seqs"), Some(n.to_string().as_str()));
            assert_eq!(r.max_concurrency, Some(2));
            assert_eq!(r.num_prompts, Some(8));
        }
        close(metric(&got.records[0], "mean_ttft_ms"), ttft0);
        // The summary is the list of its runs' files.
        let one = read_fixture(&format!(
            "real/vllmbench-er0080-sweep-max_num_seqs={n}-run=0.json"
        ));
        assert_eq!(one.records.len(), 1);
        close(metric(&one.records[0], "mean_ttft_ms"), ttft0);
    }
}

/// A guidellm report digest (the author's own CSV of 16 runs): the rate column is `-` where
/// the profile has none (synchronous, concurrent, throughput), so those rows have no rate.
#[test]
fn guidellm_digest_csv_rows_without_a_rate() {
    let got = read_fixture("real/guidellm-pd-disaggregation-all-benchmarks.csv");
    assert_eq!(got.format, Format::GenericCsv);
    assert_eq!(got.records.len(), 16);
    let with_rate = got
        .records
        .iter()
        .filter(|r| r.request_rate.is_some())
        .count();
    assert_eq!(with_rate, 10);
    // sweep[9],constant,18.0,60.0,935,0,138.5,134.6,-,0.0,273.2,57.3,57.4,-,6.365,7.283,...
    let r = got
        .records
        .iter()
        .find(|r| tag(r, "source_file") == Some("sweep[9]"))
        .unwrap();
    assert_eq!(tag(r, "profile"), Some("constant"));
    assert_eq!(r.request_rate, Some(18.0));
    close(metric(r, "mean_ttft_ms"), 138.5);
    close(metric(r, "median_itl_ms"), 57.4);
    close(metric(r, "mean_e2el_ms"), 6365.0);
    assert_eq!(metric(r, "p99_ttft_ms"), None);
}

/// The same runs as the README summarises them: TTFT and ITL medians with `ms` in the cell.
#[test]
fn guidellm_readme_results_table() {
    let got = read_fixture("real/guidellm-pd-disaggregation-readme-results.md");
    assert_eq!(got.format, Format::MarkdownTable);
    assert_eq!(got.records.len(), 7);
    let r = got
        .records
        .iter()
        .find(|r| tag(r, "profile") == Some("Throughput (64)"))
        .unwrap();
    close(metric(r, "median_ttft_ms"), 183.3);
    close(metric(r, "median_itl_ms"), 39.0);
    // Its RPS (0.35, 1.28, 4.62, …) and Requests (22, 78, 278, …) are what each profile
    // achieved in its 60 seconds, not rates or counts anyone set: measurements, said so.
    close(metric(r, "request_throughput"), 12.28);
    close(metric(r, "completed"), 738.0);
    assert!(got
        .records
        .iter()
        .all(|r| r.request_rate.is_none() && r.num_prompts.is_none()));
    let said: Vec<String> = got.warnings.iter().map(|w| w.to_string()).collect();
    assert!(
        said.contains(
            &"column \"RPS\": 3 of its 6 values are not the round rates a benchmark \
             is set to: measured, the achieved request throughput (guessed)"
                .to_string()
        ),
        "{said:?}"
    );
}

/// SGLang's offline runs: random-length runs beside one ShareGPT run. The ShareGPT run's
/// mean lengths (its token totals over its 2,000 requests) are measurements: the file's
/// other runs say what configured lengths are, so those means never join them as lengths.
#[test]
fn sglang_offline_measured_mean_lengths_are_not_lengths() {
    let got = read_fixture("real/h200-llama-3.3-70b-sglang-offline.jsonl");
    assert_eq!(got.records.len(), 7);
    let sharegpt = got
        .records
        .iter()
        .find(|r| r.dataset.as_deref() == Some("sharegpt"))
        .unwrap();
    assert_eq!((sharegpt.input_len, sharegpt.output_len), (None, None));
    assert!(!sharegpt.is_inferred("input_len"));
    close(metric(sharegpt, "extra.mean_input_tokens"), 224.051);
    close(metric(sharegpt, "extra.mean_output_tokens"), 191.532);
    let lengths: std::collections::BTreeSet<_> = got
        .records
        .iter()
        .filter_map(|r| r.input_len)
        .map(|v| v as u64)
        .collect();
    assert_eq!(lengths.into_iter().collect::<Vec<_>>(), [256, 1024, 4096]);
}

// ---- Files nobody here had seen (issue 32's acceptance): tests/fixtures/real/README.md says
// where each comes from.

/// genai-perf's CSV as NVIDIA's cloudai documents it: quoted numbers with thousands separators,
/// and a duration with no canonical name that keeps its unit in its name.
#[test]
fn cloudai_genai_perf_csv_with_thousands_separators() {
    let got = read_fixture("real/cloudai-dynamo-profile_genai_perf.csv");
    assert_eq!(got.format, Format::GenaiPerfCsv);
    assert_eq!(got.records.len(), 1);
    let r = &got.records[0];
    close(metric(r, "mean_ttft_ms"), 1146.31);
    close(metric(r, "p99_e2el_ms"), 9436.13);
    close(metric(r, "p25_itl_ms"), 29.04);
    close(metric(r, "completed"), 40.0);
    close(metric(r, "request_throughput"), 1.5);
    close(metric(r, "output_throughput"), 261.25);
    close(metric(r, "extra.time_to_second_token_ms"), 26.05);
    close(metric(r, "extra.time_to_second_token_p99_ms"), 96.12);
    close(r.input_len, 3000.05);
}

/// h2oGPT's tables: `# Backend: …` and `## Model: … (engine)` headings name the engine and
/// the model; the `gpus` cells name the GPU with its count (not a count alone, which made
/// every GPU of a count one point); `bits` is the precision, a configuration.
#[test]
fn h2ogpt_labelled_headings_and_gpu_name_cells() {
    let got = read_fixture("real/h2ogpt-perf-llama2-7b.md");
    assert_eq!(got.format, Format::MarkdownTable);
    assert_eq!(got.records.len(), 50);
    assert!(got
        .records
        .iter()
        .all(|r| r.model.as_deref() == Some("h2oai/h2ogpt-4096-llama2-7b-chat")));
    let engines: std::collections::BTreeSet<_> = got
        .records
        .iter()
        .filter_map(|r| r.engine.as_deref())
        .collect();
    assert_eq!(
        engines.into_iter().collect::<Vec<_>>(),
        ["tgi", "transformers"]
    );
    let cpu = &got.records[0];
    assert_eq!(cpu.gpu.as_deref(), Some("CPU"));
    assert_eq!(cpu.precision.as_deref(), Some("16"));
    close(metric(cpu, "extra.generation_speed_tokens_sec"), 1.17546);
    let a100x2 = got
        .records
        .iter()
        .find(|r| {
            r.engine.as_deref() == Some("transformers")
                && r.gpu.as_deref() == Some("NVIDIA A100-SXM4-80GB (81920 MiB)")
                && r.gpu_count == Some(2)
                && r.precision.as_deref() == Some("16")
        })
        .expect("the transformers 2 x A100 16-bit row");
    close(metric(a100x2, "extra.summarization_time_sec"), 39.9269);
    close(metric(a100x2, "extra.generation_speed_tokens_sec"), 32.248);
    let tgi = got
        .records
        .iter()
        .find(|r| r.engine.as_deref() == Some("tgi"))
        .unwrap();
    assert_eq!(
        tgi.gpu.as_deref(),
        Some("NVIDIA RTX 6000 Ada Generation (49140 MiB)")
    );
    assert_eq!(tgi.gpu_count, Some(1));
    close(metric(tgi, "extra.generation_speed_tokens_sec"), 55.2139);
}

/// guidellm 0.2's console report pasted in a lab guide: one record per benchmark, the
/// strategy's rate as configured (0.69 is a rate someone set), the request latency in seconds
/// under its `(ms)` header, the lengths asked for from the metadata.
#[test]
fn guidellm_console_report_in_a_lab_guide() {
    for (file, rows, model_rate, e2el) in [
        (
            "real/ibm-techxchange-guidellm-two-gpus.md",
            10,
            0.69,
            4540.0,
        ),
        ("real/ibm-techxchange-guidellm-one-gpu.md", 10, 0.5, 7000.0),
    ] {
        let got = read_fixture(file);
        assert_eq!(got.format, Format::Guidellm, "{file}");
        assert_eq!(got.records.len(), rows, "{file}");
        let sync = &got.records[0];
        assert_eq!(sync.max_concurrency, Some(1));
        assert_eq!(tag(sync, "strategy"), Some("synchronous"));
        assert_eq!(got.records[1].request_rate, Some(f64::INFINITY));
        let constant = &got.records[2];
        assert_eq!(constant.request_rate, Some(model_rate));
        assert!(!constant.is_inferred("request_rate"));
        close(metric(constant, "mean_e2el_ms"), e2el);
        assert_eq!(
            (constant.input_len, constant.output_len),
            (Some(512.0), Some(256.0))
        );
        assert_eq!(
            constant.model.as_deref(),
            Some("/root/.cache/instructlab/models/ibm-granite/granite-3.3-8b-instruct")
        );
        close(metric(constant, "completed"), 30.0);
        assert!(
            got.warnings
                .iter()
                .any(|w| w.message.contains("Req Latency read as seconds")),
            "{:?}",
            got.warnings
        );
    }
    let got = read_fixture("real/ibm-techxchange-guidellm-two-gpus.md");
    let c = &got.records[2];
    close(metric(c, "request_throughput"), 0.65);
    close(metric(c, "mean_ttft_ms"), 71.9);
    close(metric(c, "p99_ttft_ms"), 80.0);
    // guidellm's ITL is vLLM's TPOT; its own TPOT (first token included) stays apart.
    close(metric(c, "mean_tpot_ms"), 17.5);
    close(metric(c, "extra.time_per_output_token_ms"), 17.5);
    close(metric(c, "extra.request_concurrency"), 2.93);
    close(metric(c, "output_throughput"), 165.1);
    close(metric(c, "total_token_throughput"), 825.3);
    assert_eq!(tag(c, "section"), Some("Performance run 2"));
}

/// The lab guide's report as an author might mark it up: the throughput row in bold and its
/// total tokens a second with a thousands separator. Its cells read as every markdown table's
/// do (the shared cell splitter and number reader), so the row keeps its figures.
#[test]
fn guidellm_console_row_in_bold_reads_as_the_others() {
    let text =
        String::from_utf8(common::fixture("real/ibm-techxchange-guidellm-one-gpu.md")).unwrap();
    let plain = "   throughput|       2.94|       29.63|       752.3|      3760.9|";
    let bold = "   **throughput**|  **2.94**| **29.63**| **752.3**| **3,760.9**|";
    assert!(text.contains(plain));
    let got = benchlens::ingest::read("lab.md", text.replacen(plain, bold, 1).as_bytes()).unwrap();
    assert_eq!(got.records.len(), 10);
    let r = &got.records[1];
    assert_eq!(tag(r, "strategy"), Some("throughput"));
    assert_eq!(r.request_rate, Some(f64::INFINITY));
    close(metric(r, "request_throughput"), 2.94);
    close(metric(r, "extra.request_concurrency"), 29.63);
    close(metric(r, "output_throughput"), 752.3);
    close(metric(r, "total_token_throughput"), 3760.9);
    close(metric(r, "mean_ttft_ms"), 868.5);
}

/// Two guidellm sweeps in one README, under `### No IB` and `### IB`: the section tells them
/// apart; rows of zeros completed no request (the info table says so) and measure nothing.
#[test]
fn guidellm_console_sweeps_with_runs_that_completed_nothing() {
    let got = read_fixture("real/llm-k8s-guidellm-vs-inference-perf.md");
    assert_eq!(got.format, Format::Guidellm);
    assert_eq!(got.records.len(), 20);
    let sections: Vec<_> = got.records.iter().map(|r| tag(r, "section")).collect();
    assert_eq!(sections[0], Some("No IB"));
    assert_eq!(sections[19], Some("IB"));
    assert!(got
        .records
        .iter()
        .all(|r| r.model.as_deref() == Some("deepseek-ai/DeepSeek-V2.5")
            && r.input_len == Some(256.0)
            && r.output_len == Some(128.0)));
    let throughput = &got.records[1];
    close(metric(throughput, "completed"), 224.0);
    close(metric(throughput, "mean_e2el_ms"), 28300.0);
    close(metric(throughput, "median_ttft_ms"), 2239.4);
    let none = &got.records[7];
    assert_eq!(none.request_rate, Some(5.71));
    close(metric(none, "completed"), 0.0);
    assert_eq!(metric(none, "mean_ttft_ms"), None);
    assert_eq!(metric(none, "mean_e2el_ms"), None);
    // IB's synchronous run left its one request incomplete.
    let ib_sync = &got.records[10];
    assert_eq!(tag(ib_sync, "section"), Some("IB"));
    close(metric(ib_sync, "completed"), 0.0);
    assert_eq!(metric(ib_sync, "mean_ttft_ms"), None);
}

/// vLLM and SGLang summaries in mkdocs blocks: an engine named on a line of its own lasts
/// only to the next section, whose heading may name its own (`### 2. Async scheduling in
/// vLLM`), so no vLLM run is drawn as TensorRT-LLM's.
#[test]
fn console_engine_lines_end_at_the_next_section() {
    let got = read_fixture("real/gpustack-gpt-oss-20b-a100.md");
    assert_eq!(got.format, Format::VllmConsole);
    assert_eq!(got.records.len(), 13);
    let engines: Vec<_> = got.records.iter().map(|r| r.engine.as_deref()).collect();
    assert_eq!(
        engines[..5],
        [
            Some("vllm"),
            Some("sglang"),
            Some("vllm"),
            Some("vllm"),
            Some("vllm")
        ]
    );
    assert!(engines.iter().all(|e| *e != Some("trtllm")));
    close(metric(&got.records[0], "total_token_throughput"), 9743.28);
    close(metric(&got.records[1], "mean_ttft_ms"), 140888.75);
    let async_sched = &got.records[2];
    assert_eq!(
        tag(async_sched, "section"),
        Some("Async scheduling in vLLM")
    );
    close(metric(async_sched, "total_token_throughput"), 10919.92);
    assert_eq!(tag(&got.records[5], "section"), Some("random 32K input"));
    close(metric(&got.records[5], "mean_tpot_ms"), 268.03);
}

/// vLLM's throughput and latency JSON, whose lengths only the file name says
/// (`throughput_test_ip2048_op2048_np64`, `throughput_req64_in2048_out2048_`).
#[test]
fn vllm_throughput_and_latency_json_lengths_from_the_name() {
    let got = read_fixture("real/dstack-nvidia-throughput_test_ip2048_op2048_np64.json");
    assert_eq!(got.format, Format::VllmThroughput);
    let r = &got.records[0];
    assert_eq!((r.input_len, r.output_len), (Some(2048.0), Some(2048.0)));
    assert_eq!(r.num_prompts, Some(64));
    assert!(r.is_inferred("input_len"));
    close(metric(r, "total_token_throughput"), 998.7796751286725);
    close(metric(r, "request_throughput"), 0.24384269412321105);
    close(metric(r, "duration_s"), 262.4642917030005);

    let got = read_fixture("real/dstack-nvidia-latency_test_ip2048_op2048_np64.json");
    assert_eq!(got.format, Format::VllmLatency);
    let r = &got.records[0];
    close(metric(r, "mean_e2el_ms"), 262681.2863750001);
    close(metric(r, "p99_e2el_ms"), 262_691.466_174_979_6);
    assert_eq!((r.input_len, r.output_len), (Some(2048.0), Some(2048.0)));
    // `benchmark_latency.py` times one batch (`--batch-size`); dstack's `np64` is that batch
    // (its README: "at input_len=2048 and output_len=2048 across different batch sizes").
    assert_eq!((r.batch_size, r.num_prompts), (Some(64), None));
    assert!(r.is_inferred("batch_size"));

    let got = read_fixture(
        "real/dstack-mi300x-Meta-Llama-3.1-405B-Instruct-FP8-KV_throughput_req64_in2048_out2048_.json",
    );
    let r = &got.records[0];
    assert_eq!(r.gpu.as_deref(), Some("mi300x"));
    assert_eq!(r.precision.as_deref(), Some("fp8"));
    assert_eq!(r.num_prompts, Some(64));
    assert_eq!((r.input_len, r.output_len), (Some(2048.0), Some(2048.0)));
    close(metric(r, "total_token_throughput"), 2091.173865562226);
}

/// A serving result whose lengths the name states (`in2048_out128`): the lengths asked for,
/// not the means of what the run produced, which stay as measurements.
#[test]
fn configured_lengths_from_the_name_beat_means_from_totals() {
    let got = read_fixture("real/dstack-pd-ratio-1p3d_conc32_in2048_out128_20250923_033843.json");
    assert_eq!(got.format, Format::VllmServing);
    let r = &got.records[0];
    assert_eq!((r.input_len, r.output_len), (Some(2048.0), Some(128.0)));
    close(metric(r, "extra.mean_input_tokens"), 2046.202);
    close(metric(r, "extra.mean_output_tokens"), 62.182);
    assert_eq!(r.max_concurrency, Some(32));
    close(metric(r, "mean_ttft_ms"), 206.46865444199648);
}

/// dstack's CSVs of those runs: vLLM throughput's `tokens_per_second` beside
/// `total_num_tokens`, or whose values times the latency are the prompt and output tokens, is
/// the total; `requests_per_second` is the request throughput; an
/// `end_to_end_latency` of 71.27 for 2,048 output tokens is seconds; `total_output_tokens` is
/// a count, not a throughput.
#[test]
fn dstack_csvs_units_and_totals() {
    let got = read_fixture("real/dstack-throughput_comparsion.csv");
    assert_eq!(got.format, Format::GenericCsv);
    assert_eq!(got.records.len(), 93);
    let r = &got.records[0];
    assert_eq!(r.gpu.as_deref(), Some("H100 1FP8-meta"));
    assert_eq!(r.gpu_count, Some(8));
    assert_eq!(
        (r.input_len, r.output_len, r.batch_size),
        (Some(32784.0), Some(2048.0), Some(4))
    );
    close(metric(r, "total_token_throughput"), 590.0635218);
    close(metric(r, "request_throughput"), 0.016940271);
    assert_eq!(metric(r, "output_throughput"), None);

    let got = read_fixture("real/dstack-throughput_latency_curve.csv");
    assert_eq!(got.records.len(), 93);
    let r = &got.records[0];
    close(metric(r, "mean_e2el_ms"), 71273.94036);
    // No total_num_tokens beside it, but its values say what it is: 122.12 tokens a second
    // over 71.27 s is 4 × (128 + 2,048) tokens, prompts included.
    close(metric(r, "total_token_throughput"), 122.1203704);
    assert_eq!(metric(r, "output_throughput"), None);
    assert!(got
        .warnings
        .iter()
        .any(|w| w.message.contains("end_to_end_latency") && w.message.contains("seconds")));

    let got = read_fixture("real/dstack-qps_comparison.csv");
    assert_eq!(got.records.len(), 15);
    let r = &got.records[0];
    assert_eq!(r.request_rate, Some(16.0));
    close(metric(r, "extra.total_output_tokens"), 120689.0);
    close(metric(r, "mean_ttft_ms"), 1486.393741);
    close(metric(r, "output_throughput"), 1198.88845);
}

/// inference-perf's table beside guidellm's report (read by it) says its latency in seconds
/// only by its values: read as a table alone, `avg_time_per_request` of 4.2 for 30 output
/// tokens is seconds.
#[test]
fn request_latency_too_fast_per_output_token_is_seconds() {
    let text = std::fs::read_to_string(format!(
        "{}/tests/fixtures/real/llm-k8s-guidellm-vs-inference-perf.md",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let table: String = text.lines().take(22).collect::<Vec<_>>().join("\n");
    let got = benchlens::ingest::read("inference-perf.md", table.as_bytes()).unwrap();
    assert_eq!(got.records.len(), 10);
    close(metric(&got.records[0], "mean_e2el_ms"), 4202.913660966805);
    assert_eq!(got.records[9].request_rate, Some(275.0));
    close(
        metric(&got.records[9], "extra.avg_output_tokens"),
        29.998405885959535,
    );
}

/// llama-bench's table pasted in an issue, and a hand-made one of `mean ± spread t/s` cells
/// with a row of differences under the runs (no run: skipped with a warning).
#[test]
fn llama_bench_tables_from_threads() {
    let got = read_fixture("real/geerlingguy-issue20-llama-bench-rx580.md");
    assert_eq!(got.records.len(), 4);
    let tests: Vec<_> = got.records.iter().map(|r| tag(r, "test")).collect();
    assert_eq!(
        tests,
        [
            Some("pp512"),
            Some("pp4096"),
            Some("tg128"),
            Some("pp4096+tg128")
        ]
    );
    close(metric(&got.records[2], "extra.tokens_per_s"), 36.23);
    close(metric(&got.records[2], "extra.tokens_per_s_stddev"), 17.62);
    assert_eq!(tag(&got.records[0], "backend"), Some("Vulkan"));

    // The tests' names as column headers: each row gives a record per test, as llama-bench's
    // own outputs do, with the `± spread` as the same stddev metric.
    let got = read_fixture("real/nix-amd-ai-pr129-rocm-vs-vulkan.md");
    let read: Vec<_> = got
        .records
        .iter()
        .map(|r| {
            (
                tag(r, "backend").unwrap(),
                tag(r, "test").unwrap(),
                metric(r, "extra.tokens_per_s").unwrap(),
                metric(r, "extra.tokens_per_s_stddev").unwrap(),
            )
        })
        .collect();
    assert_eq!(
        read,
        [
            ("ROCm (patched)", "pp512", 1900.72, 33.74),
            ("ROCm (patched)", "tg128", 58.38, 0.11),
            ("Vulkan", "pp512", 2001.00, 2.60),
            ("Vulkan", "tg128", 62.39, 0.04),
        ]
    );
    assert!(got
        .records
        .iter()
        .all(|r| r.engine.as_deref() == Some("llama.cpp") && r.metrics.len() == 2));
    assert!(got
        .warnings
        .iter()
        .any(|w| w.message == "no measured value for pp512, skipped"));
}

/// The Strix Halo summary's per-test columns (`pp512`, `tg128`) are llama-bench's test
/// dimension, each run's settings (`hipblaslt`, `-fa`) tags and its peak memory measured; its
/// sweeps' length columns (`1` … `4096` under `### PP sweep`) are the tests `pp1` … `pp4096`.
#[test]
fn llama_bench_test_columns_with_settings_and_memory() {
    let got = read_fixture("real/strix-halo-llama-2-7b-q4_0.md");
    assert_eq!(got.records.len(), 12 * 2 + 2 * 12 * 13);
    assert!(got.records.iter().all(|r| tag(r, "test").is_some()));
    let summary = &got.records[..24];
    let (pp, tg) = (&summary[2], &summary[3]);
    for (r, test) in [(pp, "pp512"), (tg, "tg128")] {
        assert_eq!(tag(r, "test"), Some(test));
        assert_eq!(tag(r, "backend"), Some("llama.cpp-hip"));
        assert_eq!(tag(r, "hipblaslt"), Some("1"));
        assert_eq!(r.engine.as_deref(), Some("llama.cpp"));
        close(metric(r, "extra.max_mem"), 6614.0);
    }
    close(metric(pp, "extra.tokens_per_s"), 975.304354);
    close(metric(tg, "extra.tokens_per_s"), 49.433559);
    close(metric(&summary[19], "extra.tokens_per_s"), 46.727175);
    assert_eq!(tag(&summary[19], "fa"), Some("-fa 1"));
    let sweep = |i: usize| {
        let r = &got.records[i];
        (
            tag(r, "backend").unwrap(),
            tag(r, "test").unwrap(),
            metric(r, "extra.tokens_per_s").unwrap(),
        )
    };
    assert_eq!(sweep(24), ("llama.cpp-hip", "pp1", 50.041847));
    assert_eq!(sweep(24 + 12), ("llama.cpp-hip", "pp4096", 269.159029));
    assert_eq!(sweep(24 + 12 * 13), ("llama.cpp-hip", "tg1", 50.308884));
    assert_eq!(
        sweep(got.records.len() - 1),
        ("llama.cpp-vulkan_radv", "tg4096", 39.817895)
    );
}

/// What is not yet read as its author meant, pinned so a change shows: optimum-benchmark's
/// `metric | value | unit` tables are read a row per metric. `# load_model:` is no model name.
#[test]
fn tables_read_but_not_yet_as_meant() {
    let got = read_fixture("real/optimum-benchmark-llama8b-fbgemm-report.md");
    assert_eq!(got.records.len(), 49);
    assert!(got.records.iter().all(|r| r.model.is_none()));
    close(metric(&got.records[0], "extra.value"), 6499.05);
}
