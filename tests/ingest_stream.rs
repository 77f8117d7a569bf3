//! The streaming JSON reader against the in-memory one, malformed serving JSON, and the
//! command line's streamed paths (`convert` of a large serving JSON, `inspect` of a
//! per-request file).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod common;

use std::fmt::Write as _;
use std::path::Path;

use assert_cmd::Command;
use benchlens::ingest::{self, Format, IngestError};
use benchlens::model::canonical;

fn is_serving(name: &str, bytes: &[u8]) -> bool {
    matches!(
        ingest::detect(name, bytes).format,
        Some(Format::VllmServing | Format::SglangServing)
    )
}

/// A vLLM `--save-detailed` run of `n` requests, `k` gaps each, on one line.
fn serving_run(n: usize, k: usize) -> String {
    let mut s = String::from(
        r#"{"date": "20250301-101500", "backend": "vllm", "model_id": "m", "num_prompts": 3, "request_rate": "inf", "completed": 3, "request_throughput": 2.5, "mean_ttft_ms": 50.1"#,
    );
    let list = |s: &mut String, key: &str, f: &dyn Fn(usize) -> String| {
        let _ = write!(s, ", \"{key}\": [");
        for i in 0..n {
            if i > 0 {
                s.push_str(", ");
            }
            s.push_str(&f(i));
        }
        s.push(']');
    };
    list(&mut s, "input_lens", &|i| (100 + i % 7).to_string());
    list(&mut s, "output_lens", &|_| (k + 1).to_string());
    list(&mut s, "ttfts", &|i| {
        format!("{}", 0.03 + (i % 13) as f64 / 1000.0)
    });
    list(&mut s, "itls", &|i| {
        let gaps: Vec<String> = (0..k)
            .map(|j| format!("{}", 0.011 + ((i + j) % 17) as f64 / 1000.0))
            .collect();
        format!("[{}]", gaps.join(", "))
    });
    list(&mut s, "generated_texts", &|_| "\"a b\"".into());
    list(&mut s, "errors", &|i| {
        if i % 50 == 3 {
            "\"boom\"".into()
        } else {
            "\"\"".into()
        }
    });
    list(&mut s, "start_times", &|i| {
        format!("{}", 1000.0 + i as f64 / 8.0)
    });
    list(&mut s, "latencies", &|i| {
        format!("{}", 1.5 + (i % 5) as f64 / 10.0)
    });
    s.push_str("}\n");
    s
}

#[test]
fn streamed_serving_fixtures_read_as_in_memory() {
    let paths = common::fixture_paths();
    let mut compared = 0;
    for p in paths {
        let bytes = std::fs::read(&p).unwrap();
        let name = p.to_string_lossy().to_string();
        if !is_serving(&name, &bytes) {
            continue;
        }
        let whole = ingest::read(&name, &bytes);
        match ingest::read_json_stream(&name, &bytes[..]).unwrap() {
            Some(streamed) => {
                assert_eq!(Ok(&streamed), whole.as_ref(), "{name}");
                compared += 1;
            }
            // Only what the streaming reader does not take: several documents (JSON Lines).
            None => assert!(
                whole.is_err() || bytes.iter().filter(|b| **b == b'\n').count() > 1,
                "{name}: a single serving document was not streamed"
            ),
        }
    }
    assert!(compared >= 3, "only {compared} serving fixtures compared");
    let run = serving_run(500, 40);
    let whole = ingest::read("run.json", run.as_bytes()).unwrap();
    let streamed = ingest::read_json_stream("run.json", run.as_bytes())
        .unwrap()
        .unwrap();
    assert_eq!(streamed, whole);
    assert_eq!(whole.records[0].requests.len(), 500);
    assert_eq!(whole.records[0].requests[7].itl_ms.len(), 40);
    assert_eq!(whole.records[0].requests[3].error.as_deref(), Some("boom"));
}

fn assert_names_place(e: &IngestError, name: &str) {
    let text = e.to_string();
    assert!(text.starts_with(&format!("{name}: ")), "{text}");
    assert!(
        text.contains("line ") || text.contains("byte ") || text.contains("empty file"),
        "{text}"
    );
}

#[test]
fn a_truncated_serving_json_is_an_error_naming_the_file_and_line() {
    let run = serving_run(64, 8);
    let bytes = run.trim_end().as_bytes();
    for i in 0..64 {
        let cut = &bytes[..bytes.len() * i / 64];
        assert!(
            ingest::read_json_stream("cut.json", cut).unwrap().is_none(),
            "cut at {i}/64 streamed"
        );
        match ingest::read("cut.json", cut) {
            Err(e) => assert_names_place(&e, "cut.json"),
            Ok(got) => panic!("cut at {i}/64 read: {:?}", got.note),
        }
    }
}

#[test]
fn wrong_types_non_finite_tokens_and_huge_numbers_never_panic() {
    // Arrays of the wrong shape are dropped with a warning naming the field.
    let t = r#"{"model_id": "m", "request_throughput": 1, "ttfts": "x", "itls": [1, "a", {}], "errors": 5, "input_lens": [1, [2], {"a": 1}]}"#;
    let streamed = ingest::read_json_stream("t.json", t.as_bytes())
        .unwrap()
        .unwrap();
    let whole = ingest::read("t.json", t.as_bytes()).unwrap();
    assert_eq!(streamed, whole);
    let warnings: Vec<String> = whole.warnings.iter().map(ToString::to_string).collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("ttfts: not an array")),
        "{warnings:?}"
    );
    // Bare NaN/Infinity: left to the in-memory reader, which reads them.
    let t = r#"{"model_id": "m", "request_throughput": NaN, "ttfts": [Infinity, -Infinity, 0.1]}"#;
    assert!(ingest::read_json_stream("n.json", t.as_bytes())
        .unwrap()
        .is_none());
    let got = ingest::read("n.json", t.as_bytes()).unwrap();
    assert_eq!(got.records[0].requests.len(), 3);
    // Numbers beyond f64: an error naming the file and line.
    for t in [
        r#"{"model_id": "m", "ttfts": [1e999]}"#,
        "{\"model_id\": \"m\",\n \"request_throughput\": -1e400}",
    ] {
        assert!(ingest::read_json_stream("h.json", t.as_bytes())
            .unwrap()
            .is_none());
        let e = ingest::read("h.json", t.as_bytes()).unwrap_err();
        assert_names_place(&e, "h.json");
    }
    // A huge integer still fits an f64.
    let t = r#"{"model_id": "m", "request_throughput": 1, "input_lens": [123456789012345678901234567890]}"#;
    let got = ingest::read_json_stream("i.json", t.as_bytes())
        .unwrap()
        .unwrap();
    assert_eq!(Ok(got), ingest::read("i.json", t.as_bytes()));
}

#[test]
fn convert_streams_a_large_serving_json_to_the_same_canonical_text() {
    let dir = tempfile::tempdir().unwrap();
    // Past the 8 MiB at which `convert` reads the file as a stream.
    let run = serving_run(5_000, 180);
    assert!(run.len() > 8 << 20, "{} bytes", run.len());
    let path = dir.path().join("big-run.json");
    std::fs::write(&path, &run).unwrap();
    let name = path.to_string_lossy().to_string();
    let out = Command::cargo_bin("benchlens")
        .unwrap()
        .args(["convert", &name])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let whole = ingest::read(&name, run.as_bytes()).unwrap();
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        canonical::to_json(&whole.records)
    );
}

#[test]
fn inspect_summarises_a_per_request_file() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/real/llamacpp/llamacpp-tiny-chat.requests.jsonl");
    let out = Command::cargo_bin("benchlens")
        .unwrap()
        .args(["inspect", &fixture.to_string_lossy()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("benchlens per-request JSON Lines, 24 requests in 2 stages"),
        "{text}"
    );
    assert!(text.contains("outcomes: 24 ok, 0 failed"), "{text}");
    assert!(text.contains("    ttft_ms: 24, "), "{text}");
    assert!(text.contains("    itl_ms: "), "{text}");
}
