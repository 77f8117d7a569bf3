//! `benchlens sweep` against the mock, whose capacity can be worked out on paper.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::process::Command;
use std::time::Duration;

use benchlens::model::{canonical, MetricKey};

mod support;

const BIN: &str = env!("CARGO_BIN_EXE_benchlens");

/// The mock with `--max-batch B --ttft-ms T --itl-ms I`, asked for L tokens per reply
/// (`--ignore-eos`), holds a batch slot from admission to its last token: T, then L − 1 steps
/// of `I × (1 + running / B)`. Full, a slot lasts S = T + 2 (L − 1) I, so the batch finishes
/// B / S requests a second; above that rate requests queue before their first token without
/// bound and TTFT grows for as long as the probe lasts. With B = 4, T = 20 ms, I = 2 ms and
/// L = 16: S = 20 + 2 × 15 × 2 = 80 ms and the capacity is 4 / 0.080 = 50 req/s.
const PAPER_CAPACITY: f64 = 50.0;

#[test]
fn sweep_finds_the_mock_capacity_worked_out_on_paper() {
    let dir = std::env::temp_dir().join(format!("benchlens-sweep-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // Near-constant arrivals (burstiness 1000: gamma inter-arrivals with 3 % spread), so the
    // queue only builds above the capacity. p90 TTFT within 100 ms (5 × T): below the capacity
    // TTFT is T plus the client's overhead; above it by 5 %, the queue grows by 2.5 req/s and
    // the last tenth of a 4 s probe waits about 0.2 s.
    let out = Command::new(BIN)
        .args([
            "sweep",
            "--mock",
            "--mock-ttft-ms",
            "20",
            "--mock-itl-ms",
            "2",
            "--mock-max-batch",
            "4",
            "--model",
            "m",
            "--tokenizer",
            "words",
            "--input-len",
            "16",
            "--output-len",
            "16",
            "--ignore-eos",
            "--burstiness",
            "1000",
            "--duration",
            "4",
            "--start",
            "20",
            "--goodput",
            "p90_ttft:100",
            "--no-progress",
            "--result-filename",
            "sweep.json",
            "--result-dir",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout
        .lines()
        .find(|l| l.starts_with("sweep: capacity "))
        .unwrap_or_else(|| panic!("no capacity line in\n{stdout}"));
    let found: f64 = line["sweep: capacity ".len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let off = (found / PAPER_CAPACITY - 1.0).abs();
    assert!(
        off <= 0.05,
        "found {found} req/s, {:.1} % from the paper's {PAPER_CAPACITY}\n{stdout}",
        off * 100.0
    );

    // Every probe is a stage of one file, with its verdict, window and the capacity.
    let text = std::fs::read_to_string(dir.join("sweep.json")).unwrap();
    let records = canonical::from_json(&text).unwrap().records;
    assert!(records.len() >= 5, "{} probes", records.len());
    let probes =
        stdout.matches(" req/s: passed").count() + stdout.matches(" req/s: failed").count();
    assert_eq!(records.len(), probes);
    for (i, r) in records.iter().enumerate() {
        assert_eq!(r.metrics[&MetricKey::Extra("probe".into())], (i + 1) as f64);
        // Nothing that differs from probe to probe but the load and the verdict is a dimension.
        assert_eq!(r.date, records[0].date);
        assert_eq!(r.tags.get("server_url"), records[0].tags.get("server_url"));
        assert!(!r.tags.contains_key("stage"));
        let verdict = r.tags.get("verdict").map(String::as_str);
        assert!(matches!(verdict, Some("passed" | "failed")), "{verdict:?}");
        assert_eq!(
            r.tags
                .get("capacity")
                .map(|c| c.starts_with(line[7..].trim())),
            Some(true)
        );
        assert!(r
            .tags
            .get("steady_window")
            .is_some_and(|w| w.starts_with("warm-up")));
        let load = r
            .metrics
            .get(&MetricKey::Extra("probe_load".into()))
            .copied();
        assert_eq!(load, r.request_rate);
        // The verdict agrees with the recorded percentile.
        let p90 = r.metrics[&MetricKey::Extra("slo_p90_ttft_ms".into())];
        assert_eq!(
            verdict == Some("passed"),
            p90 <= 100.0,
            "probe {}: {p90}",
            i + 1
        );
    }
    let requests = std::fs::read_to_string(dir.join("sweep.requests.jsonl")).unwrap();
    let stages: std::collections::BTreeSet<u64> = requests
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["stage"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(stages.len(), records.len());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sweep_refuses_options_it_owns_with_the_flag_named() {
    let out = Command::new(BIN)
        .args([
            "sweep",
            "--mock",
            "--goodput",
            "p99_ttft:500",
            "--request-rate",
            "4",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("invalid --request-rate: the sweep chooses the request rate"),
        "{err}"
    );
    let out = Command::new(BIN)
        .args(["sweep", "--mock", "--goodput", "p99_speed:500"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown objective \"p99_speed\""), "{err}");
}

#[test]
fn a_probe_too_short_for_its_percentile_is_run_again_longer() {
    let dir = tempfile::tempdir().unwrap();
    // p99 needs 101 requests in the steady window; 2 s at 30 req/s sends about 60.
    let out = Command::new(BIN)
        .args([
            "sweep",
            "--mock",
            "--mock-ttft-ms",
            "1",
            "--mock-itl-ms",
            "0",
        ])
        .args(["--model", "m", "--tokenizer", "words", "--input-len", "8"])
        .args(["--output-len", "4", "--ignore-eos", "--duration", "2"])
        .args([
            "--start",
            "30",
            "--max-load",
            "30",
            "--goodput",
            "p99_ttft:5000",
        ])
        .args([
            "--no-progress",
            "--result-filename",
            "sweep.json",
            "--result-dir",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("where 101 are needed: probing it again for "),
        "{stdout}"
    );
    let records =
        canonical::from_json(&std::fs::read_to_string(dir.path().join("sweep.json")).unwrap())
            .unwrap()
            .records;
    let verdicts: Vec<&str> = records
        .iter()
        .map(|r| r.tags.get("verdict").map_or("", String::as_str))
        .collect();
    // Too short (kept, not judged), lengthened until judged: then it passed, and that is the
    // capacity's one probe.
    assert_eq!(verdicts.first(), Some(&"too short"), "{verdicts:?}");
    assert_eq!(verdicts.last(), Some(&"passed"), "{verdicts:?}");
    assert!(verdicts[..verdicts.len() - 1]
        .iter()
        .all(|v| *v == "too short"));
    let window = |i: usize| records[i].metrics[&MetricKey::Extra("window_requests".into())];
    assert!(window(0) < 101.0 && window(records.len() - 1) >= 101.0);
    assert!(
        stdout.contains(
            "sweep: capacity at least 30.000 req/s: every load up to the maximum met the \
             objectives by the majority of its probes (the one probe at 30.000;"
        ),
        "{stdout}"
    );
}

/// A proxy in front of the mock that slows the first token of every request of the probes
/// listed (1-based) by `delay`, holding each request back before passing it on. It counts
/// probes by their `/v1/models` request: `sweep` gives no `--model`, so each probe's run asks
/// once before its load.
struct SlowingProxy {
    addr: std::net::SocketAddr,
    probes: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl SlowingProxy {
    fn start(upstream: std::net::SocketAddr, slow: &'static [usize], delay: Duration) -> Self {
        use std::io::{BufRead, BufReader, Read, Write};
        use std::sync::atomic::Ordering;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let probes = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = probes.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { return };
                let probes = counter.clone();
                std::thread::spawn(move || {
                    let Ok(mut up) = std::net::TcpStream::connect(upstream) else {
                        return;
                    };
                    // Each request goes on in one write, at once (no Nagle delay to time).
                    let _ = (up.set_nodelay(true), client.set_nodelay(true));
                    let (mut down, mut up_read) =
                        (client.try_clone().unwrap(), up.try_clone().unwrap());
                    std::thread::spawn(move || {
                        let _ = std::io::copy(&mut up_read, &mut down);
                        let _ = down.shutdown(std::net::Shutdown::Both);
                    });
                    let mut from = BufReader::new(client);
                    loop {
                        let mut head = Vec::new();
                        let mut length = 0usize;
                        loop {
                            let mut line = Vec::new();
                            if from.read_until(b'\n', &mut line).unwrap_or(0) == 0 {
                                let _ = up.shutdown(std::net::Shutdown::Write);
                                return;
                            }
                            let text = String::from_utf8_lossy(&line).to_ascii_lowercase();
                            if let Some(v) = text.strip_prefix("content-length:") {
                                length = v.trim().parse().unwrap_or(0);
                            }
                            head.extend_from_slice(&line);
                            if line == b"\r\n" {
                                break;
                            }
                        }
                        let mut body = vec![0; length];
                        if from.read_exact(&mut body).is_err() {
                            return;
                        }
                        if head.starts_with(b"GET /v1/models") {
                            probes.fetch_add(1, Ordering::SeqCst);
                        } else if slow.contains(&probes.load(Ordering::SeqCst)) {
                            std::thread::sleep(delay);
                        }
                        head.extend_from_slice(&body);
                        if up.write_all(&head).is_err() {
                            return;
                        }
                    }
                });
            }
        });
        SlowingProxy { addr, probes }
    }
}

#[test]
fn a_later_contradicting_probe_reopens_the_bracket() {
    let (_mock, url) = support::spawn_mock(&["--ttft-ms", "1", "--itl-ms", "0"], "http");
    let upstream: std::net::SocketAddr = url.trim_start_matches("http://").parse().unwrap();
    // Probe 2 (the first at 15 req/s) meets a server whose first tokens take 150 ms: it fails
    // p90_ttft:50, and the knee [10, 15) is bracketed. Probe 4, at 15 again, meets the fast
    // server and passes: a tie that reopens the bracket; probe 5 settles it, 2 to 1.
    let proxy = SlowingProxy::start(upstream, &[2], Duration::from_millis(150));
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(BIN)
        .args(["sweep", "--base-url", &format!("http://{}", proxy.addr)])
        .args([
            "--tokenizer",
            "words",
            "--input-len",
            "8",
            "--output-len",
            "4",
        ])
        .args(["--ignore-eos", "--burstiness", "1000", "--duration", "3"])
        .args(["--start", "10", "--max-load", "15", "--tolerance-pct", "60"])
        .args(["--goodput", "p90_ttft:50", "--no-progress"])
        .args(["--result-filename", "sweep.json", "--result-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let records =
        canonical::from_json(&std::fs::read_to_string(dir.path().join("sweep.json")).unwrap())
            .unwrap()
            .records;
    let probes: Vec<(f64, &str)> = records
        .iter()
        .map(|r| {
            (
                r.request_rate.unwrap(),
                r.tags.get("verdict").map_or("", String::as_str),
            )
        })
        .collect();
    assert_eq!(
        probes,
        [
            (10.0, "passed"),
            (15.0, "failed"),
            (10.0, "passed"),
            (15.0, "passed"),
            (15.0, "passed")
        ],
        "{stdout}"
    );
    assert_eq!(proxy.probes.load(std::sync::atomic::Ordering::SeqCst), 5);
    assert!(
        stdout.contains(
            "sweep: capacity at least 15.000 req/s: every load up to the maximum met the \
             objectives by the majority of its probes (2 of 3 probes at 15.000; probe 5)"
        ),
        "{stdout}"
    );
}
