//! The user's own files (tests/fixtures/seeds), read with concrete values checked.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod common;

use benchlens::ingest::Format;
use common::{close, metric, read_fixture};

#[test]
fn seed_003_console_blocks_with_context_lines() {
    let got = read_fixture("seeds/003_902df92d1b3a4732.txt");
    assert_eq!(got.format, Format::VllmConsole);
    assert_eq!(got.records.len(), 23, "{:?}", got.warnings);
    for r in &got.records {
        assert_eq!(r.engine.as_deref(), Some("vllm"));
        assert!(r.is_inferred("engine"));
    }
    let r1024 = got
        .records
        .iter()
        .find(|r| r.num_prompts == Some(1024))
        .unwrap();
    assert_eq!(r1024.input_len, Some(80.0));
    assert!(r1024.is_inferred("input_len"));
    assert!(r1024.inferred["input_len"].starts_with("context line 4"));
    close(metric(r1024, "output_throughput"), 434.89);
    close(metric(r1024, "completed"), 1024.0);
    // Second group: seq_length 10000, 7 blocks.
    let second: Vec<_> = got.records[12..19].iter().collect();
    assert!(second.iter().all(|r| r.input_len == Some(10000.0)));
    assert_eq!(second[6].num_prompts, Some(64));
    // Third group: num_prompt:1 applies to all four; input length from the block itself.
    let third = &got.records[19..];
    assert!(third.iter().all(|r| r.num_prompts == Some(1)));
    assert_eq!(third[0].input_len, Some(128000.0));
    close(metric(&third[0], "mean_ttft_ms"), 734188.96);
    close(metric(&got.records[0], "p99_itl_ms"), 94.22);
    close(metric(&got.records[0], "duration_s"), 4.53);
}

#[test]
fn seed_000_pandas_wide_table_melts_into_one_record_per_gpu() {
    let got = read_fixture("seeds/000_258d36619a7af95a.txt");
    assert_eq!(got.format, Format::PandasText);
    assert_eq!(
        got.records.len(),
        1402,
        "{:?}",
        &got.warnings[..got.warnings.len().min(5)]
    );
    let pick = |gpu: &str| {
        got.records
            .iter()
            .find(|r| {
                r.model.as_deref() == Some("Codellama-13b-hf")
                    && r.gpu_count == Some(1)
                    && r.batch_size == Some(512)
                    && r.gpu.as_deref() == Some(gpu)
            })
            .unwrap_or_else(|| panic!("{gpu}"))
    };
    close(metric(pick("A100"), "extra.throughput"), 126.342806);
    close(metric(pick("Tesla"), "extra.throughput"), 30.718344);
    let tesla = pick("Tesla");
    assert_eq!(tesla.engine.as_deref(), Some("vllm"));
    assert_eq!(tesla.tags.get("status").map(String::as_str), Some("ok"));
    // The file's own Improvement figure is kept on both records of its row, as printed.
    assert_eq!(tesla.metrics.len(), 2);
    assert_eq!(
        metric(tesla, "extra.reported_improvement_pct"),
        metric(pick("A100"), "extra.reported_improvement_pct")
    );
    assert_eq!(
        metric(tesla, "extra.reported_improvement_pct"),
        Some(311.294330)
    );
    let m = |col: &str| got.mapping.iter().find(|m| m.column == col).unwrap();
    assert_eq!(
        m("Improvement").target.as_deref(),
        Some("extra.reported_improvement_pct")
    );
    assert_eq!(m("throughput_tesla").gpu.as_deref(), Some("Tesla"));
    assert_eq!(m("nrGPUs_a100").target.as_deref(), Some("gpu_count"));
    assert_eq!(m("nrGPUs_a100").gpu, None);
    assert_eq!(m("errors_l_a100").target.as_deref(), Some("tag.status"));
}

#[test]
fn seed_002_markdown_tables_take_context_from_headings() {
    let got = read_fixture("seeds/002_44f3a8b9f2336bbb.txt");
    assert_eq!(got.format, Format::MarkdownTable);
    assert_eq!(got.records.len(), 32, "{:?}", got.warnings);
    for r in &got.records {
        assert_eq!(r.model.as_deref(), Some("Mistral-7B-OpenOrca-AWQ"));
        assert_eq!(r.gpu.as_deref(), Some("A100 40G"));
    }
    let r = got
        .records
        .iter()
        .find(|r| {
            r.engine.as_deref() == Some("tgi")
                && r.input_len == Some(512.0)
                && r.output_len == Some(1024.0)
        })
        .unwrap();
    assert_eq!(r.engine_version.as_deref(), Some("v1.3.4"));
    assert!(r.is_inferred("engine"));
    close(metric(r, "request_throughput"), 2.82);
    close(metric(r, "output_throughput"), 772.32);
    close(metric(r, "extra.average_latency_per_token_ms"), 2.92);
    close(
        metric(r, "extra.average_latency_per_output_token_ms"),
        20.69,
    );
    let vllm = got
        .records
        .iter()
        .filter(|r| r.engine.as_deref() == Some("vllm"))
        .count();
    assert_eq!(vllm, 16);
}

#[test]
fn seed_004_template_has_no_records_and_says_why() {
    let got = read_fixture("seeds/004_adfd865e97a7b47c.txt");
    assert_eq!(got.format, Format::VllmPerfSuite);
    assert!(got.records.is_empty());
    assert!(got.note.unwrap().contains("template"));
}
