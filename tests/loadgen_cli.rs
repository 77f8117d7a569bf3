//! The `benchlens run` and `benchlens mock` command lines, as a user runs them.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use benchlens::model::{canonical, MetricKey};

const BIN: &str = env!("CARGO_BIN_EXE_benchlens");

#[test]
fn run_with_mock_writes_canonical_json_to_stdout_and_the_summary_to_stderr() {
    let out = Command::new(BIN)
        .args([
            "run",
            "--mock",
            "--mock-ttft-ms",
            "2",
            "--mock-itl-ms",
            "1",
            "--num-prompts",
            "6",
            "--input-len",
            "8",
            "--output-len",
            "4",
            "--ignore-eos",
            "--max-concurrency",
            "3",
            "--engine",
            "mock",
            "--tag",
            "team=perf",
            "--result-filename",
            "-",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("============ Serving Benchmark Result ============"));
    let decoded = canonical::from_json(&String::from_utf8_lossy(&out.stdout)).unwrap();
    let r = &decoded.records[0];
    assert_eq!(r.metrics[&MetricKey::Completed], 6.0);
    assert_eq!(r.engine.as_deref(), Some("mock"));
    assert_eq!(r.tags["team"], "perf");
    assert!(r.tags["command_line"].contains("--mock"));
}

#[test]
fn bad_options_fail_with_a_message_naming_the_option() {
    let out = Command::new(BIN)
        .args(["run", "--mock", "--request-rate", "fast"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--request-rate") && stderr.contains("fast"),
        "{stderr}"
    );
}

#[test]
fn mock_prints_the_address_it_bound() {
    let mut child = Command::new(BIN)
        .args(["mock", "--port", "0"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    let addr = line
        .split_whitespace()
        .find(|w| w.starts_with("http://127.0.0.1:"));
    assert!(addr.is_some_and(|a| !a.ends_with(":0")), "{line}");
}
