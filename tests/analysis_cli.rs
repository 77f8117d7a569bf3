//! `benchlens compare`, run as the built binary on the seeds and small hand-written runs.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use assert_cmd::Command;
use predicates::prelude::*;

fn fixture(path: &str) -> String {
    format!("{}/tests/fixtures/{path}", env!("CARGO_MANIFEST_DIR"))
}

fn benchlens() -> Command {
    Command::cargo_bin("benchlens").expect("binary built")
}

const SEED_000: &str = "seeds/000_258d36619a7af95a.txt";
const SEED_002: &str = "seeds/002_44f3a8b9f2336bbb.txt";

#[test]
fn improvement_on_seed_000_as_markdown() {
    benchlens()
        .args(["compare", &fixture(SEED_000), "--by", "gpu"])
        .args(["--baseline", "Tesla", "--candidate", "A100"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "| Codellama-13b-hf | 1 | 512 | 30.718344 | 126.342806 | 311.294326 | 311.294330 |",
        ))
        .stdout(predicate::str::contains("Improvement in the file (%)"))
        .stdout(predicate::str::contains(
            "metric: extra.throughput (picked by default",
        ))
        .stdout(predicate::str::contains("701 matched configurations"))
        .stdout(predicate::str::contains(
            "Same for every row: Engine: vllm, status: ok.",
        ));
}

#[test]
fn improvement_as_json_and_csv() {
    let out = benchlens()
        .args(["compare", &fixture(SEED_002), "--by", "engine"])
        .args(["--baseline", "tgi", "--candidate", "vllm"])
        .args(["--metric", "output_throughput", "--format", "json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["metric"], "output_throughput");
    assert_eq!(v["metric_picked_by_default"], false);
    assert_eq!(v["tied_dims"][0], "engine_version");
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 16);
    let row = rows
        .iter()
        .find(|r| r["input_len"] == 128.0 && r["output_len"] == 128.0)
        .unwrap();
    assert!((row["improvement_pct"].as_f64().unwrap() - 8.15).abs() < 0.005);

    benchlens()
        .args(["compare", &fixture(SEED_002), "--by", "engine"])
        .args([
            "--baseline",
            "tgi",
            "--candidate",
            "vllm",
            "--format",
            "csv",
        ])
        .assert()
        .success()
        .stdout(predicate::str::starts_with(
            "model,gpu,input_len,output_len,baseline_value,candidate_value,improvement_pct\n",
        ));
}

#[test]
fn ignoring_a_dimension_widens_the_match() {
    // With the status tag ignored the key is model, engine, gpu_count, batch_size.
    benchlens()
        .args([
            "compare",
            &fixture(SEED_000),
            "--by",
            "gpu",
            "--ignore",
            "tag.status",
        ])
        .args([
            "--baseline",
            "Tesla",
            "--candidate",
            "A100",
            "--format",
            "csv",
        ])
        .assert()
        .success()
        .stdout(predicate::str::starts_with(
            "model,engine,gpu_count,batch_size,",
        ));
}

#[test]
fn bad_values_name_what_is_present() {
    benchlens()
        .args(["compare", &fixture(SEED_000), "--by", "gpu"])
        .args(["--baseline", "Tesla", "--candidate", "H200"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "no records have gpu = H200; values present: A100, Tesla",
        ));
    benchlens()
        .args([
            "compare",
            &fixture(SEED_000),
            "--by",
            "gpu",
            "--baseline",
            "Tesla",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "give both --baseline and --candidate",
        ));
    benchlens()
        .args(["compare", &fixture(SEED_000), "--baseline", "Tesla"])
        .args(["--candidate", "A100"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--baseline and --candidate need --by",
        ));
}

#[test]
fn one_file_alone_gets_the_explorers_default_comparison() {
    // The same defaults as the explorer's improvement view: GPU, A100 over Tesla, throughput.
    benchlens()
        .args(["compare", &fixture(SEED_000)])
        .assert()
        .success()
        .stdout(predicate::str::contains("**gpu = A100 vs gpu = Tesla**"))
        .stdout(predicate::str::contains(
            "compared dimension, baseline and candidate picked by default",
        ))
        .stdout(predicate::str::contains("701 matched configurations"));
    // Only the sides left open: the better engine in most pairs becomes the candidate.
    let out = benchlens()
        .args(["compare", &fixture(SEED_002), "--by", "engine"])
        .args(["--metric", "output_throughput", "--format", "json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["sides_picked_by_default"], true);
    assert_eq!(v["dim_picked_by_default"], false);
    assert_eq!(
        (v["baseline"].as_str(), v["candidate"].as_str()),
        (Some("tgi"), Some("vllm"))
    );
}

#[test]
fn regression_check_fails_on_a_worse_metric() {
    benchlens()
        .args([
            "compare",
            &fixture("analysis/old.csv"),
            &fixture("analysis/new.csv"),
        ])
        .args(["--fail-on-regression", "5"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "| 16 | p99_ttft_ms | 300.00 | 360.00 | +20.00 | worse |",
        ))
        .stdout(predicate::str::contains("Not matched on engine_version"))
        // 20 → 21 ms is exactly 5 %: not beyond the threshold.
        .stdout(predicate::str::contains("mean_tpot_ms").not())
        .stderr(predicate::str::contains(
            "1 metric value got worse by more than 5 %",
        ));
}

#[test]
fn regression_check_passes_when_within_threshold() {
    benchlens()
        .args([
            "compare",
            &fixture("analysis/old.csv"),
            &fixture("analysis/same.csv"),
        ])
        .args(["--fail-on-regression", "5"])
        .assert()
        .success()
        .stdout(predicate::str::contains("0 worse"));
    // A lower failure limit than the report threshold still sees the small regressions.
    benchlens()
        .args([
            "compare",
            &fixture("analysis/old.csv"),
            &fixture("analysis/new.csv"),
        ])
        .args(["--threshold", "50", "--fail-on-regression", "1"])
        .assert()
        .code(1);
    // Without --fail-on-regression a regression is reported, not fatal.
    benchlens()
        .args([
            "compare",
            &fixture("analysis/old.csv"),
            &fixture("analysis/new.csv"),
        ])
        .args(["--format", "json"])
        .assert()
        .success()
        .stdout(predicate::str::contains("\"verdict\": \"worse\""));
}

/// The stderr and exit code of `benchlens ARGS`.
fn failure(args: &[&str]) -> (Option<i32>, String) {
    let out = benchlens().args(args).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `convert`, `inspect` and `compare` print an error as `run` and `mock` do: one line,
/// `error: ` then the error and each of its sources joined by `: ` (anyhow's `{:#}`).
#[test]
fn errors_print_as_one_error_line_with_their_causes() {
    let missing =
        "error: /no/such/file.json: cannot read: No such file or directory (os error 2)\n";
    for sub in ["convert", "inspect"] {
        assert_eq!(
            failure(&[sub, "/no/such/file.json"]),
            (Some(1), missing.to_string()),
            "{sub}"
        );
    }
    // compare reads both files before giving up, then says why it stopped; exit code 2.
    assert_eq!(
        failure(&["compare", "/no/such/file.json", "/no/such/other.json"]),
        (
            Some(2),
            format!(
                "{missing}{}error: 2 of the files could not be read\n",
                missing.replace("file.json", "other.json")
            )
        )
    );
    // A bad flag value.
    assert_eq!(
        failure(&["compare", &fixture(SEED_000), "--by", "gpux"]),
        (
            Some(2),
            "error: unknown dimension \"gpux\"; use a canonical name such as gpu, engine, model, \
             batch_size or tag.<key>\n"
                .to_string()
        )
    );
    // A file that is read but not understood names itself and the line.
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, b"{\"request_throughput\": [1, 2,").unwrap();
    let (code, stderr) = failure(&["inspect", bad.to_str().unwrap()]);
    assert_eq!(code, Some(1));
    assert!(
        stderr.starts_with(&format!("error: {}: invalid JSON at line 1", bad.display()))
            && stderr.lines().count() == 1,
        "{stderr}"
    );
}

/// `--help` ends with the error shape and the exit codes the tests above check.
#[test]
fn help_says_how_errors_print_and_what_exit_codes_mean() {
    let out = benchlens().arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(
        help.contains("`error: ` then what failed and each cause"),
        "{help}"
    );
    assert!(help.contains("130 an interrupted run."), "{help}");
}

#[test]
fn each_deployment_is_read_at_a_target_interactivity_with_its_cost() {
    // Two engines on H100s (one counted by `gpu_count`, one by `tp`), a sweep each.
    let file = fixture("economics/deployments.csv");
    let out = benchlens()
        .args(["compare", &file, "--at-interactivity", "25"])
        .args(["--per-gpu", "--price", "H100=2", "--format", "json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["series_by"][0], "engine");
    let rows = v["rows"].as_array().unwrap();
    let row = |engine: &str| rows.iter().find(|r| r["series"] == engine).unwrap();
    // vllm: between 10 tok/s/user (2,000 tok/s/GPU) and 40 (1,000): at 25, 1,500.
    let vllm = row("vllm");
    assert_eq!(vllm["throughput_at_target"], 1500.0);
    // 8 × $2 an hour over 12,000 tok/s (interpolated on the cost frontier itself).
    let usd = vllm["usd_per_million_output_tokens_at_target"]
        .as_f64()
        .unwrap();
    let between = |tput: f64| 8.0 * 2.0 / 3600.0 / tput * 1e6;
    assert!(usd > between(16_000.0) && usd < between(8_000.0), "{usd}");
    // sglang (4 GPUs from tp) was measured at 25 and 80 tok/s per user: read at 25 exactly.
    assert_eq!(row("sglang")["throughput_at_target"], 1500.0);
    assert!(v["prices"][0]
        .as_str()
        .unwrap()
        .contains("$2.00/GPU-hour (yours)"));

    // Past every measured interactivity: not reached, never extrapolated.
    benchlens()
        .args(["compare", &file, "--at-interactivity", "500"])
        .assert()
        .success()
        .stdout(predicate::str::contains("not reached"))
        .stdout(predicate::str::contains(
            "at most 100.00 tok/s per user measured",
        ));
    // A bad price names itself; --per-gpu has nothing to divide in a regression check.
    benchlens()
        .args(["compare", &file, "--at-interactivity", "25"])
        .args(["--price", "H100"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--price: `H100`: expected GPU=number",
        ));
    benchlens()
        .args(["compare", &file, &file, "--per-gpu"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not regression checks"));
}

/// `--per-gpu` in an improvement table: each throughput divided by its record's GPU count
/// (gpu_count, else tp), deployments of different sizes matched, and the records without a
/// count named, not guessed as one GPU.
#[test]
fn an_improvement_table_compares_throughput_per_gpu() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("deployments.csv");
    std::fs::write(
        &csv,
        "engine,gpu,gpu_count,tp,max_concurrency,output_throughput\n\
         vllm,H100,8,,16,8000\n\
         vllm,H100,8,,64,16000\n\
         sglang,H100,,4,16,6000\n\
         sglang,H100,,4,64,10000\n\
         sglang,H100,,,128,12000\n",
    )
    .unwrap();
    let csv = csv.to_str().unwrap();
    let sides = [
        "--by",
        "engine",
        "--baseline",
        "vllm",
        "--candidate",
        "sglang",
    ];
    let json = |extra: &[&str]| -> serde_json::Value {
        let out = benchlens()
            .args(["compare", csv])
            .args(sides)
            .args(extra)
            .args(["--format", "json"])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        serde_json::from_slice(&out).unwrap()
    };
    let improvements = |v: &serde_json::Value| -> Vec<f64> {
        v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["improvement_pct"].as_f64().unwrap())
            .collect()
    };
    // Whole deployments: 8 GPUs against 4 are not matched at all.
    assert!(improvements(&json(&[])).is_empty());
    // Per GPU: 1,000 against 1,500 and 2,000 against 2,500 tok/s.
    let v = json(&["--per-gpu"]);
    assert_eq!(improvements(&v), [50.0, 25.0]);
    assert_eq!(v["metric"], "output_throughput");
    assert_eq!(v["per_gpu"], true);
    assert_eq!(v["without_gpu_count"], 1);
    // Every format says the values are per GPU and what each was divided by.
    let row = &v["rows"][0];
    assert_eq!(row["baseline_value_per_gpu"], 1000.0);
    assert_eq!(row["candidate_value_per_gpu"], 1500.0);
    assert_eq!(
        (
            row["baseline_gpus"].as_f64(),
            row["candidate_gpus"].as_f64()
        ),
        (Some(8.0), Some(4.0))
    );
    assert!(row.get("baseline_value").is_none(), "{row}");
    let csv_out = benchlens()
        .args(["compare", csv])
        .args(sides)
        .args(["--per-gpu", "--format", "csv"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let csv_out = String::from_utf8(csv_out).unwrap();
    assert!(
        csv_out.lines().next().unwrap().contains(
            "baseline_value_per_gpu,baseline_gpus,candidate_value_per_gpu,candidate_gpus,improvement_pct"
        ),
        "{csv_out}"
    );
    assert!(csv_out.contains("1000,8,1500,4,50"), "{csv_out}");
    benchlens()
        .args(["compare", csv])
        .args(sides)
        .arg("--per-gpu")
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "per GPU: each record's output_throughput divided by its GPU count",
        ))
        .stdout(predicate::str::contains(
            "1 record without a GPU count left out",
        ))
        .stdout(predicate::str::contains(
            "engine = vllm: Output token throughput (tok/s) per GPU | Baseline GPUs |",
        ));
    // A latency is not divided.
    benchlens()
        .args(["compare", csv])
        .args(sides)
        .args(["--per-gpu", "--metric", "mean_ttft_ms"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--per-gpu divides a throughput"));
}

#[test]
fn a_file_without_tpot_says_what_it_lacks() {
    benchlens()
        .args([
            "compare",
            &fixture(SEED_002),
            "--at-interactivity",
            "25",
            "--per-gpu",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("No frontier to read: of"))
        .stdout(predicate::str::contains(
            "a GPU count (gpu_count, or tp × pp",
        ));
}
