//! vLLM performance-suite results: markdown tables, the column-dict JSON in the report, and
//! benchmark_results.json.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod common;

use benchlens::ingest::Format;
use common::{close, metric, read_fixture};

#[test]
fn markdown_tables_of_all_three_sections() {
    let got = read_fixture("perfsuite/benchmark_results_tables.md");
    assert_eq!(got.format, Format::VllmPerfSuite);
    assert_eq!(got.records.len(), 5, "{:?}", got.warnings);
    let lat = &got.records[0];
    assert_eq!(lat.label.as_deref(), Some("latency_llama8B_tp1"));
    assert_eq!(lat.model.as_deref(), Some("llama8B"));
    assert!(lat.is_inferred("model"));
    assert_eq!(lat.tp, Some(1));
    assert_eq!(lat.gpu.as_deref(), Some("H100"));
    assert_eq!(lat.gpu_count, Some(1));
    close(metric(lat, "mean_e2el_ms"), 1052.43);
    close(metric(lat, "p99_e2el_ms"), 1060.12);
    assert_eq!(got.records[1].gpu_count, Some(4));
    let tput = &got.records[2];
    assert_eq!(tput.num_prompts, Some(200));
    close(metric(tput, "duration_s"), 7.26);
    close(metric(tput, "total_token_throughput"), 12611.62);
    close(metric(tput, "extra.total_num_tokens"), 91556.0);
    let s4 = &got.records[3];
    assert_eq!(
        s4.model.as_deref(),
        Some("meta-llama/Meta-Llama-3.1-8B-Instruct")
    );
    assert!(!s4.is_inferred("model"));
    assert_eq!(s4.request_rate, Some(4.0));
    assert_eq!(s4.dataset.as_deref(), Some("sharegpt"));
    assert_eq!(s4.precision.as_deref(), Some("bfloat16"));
    assert_eq!(s4.gpu.as_deref(), Some("H100"));
    assert_eq!(s4.gpu_count, Some(8));
    assert_eq!(s4.input_len, Some(240.0));
    assert_eq!(s4.max_concurrency, Some(200));
    close(metric(s4, "total_token_throughput"), 1582.41);
    close(metric(s4, "p99_itl_ms"), 23.44);
    assert_eq!(got.records[4].request_rate, Some(f64::INFINITY));
    assert!(got
        .records
        .iter()
        .all(|r| r.engine.as_deref() == Some("vllm")));
}

#[test]
fn column_dict_json_in_the_report_is_preferred() {
    let got = read_fixture("perfsuite/benchmark_results.md");
    assert_eq!(got.format, Format::VllmPerfSuite);
    assert_eq!(got.records.len(), 5, "{:?}", got.warnings);
    let mixtral = got
        .records
        .iter()
        .find(|r| r.label.as_deref() == Some("latency_mixtral8x7B_tp2"))
        .unwrap();
    assert_eq!(mixtral.tp, Some(2));
    assert_eq!(mixtral.gpu_count, Some(2));
    close(metric(mixtral, "median_e2el_ms"), 2211.9);
    let s16 = got
        .records
        .iter()
        .find(|r| r.request_rate == Some(16.0))
        .unwrap();
    assert_eq!(s16.model.as_deref(), Some("llama70B"));
    assert_eq!(s16.tp, Some(4));
    close(metric(s16, "p99_ttft_ms"), 303.8);
}

#[test]
fn benchmark_results_json_list_with_bare_median_and_p99_as_tpot() {
    let got = read_fixture("perfsuite/benchmark_results.json");
    assert_eq!(got.format, Format::VllmPerfSuite);
    assert_eq!(got.records.len(), 2);
    let a = &got.records[0];
    assert_eq!(a.gpu_count, Some(1));
    assert_eq!(a.gpu.as_deref(), Some("Standard_ND96asr_v4 x 1"));
    close(metric(a, "median_tpot_ms"), 8.8);
    close(metric(a, "p99_tpot_ms"), 11.2);
    close(metric(a, "total_token_throughput"), 1590.2);
    let b = &got.records[1];
    assert_eq!(b.tp, Some(8));
    assert_eq!(b.pp, Some(1));
    assert_eq!(b.request_rate, Some(f64::INFINITY));
    assert_eq!(b.gpu.as_deref(), Some("H100"));
}
