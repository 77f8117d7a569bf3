use super::*;
use crate::model::{Dim, LatencyMetric, MetricKey, Percentile, Stat};
use proptest::prelude::*;

fn rec(engine: &str, tput: f64, tpot: f64, gpus: u64) -> Record {
    let mut r = Record {
        engine: Some(engine.into()),
        gpu_count: Some(gpus),
        ..Record::default()
    };
    r.set_metric(MetricKey::OutputThroughput, tput);
    r.set_metric(MetricKey::latency(LatencyMetric::Tpot, Stat::Mean), tpot);
    r
}

#[test]
fn frontier_per_series() {
    let ds = Dataset::new(vec![
        rec("a", 100.0, 10.0, 2),
        rec("a", 300.0, 20.0, 2),
        rec("a", 250.0, 25.0, 2), // dominated by (20, 300)
        rec("a", 500.0, 50.0, 2),
        rec("b", 50.0, 5.0, 1),
    ]);
    let spec = TradeoffSpec {
        throughput: ThroughputAxis::OutputTokensPerSPerGpu,
        latency: LatencyAxis::MeanTpotMs,
        series_by: vec![Dim::Engine.into()],
        theme: Theme::Light,
        assumptions: Assumptions::default(),
    };
    let s = tradeoff(&ds, &[0, 1, 2, 3, 4], &spec);
    assert_eq!(s.len(), 2);
    let front: Vec<usize> = s[0]
        .frontier
        .iter()
        .map(|&i| s[0].points[i].record)
        .collect();
    assert_eq!(front, [0, 1, 3]);
    assert_eq!(s[0].points[1].throughput, 150.0);
    let json: serde_json::Value =
        serde_json::from_str(&tradeoff_plot(&ds, &s, &spec).to_json()).unwrap();
    // Two series, each points and frontier, and the frontier of both.
    assert_eq!(json["data"].as_array().unwrap().len(), 5);
    assert_eq!(json["data"][4]["name"], "frontier of all series");
    assert_eq!(json["data"][1]["x"], serde_json::json!([10.0, 20.0, 50.0]));
    assert_eq!(
        json["data"][0]["hovertext"][1],
        "<b>a</b><br>Mean TPOT (ms): 20.00<br>Output token throughput per GPU (tok/s/GPU): \
         150.00<br>on the Pareto frontier<br>engine: a<br>gpu_count: 2"
    );

    let per_user = TradeoffSpec {
        latency: LatencyAxis::TokensPerSPerUser,
        ..spec
    };
    let s = tradeoff(&ds, &[0, 1, 2, 3], &per_user);
    // Points in record order, the frontier in x order.
    assert_eq!(s[0].points[0].latency, 100.0);
    assert_eq!(
        s[0].frontier_xy(),
        [(20.0, 250.0), (50.0, 150.0), (100.0, 50.0)]
    );
}

#[test]
fn series_come_in_the_order_of_their_values() {
    // Seed 003's input lengths as the series: text order would put 80 last.
    let lens = [10000.0, 128000.0, 16000.0, 80.0];
    let ds = Dataset::new(
        lens.iter()
            .map(|&l| {
                let mut r = rec("vllm", 100.0, 10.0, 1);
                r.input_len = Some(l);
                r
            })
            .collect(),
    );
    let spec = TradeoffSpec {
        throughput: ThroughputAxis::OutputTokensPerS,
        latency: LatencyAxis::MeanTpotMs,
        series_by: vec![Dim::InputLen.into()],
        theme: Theme::Light,
        assumptions: Assumptions::default(),
    };
    let names: Vec<String> = tradeoff(&ds, &[0, 1, 2, 3], &spec)
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, ["80", "10000", "16000", "128000"]);
}

/// A million points: every (a, b) of 0..1000 squared, at latency max(a, b) / 2 + 10 and
/// throughput min(a, b) × 3. Only the diagonal a == b is on the frontier (lower latency
/// and higher throughput than a point of the diagonal is only that point itself).
fn million() -> TradeoffSeries {
    let mut points: Vec<TradeoffPoint> = (0..1_000_000usize)
        .map(|i| {
            let (a, b) = (i % 1000, i / 1000);
            TradeoffPoint {
                record: i,
                latency: a.max(b) as f64 / 2.0 + 10.0,
                throughput: a.min(b) as f64 * 3.0,
                on_frontier: false,
                dominated_by: None,
                interval: None,
            }
        })
        .collect();
    points.sort_by(|a, b| {
        a.latency
            .total_cmp(&b.latency)
            .then(a.throughput.total_cmp(&b.throughput))
    });
    let xy: Vec<(f64, f64)> = points.iter().map(|p| (p.latency, p.throughput)).collect();
    let frontier = pareto_frontier(&xy, false, true);
    for &f in &frontier {
        points[f].on_frontier = true;
    }
    TradeoffSeries {
        name: "all".into(),
        points,
        frontier,
    }
}

#[test]
fn a_million_points_keep_an_exact_frontier_and_draw_bounded() {
    let s = million();
    let front: Vec<(f64, f64)> = s
        .frontier
        .iter()
        .map(|&i| (s.points[i].latency, s.points[i].throughput))
        .collect();
    let diagonal: Vec<(f64, f64)> = (0..1000)
        .map(|a| (a as f64 / 2.0 + 10.0, a as f64 * 3.0))
        .collect();
    assert_eq!(front, diagonal);
    let spec = TradeoffSpec {
        throughput: ThroughputAxis::OutputTokensPerS,
        latency: LatencyAxis::P99TtftMs,
        series_by: vec![],
        theme: Theme::Light,
        assumptions: Assumptions::default(),
    };
    let series = [s];
    let bins = bin_points(&series[0].points, (10.0, 509.5), (0.0, 2997.0), grid_for(1));
    assert_eq!(extent(&series), Some(((10.0, 509.5), (0.0, 2997.0))));
    assert!(bins.len() <= MAX_BINNED_MARKERS, "{}", bins.len());
    assert_eq!(bins.iter().map(|b| b.count).sum::<usize>(), 1_000_000);
    assert_eq!(bins.iter().map(|b| b.on_frontier).sum::<usize>(), 1000);
    let plot = tradeoff_plot(&Dataset::new(vec![]), &series, &spec).to_json();
    let json: serde_json::Value = serde_json::from_str(&plot).unwrap();
    let data = json["data"].as_array().unwrap();
    assert_eq!(data.len(), 2);
    // The bins as one shaded grid: a column centre per grid column, a row centre per row, a
    // cell per bin (the log of its count), the rest empty.
    let grid = grid_for(1);
    assert_eq!(data[0]["type"], "heatmap");
    assert_eq!(data[0]["x"].as_array().unwrap().len(), grid.0);
    assert_eq!(data[0]["y"].as_array().unwrap().len(), grid.1);
    let z = data[0]["z"].as_array().unwrap();
    assert_eq!(z.len(), grid.1);
    let filled = z
        .iter()
        .flat_map(|row| row.as_array().unwrap())
        .filter(|v| !v.is_null())
        .count();
    assert_eq!(filled, bins.len());
    let first = &bins[0];
    let (c, r) = first.cell;
    assert_eq!(
        data[0]["z"][r][c].as_f64().unwrap(),
        1.0 + (first.count as f64).ln()
    );
    assert_eq!(
        data[0]["hovertext"][r][c],
        format!(
            "<b>all</b><br>{} records<br>P99 TTFT (ms): {} – {}<br>Output token throughput \
             (tok/s): {} – {}{}",
            first.count,
            format_value(first.latency_range.0),
            format_value(first.latency_range.1),
            format_value(first.throughput_range.0),
            format_value(first.throughput_range.1),
            if first.on_frontier > 0 {
                format!("<br>{} on the Pareto frontier", first.on_frontier)
            } else {
                String::new()
            }
        )
    );
    // Each cell's centre lies within the cell's points' range on both axes' grid.
    let x0 = data[0]["x"][c].as_f64().unwrap();
    let w = (509.5 - 10.0) / grid.0 as f64;
    assert!((x0 - (10.0 + (c as f64 + 0.5) * w)).abs() < 1e-9, "{x0}");
    // The frontier is drawn whole and exact: 1000 points, under the cap; as a line alone, too
    // many points for a marker each.
    let fx: Vec<f64> = data[1]["x"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(fx, diagonal.iter().map(|p| p.0).collect::<Vec<_>>());
    assert_eq!(data[1]["mode"], "lines");
    assert_eq!(
        json["layout"]["title"]["text"],
        format!(
            "Output token throughput (tok/s) vs P99 TTFT (ms)<br><sub>1000000 points drawn \
             as {} grid cells (shade: points in the cell); all 1000 frontier points drawn</sub>",
            bins.len()
        )
    );
    // Bounded by the grid, not the million points (each cell's hover is under 300 bytes).
    assert!(plot.len() < BIN_GRID.0 * BIN_GRID.1 * 400, "{}", plot.len());
}

#[test]
fn bins_keep_lone_points_exact_and_average_the_rest() {
    let p = |latency: f64, throughput: f64, on_frontier: bool| TradeoffPoint {
        record: 0,
        latency,
        throughput,
        on_frontier,
        dominated_by: None,
        interval: None,
    };
    let pts = [
        p(0.0, 0.0, true),
        p(0.4, 0.2, false),
        p(10.0, 10.0, true), // the upper edges fall in the last cell
        p(7.3, 2.1, false),
    ];
    let bins = bin_points(&pts, (0.0, 10.0), (0.0, 10.0), (2, 2));
    assert_eq!(
        bins,
        [
            PointBin {
                latency: 0.2,
                throughput: 0.1,
                latency_range: (0.0, 0.4),
                throughput_range: (0.0, 0.2),
                count: 2,
                on_frontier: 1,
                cell: (0, 0),
            },
            PointBin {
                latency: 7.3,
                throughput: 2.1,
                latency_range: (7.3, 7.3),
                throughput_range: (2.1, 2.1),
                count: 1,
                on_frontier: 0,
                cell: (1, 0),
            },
            PointBin {
                latency: 10.0,
                throughput: 10.0,
                latency_range: (10.0, 10.0),
                throughput_range: (10.0, 10.0),
                count: 1,
                on_frontier: 1,
                cell: (1, 1),
            },
        ]
    );
    // One value on an axis: one cell.
    assert_eq!(
        bin_points(&pts[..1], (0.0, 0.0), (0.0, 0.0), BIN_GRID).len(),
        1
    );
    assert_eq!(evenly(&[1, 2, 3, 4, 5, 6, 7], 3), [1, 4, 7]);
    assert_eq!(evenly(&[1, 2], 3), [1, 2]);
    assert_eq!(evenly(&[1, 2, 3], 1), [1]);
}

#[test]
fn a_long_frontier_is_drawn_through_evenly_spread_points() {
    // Every point on the frontier: latency and throughput rise together.
    let n = MAX_FRONTIER_DRAWN * 3 + 1;
    let points: Vec<TradeoffPoint> = (0..n)
        .map(|i| TradeoffPoint {
            record: i,
            latency: i as f64,
            throughput: i as f64,
            on_frontier: true,
            dominated_by: None,
            interval: None,
        })
        .collect();
    let series = [TradeoffSeries {
        name: "a".into(),
        points,
        frontier: (0..n).collect(),
    }];
    let xy: Vec<(f64, f64)> = series[0]
        .points
        .iter()
        .map(|p| (p.latency, p.throughput))
        .collect();
    assert_eq!(pareto_frontier(&xy, false, true).len(), n);
    let spec = TradeoffSpec {
        throughput: ThroughputAxis::OutputTokensPerS,
        latency: LatencyAxis::MeanTpotMs,
        series_by: vec![],
        theme: Theme::Light,
        assumptions: Assumptions::default(),
    };
    let json: serde_json::Value =
        serde_json::from_str(&tradeoff_plot(&Dataset::new(vec![]), &series, &spec).to_json())
            .unwrap();
    let fx = json["data"][1]["x"].as_array().unwrap();
    assert_eq!(fx.len(), MAX_FRONTIER_DRAWN);
    assert_eq!(fx[0], 0.0);
    assert_eq!(fx[MAX_FRONTIER_DRAWN - 1], (n - 1) as f64);
    assert_eq!(json["data"][1]["mode"], "lines");
    // 6,001 points: under the marker cap, so each point is drawn.
    assert_eq!(json["data"][0]["x"].as_array().unwrap().len(), n);
}

/// The series and points as the view made them from records (before it read the index): a
/// string a row for the series, each axis from the record, points in record order.
/// Series names with their points: (record, latency, throughput).
type Drawn = Vec<(String, Vec<(usize, f64, f64)>)>;

fn from_records(records: &[Record], spec: &TradeoffSpec) -> Drawn {
    let mut groups: std::collections::BTreeMap<String, Vec<(usize, f64, f64)>> =
        std::collections::BTreeMap::new();
    for (i, r) in records.iter().enumerate() {
        if let (Some(l), Some(t)) = (
            spec.latency.value(r),
            spec.throughput.value(r, &spec.assumptions),
        ) {
            groups
                .entry(crate::analysis::series_name(r, &spec.series_by))
                .or_default()
                .push((i, l, t));
        }
    }
    crate::analysis::in_value_order(groups)
        .into_iter()
        .collect()
}

fn odd_value() -> impl Strategy<Value = Option<f64>> {
    prop::sample::select(vec![
        None,
        Some(0.0),
        Some(-1.0),
        Some(2.5),
        Some(40.0),
        Some(f64::NAN),
        Some(f64::INFINITY),
    ])
}

proptest! {
    #[test]
    fn rows_read_from_the_index_give_the_records_series(
        rows in prop::collection::vec((
            prop::sample::select(vec![None, Some("vllm"), Some("sglang"), Some("")]),
            prop::sample::select(vec![None, Some(0u64), Some(1), Some(2), Some(8)]),
            odd_value(), odd_value(), odd_value(),
            (
                prop::sample::select(vec![None, Some("H100 80GB"), Some("GB200"), Some("MI300X"), Some("")]),
                prop::sample::select(vec![None, Some(0u64), Some(4)]),
            ),
        ), 0..40),
        axes in (0usize..ThroughputAxis::ALL.len(), 0usize..LatencyAxis::ALL.len()),
        by in prop::sample::select(vec![vec![], vec![Dim::Engine], vec![Dim::GpuCount, Dim::Engine]]),
    ) {
        let records: Vec<Record> = rows
            .iter()
            .map(|&(engine, gpus, tput, tpot, ttft, (gpu, tp))| {
                let mut r = Record {
                    engine: engine.map(Into::into),
                    gpu_count: gpus,
                    gpu: gpu.map(Into::into),
                    tp,
                    ..Record::default()
                };
                for (key, v) in [
                    (MetricKey::OutputThroughput, tput),
                    (MetricKey::TotalTokenThroughput, tput.map(|t| t * 2.0)),
                    (MetricKey::latency(LatencyMetric::Tpot, Stat::Mean), tpot),
                    (MetricKey::latency(LatencyMetric::Tpot, Stat::P(Percentile::new(90.0).unwrap())), tpot.map(|t| t * 1.5)),
                    (MetricKey::latency(LatencyMetric::Ttft, Stat::P(Percentile::new(99.0).unwrap())), ttft),
                ] {
                    if let Some(v) = v {
                        r.set_metric(key, v);
                    }
                }
                r
            })
            .collect();
        let spec = TradeoffSpec {
            throughput: ThroughputAxis::ALL[axes.0],
            latency: LatencyAxis::ALL[axes.1],
            series_by: by.into_iter().map(DimKey::from).collect(),
            theme: Theme::Light,
            assumptions: Assumptions {
                prices: vec![("mi300x".into(), 1.5)],
                kw: vec![],
            },
        };
        let want = from_records(&records, &spec);
        let all: Vec<usize> = (0..records.len()).collect();
        let mut columnar = Dataset::default();
        columnar.extend_columnar(crate::model::Index::build(&records));
        for ds in [Dataset::new(records.clone()), columnar] {
            let got: Drawn = tradeoff(&ds, &all, &spec)
                .into_iter()
                .map(|s| (s.name, s.points.iter().map(|p| (p.record, p.latency, p.throughput)).collect()))
                .collect();
            prop_assert_eq!(format!("{got:?}"), format!("{want:?}"));
        }
    }
}

/// Interactivity against cost: three H100 deployments of 8 GPUs, one of 4 B200 (by tp × pp),
/// one with a GPU nobody priced.
fn priced() -> (Dataset, TradeoffSpec) {
    let rec = |gpu: &str, gpus: Option<u64>, tp: Option<u64>, tput: f64, tpot: f64| {
        let mut r = Record {
            engine: Some("vllm".into()),
            gpu: Some(gpu.into()),
            gpu_count: gpus,
            tp,
            pp: tp.map(|_| 2),
            ..Record::default()
        };
        r.set_metric(MetricKey::OutputThroughput, tput);
        r.set_metric(MetricKey::latency(LatencyMetric::Tpot, Stat::Mean), tpot);
        r
    };
    let ds = Dataset::new(vec![
        rec("NVIDIA H100 80GB HBM3", Some(8), None, 20_000.0, 100.0),
        rec("NVIDIA H100 80GB HBM3", Some(8), None, 10_000.0, 25.0),
        rec("NVIDIA H100 80GB HBM3", Some(8), None, 4_000.0, 10.0),
        rec("B200", None, Some(2), 12_000.0, 20.0),
        rec("Gaudi 3", Some(8), None, 9_000.0, 20.0),
    ]);
    let spec = TradeoffSpec {
        throughput: ThroughputAxis::UsdPerMillionOutputTokens,
        latency: LatencyAxis::TokensPerSPerUser,
        series_by: vec![Dim::Gpu.into()],
        theme: Theme::Light,
        assumptions: Assumptions {
            prices: vec![("B200".into(), 6.0)],
            kw: vec![],
        },
    };
    (ds, spec)
}

#[test]
fn cost_per_million_tokens_is_a_lower_is_better_axis() {
    let (ds, spec) = priced();
    let series = tradeoff(&ds, &[0, 1, 2, 3, 4], &spec);
    // The unpriced GPU has no cost, so no point.
    let names: Vec<&str> = series.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["B200", "NVIDIA H100 80GB HBM3"]);
    let h100 = &series[1];
    // 8 × $2.95 an hour for 20,000 tok/s: $0.3278 per million.
    let cost: Vec<(f64, f64)> = h100
        .points
        .iter()
        .map(|p| (p.latency, p.throughput))
        .collect();
    let want = |tput: f64| 8.0 * 2.95 / 3600.0 / tput * 1e6;
    assert_eq!(
        cost,
        [
            (10.0, want(20_000.0)),
            (40.0, want(10_000.0)),
            (100.0, want(4_000.0))
        ]
    );
    // Cheaper at low interactivity, dearer at high: all three on the frontier.
    assert_eq!(h100.frontier, [0, 1, 2]);
    // B200's 4 GPUs come from tp 2 × pp 2, at the user's $6.
    assert_eq!(
        series[0].points[0].throughput,
        4.0 * 6.0 / 3600.0 / 12_000.0 * 1e6
    );
    let lines: Vec<String> = assumptions_used(&ds, &[0, 1, 2, 3, 4], &spec)
        .iter()
        .map(AssumedFor::text)
        .collect();
    assert_eq!(lines[0], "B200: $6.00/GPU-hour (yours)");
    assert_eq!(
        lines[1],
        "Gaudi 3: no price (give one to include its points)"
    );
    assert!(
        lines[2].starts_with("NVIDIA H100 80GB HBM3: $2.95/GPU-hour (AIMultiple"),
        "{}",
        lines[2]
    );
    // Energy: 0.7 kW per H100 by default.
    let energy = TradeoffSpec {
        throughput: ThroughputAxis::JoulesPerOutputToken,
        ..spec.clone()
    };
    let series = tradeoff(&ds, &[0], &energy);
    let plot = tradeoff_plot(&ds, &series, &energy).to_json();
    assert!(
        plot.contains("assuming NVIDIA H100 80GB HBM3 0.70 kW per GPU"),
        "{plot}"
    );
    assert_eq!(series[0].points[0].throughput, 8.0 * 700.0 / 20_000.0);
    // A throughput axis assumes nothing.
    let plain = TradeoffSpec {
        throughput: ThroughputAxis::OutputTokensPerSPerGpu,
        ..spec
    };
    assert!(assumptions_used(&ds, &[0, 1, 2, 3, 4], &plain).is_empty());
    // Per GPU, tp × pp counts when gpu_count is missing.
    let series = tradeoff(&ds, &[3], &plain);
    assert_eq!(series[0].points[0].throughput, 3_000.0);
}

/// Per GPU, a data-parallel size given as a tag multiplies tp × pp, read from the dataset's
/// columns as from a record.
#[test]
fn dp_multiplies_the_parallelism() {
    let mut a = rec("vllm", 8_000.0, 20.0, 0);
    a.gpu_count = None;
    a.tp = Some(2);
    a.tags.insert("dp".into(), "4".into());
    let mut b = a.clone();
    b.tags.remove("dp");
    let ds = Dataset::new(vec![a.clone(), b]);
    let spec = TradeoffSpec {
        throughput: ThroughputAxis::OutputTokensPerSPerGpu,
        latency: LatencyAxis::MeanTpotMs,
        series_by: vec![],
        theme: Theme::Light,
        assumptions: Assumptions::default(),
    };
    let s = tradeoff(&ds, &[0, 1], &spec);
    let tputs: Vec<f64> = s[0].points.iter().map(|p| p.throughput).collect();
    assert_eq!(tputs, [1_000.0, 4_000.0]);
    assert_eq!(spec.throughput.value(&a, &spec.assumptions), Some(1_000.0));
}

#[test]
fn each_frontier_is_read_at_the_target_interactivity() {
    let (ds, spec) = priced();
    let series = tradeoff(&ds, &[0, 1, 2, 3], &spec);
    let rows = at_target(&series, &spec, 25.0, Some(1.0));
    let cost = |tput: f64| 8.0 * 2.95 / 3600.0 / tput * 1e6;
    // H100: between (10, cost 20k) and (40, cost 10k), a fifth of the way... at 25: halfway.
    let h100 = &rows[1];
    let want = (cost(20_000.0) + cost(10_000.0)) / 2.0;
    assert!(matches!(h100.at, Ok(Some(r)) if (r.value - want).abs() < 1e-9 && r.clamped.is_none()));
    // B200 was measured only at 50 tok/s per user: 25 is met with room, read there, marked.
    assert!(matches!(rows[0].at, Ok(Some(r)) if r.clamped == Some(50.0)));
    // Under $1 per million: H100 reaches between 40 (0.656) and 100 (1.639) tok/s per user.
    let Some(Some(best)) = h100.within_cap else {
        panic!("{h100:?}")
    };
    let f = (1.0 - cost(10_000.0)) / (cost(4_000.0) - cost(10_000.0));
    assert!((best.value - (40.0 + f * 60.0)).abs() < 1e-9, "{best:?}");
    let table = target_text_table(&rows, &spec, 25.0, Some(1.0));
    let md = table.to_markdown();
    assert!(
        md.contains("every frontier point does better than asked: read at 50"),
        "{md}"
    );
    // Nothing reaches 500 tok/s per user.
    let rows = at_target(&series, &spec, 500.0, None);
    assert_eq!(
        rows[1].at,
        Err(crate::analysis::economics::Unreached { best: 100.0 })
    );
    let md = target_text_table(&rows, &spec, 500.0, None).to_markdown();
    assert!(
        md.contains("not reached") && md.contains("best measured: 100"),
        "{md}"
    );
}

#[test]
fn a_beaten_point_names_the_frontier_point_that_beats_it_and_series_share_a_frontier() {
    let r = |engine: &str, c: u64, tput: f64, tpot: f64| {
        let mut r = rec(engine, tput, tpot, 1);
        r.max_concurrency = Some(c);
        r
    };
    let ds = Dataset::new(vec![
        r("a", 1, 100.0, 10.0),
        r("a", 8, 300.0, 20.0),
        r("a", 4, 250.0, 25.0), // beaten by concurrency 8
        r("a", 16, 500.0, 50.0),
        r("b", 1, 400.0, 15.0), // beats a's 100 and 300 across series
        r("b", 2, f64::NAN, 15.0),
    ]);
    let spec = TradeoffSpec {
        throughput: ThroughputAxis::OutputTokensPerS,
        latency: LatencyAxis::MeanTpotMs,
        series_by: vec![Dim::Engine.into()],
        theme: Theme::Light,
        assumptions: Assumptions::default(),
    };
    let series = tradeoff(&ds, &[0, 1, 2, 3, 4], &spec);
    let beaten = series[0].points.iter().find(|p| p.record == 2).unwrap();
    assert_eq!(beaten.dominated_by, Some(1));
    assert!(series[0]
        .points
        .iter()
        .filter(|p| p.on_frontier)
        .all(|p| p.dominated_by.is_none()));
    let plot = tradeoff_plot(&ds, &series, &spec).to_json();
    assert!(
        plot.contains("beaten on both axes by the frontier point with max_concurrency 8"),
        "{plot}"
    );
    // Across series: a's 10 ms point, b's 15 ms point, a's 50 ms point.
    let all: Vec<(f64, f64, usize)> = global_frontier(&series, &spec);
    assert_eq!(all, [(10.0, 100.0, 0), (15.0, 400.0, 4), (50.0, 500.0, 3)]);
    assert!(plot.contains("frontier of all series"));
    // Lower-is-better y (cost) dominates the same way.
    let mut p = vec![
        TradeoffPoint {
            record: 0,
            latency: 10.0,
            throughput: 1.0,
            on_frontier: true,
            dominated_by: None,
            interval: None,
        },
        TradeoffPoint {
            record: 1,
            latency: 20.0,
            throughput: 0.5,
            on_frontier: true,
            dominated_by: None,
            interval: None,
        },
        TradeoffPoint {
            record: 2,
            latency: 15.0,
            throughput: 2.0,
            on_frontier: false,
            dominated_by: None,
            interval: None,
        },
    ];
    let cost = TradeoffSpec {
        throughput: ThroughputAxis::UsdPerMillionOutputTokens,
        latency: LatencyAxis::TokensPerSPerUser,
        ..spec
    };
    mark_dominated(&mut p, &[0, 1], &cost);
    assert_eq!(p[2].dominated_by, Some(1));
}

#[test]
fn binned_grids_stay_within_the_marker_budget_whatever_the_series_count() {
    assert_eq!(grid_for(0), BIN_GRID);
    for n in [1, 2, 3, 16, 100] {
        let (c, r) = grid_for(n);
        assert!(c <= BIN_GRID.0 && r <= BIN_GRID.1, "{n}: {c} x {r}");
        // Floors of 8 x 5 aside, the cells of all series stay within the budget.
        if (c, r) != (8, 5) {
            assert!(n * c * r <= MAX_BINNED_MARKERS, "{n}: {c} x {r}");
        }
    }
    assert_eq!(grid_for(1000), (8, 5));
}

#[test]
fn a_series_colour_shades_its_grid() {
    assert_eq!(super::bins::rgba("#e8710a", 0.2), "rgba(232,113,10,0.2)");
    assert_eq!(super::bins::rgba("bad", 1.0), "rgba(0,0,0,1)");
    assert_eq!(super::bins::cell_centres((0.0, 10.0), 2), [2.5, 7.5]);
    assert_eq!(super::bins::cell_centres((3.0, 3.0), 4), [3.0]);
}

mod frontier;
mod noise;
mod steps;
