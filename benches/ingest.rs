//! Ingest throughput: builds a ~10 MB vLLM serving JSON with per-request arrays and a
//! 100,000-row tidy CSV in memory, reads each several times and prints MB/s.
//!
//! Run with `cargo bench --bench ingest` (target: ≥ 200 MB/s natively). No assertions on
//! timing: this only reports.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

/// The allocator the `benchlens` binary runs with (src/main.rs), so these figures are the
/// binary's: the library sets none.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::fmt::Write as _;
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use benchlens::ingest;
use benchlens::model::{LatencyMetric, MetricKey, Metrics, Percentile, Record, Stat};

fn serving_json(target_bytes: usize) -> String {
    // One run object; the per-request arrays grow until the file reaches the target size.
    // Like a 128-output-token run: each request has 100-128 inter-token gaps (`itls`).
    let gaps = |i: usize| 100 + (i * 7) % 29;
    let approx_request_bytes = 10 * 114 + 40;
    let n = target_bytes / approx_request_bytes;
    let total_output: usize = (0..n).map(|i| gaps(i) + 1).sum();
    let mut s = String::with_capacity(target_bytes + 4096);
    s.push_str("{\"date\": \"20250301-101500\", \"backend\": \"vllm\", \"model_id\": \"meta-llama/Llama-3.1-8B-Instruct\", ");
    let _ = write!(
        s,
        "\"num_prompts\": {n}, \"request_rate\": \"inf\", \"burstiness\": 1.0, \"max_concurrency\": null, \"duration\": 120.5, \"completed\": {n}, \"total_input_tokens\": {}, \"total_output_tokens\": {}, ",
        n * 1000,
        total_output
    );
    let list = |s: &mut String, name: &str, f: &dyn Fn(usize) -> String| {
        let _ = write!(s, "\"{name}\": [");
        for i in 0..n {
            if i > 0 {
                s.push_str(", ");
            }
            s.push_str(&f(i));
        }
        s.push_str("], ");
    };
    list(&mut s, "input_lens", &|_| "1000".into());
    list(&mut s, "output_lens", &|i| (gaps(i) + 1).to_string());
    list(&mut s, "ttfts", &|i| {
        format!("{:.6}", 0.05 + (i % 97) as f64 * 1e-4)
    });
    list(&mut s, "itls", &|i| {
        let g: Vec<String> = (0..gaps(i))
            .map(|k| format!("{:.6}", 0.01 + ((i + k) % 13) as f64 * 1e-4))
            .collect();
        format!("[{}]", g.join(", "))
    });
    list(&mut s, "errors", &|_| "\"\"".into());
    s.push_str("\"request_throughput\": 26.9, \"output_throughput\": 2690.1, \"mean_ttft_ms\": 51.2, \"median_ttft_ms\": 50.9, \"p99_ttft_ms\": 60.1, \"mean_itl_ms\": 10.6, \"p99.9_itl_ms\": 12.2}");
    s
}

fn tidy_csv(rows: usize) -> String {
    let mut s = String::with_capacity(rows * 80);
    s.push_str("model,gpu,batch_size,concurrency,input_len,output_len,TTFT (ms),TPOT (ms),p99 ITL (ms),Throughput (tok/s)\n");
    for i in 0..rows {
        let _ = writeln!(
            s,
            "llama-{},H100,{},{},1024,128,{:.3},{:.3},{:.3},{:.2}",
            i % 7,
            1 << (i % 8),
            1 << (i % 6),
            40.0 + (i % 100) as f64 * 0.37,
            8.0 + (i % 50) as f64 * 0.11,
            20.0 + (i % 40) as f64 * 0.5,
            1500.0 + (i % 1000) as f64
        );
    }
    s
}

/// CPU time of the whole process so far (every thread, user and system), and the time this
/// thread was runnable but waiting for a CPU (`/proc/self/schedstat`, Linux). On a shared
/// machine the wall-clock rate drops while others' builds run; the rate per CPU second and the
/// share of time spent waiting say how much of that drop is the machine's.
fn cpu_and_wait() -> Option<(Duration, Duration)> {
    // SAFETY: getrusage only writes the struct it is given.
    let usage = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        (libc::getrusage(libc::RUSAGE_SELF, &mut u) == 0).then_some(u)
    }?;
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    let cpu = tv(usage.ru_utime) + tv(usage.ru_stime);
    let s = std::fs::read_to_string("/proc/self/schedstat").ok()?;
    let wait = s.split_whitespace().nth(1)?.parse::<u64>().ok()?;
    Some((cpu, Duration::from_nanos(wait)))
}

/// `  cpu: x ms/run, y MB/s, waited z %` for a loop of `runs` over `mb` megabytes taking `wall`.
fn cpu_note(before: Option<(Duration, Duration)>, runs: u32, mb: f64, wall: Duration) -> String {
    match (before, cpu_and_wait()) {
        (Some((c0, w0)), Some((c1, w1))) if c1 > c0 => {
            let run = (c1 - c0).as_secs_f64() / f64::from(runs);
            let waited = (w1 - w0).as_secs_f64() / wall.as_secs_f64();
            format!(
                "  cpu {:>6.1} ms/run {:>7.1} MB/s, waited {:>3.0} %",
                run * 1e3,
                mb / run,
                waited * 100.0
            )
        }
        _ => String::new(),
    }
}

/// Reads `bytes` repeatedly for at least a second. Reading is timed up to the records being
/// returned; dropping them is timed apart (it is not reading, and a program that reads a file
/// usually keeps its records). The first read in the process is shown on its own: it is the
/// one that gets all its memory fresh from the kernel.
fn measure(name: &str, file: &str, bytes: &[u8]) {
    let mb = bytes.len() as f64 / 1e6;
    let t = Instant::now();
    let got = ingest::read(file, bytes).expect("benchmark input reads");
    let first = t.elapsed();
    let records = got.records.len();
    drop(got);
    let before = cpu_and_wait();
    let start = Instant::now();
    let (mut reading, mut dropping) = (Duration::ZERO, Duration::ZERO);
    let mut runs = 0u32;
    while start.elapsed() < Duration::from_secs(1) || runs < 3 {
        let t = Instant::now();
        let got = black_box(ingest::read(file, black_box(bytes)).ok());
        let read = Instant::now();
        drop(got);
        reading += read - t;
        dropping += read.elapsed();
        runs += 1;
    }
    let per_run = reading.as_secs_f64() / f64::from(runs);
    println!(
        "{name:<40} {mb:>7.1} MB  {records:>7} records  {:>8.1} ms/run  {:>7.1} MB/s  (first read {:.1} ms; dropping the records {:.1} ms/run){}",
        per_run * 1e3,
        mb / per_run,
        first.as_secs_f64() * 1e3,
        dropping.as_secs_f64() * 1e3 / f64::from(runs),
        cpu_note(before, runs, mb, start.elapsed())
    );
}

/// The floor for the CSV case: building (and dropping) the same records with the same
/// allocations as the reader — text values shared between records, one metrics vector per
/// record — without reading anything.
fn records_only(rows: usize, csv_bytes: usize) {
    let build = || {
        let source: Arc<str> = "tidy.csv".into();
        let format: Arc<str> = "generic_csv".into();
        let gpu: Arc<str> = "H100".into();
        let models: Vec<Arc<str>> = (0..7).map(|i| format!("llama-{i}").into()).collect();
        let mut v: Vec<Record> = Vec::with_capacity(rows);
        for i in 0..rows {
            let mut r = Record {
                source: Some(Arc::clone(&source)),
                format: Some(Arc::clone(&format)),
                model: Some(Arc::clone(&models[i % 7])),
                gpu: Some(Arc::clone(&gpu)),
                metrics: Metrics::with_capacity(4),
                batch_size: Some(1 << (i % 8)),
                max_concurrency: Some(1 << (i % 6)),
                input_len: Some(1024.0),
                output_len: Some(128.0),
                ..Record::default()
            };
            for (k, x) in [
                MetricKey::Latency(LatencyMetric::Ttft, Stat::Mean),
                MetricKey::Latency(LatencyMetric::Tpot, Stat::Mean),
                MetricKey::Latency(
                    LatencyMetric::Itl,
                    Stat::P(Percentile::new(99.0).expect("p99")),
                ),
                MetricKey::OutputThroughput,
            ]
            .into_iter()
            .zip([40.0, 8.0, 20.0, 1500.0])
            {
                r.set_metric(k, x);
            }
            v.push(r);
        }
        v
    };
    black_box(build());
    let before = cpu_and_wait();
    let start = Instant::now();
    let mut runs = 0u32;
    while start.elapsed() < Duration::from_secs(1) || runs < 3 {
        black_box(build());
        runs += 1;
    }
    let per_run = start.elapsed().as_secs_f64() / f64::from(runs);
    let mb = csv_bytes as f64 / 1e6;
    println!(
        "{:<40} {:>7} {rows:>15} records  {:>8.1} ms/run  {:>7.1} MB/s of that CSV{}",
        "(floor: only building those records)",
        "",
        per_run * 1e3,
        mb / per_run,
        cpu_note(before, runs, mb, start.elapsed())
    );
}

fn main() {
    // `cargo bench --bench ingest -- csv` runs only the cases whose name contains "csv".
    let filter = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .unwrap_or_default()
        .to_lowercase();
    let wanted = |name: &str| name.to_lowercase().contains(&filter);
    if wanted("vllm serving json") {
        let json = serving_json(10_000_000);
        measure(
            "vLLM serving JSON, per-request arrays",
            "run.json",
            json.as_bytes(),
        );
        let with_inf = json.replacen("\"inf\"", "Infinity", 1);
        measure(
            "same, with a bare Infinity (rewrite pass)",
            "run.json",
            with_inf.as_bytes(),
        );
    }
    if wanted("tidy csv") {
        let csv = tidy_csv(100_000);
        measure("tidy CSV, 100k rows", "tidy.csv", csv.as_bytes());
        records_only(100_000, csv.len());
    }
}
