//! Noise on the trade-off: repeats of one configuration made one point with the 95 % interval
//! of its mean (error bars on the chart), and the overview saying when a series' reading
//! cannot be told from the baseline's.

use super::super::*;
use crate::model::spread::Basis;
use crate::model::{LatencyMetric, MetricKey, Stat};
use serde_json::Value;

fn rec(engine: &str, run: &str, conc: u64, tput: f64, tpot: f64) -> Record {
    let mut r = Record {
        engine: Some(engine.into()),
        max_concurrency: Some(conc),
        ..Record::default()
    };
    r.tags.insert("run".into(), run.into());
    r.set_metric(MetricKey::OutputThroughput, tput);
    r.set_metric(MetricKey::latency(LatencyMetric::Tpot, Stat::Mean), tpot);
    r
}

fn spec() -> TradeoffSpec {
    TradeoffSpec {
        throughput: ThroughputAxis::OutputTokensPerS,
        latency: LatencyAxis::MeanTpotMs,
        series_by: vec![Dim::Engine.into()],
        theme: Theme::Light,
        assumptions: Assumptions::default(),
    }
}

#[test]
fn repeats_become_one_point_with_error_bars() {
    let ds = Dataset::new(vec![
        rec("a", "1", 1, 100.0, 10.0),
        rec("a", "2", 1, 104.0, 11.0),
        rec("a", "3", 1, 96.0, 9.0),
        rec("a", "1", 16, 1000.0, 60.0),
        rec("b", "1", 1, 90.0, 12.0),
    ]);
    let all: Vec<usize> = (0..ds.len()).collect();
    let s = tradeoff(&ds, &all, &spec());
    assert_eq!(s[0].points.len(), 2, "{:?}", s[0].points);
    let p = &s[0].points[0];
    assert_eq!((p.record, p.latency, p.throughput), (0, 10.0, 100.0));
    let i = p.interval.expect("three repeats have an interval");
    // s = 4 over three runs: 4.3027 × 4 / √3.
    assert!(
        (i.half_width() - 4.3027 * 4.0 / 3f64.sqrt()).abs() < 1e-9,
        "{i:?}"
    );
    assert_eq!(i.basis, Basis::Repeats { n: 3, sd: 4.0 });
    assert_eq!(s[0].points[1].interval, None);
    let json: Value = serde_json::from_str(&tradeoff_plot(&ds, &s, &spec()).to_json()).unwrap();
    let bars = &json["data"][0]["error_y"]["array"];
    assert!(
        (bars[0].as_f64().unwrap() - i.half_width()).abs() < 1e-9,
        "{bars}"
    );
    assert!(bars[1].is_null(), "{bars}");
    // Series b has no interval: no error bars.
    assert!(json["data"][2].get("error_y").is_none());
    let hover = json["data"][0]["hovertext"][0].as_str().unwrap();
    assert!(
        hover.contains("95 % interval 90.06 – 109.9 (mean ± t·s/√n of 3 repeats"),
        "{hover}"
    );
    let title = json["layout"]["title"]["text"].as_str().unwrap();
    assert!(
        title.contains("error bars: 95 % interval of the mean of repeated runs"),
        "{title}"
    );
}

#[test]
fn without_repeats_every_record_stays_a_point() {
    // One run tag: no repeat dimension varies, so records alike elsewhere are not merged.
    let ds = Dataset::new(vec![
        rec("a", "1", 1, 100.0, 10.0),
        rec("a", "1", 1, 104.0, 11.0),
    ]);
    let s = tradeoff(&ds, &[0, 1], &spec());
    assert_eq!(s[0].points.len(), 2);
    assert!(s[0].points.iter().all(|p| p.interval.is_none()));
}

fn series(name: &str, pts: &[(f64, f64, f64)]) -> TradeoffSeries {
    TradeoffSeries {
        name: name.into(),
        points: pts
            .iter()
            .enumerate()
            .map(|(k, &(x, y, half))| TradeoffPoint {
                record: k,
                latency: x,
                throughput: y,
                on_frontier: true,
                dominated_by: None,
                interval: Interval::new(y, half, Basis::Repeats { n: 3, sd: 1.0 })
                    .filter(|_| half > 0.0),
            })
            .collect(),
        frontier: (0..pts.len()).collect(),
    }
}

#[test]
fn the_overview_says_when_a_reading_is_within_the_baselines_noise() {
    let per_user = TradeoffSpec {
        latency: LatencyAxis::TokensPerSPerUser,
        ..spec()
    };
    let s = [
        series("h100", &[(10.0, 2000.0, 100.0), (40.0, 1000.0, 0.0)]),
        series("b200", &[(10.0, 2050.0, 50.0), (40.0, 1500.0, 50.0)]),
    ];
    let o = overview(
        &s,
        &per_user,
        &[10.0, 25.0, 40.0],
        (10.0, 40.0),
        Some("h100"),
    );
    // h100 at 25: half way between ±100 and no interval: ±50.
    let h = o.rows[0].intervals[1].unwrap();
    assert_eq!((h.low, h.high), (1450.0, 1550.0));
    // b200: 2050 ± 50 overlaps 2000 ± 100; 1775 ± 50 and 1500 ± 50 are apart from h100's.
    assert_eq!(o.rows[1].apart, [Some(false), Some(true), Some(true), None]);
    // The baseline is not compared with itself.
    assert!(o.rows[0].apart.is_empty());
    let md = o.to_text_table().to_markdown();
    assert!(
        md.contains("| b200 | 2050.00 (1.02×, not distinguishable) | 1775.00 (1.18×) |"),
        "{md}"
    );
    // Frontiers without intervals: nothing said, as before.
    let plain = [
        series("h100", &[(10.0, 2000.0, 0.0)]),
        series("b200", &[(10.0, 2050.0, 0.0)]),
    ];
    let o = overview(&plain, &per_user, &[10.0], (5.0, 10.0), Some("h100"));
    assert_eq!(o.rows[1].apart, [None, None]);
}
