//! Tests of the main chart: series, the comparison table and the figure.

use super::*;
use crate::model::points::PointMerge;
use crate::model::{
    Dataset, Dim, DimKey, DimValue, Filter, LatencyMetric, MetricKey, Record, Stat,
};

fn rec(engine: &str, rate: f64, ttft: f64) -> Record {
    let mut r = Record {
        engine: Some(engine.into()),
        request_rate: Some(rate),
        ..Record::default()
    };
    r.set_metric(MetricKey::latency(LatencyMetric::Ttft, Stat::Mean), ttft);
    r
}

fn spec() -> ChartSpec {
    ChartSpec {
        kind: ChartKind::Bars,
        x: Dim::RequestRate.into(),
        metric: MetricKey::latency(LatencyMetric::Ttft, Stat::Mean),
        series_by: vec![Dim::Engine.into()],
        facet_by: None,
        log2_x: false,
        log_y: false,
        theme: Theme::Light,
        title: None,
    }
}

fn sample() -> Dataset {
    Dataset::new(vec![
        rec("vllm", 1.0, 45.04),
        rec("sgl", 1.0, 64.88),
        rec("vllm", 10.0, 56.90),
        rec("sgl", 10.0, 68.60),
        rec("sgl", f64::INFINITY, 17419.66),
        rec("vllm", f64::INFINITY, 18107.32),
        rec("vllm", 20.0, 80.0),
        rec("vllm", 20.0, 100.0),
    ])
}

#[test]
fn series_group_sort_and_average() {
    let ds = sample();
    let all: Vec<usize> = (0..ds.len()).collect();
    let series = build_series(&ds, &all, &spec());
    assert_eq!(series.len(), 2);
    assert_eq!(series[1].name, "vllm");
    let xs: Vec<String> = series[1].points.iter().map(|p| p.x.to_string()).collect();
    assert_eq!(xs, ["1", "10", "20", "inf"]);
    assert_eq!(series[1].points[2].y, 90.0);
    assert_eq!(series[1].points[2].first_record, 6);
    assert_eq!(series[1].points[2].merge.records, 2);
}

#[test]
fn comparison_names_the_fastest_and_by_how_much() {
    let ds = sample();
    let all: Vec<usize> = (0..ds.len()).collect();
    let series = build_series(&ds, &all, &spec());
    let table = comparison_table(&series, &spec().metric);
    assert!(table.lower_is_better);
    assert_eq!(table.series, ["sgl", "vllm"]);
    let at10 = &table.rows[1];
    assert_eq!(at10.x, DimValue::Num(10.0));
    assert_eq!(at10.fastest.as_deref(), Some("vllm"));
    assert_eq!(format!("{:.2}", at10.faster_by_pct.unwrap()), "17.06");
    let at_inf = &table.rows[3];
    assert_eq!(at_inf.fastest.as_deref(), Some("sgl"));
    assert_eq!(format!("{:.2}", at_inf.faster_by_pct.unwrap()), "3.80");
    // Only one series at rate 20: no winner.
    assert_eq!(table.rows[2].fastest, None);
}

#[test]
fn higher_is_better_for_throughput() {
    let series = vec![
        Series {
            name: "a".into(),
            facet: None,
            points: vec![SeriesPoint {
                x: 1.0.into(),
                y: 110.0,
                first_record: 0,
                merge: PointMerge::default(),
                interval: None,
                flags: Default::default(),
            }],
        },
        Series {
            name: "b".into(),
            facet: None,
            points: vec![SeriesPoint {
                x: 1.0.into(),
                y: 100.0,
                first_record: 1,
                merge: PointMerge::default(),
                interval: None,
                flags: Default::default(),
            }],
        },
    ];
    let t = comparison_table(&series, &MetricKey::OutputThroughput);
    assert_eq!(t.rows[0].fastest.as_deref(), Some("a"));
    assert!((t.rows[0].faster_by_pct.unwrap() - 10.0).abs() < 1e-9);
}

#[test]
fn plot_json_has_one_trace_per_series_with_values() {
    let ds = sample();
    let all: Vec<usize> = (0..ds.len()).collect();
    let series = build_series(&ds, &all, &spec());
    let json: serde_json::Value =
        serde_json::from_str(&plot(&ds, &series, &spec()).to_json()).expect("plot JSON");
    let traces = json["data"].as_array().unwrap();
    assert_eq!(traces.len(), 2);
    assert_eq!(traces[1]["name"], "vllm");
    assert_eq!(traces[1]["type"], "bar");
    assert_eq!(traces[1]["x"][1], "10");
    assert_eq!(traces[1]["y"][1], 56.9);
    assert_eq!(json["layout"]["xaxis"]["type"], "category");
    assert_eq!(json["layout"]["yaxis"]["title"]["text"], "Mean TTFT (ms)");
    let hover = traces[1]["hovertext"][1].as_str().unwrap();
    assert!(hover.contains("Engine: vllm"), "{hover}");
}

#[test]
fn the_main_chart_and_the_analysis_figures_share_the_theme() {
    let ds = sample();
    let all: Vec<usize> = (0..ds.len()).collect();
    let dark = ChartSpec {
        theme: Theme::Dark,
        ..spec()
    };
    let series = build_series(&ds, &all, &dark);
    let main: serde_json::Value =
        serde_json::from_str(&plot(&ds, &series, &dark).to_json()).unwrap();
    let mut figure = crate::charts::plotly::Plot::new();
    figure.set_layout(base_layout("t", "x", "y", Theme::Dark));
    let base: serde_json::Value = serde_json::from_str(&figure.to_json()).unwrap();
    for layout in [&main["layout"], &base["layout"]] {
        assert_eq!(layout["paper_bgcolor"], "#1e1f22");
        assert_eq!(layout["plot_bgcolor"], "#1e1f22");
        assert_eq!(layout["font"]["color"], "#e8eaed");
        assert_eq!(layout["xaxis"]["gridcolor"], "#3c4043");
        assert_eq!(layout["yaxis"]["zerolinecolor"], "#3c4043");
    }
}

#[test]
fn hostile_names_are_escaped() {
    let mut r = rec("<img src=x onerror=alert(1)>", 1.0, 1.0);
    r.model = Some("<script>".into());
    let ds = Dataset::new(vec![r]);
    let series = build_series(&ds, &[0], &spec());
    let json = plot(&ds, &series, &spec()).to_json();
    assert!(!json.contains("<script>"));
    assert!(!json.contains("<img"));
}

#[test]
fn log2_axis_for_numeric_lines() {
    let mut s = spec();
    s.kind = ChartKind::Lines;
    s.log2_x = true;
    let ds = Dataset::new(vec![rec("vllm", 1.0, 1.0), rec("vllm", 8.0, 2.0)]);
    let series = build_series(&ds, &[0, 1], &s);
    let json: serde_json::Value = serde_json::from_str(&plot(&ds, &series, &s).to_json()).unwrap();
    assert_eq!(json["layout"]["xaxis"]["type"], "log");
    assert_eq!(json["data"][0]["x"][1], 8.0);
}

/// A record of seed 002's shape: engine, input and output length, a latency.
fn len_rec(engine: &str, input: f64, output: f64, v: f64) -> Record {
    let mut r = Record {
        engine: Some(engine.into()),
        input_len: Some(input),
        output_len: Some(output),
        ..Record::default()
    };
    r.set_metric(MetricKey::latency(LatencyMetric::Tpot, Stat::Mean), v);
    r
}

fn len_spec(series_by: Vec<DimKey>, facet_by: Option<DimKey>) -> ChartSpec {
    ChartSpec {
        x: Dim::InputLen.into(),
        metric: MetricKey::latency(LatencyMetric::Tpot, Stat::Mean),
        series_by,
        facet_by,
        ..spec()
    }
}

#[test]
fn legend_and_axis_follow_numeric_order_with_inf_last() {
    // Series by input length arrive in text order 10000, 128000, 16000, 80.
    let ds = Dataset::new(vec![
        len_rec("vllm", 10000.0, 1.0, 1.0),
        len_rec("vllm", 128000.0, 1.0, 2.0),
        len_rec("vllm", 16000.0, 1.0, 3.0),
        len_rec("vllm", 80.0, 1.0, 4.0),
    ]);
    let s = ChartSpec {
        x: Dim::Engine.into(),
        ..len_spec(vec![Dim::InputLen.into()], None)
    };
    let all: Vec<usize> = (0..ds.len()).collect();
    let names: Vec<String> = build_series(&ds, &all, &s)
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, ["80", "10000", "16000", "128000"]);
    // A rate sweep whose first series starts at 2: the axis still reads 1, 2, 10, inf.
    let ds = Dataset::new(vec![
        rec("vllm", 2.0, 1.0),
        rec("vllm", f64::INFINITY, 1.0),
        rec("sgl", 10.0, 1.0),
        rec("sgl", 1.0, 1.0),
    ]);
    let series = build_series(&ds, &[0, 1, 2, 3], &spec());
    let json: serde_json::Value =
        serde_json::from_str(&plot(&ds, &series, &spec()).to_json()).unwrap();
    assert_eq!(json["layout"]["xaxis"]["categoryorder"], "array");
    assert_eq!(
        json["layout"]["xaxis"]["categoryarray"],
        serde_json::json!(["1", "2", "10", "inf"])
    );
}

#[test]
fn a_merged_point_says_so_on_the_chart_and_in_its_hover() {
    // TGI at input 128 over four output lengths: 16.47 / 16.32 / 16.34 / 16.90.
    let ds = Dataset::new(vec![
        len_rec("tgi", 128.0, 128.0, 16.47),
        len_rec("tgi", 128.0, 512.0, 16.32),
        len_rec("tgi", 128.0, 1024.0, 16.34),
        len_rec("tgi", 128.0, 2048.0, 16.90),
    ]);
    let s = len_spec(vec![Dim::Engine.into()], None);
    let series = build_series(&ds, &[0, 1, 2, 3], &s);
    let p = &series[0].points[0];
    assert!((p.y - 16.5075).abs() < 1e-9);
    assert_eq!(p.merge.text(), "mean of 4: output length 128 – 2048");
    let json: serde_json::Value = serde_json::from_str(&plot(&ds, &series, &s).to_json()).unwrap();
    assert_eq!(json["data"][0]["text"][0], "mean of 4");
    let hover = json["data"][0]["hovertext"][0].as_str().unwrap();
    assert!(
        hover.contains("mean of 4: output length 128 – 2048"),
        "{hover}"
    );
    let title = json["layout"]["title"]["text"].as_str().unwrap();
    assert!(
        title.contains("average records of different output length"),
        "{title}"
    );
}

#[test]
fn many_merged_points_leave_the_labels_to_the_note_and_the_hover() {
    // 30 input lengths, each the mean of two output lengths: 30 merged points.
    let mut records = Vec::new();
    for i in 0..30 {
        for output in [128.0, 1024.0] {
            records.push(len_rec("tgi", 100.0 * f64::from(i + 1), output, 1.0));
        }
    }
    let ds = Dataset::new(records);
    let all: Vec<usize> = (0..ds.len()).collect();
    let s = len_spec(vec![Dim::Engine.into()], None);
    let series = build_series(&ds, &all, &s);
    assert_eq!(series[0].points.len(), 30);
    let json: serde_json::Value = serde_json::from_str(&plot(&ds, &series, &s).to_json()).unwrap();
    let texts = json["data"][0]["text"].as_array().unwrap();
    assert!(texts.iter().all(|t| t == ""), "{texts:?}");
    let hover = json["data"][0]["hovertext"][0].as_str().unwrap();
    assert!(
        hover.contains("mean of 2: output length 128, 1024"),
        "{hover}"
    );
    let title = json["layout"]["title"]["text"].as_str().unwrap();
    assert!(
        title.contains(
            "30 points average records of different output length (their hover text says which)"
        ),
        "{title}"
    );
}

#[test]
fn panels_split_the_merged_dimension_and_compare_within_themselves() {
    let mut records = Vec::new();
    for (engine, base) in [("vllm", 12.0), ("tgi", 16.0)] {
        for input in [128.0, 512.0] {
            for output in [128.0, 2048.0] {
                records.push(len_rec(engine, input, output, base + output / 1000.0));
            }
        }
    }
    let ds = Dataset::new(records);
    let all: Vec<usize> = (0..ds.len()).collect();
    let s = len_spec(vec![Dim::Engine.into()], Some(Dim::OutputLen.into()));
    let series = build_series(&ds, &all, &s);
    // Two panels × two engines, none merged; engines in value order (tgi, vllm).
    assert_eq!(series.len(), 4);
    assert!(series
        .iter()
        .flat_map(|s| &s.points)
        .all(|p| !p.merge.is_merged()));
    assert_eq!(series_names(&series), ["tgi", "vllm"]);
    assert_eq!(facets(&series), [Some(128.0.into()), Some(2048.0.into())]);
    let table = comparison_table(&series, &s.metric);
    assert_eq!(table.rows.len(), 4);
    assert_eq!(table.rows[0].facet, Some(128.0.into()));
    assert_eq!(table.rows[0].fastest.as_deref(), Some("vllm"));
    let json: serde_json::Value = serde_json::from_str(&plot(&ds, &series, &s).to_json()).unwrap();
    let traces = json["data"].as_array().unwrap();
    assert_eq!(traces.len(), 4);
    assert_eq!(traces[2]["xaxis"], "x2");
    assert_eq!(traces[2]["yaxis"], "y2");
    // Each engine appears once in the legend.
    assert_eq!(traces[2]["showlegend"], false);
    assert_eq!(json["layout"]["yaxis2"]["matches"], "y");
    // The shared y range is labelled once a row.
    assert_eq!(json["layout"]["yaxis2"]["showticklabels"], false);
    assert!(json["layout"]["yaxis"]["showticklabels"].is_null());
    let panel_titles: Vec<&str> = json["layout"]["annotations"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a["text"].as_str())
        .collect();
    assert_eq!(panel_titles, ["output length 128", "output length 2048"]);
}

#[test]
fn past_the_rich_point_cap_lines_lose_markers_and_per_point_hover() {
    let spec = ChartSpec {
        kind: ChartKind::Lines,
        ..spec()
    };
    let figure = |n: usize| -> serde_json::Value {
        let ds = Dataset::new(
            (0..n)
                .map(|i| rec("vllm", i as f64 + 1.0, i as f64))
                .collect(),
        );
        let all: Vec<usize> = (0..n).collect();
        let series = build_series(&ds, &all, &spec);
        serde_json::from_str(&plot(&ds, &series, &spec).to_json()).unwrap()
    };
    let rich = figure(MAX_RICH_POINTS);
    assert_eq!(rich["data"][0]["mode"], "lines+markers");
    assert_eq!(rich["data"][0]["hoverinfo"], "text");
    assert_eq!(
        rich["data"][0]["hovertext"].as_array().unwrap().len(),
        MAX_RICH_POINTS
    );
    let dense = figure(MAX_RICH_POINTS + 1);
    let trace = &dense["data"][0];
    assert_eq!(trace["mode"], "lines");
    assert_eq!(trace["hoverinfo"], "all");
    assert_eq!(trace["hovertext"], serde_json::json!([]));
    assert_eq!(trace["text"], serde_json::json!([]));
    assert_eq!(trace["x"].as_array().unwrap().len(), MAX_RICH_POINTS + 1);
    assert_eq!(trace["y"][MAX_RICH_POINTS], MAX_RICH_POINTS as f64);
}

#[test]
fn points_looked_up_give_the_series_grouped_directly() {
    // Panels, series and x values, a record without the x value, one without the metric, a
    // NaN and points averaging several records.
    let mut records = Vec::new();
    for i in 0..60u32 {
        let engine = ["vllm", "sgl", "tgi"][(i % 3) as usize];
        let mut r = len_rec(
            engine,
            [128.0, 512.0][(i / 3 % 2) as usize],
            [64.0, 256.0, 1024.0][(i / 7 % 3) as usize],
            f64::from(i) * 1.5,
        );
        match i {
            5 => r.input_len = None,
            11 => r.metrics = Default::default(),
            17 => r.set_metric(
                MetricKey::latency(LatencyMetric::Tpot, Stat::Mean),
                f64::NAN,
            ),
            _ => {}
        }
        records.push(r);
    }
    let ds = Dataset::new(records);
    let all: Vec<usize> = (0..ds.len()).collect();
    let some: Vec<usize> = (0..ds.len()).filter(|i| i % 4 != 1).collect();
    for s in [
        len_spec(vec![Dim::Engine.into()], Some(Dim::OutputLen.into())),
        len_spec(vec![], None),
        len_spec(vec![Dim::Engine.into(), Dim::OutputLen.into()], None),
    ] {
        let points = PointIndex::new(&ds, &s);
        assert!(points.fits(&ds));
        for rows in [&all[..], &some[..], &[3, 2, 1][..], &[][..], &all[..]] {
            assert_eq!(
                build_series_indexed(&ds, rows, &s, &points),
                build_series(&ds, rows, &s),
                "{s:?} {rows:?}"
            );
        }
    }
    assert!(!PointIndex::new(&ds, &spec()).fits(&sample()));
}

#[test]
fn points_a_filter_leaves_whole_give_the_series_grouped_directly() {
    // As above, with repeats (the same configuration several times) and a filter pass's rows:
    // points taken whole from the index, or summed again when the filter splits them.
    let mut records = Vec::new();
    for i in 0..90u32 {
        let engine = ["vllm", "sgl", "tgi"][(i % 3) as usize];
        let mut r = len_rec(
            engine,
            [128.0, 512.0][(i / 3 % 2) as usize],
            [64.0, 256.0, 1024.0][(i / 7 % 3) as usize],
            f64::from(i) * 1.5 + 0.1,
        );
        match i {
            5 => r.input_len = None,
            11 => r.metrics = Default::default(),
            17 | 47 => r.set_metric(
                MetricKey::latency(LatencyMetric::Tpot, Stat::Mean),
                f64::NAN,
            ),
            _ => {}
        }
        records.push(r);
    }
    let ds = Dataset::new(records);
    let engine = |names: &[&str]| {
        names.iter().fold(Filter::all(), |f, n| {
            f.select(Dim::Engine, Some(DimValue::from(*n)))
        })
    };
    let filters = [
        Filter::all(),
        engine(&["vllm"]),
        engine(&["vllm", "tgi"]),
        engine(&["none of them"]),
        engine(&["sgl"]).select(Dim::OutputLen, Some(DimValue::from(256.0))),
    ];
    for s in [
        len_spec(vec![Dim::Engine.into()], Some(Dim::OutputLen.into())),
        len_spec(vec![], None),
        len_spec(vec![Dim::Engine.into(), Dim::OutputLen.into()], None),
    ] {
        let points = PointIndex::new(&ds, &s);
        for f in &filters {
            let pass = ds.filter_pass(f);
            let direct = build_series(&ds, &pass.rows, &s);
            assert_eq!(
                build_series_selected(&ds, &pass.rows, &pass.configurations, &s, &points),
                direct,
                "{s:?} {f:?}"
            );
            // The sums bit for bit, not only equal as numbers.
            let bits = |series: &[Series]| -> Vec<u64> {
                series
                    .iter()
                    .flat_map(|x| x.points.iter().map(|p| p.y.to_bits()))
                    .collect()
            };
            assert_eq!(
                bits(&build_series_selected(
                    &ds,
                    &pass.rows,
                    &pass.configurations,
                    &s,
                    &points
                )),
                bits(&direct)
            );
        }
    }
    // Each filter above gives points: the comparison is not of empty charts.
    let s = len_spec(vec![Dim::Engine.into()], Some(Dim::OutputLen.into()));
    let pass = ds.filter_pass(&engine(&["vllm"]));
    let series = build_series_selected(
        &ds,
        &pass.rows,
        &pass.configurations,
        &s,
        &PointIndex::new(&ds, &s),
    );
    assert_eq!(series.len(), 3);
    assert!(series.iter().all(|x| x.name == "vllm"));
}

/// Three runs of one configuration (differing only in their `run` tag) per engine at rate 1,
/// a single record at rate 2, and at rate 4 a point averaging two output lengths.
fn repeats() -> Dataset {
    let mut records = Vec::new();
    for (engine, ttfts) in [("vllm", [10.0, 12.0, 14.0]), ("sgl", [11.0, 13.0, 12.0])] {
        for (run, ttft) in ttfts.into_iter().enumerate() {
            let mut r = rec(engine, 1.0, ttft);
            r.tags.insert("run".into(), (run + 1).to_string());
            records.push(r);
        }
        records.push(rec(engine, 2.0, 20.0));
        for len in [128.0, 1024.0] {
            let mut r = rec(engine, 4.0, len / 10.0);
            r.output_len = Some(len);
            records.push(r);
        }
    }
    Dataset::new(records)
}

#[test]
fn repeats_carry_their_interval_and_configurations_do_not() {
    let ds = repeats();
    let all: Vec<usize> = (0..ds.len()).collect();
    let series = build_series(&ds, &all, &spec());
    let vllm = series.iter().find(|s| s.name == "vllm").unwrap();
    let at1 = &vllm.points[0];
    assert_eq!(at1.y, 12.0);
    let i = at1.interval.expect("three repeats give an interval");
    // s = 2, t(2) = 4.3027: 12 ± 4.968.
    assert!((i.half_width() - 4.3027 * 2.0 / 3f64.sqrt()).abs() < 1e-9);
    assert_eq!(
        vllm.points[1].interval, None,
        "one record, no std in the file"
    );
    assert!(vllm.points[2].merge.is_merged());
    assert_eq!(
        vllm.points[2].interval, None,
        "a mean of two output lengths is not noise"
    );
    // Every way of building the points gives the same intervals.
    let points = PointIndex::new(&ds, &spec());
    assert_eq!(build_series_indexed(&ds, &all, &spec(), &points), series);
    let pass = ds.filter_pass(&Filter::default());
    assert_eq!(
        build_series_selected(&ds, &pass.rows, &pass.configurations, &spec(), &points),
        series
    );
    // The figure draws them as error bars (null where none) and says what they are.
    let fig: serde_json::Value =
        serde_json::from_str(&plot(&ds, &series, &spec()).to_json()).unwrap();
    let trace = fig["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "vllm")
        .unwrap();
    assert_eq!(trace["error_y"]["type"], "data");
    let bars = trace["error_y"]["array"].as_array().unwrap();
    assert!((bars[0].as_f64().unwrap() - i.half_width()).abs() < 1e-9);
    assert!(bars[1].is_null() && bars[2].is_null());
    assert!(trace["hovertext"][0]
        .as_str()
        .unwrap()
        .contains("95 % interval 7.03"));
    assert!(fig["layout"]["title"]["text"]
        .as_str()
        .unwrap()
        .contains("error bars: 95 % interval of the mean of repeated runs"));
    // Series never split by run: the default layout averages runs.
    let layout = crate::analysis::defaults::default_layout(
        &ds,
        Dim::RequestRate.into(),
        None,
        Some(&spec().metric),
    );
    assert!(
        !layout.series_by.iter().any(|k| k.name() == "tag.run"),
        "{layout:?}"
    );
}

#[test]
fn overlapping_intervals_are_not_distinguishable_in_the_fastest_column() {
    let ds = repeats();
    let all: Vec<usize> = (0..ds.len()).collect();
    let series = build_series(&ds, &all, &spec());
    let table = comparison_table(&series, &spec().metric);
    // vllm 12 ± 4.97 and sgl 12 ± 2.48 at rate 1: not told apart.
    let at1 = &table.rows[0];
    assert_eq!(at1.distinguishable, Some(false));
    assert!(at1
        .fastest_text(&table.series)
        .unwrap()
        .starts_with("not distinguishable ("));
    // Single records without intervals keep the old verdict.
    assert_eq!(table.rows[1].distinguishable, None);
    assert_eq!(
        table.rows[1].fastest_text(&table.series),
        table.rows[1].fastest
    );
    let md =
        crate::analysis::export::comparison_text_table(&table, None, &spec().x, &spec().metric)
            .to_markdown();
    assert!(md.contains("not distinguishable"), "{md}");
}

#[test]
fn a_files_standard_deviation_makes_a_bar_for_one_record() {
    let metric = MetricKey::Extra("tokens_per_s".into());
    let run = |engine: &str, tps: f64, sd: f64| {
        let mut r = rec(engine, 1.0, 1.0);
        r.set_metric(metric.clone(), tps);
        r.set_metric(MetricKey::Extra("tokens_per_s_stddev".into()), sd);
        r
    };
    let ds = Dataset::new(vec![
        run("a", 100.0, 0.5),
        run("b", 101.0, 0.7),
        run("a", 100.0, 0.5),
    ]);
    let s = ChartSpec {
        metric: metric.clone(),
        ..spec()
    };
    // Rows 0 and 2 are repeats of "a": their own spread (none) is used, not the file's.
    let series = build_series(&ds, &[0, 2], &s);
    let i = series[0].points[0].interval.unwrap();
    assert_eq!((i.low, i.high), (100.0, 100.0));
    let series = build_series(&ds, &[1], &s);
    let i = series[0].points[0].interval.unwrap();
    assert_eq!((i.low, i.high), (100.3, 101.7));
    assert!(i.describe().contains("the file's standard deviation"));
    let series = build_series(&ds, &[0, 1], &s);
    let table = comparison_table(&series, &metric);
    // 100 ± 0.5 and 101 ± 0.7 overlap.
    assert_eq!(table.rows[0].distinguishable, Some(false));
}

#[test]
fn flagged_records_are_said_in_the_hover_and_the_exported_table() {
    let with = |engine: &str, ttft: f64, failed: f64, completed: f64| {
        let mut r = rec(engine, 1.0, ttft);
        r.num_prompts = Some(100);
        r.set_metric(MetricKey::Failed, failed);
        r.set_metric(MetricKey::Completed, completed);
        r
    };
    let ds = Dataset::new(vec![
        with("vllm", 10.0, 0.0, 100.0),
        with("vllm", 11.0, 4.0, 96.0),
        with("sgl", 12.0, 0.0, 100.0),
    ]);
    let all: Vec<usize> = (0..ds.len()).collect();
    let series = build_series(&ds, &all, &spec());
    let points = PointIndex::new(&ds, &spec());
    assert_eq!(build_series_indexed(&ds, &all, &spec(), &points), series);
    let vllm = series.iter().find(|s| s.name == "vllm").unwrap();
    assert_eq!(vllm.points[0].flags.failed, 1);
    let fig: serde_json::Value =
        serde_json::from_str(&plot(&ds, &series, &spec()).to_json()).unwrap();
    let hover = fig["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "vllm")
        .unwrap()["hovertext"][0]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        hover.contains("⚠ 1 of 2 records with failed requests"),
        "{hover}"
    );
    assert!(hover.contains("⚠ 1 of 2 records completed fewer prompts than asked"));
    let table = comparison_table(&series, &spec().metric);
    let md =
        crate::analysis::export::comparison_text_table(&table, None, &spec().x, &spec().metric)
            .to_markdown();
    assert!(md.contains("| Data quality |"), "{md}");
    assert!(md.contains("vllm: 1 of 2 records with failed requests; vllm: 1 of 2 records completed fewer prompts than asked; vllm: mean of 2 records of one configuration"), "{md}");
}
