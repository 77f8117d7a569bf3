//! `benchlens convert` and `benchlens inspect`, run as the built binary.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use assert_cmd::Command;
use predicates::prelude::*;

fn fixture(path: &str) -> String {
    format!("{}/tests/fixtures/{path}", env!("CARGO_MANIFEST_DIR"))
}

fn benchlens() -> Command {
    Command::cargo_bin("benchlens").expect("binary built")
}

#[test]
fn convert_to_json_on_stdout() {
    let out = benchlens()
        .args(["convert", &fixture("seeds/001_b815cef7710eda19.txt")])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["records"].as_array().unwrap().len(), 12);
    assert_eq!(v["records"][5]["request_rate"], "inf");
}

#[test]
fn convert_several_files_to_csv_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("all.csv");
    benchlens()
        .args([
            "convert",
            &fixture("seeds/002_44f3a8b9f2336bbb.txt"),
            &fixture("seeds/003_902df92d1b3a4732.txt"),
            "--to",
            "csv",
            "-o",
        ])
        .arg(&out)
        .assert()
        .success()
        .stdout("");
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(text.lines().count(), 1 + 32 + 23);
    assert!(text
        .lines()
        .next()
        .unwrap()
        .starts_with("source,format,model"));
}

#[test]
fn convert_reads_stdin_and_keeps_going_past_unreadable_files() {
    let assert = benchlens()
        .args([
            "convert",
            "-",
            "/no/such/file.json",
            &fixture("vllm/list.json"),
        ])
        .write_stdin(r#"{"request_throughput": 2.5, "mean_ttft_ms": 10}"#)
        .assert()
        .failure();
    let out = assert.get_output();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let records = v["records"].as_array().unwrap();
    assert_eq!(records.len(), 3);
    assert_eq!(records[0]["source"], "stdin");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("/no/such/file.json: cannot read"),
        "{stderr}"
    );
}

#[test]
fn convert_reports_garbage_in_one_line_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, b"{\"request_throughput\": [1, 2,").unwrap();
    benchlens()
        .arg("convert")
        .arg(&bad)
        .assert()
        .failure()
        .stderr(predicate::str::contains("bad.json: invalid JSON at line 1"));
}

#[test]
fn convert_prints_the_warnings_inspect_shows_on_stderr() {
    let tidy = fixture("tables/tidy.csv");
    let out = benchlens()
        .args(["convert", &tidy])
        .assert()
        .success()
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "{tidy}: warning: line 4: 3 cells where the header has 12"
        )),
        "{stderr}"
    );
    // The records still go to stdout, the warnings never do.
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(!v["records"].as_array().unwrap().is_empty());
    assert!(!String::from_utf8_lossy(&out.stdout).contains("cells where the header"));
}

/// `convert` says on stderr which values are impossible (issue 34 item 8), as `inspect` does.
#[test]
fn convert_warns_about_impossible_values() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.json");
    std::fs::write(
        &path,
        r#"{"completed": -1, "request_throughput": 2.5, "mean_ttft_ms": 12, "p99_ttft_ms": 1e308}"#,
    )
    .unwrap();
    let out = benchlens()
        .arg("convert")
        .arg(&path)
        .assert()
        .success()
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    for want in [
        "completed: 1 value negative (first: -1)",
        "p99_ttft_ms: 1 value too large to be a measurement (first: 1e308)",
    ] {
        assert!(stderr.contains(want), "{want}: {stderr}");
    }
    assert!(!String::from_utf8_lossy(&out.stdout).contains("impossible"));
}

#[test]
fn inspect_lists_format_dimensions_metrics_and_warnings() {
    benchlens()
        .args([
            "inspect",
            &fixture("seeds/002_44f3a8b9f2336bbb.txt"),
            &fixture("tables/tidy.csv"),
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "markdown tables (markdown_table), 32 records",
        ))
        .stdout(predicate::str::contains("engine_version: v0.2.5, v1.3.4"))
        .stdout(predicate::str::contains("gpu: A100 40G"))
        .stdout(predicate::str::contains(
            "metrics: request_throughput, output_throughput",
        ))
        .stdout(predicate::str::contains("tpot_s → mean_tpot_ms ×1000"))
        .stdout(predicate::str::contains(
            "line 4: 3 cells where the header has 12",
        ));
}

#[test]
fn inspect_shows_the_note_of_an_empty_template() {
    benchlens()
        .args(["inspect", &fixture("seeds/004_adfd865e97a7b47c.txt")])
        .assert()
        .success()
        .stdout(predicate::str::contains("0 records"))
        .stdout(predicate::str::contains(
            "note: no records: this is the vLLM performance-suite template",
        ));
}

/// `benchlens inspect … | head`: the reader closes the pipe before everything is written. The
/// command stops quietly instead of panicking ("failed printing to stdout: Broken pipe").
#[test]
fn inspect_into_a_closed_pipe_stops_without_a_panic() {
    use std::process::Stdio;
    let files: Vec<String> = std::fs::read_dir(fixture("seeds"))
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .collect();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("benchlens"))
        .arg("inspect")
        .args(&files)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Closing the read end at once: every write the command makes meets a broken pipe.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert!(out.status.success(), "{:?}: {err}", out.status);
}
