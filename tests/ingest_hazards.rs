//! Bad input: it never panics and never loses what was read. Truncated JSON, binary garbage,
//! deep nesting, empty files, other kinds of file, UTF-16 and BOMs, very large files.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use benchlens::ingest::{self, Format, IngestError};

fn seed_001() -> Vec<u8> {
    std::fs::read(format!(
        "{}/tests/fixtures/seeds/001_b815cef7710eda19.txt",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

#[test]
fn zero_byte_and_blank_files_are_empty() {
    for bytes in [&b""[..], b"   \n\t\n", b"\xEF\xBB\xBF"] {
        let e = ingest::read("x.json", bytes).unwrap_err();
        assert_eq!(
            e,
            IngestError::Empty {
                file: "x.json".into()
            }
        );
    }
}

#[test]
fn binary_garbage_is_an_error_naming_the_file() {
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\x01\0";
    let e = ingest::read("chart.png", png).unwrap_err();
    assert!(
        e.to_string().starts_with("chart.png: binary data at byte"),
        "{e}"
    );
    let mut noise = Vec::new();
    let mut x = 1u32;
    for _ in 0..4096 {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
        noise.push((x >> 16) as u8);
    }
    assert!(ingest::read("noise.bin", &noise).is_err());
}

#[test]
fn a_file_of_another_kind_is_unrecognised() {
    let e = ingest::read("notes.txt", b"Dear diary,\nthe GPUs were warm today.\n").unwrap_err();
    assert!(
        e.to_string()
            .starts_with("notes.txt: not a recognised benchmark result file"),
        "{e}"
    );
    // One line that names every format tried and why each said no.
    let msg = e.to_string();
    assert!(!msg.contains('\n'), "{msg}");
    for tried in [
        "JSON: does not start",
        "vLLM console: no",
        "trtllm-bench text: no",
        "MLPerf LoadGen: no",
        "YAML: first line is not",
        "fenced JSON: no code fence",
        "tables: no markdown table",
    ] {
        assert!(msg.contains(tried), "{tried} missing from {msg}");
    }
    let e = ingest::read("settings.yaml", b"port: 8000\nhost: x\n").unwrap_err();
    assert!(
        e.to_string().contains("YAML: no known benchmark keys"),
        "{e}"
    );
    let e = ingest::read("package.json", br#"{"name": "x", "version": "1.0.0"}"#).unwrap_err();
    assert!(
        e.to_string()
            .contains("JSON without any known benchmark keys"),
        "{e}"
    );
}

#[test]
fn truncated_report_keeps_the_good_json_lines() {
    let bytes = seed_001();
    let text = String::from_utf8(bytes).unwrap();
    // Cut inside the 9th JSON line of the fenced block.
    let ninth = text.match_indices("{\"date\"").nth(8).unwrap().0;
    let cut = &text[..ninth + 200];
    let got = ingest::read("report.md", cut.as_bytes()).unwrap();
    assert_eq!(got.records.len(), 8);
    assert!(
        got.warnings
            .iter()
            .any(|w| w.to_string().contains("invalid JSON")),
        "{:?}",
        got.warnings
    );
}

#[test]
fn truncated_single_json_is_an_error_with_line_and_column() {
    let e = ingest::read(
        "run.json",
        b"{\n  \"request_throughput\": 1.5,\n  \"mean_ttft_ms\": ",
    )
    .unwrap_err();
    assert!(matches!(e, IngestError::Json { line: 3, .. }), "{e:?}");
    assert!(
        e.to_string()
            .starts_with("run.json: invalid JSON at line 3, column"),
        "{e}"
    );
}

#[test]
fn ten_thousand_levels_of_nesting_do_not_overflow_the_stack() {
    for (open, close) in [("[", "]"), ("{\"a\":", "}")] {
        let text = open.repeat(10_000) + "1" + &close.repeat(10_000);
        let e = ingest::read("deep.json", text.as_bytes()).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("deep.json: invalid JSON at line 1"),
            "{e}"
        );
        let _ = ingest::detect("deep.json", text.as_bytes());
        for f in Format::ALL {
            let _ = ingest::read_as(*f, "deep.json", text.as_bytes());
        }
    }
}

#[test]
fn utf16_with_bom_and_utf8_with_bom_are_decoded() {
    let text = "{\"request_throughput\": 3.5, \"mean_ttft_ms\": 12}";
    let mut le = vec![0xFF, 0xFE];
    for u in text.encode_utf16() {
        le.extend(u.to_le_bytes());
    }
    let got = ingest::read("win.json", &le).unwrap();
    assert_eq!(got.records.len(), 1);
    assert!(got.warnings.iter().any(|w| w.message.contains("UTF-16")));
    let mut bom = b"\xEF\xBB\xBF".to_vec();
    bom.extend_from_slice(text.as_bytes());
    assert_eq!(ingest::read("bom.json", &bom).unwrap().records.len(), 1);
    let csv = "\u{FEFF}model,TTFT (ms)\nx,12\n";
    let got = ingest::read("bom.csv", csv.as_bytes()).unwrap();
    assert_eq!(got.records[0].model.as_deref(), Some("x"));
}

#[test]
fn invalid_utf8_is_replaced_with_a_warning() {
    let bytes = b"model,TTFT (ms)\nm\xE9tal,12\n";
    let got = ingest::read("latin1.csv", bytes).unwrap();
    assert_eq!(got.records.len(), 1);
    assert!(got
        .warnings
        .iter()
        .any(|w| w.to_string().starts_with("line 2: invalid UTF-8")));
}

#[test]
fn a_200_mb_file_is_read_without_trouble() {
    // 200 MB of JSON Lines whose runs carry long generated texts (cheap to build, realistic
    // in size), plus one bad line in the middle.
    let filler = "x".repeat(100_000);
    let line = format!(
        "{{\"model_id\": \"m\", \"request_rate\": 1.0, \"completed\": 1, \"request_throughput\": 1.0, \"generated_texts\": [\"{filler}\"]}}\n"
    );
    let n = 200_000_000 / line.len() + 1;
    let mut text = String::with_capacity(n * line.len() + 64);
    for i in 0..n {
        if i == n / 2 {
            text.push_str("{\"model_id\": \"broken\"\n");
        }
        text.push_str(&line);
    }
    assert!(text.len() >= 200_000_000);
    let got = ingest::read("big.jsonl", text.as_bytes()).unwrap();
    assert_eq!(got.format, Format::VllmServing);
    assert_eq!(got.records.len(), n);
    assert_eq!(got.warnings.len(), 1, "{:?}", got.warnings);
    assert_eq!(
        got.warnings[0].at.as_deref(),
        Some(format!("line {}", n / 2 + 1).as_str())
    );
}

#[test]
fn impossible_values_are_warned_about_once_per_metric_and_kind() {
    // vLLM's serving JSON: a negative completed count, negative, NaN and 1e308 latencies.
    let json = br#"{"completed": -1, "request_throughput": 2.5, "mean_ttft_ms": NaN, "p99_ttft_ms": 1e308, "mean_tpot_ms": -3.5}"#;
    let got = ingest::read("run.json", json).unwrap();
    assert_eq!(got.records.len(), 1);
    let w: Vec<String> = got.warnings.iter().map(|w| w.to_string()).collect();
    for want in [
        "completed: 1 value negative (first: -1)",
        "mean_tpot_ms: 1 value negative (first: -3.5)",
        "p99_ttft_ms: 1 value too large to be a measurement (first: 1e308)",
    ] {
        assert!(w.iter().any(|w| w.starts_with(want)), "{want}: {w:?}");
    }
    // A CSV of many bad rows: one warning a metric and kind, with the count, whichever way it
    // is read.
    let mut csv = String::from("model,request_rate,TTFT (ms),completed\n");
    for i in 0..500 {
        csv.push_str(&format!(
            "m,{i},-{i}.5,{}\n",
            if i % 2 == 0 { "-1" } else { "nan" }
        ));
    }
    let rows = ingest::read("bad.csv", csv.as_bytes()).unwrap();
    let columns = ingest::read_columnar("bad.csv", csv.as_bytes()).unwrap();
    for w in [rows.warnings.clone(), columns.warnings().to_vec()] {
        let w: Vec<String> = w
            .iter()
            .map(|w| w.to_string())
            .filter(|w| w.contains("impossible measurement"))
            .collect();
        assert_eq!(w.len(), 3, "{w:?}");
        assert!(
            w[0].starts_with("completed: 250 values not a finite number (first: NaN)"),
            "{w:?}"
        );
        assert!(
            w[1].starts_with("completed: 250 values negative (first: -1)"),
            "{w:?}"
        );
        assert!(
            w[2].starts_with("mean_ttft_ms: 500 values negative (first: -0.5)"),
            "{w:?}"
        );
    }
}

/// A run whose every request failed measured no latency: vLLM's summary of such a run says
/// `mean_ttft_ms: 0.0`, and a table may say 0 too. Read as records or as columns, its
/// latencies are no value (never 0 ms), its completed and failed counts stay, and a warning
/// says what was left out.
#[test]
fn a_run_that_only_failed_has_no_latency_on_either_path() {
    use benchlens::model::MetricKey;
    let ttft = MetricKey::from_name("mean_ttft_ms").unwrap();
    let json = br#"{"backend": "vllm", "model_id": "m", "request_rate": 4, "completed": 0,
        "failed": 8, "mean_ttft_ms": 0.0, "p99_ttft_ms": 0.0, "request_throughput": 0.0}"#;
    let got = ingest::read("failed.json", json).unwrap();
    let r = &got.records[0];
    assert_eq!(r.metric(&ttft), None);
    assert_eq!(r.metric(&MetricKey::Failed), Some(8.0));
    assert_eq!(r.metric(&MetricKey::Completed), Some(0.0));
    assert!(
        got.warnings.iter().any(|w| w
            .message
            .starts_with("1 run completed no request: 2 latency values")),
        "{:?}",
        got.warnings
    );
    let csv = b"request_rate,completed,failed,mean_ttft_ms\n1,0,8,0\n2,8,0,35.5\n";
    let got = ingest::read("sweep.csv", csv).unwrap();
    assert_eq!(got.records[0].metric(&ttft), None);
    assert_eq!(got.records[1].metric(&ttft), Some(35.5));
    match ingest::read_columnar("sweep.csv", csv).unwrap() {
        ingest::Contents::Columns(c) => {
            let col = &c.columns.metrics()[c.columns.metric_position(&ttft).unwrap()];
            assert_eq!((col.get(0), col.get(1)), (None, Some(35.5)));
            let failed =
                &c.columns.metrics()[c.columns.metric_position(&MetricKey::Failed).unwrap()];
            assert_eq!(failed.get(0), Some(8.0));
            assert!(c
                .warnings
                .iter()
                .any(|w| w.message.contains("completed no request")));
        }
        ingest::Contents::Records(_) => panic!("a plain CSV reads into columns"),
    }
}
