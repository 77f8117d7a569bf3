//! The run view's figure for a stage of 10^5 requests, built natively: request spans, the
//! binned timeline, the series panels and the plotly JSON text, as the page builds them after
//! the Run tab is clicked. Prints the median of several runs and the figure's size; asserts
//! nothing about speed (`tests/browser/runview.test.mjs` times the drawing in the browser).
//! Run with `cargo bench --bench timeline`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // bench code: a panic is the failure report

use std::hint::black_box;
use std::time::Instant;

use benchlens::analysis::timeline::{series_panels, steady_window_s, timeline};
use benchlens::analysis::timeline_plot::run_figure;
use benchlens::charts::Theme;
use benchlens::model::{MetricKey, Record, RequestDetail};

/// Requests in the stage.
const REQUESTS: usize = 100_000;
/// Runs per measurement; the median is printed.
const RUNS: usize = 7;

/// A stage of [`REQUESTS`] at 1,000 req/s, every 50th failing, with per-second series.
fn stage() -> Record {
    let rate = 1000.0;
    let mut r = Record {
        requests: (0..REQUESTS)
            .map(|i| {
                let failed = i % 50 == 0;
                let intended = i as f64 / rate;
                RequestDetail {
                    input_len: Some(128),
                    output_len: Some(64),
                    ttft_ms: Some(40.0 + (i % 13) as f64),
                    itl_ms: vec![6.0; 63].into(),
                    e2el_ms: (!failed).then_some(400.0 + (i % 97) as f64),
                    error: failed.then(|| "http_503: busy".into()),
                    intended_s: Some(intended),
                    sent_s: Some(intended + (i % 7) as f64 * 1e-4),
                    error_kind: failed.then(|| "http_503".into()),
                }
            })
            .collect(),
        ..Record::default()
    };
    let seconds = REQUESTS / 1000 + 1;
    let t: Vec<f64> = (0..seconds).map(|s| s as f64).collect();
    for (name, v) in [
        ("sent", rate),
        ("in_flight", 440.0),
        ("output_tokens", rate * 64.0),
        ("ttft_p50_ms", 46.0),
        ("ttft_p99_ms", 52.0),
        ("server.kv_cache_usage", 0.5),
    ] {
        r.series.insert(name.into(), vec![v; seconds]);
    }
    r.series.insert("t_s".into(), t);
    r.metrics
        .insert(MetricKey::Extra("window_start_s".into()), 10.0);
    r.metrics
        .insert(MetricKey::Extra("window_end_s".into()), 90.0);
    r
}

fn main() {
    let r = stage();
    let mut times_ms = Vec::new();
    let mut bytes = 0;
    for _ in 0..RUNS {
        let start = Instant::now();
        let tl = timeline(&r.requests);
        let series = series_panels(&r);
        let fig = run_figure(
            "bench",
            Some(&tl),
            series.as_ref(),
            steady_window_s(&r),
            Theme::Light,
        )
        .to_string();
        times_ms.push(start.elapsed().as_secs_f64() * 1e3);
        bytes = black_box(fig).len();
    }
    times_ms.sort_by(f64::total_cmp);
    println!(
        "run figure for {REQUESTS} requests: {:.1} ms (median of {RUNS}), {bytes} bytes of plotly JSON",
        times_ms[RUNS / 2]
    );
}
