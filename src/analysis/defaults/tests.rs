use super::*;
use crate::model::Record;

fn k(d: Dim) -> DimKey {
    DimKey::Known(d)
}

fn ttft() -> MetricKey {
    MetricKey::latency(LatencyMetric::Ttft, Stat::Mean)
}

/// One vLLM serving file of a rate sweep: source, rate, TTFT, output throughput.
fn sweep(source: &str, rate: f64, ttft_ms: f64) -> Record {
    let mut r = Record {
        source: Some(source.into()),
        model: Some("meta-llama/Llama-3.1-8B-Instruct".into()),
        engine: Some("vllm".into()),
        request_rate: Some(rate),
        ..Record::default()
    };
    r.set_metric(ttft(), ttft_ms);
    r.set_metric(MetricKey::OutputThroughput, 100.0 * rate);
    r
}

#[test]
fn an_x_axis_no_record_varies_is_one_the_records_have() {
    // llama-bench's runs: one batch size, no request rate, settings apart in tags.
    let run = |section: &str, fa: &str, test: &str, tps: f64| {
        let mut r = Record {
            batch_size: Some(256),
            ..Record::default()
        };
        r.tags.insert("section".into(), section.into());
        r.tags.insert("fa".into(), fa.into());
        r.tags.insert("test".into(), test.into());
        r.set_metric(MetricKey::Extra("t_s".into()), tps);
        r
    };
    let mut runs = Vec::new();
    for section in ["GPU 0", "GPU 1"] {
        runs.push(run(section, "0", "pp512", 758.55));
        runs.push(run(section, "0", "tg128", 86.29));
        runs.push(run(section, "1", "pp512", 1029.28));
        runs.push(run(section, "1", "tg128", 129.21));
    }
    let ds = Dataset::new(runs);
    assert_eq!(default_x(&ds), k(Dim::BatchSize));
    // The one batch size tells no runs apart: a panel per section and both settings
    // combined in the series, so no point averages the two tests.
    let layout = default_layout(&ds, k(Dim::BatchSize), None, None);
    assert_eq!(
        layout.series_by,
        [DimKey::Tag("fa".into()), DimKey::Tag("test".into())]
    );
    assert_eq!(layout.facet_by, Some(DimKey::Tag("section".into())));
    // An x axis that varies combines them in the series too: its points are each one run.
    let mut varying: Vec<Record> = ds.records().map(|r| r.into_owned()).collect();
    varying[0].batch_size = Some(512);
    let layout = default_layout(&Dataset::new(varying), k(Dim::BatchSize), None, None);
    assert_eq!(
        layout.series_by,
        [DimKey::Tag("fa".into()), DimKey::Tag("test".into())]
    );
    // Nothing at all: request rate, as before.
    assert_eq!(
        default_x(&Dataset::new(
            vec![run("a", "0", "pp512", 1.0)]
                .into_iter()
                .map(|mut r| {
                    r.batch_size = None;
                    r
                })
                .collect()
        )),
        k(Dim::RequestRate)
    );
}

#[test]
fn files_of_one_sweep_form_one_series() {
    let ds = Dataset::new(vec![
        sweep("vllm-1qps.json", 1.0, 20.0),
        sweep("vllm-4qps.json", 4.0, 30.0),
    ]);
    assert_eq!(default_x(&ds), k(Dim::RequestRate));
    let layout = default_layout(&ds, k(Dim::RequestRate), None, Some(&ttft()));
    assert!(layout.series_by.is_empty(), "{layout:?}");
    assert_eq!(layout.facet_by, None);
    assert_eq!(default_view(&ds), View::Latency);
}

#[test]
fn two_systems_are_two_lines_even_at_different_rates() {
    let mut google = sweep("google-server.txt", 104.2, 400.0);
    google
        .tags
        .insert("sut".into(), "llama2-70b-Server-SUT-LoadGen".into());
    let mut amd = sweep("amd-server.txt", 71.875, 1000.0);
    amd.tags.insert("sut".into(), "PySUT".into());
    // Its Offline run, not drawn (no rate), shares AMD's SUT name: no system is decided
    // by records the chart leaves out.
    let mut offline = sweep("amd-offline.txt", 1.0, 1.0);
    offline.request_rate = None;
    offline.tags.insert("sut".into(), "PySUT".into());
    let ds = Dataset::new(vec![google, amd, offline]);
    let layout = default_layout(&ds, k(Dim::RequestRate), None, Some(&ttft()));
    assert_eq!(layout.series_by, [DimKey::Tag("sut".into())]);
    // One system's sweep over two files stays one line.
    let ds = Dataset::new(vec![
        sweep("vllm-1qps.json", 1.0, 20.0),
        sweep("vllm-4qps.json", 4.0, 30.0),
    ]);
    let layout = default_layout(&ds, k(Dim::RequestRate), None, Some(&ttft()));
    assert!(layout.series_by.is_empty());
}

#[test]
fn two_runs_of_the_same_points_split_by_file() {
    let ds = Dataset::new(vec![
        sweep("old.json", 1.0, 20.0),
        sweep("old.json", 4.0, 30.0),
        sweep("new.json", 1.0, 18.0),
        sweep("new.json", 4.0, 25.0),
    ]);
    let layout = default_layout(&ds, k(Dim::RequestRate), None, Some(&ttft()));
    assert_eq!(layout.series_by, [k(Dim::Source)]);
}

/// A row of seed 002's tables: engine, version, input and output length, latency.
fn table_row(engine: &str, input: f64, output: f64) -> Record {
    let mut r = Record {
        engine: Some(engine.into()),
        engine_version: Some(if engine == "vllm" { "v0.2.5" } else { "v1.3.4" }.into()),
        gpu: Some("A100 40G".into()),
        input_len: Some(input),
        output_len: Some(output),
        ..Record::default()
    };
    r.set_metric(
        MetricKey::Extra("average_latency_per_output_token_ms".into()),
        input / 100.0 + output / 1000.0,
    );
    r
}

#[test]
fn engines_per_input_length_with_a_panel_per_output_length() {
    let lens = [128.0, 512.0, 1024.0, 2048.0];
    let mut records = Vec::new();
    for e in ["vllm", "tgi"] {
        for i in lens {
            for o in lens {
                records.push(table_row(e, i, o));
            }
        }
    }
    let ds = Dataset::new(records);
    let x = default_x(&ds);
    assert_eq!(x, k(Dim::InputLen));
    let layout = default_layout(&ds, x, None, None);
    assert_eq!(layout.series_by, [k(Dim::Engine)]);
    assert_eq!(layout.facet_by, Some(k(Dim::OutputLen)));
    assert_eq!(default_view(&ds), View::Latency);
    // A chosen series is kept; the rule still finds the panels.
    let chosen = default_layout(&ds, k(Dim::InputLen), Some(vec![k(Dim::OutputLen)]), None);
    assert_eq!(chosen.series_by, [k(Dim::OutputLen)]);
    assert_eq!(chosen.facet_by, Some(k(Dim::Engine)));
}

#[test]
fn many_points_per_panel_draw_lines() {
    // Seed 003's shape: prompt counts 1..2048 for input length 80, 1..64 for 10000, and
    // single prompts at four more lengths.
    let mut records = Vec::new();
    let mut add = |prompts: u64, input: f64| {
        let mut r = Record {
            engine: Some("vllm".into()),
            num_prompts: Some(prompts),
            input_len: Some(input),
            ..Record::default()
        };
        r.set_metric(ttft(), input / 10.0 + prompts as f64);
        records.push(r);
    };
    for p in 0..12 {
        add(1 << p, 80.0);
    }
    for p in 0..7 {
        add(1 << p, 10000.0);
    }
    for input in [128000.0, 64000.0, 32000.0, 16000.0] {
        add(1, input);
    }
    let ds = Dataset::new(records);
    assert_eq!(default_x(&ds), k(Dim::NumPrompts));
    let layout = default_layout(&ds, k(Dim::NumPrompts), None, Some(&ttft()));
    assert_eq!(layout.series_by, [k(Dim::InputLen)]);
    assert_eq!(default_view(&ds), View::Scaling);
    assert_eq!(
        default_metric(View::Scaling, ds.metric_keys()),
        Some(ttft())
    );
}

/// A row of seed 000: one configuration measured on two GPUs.
fn wide_row(model: &str, gpus: u64, batch: u64, a100: f64, tesla: f64) -> [Record; 2] {
    let make = |gpu: &str, v: f64| {
        let mut r = Record {
            model: Some(model.into()),
            engine: Some("vLLM".into()),
            gpu: Some(gpu.into()),
            gpu_count: Some(gpus),
            batch_size: Some(batch),
            ..Record::default()
        };
        r.set_metric(MetricKey::Extra("throughput".into()), v);
        r
    };
    [make("A100", a100), make("Tesla", tesla)]
}

#[test]
fn a_wide_gpu_comparison_opens_on_improvement_a100_over_tesla() {
    let mut records = Vec::new();
    for (m, model) in ["Phi-1_5", "Gemma-2b"].iter().enumerate() {
        for gpus in [1, 2] {
            for batch in [1, 8, 64] {
                let base = 10.0 * (m + 1) as f64 * batch as f64;
                records.extend(wide_row(model, gpus, batch, base * 1.3, base));
            }
        }
    }
    // One configuration where Tesla wins does not flip the orientation.
    records.extend(wide_row("Gemma-2b", 4, 1, 9.0, 10.0));
    let ds = Dataset::new(records);
    assert_eq!(default_view(&ds), View::Improvement);
    let all: Vec<usize> = (0..ds.len()).collect();
    let c = default_comparison(&ds, &all).expect("a comparison");
    assert_eq!(c.dim, k(Dim::Gpu));
    assert_eq!(c.baseline, DimValue::from("Tesla"));
    assert_eq!(c.candidate, DimValue::from("A100"));
    assert_eq!(
        default_compare_metric(ds.metric_keys()),
        Some(MetricKey::Extra("throughput".into()))
    );
    let t = improvement(
        &ds,
        &all,
        &ImprovementSpec::new(
            c.dim,
            c.baseline,
            c.candidate,
            MetricKey::Extra("throughput".into()),
        ),
    )
    .expect("table");
    let (bars, heat) = default_improvement_groups(&t);
    assert_eq!(bars, Some(k(Dim::Model)));
    assert_eq!(heat, Some((k(Dim::BatchSize), k(Dim::Model))));
    // No latency metric: the latency view is never the default.
    assert_eq!(default_metric(View::Latency, ds.metric_keys()), None);
}

#[test]
fn engines_per_rate_stay_bars_and_metrics_follow_the_view() {
    let mut records = Vec::new();
    for (engine, base) in [("vllm", 45.0), ("sgl", 64.0)] {
        for rate in [1.0, 10.0, 20.0, 30.0, 35.0, f64::INFINITY] {
            let mut r = sweep("001.txt", rate, base * rate.min(50.0));
            r.engine = Some(engine.into());
            records.push(r);
        }
    }
    let ds = Dataset::new(records);
    assert_eq!(default_view(&ds), View::Latency);
    let layout = default_layout(&ds, default_x(&ds), None, Some(&ttft()));
    assert_eq!(layout.series_by, [k(Dim::Engine)]);
    assert_eq!(layout.facet_by, None);
    assert_eq!(
        default_metric(View::Throughput, ds.metric_keys()),
        Some(MetricKey::OutputThroughput)
    );
}

#[test]
fn empty_or_metric_free_data_opens_the_table() {
    assert_eq!(default_view(&Dataset::default()), View::Table);
    let ds = Dataset::new(vec![Record {
        engine: Some("vllm".into()),
        ..Record::default()
    }]);
    assert_eq!(default_view(&ds), View::Table);
    assert_eq!(default_compare_dim(&ds), None);
}

#[test]
fn the_reported_figure_is_the_last_resort() {
    let reported = MetricKey::reported_improvement();
    let tp = MetricKey::Extra("throughput".into());
    assert_eq!(
        default_compare_metric(&[reported.clone(), tp.clone()]),
        Some(tp)
    );
    assert_eq!(
        default_compare_metric(std::slice::from_ref(&reported)),
        Some(reported)
    );
    assert_eq!(
        default_metric(View::Improvement, &[MetricKey::Failed, ttft()]),
        Some(MetricKey::Failed)
    );
}

#[test]
fn the_comparison_table_goes_under_the_bars_only() {
    let with: Vec<View> = View::ALL
        .into_iter()
        .filter(|v| v.shows_comparison_table())
        .collect();
    assert_eq!(with, [View::Latency, View::Throughput]);
}
