//! The trade-off taken in steps, as the page takes a million points: rows grouped a run at a
//! time give what grouping them at once gives, and the binned chart drops no frontier point
//! and no occupied cell.

use super::super::*;
use crate::model::{LatencyMetric, MetricKey, Stat};
use proptest::prelude::*;
use serde_json::Value;

fn spec(series_by: Vec<DimKey>) -> TradeoffSpec {
    TradeoffSpec {
        throughput: ThroughputAxis::OutputTokensPerS,
        latency: LatencyAxis::MeanTpotMs,
        series_by,
        theme: Theme::Light,
        assumptions: Assumptions::default(),
    }
}

proptest! {
    #[test]
    fn rows_grouped_a_run_at_a_time_give_the_trade_off_at_once(
        rows in prop::collection::vec((
            prop::sample::select(vec![None, Some("vllm"), Some("sglang"), Some("tgi")]),
            prop::sample::select(vec![None, Some(1.0), Some(2.0), Some(3.0), Some(f64::NAN)]),
            prop::sample::select(vec![None, Some(5.0), Some(6.0), Some(-0.0), Some(0.0)]),
        ), 0..80),
        // Where the runs end, as fractions of the rows.
        cuts in prop::collection::vec(0.0..1.0f64, 0..5),
        by in prop::sample::select(vec![vec![], vec![Dim::Engine]]),
        // Filtered rows: every row, or every other one.
        step in 1usize..3,
    ) {
        let records: Vec<Record> = rows
            .iter()
            .map(|&(engine, tput, tpot)| {
                let mut r = Record { engine: engine.map(Into::into), ..Record::default() };
                if let Some(t) = tput {
                    r.set_metric(MetricKey::OutputThroughput, t);
                }
                if let Some(t) = tpot {
                    r.set_metric(MetricKey::latency(LatencyMetric::Tpot, Stat::Mean), t);
                }
                r
            })
            .collect();
        let ds = Dataset::new(records);
        let spec = spec(by.into_iter().map(DimKey::from).collect());
        let rows: Vec<usize> = (0..ds.len()).step_by(step).collect();
        let mut ends: Vec<usize> = cuts.iter().map(|c| (c * rows.len() as f64) as usize).collect();
        ends.push(rows.len());
        ends.sort_unstable();
        let mut groups = TradeoffGroups::default();
        let mut start = 0;
        for end in ends {
            groups.add(&ds, &rows[start..end], &spec);
            start = end;
        }
        let added = groups.len();
        let stepped: Vec<TradeoffSeries> = groups
            .into_series(&ds)
            .into_iter()
            .map(|(name, points)| finish_series(name, points, &spec))
            .collect();
        let at_once = tradeoff(&ds, &rows, &spec);
        prop_assert_eq!(added, at_once.iter().map(|s| s.points.len()).sum::<usize>());
        // Debug text: NaN coordinates compare equal there.
        prop_assert_eq!(format!("{stepped:?}"), format!("{at_once:?}"));
        prop_assert_eq!(
            tradeoff_plot(&ds, &stepped, &spec).to_json(),
            tradeoff_plot(&ds, &at_once, &spec).to_json()
        );
        // Points keep their rows' order; the frontier is in x order.
        for s in &at_once {
            prop_assert!(s.points.windows(2).all(|w| w[0].record < w[1].record));
            let xs: Vec<f64> = s.frontier_xy().iter().map(|p| p.0).collect();
            prop_assert!(xs.windows(2).all(|w| w[0].total_cmp(&w[1]).is_le()), "{:?}", xs);
        }
    }
}

/// `seeds` with as many copies as it takes of a point every seed beats (past both ends of
/// their ranges, on the losing side), so that the chart is binned while the frontier is the
/// seeds' own.
fn padded(seeds: &[(f64, f64)]) -> TradeoffSeries {
    let worst_x = seeds.iter().map(|p| p.0).fold(f64::MIN, f64::max) + 1.0;
    let worst_y = seeds.iter().map(|p| p.1).fold(f64::MAX, f64::min) - 1.0;
    let n = MAX_POINT_MARKERS + 1;
    let points: Vec<TradeoffPoint> = (0..n)
        .map(|i| {
            let (latency, throughput) = seeds.get(i).copied().unwrap_or((worst_x, worst_y));
            TradeoffPoint {
                record: i,
                latency,
                throughput,
                on_frontier: false,
                dominated_by: None,
                interval: None,
            }
        })
        .collect();
    finish_series("s".into(), points, &spec(vec![]))
}

/// The grid cells `v` may fall in among plotly's cell `centres` (equal cells): the one whose
/// span holds it, and its neighbour when `v` is on their shared edge.
fn cells(v: f64, centres: &[Value]) -> Vec<usize> {
    let c: Vec<f64> = centres.iter().filter_map(Value::as_f64).collect();
    let half = if c.len() > 1 {
        (c[1] - c[0]) / 2.0
    } else {
        f64::INFINITY
    };
    (0..c.len())
        .filter(|&i| (c[i] - v).abs() <= half * (1.0 + 1e-9))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn a_binned_chart_draws_every_frontier_point_and_every_occupied_cell(
        seeds in prop::collection::vec(
            ((0u16..400).prop_map(|v| f64::from(v) / 4.0), (0u16..400).prop_map(f64::from)),
            1..60,
        ),
        extra in prop::collection::vec(
            ((0u16..400).prop_map(|v| f64::from(v) / 4.0), (0u16..400).prop_map(f64::from)),
            0..3,
        ),
    ) {
        // Two series: the padded seeds, and a few points of their own.
        let mut series = vec![padded(&seeds)];
        let mut other = padded(&extra.iter().chain(&seeds[..1]).copied().collect::<Vec<_>>());
        other.name = "t".into();
        series.push(other);
        let spec = spec(vec![Dim::Engine.into()]);
        let plot = tradeoff_plot(&Dataset::new(vec![]), &series, &spec).to_json();
        let json: Value = serde_json::from_str(&plot).unwrap();
        let data = json["data"].as_array().unwrap();
        let mut fronts = 0;
        for (k, s) in series.iter().enumerate() {
            let (grid, front) = (&data[2 * k], &data[2 * k + 1]);
            prop_assert_eq!(&grid["type"], "heatmap");
            // Every frontier point, exactly, each with its own hover.
            let drawn: Vec<(f64, f64)> = front["x"].as_array().unwrap().iter()
                .zip(front["y"].as_array().unwrap())
                .map(|(x, y)| (x.as_f64().unwrap(), y.as_f64().unwrap()))
                .collect();
            prop_assert_eq!(&drawn, &s.frontier_xy());
            let hover = front["hovertext"].as_array().unwrap();
            prop_assert_eq!(hover.len(), drawn.len());
            prop_assert!(hover.iter().all(|h| h.as_str().unwrap().contains("on the Pareto frontier")));
            fronts += drawn.len();
            // Every point's cell is drawn, and only those: as many cells as bins.
            let (xs, ys, z) = (
                grid["x"].as_array().unwrap(),
                grid["y"].as_array().unwrap(),
                grid["z"].as_array().unwrap(),
            );
            for p in &s.points {
                let (cs, rs) = (cells(p.latency, xs), cells(p.throughput, ys));
                prop_assert!(
                    cs.iter().any(|&c| rs.iter().any(|&r| !z[r][c].is_null())),
                    "{:?} in no drawn cell", (p.latency, p.throughput)
                );
            }
            let range = |v: &[Value]| (v[0].as_f64().unwrap(), v[v.len() - 1].as_f64().unwrap());
            let (x, y) = extent(&series).unwrap();
            let bins = bin_points(&s.points, x, y, (xs.len(), ys.len()));
            prop_assert_eq!(bins.iter().map(|b| b.count).sum::<usize>(), s.points.len());
            let filled = z.iter().flat_map(|row| row.as_array().unwrap()).filter(|v| !v.is_null()).count();
            prop_assert_eq!(filled, bins.len());
            prop_assert!(range(xs).0 >= x.0 && range(xs).1 <= x.1);
        }
        let title = json["layout"]["title"]["text"].as_str().unwrap();
        prop_assert!(
            title.contains(&format!("{} points drawn as ", 2 * (MAX_POINT_MARKERS + 1))),
            "{}", title
        );
        prop_assert!(title.contains(&format!("all {fronts} frontier points drawn")), "{}", title);
    }
}

#[test]
fn a_binned_chart_says_how_much_of_a_long_frontier_it_draws() {
    // 3,000 frontier points (latency and throughput rise together) among 10,001.
    let seeds: Vec<(f64, f64)> = (0..3000).map(|i| (i as f64, i as f64)).collect();
    let series = [padded(&seeds)];
    assert_eq!(series[0].frontier.len(), 3000);
    let json: Value = serde_json::from_str(
        &tradeoff_plot(&Dataset::new(vec![]), &series, &spec(vec![])).to_json(),
    )
    .unwrap();
    assert_eq!(
        json["data"][1]["x"].as_array().unwrap().len(),
        MAX_FRONTIER_DRAWN
    );
    let title = json["layout"]["title"]["text"].as_str().unwrap();
    assert!(
        title.ends_with(&format!(
            "; {MAX_FRONTIER_DRAWN} of the 3000 frontier points drawn, evenly spread</sub>"
        )),
        "{title}"
    );
}
