//! Dataset store speed on 100k records: indexing, filtering and faceted counts.
//! Prints timings (median of several runs); asserts nothing. Run with `cargo bench --bench store`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

/// The allocator the `benchlens` binary runs with (src/main.rs), so these figures are the
/// binary's: the library sets none.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::hint::black_box;
use std::time::Instant;

use benchlens::model::{Dataset, Dim, DimValue, Filter, LatencyMetric, MetricKey, Record, Stat};

fn records(n: usize) -> Vec<Record> {
    let engines = ["vllm", "sglang", "tgi", "trtllm"];
    let gpus = ["A100", "H100", "L40S", "MI300X", "H200"];
    (0..n)
        .map(|i| {
            let mut r = Record {
                model: Some(format!("model-{}", i % 40).into()),
                engine: Some(engines[i % engines.len()].into()),
                gpu: Some(gpus[(i / 7) % gpus.len()].into()),
                gpu_count: Some(1 << (i % 4)),
                batch_size: Some(1 << (i % 11)),
                request_rate: Some(if i % 13 == 0 {
                    f64::INFINITY
                } else {
                    (i % 32) as f64
                }),
                input_len: Some(128.0 * ((i % 8) + 1) as f64),
                source: Some(format!("run-{}.json", i % 25).into()),
                ..Record::default()
            };
            r.set_metric(
                MetricKey::latency(LatencyMetric::Ttft, Stat::Mean),
                i as f64 * 0.5,
            );
            r.set_metric(MetricKey::OutputThroughput, 1000.0 + i as f64);
            r
        })
        .collect()
}

fn median_ms(mut f: impl FnMut(), runs: usize) -> f64 {
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[runs / 2]
}

fn main() {
    let n = 100_000;
    let recs = records(n);
    let index_ms = median_ms(|| drop(black_box(Dataset::new(recs.clone()))), 5);
    let ds = Dataset::new(recs);
    let filter = Filter::default()
        .select(Dim::Engine, Some("vllm".into()))
        .select(Dim::Engine, Some("sglang".into()))
        .select(Dim::Gpu, Some("H100".into()))
        .select(Dim::BatchSize, Some(DimValue::Num(64.0)));
    let matching_ms = median_ms(|| drop(black_box(ds.matching(&filter))), 21);
    let facets_ms = median_ms(|| drop(black_box(ds.facets(&filter))), 21);
    println!(
        "dataset store, {n} records, {} dimensions:",
        ds.dim_keys().count()
    );
    println!("  index (Dataset::new, incl. clone)   {index_ms:8.2} ms");
    println!(
        "  records matching a 3-dimension filter {matching_ms:6.2} ms  ({} match)",
        ds.matching(&filter).len()
    );
    println!("  facet counts for every dimension     {facets_ms:8.2} ms");
}
