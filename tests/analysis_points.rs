//! The point rule and the defaults on the seeds, a two-file rate sweep and real result files
//! from public repositories (tests/fixtures/real/README.md): each default picture is the one
//! the files' authors drew, and no default chart of any view averages records of different
//! configurations into one point.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use benchlens::analysis::defaults::{
    default_comparison, default_improvement_groups, default_layout, default_metric, default_view,
    default_x, View,
};
use benchlens::analysis::improvement::{improvement, ImprovementSpec};
use benchlens::charts::{build_series, comparison_table, series_names, ChartSpec, Series, Theme};
use benchlens::ingest;
use benchlens::model::points::measured_dims;
use benchlens::model::{Dataset, Dim, DimKey, DimValue, LatencyMetric, MetricKey, Record, Stat};

fn read(path: &str) -> Vec<Record> {
    let full = format!("{}/tests/fixtures/{path}", env!("CARGO_MANIFEST_DIR"));
    let bytes = std::fs::read(&full).unwrap_or_else(|e| panic!("{full}: {e}"));
    let name = path.rsplit('/').next().unwrap_or(path);
    ingest::read(name, &bytes)
        .unwrap_or_else(|e| panic!("{e}"))
        .records
}

fn dataset(paths: &[&str]) -> Dataset {
    Dataset::new(paths.iter().flat_map(|p| read(p)).collect())
}

fn k(d: Dim) -> DimKey {
    DimKey::Known(d)
}

/// The chart a view draws by default, as the explorer resolves it.
fn default_chart(ds: &Dataset, view: View) -> Option<(ChartSpec, Vec<Series>)> {
    let all: Vec<usize> = (0..ds.len()).collect();
    let metric = default_metric(view, &ds.metrics_present(&all))?;
    let layout = default_layout(ds, default_x(ds), None, Some(&metric));
    let spec = ChartSpec {
        kind: view.kind(),
        x: layout.x,
        metric,
        series_by: layout.series_by,
        facet_by: layout.facet_by,
        log2_x: false,
        log_y: false,
        theme: Theme::Light,
        title: None,
    };
    let series = build_series(ds, &all, &spec);
    Some((spec, series))
}

/// Every chart view's default picture: no point averages different configurations.
fn assert_no_merged_points(ds: &Dataset, what: &str) {
    for view in [View::Latency, View::Throughput, View::Scaling] {
        let Some((spec, series)) = default_chart(ds, view) else {
            continue;
        };
        for s in &series {
            for p in &s.points {
                assert!(
                    !p.merge.is_merged(),
                    "{what}, {} view, {} at {}: {} ({spec:?})",
                    view.label(),
                    s.name,
                    p.x,
                    p.merge.text()
                );
            }
        }
    }
}

fn ttft() -> MetricKey {
    MetricKey::latency(LatencyMetric::Ttft, Stat::Mean)
}

#[test]
fn seed_000_opens_on_a100_over_tesla_per_model() {
    let ds = dataset(&["seeds/000_258d36619a7af95a.txt"]);
    assert_eq!(default_view(&ds), View::Improvement);
    let all: Vec<usize> = (0..ds.len()).collect();
    let c = default_comparison(&ds, &all).expect("a comparison");
    assert_eq!(c.dim, k(Dim::Gpu));
    assert_eq!(c.baseline, DimValue::from("Tesla"));
    assert_eq!(c.candidate, DimValue::from("A100"));
    let metric = MetricKey::Extra("throughput".into());
    let t = improvement(
        &ds,
        &all,
        &ImprovementSpec::new(c.dim, c.baseline, c.candidate, metric),
    )
    .expect("table");
    assert_eq!(t.rows.len(), 701);
    let (bars, heat) = default_improvement_groups(&t);
    assert_eq!(bars, Some(k(Dim::Model)));
    assert_eq!(heat, Some((k(Dim::BatchSize), k(Dim::Model))));
    // The throughput chart, if opened, splits what would merge: GPU series, GPU-count panels;
    // twenty models cannot be panels, so those points say they are means over models.
    let (spec, series) = default_chart(&ds, View::Throughput).expect("chart");
    assert_eq!(spec.x, k(Dim::BatchSize));
    assert_eq!(spec.series_by, [k(Dim::Gpu)]);
    assert_eq!(spec.facet_by, Some(k(Dim::GpuCount)));
    let merged = series
        .iter()
        .flat_map(|s| &s.points)
        .find(|p| p.merge.is_merged())
        .expect("a point over several models");
    assert!(
        merged.merge.text().contains(": model "),
        "{}",
        merged.merge.text()
    );
}

#[test]
fn seed_001_mean_ttft_per_rate_vllm_vs_sgl() {
    let ds = dataset(&["seeds/001_b815cef7710eda19.txt"]);
    assert_eq!(default_view(&ds), View::Latency);
    let (spec, series) = default_chart(&ds, View::Latency).expect("chart");
    assert_eq!(spec.metric, ttft());
    assert_eq!(spec.x, k(Dim::RequestRate));
    assert_eq!(spec.series_by, [k(Dim::Engine)]);
    assert_eq!(spec.facet_by, None);
    let table = comparison_table(&series, &spec.metric);
    let rows: Vec<(String, String, String)> = table
        .rows
        .iter()
        .map(|r| {
            (
                r.x.to_string(),
                r.fastest.clone().unwrap_or_default(),
                format!("{:.2}", r.faster_by_pct.unwrap_or(f64::NAN)),
            )
        })
        .collect();
    // The report's own table: request_rate, Fastest, Faster by (%).
    let want = [
        ("1", "vllm", "30.58"),
        ("10", "vllm", "17.06"),
        ("20", "vllm", "12.66"),
        ("30", "vllm", "51.29"),
        ("35", "vllm", "13.34"),
        ("inf", "sgl", "3.80"),
    ];
    let want: Vec<(String, String, String)> = want
        .iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
        .collect();
    assert_eq!(rows, want);
    assert_no_merged_points(&ds, "seed 001");
}

#[test]
fn seed_002_vllm_vs_tgi_per_input_length_one_panel_per_output_length() {
    let ds = dataset(&["seeds/002_44f3a8b9f2336bbb.txt"]);
    assert_eq!(default_view(&ds), View::Latency);
    let (spec, series) = default_chart(&ds, View::Latency).expect("chart");
    assert_eq!(spec.x, k(Dim::InputLen));
    assert_eq!(spec.series_by, [k(Dim::Engine)]);
    assert_eq!(spec.facet_by, Some(k(Dim::OutputLen)));
    assert_eq!(series_names(&series), ["tgi", "vllm"]);
    assert_eq!(series.len(), 8);
    assert_no_merged_points(&ds, "seed 002");
    // Throughput: TGI at input 128 is 16.47 req/s... per output length, never their mean.
    let (spec, series) = default_chart(&ds, View::Throughput).expect("chart");
    assert_eq!(spec.facet_by, Some(k(Dim::OutputLen)));
    let table = comparison_table(&series, &spec.metric);
    assert_eq!(table.rows.len(), 16);
}

#[test]
fn seed_003_ttft_against_prompt_count_one_line_per_input_length() {
    let ds = dataset(&["seeds/003_902df92d1b3a4732.txt"]);
    assert_eq!(measured_dims(&ds), [k(Dim::OutputLen)]);
    assert_eq!(default_view(&ds), View::Scaling);
    let (spec, series) = default_chart(&ds, View::Scaling).expect("chart");
    assert_eq!(spec.metric, ttft());
    assert_eq!(spec.x, k(Dim::NumPrompts));
    assert_eq!(spec.series_by, [k(Dim::InputLen)]);
    assert_eq!(
        series_names(&series),
        ["80", "10000", "16000", "32000", "64000", "128000"]
    );
    let at_80: Vec<String> = series[0].points.iter().map(|p| p.x.to_string()).collect();
    assert_eq!(at_80.len(), 12);
    assert_eq!(at_80[..3], ["1", "2", "4"]);
    assert_no_merged_points(&ds, "seed 003");
}

#[test]
fn seed_004_has_no_records_and_opens_the_table() {
    let ds = dataset(&["seeds/004_adfd865e97a7b47c.txt"]);
    assert!(ds.is_empty());
    assert_eq!(default_view(&ds), View::Table);
}

#[test]
fn two_files_of_one_rate_sweep_are_one_series() {
    let ds = dataset(&[
        "vllm/sweep/vllm-4qps-concurrency8-Llama-3.1-8B-Instruct-20250301-101500.json",
        "vllm/sweep/vllm-16qps-concurrency8-Llama-3.1-8B-Instruct-20250301-103000.json",
    ]);
    assert_eq!(ds.len(), 2);
    assert_eq!(default_view(&ds), View::Latency);
    let (spec, series) = default_chart(&ds, View::Latency).expect("chart");
    assert_eq!(spec.x, k(Dim::RequestRate));
    assert!(spec.series_by.is_empty(), "{spec:?}");
    assert_eq!(series.len(), 1);
    let xs: Vec<String> = series[0].points.iter().map(|p| p.x.to_string()).collect();
    assert_eq!(xs, ["4", "16"]);
    assert_no_merged_points(&ds, "sweep");
}

#[test]
fn all_seeds_together_merge_nothing() {
    let ds = dataset(&[
        "seeds/000_258d36619a7af95a.txt",
        "seeds/001_b815cef7710eda19.txt",
        "seeds/002_44f3a8b9f2336bbb.txt",
        "seeds/003_902df92d1b3a4732.txt",
    ]);
    // Whatever cannot become series or panels is said on the point; count those.
    for view in [View::Latency, View::Throughput, View::Scaling] {
        let (_, series) = default_chart(&ds, view).expect("chart");
        for p in series.iter().flat_map(|s| &s.points) {
            if p.merge.records > 1 {
                assert!(p.merge.text().starts_with("mean of"), "{}", p.merge.text());
            }
        }
    }
}

#[test]
fn real_vllm_deployments_split_by_deployment_as_their_author_drew() {
    // nerdalert/vllm-bench-automation: three deployments × rates 10, 30, inf.
    let ds = dataset(&["real/vllm-bench-automation-results.jsonl"]);
    assert_eq!(ds.len(), 9);
    assert_eq!(default_view(&ds), View::Latency);
    let (spec, series) = default_chart(&ds, View::Latency).expect("chart");
    assert_eq!(spec.metric, ttft());
    assert_eq!(spec.x, k(Dim::RequestRate));
    assert_eq!(spec.series_by, [DimKey::Tag("deployment".into())]);
    assert_eq!(series.len(), 3);
    let table = comparison_table(&series, &spec.metric);
    let last = table.rows.last().expect("rows");
    assert_eq!(last.x.to_string(), "inf");
    // The repository's own chart: kvcache fastest at inf. Its table says 79.83 % (over the
    // slowest, no-features); the explorer's margin is over the runner-up, base.
    assert_eq!(last.fastest.as_deref(), Some("kvcache"));
    assert_eq!(format!("{:.2}", last.faster_by_pct.unwrap()), "29.41");
    assert_no_merged_points(&ds, "vllm-bench-automation");
}

#[test]
fn real_sglang_runs_at_one_rate_split_by_length() {
    // datacrunch-research/h200-benchmarks: seven runs, all at request rate Infinity.
    let ds = dataset(&["real/h200-llama-3.3-70b-sglang-offline.jsonl"]);
    assert_eq!(ds.len(), 7);
    let view = default_view(&ds);
    let (spec, series) = default_chart(&ds, view).expect("chart");
    assert_eq!(spec.x, k(Dim::InputLen), "{spec:?}");
    assert_eq!(spec.series_by, [k(Dim::OutputLen)]);
    assert_no_merged_points(&ds, "h200 offline");
    // The configuration run twice is one point of two records, and says so.
    let twice = series
        .iter()
        .flat_map(|s| &s.points)
        .filter(|p| p.merge.records == 2)
        .count();
    assert!(twice >= 1);
    let online = dataset(&["real/h200-llama-3.3-70b-sglang-online.jsonl"]);
    assert_eq!(default_view(&online), View::Latency);
    let (spec, series) = default_chart(&online, View::Latency).expect("chart");
    assert_eq!(spec.x, k(Dim::RequestRate));
    // Rates 4 and 8 were run twice: once on random prompts, once on ShareGPT (output
    // throughput 2048 vs 746 tok/s at rate 4). They are two series, never one mean.
    assert_eq!(spec.series_by, [k(Dim::Dataset)]);
    assert_eq!(series_names(&series), ["random", "sharegpt"]);
    let sharegpt: Vec<String> = series[1].points.iter().map(|p| p.x.to_string()).collect();
    assert_eq!(sharegpt, ["4", "8"]);
    assert_no_merged_points(&online, "h200 online");
}

/// The files issue 32 brought in: each opens on a chart (never empty), and no default point
/// averages different configurations (InferenceX's four experiment files are four models ×
/// lengths × concurrencies; the trtllm-bench page holds two different runs). A file of one
/// run with no setting at all (`trtllm-bench-perf-overview-streaming.txt`) has no x axis to
/// draw yet: left for the defaults' work on single-run files.
#[test]
fn new_real_formats_open_on_a_chart_without_merged_points() {
    for files in [
        &[
            "real/inferencex-glm5_fp8_vllm_tp8_isl1024_osl128_conc16.json",
            "real/inferencex-glm5_fp8_vllm_tp8_isl8192_osl128_conc64.json",
            "real/inferencex-minimax_m25_vllm_dep8_isl1024_osl128_conc16.json",
            "real/inferencex-minimax_m25_vllm_tep8_isl32768_osl128_conc4.json",
        ][..],
        &["real/trtllm-bench-docs-pytorch-and-multimodal.md"][..],
        // One report that names only its engine: no load or length to draw along.
        &["real/trtllm-bench-perf-overview-streaming.txt"][..],
    ] {
        let ds = dataset(files);
        let view = default_view(&ds);
        let (_, series) = default_chart(&ds, view)
            .or_else(|| default_chart(&ds, View::Throughput))
            .unwrap_or_else(|| panic!("{files:?}: no chart"));
        assert!(
            series.iter().any(|s| !s.points.is_empty()),
            "{files:?}: an empty chart"
        );
        assert_no_merged_points(&ds, files[0]);
    }
    // The four InferenceX files: the TTFT chart keeps GLM-5 and MiniMax apart.
    let ds = dataset(&[
        "real/inferencex-glm5_fp8_vllm_tp8_isl1024_osl128_conc16.json",
        "real/inferencex-minimax_m25_vllm_dep8_isl1024_osl128_conc16.json",
    ]);
    let (spec, series) = default_chart(&ds, View::Latency).expect("chart");
    assert_eq!(spec.metric.name(), "median_ttft_ms");
    let points: usize = series.iter().map(|s| s.points.len()).sum();
    assert_eq!(points, 2, "{spec:?}");
}

/// Three runs of each configuration (a `run` column): the default chart averages the runs,
/// with the 95 % interval of each mean, and says "not distinguishable" where two engines'
/// intervals overlap, in the chart's table and in the improvement table alike.
#[test]
fn repeated_runs_give_intervals_and_overlap_is_not_distinguishable() {
    let ds = dataset(&["noise/repeats.csv"]);
    assert_eq!(ds.len(), 12);
    let (spec, series) = default_chart(&ds, View::Throughput).unwrap();
    assert_eq!(spec.metric, MetricKey::OutputThroughput);
    assert_eq!(series_names(&series), ["sglang", "vllm"]);
    let vllm = &series[1];
    // 100, 104, 96: mean 100, s = 4, t(2) = 4.3027 → ± 9.937.
    assert_eq!(vllm.points[0].y, 100.0);
    let i = vllm.points[0].interval.unwrap();
    assert!(
        (i.half_width() - 4.3027 * 4.0 / 3f64.sqrt()).abs() < 1e-9,
        "{i:?}"
    );
    let table = comparison_table(&series, &spec.metric);
    assert_eq!(table.rows[0].distinguishable, Some(false));
    assert_eq!(table.rows[1].distinguishable, Some(true));
    assert_eq!(
        table.rows[1].fastest_text(&table.series).as_deref(),
        Some("sglang")
    );
    let cmp = default_comparison(&ds, &(0..ds.len()).collect::<Vec<_>>()).unwrap();
    assert_eq!(cmp.dim, k(Dim::Engine));
    let spec = ImprovementSpec::new(Dim::Engine, "vllm", "sglang", MetricKey::OutputThroughput);
    let t = improvement(&ds, &(0..ds.len()).collect::<Vec<_>>(), &spec).unwrap();
    assert_eq!(t.rows.len(), 2, "{}", t.summary());
    assert_eq!(t.rows[0].noise_text(), Some("not distinguishable"));
    assert_eq!(t.rows[1].noise_text(), Some("distinguishable"));
}

/// Tables whose first picture used to average configurations on an x axis that varies:
/// h2oGPT's speeds (on one model, no load) pooled its three precisions (bits 16, 8, 4): now
/// along the GPU count, precisions in the series; dstack's latency curve per batch size its
/// three input lengths: now a panel per length. What still merges after the series joins it
/// (the series stay few), so each point is one configuration, as their authors draw them.
#[test]
fn dimensions_merging_on_a_varying_x_join_the_series() {
    let ds = dataset(&["real/h2ogpt-perf-llama2-7b.md"]);
    let (spec, _) = default_chart(&ds, default_view(&ds)).expect("chart");
    assert!(spec.series_by.contains(&k(Dim::Precision)), "{spec:?}");
    assert_no_merged_points(&ds, "h2ogpt");

    let ds = dataset(&["real/dstack-throughput_latency_curve.csv"]);
    let (spec, _) = default_chart(&ds, default_view(&ds)).expect("chart");
    assert_eq!(spec.x, k(Dim::BatchSize), "{spec:?}");
    // A panel per input length, as the blog draws one chart per length.
    assert_eq!(spec.facet_by, Some(k(Dim::InputLen)), "{spec:?}");
    assert_no_merged_points(&ds, "dstack latency curve");
}
