//! Ctrl-C against a server that accepts connections and never answers: the first SIGINT
//! cancels what is in flight (recorded as `cancelled`, not as server errors) and writes the
//! partial files within a second; a second SIGINT exits at once, the files already written.
//! SIGTERM (a pod stopped) and SIGHUP (a terminal closed) do the same, with their own exit codes
//! (143, 129) and their names in the file; a SIGKILL loses at most the last second's rows.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::io::Read;
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use benchlens::model::{canonical, MetricKey};

mod support;
use support::{Killed, BIN};

/// A 127.0.0.1 listener that accepts every connection, reads what comes and never answers.
/// Returns its URL and the number of connections on which request bytes arrived so far. The
/// thread ends with the test process.
fn hanging_server() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let requested = Arc::new(AtomicUsize::new(0));
    let counter = requested.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            let counter = counter.clone();
            std::thread::spawn(move || {
                let mut conn = conn;
                let mut buf = [0u8; 4096];
                let mut counted = false;
                // Hold the connection open, answering nothing, until the client goes away.
                while matches!(conn.read(&mut buf), Ok(n) if n > 0) {
                    if !counted {
                        counter.fetch_add(1, Ordering::SeqCst);
                        counted = true;
                    }
                }
            });
        }
    });
    (url, requested)
}

fn spawn_run(url: &str, dir: &std::path::Path, model: bool) -> Killed {
    let mut cmd = Command::new(BIN);
    cmd.args(["run", "--base-url", url, "--num-prompts", "4"])
        .args(["--max-concurrency", "4", "--tokenizer", "words"])
        .args(["--input-len", "4", "--output-len", "4"])
        .args(["--result-filename", "r.json", "--no-progress"]);
    if model {
        cmd.args(["--model", "m"]);
    }
    Killed(
        cmd.current_dir(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    )
}

fn sigint(child: &Killed) {
    signal(child, "INT");
}

fn signal(child: &Killed, name: &str) {
    let pid = child.0.id().to_string();
    assert!(Command::new("kill")
        .args([&format!("-{name}"), &pid])
        .status()
        .unwrap()
        .success());
}

/// Waits for the child to exit, at most `limit`; returns its exit code and when it exited.
fn wait_exit(child: &mut Killed, limit: Duration) -> (Option<i32>, Instant) {
    let start = Instant::now();
    while start.elapsed() < limit {
        if let Some(status) = child.0.try_wait().unwrap() {
            return (status.code(), Instant::now());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("still running {limit:?} after the interrupt");
}

/// Waits until `n` requests have reached the server (their bytes arrived), at most 20 s.
fn wait_for_requests(requested: &AtomicUsize, n: usize) {
    let start = Instant::now();
    while requested.load(Ordering::SeqCst) < n {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "only {} request(s) after 20 s",
            requested.load(Ordering::SeqCst)
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Waits until the run says on stderr that it took the first interrupt, at most 20 s.
fn wait_for_interrupt_notice(child: &mut Killed) {
    let line = interrupt_notice(child);
    assert!(line.contains("Ctrl-C again"), "{line}");
}

/// The line with which the run says on stderr that it took the first signal (20 s at most).
fn interrupt_notice(child: &mut Killed) -> String {
    let stderr = child.0.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufRead::lines(std::io::BufReader::new(stderr)) {
            let Ok(line) = line else { break };
            if line.starts_with("interrupted") {
                let _ = tx.send(line);
            }
        }
    });
    rx.recv_timeout(Duration::from_secs(20)).unwrap()
}

fn check_partial_files(dir: &std::path::Path) {
    let text = std::fs::read_to_string(dir.join("r.json")).unwrap();
    let decoded = canonical::from_json(&text).unwrap();
    let r = &decoded.records[0];
    assert_eq!(r.tags["partial"], "true");
    // Cancelled requests are neither successes nor server errors.
    assert_eq!(r.metrics[&MetricKey::Completed], 0.0);
    assert_eq!(r.metrics[&MetricKey::Failed], 0.0);
    assert_eq!(
        r.metrics[&MetricKey::Extra("cancelled_requests".into())],
        4.0
    );
    let lines = std::fs::read_to_string(dir.join("r.requests.jsonl")).unwrap();
    let kinds: Vec<String> = lines
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["error_kind"].as_str().unwrap_or("").to_string()
        })
        .collect();
    assert_eq!(kinds, vec!["cancelled"; 4], "{lines}");
}

#[test]
fn first_sigint_cancels_hung_requests_and_writes_within_a_second() {
    let (url, requested) = hanging_server();
    let dir = tempfile::tempdir().unwrap();
    let mut run = spawn_run(&url, dir.path(), true);
    wait_for_requests(&requested, 4);
    assert!(!dir.path().join("r.json").exists());
    sigint(&run);
    let sent = Instant::now();
    let (code, exited) = wait_exit(&mut run, Duration::from_secs(5));
    assert_eq!(code, Some(130));
    let took = exited - sent;
    assert!(
        took < Duration::from_secs(1),
        "exited {took:?} after SIGINT"
    );
    check_partial_files(dir.path());
    let mut stdout = String::new();
    run.0
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    assert!(stdout.contains("Cancelled by interrupt:"), "{stdout}");
}

#[test]
fn second_sigint_exits_at_once_after_the_files_are_written() {
    let (url, requested) = hanging_server();
    let dir = tempfile::tempdir().unwrap();
    let mut run = spawn_run(&url, dir.path(), true);
    wait_for_requests(&requested, 4);
    sigint(&run);
    // The second only once the first was taken, else both could arrive as one.
    wait_for_interrupt_notice(&mut run);
    sigint(&run);
    let sent = Instant::now();
    let (code, exited) = wait_exit(&mut run, Duration::from_secs(5));
    assert_eq!(code, Some(130));
    assert!(exited - sent < Duration::from_secs(1));
    check_partial_files(dir.path());
}

#[test]
fn sigint_during_the_model_probe_ends_the_run() {
    let (url, requested) = hanging_server();
    let dir = tempfile::tempdir().unwrap();
    let mut run = spawn_run(&url, dir.path(), false);
    wait_for_requests(&requested, 1);
    sigint(&run);
    let sent = Instant::now();
    let (code, exited) = wait_exit(&mut run, Duration::from_secs(5));
    assert_eq!(code, Some(130));
    assert!(exited - sent < Duration::from_secs(1));
    let mut stderr = String::new();
    run.0
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(stderr.contains("nothing was measured"), "{stderr}");
}

/// The files of a run interrupted by `name`, and nothing else: no scratch file left behind.
fn check_signal_files(dir: &std::path::Path, name: &str) {
    check_partial_files(dir);
    let text = std::fs::read_to_string(dir.join("r.json")).unwrap();
    let r = &canonical::from_json(&text).unwrap().records[0];
    assert_eq!(r.tags["interrupted_by"], name);
    let mut left: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, vec!["r.json", "r.requests.jsonl"]);
}

#[test]
fn sigterm_writes_the_partial_files_within_a_second_and_exits_143() {
    let (url, requested) = hanging_server();
    let dir = tempfile::tempdir().unwrap();
    let mut run = spawn_run(&url, dir.path(), true);
    wait_for_requests(&requested, 4);
    signal(&run, "TERM");
    let sent = Instant::now();
    let (code, exited) = wait_exit(&mut run, Duration::from_secs(5));
    assert_eq!(code, Some(143));
    let took = exited - sent;
    assert!(
        took < Duration::from_secs(1),
        "exited {took:?} after SIGTERM"
    );
    check_signal_files(dir.path(), "SIGTERM");
}

#[test]
fn sighup_writes_the_partial_files_and_exits_129() {
    let (url, requested) = hanging_server();
    let dir = tempfile::tempdir().unwrap();
    let mut run = spawn_run(&url, dir.path(), true);
    wait_for_requests(&requested, 4);
    signal(&run, "HUP");
    let sent = Instant::now();
    let (code, exited) = wait_exit(&mut run, Duration::from_secs(5));
    assert_eq!(code, Some(129));
    assert!(exited - sent < Duration::from_secs(1));
    check_signal_files(dir.path(), "SIGHUP");
}

#[test]
fn second_sigterm_exits_at_once_after_the_files_are_written() {
    let (url, requested) = hanging_server();
    let dir = tempfile::tempdir().unwrap();
    let mut run = spawn_run(&url, dir.path(), true);
    wait_for_requests(&requested, 4);
    signal(&run, "TERM");
    let line = interrupt_notice(&mut run);
    assert!(line.contains("interrupted by SIGTERM"), "{line}");
    signal(&run, "TERM");
    let sent = Instant::now();
    let (code, exited) = wait_exit(&mut run, Duration::from_secs(5));
    assert_eq!(code, Some(143));
    assert!(exited - sent < Duration::from_secs(1));
    check_partial_files(dir.path());
}

/// Runs 400 requests at 50 a second (evenly spaced: burstiness 100) of `output_len` tokens
/// against the mock at `url`, SIGKILLs the run 2.5 s into its stage, and gives the per-request
/// file's text and how far into the stage the kill came, in seconds.
fn killed_in_stage(url: &str, output_len: &str) -> (String, f64) {
    let dir = tempfile::tempdir().unwrap();
    let mut run = Killed(
        Command::new(BIN)
            .args([
                "run",
                "--base-url",
                url,
                "--model",
                "m",
                "--tokenizer",
                "words",
            ])
            .args([
                "--num-prompts",
                "400",
                "--request-rate",
                "50",
                "--burstiness",
                "100",
            ])
            .args([
                "--input-len",
                "4",
                "--output-len",
                output_len,
                "--ignore-eos",
            ])
            .args(["--result-filename", "r.json", "--no-progress"])
            .current_dir(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let rows = dir.path().join("r.requests.jsonl");
    let start = Instant::now();
    while !rows.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "no per-request file"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    // The stage started at most now.
    let stage_start = Instant::now();
    std::thread::sleep(Duration::from_millis(2500));
    signal(&run, "KILL");
    let killed = stage_start.elapsed().as_secs_f64();
    let (code, _) = wait_exit(&mut run, Duration::from_secs(5));
    assert_eq!(code, None, "killed by the signal");
    (std::fs::read_to_string(&rows).unwrap(), killed)
}

/// A run killed outright (SIGKILL: nothing can be written then) has on disk the row of every
/// request that finished more than a second before: rows are written out within half a second
/// of finishing, not in 64 KB blocks.
#[test]
fn sigkill_loses_at_most_the_last_second_of_rows() {
    let (_mock, url) = support::spawn_mock(&["--ttft-ms", "5", "--itl-ms", "1"], "http");
    // 50 requests a second, evenly spaced (burstiness 100): ~125 short rows by the kill, well
    // under one 64 KB block.
    let (text, killed) = killed_in_stage(&url, "4");
    // Whole rows only (the kill may cut one).
    let whole = &text[..text.rfind('\n').map_or(0, |i| i + 1)];
    let intended: Vec<f64> = whole
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["intended_send_s"].as_f64().unwrap()
        })
        .collect();
    // Rows are in the order requests ended: the latest sent is the largest.
    let last = intended.iter().copied().fold(0.0, f64::max);
    assert!(
        last >= killed - 1.5,
        "{} rows on disk, the last sent at {last:.2} s; killed at {killed:.2} s",
        intended.len()
    );
}

/// One slow request does not hold back the rows of those sent after it: the mock stalls the
/// first request for a minute (`--stall-rate 0.001`: of the first 600 requests only the first
/// meets the fault), 50 requests a second finish meanwhile, and a SIGKILL 2.5 s into the stage
/// finds on disk the row of every request but the slow one, up to those sent 1.5 s before the
/// kill (their rows reach the file within half a second of their end, in the order they ended).
/// Rows written in send order waited for the slow one: none was on disk.
#[test]
fn sigkill_with_a_slow_request_out_keeps_the_rows_of_those_finished_after_it() {
    let (_mock, url) = support::spawn_mock(
        &[
            "--ttft-ms",
            "5",
            "--itl-ms",
            "1",
            "--stall-rate",
            "0.001",
            "--stall-ms",
            "60000",
        ],
        "http",
    );
    let (text, killed) = killed_in_stage(&url, "8");
    let whole = &text[..text.rfind('\n').map_or(0, |i| i + 1)];
    let mut on_disk: Vec<(usize, f64)> = whole
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            assert!(v["error_kind"].is_null(), "{l}");
            (
                v["index"].as_u64().unwrap() as usize,
                v["intended_send_s"].as_f64().unwrap(),
            )
        })
        .collect();
    on_disk.sort_by_key(|r| r.0);
    let indices: Vec<usize> = on_disk.iter().map(|r| r.0).collect();
    let n = indices.len();
    eprintln!("killed {killed:.2} s into the stage: {n} rows on disk");
    assert!(!indices.contains(&0), "the slow request is still out");
    // Every request sent up to 1.6 s before the kill (request k at about k / 50 s) finished
    // over a second before it: its row is on disk.
    let due = ((killed - 1.6) * 50.0).floor() as usize;
    assert!(due >= 40, "killed {killed:.2} s into the stage");
    let missing: Vec<usize> = (1..=due).filter(|k| !indices.contains(k)).collect();
    assert!(
        missing.is_empty(),
        "{n} rows on disk, killed at {killed:.2} s; missing {missing:?}"
    );
    let last = on_disk.iter().map(|r| r.1).fold(0.0, f64::max);
    assert!(
        last >= killed - 1.5,
        "{n} rows on disk, the last sent at {last:.2} s; killed at {killed:.2} s"
    );
}

/// A run killed outright (SIGKILL, which no handler sees) leaves no scratch file behind: its
/// scratch files have no name in the folder even while the stage runs (issue 31's `tempfile`).
#[test]
fn sigkill_leaves_no_scratch_file_behind() {
    let (url, requested) = hanging_server();
    let dir = tempfile::tempdir().unwrap();
    let mut run = spawn_run(&url, dir.path(), true);
    wait_for_requests(&requested, 4);
    let names = || {
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        left
    };
    // The stage is running: its rows' file is open, its scratch files have no name.
    assert_eq!(names(), vec!["r.requests.jsonl"]);
    signal(&run, "KILL");
    let (code, _) = wait_exit(&mut run, Duration::from_secs(5));
    assert_eq!(code, None, "killed by a signal");
    assert_eq!(names(), vec!["r.requests.jsonl"]);
}
