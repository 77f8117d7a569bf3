//! vLLM's own result scripts read `benchlens run --vllm-compatible` files and fill every column.
//!
//! The scripts are those of vLLM's performance dashboard (`.buildkite/performance-benchmarks/
//! scripts/` in vLLM's source package 0.33.0; tests/fixtures/vllm-scripts/README.md says where
//! they come from and their licence): `convert-results-json-to-markdown.py` turns a folder of
//! `serving_*.json` results, each beside the `.commands` file its harness writes, into one table,
//! and `compare-json-results.py` groups that table by model, dataset and lengths into a CSV per
//! metric. Here benchlens plays `vllm bench serve` against the mock at two concurrencies, the
//! test writes the `.commands` files as the harness does (the client command is the file's own
//! `command_line`), and both scripts run on the result.
//!
//! The scripts and the Python packages they import (pandas, tabulate, psutil, regex, plotly) are
//! put in place by `scripts/setup.sh test` (or `vllm-scripts`). Where they are missing the test
//! prints why and passes, unless `BENCHLENS_REQUIRE_REAL_SERVER=1` (set by `make test`), in which
//! case it fails. `BENCHLENS_LLAMA_PYTHON` and `BENCHLENS_VLLM_SCRIPTS` name the python and the
//! scripts' folder; without them the test asks `scripts/setup.sh`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Value};
use support::{spawn_mock, BIN};

/// The run's dataset arguments, which the scripts read back from the command line.
const INPUT_LEN: u64 = 16;
const OUTPUT_LEN: u64 = 8;
const RATE: u64 = 50;
const CONCURRENCIES: [u64; 2] = [2, 4];

/// The serving columns `convert-results-json-to-markdown.py` prints (its
/// `serving_column_mapping`), each with the key of benchlens's vLLM file it must equal, or
/// `None` where the value comes from the command lines or the harness.
const SERVING_COLUMNS: [(&str, Option<&str>); 26] = [
    ("Test name", None),
    ("Model", Some("model_id")),
    ("Dataset Name", None),
    ("Input Len", None),
    ("Output Len", None),
    ("TP Size", None),
    ("PP Size", None),
    ("dtype", None),
    ("GPU", None),
    ("# of req.", Some("completed")),
    ("qps", None),
    ("# of max concurrency.", Some("max_concurrency")),
    ("Tput (req/s)", Some("request_throughput")),
    ("Total Token Tput (tok/s)", Some("total_token_throughput")),
    ("Output Tput (tok/s)", Some("output_throughput")),
    ("Mean TTFT (ms)", Some("mean_ttft_ms")),
    ("Median TTFT (ms)", Some("median_ttft_ms")),
    ("P99 TTFT (ms)", Some("p99_ttft_ms")),
    ("STD TTFT (ms)", Some("std_ttft_ms")),
    ("Mean TPOT (ms)", Some("mean_tpot_ms")),
    ("Median", Some("median_tpot_ms")),
    ("P99", Some("p99_tpot_ms")),
    ("STD TPOT (ms)", Some("std_tpot_ms")),
    ("Mean ITL (ms)", Some("mean_itl_ms")),
    ("Median ITL (ms)", Some("median_itl_ms")),
    ("P99 ITL (ms)", Some("p99_itl_ms")),
];

/// The server command the dashboard's harness records beside each result; the scripts take the
/// TP size, PP size and dtype columns from it (benchlens has no say in these).
const SERVER_COMMAND: &str = "vllm serve benchlens-mock --tensor-parallel-size 1 \
     --pipeline-parallel-size 1 --dtype bfloat16";

/// The venv's python and the folder holding vLLM's scripts, or `None` (with the reason printed)
/// when this test cannot run here.
fn python_and_scripts() -> Option<(PathBuf, PathBuf)> {
    let required = std::env::var("BENCHLENS_REQUIRE_REAL_SERVER").is_ok_and(|v| v == "1");
    let ask_setup = |what: &str| -> PathBuf {
        let setup = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/setup.sh");
        let out = Command::new("bash").arg(setup).arg(what).output().unwrap();
        PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
    };
    let python = std::env::var_os("BENCHLENS_LLAMA_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| ask_setup("llama-python"));
    let scripts = std::env::var_os("BENCHLENS_VLLM_SCRIPTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| ask_setup("vllm-scripts-dir"))
        .join(".buildkite/performance-benchmarks/scripts");
    let imports = Command::new(&python)
        .args(["-c", "import pandas, tabulate, psutil, regex, plotly"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let present = [
        "convert-results-json-to-markdown.py",
        "compare-json-results.py",
    ]
    .iter()
    .all(|s| scripts.join(s).is_file());
    if imports && present {
        return Some((python, scripts));
    }
    let reason = format!(
        "no pandas, tabulate, psutil, regex and plotly at {} or no vLLM scripts in {} \
         (run `scripts/setup.sh vllm-scripts`, or set BENCHLENS_LLAMA_PYTHON and BENCHLENS_VLLM_SCRIPTS)",
        python.display(),
        scripts.display()
    );
    assert!(!required, "BENCHLENS_REQUIRE_REAL_SERVER=1 but {reason}");
    eprintln!("skipped: {reason}");
    None
}

/// Runs a Python script and fails with its output when it does not succeed.
fn run_script(python: &Path, script: &Path, args: &[&str], cwd: &Path) -> String {
    let out = Command::new(python)
        .arg(script)
        .args(args)
        .current_dir(cwd)
        .env("VLLM_COMPARE_DISABLE_EXCEL", "1")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{} failed:\n{text}", script.display());
    text
}

/// Equal up to the ten significant digits pandas keeps when it writes JSON.
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// A cell filled with a usable value: not null, not an empty string, a finite number.
fn filled(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::String(s) => !s.trim().is_empty() && s != "NaN",
        Value::Number(n) => n.as_f64().is_some_and(f64::is_finite),
        _ => true,
    }
}

#[test]
fn vllm_dashboard_scripts_fill_every_column_from_vllm_compatible_files() {
    let Some((python, scripts)) = python_and_scripts() else {
        return;
    };
    let (_mock, url) = spawn_mock(&["--ttft-ms", "20", "--itl-ms", "2"], "http");
    let tmp = tempfile::tempdir().unwrap();
    let results = tmp.path().join("results");

    let mut ours = Vec::new();
    for c in CONCURRENCIES {
        let name = format!("serving_mock_qps_{RATE}_concurrency_{c}");
        let (input, output, rate, conc) = (
            INPUT_LEN.to_string(),
            OUTPUT_LEN.to_string(),
            RATE.to_string(),
            c.to_string(),
        );
        // A vLLM command line as the dashboard's harness writes it, with benchlens's switch.
        let out = Command::new(BIN)
            .args(["run", "--backend", "openai", "--base-url", &url])
            .args(["--model", "benchlens-mock", "--tokenizer", "words"])
            .args(["--dataset-name", "random", "--random-input-len", &input])
            .args(["--random-output-len", &output, "--num-prompts", "12"])
            .args(["--request-rate", &rate, "--max-concurrency", &conc])
            .args(["--percentile-metrics", "ttft,tpot,itl,e2el"])
            .args(["--metric-percentiles", "50,99", "--disable-tqdm"])
            .args(["--save-result", "--vllm-compatible", "--result-dir"])
            .arg(&results)
            .args(["--result-filename", &format!("{name}.json")])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "benchlens run failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let file: Value =
            serde_json::from_slice(&std::fs::read(results.join(format!("{name}.json"))).unwrap())
                .unwrap();
        let client_command = file["command_line"].as_str().unwrap().to_string();
        assert!(
            client_command.starts_with("vllm bench serve "),
            "{client_command}"
        );
        let commands = json!({
            "server_command": SERVER_COMMAND,
            "client_command": client_command,
            "gpu_type": "cpu",
        });
        std::fs::write(
            results.join(format!("{name}.commands")),
            serde_json::to_vec(&commands).unwrap(),
        )
        .unwrap();
        ours.push((name, c, file));
    }

    // 1. The dashboard's converter: one row per serving result, every column filled.
    let convert = scripts.join("convert-results-json-to-markdown.py");
    let results_arg = results.to_str().unwrap();
    run_script(&python, &convert, &["-r", results_arg], tmp.path());
    let table: Value =
        serde_json::from_slice(&std::fs::read(results.join("benchmark_results.json")).unwrap())
            .unwrap();
    let rows: Vec<&Value> = table
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| {
            r["Test name"]
                .as_str()
                .is_some_and(|n| n.starts_with("serving_"))
        })
        .collect();
    assert_eq!(rows.len(), ours.len(), "{table:#}");
    for (name, concurrency, file) in &ours {
        let row = rows
            .iter()
            .find(|r| r["Test name"] == name.as_str())
            .unwrap_or_else(|| panic!("no row for {name} in {table:#}"));
        for (column, key) in SERVING_COLUMNS {
            let cell = &row[column];
            assert!(
                filled(cell),
                "{name}: column {column:?} is {cell} in {row:#}"
            );
            if let Some(key) = key {
                let want = &file[key];
                let same = match (cell.as_f64(), want.as_f64()) {
                    (Some(a), Some(b)) => close(a, b),
                    _ => cell == want,
                };
                assert!(
                    same,
                    "{name}: {column:?} is {cell}, the file's {key} is {want}"
                );
            }
        }
        // Read back from the recorded vLLM command line.
        assert_eq!(row["Dataset Name"], "random");
        assert_eq!(row["Input Len"], INPUT_LEN);
        assert_eq!(row["Output Len"], OUTPUT_LEN);
        assert_eq!(row["qps"], RATE);
        assert_eq!(row["# of max concurrency."], *concurrency);
        assert!(file["completed"].as_u64().unwrap() > 0);
    }

    // 2. The comparison script on the converter's table: one CSV per metric, grouped by model,
    // dataset and lengths, one line per concurrency, no empty cell.
    let compare = scripts.join("compare-json-results.py");
    run_script(
        &python,
        &compare,
        &[
            "-f",
            "benchmark_results.json",
            "--no-plot",
            "--csv-out-dir",
            "csv",
        ],
        &results,
    );
    let metrics = [
        ("Output_Tput__tok_s_", "output_throughput"),
        ("P99_TTFT__ms_", "p99_ttft_ms"),
        ("P99", "p99_tpot_ms"),
    ];
    for (suffix, key) in metrics {
        let path = results.join(format!(
            "csv/benchlens-mock_{INPUT_LEN}x{OUTPUT_LEN}__{suffix}.csv"
        ));
        let mut reader =
            csv::Reader::from_path(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
        assert_eq!(
            header[..6],
            [
                "Model",
                "Dataset Name",
                "Input Len",
                "Output Len",
                "# of max concurrency.",
                "qps"
            ],
            "{}",
            path.display()
        );
        let lines: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        assert_eq!(lines.len(), ours.len(), "{}", path.display());
        for line in &lines {
            assert!(
                line.iter()
                    .all(|cell| !cell.trim().is_empty() && cell != "nan"),
                "{}: empty cell in {line:?}",
                path.display()
            );
            assert_eq!(&line[0], "benchlens-mock");
            assert_eq!(&line[1], "random");
            assert_eq!(line[2], INPUT_LEN.to_string());
            assert_eq!(line[3], OUTPUT_LEN.to_string());
            assert_eq!(line[5], RATE.to_string());
            let concurrency: u64 = line[4].parse().unwrap();
            let (_, _, file) = ours.iter().find(|(_, c, _)| *c == concurrency).unwrap();
            let value: f64 = line[6].parse().unwrap();
            let want = file[key].as_f64().unwrap();
            assert!(
                close(value, want),
                "{}: {value} vs the file's {key} {want}",
                path.display()
            );
        }
    }
}
