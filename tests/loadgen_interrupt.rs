//! Ctrl-C against a server that accepts connections and never answers: the first SIGINT
//! cancels what is in flight (recorded as `cancelled`, not as server errors) and writes the
//! partial files within a second; a second SIGINT exits at once, the files already written.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::io::Read;
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use benchlens::model::{canonical, MetricKey};

const BIN: &str = env!("CARGO_BIN_EXE_benchlens");

/// A child process that is killed when the test ends, even by a panic.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A 127.0.0.1 listener that accepts every connection, reads what comes and never answers.
/// Returns its URL and the number of connections accepted so far. The thread ends with the
/// test process.
fn hanging_server() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let accepted = Arc::new(AtomicUsize::new(0));
    let counter = accepted.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            counter.fetch_add(1, Ordering::SeqCst);
            std::thread::spawn(move || {
                let mut conn = conn;
                let mut buf = [0u8; 4096];
                // Hold the connection open, answering nothing, until the client goes away.
                while matches!(conn.read(&mut buf), Ok(n) if n > 0) {}
            });
        }
    });
    (url, accepted)
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
    let pid = child.0.id().to_string();
    assert!(Command::new("kill")
        .args(["-INT", &pid])
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

fn wait_for_connections(accepted: &AtomicUsize, n: usize) {
    let start = Instant::now();
    while accepted.load(Ordering::SeqCst) < n {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "only {} connection(s) after 20 s",
            accepted.load(Ordering::SeqCst)
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    // Let the requests be written onto their connections.
    std::thread::sleep(Duration::from_millis(200));
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
    let (url, accepted) = hanging_server();
    let dir = tempfile::tempdir().unwrap();
    let mut run = spawn_run(&url, dir.path(), true);
    wait_for_connections(&accepted, 4);
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
    let (url, accepted) = hanging_server();
    let dir = tempfile::tempdir().unwrap();
    let mut run = spawn_run(&url, dir.path(), true);
    wait_for_connections(&accepted, 4);
    sigint(&run);
    std::thread::sleep(Duration::from_millis(20));
    sigint(&run);
    let sent = Instant::now();
    let (code, exited) = wait_exit(&mut run, Duration::from_secs(5));
    assert_eq!(code, Some(130));
    assert!(exited - sent < Duration::from_secs(1));
    check_partial_files(dir.path());
}

#[test]
fn sigint_during_the_model_probe_ends_the_run() {
    let (url, accepted) = hanging_server();
    let dir = tempfile::tempdir().unwrap();
    let mut run = spawn_run(&url, dir.path(), false);
    wait_for_connections(&accepted, 1);
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
