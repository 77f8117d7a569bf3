//! Tables: generic tidy CSV, wide CSV, generic markdown, TGI benchmark tables, canonical
//! JSON/CSV round trips, and re-reading with a user-changed mapping.

mod common;

use benchlens::ingest::{self, Format};
use benchlens::model::canonical;
use common::{close, fixture, metric, read_fixture};

#[test]
fn tidy_csv_maps_columns_by_name_and_unit() {
    let got = read_fixture("tables/tidy.csv");
    assert_eq!(got.format, Format::GenericCsv);
    assert_eq!(got.records.len(), 3, "{:?}", got.warnings);
    let r = &got.records[0];
    assert_eq!(r.model.as_deref(), Some("llama-8b"));
    assert_eq!(r.gpu.as_deref(), Some("H100"));
    assert_eq!(r.batch_size, Some(8));
    assert_eq!(r.max_concurrency, Some(16));
    assert_eq!(r.input_len, Some(1024.0));
    close(metric(r, "mean_ttft_ms"), 45.2);
    close(metric(r, "mean_tpot_ms"), 8.1);
    close(metric(r, "p99_itl_ms"), 22.5);
    close(metric(r, "output_throughput"), 2345.6);
    close(metric(r, "request_throughput"), 18.3);
    assert_eq!(r.tags.get("node").map(String::as_str), Some("a7"));
    let m = |c: &str| got.mapping.iter().find(|m| m.column == c).unwrap().clone();
    assert_eq!(m("tpot_s").scale, 1000.0);
    assert_eq!(m("TTFT (ms)").target.as_deref(), Some("mean_ttft_ms"));
    let w: Vec<String> = got.warnings.iter().map(|w| w.to_string()).collect();
    assert!(
        w.iter()
            .any(|w| w.starts_with("line 4: 3 cells where the header has 12")),
        "{w:?}"
    );
    assert!(
        w.iter().any(|w| w.starts_with("line 4: no measured value")),
        "{w:?}"
    );
    assert!(w.iter().any(|w| w.starts_with("line 5: 13 cells")), "{w:?}");
}

#[test]
fn user_mapping_overrides_the_automatic_one() {
    let bytes = fixture("tables/tidy.csv");
    let first = ingest::read("tidy.csv", &bytes).unwrap();
    let mut mapping = first.mapping.clone();
    for m in &mut mapping {
        if m.column == "Throughput (tok/s)" {
            m.target = Some("total_token_throughput".into());
        }
        if m.column == "node" {
            m.target = None;
        }
    }
    let again = ingest::read_with_mapping("tidy.csv", &bytes, &mapping).unwrap();
    let r = &again.records[0];
    close(metric(r, "total_token_throughput"), 2345.6);
    assert_eq!(metric(r, "output_throughput"), None);
    assert!(r.tags.is_empty());
    assert_eq!(again.mapping, mapping);
}

#[test]
fn wide_csv_with_other_gpu_suffixes() {
    let got = read_fixture("tables/wide.csv");
    assert_eq!(got.format, Format::GenericCsv);
    assert_eq!(got.records.len(), 3, "{:?}", got.warnings);
    let h100: Vec<_> = got
        .records
        .iter()
        .filter(|r| r.gpu.as_deref() == Some("H100"))
        .collect();
    let mi: Vec<_> = got
        .records
        .iter()
        .filter(|r| r.gpu.as_deref() == Some("MI300X"))
        .collect();
    assert_eq!((h100.len(), mi.len()), (2, 1));
    assert_eq!(mi[0].batch_size, Some(64));
    assert_eq!(mi[0].gpu_count, Some(1));
    close(metric(mi[0], "extra.throughput"), 1610.7);
    assert!(got
        .warnings
        .iter()
        .any(|w| w.to_string() == "line 3: no measured value for MI300X, skipped"));
}

#[test]
fn generic_markdown_table() {
    let got = read_fixture("tables/results.md");
    assert_eq!(got.format, Format::MarkdownTable);
    assert_eq!(got.records.len(), 2);
    let r = &got.records[1];
    assert_eq!(r.max_concurrency, Some(8));
    close(metric(r, "mean_ttft_ms"), 35.1);
    close(metric(r, "median_e2el_ms"), 1900.0);
    close(metric(r, "output_throughput"), 700.2);
}

#[test]
fn tgi_benchmark_tables_fill_down_and_strip_units() {
    let got = read_fixture("tables/tgi_benchmark.md");
    assert_eq!(got.format, Format::TgiBenchmark);
    assert_eq!(got.records.len(), 2);
    let b8 = got
        .records
        .iter()
        .find(|r| r.batch_size == Some(8))
        .unwrap();
    assert_eq!(b8.engine.as_deref(), Some("tgi"));
    close(metric(b8, "mean_ttft_ms"), 40.51);
    close(metric(b8, "p99_ttft_ms"), 45.0);
    close(metric(b8, "mean_tpot_ms"), 9.12);
    close(metric(b8, "extra.decode_total_latency_average_ms"), 1160.0);
    close(metric(b8, "extra.decode_total_latency_p99_ms"), 1290.0);
    close(metric(b8, "output_throughput"), 877.2);
    close(metric(b8, "extra.prefill_throughput_average"), 197.5);
}

#[test]
fn canonical_json_and_csv_round_trip() {
    let got = read_fixture("seeds/001_b815cef7710eda19.txt");
    let json = canonical::to_json(&got.records);
    let back = ingest::read("records.json", json.as_bytes()).unwrap();
    assert_eq!(back.format, Format::CanonicalJson);
    assert_eq!(back.records.len(), 12);
    assert_eq!(back.records[3].metrics, got.records[3].metrics);
    assert_eq!(back.records[3].source.as_deref(), Some("records.json"));
    let csv = canonical::to_csv(&got.records);
    let back = ingest::read("records.csv", csv.as_bytes()).unwrap();
    assert_eq!(back.format, Format::CanonicalCsv);
    assert_eq!(back.records.len(), 12);
    assert_eq!(back.records[5].request_rate, Some(f64::INFINITY));
    assert_eq!(back.records[5].metrics, got.records[5].metrics);
}
