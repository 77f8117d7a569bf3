//! vLLM serving JSON in every container: one object, a list, JSON Lines, JSON Lines fenced in
//! a report (seed 001).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod common;

use benchlens::ingest::{self, Format};
use common::{close, metric, read_fixture};

#[test]
fn seed_001_report_with_fenced_json_lines() {
    let got = read_fixture("seeds/001_b815cef7710eda19.txt");
    assert_eq!(got.format, Format::VllmServing);
    assert_eq!(got.records.len(), 12);
    let sgl30 = got
        .records
        .iter()
        .find(|r| r.engine.as_deref() == Some("sgl") && r.request_rate == Some(30.0))
        .unwrap();
    close(metric(sgl30, "mean_ttft_ms"), 765.7915526845803);
    let vllm10 = got
        .records
        .iter()
        .find(|r| r.engine.as_deref() == Some("vllm") && r.request_rate == Some(10.0))
        .unwrap();
    assert_eq!(
        format!("{:.2}", metric(vllm10, "mean_ttft_ms").unwrap()),
        "56.90"
    );
    assert_eq!(
        vllm10.model.as_deref(),
        Some("meta-llama/Llama-3.1-8B-Instruct")
    );
    assert_eq!(vllm10.num_prompts, Some(1200));
    assert_eq!(vllm10.input_len, Some(1000.0));
    assert!(vllm10.is_inferred("input_len"));
    assert_eq!(vllm10.output_len, Some(100.0));
    close(metric(vllm10, "duration_s"), 125.04089621501043);
    let inf = got
        .records
        .iter()
        .filter(|r| r.request_rate == Some(f64::INFINITY))
        .count();
    assert_eq!(inf, 2);
    for r in &got.records {
        assert_eq!(r.source.as_deref(), Some("001_b815cef7710eda19.txt"));
        assert_eq!(r.format.as_deref(), Some("vllm_serving"));
        assert!(r.tags.is_empty(), "{:?}", r.tags);
    }
}

#[test]
fn single_object_with_per_request_arrays_metadata_and_file_name() {
    let got =
        read_fixture("vllm/vllm-4qps-concurrency8-Llama-3.1-8B-Instruct-20250301-101500.json");
    assert_eq!(got.format, Format::VllmServing);
    assert_eq!(got.records.len(), 1);
    let r = &got.records[0];
    assert_eq!(r.model.as_deref(), Some("meta-llama/Llama-3.1-8B-Instruct"));
    assert_eq!(r.max_concurrency, Some(8));
    assert!(!r.is_inferred("max_concurrency"));
    // Metadata: dimension names become dimensions, others tags.
    assert_eq!(r.gpu.as_deref(), Some("H100"));
    assert_eq!(r.tp, Some(2));
    assert_eq!(r.tags.get("node").map(String::as_str), Some("a7"));
    assert_eq!(
        r.tags.get("endpoint_type").map(String::as_str),
        Some("vllm")
    );
    // File name fills only what the content lacks: the label.
    assert_eq!(r.label.as_deref(), Some("vllm"));
    assert!(r.is_inferred("label"));
    close(metric(r, "p99.9_ttft_ms"), 69.98);
    close(metric(r, "mean_e2el_ms"), 101.0);
    close(metric(r, "extra.max_output_tokens_per_s"), 10.0);
    assert_eq!(r.requests.len(), 3);
    close(r.requests[1].ttft_ms, 60.0);
    assert_eq!(r.requests[0].itl_ms.len(), 3);
    close(r.requests[0].itl_ms.get(1), 12.0);
    assert_eq!(r.requests[2].input_len, Some(100));
    assert_eq!(r.requests[2].output_len, Some(4));
    assert_eq!(r.requests[0].error, None);
}

#[test]
fn json_lines_with_infinity_nan_strings_and_a_truncated_line() {
    let got = read_fixture("vllm/runs.jsonl");
    assert_eq!(got.format, Format::VllmServing);
    assert_eq!(got.records.len(), 2, "{:?}", got.warnings);
    let first = &got.records[0];
    assert_eq!(first.request_rate, Some(f64::INFINITY));
    close(metric(first, "duration_s"), 12.5);
    close(metric(first, "output_throughput"), 1024.0);
    close(metric(first, "request_goodput"), 7.5);
    close(metric(first, "p90_ttft_ms"), 400.0);
    assert!(metric(first, "mean_itl_ms").unwrap().is_nan());
    assert_eq!(first.input_len, Some(1024.0));
    assert_eq!(first.engine.as_deref(), Some("vllm"));
    assert_eq!(got.records[1].request_rate, Some(16.0));
    assert!(
        got.warnings
            .iter()
            .any(|w| w.to_string().starts_with("line 2: invalid JSON")),
        "{:?}",
        got.warnings
    );
}

#[test]
fn list_of_runs() {
    let got = read_fixture("vllm/list.json");
    assert_eq!(got.records.len(), 2);
    assert_eq!(got.records[1].request_rate, Some(2.0));
    // `openai-chat` is the protocol vLLM's client spoke, not an engine.
    assert_eq!(got.records[1].engine, None);
    assert_eq!(
        got.records[1].tags.get("backend").map(String::as_str),
        Some("openai-chat")
    );
}

#[test]
fn invalid_json_names_file_line_and_column() {
    let e = ingest::read(
        "run.json",
        b"{\n  \"request_throughput\": 1,\n  \"x\": tru }",
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("run.json: invalid JSON at line 3, column"),
        "{e}"
    );
}

#[test]
fn detection_is_from_content_not_extension() {
    let d = ingest::detect(
        "results.csv",
        br#"{"request_throughput": 1.0, "mean_ttft_ms": 2}"#,
    );
    assert_eq!(d.format, Some(Format::VllmServing));
}

#[test]
fn numbers_as_strings_with_units_and_separators() {
    let got = ingest::read(
        "run.json",
        br#"{"model_id": "m", "num_prompts": "1,000", "request_rate": "inf", "duration": "12.5",
            "completed": "1,000", "mean_ttft_ms": "1.5 s", "median_ttft_ms": "900 ms",
            "output_throughput": "2,345.5", "max_concurrency": "64 users"}"#,
    )
    .unwrap();
    let r = &got.records[0];
    assert_eq!(r.num_prompts, Some(1000));
    assert_eq!(r.max_concurrency, Some(64));
    close(metric(r, "mean_ttft_ms"), 1500.0);
    close(metric(r, "median_ttft_ms"), 900.0);
    close(metric(r, "output_throughput"), 2345.5);
    close(metric(r, "completed"), 1000.0);
}

#[test]
fn mean_lengths_from_totals_written_with_a_unit() {
    // The totals are read as every other figure is (here with a unit), so the mean lengths
    // follow from them as in a console summary; the serving reader used to infer them only
    // from bare numbers.
    let got = ingest::read(
        "run.json",
        br#"{"model_id": "m", "completed": 4, "total_input_tokens": "4,096 tokens",
            "total_output_tokens": 512, "mean_ttft_ms": 10}"#,
    )
    .unwrap();
    let r = &got.records[0];
    assert_eq!(r.input_len, Some(1024.0));
    assert_eq!(r.output_len, Some(128.0));
    assert_eq!(
        r.inferred.get("input_len").map(String::as_str),
        Some("total_input_tokens / completed")
    );
    // No completed requests: nothing to divide by.
    let got = ingest::read(
        "run.json",
        br#"{"model_id": "m", "completed": 0, "total_input_tokens": 4096, "mean_ttft_ms": 10}"#,
    )
    .unwrap();
    assert_eq!(got.records[0].input_len, None);
}
