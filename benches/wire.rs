//! The worker-to-page record encoding (`benchlens::wire`) against canonical JSON text, the
//! form it replaced: bytes per record and encode/decode rates on the same records.
//!
//! Input: the records of `public/samples/` and `tests/fixtures/vllm/` (summaries and runs
//! with per-request arrays), repeated until there are at least 100,000, plus any files named
//! in `WIRE_BENCH_FILES` (comma-separated, e.g. the browser bench's `tidy-100k.csv`). Prints
//! the median of several runs; asserts nothing about speed (`tests/wire.rs` checks that the
//! encoding round-trips). Run with `cargo bench --bench wire`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // bench code: a panic is the failure report

use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use benchlens::ingest;
use benchlens::model::canonical::{record_from_json, record_to_json};
use benchlens::model::Record;
use benchlens::wire::{decode_records, encode_records};

/// Records in the repeated set.
const MIN_RECORDS: usize = 100_000;

/// Runs per measurement; the median is printed.
const RUNS: usize = 5;

/// The records of every readable file directly inside `dir`.
fn records_in(dir: &Path) -> Vec<Record> {
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    paths.sort();
    paths
        .iter()
        .filter_map(|p| {
            let name = p.file_name()?.to_string_lossy().into_owned();
            ingest::read(&name, &std::fs::read(p).ok()?).ok()
        })
        .flat_map(|read| read.records)
        .collect()
}

/// The median time of `RUNS` runs of `f`, in seconds.
fn median_s(mut f: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..RUNS)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[RUNS / 2]
}

/// Prints one encoding's size and rates: `bytes` for `n` records, encoded in `encode_s` and
/// decoded in `decode_s` seconds.
fn rates(name: &str, bytes: usize, n: f64, encode_s: f64, decode_s: f64) {
    let rate = |s: f64| {
        format!(
            "{:.1} ms ({:.0} MB/s, {:.2} M records/s)",
            s * 1e3,
            bytes as f64 / 1e6 / s,
            n / s / 1e6
        )
    };
    println!(
        "  {name}: {bytes} bytes ({:.0} per record); encode {}, decode {}",
        bytes as f64 / n,
        rate(encode_s),
        rate(decode_s)
    );
}

/// Prints sizes and rates of both encodings for `records`.
fn compare(label: &str, records: &[Record]) {
    let n = records.len() as f64;
    let wire = encode_records(records);
    let text =
        serde_json::to_string(&records.iter().map(record_to_json).collect::<Vec<_>>()).unwrap();
    assert_eq!(decode_records(&wire).unwrap().len(), records.len());

    let wire_enc = median_s(|| drop(black_box(encode_records(black_box(records)))));
    let wire_dec = median_s(|| drop(black_box(decode_records(black_box(&wire)).unwrap())));
    let json_enc = median_s(|| {
        let values: Vec<_> = black_box(records).iter().map(record_to_json).collect();
        drop(black_box(serde_json::to_string(&values).unwrap()));
    });
    let json_dec = median_s(|| {
        let values: Vec<serde_json::Value> = serde_json::from_str(black_box(&text)).unwrap();
        let mut warnings = Vec::new();
        let back: Vec<Record> = values
            .iter()
            .map(|v| record_from_json(v.as_object().unwrap(), "r", &mut warnings))
            .collect();
        drop(black_box(back));
    });
    println!("{label}: {} records", records.len());
    rates("wire", wire.len(), n, wire_enc, wire_dec);
    rates("JSON text", text.len(), n, json_enc, json_dec);
    println!(
        "  wire decodes {:.1}x faster than JSON text, in {:.0} % of its bytes",
        json_dec / wire_dec,
        100.0 * wire.len() as f64 / text.len() as f64
    );
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut base = records_in(&root.join("public/samples"));
    base.extend(records_in(&root.join("tests/fixtures/vllm")));
    let repeats = MIN_RECORDS.div_ceil(base.len().max(1));
    let repeated: Vec<Record> = (0..repeats).flat_map(|_| base.iter().cloned()).collect();
    compare(
        &format!(
            "samples and vLLM fixtures ({} records) × {repeats}",
            base.len()
        ),
        &repeated,
    );
    if let Ok(files) = std::env::var("WIRE_BENCH_FILES") {
        for path in files.split(',').filter(|p| !p.is_empty()) {
            let read = ingest::read(path, &std::fs::read(path).unwrap()).unwrap();
            compare(path, &read.records);
        }
    }
}
